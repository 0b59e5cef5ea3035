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
        // Every form the URL standard reads (browsers connect to 192.168.1.1 for each).
        #expect(ServiceHost("192.168.001.1") == .ipv4("192.168.1.1"))
        #expect(ServiceHost("192.168.1.1") == .ipv4("192.168.1.1"))
        #expect(ServiceHost("0xc0.0250.257") == .ipv4("192.168.1.1"))
        #expect(ServiceHost("3232235777") == .ipv4("192.168.1.1"))
        #expect(ServiceHost("example.1") == nil)  // ends in a number: an address or nothing
        #expect(ServiceHost("[0:0:0:0:0:0:0:1]") == .ipv6("::1"))
        #expect(ServiceHost("2001:DB8::0:1") == .ipv6("2001:db8::1"))
        #expect(ServiceHost("[::1]")?.description == "[::1]")
        #expect(ServiceHost("[::ffff:192.168.1.1]") == .ipv6("::ffff:c0a8:101"))
    }

    @Test("a host that cannot be read says why")
    func reasons() {
        func reason(_ text: String) -> String? {
            if case .failure(let error) = ServiceHost.parse(text) { return error.reason }
            return nil
        }
        #expect(reason("a..b") == "it has an empty label")
        #expect(reason("a!b.com") == "it holds '!' (U+0021), which no DNS name holds")
        #expect(reason("a\u{200D}b.com") == "it holds U+200D, which no host name may hold")
        #expect(reason("\u{24D0}.com")?.hasPrefix("it holds 'ⓐ' (U+24D0), which IDNA maps") == true)
        #expect(reason("1.2.3.256") == "a part of the IPv4 address is too large")
        #expect(reason("[1::2::3]") == "the IPv6 address has '::' twice")
        #expect(reason("ex%FFmple.com") == "its percent-encoded bytes are not UTF-8")
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
struct ServiceFitTests {
    static let list = PublicSuffixList.current

    func fit(_ identity: String, _ request: String) throws -> ServiceFit {
        let saved = try #require(ServiceOrigin(identity), "\(identity)")
        let asked = try #require(ServiceOrigin(request), "\(request)")
        return saved.fit(for: asked, in: Self.list)
    }

    @Test(
        "the same scheme, host and port is exact; another host of the site or port is offered; never a downgrade",
        arguments: [
            ("example.com", "https://example.com/login", ServiceFit.exact),
            ("https://example.com:443/x?y#z", "example.com", .exact),
            ("example.com", "https://login.example.com/", .sameSite),
            ("https://login.example.com/path", "example.com", .sameSite),
            ("a.example.org", "https://evil.example.org/", .sameSite),
            ("example.com", "https://example.org/", .none),
            ("example.com", "https://example.com.evil.net/", .none),
            ("https://github.com", "http://github.com", .none),
            ("https://github.com", "ftp://github.com", .none),
            ("https://github.com", "https://github.com:8443/", .sameHost),
            ("https://github.com", "https://gist.github.com/", .sameSite),
            ("https://github.com", "https://evil.com\\@github.com/", .none),
            ("http://github.com", "https://github.com", .sameHost),
            ("http://github.com", "http://github.com:80/", .exact),
            ("http://gist.github.com", "http://github.com", .sameSite),
            ("alice.github.io", "https://alice.github.io/app", .exact),
            ("alice.github.io", "https://bob.github.io/", .none),
            ("example.co.uk", "https://www.example.co.uk/", .sameSite),
            ("example.co.uk", "https://other.co.uk/", .none),
            ("www.ck", "https://www.www.ck/", .sameSite),
            ("bücher.example", "https://xn--bcher-kva.example/", .exact),
            ("https://BÜCHER.example", "https://www.bücher.example/", .sameSite),
            ("example.com:8443", "https://example.com:8443/", .exact),
            ("example.com:8443", "https://example.com/", .sameHost),
            ("192.168.1.10", "https://192.168.1.10:8080/", .sameHost),
            ("http://192.168.1.10", "http://192.168.1.10/", .exact),
            ("http://192.168.1.10", "http://3232235786/", .exact),
            ("192.168.1.10", "https://192.168.1.11/", .none),
            ("[::1]:8080", "https://[::1]:8080/", .exact),
            ("http://localhost:3000", "http://localhost:3000/", .exact),
            ("http://localhost:3000", "http://localhost:4000/", .sameHost),
            ("app.localhost", "https://other.localhost/", .none),
            ("router", "https://router/", .exact),
            ("router", "http://router/", .none),
            ("smtp://mail.example.com:587", "smtp://Mail.Example.com:587", .exact),
            ("smtp://mail.example.com:587", "smtp://mail.example.com", .sameHost),
        ]
    )
    func fits(identity: String, request: String, expected: ServiceFit) throws {
        #expect(try fit(identity, request) == expected)
    }

    @Test("identities are filed by registrable domain, or by host when there is none")
    func sites() throws {
        #expect(ServiceOrigin("https://a.b.example.co.uk/x")?.site(in: Self.list) == "example.co.uk")
        #expect(ServiceOrigin("http://[::1]:8080/")?.site(in: Self.list) == "[::1]")
        #expect(ServiceOrigin("localhost:3000")?.site(in: Self.list) == "localhost")
    }
}

@Suite("Reading a service identifier")
struct ServiceOriginTests {
    @Test(
        "a URL's scheme, host and port; a domain means https on its default port",
        arguments: [
            ("https://Example.com/login", "https://example.com"),
            ("  https://Example.com/login\t", "https://example.com"),
            ("\u{00A0}example.com\u{3000}", "https://example.com"),
            ("example.com", "https://example.com"),
            ("example.com/login", "https://example.com"),
            ("github.com:443", "https://github.com"),
            ("localhost:3000", "https://localhost:3000"),
            ("[::1]:8080", "https://[::1]:8080"),
            ("::1", "https://[::1]"),
            ("HTTP://EXAMPLE.COM:80/", "http://example.com"),
            ("http://example.com:443/", "http://example.com:443"),
            ("https://evil.com\\@github.com/", "https://evil.com"),
            ("https://a@b@github.com:8443", "https://github.com:8443"),
            ("smtp://mail.example.com:587", "smtp://mail.example.com:587"),
            ("git+ssh://host.example", "git+ssh://host.example"),
        ]
    )
    func reads(identifier: String, origin: String) {
        #expect(ServiceOrigin(identifier)?.description == origin)
    }

    @Test("what names no service says what is wrong, and where")
    func refused() {
        func reason(_ text: String) -> String? {
            if case .failure(let error) = ServiceOrigin.parse(text) { return error.description }
            return nil
        }
        #expect(reason(" \t ")?.hasSuffix("is not a site Keyport can read: it is empty") == true)
        #expect(reason("https://") == "'https://' is not a site Keyport can read: it names no host")
        #expect(
            reason("not a host")?.hasSuffix(
                "the host 'not a host' cannot be read: it holds U+0020, which no host may hold"
            ) == true
        )
        #expect(reason("https://example.com:65536")?.hasSuffix("its port 65536 is above 65535") == true)
        #expect(reason("https://example.com:8a")?.hasSuffix("its port '8a' is not a number") == true)
        #expect(reason("file:///etc/passwd")?.hasSuffix("a file: URL names no service") == true)
        #expect(
            reason("bob@example.com")?.hasSuffix(
                "a domain names no user; write the URL (https://…) if that is what it is"
            ) == true
        )
    }

    /// Tricky URLs (Peers/tricky_urls.json) read by headless chromium's `new URL()`: Keyport must
    /// see the scheme, host and port the browser sees, or refuse the URL where the browser does
    /// (and where the entry says Keyport is stricter than the browser, only refuse).
    @Test("every tricky URL is read as Chromium reads it, or refused where Keyport is stricter")
    func againstChromium() async throws {
        let python = try await Peers.python(importing: ["selenium"])
        try Peers.require("/usr/bin/chromium", "chromium (Debian package chromium)")
        try Peers.require("/usr/bin/chromedriver", "chromedriver (Debian package chromium-driver)")
        let corpusPath = Peers.file("Tests/KeyportDomainsTests/Peers/tricky_urls.json")
        let corpus = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: corpusPath)))
                as? [[String: String]]
        )
        let urls = corpus.compactMap { $0["url"] }
        let ran = try await Program.run(
            python,
            [Peers.file("Tests/KeyportDomainsTests/Peers/url_parser.py")],
            input: try JSONSerialization.data(withJSONObject: urls),
            timeout: .seconds(120)
        )
        try #require(ran.status == 0, "\(ran.standardError)")
        let answers = try #require(JSONSerialization.jsonObject(with: Data(ran.standardOutput.utf8)) as? [Any])
        try #require(answers.count == urls.count)
        var mismatches: [String] = []
        for (entry, answer) in zip(corpus, answers) {
            let url = entry["url"]!
            let ours = ServiceOrigin(url)
            let theirs = (answer as? [String]).map { parts -> String in
                // Keyport drops a host's trailing dot (the same DNS name); Chromium keeps it.
                var host = parts[1]
                if host.count > 1, host.hasSuffix("."), !host.hasPrefix("[") { host.removeLast() }
                return "\(parts[0])//\(host)" + (parts[2].isEmpty ? "" : ":\(parts[2])")
            }
            if entry["refused"] != nil || theirs == nil {
                if let ours { mismatches.append("\(url.debugDescription): ours \(ours), should be refused") }
            } else if ours?.description != theirs {
                mismatches.append(
                    "\(url.debugDescription): ours \(ours?.description ?? "refused"), chromium's \(theirs!)"
                )
            }
        }
        #expect(corpus.count > 100)
        #expect(mismatches.isEmpty, "\(mismatches.count) differ:\n\(mismatches.joined(separator: "\n"))")
    }
}
