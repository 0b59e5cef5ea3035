/// A CBOR data item (RFC 8949) as WebAuthn and CTAP2 use them: attestation objects, COSE keys,
/// authenticator extensions.
///
/// Keyport reads and writes CBOR only in that profile (CTAP2's "canonical CBOR", RFC 8949 §4.2.1
/// as CTAP2 words it): definite lengths, the shortest form of every length and integer, map keys
/// in order and never repeated. ``CBORWriter`` writes nothing else, and ``CBORReader`` refuses
/// what an authenticator must not send — an indefinite length, a repeated key, a tag — with the
/// offset where it stands, so that a value read back writes the same bytes.
package indirect enum CBOR: Hashable, Sendable {
    /// Major type 0: 0 … 2^64−1.
    case unsigned(UInt64)
    /// Major type 1: the integer −1 − `n`.
    case negative(UInt64)
    /// Major type 2.
    case bytes([UInt8])
    /// Major type 3: UTF-8 text.
    case text(String)
    /// Major type 4.
    case array([CBOR])
    /// Major type 5: pairs in the order the encoding sorts them.
    case map([Entry])
    /// Major type 7's `false` and `true`.
    case bool(Bool)
    /// Major type 7's `null`.
    case null
    /// Major type 7's half, single and double precision floats, read as a `Double`.
    case float(Double)

    /// A key and its value in a ``CBOR/map(_:)``.
    package struct Entry: Hashable, Sendable {
        /// The key; WebAuthn's maps key by integers (COSE) or text (attestation objects).
        package var key: CBOR
        /// The value.
        package var value: CBOR

        /// The pair `key: value`.
        package init(_ key: CBOR, _ value: CBOR) {
            self.key = key
            self.value = value
        }
    }

    /// An integer as CBOR writes it: major type 0 for 0 and above, 1 below.
    package static func int(_ value: Int64) -> CBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }

    /// The integer this is, when it is one that fits an `Int64`.
    package var int: Int64? {
        switch self {
        case .unsigned(let n): n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negative(let n): n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: nil
        }
    }

    /// The bytes of a byte string.
    package var bytes: [UInt8]? {
        if case .bytes(let bytes) = self { bytes } else { nil }
    }

    /// The text of a text string.
    package var text: String? {
        if case .text(let text) = self { text } else { nil }
    }

    /// The pairs of a map.
    package var entries: [Entry]? {
        if case .map(let entries) = self { entries } else { nil }
    }

    /// In a map, the value of the key `key`.
    package subscript(key: CBOR) -> CBOR? {
        entries?.first { $0.key == key }?.value
    }

    /// In a map, the value of the integer key `key` (COSE's labels).
    package subscript(label: Int64) -> CBOR? { self[CBOR.int(label)] }

    /// In a map, the value of the text key `key` (an attestation object's members).
    package subscript(member: String) -> CBOR? { self[CBOR.text(member)] }

    /// The item's canonical encoding (``CBORWriter``).
    package var encoded: [UInt8] {
        var writer = CBORWriter()
        writer.write(self)
        return writer.bytes
    }

    /// What kind of item this is, in a person's words: for messages such as "authData is text,
    /// not a byte string".
    package var kindDescription: String {
        switch self {
        case .unsigned, .negative: "an integer"
        case .bytes: "a byte string"
        case .text: "text"
        case .array: "an array"
        case .map: "a map"
        case .bool: "a boolean"
        case .null: "null"
        case .float: "a float"
        }
    }
}

