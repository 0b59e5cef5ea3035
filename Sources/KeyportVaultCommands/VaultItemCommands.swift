import ArgumentParser
import CredentialExchangeFormat
import Foundation
import KeyportCommandLine
import KeyportDomains
import KeyportEncoding
import KeyportFormats
import KeyportInterfaces
import KeyportSystem
import KeyportVaultKeeper
import Varlink

/// The commands that make and change one item: `keyport vault add` and `keyport vault edit`.
/// Secrets (passwords, one-time-code secrets, card numbers and codes) and notes are typed without
/// echo or read from standard input, never taken from the command line, where other processes
/// can read them.
extension VaultCommand {
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a login (the default), a secure note (--note) or a payment card (--card).",
            discussion: """
                A login's password is asked for, then its one-time-code secret with --otp. A note's \
                text is read from standard input to its end. A card's number, then its security \
                code (an empty line: none), are asked for. With --passphrase-stdin, what is asked \
                for is read from standard input instead, one line each.
                """
        )
        @OptionGroup var options: VaultOptions

        @Option(help: "The item's title.") var title: String
        @Option(help: "A site where the login is used (repeat for several).") var url: [String] = []
        @Option(help: "The login's user name.") var user: String?
        @Flag(help: "Read a one-time-code secret (otpauth:// URI or Base32) too, after the password.")
        var otp = false
        @Flag(help: "No password (a login with only a one-time code).") var noPassword = false
        @Flag(help: "A secure note, its text read from standard input.") var note = false
        @Flag(help: "A payment card.") var card = false
        @Option(help: "The card's holder.") var holder: String?
        @Option(help: "The card's brand (Visa, Mastercard…).") var brand: String?
        @Option(help: ArgumentHelp("The card's expiry.", valueName: "YYYY-MM|MM/YY")) var expiry: String?

        func validate() throws {
            if note && card { throw ValidationError("an item is a note or a card, not both") }
            if (note || card) && (!url.isEmpty || user != nil || otp || noPassword) {
                throw ValidationError("--url, --user, --otp and --no-password are for logins")
            }
            if !card && (holder != nil || brand != nil || expiry != nil) {
                throw ValidationError("--holder, --brand and --expiry are for cards (--card)")
            }
            try checkSites(url)
        }

        func run() async throws {
            let item: CXF.Item
            do {
                if note {
                    item = try ItemBuilder.note(title: title, text: readText("Type the note; end it with Ctrl-D:"))
                } else if card {
                    let number = try options.passphrase("Card number: ")
                    let code = secretLine("Security code (empty: none): ", options: options)
                    item = try ItemBuilder.card(
                        title: title,
                        number: number.text,
                        holder: holder,
                        brand: brand,
                        expiry: expiry,
                        code: code?.isEmpty == false ? code : nil
                    )
                } else {
                    let password = noPassword ? nil : try options.passphrase("Password for \(title): ")
                    let secret = otp ? try options.passphrase("One-time-code secret or otpauth:// URI: ") : nil
                    item = try ItemBuilder.login(
                        title: title,
                        urls: url,
                        username: user,
                        password: password?.text,
                        otp: secret?.text,
                        notes: nil
                    )
                }
            } catch let problem as ImportProblem {
                throw CommandError.invalid(problem.message)
            }
            _ = try await callVaultKeeper(
                try options.locations(),
                VaultKeeper.Add.name,
                RawJSON(encoding: VaultKeeper.Add.Parameters(item: RawJSON(bytes: item.json)))
            )
            FileHandle.write("added \(DisplayText.escaping(title)) (\(Base64URL.encode(item.id)))\n")
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change an item: its title, sites, user name, password, one-time code or notes.",
            discussion: """
                The item is named as `show` names one (an id, a site, a title); when several fit, \
                they are listed and nothing changes. Only what is named changes; the item keeps its \
                id, its other credentials and fields, and what Keyport does not know of it; a \
                replaced password is kept in its password history. With --password and --otp, the new \
                ones are asked for (password first); with --notes, the new text is read from \
                standard input to its end (empty: no notes).
                """
        )
        @OptionGroup var options: VaultOptions
        @Argument(help: "An item id, a site (a domain or URL), or a title, as `show` takes it.") var target: String
        @Option(help: "A new title.") var title: String?
        @Option(help: "A site, in place of the item's (repeat for several).") var url: [String] = []
        @Flag(help: "No sites.") var noURL = false
        @Option(help: "A new user name (empty: none).") var user: String?
        @Flag(help: "Ask for a new password.") var password = false
        @Flag(help: "Ask for a new one-time-code secret (otpauth:// URI or Base32).") var otp = false
        @Flag(help: "Remove the one-time-code secret.") var noOTP = false
        @Flag(help: "Read new notes from standard input.") var notes = false

        func validate() throws {
            if noURL && !url.isEmpty { throw ValidationError("--url and --no-url: give one") }
            try checkSites(url)
            if otp && noOTP { throw ValidationError("--otp and --no-otp: give one") }
        }

        func run() async throws {
            let locations = try options.locations()
            let item = try await FoundItems.find(target, locations).one(target, otherwise: "nothing changed")
            let id = Base64URL.encode(item.id)
            var change = ItemEdit()
            change.title = title
            change.urls = noURL ? [] : url.isEmpty ? nil : url
            change.username = user
            change.password = password ? try options.passphrase("New password for \(item.title): ").text : nil
            change.otp = otp ? try options.passphrase("One-time-code secret or otpauth:// URI: ").text : nil
            change.removeOTP = noOTP
            change.notes = notes ? readText("Type the notes; end them with Ctrl-D:") : nil
            guard !change.isEmpty else {
                throw CommandError.invalid("say what to change (`keyport vault edit --help` lists it); nothing changed")
            }
            let edited: CXF.Item
            do throws(ImportProblem) {
                edited = try change.applied(to: item, at: Int64(Date().timeIntervalSince1970))
            } catch {
                throw CommandError.invalid("\(error.message); nothing changed")
            }
            let revision = try await callVaultKeeper(
                locations,
                VaultKeeper.Update.name,
                RawJSON(encoding: VaultKeeper.Update.Parameters(item: RawJSON(bytes: edited.json)))
            )
            .decode(VaultKeeper.Update.Reply.self).revision
            FileHandle.write("changed \(DisplayText.escaping(edited.title)) (\(id)), revision \(revision)\n")
        }
    }
}

