import ArgumentParser
import Foundation
import KeyportEncoding
import KeyportInterfaces
import KeyportSystem
import Varlink

/// Asks keyportd's AutoFill for a credential for `service` (a URL, or a domain): the one its
/// identities fit best, or, `fromList`, the one the person picks from a provider's list. The
/// request is the `keyport` front program's own (``AutoFillClient``), so both say the same.
func requestCredential(
    _ kind: AutoFill.CredentialType,
    for service: String,
    user: String? = nil,
    fromList: Bool = false,
    interactive: Bool? = nil
) throws(Failure) -> AutoFillClient.Answer {
    do {
        return try AutoFillClient.request(
            kind,
            for: service,
            user: user,
            fromList: fromList,
            interactive: interactive,
            environment: ProcessInfo.processInfo.environment
        ) { asking in
            FileHandle.write("keyport: \(DisplayText.escaping(asking))\n", to: .standardError)
        }
    } catch {
        throw Failure(message: error.message, exitCode: error.exitCode)
    }
}

/// The code or password `answer` carries.
func secret(_ kind: AutoFill.CredentialType, of answer: AutoFillClient.Answer) throws(Failure) -> String {
    do {
        return try AutoFillClient.secret(kind, of: answer)
    } catch {
        throw Failure(message: error.message, exitCode: error.exitCode)
    }
}

/// Puts `text` on the clipboard with `wl-copy` (Wayland) or `xclip` (X11), whichever the session
/// has; the text goes through standard input, never the arguments.
func copyToClipboard(_ text: String) async throws(Failure) {
    let environment = ProcessInfo.processInfo.environment
    let tools: [(name: String, arguments: [String], needs: String)] = [
        ("wl-copy", [], "WAYLAND_DISPLAY"), ("xclip", ["-selection", "clipboard"], "DISPLAY"),
    ]
    for tool in tools where !(environment[tool.needs] ?? "").isEmpty {
        guard let program = Executable.find(tool.name, path: environment["PATH"]) else { continue }
        let child: ChildProcess
        do {
            child = try ChildProcess(
                executable: program,
                arguments: tool.arguments,
                environment: environment,
                streams: .captured(input: Data(text.utf8))
            )
        } catch {
            throw .io("cannot run \(tool.name): \(error)")
        }
        // wl-copy and xclip leave a process of their own behind to serve the clipboard; the one
        // started here exits once it has the text.
        await child.waitForExit()
        guard let ended = child.termination, ended == .exited(0) else {
            throw .io("\(tool.name) \(child.termination.map { "\($0)" } ?? "did not finish")")
        }
        return
    }
    throw .io("no clipboard tool: install wl-clipboard (Wayland) or xclip (X11), in a graphical session")
}

extension OTPCommand {
    struct Fill: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fill",
            abstract: "Print the current one-time code for a site, from the providers enabled in Settings.",
            discussion: """
                The default subcommand: `keyport otp example.com` is `keyport otp fill example.com`. keyportd \
                asks the provider that saved a code for the site: the same scheme, host and port \
                (example.com means https://example.com); one saved only for another host of the site is \
                offered in `keyport agent`, never given without you. The provider may ask you too. Exit status: 0 the code was printed; 1 no provider has a code for the \
                site, or it declined or failed; 2 keyportd is not running, or a usage error.
                """
        )

        @Argument(help: "The site: a URL (https://login.example.com/) or a domain (example.com).")
        var site: String

        @Flag(help: "Also put the code on the clipboard (wl-copy or xclip).")
        var copy = false

        @Flag(help: "Pick from a provider's list of codes instead (the agent asks which provider when several could).")
        var list = false

        func run() async throws {
            let code = try secret(.oneTimeCode, of: try requestCredential(.oneTimeCode, for: site, fromList: list))
            if copy { try await copyToClipboard(code) }
            print(code)
        }
    }
}

struct PasswordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "password",
        abstract: "Print the password for a site, from the providers enabled in Settings.",
        discussion: """
            keyportd asks the provider that saved a password for the site: the same scheme, host and \
            port (example.com means https://example.com). One saved only for another host of the site \
            (login.example.com), or another port, is offered in `keyport agent`, never given without you; \
            https's is never given to http. The provider may ask you too. The password alone goes to standard output, and which account \
            answered, and the site it was saved for, to standard error; --json prints {"password", \
            "provider", "site", "user"} instead. Exit status: 0 printed; 1 no provider has a password for the site \
            (and user), or it declined or failed; 2 keyportd is not running, or a usage error.
            """
    )

    @Argument(help: "The site: a URL (https://login.example.com/) or a domain (example.com).")
    var site: String

    @Option(help: "The account's user name, when the site has several.")
    var user: String?

    @Flag(help: "Print {\"password\", \"provider\", \"site\", \"user\"} as JSON instead.")
    var json = false

    @Flag(help: "Pick from a provider's list of passwords instead (the agent asks which provider when several could).")
    var list = false

    func validate() throws {
        if list && user != nil {
            throw ValidationError("--user and --list do not go together: the list is where you pick")
        }
    }

    func run() async throws {
        let answer = try requestCredential(.password, for: site, user: user, fromList: list)
        let password = try secret(.password, of: answer)
        guard json else {
            print(password)
            FileHandle.write(
                "keyport: \(DisplayText.escaping(AutoFillClient.answered(.password, answer)))\n",
                to: .standardError
            )
            return
        }
        print(AutoFillClient.passwordJSON(answer, password: password))
    }
}
