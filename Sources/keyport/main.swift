// `keyport`, the program people run. It answers the commands a person or a script runs many times
// a day by itself — AutoFill's `keyport otp SITE` and `keyport password SITE [--user NAME]
// [--json]` through keyportd, and `keyport vault show [--reveal] TARGET` through the vault's
// keeper, which writes what is shown — and hands every other command line, help and options
// included, to `keyport-cli` beside it, which has the whole command line (ArgumentParser,
// Foundation, swift-nio).
//
// Why two programs: a program linked with Foundation and swift-nio spends 15–20 ms starting before
// it runs a line; this one links only the standard library (statically) and Keyport's Core
// modules, starts in about 2 ms, and prints a code in a few (docs/performance.md). The forms it
// answers are strict; anything it does not recognise goes to keyport-cli unchanged, so the
// command line has one parser and one set of messages.
import KeyportEncoding
import KeyportInterfacesCore
import KeyportSystemCore
import KeyportVaultKeeperCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A request this program answers by itself.
struct AutoFillCommand {
    var kind: AutoFill.CredentialType
    var site: String
    var user: String?
    var json = false

    /// `otp SITE` and `password SITE [--user NAME | --user=NAME] [--json]`; `nil` for anything
    /// else, which keyport-cli parses.
    init?(_ arguments: [String]) {
        var rest = arguments.dropFirst()
        switch arguments.first {
        case "otp":
            guard rest.count == 1, let site = rest.first, Self.isSite(site) else { return nil }
            kind = .oneTimeCode
            self.site = site
        case "password":
            kind = .password
            var site: String?
            while let argument = rest.popFirst() {
                if argument == "--json", !json {
                    json = true
                } else if argument == "--user", user == nil, let value = rest.popFirst(), !value.hasPrefix("-") {
                    user = value
                } else if argument.hasPrefix("--user="), argument.count > "--user=".count, user == nil {
                    user = String(argument.dropFirst("--user=".count))
                } else if site == nil, Self.isSite(argument) {
                    site = argument
                } else {
                    return nil
                }
            }
            guard let site else { return nil }
            self.site = site
        default:
            return nil
        }
    }

    /// A domain or a URL, never an option or a subcommand's name (`keyport otp code` is the `code`
    /// subcommand): it has a dot or a colon. A bare name (`localhost`) goes to keyport-cli, which
    /// takes it as a site just as well.
    static func isSite(_ argument: String) -> Bool {
        !argument.hasPrefix("-") && (argument.contains(".") || argument.contains(":"))
    }

    /// Asks keyportd, prints the code or password, and returns the exit status keyport-cli would.
    func run() -> Int32 {
        do {
            let answer = try AutoFillClient.request(
                kind,
                for: site,
                user: user,
                environment: ProcessEnvironment.current
            ) { asking in
                // Said at once: the person may have an agent's question to answer before anything
                // is printed here.
                writeError("keyport: \(DisplayText.escaping(asking))\n")
            }
            let secret = try AutoFillClient.secret(kind, of: answer)
            writeOutput((json ? AutoFillClient.passwordJSON(answer, password: secret) : secret) + "\n")
            if kind == .password, !json {
                writeError("keyport: \(DisplayText.escaping(AutoFillClient.answered(kind, answer)))\n")
            }
            return 0
        } catch {
            writeError("keyport: \(DisplayText.escaping(error.message))\n")
            return error.exitCode
        }
    }
}

/// `vault show [--reveal] [--] TARGET`, which this program answers with one call to the default
/// vault's keeper (its `Show` writes the item as keyport-cli's `vault show` prints it). Another
/// vault (`--vault`), an unlock on the way (`--passphrase-stdin`), help, and a target that looks
/// like an option go to keyport-cli.
struct VaultShowCommand {
    var target: String
    var reveal = false

    init?(_ arguments: [String]) {
        guard arguments.count >= 3, arguments[0] == "vault", arguments[1] == "show" else { return nil }
        var target: String?
        var rest = arguments.dropFirst(2)
        while let argument = rest.popFirst() {
            if argument == "--reveal", !reveal {
                reveal = true
            } else if argument == "--", target == nil, rest.count == 1 {
                target = rest.popFirst()
            } else if target == nil, !argument.hasPrefix("-"), !argument.isEmpty {
                target = argument
            } else {
                return nil
            }
        }
        guard let target else { return nil }
        self.target = target
    }

    /// Asks the keeper, prints what it showed, and returns the exit status keyport-cli would.
    func run() -> Int32 {
        do {
            let locations = try VaultLocations(environment: ProcessEnvironment.current)
            let reply = try VaultKeeperClient.callBlocking(
                locations,
                VaultKeeper.Show.self,
                .init(target: target, reveal: reveal)
            )
            let (output, failure) = VaultTargetWords.shown(reply, target: target)
            writeOutput(output)
            guard let failure else { return 0 }
            writeError("keyport: \(DisplayText.escaping(failure))\n")
            return 1
        } catch {
            let (message, status) = VaultKeeperClient.refusal(error) ?? ("\(error)", 2)
            writeError("keyport: \(DisplayText.escaping(message))\n")
            return status
        }
    }
}

/// Replaces this process with keyport-cli, beside this program, given the same arguments.
func handOver(_ arguments: [String]) -> Never {
    guard let own = Executable.own else {
        writeError(
            "keyport: \(Executable.unknown); keyport-cli cannot be found beside it\n"
        )
        exit(2)
    }
    let program = FilePaths.join(FilePaths.parent(own), "keyport-cli")
    let reason = ProcessImage.replace(with: program, arguments: [program] + arguments)
    writeError(
        "keyport: cannot run \(DisplayText.escaping(program)) (\(reason)); it holds every command but `otp SITE`, `password SITE` and `vault show TARGET`. Install it beside keyport (`swift build` builds both)\n"
    )
    exit(2)
}

/// Writes `text` to standard error.
func writeError(_ text: String) {
    _ = writeAll(text, to: STDERR_FILENO)
}

/// Writes `text` to standard output. A write that fails (a full disk) ends the program with
/// exit 2 and says why, as keyport-cli does: output is never silently cut short. A reader that
/// closed the pipe (`| head`) ends it as SIGPIPE ends other tools.
func writeOutput(_ text: String) {
    let code = writeAll(text, to: STDOUT_FILENO)
    guard code != 0 else { return }
    if code == EPIPE {
        signal(SIGPIPE, SIG_DFL)
        raise(SIGPIPE)
    }
    writeError("keyport: cannot write to standard output: \(String(cString: strerror(code)))\n")
    exit(2)
}

/// Writes all of `text` to `descriptor`; 0, or the `errno` of the write that failed.
func writeAll(_ text: String, to descriptor: Int32) -> Int32 {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written < 0, errno == EINTR { continue }
        guard written > 0 else { return written < 0 ? errno : EIO }
        bytes = bytes.dropFirst(written)
    }
    return 0
}

let arguments = Array(CommandLine.arguments.dropFirst())
if let command = AutoFillCommand(arguments) {
    exit(command.run())
}
if let command = VaultShowCommand(arguments) {
    exit(command.run())
}
handOver(arguments)
