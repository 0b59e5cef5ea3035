#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why reading JSON stopped: the reader's own failures, and two its users raise over what they
/// read (the CXF decoder keeps such a value verbatim and goes on).
///
/// One concrete type rather than a generic parameter for each user's error: the reader's loops
/// must be inlined into its users' modules, so nothing about them is left to specialise there.
public enum JSONReadFailure: Error, Sendable {
    /// Reading cannot go on: `code` names why — ``syntax``, ``tooDeep``, or a user's own (the CXF
    /// decoder's `too-large`, `not-cxf`) — and `message` what was expected or found at `offset`.
    case fatal(code: String, offset: Int, message: String)
    /// A value its reader cannot take as the type it needs.
    case malformed(String)
    /// A value of a newer version than its reader knows.
    case unsupported(String)

    /// The code of text that is not JSON.
    public static let syntax = "syntax"
    /// The code of objects and arrays nested deeper than the reader's limit.
    public static let tooDeep = "too-deep"
}

/// Keyport's one JSON pull reader: a cursor over UTF-8 bytes that never copies them. Strings
/// without escapes become `String`s straight from the buffer, keys are compared where they lie,
/// and a value nobody asked for is skipped (its syntax checked) without allocating.
///
/// The CXF decoder and Varlink's message reader both stand on it (docs/architecture.md). It works
/// over a pointer: the caller keeps the bytes alive and unmoved for the reader's life, which is
/// one call. Every member is `@inlinable` so that each user's hot loops are inlined in its own
/// module, as they were when each had its own copy — and `public`, though KeyportEncoding is not
/// a product and nothing here is API: Swift 6.3 inlines an `@inlinable public` declaration into
/// another module but not an `@inlinable package` one (measured: the CXF decoder ran a third
/// slower calling the reader's key loop out of line).
public struct JSONReader {
    /// The first byte of the text.
    public let base: UnsafePointer<UInt8>
    /// Where the text ends.
    public let count: Int
    /// The byte the cursor is on.
    public var pos: Int
    /// Objects and arrays entered and not yet left.
    public var depth = 0
    /// The deepest nesting accepted.
    public let maxDepth: Int

    /// The current member key: a slice of the input, or `escapedKey` when it had escapes.
    @usableFromInline var keyStart = 0
    @usableFromInline var keyCount = 0
    @usableFromInline var escapedKey: [UInt8]? = nil

    /// A reader of `count` bytes at `base`, starting at `position`, accepting `maxDepth` levels.
    @inlinable
    public init(base: UnsafePointer<UInt8>, count: Int, position: Int = 0, maxDepth: Int) {
        precondition(count >= 0 && (0...count).contains(position), "the reader's position is outside its text")
        self.base = base
        self.count = count
        self.pos = position
        self.maxDepth = maxDepth
    }

    // MARK: Bytes

    /// The byte at the cursor, or 0 at the end.
    @inlinable @inline(__always) public var current: UInt8 { pos < count ? base[pos] : 0 }

    /// Moves the cursor past JSON's whitespace.
    @inlinable @inline(__always)
    public mutating func skipWhitespace() {
        while pos < count {
            let c = base[pos]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            pos += 1
        }
    }

    /// A syntax failure saying `message`, at `offset` or the cursor.
    @inlinable
    public func syntax(_ message: String, at offset: Int? = nil) -> JSONReadFailure {
        .fatal(code: JSONReadFailure.syntax, offset: offset ?? pos, message: message)
    }

    /// The byte at the cursor in words, for messages: `'x'`, `byte 0x0A`, or that the text ended.
    @inlinable
    public func describeCurrent() -> String {
        guard pos < count else { return "nothing: the text ended" }
        let c = base[pos]
        if c >= 0x21 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
        return "byte 0x\(String(c, radix: 16, uppercase: true))"
    }

    // MARK: Kinds

    /// The kinds of JSON value, as the first byte of a value tells them.
    public enum Kind: Equatable, Sendable {
        /// `{`, `[`, `"`, a digit or `-`, `t` or `f`, `n`.
        case object, array, string, number, bool, null
        /// Any other byte, or the end.
        case invalid
    }

