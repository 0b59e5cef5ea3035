import CredentialExchangeFormat
import Crypto
import Foundation
import KeyportCrypto
import KeyportEncoding
import KeyportSystem
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

/// What keepassxc-cli exports in `format` of a database it makes by importing the KeePass XML at
/// `source` (passphrase "pw").
private func keepassxcExport(_ cli: String, source: String, database: String, format: String) async throws -> [UInt8] {
    let made = try await Program.run(
        cli,
        ["import", "-p", source, database],
        input: Data("pw\npw\n".utf8),
        timeout: .seconds(60)
    )
    #expect(made.status == 0, "\(made.standardError)")
    let exported = try await Program.run(
        cli,
        ["export", "-f", format, database],
        input: Data("pw\n".utf8),
        timeout: .seconds(60)
    )
    #expect(exported.status == 0, "\(exported.standardError)")
    return Array(exported.standardOutput.utf8)
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
        let text = try await keepassxcExport(cli, source: source, database: database, format: "csv")
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
        let passkeyKey = P256.Signing.PrivateKey()
        let keyValue = Base64URL.encode(passkeyKey.derRepresentation)
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
                           "fido2Credentials": [{"credentialId": "8c3b2b6e-4c1a-4a8e-9f4e-1a2b3c4d5e6f", "keyType": "public-key",
                             "keyAlgorithm": "ECDSA", "keyCurve": "P-256", "keyValue": "\#(keyValue)", "rpId": "example.com",
                             "userHandle": "dXNlci0x", "userName": "alice", "counter": "0", "rpName": "Example",
                             "userDisplayName": "Alice", "discoverable": "true", "creationDate": "2024-01-02T03:04:05.000Z"}]},
                 "passwordHistory": [{"lastUsedDate": "2023-12-01T00:00:00.000Z", "password": "older pw"},
                                     {"lastUsedDate": "2023-06-01T00:00:00.000Z", "password": "oldest pw"}],
                 "revisionDate": "2024-01-31T12:34:56.789Z", "creationDate": "2024-01-01T00:00:00.000Z",
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
                {"id": "6f0e0d0c-0b0a-4908-8706-050403020100", "type": 9, "name": "From the future", "favorite": false},
                {"id": "7f0e0d0c-0b0a-4908-8706-050403020100", "type": 1, "name": "Broken passkey", "favorite": false,
                 "login": {"username": "eve", "password": "pw", "fido2Credentials": [{"credentialId": "b64.AAECAwQFBgcICQ",
                   "keyType": "public-key", "keyAlgorithm": "ECDSA", "keyCurve": "P-256", "keyValue": "bm90IGEga2V5",
                   "rpId": "example.net", "userHandle": "dXNlci0y", "counter": 0}]}}
              ]
            }
            """#
        #expect(Importer.detect(Array(json.utf8)) == .bitwarden)
        let imported = try Importer.read(Array(json.utf8))
        #expect(
            imported.problems.map(\.description) == [
                "item 7: Bitwarden item type 9 is not one Keyport knows",
                "item 8, passkey 1: its keyValue is not a P-256 private key in PKCS#8, base64url",
            ]
        )
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
        // Its passkey: a CXF passkey whose key signs as the one exported, and what CXF has no
        // member for beside it; its earlier passwords, with when they were last used.
        var passkey: CXF.Passkey?
        var groups: [String: [CXF.EditableField]] = [:]
        for credential in example.credentials {
            if case .passkey(let found) = credential { passkey = found }
            if case .customFields(let custom) = credential { groups[custom.label ?? ""] = custom.fields }
        }
        let key = try #require(passkey)
        #expect(key.credentialId == Data(UUID(uuidString: "8c3b2b6e-4c1a-4a8e-9f4e-1a2b3c4d5e6f")!.uuidBytes))
        #expect(key.rpId == "example.com" && key.username == "alice" && key.userDisplayName == "Alice")
        #expect(key.userHandle == Data("user-1".utf8))
        #expect(
            try P256.Signing.PrivateKey(derRepresentation: key.key).publicKey.rawRepresentation
                == passkeyKey.publicKey.rawRepresentation
        )
        #expect(
            groups["Bitwarden passkey for example.com"]?.map { "\($0.label ?? "")=\($0.value)" } == [
                "rpName=Example", "counter=0", "discoverable=true", "creationDate=2024-01-02T03:04:05.000Z",
            ]
        )
        let history = try #require(groups["Password history"])
        #expect(
            history.map(\.value) == ["older pw", "oldest pw"] && history.allSatisfy { $0.fieldType == .concealedString }
        )
        #expect(history.map(\.label) == ["2023-12-01T00:00:00.000Z", "2023-06-01T00:00:00.000Z"])
        // Whole through CXF: the document written and read again holds the same item.
        let again = try CXF.Decoder().decode(CXF.Part<CXF.Item>.object, from: example.json)
        #expect(again == example)
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
        let encryptedError = #expect(throws: ImportError.self) {
            try Importer.read(Array(encrypted.utf8), format: .bitwarden)
        }
        #expect(encryptedError?.code == .encrypted)
    }

    @Test(
        "Aegis: a plain export (TOTP, HOTP, Steam, mOTP, groups) and an encrypted one (scrypt slot, AES-GCM) written from its documentation"
    )
    func aegis() throws {
        let content = #"""
            {"version": 3, "groups": [{"uuid": "a0000000-0000-4000-8000-000000000001", "name": "Work"}],
             "entries": [
              {"type": "totp", "uuid": "01010101-0101-4101-8101-010101010101", "name": "alice", "issuer": "GitHub", "note": "main",
               "favorite": true, "icon": null, "info": {"secret": "JBSWY3DPEHPK3PXP", "algo": "SHA256", "digits": 8, "period": 60},
               "groups": ["a0000000-0000-4000-8000-000000000001"]},
              {"type": "hotp", "uuid": "02020202-0202-4202-8202-020202020202", "name": "bob", "issuer": "Bank",
               "info": {"secret": "JBSWY3DPEHPK3PXP", "algo": "SHA1", "digits": 6, "counter": 7}},
              {"type": "steam", "uuid": "03030303-0303-4303-8303-030303030303", "name": "gamer", "issuer": "Steam",
               "info": {"secret": "JBSWY3DPEHPK3PXP", "algo": "SHA1", "digits": 5, "period": 30}},
              {"type": "motp", "uuid": "04040404-0404-4404-8404-040404040404", "name": "old", "issuer": "Legacy",
               "info": {"secret": "JBSWY3DPEHPK3PXP", "algo": "MD5", "digits": 6, "period": 10, "pin": "1234"}},
              {"type": "totp", "uuid": "05050505-0505-4505-8505-050505050505", "name": "broken", "issuer": "Oops",
               "info": {"secret": "not base32!", "algo": "SHA1", "digits": 6, "period": 30}}
             ]}
            """#
        let plain = #"{"version": 1, "header": {"slots": null, "params": null}, "db": "# + content + "}"
        #expect(Importer.detect(Array(plain.utf8)) == .aegis)
        let imported = try Importer.read(Array(plain.utf8))
        #expect(imported.problems.map(\.place) == ["entry 5"], "\(imported.problems)")
        try #require(imported.items.count == 4)
        let github = imported.items[0]
        let code = try #require(totp(github))
        #expect(code.algorithm == .sha256 && code.digits == 8 && code.period == 60 && code.username == "alice")
        #expect(
            github.title == "GitHub" && github.tags == ["Work"] && github.favorite == true && note(github) == "main"
        )
        #expect(github.id == Data(UUID(uuidString: "01010101-0101-4101-8101-010101010101")!.uuidBytes))
        func fields(_ item: CXF.Item) -> [String: String] {
            var out: [String: String] = [:]
            for case .customFields(let custom) in item.credentials {
                for field in custom.fields { out[field.label ?? ""] = field.value }
            }
            return out
        }
        #expect(fields(imported.items[1])["otpauth"]?.contains("counter=7") == true)
        #expect(fields(imported.items[2])["otpauth"]?.contains("encoder=steam") == true)
        #expect(fields(imported.items[3])["pin"] == "1234" && fields(imported.items[3])["type"] == "motp")

        // The same database, encrypted as Aegis does: a password slot (scrypt, N = 2^15) wraps a
        // random master key with AES-256-GCM; the master key seals the database.
        let password = "hunter2 hunter2"
        let salt = [UInt8](repeating: 7, count: 32)
        let kek = try ScryptParameters(logN: 15, salt: salt).deriveKey(from: SecretBytes(password))
        let master = SymmetricKey(size: .bits256)
        let slotNonce = AES.GCM.Nonce()
        let slot = try AES.GCM.seal(master.withUnsafeBytes { Array($0) }, using: kek, nonce: slotNonce)
        let dbNonce = AES.GCM.Nonce()
        let db = try AES.GCM.seal(Array(content.utf8), using: master, nonce: dbNonce)
        func hex(_ bytes: some Sequence<UInt8>) -> String { Hex.encode(bytes) }
        func encrypted(n: Int) -> String {
            """
            {"version": 1, "header": {"slots": [{"type": 1, "uuid": "s", "key": "\(hex(slot.ciphertext))",
              "key_params": {"nonce": "\(hex(slotNonce))", "tag": "\(hex(slot.tag))"}, "n": \(n), "r": 8, "p": 1,
              "salt": "\(hex(salt))", "repaired": true}],
              "params": {"nonce": "\(hex(dbNonce))", "tag": "\(hex(db.tag))"}},
             "db": "\(db.ciphertext.base64EncodedString())"}
            """
        }
        let opened = try Importer.read(Array(encrypted(n: 32768).utf8), passphrase: { SecretBytes(password) })
        #expect(opened.items.map(\.title) == imported.items.map(\.title))
        #expect(opened.items.map(\.id) == imported.items.map(\.id))
        for (wrong, why) in [("nope", "does not open"), (nil, "needs its password")] as [(String?, String)] {
            do {
                _ = try Importer.read(Array(encrypted(n: 32768).utf8), passphrase: { wrong.map(SecretBytes.init) })
                Issue.record("opened with \(wrong ?? "no password")")
            } catch {
                #expect(error.message.contains(why), "\(error)")
            }
        }
        // A slot asking for N = 2^30 is refused before a byte is derived.
        let start = ContinuousClock.now
        do {
            _ = try Importer.read(Array(encrypted(n: 1 << 30).utf8), passphrase: { SecretBytes(password) })
            Issue.record("a 2^30 slot was derived")
        } catch {
            #expect(error.message.contains("2^30"), "\(error)")
        }
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test("2FAS: a backup with TOTP, HOTP and Steam services and a group; an encrypted one says to export it plain")
    func twoFAS() throws {
        let backup = #"""
            {"services": [
              {"name": "GitHub", "secret": "JBSWY3DPEHPK3PXP", "updatedAt": 1700000000000,
               "otp": {"label": "GitHub:alice", "account": "alice", "issuer": "GitHub", "digits": 6, "period": 30,
                       "algorithm": "SHA1", "tokenType": "TOTP", "source": "Link"},
               "order": {"position": 0}, "groupId": "g1"},
              {"name": "Bank", "secret": "JBSWY3DPEHPK3PXP", "otp": {"account": "bob", "digits": 6, "algorithm": "SHA1", "tokenType": "HOTP", "counter": 3}},
              {"name": "Steam", "secret": "JBSWY3DPEHPK3PXP", "otp": {"account": "gamer", "tokenType": "STEAM", "digits": 5}}
             ],
             "groups": [{"id": "g1", "name": "Code", "isExpanded": true, "updatedAt": 1700000000000}],
             "updatedAt": 1700000000000, "schemaVersion": 4, "appVersionCode": 5000000, "appVersionName": "5.0.0",
             "appOrigin": "android"}
            """#
        #expect(Importer.detect(Array(backup.utf8)) == .twoFAS)
        let imported = try Importer.read(Array(backup.utf8))
        #expect(imported.problems.isEmpty, "\(imported.problems)")
        #expect(imported.items.map(\.title) == ["GitHub", "Bank", "Steam"])
        #expect(totp(imported.items[0])?.username == "alice" && imported.items[0].tags == ["Code"])
        #expect(totp(imported.items[1]) == nil && totp(imported.items[2]) == nil)
        let encrypted =
            #"{"services": [], "schemaVersion": 4, "servicesEncrypted": "YQ==:Yg==:Yw==", "reference": "x"}"#
        #expect(throws: ImportError.self) { try Importer.read(Array(encrypted.utf8)) }
    }

    @Test(
        "KeePass XML: keepassxc-cli's own export, and KeePass 2's: custom fields, tags, groups, the three ways of keeping a TOTP secret"
    )
    func keepassXML() async throws {
        let cli = try Peers.require("/usr/bin/keepassxc-cli", "keepassxc-cli (Debian's keepassxc)")
        let directory = try TemporaryDirectory("kp-formats")
        defer { directory.remove() }
        let source = directory.url.appendingPathComponent("in.xml").path
        let database = directory.url.appendingPathComponent("db.kdbx").path
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <KeePassFile><Meta><Generator>Keyport test</Generator></Meta><Root><Group>
        <UUID>YDAHUUdYSAe0lkvtYl9zOw==</UUID><Name>Root</Name>
        <Entry><UUID>aQDNyQvdRv+4wgylQ5aZfg==</UUID><Tags>home;bank</Tags>
        <String><Key>Title</Key><Value>Example</Value></String>
        <String><Key>UserName</Key><Value>alice</Value></String>
        <String><Key>Password</Key><Value ProtectInMemory="True">pw &amp; more</Value></String>
        <String><Key>URL</Key><Value>https://example.com/</Value></String>
        <String><Key>PIN</Key><Value ProtectInMemory="True">1234</Value></String>
        <String><Key>Recovery e-mail</Key><Value>alice@example.org</Value></String>
        <String><Key>otp</Key><Value>otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&amp;issuer=Example</Value></String>
        </Entry>
        <Group><UUID>bQDNyQvdRv+4wgylQ5aZfg==</UUID><Name>Work</Name>
        <Group><UUID>cQDNyQvdRv+4wgylQ5aZfg==</UUID><Name>Servers</Name>
        <Entry><UUID>dQDNyQvdRv+4wgylQ5aZfg==</UUID>
        <String><Key>Title</Key><Value>Box</Value></String>
        <String><Key>UserName</Key><Value>root</Value></String>
        <String><Key>Password</Key><Value>toor</Value></String>
        <History><Entry><UUID>dQDNyQvdRv+4wgylQ5aZfg==</UUID>
        <String><Key>Title</Key><Value>Box</Value></String>
        <String><Key>Password</Key><Value>an earlier one</Value></String>
        </Entry></History>
        </Entry></Group></Group>
        </Group></Root></KeePassFile>
        """.write(toFile: source, atomically: true, encoding: .utf8)
        let text = try await keepassxcExport(cli, source: source, database: database, format: "xml")
        #expect(Importer.detect(text) == .keepassXML)
        let imported = try Importer.read(text)
        #expect(imported.problems.isEmpty, "\(imported.problems)")
        try #require(imported.items.count == 2)
        let example = imported.items[0]
        #expect(example.id == Data(base64Encoded: "aQDNyQvdRv+4wgylQ5aZfg=="))
        #expect(login(example).user == "alice" && login(example).password == "pw & more")
        // KeePassXC writes tags sorted, comma-separated.
        #expect(example.tags == ["bank", "home"] && totp(example)?.issuer == "Example", "\(example.tags ?? [])")
        var fields: [String: CXF.EditableField] = [:]
        for case .customFields(let custom) in example.credentials {
            for field in custom.fields { fields[field.label ?? ""] = field }
        }
        #expect(fields["PIN"]?.value == "1234" && fields["PIN"]?.fieldType == .concealedString)
        #expect(
            fields["Recovery e-mail"]?.value == "alice@example.org" && fields["Recovery e-mail"]?.fieldType == .string
        )
        #expect(fields["otp"] == nil)
        // An entry's earlier versions (its History) are not items of their own.
        #expect(imported.items[1].tags == ["Work/Servers"] && login(imported.items[1]).password == "toor")

        // KeePass 2's own ways: TimeOtp-* (2.47+), the older TOTP Seed and Settings (Steam), and
        // KDBX 4's Base64 times; a value still encrypted with a KDBX stream key is a problem.
        let keepass = """
            <KeePassFile><Root><Group><Name>Database</Name>
            <Entry><UUID>AQEBAQEBAQEBAQEBAQEBAQ==</UUID>
            <Times><CreationTime>gPcj3Q4AAAA=</CreationTime></Times>
            <String><Key>Title</Key><Value>Native</Value></String>
            <String><Key>TimeOtp-Secret-Base32</Key><Value>JBSW Y3DP EHPK 3PXP</Value></String>
            <String><Key>TimeOtp-Length</Key><Value>8</Value></String>
            <String><Key>TimeOtp-Algorithm</Key><Value>HMAC-SHA-256</Value></String>
            </Entry>
            <Entry><UUID>AgICAgICAgICAgICAgICAg==</UUID>
            <String><Key>Title</Key><Value>Legacy</Value></String>
            <String><Key>TOTP Seed</Key><Value>JBSWY3DPEHPK3PXP</Value></String>
            <String><Key>TOTP Settings</Key><Value>30;S</Value></String>
            </Entry>
            <Entry><UUID>AwMDAwMDAwMDAwMDAwMDAw==</UUID>
            <String><Key>Title</Key><Value>Sealed</Value></String>
            <String><Key>Password</Key><Value Protected="True">c2VhbGVk</Value></String>
            </Entry>
            </Group></Root></KeePassFile>
            """
        let native = try Importer.read(Array(keepass.utf8))
        #expect(native.problems.map(\.place) == ["entry 3"], "\(native.problems)")
        let code = try #require(totp(native.items[0]))
        #expect(code.digits == 8 && code.algorithm == .sha256 && code.secret == "JBSWY3DPEHPK3PXP")
        // 63 839 664 000 seconds after 0001-01-01 is 2024-01-01T00:00:00Z.
        #expect(native.items[0].creationAt == 1_704_067_200, "\(native.items[0].creationAt.map { "\($0)" } ?? "nil")")
        var steam: String?
        for case .customFields(let custom) in native.items[1].credentials {
            steam = custom.fields.first { $0.label == "otpauth" }?.value
        }
        #expect(steam?.contains("encoder=steam") == true)
        let cut = #expect(throws: ImportError.self) {
            try Importer.read(Array("<KeePassFile><Root>".utf8), format: .keepassXML)
        }
        #expect(cut?.code == .malformed)
    }

    @Test("KeePass XML past 10 MB (libxml2 refuses one chunk that large): every entry comes in")
    func largeKeePassXML() throws {
        var text = "<?xml version=\"1.0\" encoding=\"utf-8\"?><KeePassFile><Root><Group><Name>Root</Name>\n"
        let count = 25_000
        for index in 0..<count {
            text += """
                <Entry><UUID>\(Data("entry-\(String(format: "%010d", index))".utf8).base64EncodedString())</UUID>\
                <String><Key>Title</Key><Value>Site \(index)</Value></String>\
                <String><Key>UserName</Key><Value>user\(index)</Value></String>\
                <String><Key>Password</Key><Value ProtectInMemory="True">password \(index)</Value></String>\
                <String><Key>URL</Key><Value>https://site-\(index).example/login</Value></String>\
                <String><Key>Notes</Key><Value>A note long enough to make the file as large as a real export</Value></String>\
                </Entry>

                """
        }
        text += "</Group></Root></KeePassFile>\n"
        #expect(text.utf8.count > 10_500_000)
        let imported = try Importer.read(Array(text.utf8))
        #expect(imported.format == .keepassXML && imported.problems.isEmpty)
        #expect(imported.items.count == count)
        #expect(imported.items.last?.title == "Site \(count - 1)")
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
        let unknown = #expect(throws: ImportError.self) { try Importer.read(Array("just,some\ncsv,text\n".utf8)) }
        #expect(unknown?.code == .unrecognised)
        #expect(throws: ImportError.self) { try Importer.read(Array("{\"x\":1}".utf8), format: .bitwarden) }
    }
}

