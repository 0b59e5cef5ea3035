/// Why a message is not the JSON it must be: what was expected and at which byte.
package struct JSONSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Offset of the offending byte from the start of the message.
    package var offset: Int
    package var message: String

    package var description: String { "\(message) at byte \(offset)" }
}

/// A forward-only reader over one JSON text, for the few places Varlink needs to look inside a
/// message: the envelope's members, and parameters checked against an interface's types.
///
/// Nothing is materialised that is not asked for. A value nobody reads is skipped in place and
/// can be kept as its bytes (``RawJSON``), so a 50 MB credential-exchange payload passes through the
/// envelope without being parsed into objects or copied more than once. Nesting is bounded by
/// `maximumDepth`: the skipper recurses once per level.
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

    package func error(_ message: String) -> JSONSyntaxError { JSONSyntaxError(offset: offset, message: message) }

    mutating func skipWhitespace() {
        while offset < end {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    /// The kind of the next value, without reading it.
    package mutating func peekKind() throws(JSONSyntaxError) -> Kind {
        skipWhitespace()
        guard offset < end else { throw error("a value was expected, the message ended") }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: throw error("a value was expected, found '\(Self.show(bytes[offset]))'")
        }
    }

    /// The bytes of the next value, which is skipped.
    package mutating func rawValue() throws(JSONSyntaxError) -> ArraySlice<UInt8> {
        skipWhitespace()
        let start = offset
        try skipValue(depth: 0)
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
        try skipValue(depth: 0)
    }

    /// Checks and passes over one value without building anything: one pass over the bytes, a
    /// stack of open containers (bounded by `maximumDepth`), no allocation per value. This is what
    /// carries a 50 MB payload through the envelope, so it must run near memory speed.
    private mutating func skipValue(depth: Int) throws(JSONSyntaxError) {
        skipWhitespace()
        let start = offset
        let limit = maximumDepth - depth
        let end = end
        let outcome = bytes.withUnsafeBufferPointer { whole -> (Int, String?) in
            let buffer = UnsafeBufferPointer(rebasing: whole[..<end])
            var skipper = Skipper(buffer: buffer, position: start, limit: limit)
            let message = skipper.value()
            return (skipper.position, message)
        }
        offset = outcome.0
        if let message = outcome.1 {
            throw error(
                message == Skipper.tooDeep ? "objects and arrays nest deeper than \(maximumDepth) levels" : message
            )
        }
    }

    /// Reads an object, calling `body` with the cursor on each member's value; `body` must consume it.
    /// Errors: a ``JSONSyntaxError``, or whatever `body` throws.
    package mutating func forEachMember(_ body: (inout JSONCursor, String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"), "an object")
        skipWhitespace()
        if offset < end, bytes[offset] == UInt8(ascii: "}") {
            offset += 1
            return
        }
        while true {
            skipWhitespace()
            guard offset < end, bytes[offset] == UInt8(ascii: "\"") else {
                throw error("a member name in quotes was expected")
            }
            let name = try string()
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':' after a member name")
            try body(&self, name)
            skipWhitespace()
            guard offset < end else { throw error("the object is not closed") }
            if bytes[offset] == UInt8(ascii: ",") {
                offset += 1
                continue
            }
            try expect(UInt8(ascii: "}"), "',' or '}' in an object")
            return
        }
    }

    /// Reads an array, calling `body` with the cursor on each element; `body` must consume it.
    /// Errors: a ``JSONSyntaxError``, or whatever `body` throws.
    package mutating func forEachElement(_ body: (inout JSONCursor) throws -> Void) throws {
        try expect(UInt8(ascii: "["), "an array")
        skipWhitespace()
        if offset < end, bytes[offset] == UInt8(ascii: "]") {
            offset += 1
            return
        }
        while true {
            try body(&self)
            skipWhitespace()
            guard offset < end else { throw error("the array is not closed") }
            if bytes[offset] == UInt8(ascii: ",") {
                offset += 1
                continue
            }
            try expect(UInt8(ascii: "]"), "',' or ']' in an array")
            return
        }
    }

    package mutating func string() throws(JSONSyntaxError) -> String {
        skipWhitespace()
        try expect(UInt8(ascii: "\""), "a string")
        // Most strings have no escape: one scan, one String from the bytes.
        var scan = offset
        while scan < end, bytes[scan] != UInt8(ascii: "\""), bytes[scan] != UInt8(ascii: "\\"),
            bytes[scan] >= 0x20
        {
            scan += 1
        }
        if scan < end, bytes[scan] == UInt8(ascii: "\"") {
            defer { offset = scan + 1 }
            return String(decoding: bytes[offset..<scan], as: UTF8.self)
        }
        var scalars = String.UnicodeScalarView()
        var runStart = offset
        func flush(_ end: Int) {
            if end > runStart {
                scalars.append(contentsOf: String(decoding: bytes[runStart..<end], as: UTF8.self).unicodeScalars)
            }
        }
        while true {
            guard offset < end else { throw error("the string is not closed") }
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                flush(offset)
                offset += 1
                return String(scalars)
            }
            if byte < 0x20 { throw error("a control character must be escaped in a string") }
            if byte != UInt8(ascii: "\\") {
                offset += 1
                continue
            }
            flush(offset)
            offset += 1
            guard offset < end else { throw error("the string is not closed") }
            let escaped = bytes[offset]
            offset += 1
            switch escaped {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                let unit = try hex4()
                if (0xD800..<0xDC00).contains(unit), offset + 1 < end, bytes[offset] == UInt8(ascii: "\\"),
                    bytes[offset + 1] == UInt8(ascii: "u")
                {
                    let save = offset
                    offset += 2
                    let low = try hex4()
                    if (0xDC00..<0xE000).contains(low) {
                        let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                        scalars.append(Unicode.Scalar(value) ?? "\u{FFFD}")
                    } else {
                        scalars.append("\u{FFFD}")
                        offset = save
                    }
                } else {
                    scalars.append(Unicode.Scalar(UInt32(unit)) ?? "\u{FFFD}")
                }
            default:
                offset -= 1
                throw error("'\\\(Self.show(escaped))' is not a JSON escape")
            }
            runStart = offset
        }
    }

    private mutating func hex4() throws(JSONSyntaxError) -> UInt16 {
        guard offset + 4 <= end else { throw error("\\u needs four hex digits") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("\\u needs four hex digits")
            }
            value = value << 4 | UInt16(digit)
            offset += 1
        }
        return value
    }

    /// A number as written: whether it is an integer (no fraction, no exponent) and its text.
    package mutating func number() throws(JSONSyntaxError) -> (isInteger: Bool, text: String) {
        let (isInteger, range) = try numberRange()
        return (isInteger, String(decoding: bytes[range], as: UTF8.self))
    }

    private mutating func numberRange() throws(JSONSyntaxError) -> (isInteger: Bool, range: Range<Int>) {
        skipWhitespace()
        let start = offset
        var isInteger = true
        if offset < end, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        guard offset < end, Self.isDigit(bytes[offset]) else { throw error("a digit was expected") }
        if bytes[offset] == UInt8(ascii: "0") {
            offset += 1
        } else {
            while offset < end, Self.isDigit(bytes[offset]) { offset += 1 }
        }
        if offset < end, bytes[offset] == UInt8(ascii: ".") {
            isInteger = false
            offset += 1
            guard offset < end, Self.isDigit(bytes[offset]) else {
                throw error("a digit was expected after '.'")
            }
            while offset < end, Self.isDigit(bytes[offset]) { offset += 1 }
        }
        if offset < end, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            isInteger = false
            offset += 1
            if offset < end, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                offset += 1
            }
            guard offset < end, Self.isDigit(bytes[offset]) else {
                throw error("a digit was expected in the exponent")
            }
            while offset < end, Self.isDigit(bytes[offset]) { offset += 1 }
        }
        return (isInteger, start..<offset)
    }

    package mutating func bool() throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        if try literal("true") { return true }
        if try literal("false") { return false }
        throw error("true or false was expected")
    }

    package mutating func null() throws(JSONSyntaxError) {
        skipWhitespace()
        guard try literal("null") else { throw error("null was expected") }
    }

    private mutating func literal(_ word: StaticString) throws(JSONSyntaxError) -> Bool {
        let count = word.utf8CodeUnitCount
        guard offset + count <= end else { return false }
        let matches = word.withUTF8Buffer { word in bytes[offset..<offset + count].elementsEqual(word) }
        if matches { offset += count }
        return matches
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(JSONSyntaxError) {
        skipWhitespace()
        guard offset < end, bytes[offset] == byte else {
            throw error(
                offset < end
                    ? "\(what) was expected, found '\(Self.show(bytes[offset]))'"
                    : "\(what) was expected, the message ended"
            )
        }
        offset += 1
    }

    /// `byte` as two uppercase hexadecimal digits.
    private static func hexDigits(_ byte: UInt8) -> String {
        let text = String(byte, radix: 16, uppercase: true)
        return byte < 0x10 ? "0" + text : text
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// A byte as text for a message: printable ASCII as itself, anything else as its hex value.
    private static func show(_ byte: UInt8) -> String {
        (0x21..<0x7F).contains(byte) ? String(UnicodeScalar(byte)) : "0x" + hexDigits(byte)
    }
}

/// The loop under ``JSONCursor/skipValue()``: a struct over the bytes so that the position lives in
/// a register, not in a box shared by closures.
private struct Skipper {
    static let tooDeep = "too deep"

    let buffer: UnsafeBufferPointer<UInt8>
    var position: Int
    let limit: Int

    /// Passes over one value; the reason when it is not valid JSON, else `nil`.
    mutating func value() -> String? {
        var open: [Bool] = []  // per open container: true for an object, false for an array
        open.reserveCapacity(16)
        var expectingValue = true
        while true {
            whitespace()
            if expectingValue {
                guard position < buffer.count else { return "a value was expected, the message ended" }
                let byte = buffer[position]
                if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                    guard open.count < limit else { return Self.tooDeep }
                    let isObject = byte == UInt8(ascii: "{")
                    position += 1
                    open.append(isObject)
                    whitespace()
                    if position < buffer.count, buffer[position] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        position += 1
                        open.removeLast()
                        expectingValue = false
                        if open.isEmpty { return nil }
                        continue
                    }
                    if isObject, let problem = key() { return problem }
                    continue
                }
                if let problem = scalar() { return problem }
                expectingValue = false
                if open.isEmpty { return nil }
                continue
            }
            guard position < buffer.count else { return "the message ended inside an object or array" }
            let byte = buffer[position]
            let inObject = open[open.count - 1]
            if byte == UInt8(ascii: ",") {
                position += 1
                if inObject {
                    whitespace()
                    if let problem = key() { return problem }
                }
                expectingValue = true
            } else if byte == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                position += 1
                open.removeLast()
                if open.isEmpty { return nil }
            } else {
                return inObject ? "',' or '}' was expected in an object" : "',' or ']' was expected in an array"
            }
        }
    }

    private mutating func whitespace() {
        while position < buffer.count {
            switch buffer[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    /// A member's name and its colon.
    private mutating func key() -> String? {
        guard position < buffer.count, buffer[position] == UInt8(ascii: "\"") else {
            return "a member name in quotes was expected"
        }
        if let problem = string() { return problem }
        whitespace()
        guard position < buffer.count, buffer[position] == UInt8(ascii: ":") else {
            return "':' after a member name was expected"
        }
        position += 1
        return nil
    }

    private mutating func scalar() -> String? {
        switch buffer[position] {
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return word("true")
        case UInt8(ascii: "f"): return word("false")
        case UInt8(ascii: "n"): return word("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return "a value was expected"
        }
    }

    private mutating func word(_ text: StaticString) -> String? {
        let count = text.utf8CodeUnitCount
        guard position + count <= buffer.count else { return "true, false or null was expected" }
        let matches = text.withUTF8Buffer { word in (0..<count).allSatisfy { buffer[position + $0] == word[$0] } }
        guard matches else { return "true, false or null was expected" }
        position += count
        return nil
    }

    private mutating func digits() -> String? {
        let start = position
        while position < buffer.count, buffer[position] &- UInt8(ascii: "0") < 10 { position += 1 }
        return position > start ? nil : "a digit was expected"
    }

    private mutating func number() -> String? {
        if buffer[position] == UInt8(ascii: "-") { position += 1 }
        if position < buffer.count, buffer[position] == UInt8(ascii: "0") {
            position += 1
        } else if let problem = digits() {
            return problem
        }
        if position < buffer.count, buffer[position] == UInt8(ascii: ".") {
            position += 1
            if let problem = digits() { return problem }
        }
        if position < buffer.count, buffer[position] | 0x20 == UInt8(ascii: "e") {
            position += 1
            if position < buffer.count, buffer[position] == UInt8(ascii: "+") || buffer[position] == UInt8(ascii: "-") {
                position += 1
            }
            if let problem = digits() { return problem }
        }
        return nil
    }

    private mutating func string() -> String? {
        position += 1  // the opening quote
        while position < buffer.count {
            let byte = buffer[position]
            position += 1
            if byte == UInt8(ascii: "\"") { return nil }
            if byte < 0x20 {
                position -= 1
                return "a control character must be escaped in a string"
            }
            guard byte == UInt8(ascii: "\\") else { continue }
            guard position < buffer.count else { break }
            switch buffer[position] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                UInt8(ascii: "n"),
                UInt8(ascii: "r"), UInt8(ascii: "t"):
                position += 1
            case UInt8(ascii: "u"):
                guard position + 4 < buffer.count, (1...4).allSatisfy({ Self.isHexDigit(buffer[position + $0]) }) else {
                    return "\\u needs four hex digits"
                }
                position += 5
            default:
                return "not a JSON escape"
            }
        }
        return "the string is not closed"
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
            UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default: false
        }
    }
}
