/// Base32 (RFC 4648 §6), the text form of one-time-code secrets.
///
/// Decoding is lenient in the ways people's secrets arrive: lowercase, spaces and hyphens between
/// groups, missing or present `=` padding, any length. Encoding is canonical: uppercase, no padding.
package enum Base32 {
    /// Why a string is not Base32.
    package enum DecodingError: Error, Equatable, Sendable, CustomStringConvertible {
        /// A character outside the Base32 alphabet (the character and its UTF-8 offset).
        case invalidCharacter(Character, offset: Int)
        /// Padding followed by more data.
        case misplacedPadding(offset: Int)
        /// A number of symbols that leaves a partial byte no encoder writes (1, 3 or 6 symbols in
        /// the last group).
        case invalidLength(symbols: Int)

        /// What is wrong and where, without quoting the text: for Base32 that is a secret.
        package var redactedDescription: String {
            switch self {
            case .invalidCharacter(_, let offset): "the character at offset \(offset) is not A–Z or 2–7"
            case .misplacedPadding(let offset): "padding at offset \(offset) is followed by more symbols"
            case .invalidLength(let symbols): "\(symbols) symbols do not make whole bytes"
            }
        }

        package var description: String {
            switch self {
            case .invalidCharacter(let c, let offset):
                "character \(c.debugDescription) at offset \(offset) is not Base32 (A–Z, 2–7)"
            case .misplacedPadding(let offset): "padding '=' at offset \(offset) is followed by more data"
            case .invalidLength(let symbols):
                "\(symbols) Base32 symbols do not make whole bytes (the last group has \(symbols % 8))"
            }
        }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
    private static let skip: UInt8 = 0xFE
    private static let bad: UInt8 = 0xFF
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, char) in alphabet.enumerated() {
            table[Int(char)] = UInt8(value)
            table[Int(char | 0x20)] = UInt8(value)  // lowercase letters; digits are unaffected
        }
        for sep in [" ", "-", "\t", "\n", "\r"] { table[Int(UInt8(ascii: Unicode.Scalar(sep)!))] = 0xFE }
        return table
    }()

    /// Encodes `bytes` as uppercase Base32 without padding.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out = [UInt8]()
        var buffer: UInt64 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt64(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[Int((buffer >> UInt64(bits)) & 31)])
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt64(5 - bits)) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes Base32 text leniently (see the type's documentation).
    package static func decode(_ text: String) throws(DecodingError) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count * 5 / 8)
        var buffer: UInt64 = 0
        var bits = 0
        var symbols = 0
        var paddingAt: Int? = nil
        for (offset, byte) in text.utf8.enumerated() {
            if byte == UInt8(ascii: "=") {
                if paddingAt == nil { paddingAt = offset }
                continue
            }
            let value = decodeTable[Int(byte)]
            if value == skip { continue }
            if value == bad {
                let index = text.utf8.index(text.utf8.startIndex, offsetBy: offset)
                throw .invalidCharacter(text[index...].first ?? "?", offset: offset)
            }
            if let paddingAt { throw .misplacedPadding(offset: paddingAt) }
            buffer = buffer << 5 | UInt64(value)
            bits += 5
            symbols += 1
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt64(bits)))
            }
        }
        if [1, 3, 6].contains(symbols % 8) { throw .invalidLength(symbols: symbols) }
        return out
    }
}
