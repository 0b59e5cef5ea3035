import Foundation
import KeyportDomains
import KeyportTestSupport
import Testing

@Suite("Punycode")
struct PunycodeTests {
    @Test(
        "RFC 3492's samples and well-known labels encode and decode",
        arguments: [
            ("他们为什么不说中文", "ihqwcrb4cv8a8dqg056pqjye"),
            ("3年B組金八先生", "3B-ww4c5e180e575a65lsy2b"),
            ("bücher", "bcher-kva"),
            ("münchen", "mnchen-3ya"),
            ("食狮", "85x722f"),
            ("中国", "fiqs8s"),
            ("example", "example-"),
        ]
    )
    func samples(label: String, encoded: String) {
        #expect(Punycode.encode(label) == encoded)
        #expect(Punycode.decode(encoded) == label)
    }

    @Test("what is not Punycode does not decode")
    func invalid() {
        #expect(Punycode.decode("ü-abc") == nil)  // a basic part that is not ASCII
        #expect(Punycode.decode("abc-!") == nil)  // not a base-36 digit
        #expect(Punycode.decode("99999999999999999999") == nil)  // overflow
    }
}

@Suite("Hosts")
struct HostTests {
    @Test(
        "names are compared in one form: lowercase ASCII, Punycode, no trailing dot, IDNA's dots",
        arguments: [
            ("Example.COM", "example.com"),
            ("example.com.", "example.com"),
            ("Bücher.Example", "xn--bcher-kva.example"),
            ("BÜCHER.example", "xn--bcher-kva.example"),
            ("例え．テスト", "xn--r8jz45g.xn--zckzah"),
            ("u\u{0308}ber.example", "xn--ber-goa.example"),  // decomposed ü, composed first
            ("_dmarc.example.com", "_dmarc.example.com"),
        ]
    )
    func names(text: String, name: String) {
        #expect(ServiceHost(text) == .domain(name))
    }

    @Test("IP addresses are written one way; brackets are optional around IPv6")
    func addresses() {
        #expect(ServiceHost("192.168.001.1") == nil)  // not an address inet_pton reads, and no domain name
        #expect(ServiceHost("192.168.1.1") == .ipv4("192.168.1.1"))
        #expect(ServiceHost("[0:0:0:0:0:0:0:1]") == .ipv6("::1"))
        #expect(ServiceHost("2001:DB8::0:1") == .ipv6("2001:db8::1"))
        #expect(ServiceHost("[::1]")?.description == "[::1]")
    }

    @Test(
        "what is no host is refused",
        arguments: ["", ".", "a..b", "exa mple.com", "a/b", String(repeating: "a", count: 64) + ".com"]
    )
    func refused(text: String) {
        #expect(ServiceHost(text) == nil)
    }

    @Test("localhost and its subdomains are this machine")
    func localhost() {
        #expect(ServiceHost("localhost")?.isLocalhost == true)
        #expect(ServiceHost("app.LOCALHOST")?.isLocalhost == true)
        #expect(ServiceHost("localhost.example.com")?.isLocalhost == false)
        #expect(ServiceHost("127.0.0.1")?.isLocalhost == false)
    }
}

@Suite("Registrable domains")
struct RegistrableDomainTests {
    static let list = PublicSuffixList(
        text: (try? String(contentsOfFile: PublicSuffixList.systemPath, encoding: .utf8)) ?? ""
    )

    /// The list's own test cases (publicsuffix.org, checkPublicSuffix), as far as this snapshot has
    /// their rules, and the traps people meet.
    @Test(
        "the list's rules: plain, wildcard, exception, private, IDN",
        arguments: [
            ("COM", nil), ("example.COM", "example.com"), ("WwW.example.COM", "example.com"),
            ("example.local", "example.local"), ("b.example.local", "example.local"),
            ("biz", nil), ("domain.biz", "domain.biz"), ("a.b.domain.biz", "domain.biz"),
            ("uk.com", nil), ("example.uk.com", "example.uk.com"), ("b.example.uk.com", "example.uk.com"),
            ("jp", nil), ("test.jp", "test.jp"), ("www.test.jp", "test.jp"), ("ac.jp", nil),
            ("test.ac.jp", "test.ac.jp"), ("kyoto.jp", nil), ("test.kyoto.jp", "test.kyoto.jp"),
            ("ide.kyoto.jp", nil), ("b.ide.kyoto.jp", "b.ide.kyoto.jp"), ("a.b.ide.kyoto.jp", "b.ide.kyoto.jp"),
            ("c.kobe.jp", nil), ("b.c.kobe.jp", "b.c.kobe.jp"), ("a.b.c.kobe.jp", "b.c.kobe.jp"),
            ("city.kobe.jp", "city.kobe.jp"), ("www.city.kobe.jp", "city.kobe.jp"),
            ("ck", nil), ("test.ck", nil), ("b.test.ck", "b.test.ck"), ("a.b.test.ck", "b.test.ck"),
            ("www.ck", "www.ck"), ("www.www.ck", "www.ck"),
            ("us", nil), ("test.us", "test.us"), ("ak.us", nil), ("test.ak.us", "test.ak.us"),
            ("k12.ak.us", nil), ("test.k12.ak.us", "test.k12.ak.us"),
            ("食狮.com.cn", "xn--85x722f.com.cn"), ("www.食狮.公司.cn", "xn--85x722f.xn--55qx5d.cn"),
            ("xn--85x722f.com.cn", "xn--85x722f.com.cn"), ("公司.cn", nil), ("中国", nil),
            ("github.io", nil), ("alice.github.io", "alice.github.io"), ("www.alice.github.io", "alice.github.io"),
            ("example.co.uk", "example.co.uk"), ("login.example.co.uk", "example.co.uk"), ("co.uk", nil),
            ("localhost", nil), ("app.localhost", nil), ("router", nil),
            ("127.0.0.1", nil), ("[::1]", nil),
        ] as [(String, String?)]
    )
    func rules(host: String, registrable: String?) throws {
        let parsed = try #require(ServiceHost(host))
        #expect(Self.list.registrableDomain(of: parsed) == registrable)
    }

