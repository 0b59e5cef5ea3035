import CredentialExchangeFormat
import Foundation
import OneTimeCodes

/// What Keyport writes for others: a CXF document, or the one-time-code secrets as `otpauth://`
/// URIs (for an authenticator app).
package enum Exporter {
    /// Who wrote the document, as CXF's header names it. Keyport Vault runs on the person's own
    /// machine and has no web domain; `.invalid` is reserved for names that are none (RFC 6761).
    package static let rpID = "keyport.invalid"
    package static let displayName = "Keyport Vault"

    /// The account a vault's items are exported in: the person's login name.
    package static var account: CXF.Account {
        CXF.Account(id: Data("keyport-vault".utf8), username: NSUserName())
    }

    /// A CXF 1.0 document of one account holding `items`.
    package static func cxf(
        _ items: [CXF.Item],
        account: CXF.Account = account,
        timestamp: Int64 = Int64(Date().timeIntervalSince1970),
        prettyPrinted: Bool = false
    ) -> [UInt8] {
        var account = account
        account.items = items
        let header = CXF.Header(
            exporterRpId: rpID,
            exporterDisplayName: displayName,
            timestamp: timestamp,
            accounts: [account]
        )
        return CXF.Encoder(options: CXF.EncodingOptions(prettyPrinted: prettyPrinted)).encode(.header(header))
    }

    /// Every one-time-code secret of `items` as an `otpauth://` URI, one per line: the `totp`
    /// credentials, and the URIs kept whole in custom fields (HOTP, Steam). A `totp` credential
    /// an authenticator could not use (a secret that is not Base32) is skipped and counted.
    package static func otpauthList(_ items: [CXF.Item]) -> (text: String, skipped: Int) {
        var lines: [String] = []
        var skipped = 0
        for item in items {
            for credential in item.credentials {
                switch credential {
                case .totp(let totp):
                    guard var uri = try? OTPAuthURI(cxf: totp) else {
                        skipped += 1
                        continue
                    }
                    // An authenticator lists a code by its label: where the credential names no
                    // issuer or account, the item's title and its login's user name do.
                    if uri.issuer == nil, !item.title.isEmpty { uri.issuer = item.title }
                    if uri.account.isEmpty, let user = item.userName { uri.account = user }
                    lines.append(uri.uriString)
                case .customFields(let custom):
                    for field in custom.fields
                    where field.label == "otpauth" && field.value.lowercased().hasPrefix("otpauth://") {
                        lines.append(field.value)
                    }
                default:
                    continue
                }
            }
        }
        return (lines.map { $0 + "\n" }.joined(), skipped)
    }
}

extension CXF.Item {
    /// The user name of the item's first login that has one.
    fileprivate var userName: String? {
        credentials.lazy.compactMap { credential -> String? in
            guard case .basicAuth(let login) = credential, let name = login.username?.value, !name.isEmpty else {
                return nil
            }
            return name
        }
        .first
    }
}
