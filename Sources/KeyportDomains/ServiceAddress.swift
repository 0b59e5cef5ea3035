import Foundation
import KeyportEncoding

/// Where a credential is used, read from a service identifier as Apple's
/// `ASCredentialServiceIdentifier` carries one: a URL (`https://login.example.com:8443/signin`) or a
/// domain (`example.com`, `localhost:3000`).
package struct ServiceAddress: Hashable, Sendable, CustomStringConvertible {
    package var host: ServiceHost
    /// The port the identifier names; `nil` when it names none (a scheme's default port is not
    /// filled in: `https://example.com` and `example.com` are one address).
    package var port: Int?

    package init(host: ServiceHost, port: Int? = nil) {
        self.host = host
        self.port = port
    }

    /// Reads an identifier; `nil` when it names no host.
    package init?(_ identifier: String) {
        // Spaces and tabs around it, trimmed without Foundation's CharacterSet (an import reads
        // 100 000 of these); Unicode spaces (a pasted no-break space) the slow way.
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        let bytes = identifier.utf8
        guard let first = bytes.firstIndex(where: { !blank($0) }), let last = bytes.lastIndex(where: { !blank($0) })
        else { return nil }
        var text = String(identifier[first...last])
        if let head = text.utf8.first, let tail = text.utf8.last, head >= 0x80 || tail >= 0x80 {
            text = text.trimmingWhitespace(newlines: false)
        }
        if text.contains("://") {
            guard let components = URLComponents(string: text), let host = components.percentEncodedHost,
                let parsed = ServiceHost(PercentEncoding.unescape(host) ?? host)
            else { return nil }
            self.init(host: parsed, port: components.port)
            return
        }
        // A domain, perhaps with a port: `example.com`, `localhost:3000`, `[::1]:8080`. A bare
        // IPv6 address has colons of its own and no port.
        if let parsed = ServiceHost(text) {
            self.init(host: parsed)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65535).contains(port), let parsed = ServiceHost(String(text[..<colon]))
        else { return nil }
        self.init(host: parsed, port: port)
    }

    package var description: String { port.map { "\(host):\($0)" } ?? host.description }

    /// What identities are filed under, so that a request finds its candidates at once: the
    /// registrable domain, or the host itself when it has none (an IP address, `localhost`).
    package func site(in list: PublicSuffixList) -> String {
        list.registrableDomain(of: host) ?? host.description
    }

    /// How well an identity saved for `self` serves a request for `requested`, as people expect
    /// of a password manager: the same host (and port, when the identity names one) is best; a
    /// host of the same registrable domain (`login.example.com` for `example.com`, but never
    /// `bob.github.io` for `alice.github.io`) is a match; hosts without a registrable domain (IP
    /// addresses, `localhost`) match only themselves.
    package func match(for requested: ServiceAddress, in list: PublicSuffixList) -> ServiceMatch {
        if let port, port != requested.port { return .none }
        if host == requested.host { return port == requested.port ? .exact : .sameHost }
        guard let mine = list.registrableDomain(of: host), mine == list.registrableDomain(of: requested.host) else {
            return .none
        }
        return .sameSite
    }
}

/// How closely an identity's service fits a request's, best last.
package enum ServiceMatch: Int, Comparable, Sendable {
    case none = 0
    /// Another host of the same registrable domain.
    case sameSite = 1
    /// The same host; the request names a port the identity leaves open.
    case sameHost = 2
    /// The same host and port.
    case exact = 3

    package static func < (left: ServiceMatch, right: ServiceMatch) -> Bool { left.rawValue < right.rawValue }
}
