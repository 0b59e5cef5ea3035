import CredentialExchangeFormat
import Foundation
import Testing

@testable import AuthenticationServices

/// An address Apple-shaped but without a telephone: a CXF member that Apple's type has no place for,
/// which none of the real types has (yet).
private struct AddressWithoutTelephone: CXFFieldCredential, Codable, Equatable {
    var city: ASImportableEditableField?

    static let cxfFields = CXFFieldTable<Self, CXF.Address>(
        [("city", \.city, \.city)],
        lacking: [
            ("streetAddress", \.streetAddress), ("postalCode", \.postalCode), ("territory", \.territory),
            ("country", \.country), ("tel", \.tel),
        ]
    )

    init() {}
}

@Suite("Apple's field-only credentials, derived from the CXF schema")
struct FieldTableTests {
    /// Apple's property names, each with the CXF member its table pairs it with (`nil`: unpaired).
    private static func pairing<Credential: CXFFieldCredential>(_: Credential.Type) -> [String: String?] {
        var value = Credential()
        for entry in Credential.cxfFields.entries {
            guard let apple = entry.apple else { continue }
            value[keyPath: apple] = ASImportableEditableField(id: nil, fieldType: .string, value: entry.key)
        }
        var pairs: [String: String?] = [:]
        for child in Mirror(reflecting: value).children {
            pairs.updateValue((child.value as? ASImportableEditableField)?.value, forKey: child.label ?? "")
        }
        return pairs
    }

    @Test("every property of Apple's type is paired with the CXF member of its name, Apple's renames aside")
    func everyPropertyPaired() {
        let renamed = ["userName": "username", "telephone": "tel"]
        let tables: [(String, [String: String?], [String])] = [
            (
                "BasicAuthentication", Self.pairing(ASImportableCredential.BasicAuthentication.self),
                CXF.BasicAuth.schema.members.map(\.key.description)
            ),
            (
                "CreditCard", Self.pairing(ASImportableCredential.CreditCard.self),
                CXF.CreditCard.schema.members.map(\.key.description)
            ),
            (
                "Address", Self.pairing(ASImportableCredential.Address.self),
                CXF.Address.schema.members.map(\.key.description)
            ),
            (
                "APIKey", Self.pairing(ASImportableCredential.APIKey.self),
                CXF.APIKey.schema.members.map(\.key.description)
            ),
            (
                "DriversLicense", Self.pairing(ASImportableCredential.DriversLicense.self),
                CXF.DriversLicense.schema.members.map(\.key.description)
            ),
            (
                "IdentityDocument", Self.pairing(ASImportableCredential.IdentityDocument.self),
                CXF.IdentityDocument.schema.members.map(\.key.description)
            ),
            (
                "Passport", Self.pairing(ASImportableCredential.Passport.self),
                CXF.Passport.schema.members.map(\.key.description)
            ),
            (
                "PersonName", Self.pairing(ASImportableCredential.PersonName.self),
                CXF.PersonName.schema.members.map(\.key.description)
            ),
            ("WiFi", Self.pairing(ASImportableCredential.WiFi.self), CXF.WiFi.schema.members.map(\.key.description)),
        ]
        for (name, pairs, cxfMembers) in tables {
            // Every property of Apple's type got a member, the member of its name.
            for (property, member) in pairs {
                #expect(member == renamed[property, default: property], "\(name).\(property)")
            }
            // And every CXF member has a property: none of these types lacks one.
            #expect(Set(pairs.values.compactMap { $0 }) == Set(cxfMembers), "\(name)")
        }
    }

    @Test("the field type a member calls for comes from the CXF schema")
    func expectedFromSchema() throws {
        #expect(
            ASImportableCredential.WiFi.cxfFields.entries.map(\.expected) == [
                .string, .wifiNetworkSecurityType, .concealedString, .boolean,
            ]
        )
        let json = #"{"type": "wifi", "hidden": {"value": "true"}, "passphrase": {"value": "p"}}"#
        guard case .wifi(let wifi) = try JSONDecoder().decode(ASImportableCredential.self, from: Data(json.utf8))
        else {
            Issue.record("expected a Wi-Fi credential")
            return
        }
        #expect(wifi.hidden?.fieldType == .boolean)
        #expect(wifi.passphrase?.fieldType == .concealedString)
    }

    @Test("a CXF member Apple's type lacks: reported when converting, skipped when decoding, absent in CXF")
    func memberAppleLacks() throws {
        #expect(
            AddressWithoutTelephone.cxfFields.entries.map(\.key) == CXF.Address.schema.members.map(\.key.description)
        )
        #expect(AddressWithoutTelephone.cxfFields.entries.filter { $0.apple != nil }.map(\.key) == ["city"])

        let cxf = CXF.Address(city: CXF.EditableField(value: "Paris"), tel: CXF.EditableField(value: "+33 1"))
        var importer = CXFImporter()
        let converted: AddressWithoutTelephone = importer.fields(cxf)
        #expect(converted.city == ASImportableEditableField(id: nil, fieldType: .string, value: "Paris"))
        #expect(
            importer.omissions == [
                .init(
                    path: "/tel",
                    reason: "the member 'tel' is left out: "
                        + "ASImportableCredential.AddressWithoutTelephone has no place for it"
                )
            ]
        )
        #expect(converted.cxfCredential == CXF.Address(city: CXF.EditableField(value: "Paris")))

        let json = #"{"city": {"fieldType": "string", "value": "Paris"}, "tel": {"value": "+33 1"}}"#
        let decoded = try JSONDecoder().decode(AddressWithoutTelephone.self, from: Data(json.utf8))
        #expect(decoded == converted)
        let encoded = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(decoded)) as? [String: Any]
        #expect(encoded?.keys.sorted() == ["city"])
    }

    @Test("an unknown member of a field-only credential is reported with Apple's type name")
    func unknownMemberNamesAppleType() throws {
        let cxf = CXF.Address(unknownMembers: [JSONMember(key: "floor", value: .number("3"))])
        var omissions: [ASExportedCredentialData.CXFOmission] = []
        let item = CXF.Item(id: Data("i".utf8), title: "Home", credentials: [.address(cxf)])
        let account = CXF.Account(id: Data("a".utf8), username: "", email: "", items: [item])
        _ = try ASExportedCredentialData(cxf: .account(account), omissions: &omissions)
        #expect(
            omissions == [
                .init(
                    path: "/items/0/credentials/0/floor",
                    reason: "the member 'floor' is not in CXF 1.0, or repeats a member and is left out: "
                        + "ASImportableCredential.Address has no place for it"
                )
            ]
        )
    }
}