    @Test("the newer of the system's list and the package's snapshot is used, by VERSION line or file date")
    func newerList() throws {
        #expect(Self.list.count > 8000)
        let bundledText = "// VERSION: 2026-10-22_08-36-41_UTC\ncom\n"
        let systemText = "com\nexample.com\n"  // Debian's copy: no VERSION line
        let old = try #require(ISO8601DateFormatter().date(from: "2023-02-09T00:00:00Z"))
        let new = try #require(ISO8601DateFormatter().date(from: "2026-11-01T00:00:00Z"))
        let host = try #require(ServiceHost("a.b.example.com"))
        func chosen(_ system: String?, _ modified: Date?) -> String? {
            PublicSuffixList.newer(system: system, modified: modified, bundled: bundledText).registrableDomain(of: host)
        }
        #expect(chosen(systemText, old) == "example.com", "an older system list loses")
        #expect(chosen(systemText, new) == "b.example.com", "a newer one wins")
        #expect(chosen("// VERSION: 2026-10-22_00-00-00_UTC\n" + systemText, old) == "b.example.com", "VERSION first")
        #expect(chosen(nil, nil) == "example.com")
        #expect(chosen("// nothing\n", new) == "example.com", "a list without rules is no list")
        #expect(PublicSuffixList.version(of: bundledText) == "2026-10-22")

        // Here: Debian 12's list (2023) is older than the snapshot, which is what `current` is.
        #expect(PublicSuffixList.bundled.count > Self.list.count)
        #expect(PublicSuffixList.current.count == PublicSuffixList.bundled.count)
        #expect(
            PublicSuffixList.bundled.registrableDomain(of: ServiceHost("a.b.alice.github.io")!) == "alice.github.io"
        )
    }
}

@Suite("Domains against other implementations")
struct DomainCrossCheckTests {
    /// Python's `punycode` codec and the `publicsuffixlist` package from PyPI, over the same list.
    static let peer = """
        import sys
        from publicsuffixlist import PublicSuffixList
        psl = PublicSuffixList(open(sys.argv[1], "rb"))
        for line in sys.stdin:
            kind, value = line.rstrip("\\n").split(" ", 1)
            if kind == "label":
                print(value.encode("punycode").decode("ascii"))
            else:
                print(psl.privatesuffix(value) or "-")
        """

