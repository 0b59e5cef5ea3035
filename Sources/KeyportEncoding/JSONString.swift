/// A string as JSON text: the one escaper Keyport writes JSON strings with (the CXF codec,
/// Varlink messages).
///
/// RFC 8259's escapes and nothing more, as RFC 8785 (canonical JSON) writes them: `"` and `\`
/// escaped, the control characters below U+0020 written `\b \f \n \r \t` or `\u00xx`; `/` and
/// everything from U+0020 up, non-ASCII included, as they are. A string with nothing to escape —
/// nearly all — is copied in one go.
///
/// `public` and `@inlinable`, though KeyportEncoding is not a product, so that its users' modules
/// inline it: Swift 6.3 does not inline an `@inlinable package` declaration across modules (see
/// ``JSONReader``).
public enum JSONString {
    /// Appends `value`, quoted and escaped, to `out`. Inlinable: the CXF encoder calls it for
    /// every string of a document, across the module boundary.
    @inlinable
    public static func append(_ value: String, to out: inout [UInt8]) {
        var value = value
        value.withUTF8 { utf8 in
            out.append(UInt8(ascii: "\""))
            if utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                for byte in utf8 { escape(byte, to: &out) }
            } else {
                out.append(contentsOf: utf8)
            }
            out.append(UInt8(ascii: "\""))
        }
    }

    /// `value`, quoted and escaped.
    package static func quoted(_ value: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count + 2)
        append(value, to: &out)
        return out
    }

    @usableFromInline
    static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    @inlinable @inline(__always)
    static func escape(_ byte: UInt8, to out: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"):
            out.append(UInt8(ascii: "\\"))
            out.append(byte)
        case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
        case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
        case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
        case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
        case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
        case ..<0x20:
            out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")]
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 15)])
        default: out.append(byte)
        }
    }
}
