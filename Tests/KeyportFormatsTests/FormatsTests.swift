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
        "Chrome (with and without the note column), Firefox (all quoted, CRLF, no final newline), Safari (today's and Safari 15's)"
    )
    func browsers() throws {
        // Chrome quotes only what needs it; older versions have no note column.
        let chrome =
            "name,url,username,password,note\nexample.com,https://example.com/login,alice,\"p,w\",\"two\nlines\"\n"
        let chromeOld = "name,url,username,password\nexample.com,https://example.com/,alice,pw\n"
        // Firefox quotes every header and value, leaves nulls empty, times in milliseconds.
        let firefox = [
            #""url","username","password","httpRealm","formActionOrigin","guid","timeCreated","timeLastUsed","timePasswordChanged""#,
            #""https://example.com","alice","pw",,"https://example.com","{0c3c8f53-a6f5-4b46-9fe4-f1a4d9c1bd4c}","1612345678901","1612345678901","1700000000000""#,
            #""https://router.lan:8443","admin","admin","Router",,"{1c3c8f53-a6f5-4b46-9fe4-f1a4d9c1bd4c}","1612345678901","1612345678901","1612345678901""#,
        ].joined(separator: "\r\n")
        let safari =
            "Title,URL,Username,Password,Notes,OTPAuth\nExample,https://example.com/,alice,pw,a note,otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example\n"
        let safari15 = "Title,Url,Username,Password,OTPAuth\nExample,https://example.com/,alice,pw,\n"
        let cases: [(String, ImportFormat)] = [
            (chrome, .chromeCSV), (chromeOld, .chromeCSV), (firefox, .firefoxCSV), (safari, .safariCSV),
            (safari15, .safariCSV),
        ]
        for (text, format) in cases {
            #expect(Importer.detect(Array(text.utf8)) == format, "\(text.prefix(40))")
            let imported = try Importer.read(Array(text.utf8))
            #expect(imported.problems.isEmpty, "\(imported.problems)")
            #expect(login(imported.items[0]).user == "alice", "\(format)")
        }
        let chromeItem = try Importer.read(Array(chrome.utf8)).items[0]
        #expect(
            chromeItem.title == "example.com" && login(chromeItem).password == "p,w" && note(chromeItem) == "two\nlines"
        )
        let firefoxItems = try Importer.read(Array(firefox.utf8)).items
        #expect(firefoxItems.count == 2)
        #expect(firefoxItems[0].creationAt == 1_612_345_678 && firefoxItems[0].modifiedAt == 1_700_000_000)
        #expect(firefoxItems[0].id == Data(UUID(uuidString: "0c3c8f53-a6f5-4b46-9fe4-f1a4d9c1bd4c")!.uuidBytes))
        #expect(
            firefoxItems[1].scope?.urls == ["https://router.lan:8443"]
                && firefoxItems[1].title == "https://router.lan:8443"
        )
        let safariItem = try Importer.read(Array(safari.utf8)).items[0]
        #expect(totp(safariItem)?.issuer == "Example" && note(safariItem) == "a note")
    }

    @Test("CSV rows with the wrong number of fields are problems with their lines; the others come in")
    func csvProblems() throws {
        let text =
            "name,url,username,password\nok,https://a.example/,a,1\nshort,https://b.example/\nalso ok,https://c.example/,c,3\n"
        let imported = try Importer.read(Array(text.utf8))
        #expect(imported.items.map(\.title) == ["ok", "also ok"])
        #expect(imported.problems.map(\.description) == ["line 3: it has 2 fields where the header has 4"])
        #expect(throws: ImportError.self) { try Importer.read(Array("name,url,username,password\n\"open\n".utf8)) }
    }

    @Test(
        "Bitwarden JSON: a login with URIs, TOTP and fields, a secure note, a card, an identity, an SSH key, a Steam secret, a folder"
    )
    func bitwarden() throws {
        let json = #"""
            {
              "encrypted": false,
              "folders": [{"id": "5a4b1c9e-0000-4000-8000-000000000001", "name": "Work"}],
              "items": [
                {"id": "0f0e0d0c-0b0a-4908-8706-050403020100", "organizationId": null, "folderId": "5a4b1c9e-0000-4000-8000-000000000001",
                 "type": 1, "reprompt": 0, "name": "Example", "notes": "a note", "favorite": true,
                 "fields": [{"name": "PIN", "value": "1234", "type": 1, "linkedId": null},
                            {"name": "Linked", "value": null, "type": 3, "linkedId": 100}],
                 "login": {"uris": [{"match": null, "uri": "https://example.com/login"}, {"match": 0, "uri": "https://example.org"}],
                           "username": "alice", "password": "pw", "totp": "otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP",
                           "fido2Credentials": []},
                 "passwordHistory": null, "revisionDate": "2024-01-31T12:34:56.789Z", "creationDate": "2024-01-01T00:00:00.000Z",
                 "deletedDate": null, "collectionIds": null},
                {"id": "1f0e0d0c-0b0a-4908-8706-050403020100", "type": 2, "name": "Wi-Fi", "notes": "the code is 42", "favorite": false,
                 "secureNote": {"type": 0}},
                {"id": "2f0e0d0c-0b0a-4908-8706-050403020100", "type": 3, "name": "Visa", "notes": null, "favorite": false,
                 "card": {"cardholderName": "Alice", "brand": "Visa", "number": "4111111111111111", "expMonth": "4", "expYear": "2030", "code": "123"}},
                {"id": "3f0e0d0c-0b0a-4908-8706-050403020100", "type": 4, "name": "Me", "favorite": false,
                 "identity": {"title": "Ms", "firstName": "Alice", "lastName": "Liddell", "ssn": "000-00-0000", "email": "alice@example.com", "phone": null}},
                {"id": "4f0e0d0c-0b0a-4908-8706-050403020100", "type": 5, "name": "Server", "favorite": false,
                 "sshKey": {"privateKey": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----", "publicKey": "ssh-ed25519 AAAA", "keyFingerprint": "SHA256:x"}},
                {"id": "5f0e0d0c-0b0a-4908-8706-050403020100", "type": 1, "name": "Steam", "favorite": false,
                 "login": {"uris": [], "username": "gamer", "password": "pw", "totp": "steam://JBSWY3DPEHPK3PXP"}},
                {"id": "6f0e0d0c-0b0a-4908-8706-050403020100", "type": 9, "name": "From the future", "favorite": false}
              ]
            }
            """#
        #expect(Importer.detect(Array(json.utf8)) == .bitwarden)
        let imported = try Importer.read(Array(json.utf8))
        #expect(imported.problems.map(\.description) == ["item 7: Bitwarden item type 9 is not one Keyport knows"])
        try #require(imported.items.count == 6)
        let example = imported.items[0]
        #expect(example.id == Data(UUID(uuidString: "0f0e0d0c-0b0a-4908-8706-050403020100")!.uuidBytes))
        #expect(example.scope?.urls == ["https://example.com/login", "https://example.org"])
        #expect(login(example).user == "alice" && login(example).password == "pw" && note(example) == "a note")
        #expect(totp(example)?.secret == "JBSWY3DPEHPK3PXP")
        #expect(example.favorite == true && example.tags == ["Work"])
        #expect(example.creationAt == 1_704_067_200 && example.modifiedAt == 1_706_704_496)
        var pin: CXF.EditableField?
        for case .customFields(let fields) in example.credentials { pin = fields.fields.first { $0.label == "PIN" } }
        #expect(pin?.value == "1234" && pin?.fieldType == .concealedString)
        #expect(note(imported.items[1]) == "the code is 42")
        var card: CXF.CreditCard?
        for case .creditCard(let found) in imported.items[2].credentials { card = found }
        #expect(card?.number?.value == "4111111111111111" && card?.expiryDate?.value == "2030-04")
        #expect(card?.verificationNumber?.fieldType == .concealedString)
        var identity: [String: CXF.EditableField] = [:]
        for case .customFields(let fields) in imported.items[3].credentials {
            for field in fields.fields { identity[field.label ?? ""] = field }
        }
        #expect(identity["firstName"]?.value == "Alice" && identity["ssn"]?.fieldType == .concealedString)
        #expect(identity["phone"] == nil)
        var steam: String?
        for case .customFields(let fields) in imported.items[5].credentials {
            steam = fields.fields.first { $0.label == "otpauth" }?.value
        }
        #expect(steam?.contains("encoder=steam") == true, "\(steam ?? "none")")

        let encrypted = #"{"encrypted": true, "encKeyValidation_DO_NOT_EDIT": "x", "items": []}"#
        #expect(throws: ImportError.self) { try Importer.read(Array(encrypted.utf8), format: .bitwarden) }
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

extension UUID {
    fileprivate var uuidBytes: [UInt8] { withUnsafeBytes(of: uuid, Array.init) }
}
