import ArgumentParser
import Foundation
import KeyportCommandLine
import KeyportEncoding
import KeyportSystem
import KeyportVaultCommands

/// The `keyport` command line.
///
/// Exit codes are the same for every command: 0 success, 1 when the input is invalid (or the
/// operation failed on it), 2 for a usage or I/O error.
@main
struct Keyport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyport",
        abstract: "Credential exchange, one-time codes and sign-in for Linux.",
        discussion: """
            keyport talks to keyportd, Keyport's per-user service: it moves credentials between \
            password managers (exchange), answers you in its agent, prints the one-time codes and \
            passwords the providers enabled in Settings hold for a site (otp, password, git-credential, \
            type, fill), runs Keyport Vault (vault), and signs in through a web service (login). Start \
            with `keyport doctor`, which says what runs and what is missing. Exit status: 0 success; 1 the \
            input was invalid or the operation failed on it; 2 a usage or I/O error.
            """,
        version: KeyportRelease.version,
        subcommands: [
            CXFCommand.self, OTPCommand.self, LoginCommand.self, URLSchemeCommand.self, ProvidersCommand.self,
            ExchangeCommand.self, AgentCommand.self, PasswordCommand.self, GitCredentialCommand.self, VaultCommand.self,
            BrowserCommand.self, TypeCommand.self, FillCommand.self, ClipboardServeCommand.self, DoctorCommand.self,
        ]
    )

    /// Runs the command line, mapping errors onto the exit codes above.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let argument = ItemArguments.optionLikeID(in: arguments) {
            try? FileHandle.standardError.write(
                contentsOf: Data(
                    "keyport: \(ItemArguments.optionLikeIDMessage(argument, command: arguments[1]))\n".utf8
                )
            )
            Foundation.exit(2)
        }
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandError {
            // The code, when the failure has one, as the `cxf validate` report prints it: `[too-large]`.
            let code = failure.code.map { " [\($0)]" } ?? ""
            try? FileHandle.standardError.write(
                contentsOf: Data("keyport: \(DisplayText.escaping(failure.message))\(code)\n".utf8)
            )
            Foundation.exit(failure.exitCode)
        } catch {
            // Help requests (0) and a command's own ExitCode(1) keep their status; usage mistakes exit 2.
            let code = exitCode(for: error)
            if code == .success || code == .failure {
                exit(withError: error)
            }
            try? FileHandle.standardError.write(contentsOf: Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(2)
        }
    }
}
