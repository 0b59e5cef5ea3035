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
                    if let uri = try? OTPAuthURI(cxf: totp) { lines.append(uri.uriString) } else { skipped += 1 }
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
