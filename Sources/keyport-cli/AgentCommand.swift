import ArgumentParser
import Foundation
import KeyportCommandLine
import KeyportDesktop
import KeyportEncoding
import KeyportInterfaces
import KeyportSystem
import Synchronization
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `keyport agent`: the person's agent, the system's user interface for keyportd's questions.
struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract:
            "Answer keyportd's questions (which app may import your credentials; a provider's prompts) until stopped.",
        discussion: """
            keyportd takes one agent at a time, and only this program as it. Each question is shown \
            in a dialog (zenity) when there is a display and zenity is installed, else in this \
            terminal, and your answer is read: the app to export to, one of a provider's choices, \
            yes or no, or a secret such as a passphrase (read without echo). Nothing typed before a \
            question appears answers it, and a question its app stopped waiting for is taken away. \
            A provider's notice (what an import brought) is shown and needs no answer. When keyportd \
            stops, the agent waits for it to come back. With --replace it takes over from the agent \
            that holds the role once you confirm it there. With --auto it answers by itself, where \
            keyportd was started with --allow-scripted-agent (demos, tests): accept:ID chooses ID \
            when it is offered (and declines otherwise), accept-first chooses the first offered, \
            decline declines everything; confirmations are answered yes unless declining, and \
            secrets with the first line of --secret-file (declined without one). Stop it with Ctrl-C. \
            keyportd itself starts `keyport agent --dialog --once` on your display when a question \
            finds no agent: --dialog asks only in dialogs, and --once ends when keyportd has no \
            more questions for it.
            """
    )

    @Option(help: "Answer without asking: accept:ID, accept-first or decline.")
    var auto: String?

    @Option(help: "With --auto: the file whose first line answers a provider's request for a secret.")
    var secretFile: String?

    @Flag(help: "Take over from the agent that answers keyportd's questions now, once you confirm it there.")
    var replace = false

    @Flag(help: "Ask only in dialogs (zenity on your display); fail without one.")
    var dialog = false

    @Flag(help: "End when keyportd has no more questions for this agent, or refuses it, rather than wait for more.")
    var once = false

    func validate() throws {
        if let auto, Self.policy(auto) == nil {
            throw ValidationError("--auto takes accept:ID, accept-first or decline, not '\(auto)'")
        }
        if secretFile != nil && auto == nil { throw ValidationError("--secret-file goes with --auto") }
        if dialog && auto != nil { throw ValidationError("--dialog asks you; --auto answers for you: one of them") }
    }

    /// Where the person is asked: in dialogs when zenity is installed and the display answers
    /// (a display that does not — the session ended, a wrong variable — would fail each dialog,
    /// and zenity's failure reads as the person's "no"), else in this terminal.
    static func asker(dialogOnly: Bool, environment: [String: String]) throws(CommandError) -> AgentAsker {
        var unreachable: DesktopError?
        if let zenity = AgentAsker.dialogProgram(environment) {
            do throws(DesktopError) {
                try DisplayServer.check(environment)
                return .dialog(zenity: zenity, environment: AgentAsker.dialogEnvironment(environment))
            } catch {
                unreachable = error
            }
        }
        if dialogOnly {
            let display = !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
            let missing =
                unreachable.map { "the display does not answer: \($0)" }
                ?? (display ? "no zenity on PATH" : "no display")
            throw CommandError.invalid(
                "--dialog needs a display (DISPLAY or WAYLAND_DISPLAY) that answers and zenity on PATH; here there is \(missing)"
            )
        }
        guard Terminal.isTerminal(STDIN_FILENO) else {
            let why = unreachable.map { " (the display does not answer: \($0))" } ?? ""
            throw CommandError.invalid(
                "keyport agent reads your answers only from a terminal, and standard input is not one: run it in a terminal, or where there is a display and zenity\(why)"
            )
        }
        return .terminal
    }

    enum Policy: Equatable {
        case accept(String)
        case acceptFirst
        case decline
    }

    static func policy(_ text: String) -> Policy? {
        switch text {
        case "accept-first": return .acceptFirst
        case "decline": return .decline
        default:
            guard text.hasPrefix("accept:"), text.count > "accept:".count else { return nil }
            return .accept(String(text.dropFirst("accept:".count)))
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let asker: AgentAsker
        if let policy = auto.flatMap(Self.policy) {
            let secret = try secretFile.map { file throws(CommandError) in
                String(decoding: try readInput(file, limit: 1 << 16), as: UTF8.self)
                    .split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
            }
            asker = .scripted(policy, auto ?? "", secret: secret)
        } else {
            asker = try Self.asker(dialogOnly: dialog, environment: environment)
        }
        var served = false
        // Whether the person was shown, in a dialog, that keyportd refused this agent back.
        var warned = false
        while true {
            do {
                // Only the first time: back after keyportd stopped, nobody holds the role to ask.
                try await serve(asking: asker, replacing: replace && !served, environment: environment) {
                    served = true
                }
                if once { return }
                FileHandle.write("keyport agent: keyportd stopped; waiting for it to come back\n", to: .standardError)
            } catch let error as VarlinkError where error.name == Agent.Replaced.name {
                FileHandle.write("keyport agent: \(error.message ?? "another agent took over")\n", to: .standardError)
                return
            } catch let error as VarlinkError where served && !once {
                // Back after keyportd restarted, and refused (another agent took the role first,
                // or this program was replaced by an upgrade): the person is told, and this agent
                // keeps trying rather than leave them without one unawares.
                let said =
                    "keyport agent: keyportd did not take this agent back: \(error.sentence); trying again in 5 seconds"
                FileHandle.write(said + "\n", to: .standardError)
                if !warned { asker.warn(said) }
                warned = true
                try await Task.sleep(for: .seconds(5))
                continue
            } catch let error as VarlinkError {
                throw CommandError.invalid(error.sentence)
            } catch let error as DaemonError where served && !once && error.code == .notRunning {
                // keyportd has not come back yet.
            } catch let error as DaemonError {
                throw CommandError.io(error.description)
            } catch is VarlinkConnectionError where served && !once {
                FileHandle.write("keyport agent: keyportd stopped; waiting for it to come back\n", to: .standardError)
            } catch let error as VarlinkConnectionError {
                throw CommandError.io("keyportd: \(error)")
            }
            try await Task.sleep(for: .seconds(1))
        }
    }

    /// Takes the agent's role and serves keyportd's questions until keyportd stops (returns) or
    /// the connection fails (throws).
    private func serve(
        asking asker: AgentAsker,
        replacing: Bool,
        environment: [String: String],
        accepted: () -> Void
    ) async throws {
        try await DaemonClient.withConnection(environment: environment) { connection in
            let input = Agent.Serve.Parameters(scripted: asker.isScripted, replace: replacing)
            try await connection.send(
                VarlinkCall(method: Agent.Serve.name, parameters: RawJSON(encoding: input), more: true)
            )
            if replacing {
                FileHandle.write(
                    "keyport agent: confirm the takeover in the agent that holds the role\n",
                    to: .standardError
                )
            }
            // The first reply says the role is this agent's.
            guard try await connection.nextReply().continues else { return }
            accepted()
            FileHandle.write("keyport agent: waiting for keyportd's questions; \(asker.mode)\n", to: .standardError)
            let desk = AgentDesk(asker: asker, environment: environment)
            defer { desk.close() }
            while true {
                let (parameters, continues) = try await connection.nextReply()
                // keyportd is stopping: its last reply ends Serve.
                guard continues else { return }
                let served = try parameters.decode(Agent.Serve.Reply.self)
                if let request = served.request {
                    desk.ask(request)
                } else if let withdrawn = served.withdrawn {
                    desk.withdraw(withdrawn)
                } else if let alert = served.alert {
                    desk.alert(alert)
                }
            }
        }
    }
}
