import Foundation
import KeyportCommandLine
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

/// How `keyport agent` asks the person.
enum AgentAsker: Sendable {
    /// Answers by itself (`--auto`): the policy, its text for messages, the secret to give.
    case scripted(AgentCommand.Policy, String, secret: String?)
    /// zenity dialogs on the person's display.
    case dialog(zenity: String, environment: [String: String])
    /// This terminal: questions on standard error, answers from standard input (a terminal).
    case terminal

    var isScripted: Bool {
        if case .scripted = self { return true }
        return false
    }

    /// The mode, as the agent announces it.
    var mode: String {
        switch self {
        case .scripted(_, let text, _):
            "answering them by itself (--auto \(text)), as this keyportd was started to allow"
        case .dialog: "asking you in dialogs on your display"
        case .terminal: "asking you in this terminal"
        }
    }

    /// Shows `text` in a dialog when asking in dialogs (the person may not see this agent's
    /// output); not waited for. The text goes on zenity's standard input, as every question's does.
    func warn(_ text: String) {
        guard case .dialog(let zenity, let environment) = self else { return }
        _ = try? ChildProcess(
            executable: zenity,
            arguments: ["--text-info", "--title=Keyport: attention", "--width=520", "--height=240"],
            environment: environment,
            streams: .captured(input: Data("\(text)\n".utf8))
        )
    }

    /// `environment` for zenity: with a UTF-8 locale when the person's is not one (`LANG=C`, a
    /// service's bare environment), since zenity cannot show a non-ASCII text in another — and
    /// every question may hold one.
    static func dialogEnvironment(_ environment: [String: String]) -> [String: String] {
        let locale =
            [environment["LC_ALL"], environment["LC_CTYPE"], environment["LANG"]]
            .compactMap { $0 }.first { !$0.isEmpty }?.lowercased() ?? ""
        guard !locale.contains("utf-8") && !locale.contains("utf8") else { return environment }
        var environment = environment
        environment["LC_ALL"] = "C.UTF-8"
        return environment
    }

    /// zenity's path when a dialog can be shown: a display, and zenity on `PATH`.
    static func dialogProgram(_ environment: [String: String]) -> String? {
        let display = !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        return display ? Executable.find("zenity", path: environment["PATH"]) : nil
    }
}

/// A question being shown, and the way to take it away: a latch for asynchronous waits (a
/// dialog's process) and a pipe for a terminal read blocked in `poll`.
private final class Withdrawal: Sendable {
    let latch = Latch()
    private let pipe: (read: Int32, write: Int32)

    init() {
        var ends: [Int32] = [-1, -1]
        if Glibc.pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, O_NONBLOCK)
            }
        }
        pipe = (ends[0], ends[1])
    }

    deinit {
        close(pipe.read)
        close(pipe.write)
    }

    /// What a terminal read watches.
    var descriptor: Int32 { pipe.read }

    func signal() {
        guard !latch.isOpen else { return }
        latch.open()
        var byte: UInt8 = 1
        _ = write(pipe.write, &byte, 1)
    }
}

/// Where `keyport agent` shows keyportd's questions, one at a time, in the order they came, and
/// sends the person's answers (on a connection of its own: replies on `Serve`'s come in order).
/// A question withdrawn before it is shown is skipped; one withdrawn while shown is taken off
/// the screen (the dialog closed, the terminal read abandoned) and not answered.
final class AgentDesk: Sendable {
    private struct State {
        var withdrawn: Set<String> = []
        var shown: (id: String, withdrawal: Withdrawal)?
    }

    /// The state, in an object of its own that the worker shares.
    private final class Board: Sendable {
        let state = Mutex(State())
    }

    private let questions: AsyncStream<Agent.Request>.Continuation
    private let board = Board()
    private let asker: AgentAsker
    private let worker: Task<Void, Never>

