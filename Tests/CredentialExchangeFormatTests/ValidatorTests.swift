import CredentialExchangeFormat
import Foundation
import KeyportEncoding
import Testing

/// A header document with one account holding `items` (JSON text of the items array's elements).
func document(items: String, collections: String = "", version: String = #"{"major":1,"minor":0}"#) -> String {
    #"""
    {"version":\#(version),"exporterRpId":"e.example","exporterDisplayName":"E","timestamp":1700000000,
     "accounts":[{"id":"YWNj","username":"u","email":"u@example.com","collections":[\#(collections)],"items":[\#(items)]}]}
    """#
}

/// One item (id "aXRlbQ") with one credential.
func item(_ credential: String, id: String = "aXRlbQ") -> String {
    #"{"id":"\#(id)","title":"t","credentials":[\#(credential)]}"#
}

func field(_ type: String, _ value: String) -> String { #"{"fieldType":"\#(type)","value":"\#(value)"}"# }

/// Decodes and validates, returning every diagnostic.
func check(_ json: String) throws -> [Diagnostic] {
    let decoded = try CXF.Decoder().decode(json)
    return decoded.diagnostics + CXF.Validator().validate(decoded.document)
}

@Suite("Validator rules")
struct ValidatorTests {
    @Test("the full fixture is valid, with no finding at all")
    func fullFixtureIsClean() throws {
        let decoded = try Fixture.decode("full.json")
        #expect(CXF.Validator(verifyKeyPairs: true).validate(decoded.document) == [])
    }

    @Test("version gate: major 1 with any minor passes; another major is an error")
    func versionGate() throws {
        #expect(try check(document(items: "", version: #"{"major":1,"minor":9}"#)) == [])
        let findings = try check(document(items: "", version: #"{"major":2,"minor":0}"#))
        let finding = try #require(findings.first(.unsupportedVersion))
        #expect(finding.severity == .error)
        #expect(finding.path == "/version")
        #expect(finding.message.contains("2.0"))
    }

    @Test("ids: at most 64 bytes, not empty")
    func idLength() throws {
        let ok = Base64URL.encode([UInt8](repeating: 7, count: 64))
        let long = Base64URL.encode([UInt8](repeating: 7, count: 65))
        #expect(try check(document(items: item(#"{"type":"note","content":\#(field("string", "x"))}"#, id: ok))) == [])
        let findings = try check(
            document(items: item(#"{"type":"note","content":\#(field("string", "x"))}"#, id: long))
        )
        #expect(findings.first(.idTooLong)?.path == "/accounts/0/items/0/id")
        #expect(findings.first(.idTooLong)?.severity == .warning)  // an importer can store it, or re-key it
        // An editable field's id is graded the same way.
        let longField = #"{"id":"\#(long)","fieldType":"string","value":"x"}"#
        let fieldFindings = try check(document(items: item(#"{"type":"note","content":\#(longField)}"#, id: ok)))
        #expect(fieldFindings.first(.idTooLong)?.path == "/accounts/0/items/0/credentials/0/content/id")
        #expect(fieldFindings.first(.idTooLong)?.severity == .warning)
        let empty = try check(document(items: item(#"{"type":"note","content":\#(field("string", "x"))}"#, id: "")))
        #expect(empty.first(.emptyID)?.severity == .warning)
    }

    @Test("ids are unique within an account, items and collections together")
    func duplicateIDs() throws {
        let note = #"{"type":"note","content":\#(field("string", "x"))}"#
        let findings = try check(
            document(
                items: item(note) + "," + item(note),
                collections: #"{"id":"aXRlbQ","title":"c","items":[]}"#
            )
        )
        #expect(
            findings.filter { $0.code == .duplicateID }.map(\.path) == [
                "/accounts/0/items/1/id", "/accounts/0/collections/0/id",
            ]
        )
    }

    @Test("links to items that are not there are reported")
    func danglingLinks() throws {
        let note = #"{"type":"note","content":\#(field("string", "x"))}"#
        let findings = try check(
            document(
                items: item(note) + ","
                    + item(#"{"type":"item-reference","reference":{"item":"bm9uZQ","account":"b3RoZXI"}}"#, id: "cmVm"),
                collections: #"{"id":"Y29s","title":"c","items":[{"item":"aXRlbQ"},{"item":"bWlzc2luZw"}]}"#
            )
        )
        let dangling = findings.filter { $0.code == .danglingLinkedItem }
        #expect(
            dangling.map(\.path) == [
                "/accounts/0/items/1/credentials/0/reference/account", "/accounts/0/collections/0/items/1/item",
            ]
        )
        #expect(dangling.allSatisfy { $0.severity == .warning })
    }

    @Test(
        "TOTP: Base32 secret and usable parameters",
        arguments: [
            (#""secret":"JBSWY3DPEHPK3PXP","period":30,"digits":6"#, nil, .error),
            (#""secret":"JBSW Y3DP-EHPK-3PXP","period":30,"digits":6"#, nil, .error),
            (#""secret":"JBSWY3DP!","period":30,"digits":6"#, "invalid-totp-secret", .error),
            (#""secret":"","period":30,"digits":6"#, "invalid-totp-secret", .error),
            (#""secret":"JBSWY3DPEHPK3PXP","period":0,"digits":6"#, "invalid-totp-parameter", .error),
            (#""secret":"JBSWY3DPEHPK3PXP","period":30,"digits":11"#, "invalid-totp-parameter", .error),
            // Fewer digits than RFC 4226 asks for still give codes: a warning.
            (#""secret":"JBSWY3DPEHPK3PXP","period":30,"digits":4"#, "invalid-totp-parameter", .warning),
        ] as [(String, String?, Diagnostic.Severity)]
    )
    func totp(members: String, code: String?, severity: Diagnostic.Severity) throws {
        let findings = try check(document(items: item(#"{"type":"totp",\#(members),"algorithm":"sha1"}"#)))
        #expect(findings.map(\.code.rawValue) == (code.map { [$0] } ?? []))
        #expect(
            findings.allSatisfy { $0.severity == severity && $0.path.hasPrefix("/accounts/0/items/0/credentials/0/") }
        )
    }

    @Test(
        "field values against their field type",
        arguments: [
            ("date", "2024-02-29", nil), ("date", "2023-02-29", "invalid-field-value"),
            ("date", "2024-1-01", "invalid-field-value"),
            ("year-month", "2024-12", nil), ("year-month", "2024-13", "invalid-field-value"),
            ("boolean", "true", nil), ("boolean", "yes", "invalid-field-value"),
            ("country-code", "US", nil), ("country-code", "usa", "invalid-field-value"),
            ("subdivision-code", "US-CA", nil), ("subdivision-code", "GB-ENG", nil),
            ("subdivision-code", "US_CA", "invalid-field-value"),
            ("wifi-network-security-type", "wpa2-personal", nil),
            ("wifi-network-security-type", "wpa2", "invalid-field-value"),
            ("email", "a@b.example", nil), ("email", "nobody", "invalid-field-value"),
            ("number", "-12.5", nil), ("number", "twelve", "invalid-field-value"),
            ("date", "", "empty-field-value"), ("string", "", nil),
            ("x-new-type", "whatever", "unknown-field-type"),
        ] as [(String, String, String?)]
    )
    func fieldValues(type: String, value: String, code: String?) throws {
        let findings = try check(document(items: item(#"{"type":"custom-fields","fields":[\#(field(type, value))]}"#)))
        #expect(findings.map(\.code.rawValue) == (code.map { [$0] } ?? []))
        if let finding = findings.first {
            #expect(finding.path.hasPrefix("/accounts/0/items/0/credentials/0/fields/0/"))
            // A custom field calls for no type, so its value is never quoted: it may be a secret.
            #expect(!finding.message.contains("'\(value)'") || value.isEmpty)
            #expect(finding.severity == .warning)
        }
    }

    @Test("a member holding a field of another type than it calls for is a warning")
    func unexpectedFieldType() throws {
        let findings = try check(document(items: item(#"{"type":"basic-auth","password":\#(field("string", "p"))}"#)))
        let finding = try #require(findings.first(.unexpectedFieldType))
        #expect(finding.severity == .warning)
        #expect(finding.path == "/accounts/0/items/0/credentials/0/password/fieldType")
    }

    func passkey(key: String, userHandle: String = "dXNlcg") -> String {
        #"{"type":"passkey","credentialId":"Y3JlZA","rpId":"example.com","username":"u","userDisplayName":"U","userHandle":"\#(userHandle)","key":"\#(key)"}"#
    }

    @Test("passkey keys must be PKCS#8 DER of a supported algorithm")
    func passkeyKeys() throws {
        let good = Base64URL.encode(try Fixture.key("p256"))
        #expect(try check(document(items: item(passkey(key: good)))) == [])
        let withoutPublicKey = Base64URL.encode(try Fixture.key("p256_nopub"))
        #expect(try check(document(items: item(passkey(key: withoutPublicKey)))) == [])
        let garbage = try check(document(items: item(passkey(key: "AAECAwQ"))))
        #expect(garbage.first(.invalidPrivateKey)?.path == "/accounts/0/items/0/credentials/0/key")
        let pem = try check(document(items: item(passkey(key: Base64URL.encode(try Fixture.key("p256_pem"))))))
        #expect(pem.first(.invalidPrivateKey)?.message.contains("PEM") == true)
        let longHandle = Base64URL.encode([UInt8](repeating: 1, count: 65))
        #expect(
            try check(document(items: item(passkey(key: good, userHandle: longHandle)))).first(.invalidFieldValue)
                != nil
        )
    }

    @Test("ssh keys: PKCS#8 whose algorithm matches keyType")
    func sshKeys() throws {
        let ed = Base64URL.encode(try Fixture.key("ed25519"))
        let rsa = Base64URL.encode(try Fixture.key("rsa"))
        #expect(
            try check(document(items: item(#"{"type":"ssh-key","keyType":"ssh-ed25519","privateKey":"\#(ed)"}"#))) == []
        )
        #expect(
            try check(document(items: item(#"{"type":"ssh-key","keyType":"rsa-sha2-512","privateKey":"\#(rsa)"}"#)))
                == []
        )
        let mismatch = try check(
            document(items: item(#"{"type":"ssh-key","keyType":"ssh-rsa","privateKey":"\#(ed)"}"#))
        )
        let finding = try #require(mismatch.first(.keyTypeMismatch))
        #expect(finding.message.contains("Ed25519"))
        #expect(finding.path == "/accounts/0/items/0/credentials/0/privateKey")
    }

    @Test("file integrity hashes are SHA-256 sized")
    func fileHash() throws {
        let hash = Base64URL.encode([UInt8](repeating: 9, count: 32))
        #expect(
            try check(
                document(
                    items: item(#"{"type":"file","id":"Zg","name":"a","decryptedSize":1,"integrityHash":"\#(hash)"}"#)
                )
            ) == []
        )
        let findings = try check(
            document(items: item(#"{"type":"file","id":"Zg","name":"a","decryptedSize":1,"integrityHash":"AAAA"}"#))
        )
        #expect(findings.first(.invalidIntegrityHash)?.severity == .warning)
    }

    @Test("timestamps outside 1970…3000 are warnings, milliseconds are named")
    func timestamps() throws {
        let findings = try check(
            document(
                items: #"{"id":"aQ","creationAt":-11644473600,"modifiedAt":1700000000000,"title":"t","credentials":[]}"#
            )
        )
        let times = findings.filter { $0.code == .timestampOutOfRange }
        #expect(times.map(\.path) == ["/accounts/0/items/0/creationAt", "/accounts/0/items/0/modifiedAt"])
        #expect(times.allSatisfy { $0.severity == .warning })
        #expect(times[1].message.contains("milliseconds"))
    }

    @Test("shared accessors with unknown types or no known permission are reported and ignored")
    func sharedAccessors() throws {
        let ext = #"""
            "extensions":[{"name":"shared","accessors":[
              {"type":"user","accountId":"YQ","name":"a","permissions":["read","fly"]},
              {"type":"robot","accountId":"Yg","name":"b","permissions":["read"]},
              {"type":"group","accountId":"Yw","name":"c","permissions":["fly"]}]}]
            """#
        let decoded = try CXF.Decoder().decode(document(items: #"{"id":"aQ","title":"t","credentials":[],\#(ext)}"#))
        let findings = CXF.Validator().validate(decoded.document)
        #expect(findings.map(\.code) == [.ignoredAccessor, .ignoredAccessor, .ignoredAccessor])
        #expect(
            findings.map(\.path) == [
                "/accounts/0/items/0/extensions/0/accessors/0/permissions",
                "/accounts/0/items/0/extensions/0/accessors/1/type",
                "/accounts/0/items/0/extensions/0/accessors/2/permissions",
            ]
        )
        guard case .header(let header) = decoded.document,
            case .shared(let shared)? = header.accounts[0].items[0].extensions?.first
        else {
            Issue.record("expected a shared extension")
            return
        }
        #expect(shared.effectiveAccessors.map(\.name) == ["a"])
        #expect(shared.effectiveAccessors[0].permissions == [.read])
    }
}
