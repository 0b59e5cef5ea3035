import CredentialExchangeFormat
import Foundation
import KeyportTestSupport
import Testing

@testable import AuthenticationServices

/// Every one of Apple's CXF types is `Codable` through ``CXFCodable``. Where the protocol's
/// witnesses were not the ones chosen, the compiler's own would code the type silently: the
/// member-wise coding of a struct, or the raw value of a `String` enum (as `FormatVersion` showed).
@Suite("Apple's CXF types code through the CXF codec")
struct CXFCodableTests {
    /// The types checked so far, by name.
    private final class Checked {
        var names: Set<String> = []
    }

    /// `json` with every object's members in key order: `JSONEncoder` keeps no order.
    private func ordered(_ json: JSONValue) -> JSONValue {
        switch json {
        case .object(let members):
            .object(members.map { JSONMember(key: $0.key, value: ordered($0.value)) }.sorted { $0.key < $1.key })
        case .array(let elements): .array(elements.map(ordered))
        default: json
        }
    }

    /// `value` through `JSONEncoder` is what the CXF codec writes for it, and reads back equal.
    private func check<T: CXFCodable & Equatable>(_ value: T, _ checked: Checked) throws {
        let encoded = try JSONEncoder().encode(value)
        let json = try CXF.Decoder().decodeJSON(Array(encoded))
        #expect(ordered(json) == ordered(T.cxfPart.encodeJSON(value.cxfValue)), "\(T.self)")
        #expect(try JSONDecoder().decode(T.self, from: encoded) == value, "\(T.self)")
        checked.names.insert("\(T.self)")
    }

    private func checkCredential(_ credential: ASImportableCredential, _ checked: Checked) throws {
        try check(credential, checked)
        switch credential {
        case .address(let c): try check(c, checked)
        case .apiKey(let c): try check(c, checked)
        case .basicAuthentication(let c):
            try check(c, checked)
            if let field = c.userName { try check(field, checked) }
        case .creditCard(let c): try check(c, checked)
        case .customFields(let c): try check(c, checked)
        case .driversLicense(let c): try check(c, checked)
        case .generatedPassword(let c): try check(c, checked)
        case .identityDocument(let c): try check(c, checked)
        case .itemReference(let c): try check(c, checked)
        case .note(let c): try check(c, checked)
        case .passkey(let c):
            try check(c, checked)
            if let extensions = c.fido2Extensions {
                try check(extensions, checked)
                if let hmac = extensions.hmacCredentials { try check(hmac, checked) }
                if let blob = extensions.largeBlob { try check(blob, checked) }
            }
        case .passport(let c): try check(c, checked)
        case .personName(let c): try check(c, checked)
        case .sshKey(let c): try check(c, checked)
        case .totp(let c): try check(c, checked)
        case .wifi(let c): try check(c, checked)
        @unknown default: Issue.record("a credential case this test does not know: \(credential)")
        }
    }

    @Test("each type's JSON is the codec's, read back equal, for a document holding every type")
    func everyType() throws {
        let fixture = Peers.file("Tests/CredentialExchangeFormatTests/Fixtures/full.json")
        let document = try JSONDecoder().decode(
            ASExportedCredentialData.self,
            from: try Data(contentsOf: URL(fileURLWithPath: fixture))
        )
        let checked = Checked()
        try check(document, checked)
        try check(document.formatVersion, checked)
        for account in document.accounts {
            try check(account, checked)
            for collection in account.collections {
                try check(collection, checked)
                for linked in collection.items { try check(linked, checked) }
            }
            for item in account.items {
                try check(item, checked)
                if let scope = item.scope {
                    try check(scope, checked)
                    for app in scope.androidApps {
                        try check(app, checked)
                        if let certificate = app.certificate { try check(certificate, checked) }
                    }
                }
                for credential in item.credentials { try checkCredential(credential, checked) }
                for case .shared(let shared) in item.extensions {
                    try check(ASImportableExtension.shared(shared), checked)
                    try check(shared, checked)
                    for accessor in shared.accessors { try check(accessor, checked) }
                }
            }
        }
        // The 24 types written in CXFCoding.swift and the 9 generated field-only credentials.
        #expect(checked.names.count == 33, "\(checked.names.sorted())")
    }
}
