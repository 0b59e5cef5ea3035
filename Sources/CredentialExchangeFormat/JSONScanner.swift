#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Why scanning stopped. `malformed` is caught where an element can be kept verbatim instead.
enum ScanFailure: Error {
    case fatal(CXFDecodingError.Code, offset: Int, message: String)
    /// A credential that cannot be typed; it is kept verbatim with an error.
    case malformed(String)
    /// A credential using a value this version does not know (a newer algorithm); kept verbatim
    /// with a warning.
    case unsupported(String)
}

/// A pull scanner over UTF-8 JSON bytes. It never copies the input: strings without escapes become
/// `String`s straight from the buffer, base64url is decoded in place, and values nobody asked for are
/// skipped without allocating.
///
/// `@unchecked Sendable` is not claimed: the scanner lives only inside one `decode` call, on the
/// stack, while the caller's buffer is pinned.
struct JSONScanner {
    let base: UnsafePointer<UInt8>
    let count: Int
    var pos = 0
    var depth = 0
    let maxDepth: Int
    /// Bytes of model the decode may still build (see ``spend(_:)``).
    var budget: Int

    /// The current member key: a slice of the input, or `escapedKey` when it had escapes.
    var keyStart = 0
    var keyCount = 0
    var escapedKey: [UInt8]? = nil

    init(base: UnsafePointer<UInt8>, count: Int, maxDepth: Int, budget: Int) {
        self.base = base
        self.count = count
        self.maxDepth = maxDepth
        self.budget = budget
    }

    /// Accounts for `bytes` of model about to be built, and refuses a document whose model would
    /// outgrow its budget. Every object, element and kept value pays its inline size here, so a
    /// document dense with tiny objects (`"items":[{},{},…]`) is refused instead of taking tens of
    /// times its size in memory; real documents use a small fraction of the budget.
    @inline(__always) mutating func spend(_ bytes: Int) throws(ScanFailure) {
        budget &-= bytes
        if budget < 0 {
            throw .fatal(
                .tooLarge,
                offset: pos,
                message:
                    "the document is too dense to decode: its objects would take more memory than the limit of \(CXF.DecodingOptions.memoryFactor)× its size allows"
            )
        }
    }

    // MARK: Bytes

    @inline(__always) var current: UInt8 { pos < count ? base[pos] : 0 }

    @inline(__always) mutating func skipWhitespace() {
        while pos < count {
            let c = base[pos]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
            pos += 1
        }
    }

    func syntax(_ message: String, at offset: Int? = nil) -> ScanFailure {
        .fatal(.syntax, offset: offset ?? pos, message: message)
    }

    func describeCurrent() -> String {
        guard pos < count else { return "the end of the document" }
        let c = base[pos]
        if c >= 0x21 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
        return "byte 0x\(String(c, radix: 16, uppercase: true))"
    }

    // MARK: Kinds

    enum Kind { case object, array, string, number, bool, null, invalid }