@Suite("Imports that lose nothing: a file with an error is an error, where it is")
struct LosslessImportTests {
    /// The error reading `text` gives, as a person reads it; `nil` when it reads.
    private func refusal(_ text: [UInt8], as format: ImportFormat? = nil) -> String? {
        do {
            _ = try Importer.read(text, format: format)
            return nil
        } catch {
            return error.message
        }
    }

    private static let head = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<KeePassFile><Root><Group><Name>Root</Name>"
    private static let tail = "</Group></Root></KeePassFile>\n"

    private static func entry(_ password: String) -> String {
        "<Entry><String><Key>Title</Key><Value>x</Value></String><String><Key>Password</Key><Value>\(password)</Value></String></Entry>"
    }

    @Test("KeePass XML: 50 000 nested groups, a DOCTYPE, an entity of its own, a file cut short")
    func keePassXML() throws {
        let deep =
            Self.head + String(repeating: "<Group><Name>g</Name>", count: 50_000)
            + String(repeating: "</Group>", count: 50_000) + Self.tail
        #expect(refusal(Array(deep.utf8))?.contains("line 2: elements are nested deeper than 256") == true)
        // 250 groups deep is still read, its entry with it.
        let nested =
            Self.head + String(repeating: "<Group><Name>g</Name>", count: 250) + Self.entry("p")
            + String(repeating: "</Group>", count: 250) + Self.tail
        #expect(try Importer.read(Array(nested.utf8)).items.count == 1)

        let entity = Self.head + Self.entry("secret-&xxe;-tail") + Self.tail
        #expect(refusal(Array(entity.utf8))?.contains("line 2: '&xxe;' is not one of XML's five entities") == true)
        let doctype =
            "<?xml version=\"1.0\"?>\n<!DOCTYPE KeePassFile [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>\n"
            + "<KeePassFile><Root><Group><Name>Root</Name>" + Self.entry("&xxe;") + Self.tail
        #expect(refusal(Array(doctype.utf8))?.contains("line 2: a document type or entity declaration") == true)
        // XML's own entities, character references, comments and CDATA are read as XML reads them.
        let plain = Self.head + "<!-- a & b -->" + Self.entry("a&amp;b&lt;&#x41;&#66;<![CDATA[&c]]>") + Self.tail
        let read = try Importer.read(Array(plain.utf8))
        for case .basicAuth(let auth) in read.items[0].credentials { #expect(auth.password?.value == "a&b<AB&c") }

        // In another encoding, `<!` and `&` are other bytes (UTF-7's `+ADwAIQ-`): only UTF-8 is read.
        let utf7 =
            "<?xml version=\"1.0\" encoding=\"UTF-7\"?>\n<KeePassFile><Root><Group><Name>Root</Name>"
            + Self.entry("secret+ACY-x;tail") + Self.tail
        #expect(
            refusal(Array(utf7.utf8))?.contains("declares the encoding utf-7") == true,
            "\(refusal(Array(utf7.utf8)) ?? "read")"
        )
        #expect(refusal([0xFF, 0xFE] + Array(Self.head.utf8), as: .keepassXML)?.contains("UTF-16") == true)
        // A Latin-1 byte in a value on the fourth line: named by its line, never read as U+FFFD.
        let latin1 =
            Array((Self.head + "\n\n<Entry><String><Key>Title</Key><Value>caf").utf8) + [0xE9]
            + Array(("</Value></String></Entry>" + Self.tail).utf8)
        #expect(refusal(latin1)?.contains("line 4: the text is not UTF-8") == true, "\(refusal(latin1) ?? "read")")

        let whole = Self.head + Self.entry("one") + Self.entry("two") + Self.tail
        for cut in [2, 10, 60, 120] {
            let short = Array(whole.utf8.dropLast(cut))
            #expect(refusal(short)?.contains("cut short") == true, "cut \(cut): \(refusal(short) ?? "read")")
        }
    }

