import CredentialExchangeFormat
import Foundation
import KeyportEncoding
import OneTimeCodes

/// `otpauth://` URIs one per line, and Google Authenticator's `otpauth-migration://` export URIs
/// (each expands to its accounts). Blank lines and `#` comments are skipped.
enum OTPAuthList {
    static func read(_ text: [UInt8]) throws(ImportError) -> Imported {
        var imported = Imported(format: .otpauth, items: [], problems: [])
        let lines = String(decoding: text, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        for (index, raw) in lines.enumerated() {
            let line = raw.trimmingWhitespace()
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let place = "line \(index + 1)"
            let lowered = line.lowercased()
            if lowered.hasPrefix("otpauth-migration://") {
                do {
                    let decoded = try GoogleAuthenticatorMigration.decode([line])
                    for problem in decoded.problems {
                        imported.problems.append(ImportProblem(place: place, message: problem.message))
                    }
                    for (offset, account) in decoded.accounts.enumerated() {
                        add(account.uriString, place: "\(place), account \(offset + 1)", to: &imported)
                    }
                } catch {
                    imported.problems.append(ImportProblem(place: place, message: "\(error)"))
                }
            } else if lowered.hasPrefix("otpauth://") {
                add(line, place: place, to: &imported)
            } else {
                imported.problems.append(
                    ImportProblem(place: place, message: "it is neither an otpauth:// nor an otpauth-migration:// URI")
                )
            }
        }
        guard !imported.items.isEmpty || !imported.problems.isEmpty else {
            throw ImportError(.malformed, "the file holds no otpauth:// URI")
        }
        return imported
    }

    private static func add(_ uri: String, place: String, to imported: inout Imported) {
        let account = try? OTPAuthURI(parsing: uri)
        // The URI as Keyport writes it: the same account listed twice (or exported and listed
        // again) is the same text, so its item id is the same.
        let entry = Entry(
            place: place,
            title: account.map { $0.issuer ?? $0.account } ?? "",
            otp: account?.uriString ?? uri
        )
        do {
            imported.items.append(try entry.item(format: .otpauth))
        } catch {
            imported.problems.append(error)
        }
    }
}
