import Foundation
import KeyportInterfaces
import Synchronization
import Varlink

/// How a question to the person ended.
private enum Outcome: Sendable {
    /// The person's answer (declined: no choice, no secret).
    case answered(Agent.Answer)
    case unanswered(AgentHub.Unanswered)
}

/// The agents connected to keyportd (`org.keyport.Agent`), and the questions waiting for the
/// person's answer.
///
/// An agent's `Serve` call stays open; each question goes to every agent connected, and to each
/// that connects while it waits; the first `Answer` counts. A question asked while no agent is
/// connected fails at once: nobody would see it.
package final class AgentHub: Sendable {
    private struct Waiting {
        var request: Agent.Request
        var outcome: CheckedContinuation<Outcome, Never>
    }

    private struct State {
        var agents: [Int: AsyncStream<Agent.Request>.Continuation] = [:]
        var nextAgent = 0
        var waiting: [String: Waiting] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// Why a question got no answer.
    package enum Unanswered: Error, Sendable {
        /// No agent was connected to ask.
        case noAgent
        /// The app that asked went away first.
        case withdrawn
        /// keyportd is stopping.
        case stopping
    }

    /// Asks the person `request`; returns their answer (a choice, a secret, or neither when they
    /// declined). Cancelling the calling task (the asking app left) withdraws the question.
    package func ask(_ request: Agent.Request) async throws(Unanswered) -> Agent.Answer {
        let id = request.id
        let outcome: Outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (outcome: CheckedContinuation<Outcome, Never>) in
                let agents = state.withLock { state -> [AsyncStream<Agent.Request>.Continuation]? in
                    guard !state.agents.isEmpty else { return nil }
                    if Task.isCancelled { return [] }
                    state.waiting[id] = Waiting(request: request, outcome: outcome)
                    return Array(state.agents.values)
                }
                switch agents {
                case nil: outcome.resume(returning: .unanswered(.noAgent))
                case let agents? where agents.isEmpty: outcome.resume(returning: .unanswered(.withdrawn))
                case let agents?: for agent in agents { agent.yield(request) }
                }
            }
        } onCancel: {
            state.withLock { $0.waiting.removeValue(forKey: id) }?.outcome.resume(returning: .unanswered(.withdrawn))
        }
        switch outcome {
        case .answered(let answer): return answer
        case .unanswered(let why): throw why
        }
    }

    /// `Serve`: sends each question to this agent as it comes, until its connection closes.
    package func serve(_ call: VarlinkRequest) async throws(VarlinkError) -> RawJSON {
        guard call.call.more else { throw VarlinkError.expectedMore(call.call.method) }
        let (questions, continuation) = AsyncStream.makeStream(of: Agent.Request.self)
        let agent = state.withLock { state in
            state.nextAgent += 1
            state.agents[state.nextAgent] = continuation
            // Questions already waiting are this agent's too.
            for waiting in state.waiting.values.sorted(by: { $0.request.id < $1.request.id }) {
                continuation.yield(waiting.request)
            }
            return state.nextAgent
        }
        defer {
            // The last agent gone: nobody can answer the questions still waiting.
            let orphaned = state.withLock { state -> [Waiting] in
                state.agents.removeValue(forKey: agent)
                guard state.agents.isEmpty else { return [] }
                defer { state.waiting = [:] }
                return Array(state.waiting.values)
            }
            for question in orphaned { question.outcome.resume(returning: .unanswered(.noAgent)) }
        }
        // The stream ends when the agent's connection closes (its call is cancelled).
        for await question in questions {
            try await call.send(RawJSON.reply(Agent.Served(request: question)))
        }
        return .emptyObject
    }

    /// `Answer`: the person's answer to a waiting question; a choice must be one offered (for a
    /// confirmation, "yes").
    package func answer(_ answer: Agent.Answer) throws(VarlinkError) {
        let problem: VarlinkError? = state.withLock { state in
            guard let waiting = state.waiting[answer.request] else {
                return VarlinkError(
                    name: "org.keyport.Agent.UnknownRequest",
                    [
                        "request": answer.request,
                        "message": "no question \(answer.request) is waiting (answered already, or withdrawn)",
                    ]
                )
            }
            if let choice = answer.choice {
                let offered =
                    waiting.request.kind == Agent.Kind.confirm.rawValue
                    ? choice == Agent.yes : waiting.request.choices.contains { $0.id == choice }
                guard offered else {
                    return VarlinkError(
                        name: "org.keyport.Agent.InvalidChoice",
                        ["choice": choice, "message": "\(choice) is not one of the choices offered for this question"]
                    )
                }
            }
            state.waiting.removeValue(forKey: answer.request)
            waiting.outcome.resume(returning: .answered(answer))
            return nil
        }
        if let problem { throw problem }
    }

    /// keyportd is stopping: every waiting question ends with `ShuttingDown`, and every agent's
    /// `Serve` returns.
    package func shutDown() {
        let (waiting, agents) = state.withLock { state in
            defer {
                state.waiting = [:]
                state.agents = [:]
            }
            return (Array(state.waiting.values), Array(state.agents.values))
        }
        for question in waiting { question.outcome.resume(returning: .unanswered(.stopping)) }
        for agent in agents { agent.finish() }
    }

    /// The interface and its methods, for the server.
    package var implementation: VarlinkInterfaceImplementation {
        VarlinkInterfaceImplementation(
            KeyportInterfaces.agent,
            methods: [
                "Serve": { [self] request throws(VarlinkError) in try await self.serve(request) },
                "Answer": { [self] request throws(VarlinkError) in
                    let answer = try request.parameters(as: Agent.Answer.self)
                    try self.answer(answer)
                    return .emptyObject
                },
            ]
        )
    }
}
