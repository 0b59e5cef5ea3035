import CredentialExchangeFormat
import Crypto
import Foundation
import KeyportEncoding
import OneTimeCodes

/// What most managers keep per entry — a title, web addresses, a user name and password, notes,
/// a one-time-code secret, times, a group, extra fields — made into one CXF item.
struct Entry {
    /// Where the entry came from in its file ("line 12", "entry 3"), for messages.
    var place: String
    /// The manager's own id of the entry (a UUID's 16 bytes), when it has one; else the item's
    /// id is made from the entry's content, so that importing the same file again finds the
    /// same items.
    var sourceID: [UInt8]? = nil
    var title: String = ""
    var urls: [String] = []
    var username: String? = nil
    var password: String? = nil
    var notes: String? = nil
    /// An `otpauth://` URI, Bitwarden's `steam://SECRET`, or a bare Base32 secret (TOTP, 30 s,
    /// 6 digits).
    var otp: String? = nil
    var created: Int64? = nil
    var modified: Int64? = nil
    var favorite: Bool? = nil
    var tags: [String] = []
    /// Fields the entry has beyond the standard ones.
    var fields: [(label: String, value: String, concealed: Bool)] = []
    /// Credentials of other kinds (a card), as they are.
    var credentials: [CXF.Credential] = []

    /// The CXF item. A one-time-code secret CXF's `totp` cannot hold (HOTP, Steam) is kept as a
    /// concealed custom field holding its URI; one that cannot be read is a problem.
    func item(format: ImportFormat) throws(ImportProblem) -> CXF.Item {
        var credentials: [CXF.Credential] = []
        if username?.isEmpty == false || password?.isEmpty == false {
            credentials.append(
                .basicAuth(
                    CXF.BasicAuth(
                        username: username.flatMap {
                            $0.isEmpty ? nil : CXF.EditableField(fieldType: .string, value: $0)
                        },
                        password: password.flatMap {
                            $0.isEmpty ? nil : CXF.EditableField(fieldType: .concealedString, value: $0)
                        }
                    )
                )
            )
        }
        var extra = fields.map {
            CXF.EditableField(fieldType: $0.concealed ? .concealedString : .string, value: $0.value, label: $0.label)
        }
        if let otp = otp?.trimmingWhitespace(), !otp.isEmpty {
            let uri: OTPAuthURI
            do {
                let issuer = title.isEmpty ? nil : title
                if otp.lowercased().hasPrefix("otpauth://") {
                    uri = try OTPAuthURI(parsing: otp)
                } else if otp.lowercased().hasPrefix("steam://") {
                    uri = OTPAuthURI(
                        secret: try OTPSecret(base32: String(otp.dropFirst("steam://".count))),
                        issuer: issuer,
                        account: username ?? "",
                        format: .steam
                    )
                } else {
                    uri = OTPAuthURI(secret: try OTPSecret(base32: otp), issuer: issuer, account: username ?? "")
                }
            } catch {
                throw ImportProblem(place: place, message: "its one-time-code secret cannot be read: \(error)")
            }
            if let totp = try? CXF.TOTP(uri) {
                credentials.append(.totp(totp))
            } else {
                extra.append(CXF.EditableField(fieldType: .concealedString, value: uri.uriString, label: "otpauth"))
            }
        }
        credentials += self.credentials
        if !extra.isEmpty { credentials.append(.customFields(CXF.CustomFields(fields: extra))) }
        if let notes, !notes.isEmpty {
            credentials.append(.note(CXF.Note(content: CXF.EditableField(fieldType: .string, value: notes))))
        }
        guard !credentials.isEmpty || !title.isEmpty || !urls.isEmpty else {
            throw ImportProblem(place: place, message: "it is empty")
        }
        let urls = urls.filter { !$0.trimmingWhitespace(newlines: false).isEmpty }
        return CXF.Item(
            id: Data(sourceID ?? contentID(format: format)),
            creationAt: created,
            modifiedAt: modified,
            title: title.isEmpty ? (urls.first ?? username ?? "") : title,
            favorite: favorite,
            scope: urls.isEmpty ? nil : CXF.CredentialScope(urls: urls),
            credentials: credentials,
            tags: tags.isEmpty ? nil : tags
        )
    }

    /// 16 bytes of SHA-256 over the format and every value of the entry.
    private func contentID(format: ImportFormat) -> [UInt8] {
        var hash = SHA256()
        var parts = [format.rawValue, title] + urls + [username ?? "", password ?? "", notes ?? "", otp ?? ""]
        parts += tags + fields.flatMap { [$0.label, $0.value] }
        for part in parts {
            hash.update(data: withUnsafeBytes(of: UInt32(part.utf8.count).bigEndian, Array.init) + Array(part.utf8))
        }
        return Array(hash.finalize().prefix(16))
    }
}
