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
        abstract: "Answer keyportd's questions (which app may import your credentials) until stopped.",
        discussion: """
            Shows each question in a dialog (zenity) when there is a display and zenity is installed, \
            else in this terminal, and reads your answer. With --auto it answers by \
            itself, for automation and tests: accept:ID chooses the app with that id when it is \
            offered (and declines otherwise), accept-first chooses the first app offered, decline \
            declines everything. Stop it with Ctrl-C.
            """
    )

    @Option(help: "Answer without asking: accept:ID, accept-first or decline.")
    var auto: String?

    func validate() throws {
        if let auto, Self.policy(auto) == nil {
            throw ValidationError("--auto takes accept:ID, accept-first or decline, not '\(auto)'")
        }
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
        try await withKeyportd(environment: environment) { connection in
            try await connection.send(VarlinkCall(method: "org.keyport.Agent.Serve", more: true))
            FileHandle.write("keyport agent: waiting for keyportd's questions\n", to: .standardError)
            while true {
                let (parameters, _) = try await connection.nextReply()
                let request = try parameters.decode(Agent.Served.self).request
                let choice =
                    if request.kind != "export" {
                        // A kind of question this agent does not know how to show: declined.
                        String?.none
                    } else if let policy {
                        Self.decide(request, by: policy)
                    } else if let zenity = Self.dialog(environment) {
                        Self.askInDialog(request, zenity: zenity, environment: environment)
                    } else {
                        Self.ask(request)
                    }
                // On a second connection: replies on the first come in order, after Serve's.
                var outcome = choice.map { "chose \(DisplayText.escaping($0))" } ?? "declined"
                do {
                    try await DaemonClient.withConnection(environment: environment) { answering in
                        _ = try await answering.call(
                            "org.keyport.Agent.Answer",
                            RawJSON(encoding: Agent.Answer(request: request.id, choice: choice))
                        )
                    }
                } catch let error as VarlinkError where error.name == "org.keyport.Agent.UnknownRequest" {
                    // Another agent answered first, or the app that asked has gone: nothing to do.
                    outcome = "answered elsewhere or withdrawn"
                }
                FileHandle.write(
                    "keyport agent: \(DisplayText.escaping(request.exporter)): \(outcome)\n",
                    to: .standardError
                )
            }
        }
    }

    static func decide(_ request: Agent.Request, by policy: Policy) -> String? {
        switch policy {
        case .accept(let id): request.importers.contains { $0.id == id } ? id : nil
        case .acceptFirst: request.importers.first?.id
        case .decline: nil
        }
    }

    /// zenity's path when a dialog can be shown: a display, and zenity on `PATH`.
    static func dialog(_ environment: [String: String]) -> String? {
        let display = !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        return display ? Executable.find("zenity", path: environment["PATH"]) : nil
    }

    /// Asks in a zenity list dialog: the explanation, one row per app. Cancelling, closing the
    /// dialog or choosing nothing declines.
    static func askInDialog(_ request: Agent.Request, zenity: String, environment: [String: String]) -> String? {
        var arguments = [
            "--list", "--title=Export credentials", "--text=\(request.explanation)", "--column=App", "--column=Id",
            "--print-column=2", "--hide-column=2", "--ok-label=Export", "--cancel-label=Do not export", "--width=560",
            "--height=360",
        ]
        for importer in request.importers { arguments += [importer.name, importer.id] }
        guard let ran = try? ChildProcess.run(executable: zenity, arguments: arguments, environment: environment),
            ran.termination == .exited(0)
        else { return nil }
        let chosen = String(decoding: ran.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        // Only an app that was offered: anything else zenity printed declines.
        return request.importers.first { $0.id == chosen }?.id
    }

    /// Shows the question in the terminal and reads the answer: a number, or 0 (or end of input)
    /// to decline.
    static func ask(_ request: Agent.Request) -> String? {
        var text = "\n\(DisplayText.escaping(request.explanation))\n\n"
        for (index, importer) in request.importers.enumerated() {
            text += "  \(index + 1). \(DisplayText.escaping(importer.name)) (\(DisplayText.escaping(importer.id)))\n"
        }
        text += "  0. Do not export\nExport to which app? "
        FileHandle.write(text, to: .standardError)
        while let line = readLine() {
            if let number = Int(line.trimmingCharacters(in: .whitespaces)),
                (0...request.importers.count).contains(number)
            {
                return number == 0 ? nil : request.importers[number - 1].id
            }
            FileHandle.write("Type a number from 0 to \(request.importers.count): ", to: .standardError)
        }
        return nil
    }
}