    init(asker: AgentAsker, environment: [String: String]) {
        self.asker = asker
        let (stream, continuation) = AsyncStream.makeStream(of: Agent.Request.self)
        questions = continuation
        let board = board
        worker = Task {
            for await request in stream {
                let withdrawal = Withdrawal()
                let skip = board.state.withLock { state -> Bool in
                    if state.withdrawn.remove(request.id) != nil { return true }
                    state.shown = (request.id, withdrawal)
                    return false
                }
                if skip { continue }
                let answer = await Self.show(request, asker: asker, withdrawal: withdrawal)
                board.state.withLock { $0.shown = nil }
                guard let answer else {
                    FileHandle.write(
                        "keyport agent: \(DisplayText.escaping(request.app)): the question was withdrawn (it no longer waits for your answer)\n",
                        to: .standardError
                    )
                    continue
                }
                await Self.send(answer, to: request, environment: environment)
            }
        }
    }

    func ask(_ request: Agent.Request) {
        questions.yield(request)
    }

    func withdraw(_ id: String) {
        board.state.withLock { state in
            if let shown = state.shown, shown.id == id {
                shown.withdrawal.signal()
            } else {
                state.withdrawn.insert(id)
            }
        }
    }

    /// Something the person should know that needs no answer.
    func alert(_ text: String) {
        FileHandle.write("keyport agent: attention: \(DisplayText.escaping(text))\n", to: .standardError)
        // Not waited for: the person closes it when they have read it; its process is reaped by
        // ChildProcess's own thread.
        asker.warn(DisplayText.escaping(text))
    }

    /// Stops showing questions (the connection to keyportd ended).
    func close() {
        questions.finish()
        board.state.withLock { $0.shown?.withdrawal.signal() }
        worker.cancel()
    }

    /// The person's answer, or `nil` when the question was withdrawn first.
    private static func show(
        _ request: Agent.Request,
        asker: AgentAsker,
        withdrawal: Withdrawal
    ) async -> Agent.Answer.Parameters? {
        // A kind of question this agent does not know how to show: declined.
        guard let kind = Agent.Kind(rawValue: request.kind) else {
            return Agent.Answer.Parameters(request: request.id, choice: nil)
        }
        switch asker {
        case .scripted(let policy, _, let secret):
            return decide(request, kind: kind, by: policy, secret: secret)
        case .dialog(let zenity, let environment):
            return await askInDialog(
                request,
                kind: kind,
                zenity: zenity,
                environment: environment,
                withdrawal: withdrawal
            )
        case .terminal:
            return await withCheckedContinuation { (answer: CheckedContinuation<Agent.Answer.Parameters?, Never>) in
                // The terminal is read with blocking calls: on a thread of its own, not the
                // concurrency pool's.
                Thread.detachNewThread {
                    answer.resume(returning: askInTerminal(request, kind: kind, withdrawal: withdrawal))
                }
            }
        }
    }

    private static func send(
        _ answer: Agent.Answer.Parameters,
        to request: Agent.Request,
        environment: [String: String]
    ) async {
        var outcome =
            if request.kind == Agent.Kind.notice.rawValue {
                "told you: \(DisplayText.escaping(request.message))"
            } else if request.kind == Agent.Kind.confirm.rawValue {
                // What was confirmed, so the agent's log says what was given.
                (answer.choice == Agent.yes ? "you said yes to: " : "you said no to: ")
                    + DisplayText.escaping(request.message)
            } else {
                answer.secret != nil
                    ? "gave the secret it asked for (\(DisplayText.escaping(request.message)))"
                    : answer.choice.map { chosen(request, $0) } ?? "declined"
            }
        if let unshown = answer.unshown {
            outcome = "could not show you the question (\(unshown)); keyportd was told nobody was asked"
        }
        do {
            try await DaemonClient.withConnection(environment: environment) { answering in
                _ = try await answering.call(Agent.Answer.name, RawJSON(encoding: answer))
            }
        } catch let error as VarlinkError where error.name == Agent.UnknownRequest.name {
            // The app that asked has gone meanwhile: nothing to do.
            outcome = "withdrawn before the answer arrived"
        } catch let error as VarlinkError {
            outcome = "answer refused: \(DisplayText.escaping(error.sentence))"
        } catch {
            outcome = "answer not delivered: \(error)"
        }
        FileHandle.write("keyport agent: \(DisplayText.escaping(request.app)): \(outcome)\n", to: .standardError)
    }

