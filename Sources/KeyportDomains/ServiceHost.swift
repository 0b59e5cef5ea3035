import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A host as a credential's service identifier names it, in the one form it is compared in.
///
/// - A domain name is lowercased, normalised to NFC, split at any of the dots IDNA accepts
///   (`.`, `。`, `．`, `｡`), and each label that is not ASCII written in Punycode (`xn--…`), so
///   `Bücher.Example.` and `xn--bcher-kva.example` are one host. A trailing dot is dropped.
/// - An IP address is written as `inet_ntop` writes it (`::1`, never `0:0:0:0:0:0:0:1`).
///
/// This is IDNA's mapping for the names people meet (RFC 5891's A-labels, with UTS #46's
/// lowercasing and full-width dots), not all of UTS #46: a name that needs the rest (its
/// disallowed characters, its transitional mappings) is compared as written.
package enum ServiceHost: Hashable, Sendable, CustomStringConvertible {
    /// A domain name in ASCII: lowercase, labels in Punycode where needed, no trailing dot.
    case domain(String)
    /// An IPv4 address, dotted.
    case ipv4(String)
    /// An IPv6 address, as `inet_ntop` writes it, without brackets.
    case ipv6(String)

    /// Reads a host: a domain name, an IPv4 address, or an IPv6 address (with or without its
    /// brackets). `nil` for what is none of them (empty labels, a label over 63 bytes, a name over
    /// 253, characters no host name has).
    package init?(_ text: String) {
        var text = text
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if let address = Self.address(text, family: AF_INET6) {
            self = .ipv6(address)
            return
        }
        if let address = Self.address(text, family: AF_INET) {
            self = .ipv4(address)
            return
        }
        guard let name = Self.domainName(text) else { return nil }
        self = .domain(name)
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

    /// `text` as a domain name in ASCII, or `nil`.
    private static func domainName(_ text: String) -> String? {
        var labels: [String]
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            labels = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
        } else {
            let dots: Set<Character> = [".", "\u{3002}", "\u{FF0E}", "\u{FF61}"]
            labels = text.split(omittingEmptySubsequences: false, whereSeparator: dots.contains).map(String.init)
        }
        if labels.count > 1, labels.last?.isEmpty == true { labels.removeLast() }  // the root's dot
        var ascii: [String] = []
        for label in labels {
            guard let encoded = Self.label(label) else { return nil }
            ascii.append(encoded)
        }
        let name = ascii.joined(separator: ".")
        guard let last = ascii.last, name.utf8.count <= 253 else { return nil }
        // A name that ends in a number is an IPv4 address or nothing (the WHATWG URL standard's
        // rule): `192.168.001.1` is not a domain name.
        guard !last.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return name
    }

    /// One label in ASCII: lowercase, NFC, Punycode when it is not ASCII; letters, digits, `-` and
    /// `_` (service names such as `_dmarc`).
    private static func label(_ label: String) -> String? {
        // Nearly every name is ASCII already: lowercased byte by byte, it needs neither Unicode
        // case folding nor normalisation (which dominate a vault's import when done for all).
        if label.utf8.allSatisfy({ $0 < 0x80 }) {
            let lowered = String(
                decoding: label.utf8.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 },
                as: UTF8.self
            )
            return isLabel(lowered) ? lowered : nil
        }
        let folded = label.lowercased().precomposedStringWithCanonicalMapping
        guard !folded.isEmpty else { return nil }
        let ascii: String
        if folded.unicodeScalars.allSatisfy(\.isASCII) {
            ascii = folded
        } else {
            guard let encoded = Punycode.encode(folded) else { return nil }
            ascii = "xn--" + encoded
        }
        return isLabel(ascii) ? ascii : nil
    }

    /// Letters, digits, `-` and `_`, 1 to 63 of them.
    private static func isLabel(_ ascii: String) -> Bool {
        let allowed = ascii.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
        return allowed && !ascii.isEmpty && ascii.utf8.count <= 63
    }

    /// `text` as `inet_pton` reads an address of `family`, written back by `inet_ntop`.
    private static func address(_ text: String, family: Int32) -> String? {
        var storage = in6_addr()
        guard inet_pton(family, text, &storage) == 1 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(family, &storage, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
