import KeyportEncoding

/// Where a credential is used: a scheme, a host and a port, read from a service identifier as
/// Apple's `ASCredentialServiceIdentifier` carries one — a URL (`https://login.example.com:8443/signin`)
/// or a domain (`example.com`, `localhost:3000`), which means `https` on its default port. Path,
/// query, fragment and user information are not part of it.
///
/// A URL is read as the WHATWG URL standard reads it, so Keyport sees the host a browser would
/// connect to: tab and newline characters removed, `\` read as `/` in the schemes browsers
/// treat as special (`https://evil.com\@github.com/` is `evil.com`), the last `@` of the
/// authority ending the user information, a default port left out (`https://example.com:443`
/// is `https://example.com`), the host as ``ServiceHost`` reads it. A scheme the standard does
/// not treat as special (`smtp://mail.example.com:587`) is read the same way, its host compared
/// as a DNS name rather than as the standard's case-sensitive opaque host.
package struct ServiceOrigin: Hashable, Sendable, CustomStringConvertible {
    /// The scheme, lowercase, without its colon.
    package var scheme: String
    package var host: ServiceHost
    /// The port: the one written, else the scheme's default; `nil` for a scheme with none.
    package var port: Int?

    package init(scheme: String, host: ServiceHost, port: Int?) {
        self.scheme = scheme
        self.host = host
        self.port = port ?? Self.defaultPort(of: scheme)
    }

    /// Reads an identifier; `nil` when it names no host.
    package init?(_ identifier: some StringProtocol) {
        guard case .success(let origin) = Self.parse(identifier) else { return nil }
        self = origin
    }

    /// Reads an identifier, or says what is wrong with it and where.
    package static func parse(_ identifier: some StringProtocol) -> Result<ServiceOrigin, ServiceIdentifierError> {
        let text = clean(identifier)
        func failure(_ reason: String) -> Result<ServiceOrigin, ServiceIdentifierError> {
            .failure(ServiceIdentifierError(identifier: String(identifier), reason: reason))
        }
        guard !text.isEmpty else { return failure("it is empty") }
        if let (scheme, rest) = splitScheme(text) {
            if specialSchemes[scheme] != nil {
                // Browsers read any run of `/` and `\` after a special scheme's colon as `//`.
                let start =
                    rest.utf8.firstIndex { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "\\") } ?? rest.endIndex
                return authority(of: rest[start...], scheme: scheme, special: true)
                    .mapError { ServiceIdentifierError(identifier: String(identifier), reason: $0.reason) }
            }
            if scheme == "file" { return failure("a file: URL names no service") }
            if rest.hasPrefix("//") {
                return authority(of: rest.dropFirst(2), scheme: scheme, special: false)
                    .mapError { ServiceIdentifierError(identifier: String(identifier), reason: $0.reason) }
            }
        }
        // A domain, perhaps with a port: `example.com`, `localhost:3000`, `[::1]:8080`, and a bare
        // IPv6 address, which has colons of its own. It means https.
        if let host = ServiceHost(text) { return .success(ServiceOrigin(scheme: "https", host: host, port: nil)) }
        guard !text.contains("@") else {
            return failure("a domain names no user; write the URL (https://…) if that is what it is")
        }
        return authority(of: text[...], scheme: "https", special: true)
            .mapError { ServiceIdentifierError(identifier: String(identifier), reason: $0.reason) }
    }

    /// The schemes the URL standard treats as special (`file` aside), with their default ports.
    private static let specialSchemes: [String: Int] = ["http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21]

    /// The port a scheme uses when none is written; `nil` for a scheme without one here.
    package static func defaultPort(of scheme: String) -> Int? { specialSchemes[scheme] }

    /// Whether the scheme keeps what it carries from the network's eavesdroppers (`https`, `wss`).
    package var isSecure: Bool { scheme == "https" || scheme == "wss" }

    /// Whether the scheme is one of the web's that carry pages in clear text (`http`, `ws`, `ftp`):
    /// anyone on the network between can rewrite what is shown there, and read what goes back.
    package var isCleartextWeb: Bool { Self.specialSchemes[scheme] != nil && !isSecure }

    /// Leading and trailing spaces and controls trimmed (a pasted no-break space too); tabs and
    /// line breaks inside removed, as the URL standard does.
    private static func clean(_ identifier: some StringProtocol) -> Substring {
        var text = String(identifier)
        if text.utf8.contains(where: { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
            text = String(text.unicodeScalars.filter { $0 != "\t" && $0 != "\n" && $0 != "\r" })
        }
        let bytes = text.utf8
        let blank: (UInt8) -> Bool = { $0 <= 0x20 }
        guard let first = bytes.firstIndex(where: { !blank($0) }), let last = bytes.lastIndex(where: { !blank($0) })
        else { return "" }
        var trimmed = text[first...last]
        if let head = trimmed.utf8.first, let tail = trimmed.utf8.last, head >= 0x80 || tail >= 0x80 {
            trimmed = Substring(String(trimmed).trimmingWhitespace())
        }
        return trimmed
    }

    /// `scheme` (lowercase) and what follows its colon, when the text starts with one: a letter,
    /// then letters, digits, `+`, `-` or `.`, then `:`.
    private static func splitScheme(_ text: Substring) -> (String, Substring)? {
        // Bytes, not Characters: an import reads 100 000 of these, and every delimiter is ASCII
        // (a UTF-8 index of one is an index of the text).
        guard let colon = text.utf8.firstIndex(of: UInt8(ascii: ":")), colon > text.startIndex else { return nil }
        let scheme = text[..<colon].utf8
        guard let first = scheme.first, isLetter(first),
            scheme.allSatisfy({
                isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "+")
                    || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
            })
        else { return nil }
        let lowered = String(decoding: scheme.map { $0 | 0x20 }, as: UTF8.self)
        return (lowered, text[text.index(after: colon)...])
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    /// The host and port of the authority at the start of `rest`, which ends at the first `/`,
    /// `?` or `#` (and `\` in a special scheme); user information before its last `@` is skipped.
    private static func authority(
        of rest: Substring,
        scheme: String,
        special: Bool
    ) -> Result<ServiceOrigin, HostError> {
        let end =
            rest.utf8.firstIndex {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
                    || (special && $0 == UInt8(ascii: "\\"))
            } ?? rest.endIndex
        var authority = rest[..<end]
        if let at = authority.utf8.lastIndex(of: UInt8(ascii: "@")) {
            authority = authority[authority.utf8.index(after: at)...]
        }
        var hostText = authority
        var portText: Substring?
        if authority.hasPrefix("[") {
            if let close = authority.utf8.firstIndex(of: UInt8(ascii: "]")) {
                hostText = authority[...close]
                let after = authority[authority.utf8.index(after: close)...]
                if !after.isEmpty {
                    guard after.hasPrefix(":") else {
                        return .failure(.init("something follows the IPv6 address's ']'"))
                    }
                    portText = after.dropFirst()
                }
            }
        } else if let colon = authority.utf8.firstIndex(of: UInt8(ascii: ":")) {
            hostText = authority[..<colon]
            portText = authority[authority.utf8.index(after: colon)...]
        }
        guard !hostText.isEmpty else { return .failure(.init("it names no host")) }
        let host: ServiceHost
        switch ServiceHost.parse(hostText) {
        case .success(let parsed): host = parsed
        case .failure(let error): return .failure(.init("the host '\(hostText)' cannot be read: \(error.reason)"))
        }
        var port: Int?
        if let portText, !portText.isEmpty {
            guard portText.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                return .failure(.init("its port '\(portText)' is not a number"))
            }
            // Leading zeros are allowed (`:0443` is 443); the value must fit 16 bits.
            let digits = portText.drop { $0 == "0" }
            guard digits.utf8.count <= 5, let value = Int(digits.isEmpty ? "0" : digits), value <= 65535 else {
                return .failure(.init("its port \(portText) is above 65535"))
            }
            port = value
        }
        return .success(ServiceOrigin(scheme: scheme, host: host, port: port))
    }

    /// `https://example.com`, `http://[::1]:8080`: the port only when it is not the scheme's default.
    package var description: String {
        let shownPort = port.flatMap { $0 == Self.defaultPort(of: scheme) ? nil : $0 }
        return "\(scheme)://\(host)" + (shownPort.map { ":\($0)" } ?? "")
    }

    /// What identities are filed under, so that a request finds its wider fits at once: the
    /// registrable domain, or the host itself when it has none (an IP address, `localhost`).
    package func site(in list: PublicSuffixList) -> String {
        list.registrableDomain(of: host) ?? host.description
    }

    /// How an identity saved for `self` fits a request for `requested` — AutoFill's rule
    /// (docs/protocol.md, "Matching"):
    /// - ``ServiceFit/exact``: the same scheme, host and port; the only fit answered without the
    ///   person.
    /// - ``ServiceFit/sameHost``: the same host on another port or scheme;
    ///   ``ServiceFit/sameSite``: another host of the same registrable domain (`login.example.com`
    ///   for `example.com`, never `bob.github.io` for `alice.github.io`; hosts without one — IP
    ///   addresses, `localhost` — have no such fit). Either is only offered to the person.
    /// - ``ServiceFit/none``: anything else, and any fit that would send the credential from a
    ///   secure scheme to one that is not (`https` to `http`, `ftp`): that is never offered.
    package func fit(for requested: ServiceOrigin, in list: PublicSuffixList) -> ServiceFit {
        if self == requested { return .exact }
        guard requested.scheme == scheme || requested.isSecure else { return .none }
        if host == requested.host { return .sameHost }
        guard let mine = list.registrableDomain(of: host), mine == list.registrableDomain(of: requested.host) else {
            return .none
        }
        return .sameSite
    }

    /// ``fit(for:in:)`` for an identity known to be filed under `requested`'s site
    /// (``site(in:)``): the two share a registrable domain, or are one host without one, so no
    /// suffix list is needed.
    package func fit(withinSiteOf requested: ServiceOrigin) -> ServiceFit {
        if self == requested { return .exact }
        guard requested.scheme == scheme || requested.isSecure else { return .none }
        return host == requested.host ? .sameHost : .sameSite
    }
}

/// How closely an identity's service fits a request's, best last (``ServiceOrigin/fit(for:in:)``).
package enum ServiceFit: Int, Comparable, Sendable {
    case none = 0
    /// Another host of the same registrable domain: offered, never given.
    case sameSite = 1
    /// The same host, another port or scheme: offered, never given.
    case sameHost = 2
    /// The same scheme, host and port: given.
    case exact = 3

    package static func < (left: ServiceFit, right: ServiceFit) -> Bool { left.rawValue < right.rawValue }
}

/// A service identifier that names no service Keyport can read, and why.
package struct ServiceIdentifierError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The identifier as it was given.
    package var identifier: String
    package var reason: String

    package var description: String {
        "'\(DisplayText.escaping(identifier))' is not a site Keyport can read: \(reason)"
    }
}