    /// `chose ID: NAME`, naming the choice as it was offered, so the agent's log says what was given.
    private static func chosen(_ request: Agent.Request, _ id: String) -> String {
        let name = request.choices.first { $0.id == id }?.name
        return "chose \(DisplayText.escaping(id))" + (name.map { ": \(DisplayText.escaping($0))" } ?? "")
    }

    /// The answer `policy` gives; `secret` answers a request for one.
    static func decide(
        _ request: Agent.Request,
        kind: Agent.Kind,
        by policy: AgentCommand.Policy,
        secret: String?
    ) -> Agent.Answer.Parameters {
        var answer = Agent.Answer.Parameters(request: request.id, choice: nil)
        switch (kind, policy) {
        case (_, .decline): break
        case (.confirm, _): answer.choice = Agent.yes
        case (.secret, _): answer.secret = secret
        case (.notice, _): break
        case (_, .accept(let id)): answer.choice = request.choices.contains { $0.id == id } ? id : nil
        case (_, .acceptFirst): answer.choice = request.choices.first?.id
        }
        return answer
    }

    // MARK: - Dialogs

    /// How one zenity window ended.
    private enum Window {
        /// Its OK button, with what zenity printed.
        case accepted(Data)
        /// Cancelled or closed by the person.
        case cancelled
        /// Taken away: the question was withdrawn.
        case withdrawn
        /// It could not be shown, for this reason.
        case failed(String)
    }

    /// Asks in zenity dialogs. The question's text — the app's name, the site, the account, a
    /// vault's path — goes on zenity's standard input, shown in a text window, never on its
    /// command line, which every user of the machine can read in `/proc/PID/cmdline`: its options
    /// are Keyport's own words only. Its OK button goes on to what is asked: for a confirmation or
    /// a notice it is the answer; for a secret a second window takes it, hidden; for an export or
    /// a choice a second window lists the choices (their names on standard input too, one cell a
    /// line, escaped so that none can add a row; a row's hidden id is its number, Keyport's own).
    /// Cancelling or closing a window declines; a window that could not be shown (zenity failed)
    /// is said as such, never as the person's "no"; the window open is closed when the question is
    /// withdrawn.
    private static func askInDialog(
        _ request: Agent.Request,
        kind: Agent.Kind,
        zenity: String,
        environment: [String: String],
        withdrawal: Withdrawal
    ) async -> Agent.Answer.Parameters? {
        var answer = Agent.Answer.Parameters(request: request.id, choice: nil)
        func show(_ arguments: [String], input: Data = Data()) async -> Window {
            await window(arguments, input: input, zenity: zenity, environment: environment, withdrawal: withdrawal)
        }
        let (accept, decline) =
            switch kind {
            case .confirm: ("Yes", "No")
            case .notice: ("OK", "Close")
            case .secret: ("Type it…", "Decline")
            case .export: ("Choose the app…", "Do not export")
            case .choose: ("Choose…", "Cancel")
            }
        let question = "\(DisplayText.escaping(request.app)) asks:\n\n\(DisplayText.escaping(request.message))\n"
        var shown = await show(
            [
                "--text-info", "--title=Keyport", "--width=520", "--height=320", "--ok-label=\(accept)",
                "--cancel-label=\(decline)",
            ],
            input: Data(question.utf8)
        )
        if case .accepted = shown {
            switch kind {
            case .confirm: answer.choice = Agent.yes
            case .notice: break
            case .secret:
                shown = await show(["--password", "--title=Keyport"])
                if case .accepted(let printed) = shown {
                    var secret = String(decoding: printed, as: UTF8.self)
                    if secret.hasSuffix("\n") { secret.removeLast() }
                    answer.secret = secret.isEmpty ? nil : secret
                }
            case .export, .choose:
                let export = kind == .export
                var rows = Data()
                for (index, choice) in request.choices.enumerated() {
                    rows += Data("\(DisplayText.escaping(choice.name))\n\(index + 1)\n".utf8)
                }
                shown = await show(
                    [
                        "--list", "--title=Keyport", "--text=\(export ? "Export to which app?" : "Choose one:")",
                        "--column=\(export ? "App" : "Choice")", "--column=Number", "--print-column=2",
                        "--hide-column=2", "--ok-label=\(export ? "Export" : "Choose")", "--cancel-label=\(decline)",
                        "--width=560", "--height=360",
                    ],
                    input: rows
                )
                // Only a row that was offered: anything else zenity printed declines.
                if case .accepted(let printed) = shown,
                    let number = Int(String(decoding: printed, as: UTF8.self).trimmingWhitespace()),
                    request.choices.indices.contains(number - 1)
                {
                    answer.choice = request.choices[number - 1].id
                }
            }
        }
        switch shown {
        case .withdrawn: return nil
        case .failed(let why): answer.unshown = why
        case .accepted, .cancelled: break
        }
        return answer
    }

