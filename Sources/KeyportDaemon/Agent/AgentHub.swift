import Foundation
import KeyportInterfaces
import KeyportSystem
import Synchronization
import Varlink

/// How a question to the person ended.
private enum Outcome: Sendable {
    /// The person's answer (declined: no choice, no secret).
    case answered(Agent.Answer.Parameters)
    case unanswered(AgentHub.Unanswered)
}

/// The person's agent (`org.keyport.Agent`), and the questions waiting for their answer.
///
/// The role is held the way a pinentry or a polkit agent is trusted, since whoever holds it
/// decides where the person's credentials go (docs/protocol.md, "The agent"):
/// - only the `keyport-cli` program installed beside keyportd may hold it (checked on the pinned
///   process's program, never on what it says), outside any Flatpak sandbox and not as a
///   registered app;
/// - one process holds it at a time: another `Serve` is refused, naming the holder, and the
///   holder is shown the attempt; with `replace`, the person confirms the change in the holder;
/// - an `Answer` counts only from the process that holds the role;
/// - scripted answers (`keyport agent --auto`) only where keyportd was started to allow them.
///
/// A question asked while no agent holds the role starts a dialog agent in the person's graphical
/// session (``DialogAgentLauncher``), which holds the role only until no question it was given is
/// open; without a display it fails at once: nobody would see it. A question whose asker leaves
/// is withdrawn, and the agent is told to take it off the screen.
package final class AgentHub: Agent.Server {
    /// Who may be the agent.
    package struct Policy: Sendable {
        /// The program an agent must run (`keyport-cli` beside keyportd, links resolved); `nil`
        /// when there is none there, and then no process can be the agent.
        package var program: String?
        /// Whether `Serve(scripted: true)` is accepted (`keyportd --allow-scripted-agent`).
        package var allowsScripted: Bool
        /// How long the holder has to answer a takeover's question (a holder stopped with Ctrl-Z
        /// does not keep the role from a newcomer the person started).
        package var confirmationTime: Duration
        /// What starts a dialog agent when a question finds none; `nil`: none is started.
        package var dialog: DialogAgentLauncher?
        /// How long a dialog agent keyportd started has to take the role before it is stopped
        /// and its questions fail as unanswerable.
        package var dialogStartTime: Duration

        package init(
            program: String?,
            allowsScripted: Bool,
            confirmationTime: Duration = .seconds(120),
            dialog: DialogAgentLauncher? = nil,
            dialogStartTime: Duration = .seconds(20)
        ) {
            self.program = program
            self.allowsScripted = allowsScripted
            self.confirmationTime = confirmationTime
            self.dialog = dialog
            self.dialogStartTime = dialogStartTime
        }
    }

    /// What the holder's `Serve` sends.
    private enum Event: Sendable {
        case request(Agent.Request)
        case withdrawn(String)
        case alert(String)
        /// Another agent took the role, as the person confirmed (or the holder did not answer in
        /// time): `Serve` ends with `Replaced`.
        case replaced(by: String, confirmed: Bool)
    }

    private struct Holder {
        var id: Int
        var process: PinnedProcess
        var description: String
        var events: AsyncStream<Event>.Continuation
        /// A dialog agent keyportd started: it holds the role until no question is open.
        var once: Bool
    }

    private struct Waiting {
        var order: Int
        var request: Agent.Request
        var outcome: CheckedContinuation<Outcome, Never>
    }

    private struct State {
        var holder: Holder?
        var nextID = 0
        var waiting: [String: Waiting] = [:]
        /// When the holder was last alerted, and the refused attempts since that it has not
        /// been told of: one alert in ``alertInterval`` at most, however many processes try, so
        /// that nothing can flood the person's screen.
        var lastAlert: ContinuousClock.Instant?
        var unreported = 0
        /// A takeover waiting for the holder's answer: one at a time.
        var replacing = false
        /// The dialog agent keyportd started for the questions waiting, until it is done with them;
        /// while it starts, the role is kept for it.
        var dialog: DialogAgentLauncher.Started?
    }

    /// Why `Serve` cannot take the role now.
    private enum Busy {
        /// Another agent holds it.
        case held(Holder)
        /// A dialog agent keyportd started (this process id) is on its way to take it.
        case starting(pid_t)
    }

    private static let alertInterval = Duration.seconds(10)

    private let state = Mutex(State())
    private let policy: Policy
    private let registry: ProviderRegistry

    package init(policy: Policy, registry: ProviderRegistry) {
        self.policy = policy
        self.registry = registry
    }

    /// Why a question got no answer.
    package enum Unanswered: Error, Sendable {
        /// No agent holds the role.
        case noAgent
        /// The app that asked went away first.
        case withdrawn
        /// keyportd is stopping.
        case stopping
        /// The person did not answer in the time given: the question was withdrawn.
        case timedOut
        /// The agent could not show the question (its dialog did not open), for this reason.
        case unshown(String)

        /// What the caller is told: `what` the question was about, and how long the person had.
        package func sentence(_ what: String, limit: Duration) -> String {
            switch self {
            case .noAgent: AgentHub.nobodyToAsk(what)
            case .unshown(let reason): AgentHub.notShown(what, because: reason)
            case .withdrawn: "the question was withdrawn"
            case .stopping: "keyportd is stopping"
            case .timedOut: "you did not answer \(what) in the agent within \(limit.components.seconds) seconds"
            }
        }
    }

    /// What the caller is told when the agent could not show `what` (a question's subject, or none).
    package static func notShown(_ what: String = "", because reason: String) -> String {
        "your agent could not show you the question\(what.isEmpty ? "" : " " + what) (\(reason)), so nobody was asked; "
            + "see `keyport doctor`, or start `keyport agent` in a terminal"
    }

    /// ``ask(_:)``, withdrawing the question when the person has not answered within `limit`
    /// (``Unanswered/timedOut``).
    package func ask(
        _ request: Agent.Request,
        within limit: Duration
    ) async throws(Unanswered) -> Agent.Answer.Parameters {
        typealias Outcome = Result<Agent.Answer.Parameters, Unanswered>
        let first: Outcome? = await withTaskGroup(of: Outcome?.self) { group -> Outcome? in
            group.addTask { () -> Outcome? in
                do throws(Unanswered) {
                    return .success(try await self.ask(request))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask { () -> Outcome? in
                try? await Task.sleep(for: limit)
                return nil
            }
            let first: Outcome?? = await group.next()
            // The question still on the agent's screen is withdrawn with its task.
            group.cancelAll()
            return first ?? nil
        }
        guard let first else { throw Task.isCancelled ? .withdrawn : .timedOut }
        return try first.get()
    }

    /// Whether an agent holds the role now.
    package var isHeld: Bool {
        state.withLock { $0.holder?.process.isAlive == true }
    }

    /// Whether a question asked now would reach the person: an agent holds the role, or a dialog
    /// agent can be started on their display.
    package var canAsk: Bool {
        get async {
            if isHeld { return true }
            return await policy.dialog?.session() != nil
        }
    }

    /// What the caller is told when nobody can be asked `what` (a question's subject, or none).
    package static func nobodyToAsk(_ what: String = "") -> String {
        "no agent is running to ask you\(what.isEmpty ? "" : " " + what), and keyportd could not ask you in a dialog "
            + "(no display named, a display that does not answer, or no zenity); start one with `keyport agent`"
    }

    /// Asks the person `request`; returns their answer (a choice, a secret, or neither when they
    /// declined). Cancelling the calling task (the asking app left) withdraws the question, and the
    /// agent is told to take it off the screen.
    package func ask(_ request: Agent.Request) async throws(Unanswered) -> Agent.Answer.Parameters {
        let id = request.id
        // Found before the lock is taken: it may ask systemd.
        let session = isHeld ? nil : await policy.dialog?.session()
        let outcome: Outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (outcome: CheckedContinuation<Outcome, Never>) in
                let sent = state.withLock { state -> Outcome? in
                    if state.holder == nil {
                        guard let session, let dialog = policy.dialog else { return .unanswered(.noAgent) }
                        if Task.isCancelled { return .unanswered(.withdrawn) }
                        if state.dialog == nil {
                            guard let started = try? dialog.launch(session) else { return .unanswered(.noAgent) }
                            state.dialog = started
                            watch(started.child)
                        }
                    }
                    if Task.isCancelled { return .unanswered(.withdrawn) }
                    state.nextID += 1
                    state.waiting[id] = Waiting(order: state.nextID, request: request, outcome: outcome)
                    state.holder?.events.yield(.request(request))
                    return nil
                }
                if let sent { outcome.resume(returning: sent) }
            }
        } onCancel: {
            withdraw(id)
        }
        switch outcome {
        case .answered(let answer): return answer
        case .unanswered(let why): throw why
        }
    }

    /// Ends a waiting question as withdrawn and tells the agent to take it off the screen.
    package func withdraw(_ id: String) {
        let waiting = state.withLock { state -> Waiting? in
            guard let waiting = state.waiting.removeValue(forKey: id) else { return nil }
            state.holder?.events.yield(.withdrawn(id))
            Self.releaseIfDone(&state)
            return waiting
        }
        waiting?.outcome.resume(returning: .unanswered(.withdrawn))
    }

    // MARK: - The dialog agent

    /// A dialog agent keyportd started gives the role back once no question is open: its `Serve`
    /// ends (after what it was sent), and it exits. The next question starts another.
    private static func releaseIfDone(_ state: inout State) {
        guard let holder = state.holder, holder.once, state.waiting.isEmpty else { return }
        holder.events.finish()
        state.holder = nil
        state.dialog = nil
    }

    /// Follows a dialog agent keyportd started: stopped when it has not taken the role in
    /// ``Policy/dialogStartTime``; when it ends without having taken it (no display after all, a
    /// refusal), the questions it was started for fail as unanswerable, unless another agent
    /// holds the role.
    private func watch(_ child: ChildProcess) {
        let startTime = policy.dialogStartTime
        Task { [self] in
            let timer = Task {
                try await Task.sleep(for: startTime)
                let coming = state.withLock { state in
                    state.dialog?.child === child && state.holder?.process.pid != child.pid
                }
                if coming { child.signal(SIGTERM) }
            }
            await child.waitForExit()
            timer.cancel()
            let orphaned = state.withLock { state -> [Waiting] in
                guard state.dialog?.child === child else { return [] }
                state.dialog = nil
                guard state.holder == nil else { return [] }
                defer { state.waiting = [:] }
                return Array(state.waiting.values)
            }
            for question in orphaned { question.outcome.resume(returning: .unanswered(.noAgent)) }
        }
    }

    // MARK: - Serve

    /// `Serve`: makes the caller the agent, if it may be, and sends it each question as it comes,
    /// until its connection closes or another agent takes the role.
    package func serve(
        _ input: consuming Agent.Serve.Parameters,
        request call: VarlinkRequest
    ) async throws(VarlinkError) -> Agent.Serve.Reply {
        guard call.call.more else { throw VarlinkError.expectedMore(call.call.method) }
        let process = call.peer.process
        let caller = Self.describe(process)
        if let refusal = refusal(of: process) {
            alertHolder("\(caller) tried to become your agent; keyportd refused it: \(refusal)")
            throw VarlinkError(Agent.NotAnAgent(message: "this program cannot be the person's agent: \(refusal)"))
        }
        if input.scripted == true && !policy.allowsScripted {
            alertHolder("\(caller) tried to become a scripted agent; keyportd refused it")
            throw VarlinkError(
                Agent.ScriptedNotAllowed(
                    message:
                        "this keyportd takes no scripted answers (--auto): its questions are the person's. Run `keyport agent` to answer them yourself; for a demo or a test, start keyportd with --allow-scripted-agent"
                )
            )
        }
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        // Who holds the role is checked and changed in one step: two agents arriving together
        // cannot both take it. A takeover the person confirmed applies only to the holder they
        // were asked about.
        var confirmed: Int?
        var confirmedInTime = true
        var taken: (id: Int, previous: Holder?)?
        while taken == nil {
            let found = state.withLock { state -> Busy? in
                if let holder = state.holder, holder.process.isAlive, holder.id != confirmed { return .held(holder) }
                // The dialog agent keyportd started, known by the pidfd taken as it was spawned.
                // While it starts, the role is kept for it: the questions it was started for are
                // the person's, and the first program to call in that moment must not get them.
                let once = state.dialog.map { $0.process.isSameProcess(as: process) } ?? false
                if !once, let dialog = state.dialog, dialog.process.isAlive { return .starting(dialog.child.pid) }
                state.nextID += 1
                let previous = state.holder
                state.holder = Holder(
                    id: state.nextID,
                    process: process,
                    description: caller,
                    events: continuation,
                    once: once
                )
                // Questions already waiting are this agent's now, in the order they were asked.
                for waiting in state.waiting.values.sorted(by: { $0.order < $1.order }) {
                    continuation.yield(.request(waiting.request))
                }
                taken = (state.nextID, previous)
                // A dialog agent whose questions were withdrawn while it started has none to keep it.
                Self.releaseIfDone(&state)
                return nil
            }
            guard let found else { break }
            let busy: Holder
            switch found {
            case .held(let holder): busy = holder
            case .starting(let pid):
                throw VarlinkError(
                    Agent.AgentBusy(
                        holder: "keyport agent --dialog (process \(pid))",
                        message:
                            "keyportd has just started a dialog agent (process \(pid)) for a question that is waiting: answer it in its dialog, then try again"
                    )
                )
            }
            guard input.replace == true else {
                alertHolder("\(caller) tried to become your agent; keyportd refused it")
                throw VarlinkError(
                    Agent.AgentBusy(
                        holder: busy.description,
                        message:
                            "another agent already answers keyportd's questions: \(busy.description), and it has been told of this attempt. To move the role here, run `keyport agent --replace` and say yes in that agent"
                    )
                )
            }
            confirmedInTime = try await confirmReplacement(by: caller, holder: busy.description)
            confirmed = busy.id
        }
        guard let (id, previous) = taken else { return .init() }
        previous?.events.yield(.replaced(by: caller, confirmed: confirmedInTime))
        previous?.events.finish()
        defer {
            // The holder gone: nobody can answer the questions still waiting.
            let orphaned = state.withLock { state -> [Waiting] in
                guard state.holder?.id == id else { return [] }
                state.holder = nil
                defer { state.waiting = [:] }
                return Array(state.waiting.values)
            }
            for question in orphaned { question.outcome.resume(returning: .unanswered(.noAgent)) }
        }
        try await call.send(Agent.Serve.Reply())
        // The stream ends when the agent's connection closes (its call is cancelled), or when
        // keyportd stops.
        for await event in events {
            switch event {
            case .request(let request): try await call.send(Agent.Serve.Reply(request: request))
            case .withdrawn(let id): try await call.send(Agent.Serve.Reply(withdrawn: id))
            case .alert(let text): try await call.send(Agent.Serve.Reply(alert: text))
            case .replaced(let by, let confirmed):
                let why = confirmed ? "as you confirmed" : "as this agent did not answer its request in time"
                throw VarlinkError(Agent.Replaced(message: "\(by) answers keyportd's questions now, \(why)"))
            }
        }
        return .init()
    }

    /// Why `process` cannot be the agent, or `nil` when it can.
    private func refusal(of process: PinnedProcess) -> String? {
        do {
            if let app = try process.flatpakAppID { return "it runs in the Flatpak sandbox of \(app)" }
            let executable = try process.executable
            guard let program = policy.program else {
                return "there is no keyport-cli beside keyportd, which alone may be the agent"
            }
            guard executable == program else { return "it is \(executable), and only \(program) may be the agent" }
            if case .app(let manifest, let recognisedBy) = try AppResolver.identify(
                process,
                among: registry.scan().manifests
            ) {
                return "it is the registered app \(manifest.name) (\(manifest.id)), recognised by \(recognisedBy)"
            }
            return nil
        } catch {
            return "keyportd cannot tell what it is: \(error)"
        }
    }

    /// Asks the person in the holding agent whether `caller` may take the role: `true` when they
    /// confirm, `false` when the holder did not answer in time or left; throws `AgentBusy` when
    /// they decline.
    private func confirmReplacement(by caller: String, holder: String) async throws(VarlinkError) -> Bool {
        let first = state.withLock { state -> Bool in
            defer { state.replacing = true }
            return !state.replacing
        }
        guard first else {
            throw VarlinkError(
                Agent.AgentBusy(
                    holder: holder,
                    message: "another takeover is waiting for the person's answer in \(holder)"
                )
            )
        }
        defer { state.withLock { $0.replacing = false } }
        let question = Agent.Request(
            id: UUID().uuidString,
            kind: .confirm,
            app: "keyportd",
            message:
                "\(caller) asks to become your agent in place of this one: it would see and answer every question keyportd asks you from now on. Did you start it?"
        )
        let answer: Agent.Answer.Parameters
        do {
            answer = try await ask(question, within: policy.confirmationTime)
        } catch {
            switch error {
            // The holder left meanwhile: the role is free.
            case .noAgent: return false
            // A holder that does not answer (stopped, hung) cannot keep the role from the agent
            // the person just started.
            case .timedOut: return false
            // A holder that could not show the question keeps the role: the person never saw it.
            case .withdrawn, .stopping, .unshown:
                throw VarlinkError(
                    Agent.AgentBusy(
                        holder: holder,
                        message: "the takeover was not confirmed: \(holder) still holds the role"
                    )
                )
            }
        }
        guard answer.choice == Agent.yes else {
            throw VarlinkError(
                Agent.AgentBusy(
                    holder: holder,
                    message: "the person declined the takeover in the agent that holds the role: \(holder)"
                )
            )
        }
        return true
    }

    /// Tells the holder, if any, about a refused attempt: at once when no alert went out within
    /// ``alertInterval``; else it is counted, and the next alert says how many came meanwhile.
    private func alertHolder(_ text: String) {
        state.withLock { state in
            guard let holder = state.holder else { return }
            let now = ContinuousClock.now
            if let last = state.lastAlert, now - last < Self.alertInterval {
                state.unreported += 1
                return
            }
            let earlier = state.unreported
            state.lastAlert = now
            state.unreported = 0
            let more = earlier == 0 ? "" : " (and \(earlier) refused attempt\(earlier == 1 ? "" : "s") before it)"
            holder.events.yield(.alert(text + more))
        }
    }

    /// A process as the person can recognise it: its number and command line.
    private static func describe(_ process: PinnedProcess) -> String {
        let command = ((try? process.arguments) ?? []).joined(separator: " ")
        let shown = command.count > 200 ? command.prefix(200) + "…" : Substring(command)
        return shown.isEmpty ? "process \(process.pid)" : "process \(process.pid) (\(shown))"
    }

    // MARK: - Answer

    /// `Answer`: the person's answer to a waiting question, from the process that holds the role;
    /// a choice must be one offered (for a confirmation, "yes").
    package func answer(_ answer: consuming Agent.Answer.Parameters, from process: PinnedProcess) throws(VarlinkError) {
        let problem: VarlinkError? = state.withLock { state in
            guard let holder = state.holder, holder.process.isSameProcess(as: process) else {
                return VarlinkError(
                    Agent.NotTheAgent(
                        message:
                            "only the agent that holds the role answers the person's questions, and this process does not hold it"
                    )
                )
            }
            guard let waiting = state.waiting[answer.request] else {
                return VarlinkError(
                    Agent.UnknownRequest(
                        request: answer.request,
                        message: "no question \(answer.request) is waiting (answered already, or withdrawn)"
                    )
                )
            }
            if answer.unshown != nil && (answer.choice != nil || answer.secret != nil) {
                return VarlinkError.invalidParameter("unshown", "a question that was not shown has no answer")
            }
            if let choice = answer.choice {
                let offered =
                    waiting.request.kind == Agent.Kind.confirm.rawValue
                    ? choice == Agent.yes : waiting.request.choices.contains { $0.id == choice }
                guard offered else {
                    return VarlinkError(
                        Agent.InvalidChoice(
                            choice: choice,
                            message: "\(choice) is not one of the choices offered for this question"
                        )
                    )
                }
            }
            state.waiting.removeValue(forKey: answer.request)
            waiting.outcome.resume(returning: answer.unshown.map { .unanswered(.unshown($0)) } ?? .answered(answer))
            Self.releaseIfDone(&state)
            return nil
        }
        if let problem { throw problem }
    }

    /// keyportd is stopping: every waiting question ends with `ShuttingDown`, and the agent's
    /// `Serve` returns.
    package func shutDown() {
        let (waiting, holder) = state.withLock { state in
            defer {
                state.waiting = [:]
                state.holder = nil
            }
            return (Array(state.waiting.values), state.holder)
        }
        for question in waiting { question.outcome.resume(returning: .unanswered(.stopping)) }
        holder?.events.finish()
    }

    // MARK: - Status and answers

    package func status(
        _: consuming Agent.Status.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> Agent.Status.Reply {
        // The holder's command line and the display are the person's own business.
        if let app = try? request.peer.process.flatpakAppID {
            throw VarlinkError(
                Agent.NotAnAgent(message: "an app in the Flatpak sandbox of \(app) is not told who answers")
            )
        }
        let holder = state.withLock { state in
            state.holder.flatMap { $0.process.isAlive ? $0.description : nil }
        }
        let session = await policy.dialog?.session()
        return Agent.Status.Reply(holder: holder, display: session?.display, source: session?.source)
    }

    package func answer(
        _ input: consuming Agent.Answer.Parameters,
        request: VarlinkRequest
    ) throws(VarlinkError) -> Agent.Answer.Reply {
        try answer(input, from: request.peer.process)
        return .init()
    }
}
