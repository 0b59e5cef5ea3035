import KeyportEncoding
import KeyportErrors

/// Why a message is not the JSON it must be: what was expected and at which byte.
package struct JSONSyntaxError: RecordedError {
    /// A stable name for why.
    package typealias Code = ErrorCodeOf<JSONSyntaxError>

    package var record: ErrorRecord<Code>
    /// Offset of the offending byte from the start of the message.
    package var offset: Int

    package init(_ code: Code, offset: Int, _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
        self.offset = offset
    }

    package var description: String { "\(message) at byte \(offset)" }
}

extension ErrorCodeOf<JSONSyntaxError> {
    /// The text is not JSON.
    package static let syntax = Self(rawValue: JSONReadFailure.syntax)
    /// Objects and arrays nest deeper than the reader takes.
    package static let tooDeep = Self(rawValue: JSONReadFailure.tooDeep)
    /// JSON, but not what the message must hold there (a member of the wrong type, one given twice,
    /// more than one object).
    package static let unexpected = Self(rawValue: "unexpected")
}

extension JSONSyntaxError {
    /// What the reader said, where, under the reader's code.
    init(_ failure: JSONReadFailure) {
        switch failure {
        case .fatal(let code, let offset, let message): self.init(Code(rawValue: code), offset: offset, message)
        // The reader raises neither; only its users do.
        case .malformed(let message), .unsupported(let message): self.init(.unexpected, offset: 0, message)
        }
    }
}