    @Test("CSV: a Latin-1 password, a row with a missing field; JSON cut short; an encrypted Bitwarden export")
    func textFormats() {
        let header = "\"Group\",\"Title\",\"Username\",\"Password\",\"URL\",\"Notes\",\"TOTP\"\n"
        let latin1 =
            Array(header.utf8) + Array("\"Root\",\"A\",\"u\",\"p".utf8) + [0xE4] + Array("ss\",\"\",\"\",\"\"\n".utf8)
        let message = refusal(latin1)
        #expect(message?.contains("line 2: the text is not UTF-8 (a byte 0xE4") == true, "\(message ?? "read")")
        // A row with a field missing is a problem of its line (the command line then imports nothing).
        let short =
            header
            + "\"Root\",\"A\",\"u\",\"p\",\"https://a.example\",\"\",\"\"\n\"Root\",\"B\",\"u\",\"p\",\"\",\"\"\n"
        let read = try? Importer.read(Array(short.utf8))
        #expect(read?.problems.map(\.description) == ["line 3: it has 6 fields where the header has 7"])

        let cut = #"{"encrypted": false, "items": [{"id": "x", "name": "a""#
        #expect(refusal(Array(cut.utf8))?.hasPrefix("the file is not valid JSON: line 1, column ") == true)
        #expect(refusal(Array(cut.utf8), as: .bitwarden)?.hasPrefix("the file is not valid JSON: line 1") == true)
        let encrypted =
            #"{"encrypted": true, "passwordProtected": true, "encKeyValidation_DO_NOT_EDIT": "2.x", "data": "2.y"}"#
        #expect(refusal(Array(encrypted.utf8))?.contains("an encrypted Bitwarden export") == true)
    }
}

