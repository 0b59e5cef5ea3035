import ArgumentParser
import Foundation
import KeyportEncoding
import KeyportInterfaces
import KeyportSystem
import Varlink

/// `keyport agent`: the system's user interface for keyportd's questions.
struct AgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract:
            "Answer keyportd's questions (which app may import your credentials; a provider's prompts) until stopped.",
        discussion: """
            Shows each question in a dialog (zenity) when there is a display and zenity is installed, \
            else in this terminal, and reads your answer: the app to export to, one of a provider's \
            choices, yes or no, or a secret such as a passphrase (read without echo); a provider's \
            notice (what an import brought) is shown and needs no answer. With --auto it \
            answers by itself, for automation and tests: accept:ID chooses ID when it is offered \
            (and declines otherwise), accept-first chooses the first offered, decline declines \
            everything; confirmations are answered yes unless declining, and secrets with the first \
            line of --secret-file (declined without one). Stop it with Ctrl-C.
            """
    )

    @Option(help: "Answer without asking: accept:ID, accept-first or decline.")
    var auto: String?

    @Option(help: "With --auto: the file whose first line answers a provider's request for a secret.")
    var secretFile: String?

    func validate() throws {
        if let auto, Self.policy(auto) == nil {
            throw ValidationError("--auto takes accept:ID, accept-first or decline, not '\(auto)'")
        }
        if secretFile != nil && auto == nil { throw ValidationError("--secret-file goes with --auto") }
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
        let policy = auto.flatMap(Self.policy)
        let secret = try secretFile.map { file throws(Failure) in
            String(decoding: try readInput(file, limit: 1 << 16), as: UTF8.self)
                .split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        }
        try await withKeyportd(environment: environment) { connection in
            try await connection.send(VarlinkCall(method: "org.keyport.Agent.Serve", more: true))
            FileHandle.write("keyport agent: waiting for keyportd's questions\n", to: .standardError)
            while true {
                let (parameters, _) = try await connection.nextReply()
                let request = try parameters.decode(Agent.Served.self).request
                let answer =
                    if Agent.Kind(rawValue: request.kind) == nil {
                        // A kind of question this agent does not know how to show: declined.
                        Agent.Answer(request: request.id, choice: nil)
                    } else if let policy {
                        Self.decide(request, by: policy, secret: secret)
                    } else if let zenity = Self.dialog(environment) {
                        Self.askInDialog(request, zenity: zenity, environment: environment)
                    } else {
                        Self.ask(request)
                    }
                // On a second connection: replies on the first come in order, after Serve's.
                var outcome =
                    if request.kind == Agent.Kind.notice.rawValue {
                        "told you: \(DisplayText.escaping(request.message))"
                    } else {
                        answer.secret != nil
                            ? "gave a secret" : answer.choice.map { "chose \(DisplayText.escaping($0))" } ?? "declined"
                    }
                do {
                    try await DaemonClient.withConnection(environment: environment) { answering in
                        _ = try await answering.call("org.keyport.Agent.Answer", RawJSON(encoding: answer))
                    }
                } catch let error as VarlinkError where error.name == "org.keyport.Agent.UnknownRequest" {
                    // Another agent answered first, or the app that asked has gone: nothing to do.
                    outcome = "answered elsewhere or withdrawn"
                }
                FileHandle.write(
                    "keyport agent: \(DisplayText.escaping(request.app)): \(outcome)\n",
                    to: .standardError
                )
            }
        }
    }

    /// The answer `policy` gives; `secret` answers a request for one.
    static func decide(_ request: Agent.Request, by policy: Policy, secret: String?) -> Agent.Answer {
        var answer = Agent.Answer(request: request.id, choice: nil)
        switch (Agent.Kind(rawValue: request.kind), policy) {
        case (_, .decline): break
        case (.confirm?, _): answer.choice = Agent.yes
        case (.secret?, _): answer.secret = secret
        case (.notice?, _): break
        case (_, .accept(let id)): answer.choice = request.choices.contains { $0.id == id } ? id : nil
        case (_, .acceptFirst): answer.choice = request.choices.first?.id
        }
        return answer
    }

    /// zenity's path when a dialog can be shown: a display, and zenity on `PATH`.
    static func dialog(_ environment: [String: String]) -> String? {
        let display = !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        return display ? Executable.find("zenity", path: environment["PATH"]) : nil
    }

    /// Asks in a zenity dialog: a list of the choices (an export, a provider's choice), a question,
    /// or a password entry. Cancelling, closing the dialog or choosing nothing declines.
    static func askInDialog(_ request: Agent.Request, zenity: String, environment: [String: String]) -> Agent.Answer {
        // zenity reads its texts as Pango markup: what apps say is shown as written, not styled.
        func plain(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;")
        }
        let title = plain(request.app)
        let message = plain(request.message)
        var arguments: [String]
        switch Agent.Kind(rawValue: request.kind) {
        case .confirm?:
            arguments = ["--question", "--title=\(title)", "--text=\(message)", "--width=480"]
        case .secret?:
            arguments = ["--password", "--title=\(title): \(message)"]
        case .notice?:
            arguments = ["--info", "--title=\(title)", "--text=\(message)", "--width=480"]
        default:
            let export = request.kind == Agent.Kind.export.rawValue
            arguments = [
                "--list", "--title=\(export ? "Export credentials" : title)", "--text=\(message)",
                "--column=\(export ? "App" : "Choice")", "--column=Id", "--print-column=2", "--hide-column=2",
                "--ok-label=\(export ? "Export" : "Choose")", "--cancel-label=\(export ? "Do not export" : "Cancel")",
                "--width=560", "--height=360",
            ]
            for choice in request.choices { arguments += [plain(choice.name), choice.id] }
        }
        var answer = Agent.Answer(request: request.id, choice: nil)
        guard let ran = try? ChildProcess.run(executable: zenity, arguments: arguments, environment: environment),
            ran.termination == .exited(0)
        else { return answer }
        let printed = String(decoding: ran.standardOutput, as: UTF8.self)
        switch Agent.Kind(rawValue: request.kind) {
        case .confirm?: answer.choice = Agent.yes
        case .secret?: answer.secret = printed.hasSuffix("\n") ? String(printed.dropLast()) : printed
        default:
            // Only a choice that was offered: anything else zenity printed declines.
            let chosen = printed.trimmingWhitespace()
            answer.choice = request.choices.first { $0.id == chosen }?.id
        }
        return answer
    }

    /// Shows the question in the terminal and reads the answer: a number (0, or the end of input,
    /// declines), y or n, or a secret typed without echo.
    static func ask(_ request: Agent.Request) -> Agent.Answer {
        var answer = Agent.Answer(request: request.id, choice: nil)
        let header = "\n\(DisplayText.escaping(request.app)): \(DisplayText.escaping(request.message))\n"
        switch Agent.Kind(rawValue: request.kind) {
        case .confirm?:
            FileHandle.write(header + "Continue? [y/N] ", to: .standardError)
            if let line = readLine(), line.trimmingWhitespace(newlines: false).lowercased().hasPrefix("y") {
                answer.choice = Agent.yes
            }
        case .secret?:
            FileHandle.write(header, to: .standardError)
            answer.secret = Terminal.readSecret(prompt: "Secret (empty to decline): ").flatMap { $0.isEmpty ? nil : $0 }
        case .notice?:
            FileHandle.write(header, to: .standardError)
        default:
            let export = request.kind == Agent.Kind.export.rawValue
            var text = header + "\n"
            for (index, choice) in request.choices.enumerated() {
                text += "  \(index + 1). \(DisplayText.escaping(choice.name)) (\(DisplayText.escaping(choice.id)))\n"
            }
            text += export ? "  0. Do not export\nExport to which app? " : "  0. Cancel\nWhich one? "
            FileHandle.write(text, to: .standardError)
            while let line = readLine() {
                if let number = Int(line.trimmingWhitespace(newlines: false)),
                    (0...request.choices.count).contains(number)
                {
                    answer.choice = number == 0 ? nil : request.choices[number - 1].id
                    return answer
                }
                FileHandle.write("Type a number from 0 to \(request.choices.count): ", to: .standardError)
            }
        }
        return answer
    }
}
