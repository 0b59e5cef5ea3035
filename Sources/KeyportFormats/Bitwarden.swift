import CredentialExchangeFormat
import Crypto
import Foundation
import KeyportEncoding

/// Bitwarden's unencrypted JSON export: logins (with their URIs, TOTP and passkeys), secure notes,
/// cards, identities and SSH keys, each with its custom fields, password history, folder, times
/// and favourite flag.
///
/// What CXF has no member for is kept as custom fields, so that nothing is lost: the password
/// history as a group labelled "Password history" (each earlier password a concealed field
/// labelled with the time Bitwarden says it was last used), and a passkey's relying party name,
/// counter, discoverable flag and creation time as a group labelled "Bitwarden passkey for RPID".
enum Bitwarden {
    private struct Export: Decodable {
        var encrypted: Bool?
        var folders: [Folder]?
        var items: [Item]
    }

    private struct Folder: Decodable {
        var id: String
        var name: String
    }

    private struct Item: Decodable {
        var id: String?
        var folderId: String?
        var type: Int
        var name: String?
        var notes: String?
        var favorite: Bool?
        var fields: [Field]?
        var login: Login?
        var card: [String: String?]?
        var identity: [String: String?]?
        var sshKey: [String: String?]?
        var passwordHistory: [PasswordHistory]?
        var creationDate: String?
        var revisionDate: String?
    }

    private struct Field: Decodable {
        var name: String?
        var value: String?
        var type: Int?
    }

    private struct Login: Decodable {
        var uris: [URI]?
        var username: String?
        var password: String?
        var totp: String?
        var fido2Credentials: [Passkey]?
    }

    private struct PasswordHistory: Decodable {
        var password: String?
        var lastUsedDate: String?
    }

    /// A passkey as Bitwarden exports it: the credential id as a GUID (or `b64.` and base64url),
    /// the user handle and the PKCS#8 private key base64url, the counter and the discoverable flag
    /// as text.
    private struct Passkey: Decodable {
        var credentialId: String?
        var keyType: String?
        var keyAlgorithm: String?
        var keyCurve: String?
        var keyValue: String?
        var rpId: String?
        var rpName: String?
        var userHandle: String?
        var userName: String?
        var userDisplayName: String?
        var counter: Text?
        var discoverable: Text?
        var creationDate: String?
    }

