import CredentialExchangeFormat
import Foundation
import KeyportTestSupport
import OneTimeCodes
import Testing

@testable import KeyportFormats

/// The login of an imported item: user name and password of its basic-auth credential.
private func login(_ item: CXF.Item) -> (user: String?, password: String?) {
    for case .basicAuth(let auth) in item.credentials { return (auth.username?.value, auth.password?.value) }
    return (nil, nil)
}

private func totp(_ item: CXF.Item) -> CXF.TOTP? {
    for case .totp(let totp) in item.credentials { return totp }
    return nil
}

private func note(_ item: CXF.Item) -> String? {
    for case .note(let note) in item.credentials { return note.content.value }
    return nil
}

@Suite("CSV as managers write it")
struct CSVTests {
    @Test("quotes, doubled quotes, commas and line breaks inside quotes, CRLF, a BOM, blank lines")
    func rows() throws {
        let text = "\u{FEFF}a,b,c\r\n\"x, y\",\"say \"\"hi\"\"\",\"two\nlines\"\r\n\r\nlast,,\n"
        let rows = try CSV.rows(Array(text.utf8))
        #expect(rows.map(\.fields) == [["a", "b", "c"], ["x, y", "say \"hi\"", "two\nlines"], ["last", "", ""]])
        #expect(rows.map(\.line) == [1, 2, 5])
    }

    @Test("an unclosed quote, text after a closing quote: the line is named")
    func errors() {
        #expect(throws: CSV.SyntaxError.self) { try CSV.rows(Array("a,b\n\"open,c\nd\n".utf8)) }
        do {
            _ = try CSV.rows(Array("a,b\nc,\"d\"e\n".utf8))
            Issue.record("accepted text after a closing quote")
        } catch {
            #expect(error.line == 2)
        }
    }
}

