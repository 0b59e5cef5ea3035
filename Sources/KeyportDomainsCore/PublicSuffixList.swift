/// The Public Suffix List (publicsuffix.org): which names are suffixes under which anybody can
/// register a name of their own (`com`, `co.uk`, and private ones such as `github.io`), and so
/// which part of a host is its registrable domain — the unit a credential belongs to.
///
/// The rules are the list's own (publicsuffix.org/list, "Formal algorithm"): the matching rule
/// with the most labels prevails, an exception rule (`!www.ck`) before any other; with none, the
/// rule is `*`. Both sections, ICANN and private, are used, as browsers do for cookies: a page on
/// `alice.github.io` is not `bob.github.io`'s. Rules are compared in ASCII (Punycode), as
/// ``ServiceHost`` writes names.
package struct PublicSuffixList: Sendable {
    // Substrings, so that a host's suffixes are looked up as slices of its name, allocating nothing.
    /// Rules such as `co.uk`.
    private var rules: Set<Substring> = []
    /// `*.ck` kept as `ck`: any one label below it is a suffix.
    private var wildcards: Set<Substring> = []
    /// `!www.ck` kept as `www.ck`: not a suffix, though a wildcard covers it.
    private var exceptions: Set<Substring> = []

    /// How many rules were read.
    package var count: Int { rules.count + wildcards.count + exceptions.count }

    /// Reads the list's text: one rule per line, the first word of it; `//` comments and blank
    /// lines skipped. A rule that is not a domain name once written in ASCII is skipped too.
    package init(text: String) {
        for line in text.split(whereSeparator: \.isNewline) {
            guard let word = line.split(whereSeparator: \.isWhitespace).first, !word.hasPrefix("//") else { continue }
            if word.hasPrefix("!") {
                if case .domain(let name)? = ServiceHost(String(word.dropFirst())) { exceptions.insert(name[...]) }
            } else if word.hasPrefix("*.") {
                if case .domain(let name)? = ServiceHost(String(word.dropFirst(2))) { wildcards.insert(name[...]) }
            } else if case .domain(let name)? = ServiceHost(String(word)) {
                rules.insert(name[...])
            }
        }
    }

    /// The date of the list's `// VERSION: 2026-10-22_08-36-41_UTC` line, as `2026-10-22`.
    package static func version(of text: String) -> String? {
        for line in text.split(whereSeparator: \.isNewline).prefix(40) where line.hasPrefix("// VERSION: ") {
            let date = line.dropFirst("// VERSION: ".count).prefix(10)
            if date.count == 10 { return String(date) }
        }
        return nil
    }

    /// The registrable domain of `host`: its public suffix and one label more
    /// (`example.co.uk` for `www.example.co.uk`). `nil` for a host that has none: an IP address,
    /// `localhost` and its subdomains, a public suffix itself (`co.uk`, `github.io`), a name of
    /// one label.
    package func registrableDomain(of host: ServiceHost) -> String? {
        guard case .domain(let name) = host, !host.isLocalhost else { return nil }
        let suffixes = Self.suffixes(of: name)
        let length = suffixLength(suffixes)
        guard suffixes.count > length, suffixes.count > 1 else { return nil }
        return String(suffixes[length])
    }

    /// The name's suffixes of one label, two labels, … up to the whole name (`uk`, `co.uk`,
    /// `example.co.uk`). Names here are ASCII (``ServiceHost`` writes them so).
    private static func suffixes(of name: String) -> [Substring] {
        var suffixes: [Substring] = []
        let bytes = name.utf8
        var index = bytes.endIndex
        while index > bytes.startIndex {
            let before = bytes.index(before: index)
            if bytes[before] == UInt8(ascii: ".") { suffixes.append(name[index...]) }
            index = before
        }
        suffixes.append(name[...])
        return suffixes
    }

    /// How many labels at the end of the name are the public suffix, given its `suffixes`.
    private func suffixLength(_ suffixes: [Substring]) -> Int {
        var prevailing = 1  // the implicit rule "*"
        for length in 1...suffixes.count {
            let candidate = suffixes[length - 1]
            if exceptions.contains(candidate) {
                // An exception prevails over every other rule; its suffix is one label shorter.
                return length - 1
            }
            if rules.contains(candidate) {
                prevailing = length
            } else if length > 1, wildcards.contains(suffixes[length - 2]) {
                prevailing = length
            }
        }
        return prevailing
    }
}