    /// A value Bitwarden writes as a string, which other writers give as a number or a boolean.
    private struct Text: Decodable {
        var value: String
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                value = text
            } else if let number = try? container.decode(Int64.self) {
                value = String(number)
            } else {
                value = String(try container.decode(Bool.self))
            }
        }
    }

    private struct URI: Decodable {
        var uri: String?
    }

    static func read(_ text: [UInt8]) throws(ImportError) -> Imported {
        let export: Export
        do {
            export = try JSONDecoder().decode(Export.self, from: Data(text))
        } catch {
            throw ImportError(.malformed, "the file is not Bitwarden's JSON export: \(describe(error))")
        }
        guard export.encrypted != true else {
            throw ImportError(
                .encrypted,
                "the file is Bitwarden's encrypted export; export again as \"JSON\" (not \"JSON (Encrypted)\")"
            )
        }
        let folders = Dictionary(
            (export.folders ?? []).map { ($0.id, $0.name) },
            uniquingKeysWith: { first, _ in first }
        )
        var imported = Imported(format: .bitwarden, items: [], problems: [])
        for (index, item) in export.items.enumerated() {
            var entry = Entry(place: "item \(index + 1)")
            entry.sourceID = item.id.flatMap(UUIDBytes.parse)
            entry.title = item.name ?? ""
            entry.notes = item.notes
            entry.favorite = item.favorite == true ? true : nil
            entry.created = item.creationDate.flatMap(Dates.iso8601)
            entry.modified = item.revisionDate.flatMap(Dates.iso8601)
            if let folder = item.folderId.flatMap({ folders[$0] }) { entry.tags = [folder] }
            // Custom fields: text 0, hidden 1, boolean 2 (as text), linked 3 (a name, no value).
            entry.fields = (item.fields ?? []).compactMap { field in
                guard field.type != 3, let value = field.value else { return nil }
                return (field.name ?? "", value, field.type == 1)
            }
            switch item.type {
            case 1:
                entry.urls = (item.login?.uris ?? []).compactMap(\.uri)
                entry.username = item.login?.username
                entry.password = item.login?.password
                entry.otp = item.login?.totp
                do {
                    for (number, passkey) in (item.login?.fido2Credentials ?? []).enumerated() {
                        entry.credentials += try credentials(
                            of: passkey,
                            place: "\(entry.place), passkey \(number + 1)"
                        )
                    }
                } catch {
                    imported.problems.append(error)
                    continue
                }
            case 2:
                break  // a secure note: its text is the notes
            case 3:
                let card = item.card ?? [:]
                func field(_ key: String, _ type: CXF.FieldType = .string) -> CXF.EditableField? {
                    guard let value = card[key] ?? nil, !value.isEmpty else { return nil }
                    return CXF.EditableField(fieldType: type, value: value)
                }
                var expiry: CXF.EditableField?
                if let month = card["expMonth"] ?? nil, let year = card["expYear"] ?? nil, let m = Int(month),
                    let y = Int(year)
                {
                    expiry = CXF.EditableField(fieldType: .yearMonth, value: String(format: "%04d-%02d", y, m))
                }
                entry.credentials.append(
                    .creditCard(
                        CXF.CreditCard(
                            number: field("number", .concealedString),
                            fullName: field("cardholderName"),
                            cardType: field("brand"),
                            verificationNumber: field("code", .concealedString),
                            expiryDate: expiry
                        )
                    )
                )
            case 4, 5:
                // Identities and SSH keys: every value kept as a labelled field (secrets concealed).
                let values = (item.type == 4 ? item.identity : item.sshKey) ?? [:]
                let secret: Set<String> = ["ssn", "passportNumber", "licenseNumber", "privateKey"]
                for key in values.keys.sorted() {
                    guard let value = values[key] ?? nil, !value.isEmpty else { continue }
                    entry.fields.append((key, value, secret.contains(key)))
                }
            default:
                imported.problems.append(
                    ImportProblem(
                        place: entry.place,
                        message: "Bitwarden item type \(item.type) is not one Keyport knows"
                    )
                )
                continue
            }
            let history = (item.passwordHistory ?? []).compactMap { old -> CXF.EditableField? in
                guard let password = old.password else { return nil }
                return CXF.EditableField(fieldType: .concealedString, value: password, label: old.lastUsedDate)
            }
            if !history.isEmpty {
                entry.credentials.append(
                    .customFields(CXF.CustomFields(label: ItemEdit.passwordHistory, fields: history))
                )
            }
            do {
                imported.items.append(try entry.item(format: .bitwarden))
            } catch {
                imported.problems.append(error)
            }
        }
        return imported
    }

    /// A Bitwarden passkey as a CXF passkey, and what CXF's has no member for as fields beside it.
    private static func credentials(of passkey: Passkey, place: String) throws(ImportProblem) -> [CXF.Credential] {
        func problem(_ message: String) -> ImportProblem { ImportProblem(place: place, message: message) }
        guard let rpId = passkey.rpId, !rpId.isEmpty else { throw problem("it has no rpId") }
        let kind = [passkey.keyType ?? "public-key", passkey.keyAlgorithm ?? "ECDSA", passkey.keyCurve ?? "P-256"]
        guard kind == ["public-key", "ECDSA", "P-256"] else {
            throw problem(
                "its key is \(kind.joined(separator: " ")); Keyport reads Bitwarden's passkeys of ECDSA on P-256"
            )
        }
        // Kept as CXF wants it, PKCS#8 (what swift-crypto writes; Bitwarden writes it too).
        guard let keyValue = passkey.keyValue, let bytes = try? Base64URL.decode(keyValue),
            let key = try? P256.Signing.PrivateKey(derRepresentation: bytes).derRepresentation
        else {
            throw problem("its keyValue is not a P-256 private key in PKCS#8, base64url")
        }
        guard let text = passkey.credentialId, let credentialId = credentialID(text) else {
            throw problem("its credentialId is neither a GUID nor b64. and base64url")
        }
        var userHandle: [UInt8] = []
        if let handle = passkey.userHandle {
            guard let bytes = try? Base64URL.decode(handle) else { throw problem("its userHandle is not base64url") }
            userHandle = bytes
        }
        var credentials: [CXF.Credential] = [
            .passkey(
                CXF.Passkey(
                    credentialId: Data(credentialId),
                    rpId: rpId,
                    username: passkey.userName ?? "",
                    userDisplayName: passkey.userDisplayName ?? "",
                    userHandle: Data(userHandle),
                    key: key
                )
            )
        ]
        let details = [
            ("rpName", passkey.rpName), ("counter", passkey.counter?.value),
            ("discoverable", passkey.discoverable?.value), ("creationDate", passkey.creationDate),
        ].compactMap { label, value in value.map { CXF.EditableField(value: $0, label: label) } }
        if !details.isEmpty {
            credentials.append(.customFields(CXF.CustomFields(label: "Bitwarden passkey for \(rpId)", fields: details)))
        }
        return credentials
    }

    /// Bitwarden's credential id: `b64.` and base64url, or a GUID for its 16 bytes in the order
    /// written (which is how Bitwarden makes the ids of the passkeys it creates).
    private static func credentialID(_ text: String) -> [UInt8]? {
        if text.hasPrefix("b64.") {
            guard let bytes = try? Base64URL.decode(String(text.dropFirst(4))), !bytes.isEmpty else { return nil }
            return bytes
        }
        return UUIDBytes.parse(text)
    }

    /// A decoding error as a person reads it: what, and where (the JSON path).
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(path(context).isEmpty ? "" : path(context) + ": ")\(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "\(path(context)) has no \"\(key.stringValue)\""
        @unknown default:
            return "\(error)"
        }
    }
}
