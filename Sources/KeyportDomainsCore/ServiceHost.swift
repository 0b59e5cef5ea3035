import KeyportEncoding

/// A host as a credential's service identifier names it, in the one form it is compared in.
///
/// Read as the WHATWG URL standard's host parser reads an `https:` URL's host, so that Keyport
/// and the browser agree on which host a URL names (tested against Chromium's parser):
/// percent-decoded; a domain name mapped by IDNA (UTS #46, non-transitional: lowercased,
/// full-width letters and IDNA's dots `。．｡` folded, ignorable characters such as the soft
/// hyphen dropped, NFC, each label that is not ASCII written in Punycode, `xn--…`); an IPv4
/// address in any form browsers accept (`0x7f.1`, `2130706433`, `0300.0250.0.1`) written dotted;
/// an IPv6 address as the standard writes it (`::ffff:102:304`).
///
/// Stricter than the standard, because a credential belongs to a DNS name: a trailing dot is
/// dropped (`example.com.` is `example.com`); a name with an empty label, or a character no DNS
/// name has (the standard lets `a!b.com` through), is refused; and a character that IDNA maps
/// in a way the standard library cannot tell (compatibility forms such as `ﬀ` or `ⓐ`, `ẞ`) is
/// refused rather than guessed, so a host is never read as another than the browser's.
package enum ServiceHost: Hashable, Sendable, CustomStringConvertible {
    /// A domain name in ASCII: lowercase, labels in Punycode where needed, no trailing dot.
    case domain(String)
    /// An IPv4 address, dotted.
    case ipv4(String)
    /// An IPv6 address, as the URL standard writes it, without brackets.
    case ipv6(String)

    /// Reads a host: a domain name, an IPv4 address, or an IPv6 address (with or without its
    /// brackets); `nil` for what is none of them.
    package init?(_ text: some StringProtocol) {
        guard case .success(let host) = Self.parse(text) else { return nil }
        self = host
    }

    /// Reads a host (as ``init(_:)``), or says what is wrong with it.
    package static func parse(_ text: some StringProtocol) -> Result<ServiceHost, HostError> {
        if text.hasPrefix("[") {
            guard text.count >= 2, text.hasSuffix("]") else { return .failure(.init("its '[' is not closed")) }
            return IPAddress.ipv6(text.dropFirst().dropLast()).map(ServiceHost.ipv6)
        }
        // A bare IPv6 address: in a URL a colon ends the host, so only a person's text has one.
        if text.utf8.contains(UInt8(ascii: ":")) { return IPAddress.ipv6(text).map(ServiceHost.ipv6) }
        guard !text.isEmpty else { return .failure(.init("it is empty")) }
        let decoded: String
        switch percentDecoded(text) {
        case .success(let text): decoded = text
        case .failure(let error): return .failure(error)
        }
        let ascii: String
        switch toASCII(decoded) {
        case .success(let text): ascii = text
        case .failure(let error): return .failure(error)
        }
        if let forbidden = ascii.unicodeScalars.first(where: isForbidden) {
            return .failure(.init("it holds \(describe(forbidden)), which no host may hold"))
        }
        if IPAddress.endsInNumber(ascii) { return IPAddress.ipv4(ascii).map(ServiceHost.ipv4) }
        return domainName(ascii).map(ServiceHost.domain)
    }

    package var description: String {
        switch self {
        case .domain(let name), .ipv4(let name): name
        case .ipv6(let address): "[\(address)]"
        }
    }

    /// Whether the host is this machine by its name (`localhost`, `*.localhost`, RFC 6761): such a
    /// name has no registrable domain, whatever the suffix list says.
    package var isLocalhost: Bool {
        guard case .domain(let name) = self else { return false }
        return name == "localhost" || name.hasSuffix(".localhost")
    }

    /// `%XX` replaced by its byte, as the standard's percent-decode does (a `%` without two
    /// hexadecimal digits stays, and is refused later); the bytes must be UTF-8.
    private static func percentDecoded(_ text: some StringProtocol) -> Result<String, HostError> {
        let input = Array(text.utf8)
        guard input.contains(UInt8(ascii: "%")) else { return .success(String(text)) }
        var bytes: [UInt8] = []
        var index = 0
        while index < input.count {
            if input[index] == UInt8(ascii: "%"), index + 2 < input.count,
                let high = Hex.value(input[index + 1]), let low = Hex.value(input[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(input[index])
                index += 1
            }
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            return .failure(.init("its percent-encoded bytes are not UTF-8"))
        }
        return .success(decoded)
    }

    /// IDNA's ToASCII as the URL standard asks for it (UTS #46 non-transitional, no hyphen or
    /// length checks), on the characters whose mapping the standard library can tell; see the
    /// type's documentation for what is refused instead.
    private static func toASCII(_ text: String) -> Result<String, HostError> {
        // Nearly every name is ASCII already: lowercased byte by byte, it needs neither Unicode
        // case mapping nor normalisation (which would dominate a 100 000-item import if done for all).
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            return .success(
                String(
                    decoding: text.utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 },
                    as: UTF8.self
                )
            )
        }
        var mapped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0..<0x80:
                mapped.append(lowercaseASCII(scalar))
            case 0x3002, 0xFF0E, 0xFF61:  // IDNA's other full stops
                mapped.append(".")
            case 0xFF01...0xFF5E:  // full-width forms of ASCII
                mapped.append(lowercaseASCII(Unicode.Scalar(scalar.value - 0xFEE0)!))
            case 0xAD, 0x34F, 0x180B...0x180D, 0x180F, 0x200B, 0x2060, 0x2064, 0xFE00...0xFE0F, 0xFEFF:
                continue  // UTS #46 "ignored": dropped
            case 0xDF, 0x3C2:  // ß and ς: kept, as non-transitional processing does
                mapped.append(scalar)
            default:
                switch scalar.properties.generalCategory {
                case .control, .format, .privateUse, .unassigned, .surrogate, .spaceSeparator, .lineSeparator,
                    .paragraphSeparator:
                    return .failure(.init("it holds \(describe(scalar)), which no host name may hold"))
                default: break
                }
                // A character already in IDNA's form, or whose lowercase is: kept (lowercased).
                // Anything else is a compatibility mapping only Unicode's tables know.
                let lowercase = scalar.properties.lowercaseMapping.unicodeScalars
                guard lowercase.allSatisfy({ !$0.properties.changesWhenNFKCCaseFolded }) else {
                    return .failure(
                        .init(
                            "it holds \(describe(scalar)), which IDNA maps in a way Keyport does not read; write the name as the browser shows it (Punycode, xn--…)"
                        )
                    )
                }
                mapped.append(contentsOf: lowercase)
            }
        }
        let normalized = String(decoding: String(mapped)._nfcCodeUnits, as: UTF8.self)
        var labels: [String] = []
        for label in normalized.split(separator: ".", omittingEmptySubsequences: false) {
            if label.utf8.allSatisfy({ $0 < 0x80 }) {
                labels.append(String(label))
            } else if let encoded = Punycode.encode(String(label)) {
                labels.append("xn--" + encoded)
            } else {
                return .failure(.init("a label of it cannot be written in Punycode"))
            }
        }
        return .success(labels.joined(separator: "."))
    }

    private static func lowercaseASCII(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        ("A"..."Z").contains(scalar) ? Unicode.Scalar(scalar.value | 0x20)! : scalar
    }

    /// The standard's forbidden domain code points: C0 controls, space, `#%/:<>?@[\]^|` and DEL.
    private static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "\u{0}"..."\u{20}", "#", "%", "/", ":", "<", ">", "?", "@", "[", "\\", "]", "^", "|", "\u{7F}": true
        default: false
        }
    }

    /// A domain name of DNS: labels of letters, digits, `-` and `_` (service names such as
    /// `_dmarc`), 1 to 63 of them, 253 in all; one trailing dot (the root's) dropped.
    private static func domainName(_ ascii: String) -> Result<String, HostError> {
        var name = Substring(ascii)
        if name.utf8.count > 1, name.utf8.last == UInt8(ascii: ".") { name = name.dropLast() }
        guard name.utf8.count <= 253 else { return .failure(.init("it is longer than 253 characters")) }
        for label in name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            guard !label.isEmpty else { return .failure(.init("it has an empty label")) }
            guard label.count <= 63 else { return .failure(.init("a label of it is longer than 63 characters")) }
            if let other = label.first(where: { !isLabelByte($0) }) {
                return .failure(
                    .init("it holds \(describe(Unicode.Scalar(other))), which no DNS name holds")
                )
            }
        }
        return .success(String(name))
    }

    private static func isLabelByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    /// `'!'`, or `U+200D` for what does not print.
    private static func describe(_ scalar: Unicode.Scalar) -> String {
        let printable =
            scalar.value > 0x20 && scalar.value != 0x7F
            && !scalar.properties.isDefaultIgnorableCodePoint && scalar.properties.generalCategory != .format
            && scalar.properties.generalCategory != .control && scalar.properties.generalCategory != .spaceSeparator
        let code = String(scalar.value, radix: 16, uppercase: true)
        let padded = String(repeating: "0", count: max(0, 4 - code.count)) + code
        return printable ? "'\(scalar)' (U+\(padded))" : "U+\(padded)"
    }
}
