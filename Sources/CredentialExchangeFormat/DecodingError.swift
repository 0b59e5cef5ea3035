/// Why a document could not be decoded at all. Everything short of these is tolerated and reported
/// as a ``Diagnostic``.
public struct CXFDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure an error is, by a stable name.
    public struct Code: RawRepresentable, Hashable, Sendable {
        /// The code's name, such as `too-large`.
        public let rawValue: String
        /// The code named `rawValue`.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The bytes are not JSON.
        public static let syntax = Code(rawValue: "syntax")
        /// The document is larger than ``CXF/DecodingOptions/maxDocumentSize``.
        public static let tooLarge = Code(rawValue: "too-large")
        /// Objects and arrays nest deeper than ``CXF/DecodingOptions/maxDepth``.
        public static let tooDeep = Code(rawValue: "too-deep")
        /// The top level is not an object, or an object that is neither a header nor an account.
        public static let notCXF = Code(rawValue: "not-cxf")
    }

    /// What kind of failure it is.
    public var code: Code
    /// Byte offset of the problem in the input.
    public var offset: Int
    /// 1-based line and column (in bytes) of the problem.
    public var line: Int
    /// 1-based column of the problem, counted in bytes.
    public var column: Int
    /// What is wrong, for a person.
    public var message: String

    /// `line L, column C: message`.
    public var description: String { "line \(line), column \(column): \(message)" }
}