/// Standard input to its end, after `prompt` on a terminal. Read line by line through the same
/// buffer as the lines read before it (a password with --passphrase-stdin), which may already
/// hold the text that follows them.
private func readText(_ prompt: String) -> String {
    if isatty(STDIN_FILENO) == 1 { FileHandle.write(prompt + "\n", to: .standardError) }
    var text = ""
    while let line = readLine(strippingNewline: false) { text += line }
    return text.hasSuffix("\n") ? String(text.dropLast()) : text
}

/// A line that may be empty: typed without echo, or read from standard input with
/// --passphrase-stdin.
private func secretLine(_ prompt: String, options: VaultOptions) -> String? {
    options.passphraseStdin ? readLine(strippingNewline: true) : Terminal.readSecret(prompt: prompt)
}

extension SecretBytes {
    /// The secret as text, for an item that holds it as text.
    fileprivate var text: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}

/// Refuses a `--url` that AutoFill's look-ups could never find, read as they read a site
/// (`ServiceOrigin`), saying why: a space in a host, `javascript:`, no host at all.
private func checkSites(_ urls: [String]) throws {
    for url in urls {
        if case .failure(let error) = ServiceOrigin.parse(url) {
            throw ValidationError("--url: \(error.description); no look-up would ever find it, so it is not saved")
        }
    }
}