    @Test(
        "every rule of the list, and labels of every script, read as PyPI's publicsuffixlist and Python's codec read them",
        arguments: [PublicSuffixList.systemPath, Peers.file("Sources/KeyportDomains/Resources/public_suffix_list.dat")]
    )
    func againstPython(path: String) async throws {
        let python = try await Peers.python(importing: ["publicsuffixlist"])
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let list = PublicSuffixList(text: text)
        // Hosts at and below each rule: the suffix itself, one label more, two more.
        var hosts: [ServiceHost] = []
        for line in text.split(whereSeparator: \.isNewline) {
            guard let word = line.split(whereSeparator: \.isWhitespace).first, !word.hasPrefix("//") else { continue }
            let rule = word.hasPrefix("!") ? String(word.dropFirst()) : word.replacingOccurrences(of: "*", with: "w")
            for prefix in ["", "b.", "a.b."] {
                if let host = ServiceHost(prefix + rule) { hosts.append(host) }
            }
        }
        // Labels from several scripts, generated so the test does not depend on a chosen few.
        var generator = SystemRandomNumberGenerator()
        let ranges: [ClosedRange<UInt32>] = [
            0x61...0x7A, 0xE0...0x17F, 0x3B1...0x3C9, 0x430...0x44F, 0x5D0...0x5EA, 0x4E00...0x9FA5,
        ]
        let labels = (0..<2000).map { _ in
            String(
                String.UnicodeScalarView(
                    (0..<Int.random(in: 1...12, using: &generator)).map { _ in
                        Unicode.Scalar(UInt32.random(in: ranges.randomElement(using: &generator)!, using: &generator))!
                    }
                )
            )
        }
        let input = hosts.map { "host \($0)" } + labels.map { "label \($0)" }
        let ran = try await Program.run(
            python,
            ["-c", Self.peer, path],
            input: Data((input.joined(separator: "\n") + "\n").utf8),
            timeout: .seconds(120)
        )
        #expect(ran.status == 0, "\(ran.standardError)")
        let answers = ran.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        try #require(answers.count >= input.count)
        var mismatches: [String] = []
        for (index, host) in hosts.enumerated() where (list.registrableDomain(of: host) ?? "-") != answers[index] {
            mismatches.append("\(host): ours \(list.registrableDomain(of: host) ?? "-"), theirs \(answers[index])")
        }
        for (offset, label) in labels.enumerated() where Punycode.encode(label) != answers[hosts.count + offset] {
            mismatches.append(
                "\(label): ours \(Punycode.encode(label) ?? "nil"), theirs \(answers[hosts.count + offset])"
            )
        }
        for label in labels where Punycode.encode(label).flatMap(Punycode.decode) != label {
            mismatches.append("\(label) does not come back from Punycode")
        }
        #expect(hosts.count > 20_000)
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches, first: \(mismatches.prefix(10))")
    }
}

@Suite("Matching a service")
struct ServiceMatchTests {
    static let list = PublicSuffixList.current

    func match(_ identity: String, _ request: String) throws -> ServiceMatch {
        let saved = try #require(ServiceAddress(identity), "\(identity)")
        let asked = try #require(ServiceAddress(request), "\(request)")
        return saved.match(for: asked, in: Self.list)
    }

    @Test(
        "as people expect: subdomains, private suffixes, exceptions, IDN, ports, IP hosts, localhost",
        arguments: [
            ("example.com", "https://example.com/login", ServiceMatch.exact),
            ("example.com", "https://login.example.com/", .sameSite),
            ("https://login.example.com/path", "example.com", .sameSite),
            ("example.com", "https://example.org/", .none),
            ("example.com", "https://example.com.evil.net/", .none),
            ("alice.github.io", "https://alice.github.io/app", .exact),
            ("alice.github.io", "https://bob.github.io/", .none),
            ("example.co.uk", "https://www.example.co.uk/", .sameSite),
            ("example.co.uk", "https://other.co.uk/", .none),
            ("www.ck", "https://www.www.ck/", .sameSite),
            ("bücher.example", "https://xn--bcher-kva.example/", .exact),
            ("https://BÜCHER.example", "https://www.bücher.example/", .sameSite),
            ("example.com:8443", "https://example.com:8443/", .exact),
            ("example.com:8443", "https://example.com/", .none),
            ("example.com", "https://example.com:8443/", .sameHost),
            ("192.168.1.10", "http://192.168.1.10:8080/", .sameHost),
            ("192.168.1.10", "http://192.168.1.11/", .none),
            ("[::1]:8080", "http://[::1]:8080/", .exact),
            ("localhost:3000", "http://localhost:3000/", .exact),
            ("localhost:3000", "http://localhost:4000/", .none),
            ("app.localhost", "http://other.localhost/", .none),
            ("router", "http://router/", .exact),
        ]
    )
    func matches(identity: String, request: String, expected: ServiceMatch) throws {
        #expect(try match(identity, request) == expected)
    }

    @Test("identities are filed by registrable domain, or by host when there is none")
    func sites() throws {
        #expect(ServiceAddress("https://a.b.example.co.uk/x")?.site(in: Self.list) == "example.co.uk")
        #expect(ServiceAddress("http://[::1]:8080/")?.site(in: Self.list) == "[::1]")
        #expect(ServiceAddress("localhost:3000")?.site(in: Self.list) == "localhost")
        #expect(ServiceAddress("not a host") == nil)
        #expect(ServiceAddress("https://") == nil)
    }
}

@Suite("Reading a service identifier")
struct ServiceAddressTests {
    @Test("spaces around it are trimmed, a pasted no-break space too; a blank one names no host")
    func trimming() {
        #expect(ServiceAddress("  https://Example.com/login\t")?.description == "example.com")
        #expect(ServiceAddress("\u{00A0}example.com\u{3000}")?.description == "example.com")
        #expect(ServiceAddress(" \t ") == nil)
    }
}
