import CredentialExchangeFormat
import Foundation
import Testing

@Suite("Decoding and canonical encoding")
struct RoundTripTests {
    @Test("the full fixture decodes every credential type with no diagnostic")
    func fullFixture() throws {
        let decoded = try Fixture.decode("full.json")
        #expect(decoded.diagnostics == [])
        guard case .header(let header) = decoded.document else {
            Issue.record("expected a header document")
            return
        }
        #expect(header.version == .v1_0)
        #expect(header.exporterRpId == "exporter.example")
        #expect(header.timestamp == 1_731_000_000)
        let account = try #require(header.accounts.first)
        #expect(account.id == Data("account-1".utf8))
        #expect(account.fullName == "Alice Doe")
        let types = Set(account.items.flatMap(\.credentials).map(\.type))
        #expect(types == Set(CXF.Credential.knownTypes))
        #expect(!account.items.flatMap(\.credentials).contains { if case .unrecognized = $0 { true } else { false } })

        let login = account.items[0]
        #expect(login.favorite == true)
        #expect(login.tags == ["work", "email"])
        #expect(login.scope?.androidApps.first?.certificate?.hashAlgorithm == .sha256)
        guard case .basicAuth(let basic) = login.credentials[0], case .passkey(let passkey) = login.credentials[2]
        else {
            Issue.record("unexpected credential order")
            return
        }
        #expect(basic.username?.id == Data("f1".utf8))
        #expect(basic.username?.label == "User")
        #expect(basic.password?.fieldType == .concealedString)
        #expect(passkey.fido2Extensions?.largeBlob?.uncompressedSize == 100)
        #expect(passkey.fido2Extensions?.payments == false)
        guard case .shared(let shared)? = login.extensions?.first else {
            Issue.record("expected the shared extension")
            return
        }
        #expect(shared.accessors.map(\.permissions.count) == [3, 5])
        #expect(account.collections[0].subCollections?[0].subCollections?[0].title == "Deeper")
        guard case .note(let note) = account.items[1].credentials[0] else {
            Issue.record("expected a note")
            return
        }
        #expect(note.content.value == "line one\nline two \"quoted\" é中")
    }

    @Test("decode → encode keeps every value of the source JSON", arguments: ["full.json", "version-1-7.json"])
    func encodingKeepsEverything(name: String) throws {
        let source = try Fixture.data(name)
        let decoded = try CXF.Decoder().decode(source)
        let encoded = CXF.Encoder().encodeData(decoded.document)
        #expect(try sameJSON(source, encoded))
    }

    @Test(
        "decode → encode → decode is lossless and the encoding is a fixed point",
        arguments: ["full.json", "account-only-quirks.json", "version-1-7.json", "version-2.json"]
    )
    func roundTrip(name: String) throws {
        let first = try Fixture.decode(name)
        let bytes = CXF.Encoder().encode(first.document)
        let second = try CXF.Decoder().decode(bytes)
        #expect(second.document == first.document)
        #expect(CXF.Encoder().encode(second.document) == bytes)
        let pretty = CXF.Encoder(options: .init(prettyPrinted: true)).encode(first.document)
        #expect(try CXF.Decoder().decode(pretty).document == first.document)
    }