extension UUID {
    fileprivate var uuidBytes: [UInt8] { withUnsafeBytes(of: uuid, Array.init) }
}

@Suite("Exporting for others")
struct ExportTests {
    @Test("otpauth lists carry every one-time-code secret, HOTP and Steam included, and read back the same")
    func otpauthRoundTrip() throws {
        let list = """
            otpauth://totp/GitHub:alice?secret=JBSWY3DPEHPK3PXP&issuer=GitHub&digits=8&period=60&algorithm=SHA256
            otpauth://hotp/Bank:bob?secret=JBSWY3DPEHPK3PXP&issuer=Bank&counter=5
            otpauth://totp/Steam:gamer?secret=JBSWY3DPEHPK3PXP&issuer=Steam&encoder=steam
            """
        let items = try Importer.read(Array(list.utf8), format: .otpauth).items
        let exported = Exporter.otpauthList(items)
        #expect(exported.skipped == 0)
        let again = try Importer.read(Array(exported.text.utf8), format: .otpauth).items
        #expect(again.map(\.credentials) == items.map(\.credentials))
        #expect(again.map(\.id) == items.map(\.id), "the same accounts, the same ids")
        #expect(exported.text.split(separator: "\n").count == 3)
    }

    @Test("a code whose credential names no issuer or account is labelled with its item's title and user name")
    func otpauthLabel() throws {
        let item = CXF.Item(
            id: Data("w".utf8),
            title: "Wide only",
            credentials: [
                .basicAuth(CXF.BasicAuth(username: CXF.EditableField(value: "wendy"))),
                .totp(CXF.TOTP(secret: "JBSWY3DPEHPK3PXP")),
            ]
        )
        let line = Exporter.otpauthList([item]).text
        #expect(line.hasPrefix("otpauth://totp/Wide%20only:wendy?"), "\(line)")
        #expect(line.contains("issuer=Wide%20only"), "\(line)")
    }