    /// The kind of the value at the cursor (whitespace already skipped).
    @inlinable @inline(__always) public var kind: Kind {
        switch current {
        case UInt8(ascii: "{"): .object
        case UInt8(ascii: "["): .array
        case UInt8(ascii: "\""): .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): .number
        case UInt8(ascii: "t"), UInt8(ascii: "f"): .bool
        case UInt8(ascii: "n"): .null
        default: .invalid
        }
    }

    /// The kind of the value at the cursor in words, for messages ("an array", "a number", …).
    @inlinable public var kindDescription: String {
        switch kind {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        case .invalid: "not a JSON value"
        }
    }

    // MARK: Containers

    /// Enters the object at the cursor (on its `{`); ``nextKey(_:)`` then walks its members.
    @inlinable
    public mutating func enterObject() throws(JSONReadFailure) {
        guard current == UInt8(ascii: "{") else { throw syntax("expected an object but found \(describeCurrent())") }
        try enter()
    }

    /// Enters the array at the cursor (on its `[`); ``nextElement(_:)`` then walks its elements.
    @inlinable
    public mutating func enterArray() throws(JSONReadFailure) {
        guard current == UInt8(ascii: "[") else { throw syntax("expected an array but found \(describeCurrent())") }
        try enter()
    }

    @inlinable @inline(__always)
    mutating func enter() throws(JSONReadFailure) {
        depth += 1
        if depth > maxDepth {
            throw .fatal(
                code: JSONReadFailure.tooDeep,
                offset: pos,
                message: "objects and arrays nest deeper than \(maxDepth) levels"
            )
        }
        pos += 1
    }

    /// Moves to the next member of the object entered last and reads its key; false at `}`.
    /// The cursor is left on the member's value.
    @inlinable
    public mutating func nextKey(_ first: inout Bool) throws(JSONReadFailure) -> Bool {
        skipWhitespace()
        guard pos < count else { throw syntax("the object is not closed: the text ended") }
        var c = current
        if c == UInt8(ascii: "}") {
            pos += 1
            depth -= 1
            return false
        }
        if !first {
            guard c == UInt8(ascii: ",") else {
                throw syntax("expected ',' or '}' after an object member but found \(describeCurrent())")
            }
            pos += 1
            skipWhitespace()
            c = current
        }
        first = false
        guard c == UInt8(ascii: "\"") else {
            throw syntax("expected a member name in double quotes but found \(describeCurrent())")
        }
        let s = try scanString()
        if s.escaped {
            escapedKey = try unescape(s)
        } else {
            escapedKey = nil
            keyStart = s.start
            keyCount = s.end - s.start
        }
        skipWhitespace()
        guard current == UInt8(ascii: ":") else {
            throw syntax("expected ':' after a member name but found \(describeCurrent())")
        }
        pos += 1
        skipWhitespace()
        return true
    }

    /// Moves to the next element of the array entered last; false at `]`. The cursor is left on
    /// the element, whitespace skipped.
    @inlinable
    public mutating func nextElement(_ first: inout Bool) throws(JSONReadFailure) -> Bool {
        skipWhitespace()
        guard pos < count else { throw syntax("the array is not closed: the text ended") }
        if current == UInt8(ascii: "]") {
            pos += 1
            depth -= 1
            return false
        }
        if !first {
            guard current == UInt8(ascii: ",") else {
                throw syntax("expected ',' or ']' after an array element but found \(describeCurrent())")
            }
            pos += 1
            skipWhitespace()
        }
        first = false
        return true
    }

    /// Whether the current key is `name`.
    @inlinable @inline(__always)
    public func keyIs(_ name: StaticString) -> Bool {
        let n = name.utf8CodeUnitCount
        if let escapedKey {
            return escapedKey.count == n
                && escapedKey.withUnsafeBufferPointer { memcmp($0.baseAddress!, name.utf8Start, n) == 0 }
        }
        return keyCount == n && memcmp(base + keyStart, name.utf8Start, n) == 0
    }

    /// The current key, unescaped (invalid UTF-8 replaced).
    @inlinable
    public var keyString: String {
        if let escapedKey { return String(decoding: escapedKey, as: UTF8.self) }
        return String(decoding: UnsafeBufferPointer(start: base + keyStart, count: keyCount), as: UTF8.self)
    }

    // MARK: Strings

    /// Where a scanned string's content lies, and what it holds.
    public struct StringSpan {
        /// The first byte after the opening quote.
        public var start: Int
        /// The closing quote.
        public var end: Int
        /// Whether it has escapes (then ``JSONReader/unescape(_:)`` gives its bytes).
        public var escaped: Bool
        /// Whether every byte is ASCII.
        public var ascii: Bool

        @inlinable
        init(start: Int, end: Int, escaped: Bool, ascii: Bool) {
            self.start = start
            self.end = end
            self.escaped = escaped
            self.ascii = ascii
        }
    }

    /// Scans the string at the cursor (on its opening quote) and leaves the cursor after it.
    @inlinable
    public mutating func scanString() throws(JSONReadFailure) -> StringSpan {
        let open = pos
        var i = pos + 1
        var escaped = false
        var high: UInt8 = 0
        // Eight bytes at a time while none of them is a quote, a backslash or a control character
        // (the SWAR zero-byte test: it may flag a clean word, never miss a special byte).
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let raw = UnsafeRawPointer(base)
        var wide: UInt64 = 0
        while i + 8 <= count {
            let v = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            let quote = v ^ (ones &* 0x22)
            let backslash = v ^ (ones &* 0x5C)
            let special = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((v &- ones &* 0x20) & ~v)
            if special & highs != 0 { break }
            wide |= v
            i += 8
        }
        if wide & highs != 0 { high = 0x80 }
        while true {
            guard i < count else { throw syntax("a string that starts here is never closed", at: open) }
            let c = base[i]
            if c == UInt8(ascii: "\"") { break }
            if c == UInt8(ascii: "\\") {
                // Checked here, not only when unescaped: a skipped value must be JSON too (keyportd
                // passes skipped values on to other programs).
                escaped = true
                guard i + 1 < count else { throw syntax("a string that starts here is never closed", at: open) }
                switch base[i + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    i += 2
                case UInt8(ascii: "u"):
                    _ = try hex4(i + 2, end: count)
                    i += 6
                default:
                    throw syntax("'\\\(Character(Unicode.Scalar(base[i + 1])))' is not a JSON escape", at: i)
                }
                continue
            }
            if c < 0x20 {
                throw syntax("control character 0x\(String(c, radix: 16)) inside a string must be escaped", at: i)
            }
            high |= c
            i += 1
        }
        pos = i + 1
        return StringSpan(start: open + 1, end: i, escaped: escaped, ascii: high < 0x80)
    }

    /// The unescaped bytes of a string with escapes. A lone surrogate (legal JSON, no Unicode
    /// scalar) becomes U+FFFD.
    @inlinable
    public func unescape(_ s: StringSpan) throws(JSONReadFailure) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(s.end - s.start)
        var i = s.start
        while i < s.end {
            let c = base[i]
            if c != UInt8(ascii: "\\") {
                out.append(c)
                i += 1
                continue
            }
            guard i + 1 < s.end else { throw syntax("a backslash ends the string", at: i) }
            let e = base[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4(i, end: s.end)
                i += 4
                if scalar >= 0xD800 && scalar < 0xDC00, i + 6 <= s.end, base[i] == UInt8(ascii: "\\"),
                    base[i + 1] == UInt8(ascii: "u")
                {
                    let low = try hex4(i + 2, end: s.end)
                    if low >= 0xDC00 && low < 0xE000 {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    }
                }
                let u = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                out.append(contentsOf: UTF8.encode(u)!)
            default:
                throw syntax("'\\\(Character(Unicode.Scalar(e)))' is not a JSON escape", at: i - 2)
            }
        }
        return out
    }

    @inlinable
    func hex4(_ at: Int, end: Int) throws(JSONReadFailure) -> UInt32 {
        guard at + 4 <= end else { throw syntax("\\u needs four hex digits", at: at) }
        var v: UInt32 = 0
        for k in 0..<4 {
            let c = base[at + k]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw syntax("\\u needs four hex digits", at: at + k)
            }
            v = v << 4 | d
        }
        return v
    }

    /// Makes a `String` of a scanned string. `invalidUTF8` is set when bytes had to be replaced.
    @inlinable
    public func string(_ s: StringSpan, invalidUTF8: inout Bool) throws(JSONReadFailure) -> String {
        if !s.escaped {
            let buffer = UnsafeBufferPointer(start: base + s.start, count: s.end - s.start)
            if s.ascii { return String(decoding: buffer, as: UTF8.self) }
            if let valid = String(validating: buffer, as: UTF8.self) { return valid }
            invalidUTF8 = true
            return String(decoding: buffer, as: UTF8.self)
        }
        let bytes = try unescape(s)
        if let valid = String(validating: bytes, as: UTF8.self) { return valid }
        invalidUTF8 = true
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Numbers and literals

    /// Where a scanned number lies, and whether it is an integer (no fraction, no exponent).
    public struct NumberSpan {
        /// Its first byte.
        public var start: Int
        /// The byte after it.
        public var end: Int
        /// Whether it has neither fraction nor exponent.
        public var isInteger: Bool

        @inlinable
        init(start: Int, end: Int, isInteger: Bool) {
            self.start = start
            self.end = end
            self.isInteger = isInteger
        }
    }

    /// Scans the number at the cursor, checking its syntax.
    @inlinable
    public mutating func scanNumber() throws(JSONReadFailure) -> NumberSpan {
        let start = pos
        var i = pos
        var isInteger = true
        if i < count && base[i] == UInt8(ascii: "-") { i += 1 }
        let intStart = i
        let n = digits(&i)
        guard n > 0 else { throw syntax("a number needs digits", at: i) }
        if n > 1 && base[intStart] == UInt8(ascii: "0") { throw syntax("a number must not start with 0", at: intStart) }
        if i < count && base[i] == UInt8(ascii: ".") {
            i += 1
            isInteger = false
            guard digits(&i) > 0 else { throw syntax("a decimal point needs digits after it", at: i) }
        }
        if i < count && (base[i] == UInt8(ascii: "e") || base[i] == UInt8(ascii: "E")) {
            i += 1
            isInteger = false
            if i < count && (base[i] == UInt8(ascii: "+") || base[i] == UInt8(ascii: "-")) { i += 1 }
            guard digits(&i) > 0 else { throw syntax("an exponent needs digits", at: i) }
        }
        pos = i
        return NumberSpan(start: start, end: i, isInteger: isInteger)
    }

    @inlinable @inline(__always)
    func digits(_ i: inout Int) -> Int {
        let s = i
        while i < count && base[i] &- UInt8(ascii: "0") < 10 { i += 1 }
        return i - s
    }

    /// The text of a scanned number.
    @inlinable
    public func text(_ n: NumberSpan) -> String {
        String(decoding: UnsafeBufferPointer(start: base + n.start, count: n.end - n.start), as: UTF8.self)
    }

    /// The value of an integer literal, or nil when it does not fit in Int64.
    @inlinable
    public func int64(_ n: NumberSpan) -> Int64? {
        var i = n.start
        let negative = base[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        var v: Int64 = 0
        while i < n.end {
            let d = Int64(base[i] - UInt8(ascii: "0"))
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (a, o2) = negative ? m.subtractingReportingOverflow(d) : m.addingReportingOverflow(d)
            if o1 || o2 { return nil }
            v = a
            i += 1
        }
        return v
    }

    /// Reads `true` or `false`.
    @inlinable
    public mutating func scanBool() throws(JSONReadFailure) -> Bool {
        if matchLiteral("true") { return true }
        if matchLiteral("false") { return false }
        throw syntax("expected a value but found \(describeCurrent())")
    }

    /// Reads `null`.
    @inlinable
    public mutating func scanNull() throws(JSONReadFailure) {
        guard matchLiteral("null") else { throw syntax("expected a value but found \(describeCurrent())") }
    }

    @inlinable
    mutating func matchLiteral(_ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard pos + n <= count, memcmp(base + pos, literal.utf8Start, n) == 0 else { return false }
        pos += n
        return true
    }

    // MARK: Whole values

    /// Skips the value at the cursor (whitespace already skipped), checking its syntax, without
    /// allocating beyond a small stack of the containers open; nesting counts from ``depth``.
    ///
    /// One loop rather than a call per level: this is what carries a 50 MB document through
    /// keyportd's envelope and past a CXF member nobody reads, so it runs near memory speed.
    @inlinable
    public mutating func skipValue() throws(JSONReadFailure) {
        switch kind {
        case .string:
            _ = try scanString()
            return
        case .number:
            _ = try scanNumber()
            return
        case .bool:
            _ = try scanBool()
            return
        case .null:
            try scanNull()
            return
        case .invalid:
            throw syntax("expected a value but found \(describeCurrent())")
        case .object, .array:
            break
        }
        let outer = depth
        // Per open container: true for an object, false for an array.
        var open: [Bool] = []
        open.reserveCapacity(16)
        var first = true
        while true {
            // At a value: open a container, or pass a scalar.
            var isContainer = false
            switch kind {
            case .object:
                try enterObject()
                open.append(true)
                isContainer = true
            case .array:
                try enterArray()
                open.append(false)
                isContainer = true
            case .string: _ = try scanString()
            case .number: _ = try scanNumber()
            case .bool: _ = try scanBool()
            case .null: try scanNull()
            case .invalid: throw syntax("expected a value but found \(describeCurrent())")
            }
            first = isContainer
            // Find the next value, closing the containers that end.
            while true {
                let more = try open[open.count - 1] ? nextKey(&first) : nextElement(&first)
                if more { break }
                open.removeLast()
                if open.isEmpty {
                    depth = outer
                    return
                }
                first = false
            }
        }
    }
}