@Suite("Importing other managers' exports")
struct ImportTests {
    @Test("KeePassXC: keepassxc-cli makes a database with a login and a TOTP secret, exports CSV; every field comes in")
    func keepassxc() async throws {
        let cli = try Peers.require("/usr/bin/keepassxc-cli", "keepassxc-cli (Debian's keepassxc)")
        let directory = try TemporaryDirectory("kp-formats")
        defer { directory.remove() }
        // keepassxc-cli 2.7 adds no TOTP from the command line; it imports KeePass XML that has one.
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <KeePassFile><Meta><Generator>Keyport test</Generator></Meta><Root><Group>
            <UUID>YDAHUUdYSAe0lkvtYl9zOw==</UUID><Name>Root</Name>
            <Entry><UUID>aQDNyQvdRv+4wgylQ5aZfg==</UUID>
            <String><Key>Title</Key><Value>Example, Inc</Value></String>
            <String><Key>UserName</Key><Value>alice</Value></String>
            <String><Key>Password</Key><Value ProtectInMemory="True">p"w, with comma</Value></String>
            <String><Key>URL</Key><Value>https://login.example.com/</Value></String>
            <String><Key>Notes</Key><Value>first line
            second line</Value></String>
            <String><Key>otp</Key><Value>otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&amp;issuer=Example&amp;digits=8&amp;period=60</Value></String>
            </Entry>
            <Group><UUID>bQDNyQvdRv+4wgylQ5aZfg==</UUID><Name>Work</Name>
            <Entry><UUID>cQDNyQvdRv+4wgylQ5aZfg==</UUID>
            <String><Key>Title</Key><Value>Intranet</Value></String>
            <String><Key>UserName</Key><Value>bob</Value></String>
            <String><Key>Password</Key><Value>hunter2</Value></String>
            <String><Key>URL</Key><Value>https://intranet.example.org</Value></String>
            </Entry></Group>
            </Group></Root></KeePassFile>
            """
        let source = directory.url.appendingPathComponent("in.xml").path
        let database = directory.url.appendingPathComponent("db.kdbx").path
        try xml.write(toFile: source, atomically: true, encoding: .utf8)
        let made = try await Program.run(
            cli,
            ["import", "-p", source, database],
            input: Data("pw\npw\n".utf8),
            timeout: .seconds(60)
        )
        #expect(made.status == 0, "\(made.standardError)")
        let exported = try await Program.run(
            cli,
            ["export", "-f", "csv", database],
            input: Data("pw\n".utf8),
            timeout: .seconds(60)
        )
        #expect(exported.status == 0, "\(exported.standardError)")
        let text = Array(exported.standardOutput.utf8)
        #expect(Importer.detect(text) == .keepassxcCSV)
        let imported = try Importer.read(text)
        #expect(imported.problems.isEmpty, "\(imported.problems)")
        try #require(imported.items.count == 2)
        let example = imported.items[0]
        #expect(example.title == "Example, Inc")
        #expect(example.scope?.urls == ["https://login.example.com/"])
        #expect(login(example).user == "alice" && login(example).password == "p\"w, with comma")
        #expect(note(example) == "first line\nsecond line")
        let code = try #require(totp(example))
        // KeePassXC writes its own URI, naming the entry's title as the issuer.
        #expect(code.digits == 8 && code.period == 60 && code.issuer == "Example, Inc", "\(code)")
        #expect(code.secret == "JBSWY3DPEHPK3PXP")
        #expect(example.tags == nil && example.creationAt != nil && example.modifiedAt != nil)
        let intranet = imported.items[1]
        #expect(intranet.tags == ["Work"] && login(intranet).user == "bob" && login(intranet).password == "hunter2")
        // The same export read again gives the same ids: a second import finds them.
        #expect(try Importer.read(text).items.map(\.id) == imported.items.map(\.id))
    }

    @Test(
        "otpauth lists: URIs and Google Authenticator migration URIs; a bad line is a problem with its line, the rest imported"
    )
    func otpauth() throws {
        // One TOTP account, "Example:alice@google.com" of issuer Example, secret "Hello!" DE AD BE EF,
        // SHA-1, 6 digits: Google Authenticator's protobuf, written by hand.
        let migration =
            "otpauth-migration://offline?data=CjUKCkhlbGxvId6tvu8SGEV4YW1wbGU6YWxpY2VAZ29vZ2xlLmNvbRoHRXhhbXBsZSABKAEwAhABGAEgACgH"
        let text = """
            # my codes
            otpauth://totp/GitHub:alice?secret=JBSWY3DPEHPK3PXP&issuer=GitHub

            not a uri
            otpauth://hotp/Bank:bob?secret=JBSWY3DPEHPK3PXP&counter=5
            \(migration)
            """
        #expect(Importer.detect(Array(text.utf8)) == nil, "a comment first: the format is named, not guessed")
        let imported = try Importer.read(Array(text.utf8), format: .otpauth)
        #expect(imported.problems.map(\.place) == ["line 4"], "\(imported.problems)")
        try #require(imported.items.count == 3, "\(imported.items.map(\.title))")
        #expect(imported.items[0].title == "GitHub" && totp(imported.items[0])?.issuer == "GitHub")
        // HOTP has no CXF form: kept whole as a concealed custom field.
        let hotp = imported.items[1]
        #expect(totp(hotp) == nil)
        var kept: String?
        for case .customFields(let fields) in hotp.credentials {
            kept = fields.fields.first { $0.label == "otpauth" }?.value
        }
        #expect(kept?.hasPrefix("otpauth://hotp/") == true && kept?.contains("counter=5") == true)
        #expect(imported.items[2].title == "Example" && totp(imported.items[2])?.username == "alice@google.com")
        #expect(Importer.detect(Array("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP\n".utf8)) == .otpauth)
    }

    @Test("a file in no format Keyport knows is refused, saying how to name one")
    func unknown() {
        #expect(throws: ImportError.self) { try Importer.read(Array("just,some\ncsv,text\n".utf8)) }
        #expect(throws: ImportError.self) { try Importer.read(Array("{\"x\":1}".utf8), format: .bitwarden) }
    }
}