/// Writes CBOR in CTAP2's canonical form: the shortest head for every length and integer, definite
/// lengths, and each map's keys sorted by their encodings — the shorter first, then byte by byte
/// (RFC 7049 §3.9, which CTAP2 adopts: for COSE keys 1, 3, −1, −2, −3; for an attestation object
/// `fmt`, `attStmt`, `authData`).
package struct CBORWriter {
    /// What was written.
    package private(set) var bytes: [UInt8] = []

    /// An empty writer.
    package init() {}

    /// Appends `item`.
    package mutating func write(_ item: CBOR) {
        switch item {
        case .unsigned(let n): head(0, n)
        case .negative(let n): head(1, n)
        case .bytes(let value):
            head(2, UInt64(value.count))
            bytes += value
        case .text(let value):
            head(3, UInt64(value.utf8.count))
            bytes += value.utf8
        case .array(let items):
            head(4, UInt64(items.count))
            for item in items { write(item) }
        case .map(let entries):
            head(5, UInt64(entries.count))
            let sorted = entries.map { (key: $0.key.encoded, value: $0.value) }.sorted { a, b in
                a.key.count != b.key.count ? a.key.count < b.key.count : a.key.lexicographicallyPrecedes(b.key)
            }
            for entry in sorted {
                bytes += entry.key
                write(entry.value)
            }
        case .bool(let value): bytes.append(value ? 0xF5 : 0xF4)
        case .null: bytes.append(0xF6)
        case .float(let value):
            // Only the double form: WebAuthn's structures hold no floats, and a reader accepts any width.
            bytes.append(0xFB)
            appendBigEndian(value.bitPattern, count: 8)
        }
    }

    /// A major type's head with the shortest argument for `value`.
    private mutating func head(_ major: UInt8, _ value: UInt64) {
        let type = major << 5
        switch value {
        case 0..<24: bytes.append(type | UInt8(value))
        case 24...0xFF:
            bytes.append(type | 24)
            bytes.append(UInt8(value))
        case 0x100...0xFFFF:
            bytes.append(type | 25)
            appendBigEndian(value, count: 2)
        case 0x1_0000...0xFFFF_FFFF:
            bytes.append(type | 26)
            appendBigEndian(value, count: 4)
        default:
            bytes.append(type | 27)
            appendBigEndian(value, count: 8)
        }
    }

    private mutating func appendBigEndian(_ value: UInt64, count: Int) {
        for shift in stride(from: (count - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }
}

/// Why bytes are not CBOR as WebAuthn uses it, and where: ``message`` names what was expected or
/// found, ``offset`` the byte it starts at.
package struct CBORReadFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong.
    package var message: String
    /// The byte offset of the item at fault.
    package var offset: Int

    /// A failure at `offset`.
    package init(_ message: String, at offset: Int) {
        self.message = message
        self.offset = offset
    }

    /// "`message` (at byte `offset`)".
    package var description: String { "\(message) (at byte \(offset))" }
}

/// Reads CBOR items from bytes, refusing what CTAP2's canonical form rules out (an indefinite
/// length, a tag, a simple value other than false, true and null, a repeated map key) and more
/// nesting than ``maximumDepth``. It accepts any width of head and any order of keys, since
/// relying parties do: a value it reads and writes back is canonical, so an authenticator's bytes
/// that must stay as they were (`authData`, which is signed) are kept as they came, as bytes.
package struct CBORReader {
    /// How deeply arrays and maps may nest. WebAuthn's structures go three deep.
    package static let maximumDepth = 16

    private let input: [UInt8]
    /// The offset of the next byte to read.
    package private(set) var offset: Int

    /// A reader at the start of `input`.
    package init(_ input: [UInt8]) {
        self.input = input
        offset = 0
    }

    /// Whether every byte was read.
    package var isAtEnd: Bool { offset == input.count }

    /// Reads `bytes` as exactly one item.
    package static func read(_ bytes: [UInt8]) throws(CBORReadFailure) -> CBOR {
        var reader = CBORReader(bytes)
        let item = try reader.next()
        guard reader.isAtEnd else {
            throw CBORReadFailure("\(bytes.count - reader.offset) bytes follow the item", at: reader.offset)
        }
        return item
    }

    /// Reads the next item (the authenticator data's extensions follow its public key, so an item
    /// may end before the input does).
    package mutating func next() throws(CBORReadFailure) -> CBOR {
        try item(depth: 0)
    }

    private mutating func item(depth: Int) throws(CBORReadFailure) -> CBOR {
        let start = offset
        guard offset < input.count else { throw CBORReadFailure("the data ends where an item was expected", at: start) }
        let initial = input[offset]
        offset += 1
        let major = initial >> 5
        let info = initial & 0x1F
        if major == 7 { return try simple(info, at: start) }
        if major == 6 { throw CBORReadFailure("a tag (major type 6), which WebAuthn's CBOR does not use", at: start) }
        guard info != 31 else { throw CBORReadFailure("an indefinite length, which canonical CBOR forbids", at: start) }
        let argument = try self.argument(info, at: start)
        switch major {
        case 0: return .unsigned(argument)
        case 1: return .negative(argument)
        case 2: return .bytes(try take(argument, "a byte string", at: start))
        case 3:
            let bytes = try take(argument, "a text string", at: start)
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw CBORReadFailure("a text string that is not UTF-8", at: start)
            }
            return .text(text)
        case 4:
            guard depth < Self.maximumDepth else { throw nestedTooDeep(at: start) }
            // Each item takes a byte at least, so a count above what is left is refused before allocating.
            guard argument <= UInt64(input.count - offset) else { throw cutShort(argument, "an array", at: start) }
            var items: [CBOR] = []
            items.reserveCapacity(Int(argument))
            for _ in 0..<argument { items.append(try item(depth: depth + 1)) }
            return .array(items)
        default:  // 5
            guard depth < Self.maximumDepth else { throw nestedTooDeep(at: start) }
            guard argument <= UInt64(input.count - offset) / 2 else { throw cutShort(argument, "a map", at: start) }
            var entries: [CBOR.Entry] = []
            entries.reserveCapacity(Int(argument))
            var keys = Set<CBOR>()
            for _ in 0..<argument {
                let keyOffset = offset
                let key = try item(depth: depth + 1)
                guard keys.insert(key).inserted else {
                    throw CBORReadFailure("the map key \(Self.describe(key)) is repeated", at: keyOffset)
                }
                entries.append(CBOR.Entry(key, try item(depth: depth + 1)))
            }
            return .map(entries)
        }
    }

    private mutating func argument(_ info: UInt8, at start: Int) throws(CBORReadFailure) -> UInt64 {
        let width: Int
        switch info {
        case 0..<24: return UInt64(info)
        case 24: width = 1
        case 25: width = 2
        case 26: width = 4
        case 27: width = 8
        default: throw CBORReadFailure("the reserved additional information \(info)", at: start)
        }
        guard input.count - offset >= width else {
            throw CBORReadFailure("the data ends inside an item's head", at: start)
        }
        var value: UInt64 = 0
        for byte in input[offset..<offset + width] { value = value << 8 | UInt64(byte) }
        offset += width
        return value
    }

    private mutating func simple(_ info: UInt8, at start: Int) throws(CBORReadFailure) -> CBOR {
        switch info {
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        case 25, 26, 27:
            let bits = try argument(info, at: start)
            switch info {
            case 25: return .float(Self.halfPrecision(UInt16(bits)))
            case 26: return .float(Double(Float(bitPattern: UInt32(bits))))
            default: return .float(Double(bitPattern: bits))
            }
        case 31: throw CBORReadFailure("a break where no indefinite length is open", at: start)
        default: throw CBORReadFailure("the simple value \(info), which WebAuthn's CBOR does not use", at: start)
        }
    }

    /// IEEE 754 binary16, as RFC 8949 appendix D decodes it.
    private static func halfPrecision(_ bits: UInt16) -> Double {
        let exponent = Int(bits >> 10) & 0x1F
        let mantissa = Double(bits & 0x3FF)
        let magnitude: Double =
            switch exponent {
            case 0: mantissa * 0x1p-24
            case 31: mantissa == 0 ? .infinity : .nan
            default: (mantissa + 1024) * Double(sign: .plus, exponent: exponent - 25, significand: 1)
            }
        return bits & 0x8000 != 0 ? -magnitude : magnitude
    }

    private mutating func take(_ count: UInt64, _ what: String, at start: Int) throws(CBORReadFailure) -> [UInt8] {
        guard count <= UInt64(input.count - offset) else { throw cutShort(count, what, at: start) }
        let bytes = Array(input[offset..<offset + Int(count)])
        offset += Int(count)
        return bytes
    }

    /// `what` (an array, a map, a byte or text string) says it holds `count` of its parts, more
    /// than the bytes left could.
    private func cutShort(_ count: UInt64, _ what: String, at start: Int) -> CBORReadFailure {
        let unit = what.hasSuffix("string") ? "bytes" : what == "a map" ? "pairs" : "items"
        return CBORReadFailure("\(what) of \(count) \(unit) where \(input.count - offset) bytes are left", at: start)
    }

    private func nestedTooDeep(at start: Int) -> CBORReadFailure {
        CBORReadFailure("arrays and maps nested deeper than \(Self.maximumDepth)", at: start)
    }

    /// A key as a message shows it: an integer or text as itself, anything else by its kind.
    private static func describe(_ key: CBOR) -> String {
        if let int = key.int { return String(int) }
        if let text = key.text { return "\"\(DisplayText.escaping(text))\"" }
        return key.kindDescription
    }
}