    @Test("a CXF export is a valid CXF 1.0 document that reads back item for item")
    func cxf() throws {
        let csv =
            "name,url,username,password,note\nexample.com,https://example.com/,alice,pw,a note\nexample.org,https://example.org/,bob,pw2,\n"
        let items = try Importer.read(Array(csv.utf8)).items
        let account = CXF.Account(id: Data("me".utf8), username: "alice", email: "alice@example.com", items: [])
        let bytes = Exporter.cxf(items, account: account, timestamp: 1_700_000_000)
        let decoded = try CXF.Decoder().decode(bytes)
        #expect(decoded.diagnostics.isEmpty, "\(decoded.diagnostics)")
        #expect(CXF.Validator().validate(decoded.document).filter { $0.severity == .error }.isEmpty)
        guard case .header(let header) = decoded.document else {
            Issue.record("a header")
            return
        }
        #expect(header.exporterRpId == "keyport.invalid" && header.timestamp == 1_700_000_000)
        #expect(header.accounts.first?.items == items)
        #expect(try Importer.read(bytes).items == items)
    }

    @Test(
        "JSON exports are recognised from their first members: a CXF document or Bitwarden export broken after them is named, and its reader says where"
    )
    func recognisedFromTheStart() throws {
        let csv = "name,url,username,password,note\nexample.com,https://example.com/,alice,pw,\n"
        let items = try Importer.read(Array(csv.utf8)).items
        let account = CXF.Account(id: Data("me".utf8), username: "alice", email: "alice@example.com", items: [])
        let document = Exporter.cxf(items, account: account, timestamp: 1_700_000_000)
        #expect(Importer.detect(document) == .cxf)
        // Cut inside its accounts: still CXF by its version and accounts, and no valid JSON.
        let cut = Array(document.dropLast(20))
        #expect(Importer.detect(cut) == .cxf)
        #expect(Importer.detect([0xEF, 0xBB, 0xBF] + Array(" \n".utf8) + cut) == .cxf)
        do {
            _ = try Importer.read(cut)
            Issue.record("a cut document was read")
        } catch {
            #expect(error.message.hasPrefix("the file is not valid JSON: "), "\(error.message)")
        }
        // Bitwarden's members in its order, with an item broken further on.
        let bitwarden = #"{"encrypted": false, "folders": [], "items": [{"id": "x", "login": {"uris": [}]}"#
        #expect(Importer.detect(Array(bitwarden.utf8)) == .bitwarden)
        // The other formats' members, in any order, and values that do not fit.
        let cases: [(String, ImportFormat?)] = [
            (#"{"db": {"entries": []}, "version": 1, "header": {"slots": null}}"#, .aegis),
            (#"{"db": "x", "header": []}"#, nil),
            (#"{"schemaVersion": 4, "services": []}"#, .twoFAS),
            (#"{"items": [], "encrypted": false}"#, .bitwarden),
            (#"{"items": [], "encrypted": "false"}"#, .cxf),
            (#"{"version": {"major": 1}, "hpke": {}}"#, .encryptedCXF),
            (#"{"keyport": "not-a-kind"}"#, nil),
            (#"{"encrypted": true, "encKeyValidation_DO_NOT_EDIT": "2.x", "data": "2.y"}"#, nil),
        ]
        for (text, format) in cases {
            #expect(Importer.detect(Array(text.utf8)) == format, "\(text)")
        }
    }
}

@Suite("ISO 8601 times as exports write them")
struct ISO8601Tests {
    /// What the reader gave before, through Foundation: ISO8601DateFormatter's internet date-time,
    /// with fractions or without.
    private func foundation(_ text: String) -> Int64? {
        let withFractions = ISO8601DateFormatter()
        withFractions.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = ISO8601DateFormatter().date(from: text) ?? withFractions.date(from: text) else { return nil }
        return Int64(date.timeIntervalSince1970)
    }

    @Test("every field's edges, fractions, offsets, leap days, years far off: as Foundation reads them")
    func sameAsFoundation() {
        var texts = [
            "1970-01-01T00:00:00Z", "2026-11-23T18:54:20Z", "2024-02-29T23:59:59Z", "2000-02-29T12:00:00Z",
            "1900-03-01T00:00:00Z", "1583-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "1969-12-31T23:59:59Z",
            "1969-12-31T23:59:59.5Z", "1960-06-15T10:20:30.999Z", "2026-11-23T18:54:20.123Z",
            "2026-11-23T18:54:20.1Z", "2026-11-23T18:54:20.000Z", "2026-11-23T18:54:20+01:00",
            "2026-11-23T18:54:20-09:30", "2026-01-01T00:30:00+14:00", "2024-01-01T12:00:00.123+05:45",
        ]
        // Times anywhere from 1583 (Foundation's calendar is Julian before October 1582; ISO 8601's
        // is Gregorian throughout, below) to the end of year 9999.
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let seconds = Int64.random(in: -12_212_553_600...253_402_300_799, using: &rng)
            let formatter = ISO8601DateFormatter()
            texts.append(formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))))
        }
        for text in texts {
            #expect(Dates.iso8601(text) == foundation(text), "\(text)")
            #expect(Dates.iso8601(text) != nil, "\(text)")
        }
        // The proleptic Gregorian calendar before 1583, as ISO 8601 and KeePass (.NET's DateTime,
        // whose seconds from year 1 are KDBX 4's times) count: year 1 began 62 135 596 800 s
        // before 1970.
        #expect(Dates.iso8601("0001-01-01T00:00:00Z") == -62_135_596_800)
        #expect(Dates.iso8601("1582-10-15T00:00:00Z") == -12_219_292_800)
    }

    @Test("what is no internet date-time is refused")
    func refused() {
        for text in [
            "", "2026-11-23", "2026-11-23T18:54:20", "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z",
            "2026-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-11-23T24:00:00Z",
            "2026-11-23T18:60:00Z", "2026-11-23T18:54:60Z", "2026-11-23T18:54:20.Z", "2026-11-23T18:54:20Zjunk",
            "2026-11-23 18:54:20Z", "2026-11-23T18:54:20+1:00", "2026-11-23T18:54:20+25:00", "20261123T185420Z",
            "0000-01-01T00:00:00Z", "２０２６-11-23T18:54:20Z", "-2026-11-23T18:54:20Z",
        ] {
            #expect(Dates.iso8601(text) == nil, "\(text)")
        }
    }
}
