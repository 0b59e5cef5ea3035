import ArgumentParser
import Foundation
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

            store, erase: no provider accepts saving or deleting passwords from here yet, so keyport \
            says so and changes nothing. In particular a locked or unreachable provider never loses a \
            credential. Exit status 0 in every case git handles itself; 2 for a usage error (no operation, or \
            what git sent is not its protocol).
            """
    )

    @Argument(help: "get, store or erase (git gives it; others are ignored, as git asks of helpers).")
    var operation: String

    func run() async throws {
        let request = try GitCredentialRequest(reading: FileHandle.standardInput.readDataToEndOfFile())
        switch operation {
        case "get":
            try await get(request)
        case "store", "erase":
            FileHandle.standardError.write(
                Data(
                    "keyport git-credential: no provider accepts \(operation == "store" ? "saving" : "deleting") passwords from git; nothing was changed\n"
                        .utf8
                )
            )
        default:
            // gitcredentials(7): a helper ignores operations it does not know (git may add some).
            break
        }
    }

    private func get(_ request: GitCredentialRequest) async throws {
        guard let service = request.serviceURL else {
            FileHandle.standardError.write(Data("keyport git-credential: git named no host; nothing to look up\n".utf8))
            return
        }
        let answer: AutoFill.RequestOut
        do {
            answer = try requestCredential(.password, for: service, user: request.username)
        } catch let failure {
            // Answering nothing lets git try its next helper, or ask.
            FileHandle.standardError.write(Data("keyport git-credential: \(failure.message)\n".utf8))
            return
        }
        guard let password = answer.credential.password else { return }
        var output = ""
        // git-credential(1): values may not contain a newline (or NUL); such a credential is not
        // one git can use.
        let user = request.username ?? answer.credential.user ?? ""
        guard !(user + password).contains(where: { $0 == "\n" || $0 == "\0" }) else {
            FileHandle.standardError.write(
                Data("keyport git-credential: the credential holds a line break, which git cannot take\n".utf8)
            )
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
