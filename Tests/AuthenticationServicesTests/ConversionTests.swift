import AuthenticationServices
import CredentialExchangeFormat
import Foundation
import Testing

@Suite("Conversion between Apple's types and the CXF model")
struct ConversionTests {
    @Test("the sample uses every credential case and every field type")
    func sampleCoversEverything() {
        var cases = Set<String>()
        var fieldTypes = Set<ASImportableEditableField.FieldType>()
        for credential in Sample.credentials {
            for payload in Mirror(reflecting: credential).children {
                cases.insert(payload.label ?? "")
                for member in Mirror(reflecting: payload.value).children {
                    if let field = member.value as? ASImportableEditableField { fieldTypes.insert(field.fieldType) }
                    if let fields = member.value as? [ASImportableEditableField] {
                        for field in fields { fieldTypes.insert(field.fieldType) }
                    }
                }
            }
        }
        #expect(cases.count == 16)
        #expect(fieldTypes.count == 10)
    }

    @Test("AS → CXF → AS is lossless")
    func roundTrip() throws {
        let cxf = CXF.Document(Sample.export)
        var omissions: [ASExportedCredentialData.CXFOmission] = []
        let back = try ASExportedCredentialData(cxf: cxf, omissions: &omissions)
        #expect(omissions == [])
        #expect(back == Sample.export)
        // Each credential on its own, too.
        for credential in Sample.credentials {
            #expect(ASImportableCredential(CXF.Credential(credential)) == credential)
        }
    }

