import ArgumentParser
import Crypto
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
/// has; the text goes through standard input, never the arguments. A process of Keyport's own
/// clears the clipboard `forgetAfter` later if it still holds `text` (what the person copied
/// since stays), knowing only the text's SHA-256.
func copyToClipboard(_ text: String, forgetAfter: Duration = .seconds(30)) async throws(Failure) {
    let environment = ProcessInfo.processInfo.environment
    guard let clipboard = Clipboard(environment) else {
        throw .io("no clipboard tool: install wl-clipboard (Wayland) or xclip (X11), in a graphical session")
    }
    try await clipboard.run(clipboard.copy, input: Data(text.utf8))
    let executable: String
    do {
        executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    } catch {
        throw .io("cannot find this keyport executable to clear the clipboard later: \(error.localizedDescription)")
    }
    // Left running on its own: it outlives this command, and holds only the digest. It says
    // "ready" once it has read it, which must happen while this command still writes.
    let forgetting: ChildProcess
    do {
        forgetting = try ChildProcess(
            executable: executable,
            arguments: ["clipboard-forget", "--after", "\(forgetAfter.components.seconds)"],
            environment: environment,
            streams: .captured(input: Data(Clipboard.digest(text).utf8))
        )
    } catch {
        throw .io("cannot start the process that clears the clipboard: \(error)")
    }
    let ready = await within(.seconds(10)) {
        await forgetting.output?.wait { standardOutput, _ in standardOutput.contains(UInt8(ascii: "\n")) ? true : nil }
    }
    guard ready == true else { throw .io("the process that clears the clipboard did not start") }
}

/// The session's clipboard tools: wl-clipboard on Wayland, xclip on X11.
struct Clipboard {
    var copy: (String, [String])
    var paste: (String, [String])
    var clear: (String, [String])

    init?(_ environment: [String: String]) {
        let path = environment["PATH"]
        if !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty, let copy = Executable.find("wl-copy", path: path),
            let paste = Executable.find("wl-paste", path: path)
        {
            self.copy = (copy, [])
            self.paste = (paste, ["--no-newline"])
            clear = (copy, ["--clear"])
        } else if !(environment["DISPLAY"] ?? "").isEmpty, let xclip = Executable.find("xclip", path: path) {
            copy = (xclip, ["-selection", "clipboard"])
            paste = (xclip, ["-selection", "clipboard", "-o"])
            clear = (xclip, ["-selection", "clipboard", "-i", "/dev/null"])
        } else {
            return nil
        }
    }

    /// The hexadecimal SHA-256 of `text`: what the clearing process compares, never the text.
    static func digest(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Runs one of the tools to its end; what it printed.
    @discardableResult
    func run(_ tool: (String, [String]), input: Data? = nil) async throws(Failure) -> Data {
        let child: ChildProcess
        do {
            child = try ChildProcess(
                executable: tool.0,
                arguments: tool.1,
                environment: ProcessInfo.processInfo.environment,
                streams: .captured(input: input)
            )
        } catch {
            throw .io("cannot run \(tool.0): \(error)")
        }
        // wl-copy and xclip leave a process of their own behind to serve the clipboard; the one
        // started here exits once it has the text.
        await child.waitForExit()
        guard let ended = child.termination, ended == .exited(0) else {
            throw .io("\(tool.0) \(child.termination.map { "\($0)" } ?? "did not finish")")
        }
        // What it printed, once it closed its output; not waited for after a copy, whose process
        // left behind keeps the same output open.
        guard tool.0 == paste.0, tool.1 == paste.1 else { return Data() }
        await child.output?.waitForEnd()
        return child.output?.standardOutput ?? Data()
    }
}

/// `keyport clipboard-forget --after SECONDS`, started by --copy: reads the copied text's SHA-256
/// from standard input, waits, and clears the clipboard if it still holds that text.
struct ClipboardForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clipboard-forget",
        abstract: "Clear the clipboard later if it still holds what Keyport copied (started by --copy).",
        shouldDisplay: false
    )

    @Option(help: "Seconds to wait.")
    var after: Int = 30

    func run() async throws {
        let digest = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        // The command that started this one waits for it; nothing is written after.
        FileHandle.write("ready\n")
        try await Task.sleep(for: .seconds(after))
        guard let clipboard = Clipboard(ProcessInfo.processInfo.environment) else { return }
        let held = try await clipboard.run(clipboard.paste)
        // Digests of the same length, compared whole: nothing is learned from how long it took.
        let now = Array(Clipboard.digest(String(decoding: held, as: UTF8.self)).utf8)
        guard now.count == digest.utf8.count, zip(now, digest.utf8).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0 else {
            return
        }
        try await clipboard.run(clipboard.clear)
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
                "Also put the code on the clipboard (wl-copy or xclip), cleared after 30 seconds if it is still there."
        )
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
