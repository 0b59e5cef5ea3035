import CredentialExchangeFormat
import KeyportEncoding
import OneTimeCodes

/// What `keyport vault list` and `show` print of an item: one line, or its fields (the keeper
/// writes them for `Show`, so that the `keyport` front prints an item without a CXF reader).
package struct ItemSummary {
    package var item: CXF.Item

    package init(_ item: CXF.Item) { self.item = item }

    package var user: String? {
        for case .basicAuth(let auth) in item.credentials { return auth.username?.value }
        for case .totp(let totp) in item.credentials { return totp.username }
        for case .passkey(let passkey) in item.credentials { return passkey.username }
        return nil
    }

    package var searchable: String {
        ([item.title, user ?? ""] + (item.scope?.urls ?? [])).joined(separator: " ").lowercased()
    }

    package var line: String {
        [Base64URL.encode(item.id), item.title, user ?? "-", item.scope?.urls.first ?? "-"].map(DisplayText.escaping)
            .joined(separator: "\t")
    }

    /// The item's fields one per line; a one-time code's current code as at `now` (Unix seconds).
    package func details(reveal: Bool, at now: Int64) -> String {
        var lines = ["id: \(Base64URL.encode(item.id))", "title: \(item.title)"]
        for url in item.scope?.urls ?? [] { lines.append("url: \(url)") }
        for credential in item.credentials {
            switch credential {
            case .basicAuth(let auth):
                if let user = auth.username?.value { lines.append("user: \(user)") }
                if let password = auth.password?.value {
                    lines.append("password: \(reveal ? password : "(hidden: --reveal)")")
                }
            case .totp(let totp):
                // The current code, as `keepassxc-cli show --totp` prints it; the secret only asked for.
                if let code = try? OTPAuthURI(cxf: totp).code(at: now) {
                    let left = Int64(totp.period) - now % Int64(max(totp.period, 1))
                    lines.append("code: \(code) (\(left) s left)")
                }
                lines.append(
                    "one-time code: \(reveal ? totp.secret : "(secret hidden: --reveal)"), \(totp.digits) digits every \(totp.period) s"
                )
            case .passkey(let passkey):
                // Who and where, and the ids a relying party knows; the private key only asked for.
                let display = passkey.userDisplayName.isEmpty || passkey.userDisplayName == passkey.username
                lines.append(
                    "passkey: \(passkey.rpId) as \(passkey.username)\(display ? "" : " (\(passkey.userDisplayName))")"
                )
                lines.append("credential id: \(Base64URL.encode(passkey.credentialId))")
                lines.append("user handle: \(Base64URL.encode(passkey.userHandle))")
                lines.append("private key: \(reveal ? Base64URL.encode(passkey.key) : "(hidden: --reveal)")")
                if passkey.fido2Extensions?.hmacCredentials != nil { lines.append("prf: yes") }
            case .note(let note):
                // A note's lines stay lines, indented under the first.
                let text = note.content.value.split(separator: "\n", omittingEmptySubsequences: false)
                lines.append("note: \(text.first ?? "")")
                lines += text.dropFirst().map { "  \($0)" }
            case .creditCard(let card):
                let about = [card.cardType?.value, card.fullName?.value, card.expiryDate.map { "expires \($0.value)" }]
                lines.append("card: \(about.compactMap { $0 }.joined(separator: ", "))")
                if let number = card.number?.value {
                    lines.append("number: \(reveal ? number : "ending \(number.suffix(4)) (whole: --reveal)")")
                }
                if let code = card.verificationNumber?.value {
                    lines.append("security code: \(reveal ? code : "(hidden: --reveal)")")
                }
            case .customFields(let group):
                // The group's fields one per line under its label (a password history, an import's
                // extra fields); concealed values hidden as passwords are.
                lines.append("fields: \(group.label ?? "")")
                for field in group.fields {
                    let hidden = field.fieldType == .concealedString && !reveal
                    lines.append(
                        "  \(field.label ?? field.fieldType.rawValue): \(hidden ? "(hidden: --reveal)" : field.value)"
                    )
                }
            default:
                lines.append("\(credential.type): (see `keyport vault export`)")
            }
        }
        return lines.map(DisplayText.escaping).joined(separator: "\n") + "\n\n"
    }
}
