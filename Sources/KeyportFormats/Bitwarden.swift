import CredentialExchangeFormat
import Foundation

/// Bitwarden's unencrypted JSON export: logins (with their URIs and TOTP), secure notes, cards,
/// identities and SSH keys, each with its custom fields, folder, times and favourite flag.
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
    }

    private struct URI: Decodable {
        var uri: String?
    }

    static func read(_ text: [UInt8]) throws(ImportError) -> Imported {
        let export: Export
        do {
            export = try JSONDecoder().decode(Export.self, from: Data(text))
        } catch {
            throw ImportError("the file is not Bitwarden's JSON export: \(describe(error))")
        }
        guard export.encrypted != true else {
            throw ImportError(
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
            do {
                imported.items.append(try entry.item(format: .bitwarden))
            } catch {
                imported.problems.append(error)
            }
        }
        return imported
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
