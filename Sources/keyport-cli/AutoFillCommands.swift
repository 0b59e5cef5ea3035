import ArgumentParser
import Foundation
import KeyportCommandLine
import KeyportDesktop
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
) throws(CommandError) -> AutoFillClient.Answer {
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
        throw CommandError(message: error.message, exitCode: error.exitCode)
    }
}

/// The code or password `answer` carries.
func secret(_ kind: AutoFill.CredentialType, of answer: AutoFillClient.Answer) throws(CommandError) -> String {
    do {
        return try AutoFillClient.secret(kind, of: answer)
    } catch {
        throw CommandError(message: error.message, exitCode: error.exitCode)
    }
}

/// Puts `text` on the clipboard, offered with the hint that keeps it out of clipboard histories,
/// for `seconds`: a process of Keyport's own (`keyport clipboard-serve`) owns the clipboard and
/// serves it, and when the time is up the display server clears it if it still holds `text` —
/// what the person copied since stays. The text goes through standard input, never the arguments.
func copyToClipboard(_ text: String, seconds: Int = 30) async throws(CommandError) {
    let environment = ProcessInfo.processInfo.environment
    guard ClipboardOwner.hasSession(environment) else { throw noClipboard }
    // Left running on its own: it outlives this command. It says "ready" once the clipboard is its.
    let serving: ChildProcess
    do {
        serving = try ChildProcess(
            executable: Executable.running,
            arguments: ["clipboard-serve", "--seconds", "\(seconds)"],
            environment: environment,
            streams: .captured(input: Data(text.utf8))
        )
    } catch {
        throw .io("cannot start the process that serves the clipboard: \(error)")
    }
    // It may wait up to 10 seconds on a Wayland compositor and 20 on an X server before it gives up.
    let ready = await within(.seconds(35)) {
        await serving.output?.wait { standardOutput, _ in standardOutput.contains(UInt8(ascii: "\n")) ? true : nil }
    }
    guard ready == true else {
        // Ended, or still waiting for a display server that does not answer: stopped either way.
        serving.signalGroup(SIGTERM)
        await serving.output?.waitForEnd()
        let said = String(decoding: serving.output?.standardError ?? Data(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        throw .io(said.isEmpty ? "the process that serves the clipboard did not put it there within 35 seconds" : said)
    }
}

/// What `--copy` says without a graphical session.
let noClipboard = CommandError.io(
    "no clipboard here: --copy needs a graphical session (WAYLAND_DISPLAY or DISPLAY set), which this terminal does not have"
)

/// `keyport clipboard-serve --seconds N`, started by --copy: reads the text from standard input,
/// owns the clipboard with it (``ClipboardOwner``), prints "ready", and ends after N seconds or
/// when another copy takes the clipboard.
struct ClipboardServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clipboard-serve",
        abstract: "Serve text on the clipboard for a while, marked secret (started by --copy).",
        shouldDisplay: false
    )

    @Option(help: "Seconds to serve it.")
    var seconds: Int = 30

    func run() async throws {
        guard (1...3600).contains(seconds) else { throw CommandError.invalid("--seconds takes 1 to 3600") }
        _ = Memory.makeUndumpable()
        // A paster that closes its end before the text is written must not end serving.
        signal(SIGPIPE, SIG_IGN)
        var input = FileHandle.standardInput.readDataToEndOfFile()
        var bytes = [UInt8](input)
        input.resetBytes(in: 0..<input.count)
        let text = SecretBytes(taking: &bytes)
        do {
            _ = try ClipboardOwner.serve(text, environment: ProcessInfo.processInfo.environment, seconds: seconds) {
                // The command that started this one waits for this line; nothing is written after.
                FileHandle.write("ready\n")
            }
        } catch {
            throw CommandError.io("cannot put it on the clipboard: \(error)")
        }
    }
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

        @Flag(
            help:
                "Also put the code on the clipboard, marked secret; cleared after 30 seconds if it is still Keyport's."
        )
        var copy = false

        @Flag(help: "Pick from a provider's list of codes instead (the agent asks which provider when several could).")
        var list = false

        func run() async throws {
            // Where there is no clipboard, nothing is asked for: checked before the provider is.
            if copy, !ClipboardOwner.hasSession(ProcessInfo.processInfo.environment) { throw noClipboard }
            let code = try secret(.oneTimeCode, of: try requestCredential(.oneTimeCode, for: site, fromList: list))
            print(code)
            if copy { try await copyToClipboard(code) }
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
