/// Why a one-time-code secret, parameter or document cannot be used. The message names the part
/// that is wrong and never quotes a secret.
public struct OTPError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The secret is missing, empty or not Base32.
        public static let invalidSecret = Code(rawValue: "invalid-secret")
        /// A parameter (digits, period, counter, algorithm, time) is out of range or unreadable.
        public static let invalidParameter = Code(rawValue: "invalid-parameter")
        /// The text is not a URI of the expected form.
        public static let invalidURI = Code(rawValue: "invalid-uri")
        /// A Google Authenticator export cannot be read.
        public static let invalidMigration = Code(rawValue: "invalid-migration")
        /// A value the format allows but this library cannot honestly turn into a code (MD5, an
        /// unspecified algorithm).
        public static let unsupported = Code(rawValue: "unsupported")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