    @Test("the CXF model gets the wire values: names, seconds, Base32, versions")
    func cxfValues() throws {
        guard case .header(let header) = CXF.Document(Sample.export) else {
            Issue.record("expected a header")
            return
        }
        #expect(header.version == .v1_0)
        #expect(header.exporterRpId == "exporter.example")
        #expect(header.timestamp == 1_731_000_000)
        let account = header.accounts[0]
        #expect(account.username == "alice")
        #expect(account.collections[0].creationAt == 1_690_000_000)
        #expect(account.collections[0].modifiedAt == 1_690_000_500)
        #expect(account.collections[0].subCollections?[0].subCollections?[0].title == "Deeper")
        #expect(account.collections[0].subCollections?[0].subCollections?[0].subCollections == nil)
        let item = account.items[0]
        #expect(item.favorite == true)
        #expect(item.tags == ["work", "email"])
        #expect(item.scope?.urls == ["https://example.com/login", "https://example.org"])
        #expect(item.scope?.androidApps[0].certificate?.hashAlgorithm == .sha256)
        #expect(header.accounts[1].items[0].favorite == nil)
        #expect(header.accounts[1].items[0].tags == nil)
        #expect(header.accounts[1].items[0].extensions == nil)

        let byType = Dictionary(uniqueKeysWithValues: item.credentials.map { ($0.type, $0) })
        #expect(Set(byType.keys) == Set(CXF.Credential.knownTypes).subtracting(["file"]))
        guard case .totp(let totp) = byType["totp"], case .passkey(let passkey) = byType["passkey"],
            case .address(let address) = byType["address"], case .basicAuth(let basic) = byType["basic-auth"]
        else {
            Issue.record("missing credentials")
            return
        }
        #expect(totp.secret == "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        #expect(totp.period == 30 && totp.digits == 8 && totp.algorithm == .sha256)
        #expect(totp.username == "alice")
        #expect(passkey.credentialId == Sample.awkwardBytes)
        #expect(passkey.rpId == "example.com")
        #expect(passkey.fido2Extensions?.hmacCredentials?.algorithm == "hmac-sha256")
        #expect(passkey.fido2Extensions?.largeBlob?.uncompressedSize == 100)
        #expect(address.tel?.value == "+1 555 0100")
        #expect(address.territory?.fieldType == .subdivisionCode)
        #expect(basic.username?.value == "alice@example.com")
        #expect(basic.password?.fieldType == .concealedString)
        guard case .shared(let shared)? = item.extensions?.first else {
            Issue.record("expected the shared extension")
            return
        }
        #expect(
            shared.accessors[0].permissions.map(\.rawValue) == [
                "read", "readSecret", "update", "create", "delete", "share", "manage",
            ]
        )
        #expect(shared.accessors[1].type == .group)
        // The canonical CXF validator finds nothing wrong with the converted document.
        let problems = CXF.Validator().validate(CXF.Document(Sample.export)).filter {
            $0.severity == .error && $0.code != .invalidPrivateKey
        }
        #expect(problems == [])
    }

    @Test("a TOTP secret is raw bytes in Apple's type and Base32 in CXF, read leniently")
    func totpBase32() throws {
        let cxf = CXF.TOTP(secret: "gezd-gnbv gy3t qojq gezd gnbv gy3t qojq====", digits: 6, algorithm: .sha512)
        guard case .totp(let totp)? = ASImportableCredential(.totp(cxf)) else {
            Issue.record("the TOTP did not convert")
            return
        }
        #expect(totp.secret == Sample.totpSecret)
        #expect(totp.algorithm == .sha512)
        guard case .totp(let back) = CXF.Credential(.totp(totp)) else {
            Issue.record("expected a TOTP")
            return
        }
        #expect(back.secret == "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")

        // Not Base32: Apple's type cannot hold it.
        #expect(ASImportableCredential(.totp(CXF.TOTP(secret: "not base32!"))) == nil)
        // Does not fit UInt16.
        #expect(ASImportableCredential(.totp(CXF.TOTP(secret: "GEZA", period: 70_000))) == nil)
    }

    @Test("dates are whole seconds in CXF, rounded toward zero")
    func dates() throws {
        var item = Sample.plainItem
        item.created = Date(timeIntervalSince1970: 1_600_000_000.9)
        item.lastModified = Date(timeIntervalSince1970: -1.5)
        let cxf = CXF.Item(item)
        #expect(cxf.creationAt == 1_600_000_000)
        #expect(cxf.modifiedAt == -1)
        #expect(ASImportableItem(cxf).created == Date(timeIntervalSince1970: 1_600_000_000))
        #expect(
            ASImportableItem(CXF.Item(id: Data(), creationAt: -11_644_473_600, title: "")).created
                == Date(timeIntervalSince1970: -11_644_473_600)
        )
    }

    @Test("an account-only document converts with default header values")
    func accountOnly() throws {
        let account = CXF.Account(
            id: Data("a".utf8),
            username: "bob",
            email: "bob@example.com",
            items: [
                CXF.Item(id: Data("i".utf8), title: "Login", credentials: [.generatedPassword(.init(password: "pw"))])
            ]
        )
        var omissions: [ASExportedCredentialData.CXFOmission] = []
        let data = try ASExportedCredentialData(cxf: .account(account), omissions: &omissions)
        #expect(omissions == [])
        #expect(data.formatVersion == .v1)
        #expect(data.exporterRelyingPartyIdentifier == "")
        #expect(data.exporterDisplayName == "")
        #expect(data.timestamp == Date(timeIntervalSince1970: 0))
        #expect(
            data.accounts == [
                ASImportableAccount(
                    id: Data("a".utf8),
                    userName: "bob",
                    email: "bob@example.com",
                    collections: [],
                    items: [
                        ASImportableItem(
                            id: Data("i".utf8),
                            title: "Login",
                            credentials: [.generatedPassword(.init(password: "pw"))]
                        )
                    ]
                )
            ]
        )
    }

    @Test("the quirky account-only fixture converts and reports what it leaves out")
    func accountOnlyFixture() throws {
        var omissions: [ASExportedCredentialData.CXFOmission] = []
        let data = try ASExportedCredentialData(
            cxfJSON: try Sample.cxfFixture("account-only-quirks.json"),
            omissions: &omissions
        )
        #expect(data.timestamp == Date(timeIntervalSince1970: 0))
        let account = try #require(data.accounts.first)
        #expect(account.email == "alice@example.com")
        #expect(account.items.map(\.title) == ["Quirky login", "Padded id", "No id, no credentials"])
        let quirky = account.items[0]
        #expect(quirky.created == Date(timeIntervalSince1970: -11_644_473_600))
        // basic-auth, two TOTPs (lenient Base32, uppercase algorithm; an empty secret), wifi, note, credit-card.
        #expect(
            quirky.credentials.map { Mirror(reflecting: $0).children.first?.label } == [
                "basicAuthentication", "totp", "totp", "wifi", "note", "creditCard",
            ]
        )
        guard case .totp(let totp) = quirky.credentials[1] else {
            Issue.record("expected a TOTP")
            return
        }
        // JBSWY3DPEHPK3PXP is "Hello!" then DE AD BE EF.
        #expect(totp.secret == Data([0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x21, 0xDE, 0xAD, 0xBE, 0xEF]))
        #expect(account.items[1].id == Data("item-2\0".utf8))
        #expect(account.items[1].credentials == [])

        let paths = Set(omissions.map(\.path))
        #expect(paths.contains("/futureAccountMember"))
        #expect(paths.contains("/items/0/favorite"))  // "yes" is not a boolean: kept as unknown, left out here.
        #expect(paths.contains("/items/0/credentials/3"))  // md5 TOTP
        #expect(paths.contains("/items/0/credentials/4"))  // future-credential
        #expect(paths.contains("/items/0/credentials/5"))  // passkey with no key
        #expect(paths.contains("/items/0/credentials/6/networkSecurityType/fieldType"))
        #expect(paths.contains("/items/0/credentials/7"))  // no type
        #expect(paths.contains("/items/1/credentials/0"))  // file
        let file = try #require(omissions.first { $0.path == "/items/1/credentials/0" })
        #expect(file.reason.contains("file"))
        // Secrets never appear in the report.
        #expect(!omissions.map(\.description).joined().contains("hunter2"))
        #expect(!omissions.map(\.description).joined().contains("JBSW"))
    }

    @Test("what CXF → AS leaves out is reported with a JSON pointer")
    func omissionsReported() throws {
        var omissions: [ASExportedCredentialData.CXFOmission] = []
        let data = try ASExportedCredentialData(cxfJSON: Data(CodingTests.mixedCXF.utf8), omissions: &omissions)
        #expect(
            Set(omissions.map(\.path)) == [
                "/futureHeaderMember",
                "/accounts/0/extensions/0",
                "/accounts/0/collections/0/extensions/0",
                "/accounts/0/items/0/credentials/0/password/strength",
                "/accounts/0/items/0/credentials/1",
                "/accounts/0/items/0/credentials/2",
                "/accounts/0/items/0/credentials/4/secret",
                "/accounts/0/items/0/credentials/5/fields/0/fieldType",
                "/accounts/0/items/0/credentials/5/fields/1/extensions/0",
                "/accounts/0/items/0/credentials/6/fido2Extensions/credBlob",
                "/accounts/0/items/0/credentials/6/fido2Extensions/payments",
                "/accounts/0/items/0/credentials/6/fido2Extensions/hmacCredentials",
                "/accounts/0/items/0/extensions/0/accessors/0/permissions/1",
                "/accounts/0/items/0/extensions/0/accessors/1",
                "/accounts/0/items/0/extensions/0/accessors/2/permissions/0",
                "/accounts/0/items/0/extensions/0/accessors/2",
                "/accounts/0/items/0/extensions/1",
                "/accounts/0/items/0/scope/urls/1",
            ]
        )
        #expect(omissions.count == 18)
        let item = data.accounts[0].items[0]
        #expect(item.credentials.count == 4)  // basic-auth, lenient TOTP, custom-fields, passkey
        guard case .customFields(let custom) = item.credentials[2], case .passkey(let passkey) = item.credentials[3]
        else {
            Issue.record("unexpected credentials \(item.credentials)")
            return
        }
        #expect(custom.fields[0].fieldType == .string)  // "future-type"
        #expect(custom.fields[0].value == "v")
        #expect(passkey.credentialID == Data([0xFB, 0xFF]))
        #expect(
            passkey.fido2Extensions
                == ASImportableFIDO2Extensions(
                    hmacCredentials: nil,
                    largeBlob: ASImportableFIDO2LargeBlob(uncompressedSize: 10, data: Data([0x78, 0x9C]))
                )
        )
        guard case .shared(let shared) = try #require(item.extensions.first) else { return }
        #expect(
            shared.accessors == [.init(type: .user, accountID: Data("bob".utf8), name: "Bob", permissions: [.read])]
        )
        #expect(item.extensions.count == 1)
        #expect(item.scope?.androidApps.first?.certificate?.hashAlgorithm == "sha512-custom")
        let reasons = omissions.map(\.description).joined(separator: "\n")
        #expect(reasons.contains("'future-type'"))
        #expect(reasons.contains("'hmac-sha512-future'"))
        #expect(!reasons.contains("not base32!"))
    }

    @Test("per-type conversions: file and unrecognized credentials, unknown extensions and field types")
    func perTypeConversions() {
        let file = CXF.Credential.file(
            .init(id: Data("f".utf8), name: "a.txt", decryptedSize: 1, integrityHash: Data())
        )
        #expect(ASImportableCredential(file) == nil)
        let unknown = CXF.Credential.unrecognized(.init(object: .object([]), reason: "no type"))
        #expect(ASImportableCredential(unknown) == nil)
        #expect(ASImportableExtension(.unknown(name: "x", object: .object([]))) == nil)
        #expect(ASImportableEditableField.FieldType(CXF.FieldType.unknown("future")) == .string)
        #expect(ASImportableEditableField(CXF.EditableField(fieldType: .unknown("x"), value: "v")).fieldType == .string)
        for type in CXF.FieldType.allCases where type != .unknown("") {
            if case .unknown = type { continue }
            #expect(CXF.FieldType(ASImportableEditableField.FieldType(type)) == type)
            #expect(ASImportableEditableField.FieldType(type).rawValue == type.rawValue)
        }
    }

    @Test("a document of another major version does not convert")
    func majorVersion() throws {
        let header = CXF.Header(
            version: CXF.Version(major: 2, minor: 0),
            exporterRpId: "",
            exporterDisplayName: "",
            timestamp: 0,
            accounts: []
        )
        #expect {
            try ASExportedCredentialData(header)
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.debugDescription.contains("2.0") && context.debugDescription.contains("1.x")
        }
        let minor = CXF.Header(
            version: CXF.Version(major: 1, minor: 9),
            exporterRpId: "",
            exporterDisplayName: "",
            timestamp: 0,
            accounts: []
        )
        #expect(try ASExportedCredentialData(minor).formatVersion == .v1)
    }
}