    /// The kind of the value at the cursor (whitespace already skipped).
    @inline(__always) var kind: Kind {
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
    var kindDescription: String {
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

    mutating func enterObject() throws(ScanFailure) {
        guard current == UInt8(ascii: "{") else { throw syntax("expected an object but found \(describeCurrent())") }
        depth += 1
        if depth > maxDepth {
            throw .fatal(.tooDeep, offset: pos, message: "objects and arrays nest deeper than \(maxDepth) levels")
        }
        pos += 1
    }

    mutating func enterArray() throws(ScanFailure) {
        guard current == UInt8(ascii: "[") else { throw syntax("expected an array but found \(describeCurrent())") }
        depth += 1
        if depth > maxDepth {
            throw .fatal(.tooDeep, offset: pos, message: "objects and arrays nest deeper than \(maxDepth) levels")
        }
        pos += 1
    }

    /// Moves to the next member of the object entered last and reads its key; false at `}`.
    /// The cursor is left on the member's value.
    mutating func nextKey(_ first: inout Bool) throws(ScanFailure) -> Bool {
        skipWhitespace()
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

    /// Moves to the next element of the array entered last; false at `]`.
    mutating func nextElement(_ first: inout Bool) throws(ScanFailure) -> Bool {
        skipWhitespace()
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
    @inline(__always) func keyIs(_ name: StaticString) -> Bool {
        let n = name.utf8CodeUnitCount
        if let escapedKey {
            return escapedKey.count == n
                && escapedKey.withUnsafeBufferPointer { memcmp($0.baseAddress!, name.utf8Start, n) == 0 }
        }
        return keyCount == n && memcmp(base + keyStart, name.utf8Start, n) == 0
    }

    var keyString: String {
        if let escapedKey { return String(decoding: escapedKey, as: UTF8.self) }
        return String(decoding: UnsafeBufferPointer(start: base + keyStart, count: keyCount), as: UTF8.self)
    }

    // MARK: Strings

    struct StringSpan {
        var start: Int
        var end: Int
        var escaped: Bool
        var ascii: Bool
    }

    /// Scans the string at the cursor (on its opening quote) and leaves the cursor after it.
    mutating func scanString() throws(ScanFailure) -> StringSpan {
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
                escaped = true
                i += 2
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

    /// The unescaped bytes of a string with escapes.
    func unescape(_ s: StringSpan) throws(ScanFailure) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(s.end - s.start)
        var i = s.start
        func hex4(_ at: Int) throws(ScanFailure) -> UInt32 {
            guard at + 4 <= s.end else { throw syntax("\\u needs four hexadecimal digits", at: at) }
            var v: UInt32 = 0
            for k in 0..<4 {
                let c = base[at + k]
                let d: UInt32
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
                default: throw syntax("\\u needs four hexadecimal digits", at: at + k)
                }
                v = v << 4 | d
            }
            return v
        }
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
                var scalar = try hex4(i)
                i += 4
                if scalar >= 0xD800 && scalar < 0xDC00, i + 6 <= s.end, base[i] == UInt8(ascii: "\\"),
                    base[i + 1] == UInt8(ascii: "u")
                {
                    let low = try hex4(i + 2)
                    if low >= 0xDC00 && low < 0xE000 {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    }
                }
                // A lone surrogate is legal JSON but no Unicode scalar: it becomes U+FFFD.
                let u = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                out.append(contentsOf: UTF8.encode(u)!)
            default:
                throw syntax("'\\\(Character(Unicode.Scalar(e)))' is not a JSON escape", at: i - 2)
            }
        }
        return out
    }

    /// Makes a `String` of a scanned string. `invalidUTF8` is set when bytes had to be replaced.
    func string(_ s: StringSpan, invalidUTF8: inout Bool) throws(ScanFailure) -> String {
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

    struct NumberSpan {
        var start: Int
        var end: Int
        var isInteger: Bool
    }

    mutating func scanNumber() throws(ScanFailure) -> NumberSpan {
        let start = pos
        var i = pos
        var isInteger = true
        if i < count && base[i] == UInt8(ascii: "-") { i += 1 }
        func digits(_ i: inout Int) -> Int {
            let s = i
            while i < count && base[i] >= UInt8(ascii: "0") && base[i] <= UInt8(ascii: "9") { i += 1 }
            return i - s
        }
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

    func text(_ n: NumberSpan) -> String {
        String(decoding: UnsafeBufferPointer(start: base + n.start, count: n.end - n.start), as: UTF8.self)
    }

    /// The value of an integer literal, or nil when it does not fit in Int64.
    func int64(_ n: NumberSpan) -> Int64? {
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
    mutating func scanBool() throws(ScanFailure) -> Bool {
        if matchLiteral("true") { return true }
        if matchLiteral("false") { return false }
        throw syntax("expected a value but found \(describeCurrent())")
    }

    mutating func scanNull() throws(ScanFailure) {
        guard matchLiteral("null") else { throw syntax("expected a value but found \(describeCurrent())") }
    }

    private mutating func matchLiteral(_ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard pos + n <= count, memcmp(base + pos, literal.utf8Start, n) == 0 else { return false }
        pos += n
        return true
    }

    // MARK: Whole values

    /// Skips the value at the cursor, checking its syntax, without allocating.
    mutating func skipValue() throws(ScanFailure) {
        switch kind {
        case .object:
            try enterObject()
            var first = true
            while try nextKey(&first) { try skipValue() }
        case .array:
            try enterArray()
            var first = true
            while try nextElement(&first) {
                skipWhitespace()
                try skipValue()
            }
        case .string: _ = try scanString()
        case .number: _ = try scanNumber()
        case .bool: _ = try scanBool()
        case .null: try scanNull()
        case .invalid: throw syntax("expected a value but found \(describeCurrent())")
        }
    }

    /// Reads the value at the cursor as a ``JSONValue``.
    mutating func value(invalidUTF8: inout Bool) throws(ScanFailure) -> JSONValue {
        switch kind {
        case .object:
            try enterObject()
            var members: [JSONMember] = []
            var first = true
            while try nextKey(&first) {
                try spend(MemoryLayout<JSONMember>.stride)
                let key = keyString
                members.append(JSONMember(key: key, value: try value(invalidUTF8: &invalidUTF8)))
            }
            return .object(members)
        case .array:
            try enterArray()
            var elements: [JSONValue] = []
            var first = true
            while try nextElement(&first) {
                skipWhitespace()
                try spend(MemoryLayout<JSONValue>.stride)
                elements.append(try value(invalidUTF8: &invalidUTF8))
            }
            return .array(elements)
        case .string: return .string(try string(try scanString(), invalidUTF8: &invalidUTF8))
        case .number: return .number(text(try scanNumber()))
        case .bool: return .bool(try scanBool())
        case .null:
            try scanNull()
            return .null
        case .invalid: throw syntax("expected a value but found \(describeCurrent())")
        }
    }
}
