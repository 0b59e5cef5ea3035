import ArgumentParser
import CredentialExchangeFormat
import Foundation
import KeyportCommandLine
import KeyportVaultKeeper

extension VaultCommand {
    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Find items by words in what is not secret: titles, user names, sites, passkeys' sites, tags, notes, field labels.",
            discussion: """
                An item is found when it has every word, in any case and with or without accents \
                ("muller" finds "Müller"). Passwords, one-time-code secrets, card numbers and the \
                values of custom fields (any of which may be a PIN) are never searched. Prints \
                what `list` prints; exit status 1 when nothing is found.
                """
        )
        @OptionGroup var options: VaultOptions
        @Argument(help: "The words to find.") var words: [String]

        func validate() throws {
            guard words.contains(where: { !$0.isEmpty }) else { throw ValidationError("give a word to find") }
        }

        func run() async throws {
            let wanted = words.filter { !$0.isEmpty }.map(SearchText.fold)
            var found = 0
            for item in try await vaultItems(options) where SearchText.matches(item, every: wanted) {
                FileHandle.write(ItemSummary(item).line + "\n")
                found += 1
            }
            guard found > 0 else {
                FileHandle.write("nothing in the vault has \(words.joined(separator: " "))\n", to: .standardError)
                throw ExitCode(1)
            }
        }
    }
}

/// What `keyport vault search` looks in, and how it compares.
enum SearchText {
    /// `text` without case or accents, so that either way of writing a word finds the other.
    static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }

    /// Whether the item's visible text holds every one of the (folded) words.
    static func matches(_ item: CXF.Item, every words: [String]) -> Bool {
        let text = fold(visibleText(of: item))
        return words.allSatisfy { text.contains($0) }
    }

    /// The item's text that is not secret, one value per line: its title, sites and tags; user
    /// names, one-time-code issuers and passkeys' relying parties; notes; the labels of custom fields (never their values:
    /// any of them may be a secret, as ``CXF/Credential/secretFields`` says); a card's holder and
    /// kind.
    static func visibleText(of item: CXF.Item) -> String {
        var parts = [item.title] + (item.scope?.urls ?? []) + (item.tags ?? [])
        for credential in item.credentials {
            switch credential {
            case .basicAuth(let login): parts += [login.username?.value].compactMap { $0 }
            case .totp(let totp): parts += [totp.issuer, totp.username].compactMap { $0 }
            case .passkey(let passkey): parts += [passkey.rpId, passkey.username, passkey.userDisplayName]
            case .note(let note): parts.append(note.content.value)
            case .customFields(let custom):
                parts += [custom.label].compactMap { $0 } + custom.fields.compactMap(\.label)
            case .creditCard(let card): parts += [card.fullName?.value, card.cardType?.value].compactMap { $0 }
            default: break
            }
        }
        return parts.joined(separator: "\n")
    }
}
