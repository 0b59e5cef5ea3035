import AuthenticationServices
import CredentialExchangeFormat
import Foundation
import Testing

@Suite("Codable to and from CXF JSON")
struct CodingTests {
    /// CXF JSON with something Apple's types cannot hold at each level (see `omissionsReported`).
    static let mixedCXF = #"""
        {
          "version": {"major": 1, "minor": 0},
          "exporterRpId": "exporter.example",
          "exporterDisplayName": "Exporter",
          "timestamp": 1731000000,
          "futureHeaderMember": 1,
          "accounts": [{
            "id": "YWNjdA",
            "username": "alice",
            "email": "a@example.com",
            "extensions": [{"name": "shared", "accessors": []}],
            "collections": [{
              "id": "Y29s", "title": "C", "items": [{"item": "aXRlbQ"}],
              "subCollections": [{"id": "c3Vi", "title": "Sub", "items": []}],
              "extensions": [{"name": "shared", "accessors": [
                {"type": "user", "accountId": "Ym9i", "name": "Bob", "permissions": ["read"]}]}]
            }],
            "items": [{
              "id": "aXRlbQ",
              "creationAt": 1700000000,
              "title": "Login",
              "scope": {
                "urls": ["https://example.com", ""],
                "androidApps": [
                  {"bundleId": "com.example", "certificate": {"fingerprint": "AAEC", "hashAlg": "sha512-custom"}}]
              },
              "credentials": [
                {"type": "basic-auth", "username": {"fieldType": "string", "value": "alice"},
                 "password": {"fieldType": "concealed-string", "value": "pw", "strength": 3}},
                {"type": "file", "id": "ZmlsZQ", "name": "a.txt", "decryptedSize": 12, "integrityHash": "AAAA"},
                {"type": "future-credential", "x": 1},
                {"type": "totp", "secret": "gezd gnbv gy3t qojq gezd gnbv gy3t qojq",
                 "period": 30, "digits": 6, "algorithm": "SHA1"},
                {"type": "totp", "secret": "not base32!", "period": 30, "digits": 6, "algorithm": "sha1"},
                {"type": "custom-fields", "fields": [
                  {"fieldType": "future-type", "value": "v"},
                  {"fieldType": "string", "value": "w", "extensions": [{"name": "x"}]}]},
                {"type": "passkey", "credentialId": "+/8=", "rpId": "example.com", "username": "alice",
                 "userDisplayName": "Alice", "userHandle": "AAEC", "key": "MC4CAQ",
                 "fido2Extensions": {
                   "hmacCredentials": {"algorithm": "hmac-sha512-future", "credWithUV": "AA", "credWithoutUV": "AQ"},
                   "credBlob": "AAA", "payments": true, "largeBlob": {"uncompressedSize": 10, "data": "eJw"}}}
              ],
              "extensions": [
                {"name": "shared", "accessors": [
                  {"type": "user", "accountId": "Ym9i", "name": "Bob", "permissions": ["read", "fly"]},
                  {"type": "robot", "accountId": "cg", "name": "R", "permissions": ["read"]},
                  {"type": "group", "accountId": "dA", "name": "T", "permissions": ["fly"]}]},
                {"name": "future-extension", "a": 1}
              ]
            }]
          }]
        }
        """#

    @Test("JSONEncoder writes CXF that CXF.Decoder reads with no diagnostic and that converts back equal")
    func encodeThenFastDecode() throws {
        let json = try Sample.jsonEncoder.encode(Sample.export)
        let decoded = try CXF.Decoder().decode(json)
        #expect(decoded.diagnostics == [])
        #expect(decoded.document == CXF.Document(Sample.export))
        var omissions: [ASExportedCredentialData.CXFOmission] = []
        #expect(try ASExportedCredentialData(cxf: decoded.document, omissions: &omissions) == Sample.export)
        #expect(omissions == [])
    }

    @Test("JSONEncoder and cxfJSON() write the same JSON, and JSONDecoder reads both back")
    func encodersAgree() throws {
        let viaCodable = try Sample.jsonEncoder.encode(Sample.export)
        let viaCXF = Sample.export.cxfJSON()
        let a = try JSONSerialization.jsonObject(with: viaCodable) as! NSDictionary
        let b = try JSONSerialization.jsonObject(with: viaCXF) as! NSDictionary
        #expect(a == b)
        #expect(try Sample.jsonDecoder.decode(ASExportedCredentialData.self, from: viaCXF) == Sample.export)
        #expect(try Sample.jsonDecoder.decode(ASExportedCredentialData.self, from: viaCodable) == Sample.export)
        #expect(try ASExportedCredentialData(cxfJSON: viaCodable) == Sample.export)
    }

    @Test("encoded JSON uses CXF's member names, not Apple's Swift names")
    func wireNames() throws {
        let text = String(decoding: try Sample.jsonEncoder.encode(Sample.export), as: UTF8.self)
        for wire in [
            "version", "exporterRpId", "username", "creationAt", "modifiedAt", "subCollections", "rpId", "credentialId",
            "tel", "bundleId", "hashAlg", "credWithUV", "credWithoutUV", "accountId", "androidApps", "fido2Extensions",
            "largeBlob", "uncompressedSize", "fieldType", "accessors", "permissions",
        ] {
            #expect(text.contains("\"\(wire)\":"), "missing \(wire)")
        }
        for swiftName in [
            "formatVersion", "exporterRelyingPartyIdentifier", "userName", "created", "lastModified", "subcollections",
            "relyingPartyIdentifier", "credentialID", "telephone", "bundleID", "hashAlgorithm", "credentialWithUV",
            "accountID",
        ] {
            #expect(!text.contains("\"\(swiftName)\":"), "found \(swiftName)")
        }
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as! [String: Any]
        #expect(object["version"] as? [String: Int] == ["major": 1, "minor": 0])
        #expect(object["timestamp"] as? Int == 1_731_000_000)
        // Credentials carry their type, with CXF's spelling.
        for type in [
            "basic-auth", "api-key", "credit-card", "custom-fields", "drivers-license", "generated-password",
            "identity-document", "item-reference", "person-name", "ssh-key", "totp", "wifi", "note", "passkey",
            "passport", "address",
        ] {
            #expect(text.contains(#""type":"\#(type)""#), "missing type \(type)")
        }
        #expect(text.contains(#""fieldType":"concealed-string""#))
        #expect(text.contains(#""fieldType":"wifi-network-security-type""#))
        #expect(text.contains(#""permissions":["read","readSecret","update","create","delete","share","manage"]"#))
        // Bytes are unpadded base64url: FB EF BE FB FF is "-----_8", never base64's "+++++/8=".
        #expect(text.contains(#""credentialId":"-----_8""#))
        #expect(text.contains(#""secret":"GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ""#))
        #expect(!text.contains("="))
    }

    @Test("a credential encodes alone with its type")
    func credentialAlone() throws {
        let totp = ASImportableCredential.totp(
            .init(secret: Sample.totpSecret, period: 30, digits: 6, userName: nil, algorithm: .sha1)
        )
        let object = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(totp)) as! [String: Any]
        #expect(object["type"] as? String == "totp")
        #expect(object["secret"] as? String == "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        #expect(object["algorithm"] as? String == "sha1")
        #expect(object["username"] == nil && object["issuer"] == nil)
        #expect(try JSONDecoder().decode(ASImportableCredential.self, from: try JSONEncoder().encode(totp)) == totp)
    }

    @Test("JSONDecoder reads CXF JSON exactly as the conversion path does")
    func decoderMatchesConversion() throws {
        let json = Data(Self.mixedCXF.utf8)
        let viaCodable = try Sample.jsonDecoder.decode(ASExportedCredentialData.self, from: json)
        let viaCXF = try ASExportedCredentialData(cxfJSON: json)
        #expect(viaCodable == viaCXF)
        #expect(viaCodable.accounts[0].items[0].credentials.count == 4)
        #expect(viaCodable.accounts[0].collections[0].subcollections.map(\.title) == ["Sub"])
        guard case .totp(let totp) = viaCodable.accounts[0].items[0].credentials[1] else {
            Issue.record("expected the lenient TOTP")
            return
        }
        #expect(totp.secret == Sample.totpSecret)
    }

    @Test("JSONDecoder reads the CXF module's full fixture, every type, as the conversion path does")
    func fullFixture() throws {
        let json = try Sample.cxfFixture("full.json")
        let viaCodable = try Sample.jsonDecoder.decode(ASExportedCredentialData.self, from: json)
        var omissions: [ASExportedCredentialData.CXFOmission] = []
        let viaCXF = try ASExportedCredentialData(cxfJSON: json, omissions: &omissions)
        #expect(viaCodable == viaCXF)
        #expect(viaCodable.exporterRelyingPartyIdentifier == "exporter.example")
        #expect(viaCodable.timestamp == Date(timeIntervalSince1970: 1_731_000_000))
        let account = try #require(viaCodable.accounts.first)
        #expect(account.userName == "alice")
        let labels = Set(
            account.items.flatMap(\.credentials).compactMap { Mirror(reflecting: $0).children.first?.label }
        )
        #expect(labels.count == 16)
        // The file credential is the one credential left out.
        let dropped = omissions.filter { $0.path.hasSuffix("/credentials/0") }
        #expect(dropped.count == 1)
        #expect(dropped.first?.reason.contains("file") == true)
        #expect(omissions.contains { $0.path == "/accounts/0/collections/0/extensions/0" })
    }

    @Test("Apple's subcollections spelling is read too")
    func appleSubcollectionsKey() throws {
        let json = #"{"id":"Yw","title":"C","items":[],"subcollections":[{"id":"ZA","title":"D","items":[]}]}"#
        let collection = try JSONDecoder().decode(ASImportableCollection.self, from: Data(json.utf8))
        #expect(collection.subcollections.map(\.title) == ["D"])
    }

    @Test("bytes are read from base64url and base64, padded or not", arguments: ["-_8", "-_8=", "+/8", "+/8="])
    func base64Variants(encoded: String) throws {
        let json = #"{"item":"\#(encoded)","account":"\#(encoded)"}"#
        let linked = try JSONDecoder().decode(ASImportableLinkedItem.self, from: Data(json.utf8))
        #expect(linked.item == Data([0xFB, 0xFF]))
        #expect(linked.account == Data([0xFB, 0xFF]))
        let passkey =
            #"{"credentialId":"\#(encoded)","rpId":"r","username":"u","#
            + #""userDisplayName":"d","userHandle":"AA","key":"AA"}"#
        #expect(
            try JSONDecoder().decode(ASImportableCredential.Passkey.self, from: Data(passkey.utf8)).credentialID
                == Data([0xFB, 0xFF])
        )
    }

    @Test("binary members that are not base64 fail; ids that are not base64 are their text")
    func invalidBase64() throws {
        let passkey =
            #"{"credentialId":"not base64!","rpId":"r","username":"u","#
            + #""userDisplayName":"d","userHandle":"AA","key":"AA"}"#
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ASImportableCredential.Passkey.self, from: Data(passkey.utf8))
        }
        let linked = try JSONDecoder().decode(ASImportableLinkedItem.self, from: Data(#"{"item":"item #1"}"#.utf8))
        #expect(linked.item == Data("item #1".utf8))
    }

    @Test("FormatVersion is the version object and rejects another major version")
    func formatVersion() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(
            String(decoding: try encoder.encode(ASExportedCredentialData.FormatVersion.v1), as: UTF8.self)
                == #"{"major":1,"minor":0}"#
        )
        #expect(
            try JSONDecoder().decode(
                ASExportedCredentialData.FormatVersion.self,
                from: Data(#"{"major":1,"minor":0}"#.utf8)
            ) == .v1
        )
        // CXF minor versions are additive: 1.7 reads as v1.
        #expect(
            try JSONDecoder().decode(
                ASExportedCredentialData.FormatVersion.self,
                from: Data(#"{"major":1,"minor":7}"#.utf8)
            ) == .v1
        )
        #expect {
            try JSONDecoder().decode(
                ASExportedCredentialData.FormatVersion.self,
                from: Data(#"{"major":2,"minor":0}"#.utf8)
            )
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.debugDescription.contains("version 2.0")
                && context.debugDescription.contains("only version 1.x")
        }
        #expect(ASExportedCredentialData.FormatVersion.allCases == [.v1])
        #expect(ASExportedCredentialData.FormatVersion(rawValue: "1.0") == .v1)
    }

    @Test("a whole document of major version 2 is rejected on both paths; 1.7 is read")
    func versionFixtures() throws {
        let v2 = try Sample.cxfFixture("version-2.json")
        #expect(throws: DecodingError.self) { try Sample.jsonDecoder.decode(ASExportedCredentialData.self, from: v2) }
        #expect(throws: DecodingError.self) { try ASExportedCredentialData(cxfJSON: v2) }

        let v17 = try Sample.cxfFixture("version-1-7.json")
        var omissions: [ASExportedCredentialData.CXFOmission] = []
        let viaCXF = try ASExportedCredentialData(cxfJSON: v17, omissions: &omissions)
        #expect(try Sample.jsonDecoder.decode(ASExportedCredentialData.self, from: v17) == viaCXF)
        #expect(viaCXF.exporterDisplayName == "Newer")
        #expect(
            Set(omissions.map(\.path)) == [
                "/version/patch", "/newTopLevel", "/accounts/0/items/0/newItemMember",
                "/accounts/0/items/0/credentials/0/newMember", "/accounts/0/items/0/credentials/0/password/strength",
            ]
        )
    }

    @Test("any coder reaches the CXF codec: a property list round-trips, dates ignore JSONDecoder's strategy")
    func anyCoder() throws {
        let plist = try PropertyListEncoder().encode(Sample.export)
        #expect(try PropertyListDecoder().decode(ASExportedCredentialData.self, from: plist) == Sample.export)
        // The default date strategy (seconds since 2001) is not what CXF means: timestamps are Unix seconds.
        let json = try JSONEncoder().encode(Sample.export)
        let object = try JSONSerialization.jsonObject(with: json) as! [String: Any]
        #expect(object["timestamp"] as? Int == 1_731_000_000)
        #expect(try JSONDecoder().decode(ASExportedCredentialData.self, from: json) == Sample.export)
    }

    @Test("a payload alone has no type member and reads back; a TOTP secret that is not Base32 throws, unquoted")
    func payloadAlone() throws {
        let totp = ASImportableCredential.TOTP(
            secret: Sample.totpSecret,
            period: 30,
            digits: 6,
            userName: "alice",
            algorithm: .sha256
        )
        let json = try JSONEncoder().encode(totp)
        let object = try JSONSerialization.jsonObject(with: json) as! [String: Any]
        #expect(object["type"] == nil && object["algorithm"] as? String == "sha256")
        #expect(try JSONDecoder().decode(ASImportableCredential.TOTP.self, from: json) == totp)
        // CXF's defaults for what an exporter left out, and its spellings.
        let sparse = try JSONDecoder().decode(
            ASImportableCredential.TOTP.self,
            from: Data(#"{"secret":"gezd gnbv","algorithm":"SHA512"}"#.utf8)
        )
        #expect(sparse.period == 30 && sparse.digits == 6 && sparse.algorithm == .sha512)
        #expect {
            try JSONDecoder().decode(
                ASImportableCredential.TOTP.self,
                from: Data(#"{"secret":"secret!1"}"#.utf8)
            )
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.debugDescription.contains("not Base32") && !context.debugDescription.contains("secret!1")
        }
    }

    @Test("a member of the wrong JSON type is left out as an import leaves it out, and the rest is read")
    func wrongTypeMember() throws {
        // A number where text belongs is read as its text, as CXF.Decoder reads it; an array is not.
        let json = Data(#"{"id":"aXRlbQ","title":[5],"subtitle":5,"credentials":[],"favorite":true}"#.utf8)
        let item = try JSONDecoder().decode(ASImportableItem.self, from: json)
        #expect(item.title == "" && item.subtitle == "5")
        #expect(item.favorite && item.id == Data("item".utf8))
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ASImportableItem.self, from: Data("[]".utf8)) }
    }

    @Test("the shape of a document is decided by its members, not their order: a header's version is always checked")
    func shapeByPresence() throws {
        // JSONDecoder keeps no order: with an account's members ahead of the header's, the
        // document must still be read as the header it is, and its major version 2 refused.
        let json = Data(
            #"{"items":[{"id":"aQ","title":"t","credentials":[]}],"username":"","email":"","version":{"major":2,"minor":0},"exporterRpId":"x","exporterDisplayName":"x","timestamp":0,"accounts":[]}"#
                .utf8
        )
        for _ in 0..<8 {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(ASExportedCredentialData.self, from: json) }
        }
        #expect(throws: DecodingError.self) { try ASExportedCredentialData(cxfJSON: json) }
    }

    @Test("a coder that nests deeper than the codec's limit is refused, not followed")
    func deepCoder() throws {
        var deep = JSONValue.string("x")
        for _ in 0..<600 { deep = .array([deep]) }
        let plist = try PropertyListEncoder().encode(deep)
        #expect(throws: DecodingError.self) { try PropertyListDecoder().decode(JSONValue.self, from: plist) }
    }

    @Test("not JSON is a CXF decoding error with a position")
    func notJSON() {
        #expect(throws: CXFDecodingError.self) { try ASExportedCredentialData(cxfJSON: Data("{\"version\":".utf8)) }
    }
}

@Suite("Apple's API surface")
struct APISurfaceTests {
    @Test("the 26.0 and 26.4 initialisers of ASImportableItem both resolve")
    func itemInitialisers() {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        // As 2FAS calls it (26.0): non-optional dates, no extensions.
        let old = ASImportableItem(
            id: Data(),
            created: date,
            lastModified: date,
            title: "t",
            scope: nil,
            credentials: [],
            tags: []
        )
        // 26.4: dates left out, extensions given.
        let new = ASImportableItem(id: Data(), title: "t", credentials: [], extensions: [.shared(.init(accessors: []))])
        let optionalDate: Date? = nil
        let mixed = ASImportableItem(id: Data(), created: optionalDate, lastModified: date, title: "t", credentials: [])
        #expect(old.created == date && old.extensions == [] && old.favorite == false)
        #expect(new.created == nil && new.extensions.count == 1)
        #expect(mixed.created == nil && mixed.lastModified == date)
    }

    @Test("call sites from apps built against Apple's SDK compile")
    func appleCallSites() {
        let field = ASImportableEditableField(id: nil, fieldType: .string, value: "x")
        let basic = ASImportableCredential.BasicAuthentication(userName: field, password: nil)
        let passkey = ASImportableCredential.Passkey(
            credentialID: Data(),
            relyingPartyIdentifier: "r",
            userName: "u",
            userDisplayName: "d",
            userHandle: Data(),
            key: Data(),
            fido2Extensions: nil
        )
        let scope = ASImportableCredentialScope(urls: [URL(string: "https://a.example")!])
        let app = ASImportableCredentialScope.AndroidAppID(
            bundleID: "b",
            certificate: .init(fingerprint: Data(), hashAlgorithm: "sha256"),
            name: nil
        )
        let wifi = ASImportableCredential.WiFi(ssid: field, networkSecurityType: nil, passphrase: nil)
        let custom = ASImportableCredential.CustomFields(fields: [field])
        let export = ASExportedCredentialData(
            accounts: [],
            formatVersion: .v1,
            exporterRelyingPartyIdentifier: "e",
            exporterDisplayName: "E",
            timestamp: Date()
        )
        #expect(basic.userName == field && passkey.fido2Extensions == nil && scope.androidApps == [])
        #expect(app.name == nil && wifi.hidden == nil && custom.id == nil && export.accounts == [])
        #expect(ASImportableFIDO2HMACCredential.Algorithm(rawValue: "hmac-sha256") == .hmacSHA256)
        #expect(ASImportableFIDO2HMACCredential.Algorithm(rawValue: "hmac-sha512") == nil)
        #expect(ASImportableExtension.Shared.SharingAccessor.Permission.readSecret.rawValue == "readSecret")
        #expect(ASImportableExtension.Shared.SharingAccessor.AccessorType(rawValue: "group") == .group)
        #expect(ASImportableEditableField.FieldType(rawValue: "year-month") == .yearMonth)
        #expect(ASImportableEditableField.FieldType.subdivisionCode.rawValue == "subdivision-code")
        #expect(ASImportableCredential.TOTP.Algorithm(rawValue: "sha512") == .sha512)
    }

    @Test("the user-activity constants are their names")
    func constants() {
        #expect(ASCredentialExchangeActivity == "ASCredentialExchangeActivity")
        #expect(ASCredentialImportToken == "ASCredentialImportToken")
    }

    @Test("descriptions hide concealed values and generated passwords")
    func redaction() {
        let basic = ASImportableCredential.basicAuthentication(
            .init(
                userName: .init(id: nil, fieldType: .string, value: "alice"),
                password: .init(id: nil, fieldType: .concealedString, value: "hunter2")
            )
        )
        let text = "\(basic) \(String(reflecting: basic))"
        #expect(text.contains("alice"))
        #expect(!text.contains("hunter2"))
        let generated = ASImportableCredential.generatedPassword(.init(password: "s3cr3t-pw"))
        #expect(!"\(generated) \(String(reflecting: generated))".contains("s3cr3t-pw"))
    }
}