    /// Shows one zenity window with `arguments` and `input` on its standard input, until the
    /// person closes it or the question is withdrawn.
    private static func window(
        _ arguments: [String],
        input: Data,
        zenity: String,
        environment: [String: String],
        withdrawal: Withdrawal
    ) async -> Window {
        let child: ChildProcess
        do {
            child = try ChildProcess(
                executable: zenity,
                arguments: arguments,
                environment: environment,
                streams: .captured(input: input)
            )
        } catch {
            return .failed("zenity did not start: \(error)")
        }
        guard let output = child.output else { return .failed("zenity's output could not be read") }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await child.waitForExit() }
            group.addTask {
                await withdrawal.latch.wait()
                child.signalGroup(SIGTERM)
            }
            await group.next()
            group.cancelAll()
        }
        if withdrawal.latch.isOpen { return .withdrawn }
        await output.waitForEnd()
        switch child.termination {
        case .exited(0): return .accepted(output.standardOutput)
        // zenity's Cancel, Escape and the window's close button.
        case .exited(1): return .cancelled
        case let ending:
            let said = String(decoding: output.standardError.suffix(400), as: UTF8.self).trimmingWhitespace()
            return .failed(
                "zenity \(ending.map { "\($0)" } ?? "ended")\(said.isEmpty ? "" : ": " + DisplayText.escaping(said))"
            )
        }
    }

    // MARK: - Terminal

    /// Shows the whole question on standard error, throws away what was typed before, and reads
    /// the answer from the terminal: a number (0, or the end of input, declines), y or n, or a
    /// secret typed without echo. `nil` when the question was withdrawn meanwhile.
    private static func askInTerminal(
        _ request: Agent.Request,
        kind: Agent.Kind,
        withdrawal: Withdrawal
    ) -> Agent.Answer.Parameters? {
        var answer = Agent.Answer.Parameters(request: request.id, choice: nil)
        var text = "\n\(DisplayText.escaping(request.app)): \(DisplayText.escaping(request.message))\n"
        switch kind {
        case .confirm: text += "Continue? [y/N] "
        case .secret: text += "Type it (hidden; empty to decline): "
        case .notice:
            FileHandle.write(text, to: .standardError)
            return answer
        case .export, .choose:
            text += "\n"
            for (index, choice) in request.choices.enumerated() {
                text += "  \(index + 1). \(DisplayText.escaping(choice.name)) (\(DisplayText.escaping(choice.id)))\n"
            }
            text += kind == .export ? "  0. Do not export\nExport to which app? " : "  0. Cancel\nWhich one? "
        }
        FileHandle.write(text, to: .standardError)
        Terminal.discardTypedAhead(STDIN_FILENO)
        while true {
            let read = Terminal.readAnswer(from: STDIN_FILENO, echo: kind != .secret, unless: withdrawal.descriptor)
            let line: String
            switch read {
            case .interrupted:
                FileHandle.write("\n", to: .standardError)
                return nil
            case .end: return answer
            case .line(let typed): line = typed
            }
            switch kind {
            case .confirm:
                if line.trimmingWhitespace(newlines: false).lowercased().hasPrefix("y") { answer.choice = Agent.yes }
                return answer
            case .secret:
                answer.secret = line.isEmpty ? nil : line
                return answer
            case .notice: return answer
            case .export, .choose:
                if let number = Int(line.trimmingWhitespace(newlines: false)),
                    (0...request.choices.count).contains(number)
                {
                    answer.choice = number == 0 ? nil : request.choices[number - 1].id
                    return answer
                }
                FileHandle.write("Type a number from 0 to \(request.choices.count): ", to: .standardError)
            }
        }
    }
}