    @Test("canonical form: unpadded base64url, integer seconds, omitted optionals, spec member order")
    func canonicalForm() throws {
        let decoded = try decode(
            #"""
            {"items":[{"title":"t","id":"aXRlbS0yAA==","subtitle":null,"credentials":[],"creationAt":5}],
             "email":"e","username":"u","id":"YQ==","collections":[]}
            """#
        )
        let text = String(decoding: CXF.Encoder().encode(decoded.document), as: UTF8.self)
        #expect(
            text
                == #"{"id":"YQ","username":"u","email":"e","collections":[],"items":[{"id":"aXRlbS0yAA","creationAt":5,"title":"t","credentials":[]}]}"#
        )
    }

    @Test("unknown members are written after the known ones, in source order, and none is dropped")
    func unknownMemberOrder() throws {
        var decoded = try decode(
            #"{"id":"YQ","zeta":1,"username":"u","alpha":{"b":2,"a":[true,null,1.50]},"email":"e","items":[],"collections":[],"fullName":7e2}"#
        )
        var text = String(decoding: CXF.Encoder().encode(decoded.document), as: UTF8.self)
        #expect(
            text
                == #"{"id":"YQ","username":"u","email":"e","fullName":"7e2","collections":[],"items":[],"zeta":1,"alpha":{"b":2,"a":[true,null,1.50]}}"#
        )
        // A wrong-typed member is kept under its own key; a program that sets the typed member
        // gets both written: the original is never dropped behind its back.
        decoded = try decode(
            #"{"id":"YQ","username":"u","email":"e","items":[{"id":"aQ","title":"t","credentials":[],"favorite":"maybe"}],"collections":[]}"#
        )
        guard case .account(var account) = decoded.document else { return }
        text = String(decoding: CXF.Encoder().encode(.account(account)), as: UTF8.self)
        #expect(text.contains(#""favorite":"maybe""#))
        account.items[0].favorite = true
        text = String(decoding: CXF.Encoder().encode(.account(account)), as: UTF8.self)
        #expect(text.contains(#""favorite":true"#))
        #expect(text.contains(#""favorite":"maybe""#))
    }

    @Test("strings with escapes, control characters and non-ASCII survive both ways")
    func stringEscapes() throws {
        let decoded = try decode(
            #"{"id":"YQ","username":"tab\there \"q\" \\ \/ \u00e9 \ud83d\ude00 \u0001","email":"","items":[],"collections":[]}"#
        )
        guard case .account(let account) = decoded.document else { return }
        #expect(account.username == "tab\there \"q\" \\ / é 😀 \u{01}")
        let text = String(decoding: CXF.Encoder().encode(decoded.document), as: UTF8.self)
        #expect(text.contains(#""username":"tab\there \"q\" \\ / é 😀 \u0001""#))
        #expect(try CXF.Decoder().decode(text).document == decoded.document)
    }

    @Test("the Swift model builds a document that decodes back equal")
    func modelBuiltDocument() throws {
        let item = CXF.Item(
            id: Data([1, 2, 3]),
            creationAt: -5,
            title: "Built",
            favorite: false,
            scope: .init(urls: ["https://a.example"]),
            credentials: [
                .basicAuth(
                    .init(username: .init(value: "u"), password: .init(fieldType: .concealedString, value: "p"))
                ),
                .totp(.init(secret: "JBSWY3DPEHPK3PXP", digits: 8, algorithm: .sha512)),
                .unrecognized(
                    .init(
                        object: .object([JSONMember(key: "type", value: .string("x-custom"))]),
                        reason: "unknown type"
                    )
                ),
            ],
            tags: []
        )
        let header = CXF.Header(
            exporterRpId: "r",
            exporterDisplayName: "d",
            timestamp: Int64.max,
            accounts: [CXF.Account(id: Data([9]), items: [item])]
        )
        let bytes = CXF.Encoder().encode(.header(header))
        let decoded = try CXF.Decoder().decode(bytes)
        #expect(decoded.document == .header(header))
        #expect(decoded.codes() == ["unknown-credential-type"])
    }
}

@Suite("Descriptions keep secrets out")
struct DescriptionTests {
    @Test("concealed fields, TOTP secrets, generated passwords and kept credentials print no secret")
    func redacted() throws {
        let concealed = CXF.EditableField(fieldType: .concealedString, value: "hunter2")
        #expect(!"\(concealed)".contains("hunter2"))
        #expect("\(concealed)".contains("7 characters"))
        #expect("\(CXF.EditableField(value: "visible"))".contains("visible"))
        #expect(!"\(CXF.TOTP(secret: "JBSWY3DPEHPK3PXP"))".contains("JBSW"))
        #expect(!String(reflecting: CXF.GeneratedPassword(password: "s3cret")).contains("s3cret"))
        let kept = CXF.UnrecognizedCredential(
            object: .object([
                JSONMember(key: "type", value: .string("x")), JSONMember(key: "password", value: .string("s3cret")),
            ]),
            reason: "unknown type"
        )
        #expect("\(kept)" == "UnrecognizedCredential(type: x, unknown type)")
        #expect(!"\(CXF.Credential.unrecognized(kept))".contains("s3cret"))
    }
}
