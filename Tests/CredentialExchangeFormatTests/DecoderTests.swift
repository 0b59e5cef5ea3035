import CredentialExchangeFormat
import Foundation
import Testing

@Suite("Tolerant decoding")
struct DecoderTests {
    @Test("an account-only export with the quirks real exporters write decodes element by element")
    func quirks() throws {
        let decoded = try Fixture.decode("account-only-quirks.json")
        guard case .account(let account) = decoded.document else {
            Issue.record("expected an account document")
            return
        }
        let d = decoded.diagnostics
        func at(_ path: String) -> [String] { d.filter { $0.path == path }.map(\.code.rawValue) }

        // the account: missing collections read as empty, unknown member kept
        #expect(account.collections == [])
        #expect(at("") == ["missing-member"])
        #expect(account.unknownMembers.map(\.key) == ["futureAccountMember"])

        // items: an item missing its id and credentials is read with stand-ins and warnings
        #expect(account.items.map(\.title) == ["Quirky login", "Padded id", "No id, no credentials"])
        #expect(at("/items/2") == ["missing-member", "missing-member"])

        let quirky = account.items[0]
        #expect(quirky.creationAt == -11_644_473_600)
        #expect(quirky.subtitle == nil)
        #expect(quirky.favorite == nil)
        #expect(quirky.unknownMembers == [JSONMember(key: "favorite", value: .string("yes"), unreadable: true)])
        #expect(d.first { $0.path == "/items/0/favorite" }?.severity == .error)
        #expect(at("/items/0/favorite") == ["wrong-type"])

        let credentials = quirky.credentials
        #expect(
            credentials.map(\.type) == [
                "basic-auth", "totp", "totp", "totp", "future-credential", "passkey", "wifi", "", "note", "credit-card",
            ]
        )
        guard case .basicAuth(let basic) = credentials[0] else { return }
        #expect(basic.username?.id == Data())  // "id": "" kept as empty
        #expect(basic.password?.fieldType == .string)  // wrong fieldType kept; the validator warns

        guard case .totp(let lower) = credentials[1] else { return }
        #expect(lower.algorithm == .sha1)  // "SHA1" in capitals
        #expect(lower.secret == "jbsw y3dp ehpk 3pxp")

        // md5 is not a CXF algorithm: kept verbatim with a warning, not an error
        guard case .unrecognized(let md5) = credentials[3] else { return }
        #expect(md5.reason.contains("md5"))
        #expect(at("/items/0/credentials/3") == ["unknown-credential-type"])
        #expect(at("/items/0/credentials/4") == ["unknown-credential-type"])
        // a passkey without its required members is malformed: kept verbatim with an error
        guard case .unrecognized(let passkey) = credentials[5] else { return }
        #expect(passkey.object["rpId"] == .string("example.com"))
        #expect(d.first { $0.path == "/items/0/credentials/5" }?.severity == .error)
        #expect(at("/items/0/credentials/7") == ["malformed-credential"])

        guard case .wifi(let wifi) = credentials[6] else { return }
        #expect(wifi.hidden?.value == "true")  // JSON true read as text
        #expect(wifi.networkSecurityType?.fieldType == .unknown("wpa-enterprise-radius"))
        #expect(at("/items/0/credentials/6/hidden/value") == ["coerced-value"])

        guard case .note(let note) = credentials[8] else { return }
        #expect(note.content.value == "a bare string where a field belongs")
        #expect(at("/items/0/credentials/8/content") == ["coerced-value"])

