import ArgumentParser
import Foundation
import KeyportCommandLine
import KeyportDomains
import KeyportEncoding
import KeyportInterfaces
import Varlink

/// git's credential-helper protocol (gitcredentials(7), git-credential(1)): `key=value` lines on
/// standard input up to a blank line or the end; `get` answers with the same.
struct GitCredentialCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-credential",
        abstract: "A git credential helper that takes passwords from the providers enabled in Settings.",
        discussion: """
            Set it up with `git config --global credential.helper "!keyport git-credential"`.

            get: git says which URL it needs a credential for; keyportd asks the provider whose identity \
            fits it best, and keyport answers git with username= and password=. With no credential \
            (none saved, keyportd not running, the provider locked and you declined), keyport answers \
            nothing and says why on standard error, so git goes on to its next helper or asks you; it \
            never answers quit=1.

            store: git hands over a password that worked; keyportd gives it to the enabled provider that \
            takes passwords to save (SavesPasswords) and already has the account, else the first such in \
            Settings. A password the providers already hold is not saved again (git stores after every \
            use). A credential that expires (password_expiry_utc: a token another helper made) or is not a \
            password (authtype) is not saved: it belongs to the helper that made it.

            erase: nothing is deleted. git erases a password the server just refused, and a refusal can \
            be passing (a locked account, a server's fault); delete it in its provider. A locked or \
            unreachable provider never loses a credential.

            keyport supports none of git's optional capabilities (capability[]), so it declares none and \
            never answers password_expiry_utc. Exit status 0 in every case git handles itself; 2 for a \
            usage error (no operation, or what git sent is not its protocol).
            """
    )

    @Argument(help: "get, store or erase (git gives it; others are ignored, as git asks of helpers).")
    var operation: String

    func run() async throws {
        let request = try GitCredentialRequest(reading: FileHandle.standardInput.readDataToEndOfFile())
        switch operation {
        case "get":
            try await get(request)
        case "store":
            try await store(request)
        case "erase":
            say(
                "passwords are not deleted from git (a refused password may be right again: a locked account, a server's fault); delete it in its provider if it is wrong. Nothing was changed"
            )
        default:
            // gitcredentials(7): a helper ignores operations it does not know (git may add some).
            break
        }
    }

    /// Says `message` to the person on standard error (git shows it; its protocol is on standard
    /// output).
    private func say(_ message: String) {
        FileHandle.standardError.write(Data("keyport git-credential: \(DisplayText.escaping(message))\n".utf8))
    }

    private func store(_ request: GitCredentialRequest) async throws {
        guard let service = request.serviceURL, let password = request.fields["password"], !password.isEmpty else {
            say("git named no host or no password; nothing was saved")
            return
        }
        if request.fields["password_expiry_utc"] != nil {
            say("the password expires (password_expiry_utc): it is a token the helper that made it keeps; not saved")
            return
        }
        if request.fields["oauth_refresh_token"] != nil {
            say(
                "the password is an OAuth access token (oauth_refresh_token): the helper that made it keeps it; not saved"
            )
            return
        }
        if request.fields["authtype"] != nil || request.fields["credential"] != nil {
            say("the credential is not a password (authtype): not saved")
            return
        }
        // git stores after every use, the password a helper just gave it included: a password the
        // providers hold already is left alone (no prompt to unlock, no rewrite), and so is one a
        // locked provider holds for this site and user, which cannot be compared without asking
        // the person.
        do {
            let held = try AutoFillClient.request(
                .password,
                for: service,
                user: request.username,
                interactive: false,
                environment: ProcessInfo.processInfo.environment
            ) { _ in
                // Not interactive: the provider cannot ask.
            }
            if let heldPassword = held.credential.password, ConstantTime.equal(heldPassword, password) { return }
        } catch  where error.name == AutoFill.InteractionRequired.name {
            say("\(error.message); not saved (unlock it, and git will save the password the next time it works)")
            return
        } catch {
            // No credential there yet (or keyportd unreachable, which saving will say): save it.
        }
        let input = AutoFill.SavePassword.Parameters(
            serviceIdentifier: AutoFill.ServiceIdentifier(identifier: service, type: .URL),
            user: request.username ?? "",
            password: password,
            event: .formDidDisappear
        )
        do {
            let saved = try await withKeyportd { connection in
                try await connection.call(AutoFill.SavePassword.name, RawJSON(encoding: input))
            }
            let provider = (try? saved.decode(AutoFill.SavePassword.Reply.self).provider) ?? "a provider"
            let site = ServiceOrigin(service)?.description ?? service
            say("saved the password of \(request.username ?? "no user name") for \(site) in \(provider)")
        } catch let failure as CommandError {
            say("\(failure.message); nothing was saved")
        }
    }

    private func get(_ request: GitCredentialRequest) async throws {
        guard let service = request.serviceURL else {
            say("git named no host; nothing to look up")
            return
        }
        let answer: AutoFillClient.Answer
        do {
            answer = try requestCredential(.password, for: service, user: request.username)
        } catch let failure {
            // Answering nothing lets git try its next helper, or ask.
            say(failure.message)
            return
        }
        guard let password = answer.credential.password else { return }
        say(AutoFillClient.answered(.password, answer))
        var output = ""
        // git-credential(1): values may not contain a newline (or NUL); such a credential is not
        // one git can use.
        let user = request.username ?? answer.credential.user ?? ""
        // Bytes, not Characters: "\r\n" is one Character, and a CR would let a value add lines.
        guard !(user + password).utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0x00 }) else {
            say("the credential holds a line break, which git cannot take")
            return
        }
        output += "username=\(user)\n"
        output += "password=\(password)\n"
        FileHandle.standardOutput.write(Data(output.utf8))
    }
}

/// What git sends a helper.
struct GitCredentialRequest {
    var fields: [String: String] = [:]

    init(reading data: Data) throws {
        let text = String(decoding: data, as: UTF8.self)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty { break }
            guard let equals = line.firstIndex(of: "=") else {
                throw ValidationError("git sent a line without '=': \(line.prefix(40))")
            }
            let key = String(line[..<equals])
            // Repeated keys (capability[], wwwauth[]) are lists; the one-valued keys take the last.
            if !key.hasSuffix("[]") { fields[key] = String(line[line.index(after: equals)...]) }
        }
    }

    var username: String? { fields["username"] }

    /// The URL git needs a credential for: `protocol://host/path`, or git's own `url=`.
    var serviceURL: String? {
        if let url = fields["url"] { return url }
        guard let host = fields["host"], !host.isEmpty else { return nil }
        let scheme = fields["protocol"] ?? "https"
        return "\(scheme)://\(host)/" + (fields["path"] ?? "")
    }
}