/// A forward-only reader over one JSON text, for the few places Varlink needs to look inside a
/// message: the envelope's members, and parameters checked against an interface's types.
///
/// Each step is Keyport's one JSON reader (``JSONReader`` in KeyportEncoding, which the CXF decoder
/// stands on too) run over the message's bytes from ``offset``; the cursor keeps the bytes, so a
/// value it skipped can be kept as its bytes (``RawJSON``), and a 50 MB credential-exchange payload
/// passes through the envelope without being parsed into objects or copied more than once.
/// Nesting is bounded by `maximumDepth`: objects and arrays deeper than that are refused.
package struct JSONCursor {
    /// The kinds of JSON value, as the first byte of a value tells them.
    package enum Kind: Equatable, Sendable {
        case object, array, string, number, bool, null
    }

    package let bytes: [UInt8]
    package private(set) var offset: Int
    /// Where the text read ends: `end`, or the end of the range given.
    private let end: Int
    private let maximumDepth: Int

    package init(_ bytes: [UInt8], maximumDepth: Int = 128) {
        self.init(bytes, in: 0..<bytes.count, maximumDepth: maximumDepth)
    }

    /// A cursor over `bytes[range]` only: one value inside a larger message (a member of an
    /// object read with ``object()``), read where it is, without copying it out.
    package init(_ bytes: [UInt8], in range: Range<Int>, maximumDepth: Int = 128) {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count, "the range is outside the message")
        self.bytes = bytes
        self.offset = range.lowerBound
        self.end = range.upperBound
        self.maximumDepth = maximumDepth
    }

    package var isAtEnd: Bool {
        var copy = self
        copy.skipWhitespace()
        return copy.offset == end
    }

    package func error(_ message: String) -> JSONSyntaxError { JSONSyntaxError(.unexpected, offset: offset, message) }

    /// Runs `body` with the reader on the bytes from ``offset``, and moves the cursor to where the
    /// reader stopped. A failure leaves the cursor where it was; the error says where it failed.
    private mutating func step<T>(
        _ body: (inout JSONReader) throws(JSONReadFailure) -> T
    ) throws(JSONSyntaxError) -> T {
        let (start, end, maximumDepth) = (offset, end, maximumDepth)
        let (value, position) = try bytes.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in
            // An empty message has no storage; the reader reads nothing past `end`, which is 0.
            let base = buffer.baseAddress ?? StaticString("").utf8Start
            var reader = JSONReader(base: base, count: end, position: start, maxDepth: maximumDepth)
            do throws(JSONReadFailure) {
                let value = try body(&reader)
                return (value, reader.pos)
            } catch {
                throw JSONSyntaxError(error)
            }
        }
        offset = position
        return value
    }

    mutating func skipWhitespace() {
        // Whitespace cannot fail.
        try! step { $0.skipWhitespace() }
    }

    /// The kind of the next value, without reading it.
    package mutating func peekKind() throws(JSONSyntaxError) -> Kind {
        try step { reader throws(JSONReadFailure) in
            reader.skipWhitespace()
            switch reader.kind {
            case .object: return .object
            case .array: return .array
            case .string: return .string
            case .number: return .number
            case .bool: return .bool
            case .null: return .null
            case .invalid: throw reader.syntax("expected a value but found \(reader.describeCurrent())")
            }
        }
    }

    /// The bytes of the next value, which is skipped.
    package mutating func rawValue() throws(JSONSyntaxError) -> ArraySlice<UInt8> {
        skipWhitespace()
        let start = offset
        try skipValue()
        return bytes[start..<offset]
    }

    /// Reads the next value, which must be an object, and keeps it with where each of its members'
    /// values lies (``RawJSON/member(_:)`` then finds one without reading the object again). One
    /// pass, as ``rawValue()``, with the syntax checked.
    package mutating func object() throws -> RawJSON {
        skipWhitespace()
        let start = offset
        var members: [RawJSON.Member] = []
        try forEachMember { cursor, name in
            cursor.skipWhitespace()
            let valueStart = cursor.offset
            try cursor.skipValue()
            members.append(RawJSON.Member(name: name, range: (valueStart - start)..<(cursor.offset - start)))
        }
        return RawJSON(bytes: bytes[start..<offset], members: members)
    }

    /// Skips the next value, checking its syntax.
    package mutating func skipValue() throws(JSONSyntaxError) {
        try step { reader throws(JSONReadFailure) in
            reader.skipWhitespace()
            try reader.skipValue()
        }
    }

    /// Reads an object, calling `body` with the cursor on each member's value; `body` must consume it.
    /// Errors: a ``JSONSyntaxError``, or whatever `body` throws.
    package mutating func forEachMember(_ body: (inout JSONCursor, String) throws -> Void) throws {
        try step { reader throws(JSONReadFailure) in
            reader.skipWhitespace()
            try reader.enterObject()
        }
        var first = true
        while let name = try step({ reader throws(JSONReadFailure) in
            try reader.nextKey(&first) ? reader.keyString : nil
        }) {
            try body(&self, name)
        }
    }

    /// Reads an array, calling `body` with the cursor on each element; `body` must consume it.
    /// Errors: a ``JSONSyntaxError``, or whatever `body` throws.
    package mutating func forEachElement(_ body: (inout JSONCursor) throws -> Void) throws {
        try step { reader throws(JSONReadFailure) in
            reader.skipWhitespace()
            try reader.enterArray()
        }
        var first = true
        while try step({ reader throws(JSONReadFailure) in try reader.nextElement(&first) }) {
            try body(&self)
        }
    }

    /// Reads a string; bytes that are not UTF-8 are replaced.
    package mutating func string() throws(JSONSyntaxError) -> String {
        try step { reader throws(JSONReadFailure) in
            reader.skipWhitespace()
            guard reader.kind == .string else {
                throw reader.syntax("expected a string but found \(reader.describeCurrent())")
            }
            var replaced = false
            return try reader.string(reader.scanString(), invalidUTF8: &replaced)
        }
    }

    /// A number as written: whether it is an integer (no fraction, no exponent) and its text.
    package mutating func number() throws(JSONSyntaxError) -> (isInteger: Bool, text: String) {
        try step { reader throws(JSONReadFailure) in
            reader.skipWhitespace()
            guard reader.kind == .number else {
                throw reader.syntax("expected a number but found \(reader.describeCurrent())")
            }
            let number = try reader.scanNumber()
            return (number.isInteger, reader.text(number))
        }
    }

    package mutating func bool() throws(JSONSyntaxError) -> Bool {
        try step { reader throws(JSONReadFailure) in
            reader.skipWhitespace()
            return try reader.scanBool()
        }
    }

    package mutating func null() throws(JSONSyntaxError) {
        try step { reader throws(JSONReadFailure) in
            reader.skipWhitespace()
            try reader.scanNull()
        }
    }
}