        // padded base64url ids and a numeric string where a number belongs
        #expect(account.items[1].id == Data("item-2\u{0}".utf8))
        guard case .file(let file) = account.items[1].credentials[0] else { return }
        #expect(file.decryptedSize == 12)
        #expect(at("/items/1/credentials/0/decryptedSize") == ["coerced-value"])
    }

    @Test("the validator on the quirks fixture reports what is wrong, and where")
    func quirksValidation() throws {
        let decoded = try Fixture.decode("account-only-quirks.json")
        let findings = CXF.Validator().validate(decoded.document)
        let summary = findings.map { "\($0.code) \($0.path)" }
        #expect(summary.contains("timestamp-out-of-range /items/0/creationAt"))
        #expect(summary.contains("timestamp-out-of-range /items/0/modifiedAt"))
        #expect(summary.contains("unexpected-field-type /items/0/credentials/0/password/fieldType"))
        #expect(summary.contains("invalid-totp-secret /items/0/credentials/2/secret"))
        #expect(summary.contains("unknown-field-type /items/0/credentials/6/networkSecurityType/fieldType"))
        #expect(summary.contains("unexpected-field-type /items/0/credentials/9/expiryDate/fieldType"))
        #expect(summary.contains("invalid-field-value /items/0/credentials/9/expiryDate/value"))
        #expect(summary.contains("invalid-integrity-hash /items/1/credentials/0/integrityHash"))
        #expect(summary.contains("empty-id /items/2/id"))
        #expect(!summary.contains { $0.hasPrefix("invalid-totp-secret /items/0/credentials/1") })
    }

    @Test("a top-level shape is recognised by its first distinctive member")
    func shapes() throws {
        // A header that does not give its version is not assumed to be 1.0.
        let unversioned = try decode(#"{"timestamp":1,"accounts":[]}"#)
        #expect(unversioned.document.version == .unknown)
        #expect(unversioned.diagnostics.first(.missingMember)?.severity == .error)
        #expect(try decode(#"{"email":"e"}"#).document.accounts.count == 1)
        #expect(throws: CXFDecodingError.self) { try decode(#"{"colour":"blue"}"#) }
        #expect(throws: CXFDecodingError.self) { try decode(#"[]"#) }
        // A header's member anywhere makes a header, whatever comes first: its version is checked,
        // and what only an account has is kept as the header's unknown members.
        let mixed = try decode(
            #"{"items":[{"id":"aQ","title":"t","credentials":[]}],"username":"","version":{"major":2,"minor":0},"accounts":[]}"#
        )
        guard case .header(let header) = mixed.document else {
            Issue.record("expected a header")
            return
        }
        #expect(header.version.major == 2)
        #expect(header.unknownMembers.map(\.key) == ["items", "username"])
        #expect(CXF.Validator().validate(mixed.document).contains { $0.code == .unsupportedVersion })
    }

    @Test(
        "JSON syntax errors name the line and column",
        arguments: [
            ("{\n  \"id\": \"YQ\",\n  \"items\": [1 2]\n}", 3, 15, "expected ',' or ']'"),
            ("{\"id\": \"YQ\", }", 1, 14, "member name"),
            ("{\"id\": \"Y\u{01}Q\"}", 1, 10, "control character"),
            ("{\"id\": tru}", 1, 8, "expected a value"),
            ("{\"email\": \"e\"} x", 1, 16, "after the document"),
            ("{\"email\": \"\\q\"}", 1, 12, "not a JSON escape"),
            // In a value nobody reads too: skipped values are checked.
            ("{\"email\": \"e\", \"x\": [\"\\u12zz\"]}", 1, 27, "four hex digits"),
            ("{\"email\": 01}", 1, 11, "must not start with 0"),
            ("{\"email\": \"e", 1, 11, "never closed"),
        ]
    )
    func syntaxErrors(json: String, line: Int, column: Int, message: String) {
        do {
            _ = try CXF.Decoder().decode(json)
            Issue.record("expected a syntax error")
        } catch {
            #expect(error.code == .syntax)
            #expect(error.line == line)
            #expect(error.column == column)
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test("nesting deeper than the limit is refused, not recursed into")
    func depthLimit() throws {
        let deep =
            #"{"email":"e","x":"# + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
            + "}"
        #expect {
            try CXF.Decoder().decode(deep)
        } throws: { ($0 as? CXFDecodingError)?.code == .tooDeep }
        // sub-collections nest within the default limit
        var collection = #"{"id":"Yw","title":"leaf","items":[]}"#
        for _ in 0..<12 { collection = #"{"id":"Yw","title":"c","items":[],"subCollections":[\#(collection)]}"# }
        let nested = try decode(#"{"email":"e","collections":[\#(collection)]}"#)
        var deepest = try #require(nested.document.accounts.first?.collections.first)
        while let next = deepest.subCollections?.first { deepest = next }
        #expect(deepest.title == "leaf")
        let small = CXF.Decoder(options: .init(maxDepth: 3))
        #expect(throws: CXFDecodingError.self) { try small.decode(#"{"email":"e","collections":[\#(collection)]}"#) }
    }

    @Test("documents over the size limit are refused before reading")
    func sizeLimit() {
        let decoder = CXF.Decoder(options: .init(maxDocumentSize: 10))
        #expect {
            try decoder.decode(#"{"email":"e@example.com"}"#)
        } throws: { ($0 as? CXFDecodingError)?.code == .tooLarge }
    }

    @Test("every truncation of a real document fails cleanly")
    func truncations() throws {
        let bytes = [UInt8](try Fixture.data("full.json"))
        var failures = 0
        for end in stride(from: 0, to: bytes.count, by: 7) {
            do {
                _ = try CXF.Decoder().decode(Array(bytes[..<end]))
            } catch {
                failures += 1
                #expect(error.offset <= end)
            }
        }
        #expect(failures == (bytes.count + 6) / 7)
    }

    @Test("invalid UTF-8 is replaced and reported, not fatal")
    func invalidUTF8() throws {
        var bytes = Array(#"{"email":"e","username":"a"#.utf8)
        bytes += [0xFF, 0xFE]
        bytes += Array(#"b"}"#.utf8)
        let decoded = try CXF.Decoder().decode(bytes)
        #expect(decoded.document.accounts[0].username == "a\u{FFFD}\u{FFFD}b")
        let finding = try #require(decoded.diagnostics.first(.invalidUTF8))
        #expect(finding.path == "/username")
        #expect(finding.severity == .warning)
    }

    @Test("a byte-order mark is skipped; a repeated member: the first is read, the repeat kept, an error")
    func bomAndDuplicates() throws {
        let decoded = try CXF.Decoder().decode([0xEF, 0xBB, 0xBF] + Array(#"{"email":"a","email":"b"}"#.utf8))
        #expect(decoded.document.accounts[0].email == "a")
        #expect(decoded.document.accounts[0].unknownMembers == [JSONMember(key: "email", value: .string("b"))])
        let finding = try #require(decoded.diagnostics.first(.duplicateMember))
        #expect(finding.severity == .error)
        #expect(finding.path == "/email")
    }
}
