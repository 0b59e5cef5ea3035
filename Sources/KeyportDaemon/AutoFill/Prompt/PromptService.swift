import Foundation
import KeyportInterfaces
import Varlink

/// `org.keyport.Prompt`: a provider asks the person, through the agents (``AgentHub``), in its
/// own name: confirm, choose one of several, type a secret, or be told something. The Linux stand-in for the view a
/// provider shows on Apple platforms. The answer is passed on; keyportd keeps nothing.
package final class PromptService: Prompt.Server {
    private let registry: ProviderRegistry
    private let agents: AgentHub
    private let pool: ProviderPool?
    /// How long the person has to answer a prompt.
    private let personTime: Duration

    package init(registry: ProviderRegistry, agents: AgentHub, pool: ProviderPool?, personTime: Duration) {
        self.registry = registry
        self.agents = agents
        self.pool = pool
        self.personTime = personTime
    }

    private func ask(
        _ request: VarlinkRequest,
        kind: Agent.Kind,
        message: String,
        choices: [Agent.Choice] = []
    ) async throws(VarlinkError) -> Agent.Answer.Parameters {
        let provider: ProviderManifest
        let started = pool?.provider(startedAs: request.peer.process)
        switch AppResolver.provider(request.peer.process, among: registry.scan().manifests, startedAs: started) {
        case .success(let manifest): provider = manifest
        case .failure(let refusal):
            throw VarlinkError(Prompt.NotAProvider(message: refusal.message))
        }
        let question = Agent.Request(
            id: UUID().uuidString,
            kind: kind,
            app: provider.name,
            message: message,
            choices: choices
        )
        // A provider keyportd started is answering a call: its clock stops while the person is
        // asked, and its caller is told that they are.
        // (Said only when an agent will show the question: without one it fails at once.)
        if let started, await agents.canAsk {
            let agents = agents
            let id = question.id
            await pool?.promptBegan(started, name: provider.name) { agents.withdraw(id) }
        }
        var personTimedOut: Duration?
        defer { if let started { pool?.promptEnded(started, personTimedOut: personTimedOut) } }
        do {
            return try await agents.ask(question, within: personTime)
        } catch {
            switch error {
            case .noAgent:
                throw VarlinkError(
                    Prompt.NoAgent(message: AgentHub.nobodyToAsk())
                )
            case .unshown(let reason):
                throw VarlinkError(Prompt.NoAgent(message: AgentHub.notShown(because: reason)))
            case .withdrawn:
                // The provider that asked has gone; nobody reads this.
                return Agent.Answer.Parameters(request: question.id, choice: nil)
            case .timedOut:
                // Declined, for the provider; its caller is told the person did not answer.
                personTimedOut = personTime
                return Agent.Answer.Parameters(request: question.id, choice: nil)
            case .stopping:
                throw VarlinkError(Prompt.ShuttingDown(message: "keyportd is stopping"))
            }
        }
    }

    /// What a person can choose from: 1 to 100 choices, each with an id of its own and a name of
    /// at most 200 characters. (Agents show names escaped, as text, never as options of a program
    /// they run; these bounds keep a list a person can read.)
    package static func check(_ choices: [Agent.Choice]) throws(VarlinkError) {
        guard (1...100).contains(choices.count) else {
            throw .invalidParameter("choices", "a person chooses from 1 to 100 choices, not \(choices.count)")
        }
        var seen = Set<String>()
        for (index, choice) in choices.enumerated() {
            guard !choice.id.isEmpty, choice.id.utf8.count <= 256, seen.insert(choice.id).inserted else {
                throw .invalidParameter("choices", "choice \(index + 1) has an empty, overlong or repeated id")
            }
            guard !choice.name.isEmpty, choice.name.count <= 200 else {
                throw .invalidParameter("choices", "choice \(index + 1) has an empty name, or one over 200 characters")
            }
        }
    }

    // MARK: - Methods

    package func confirm(
        _ input: consuming Prompt.Confirm.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> Prompt.Confirm.Reply {
        let answer = try await ask(request, kind: .confirm, message: input.message)
        return Prompt.Confirm.Reply(confirmed: answer.choice == Agent.yes)
    }

    package func choose(
        _ input: consuming Prompt.Choose.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> Prompt.Choose.Reply {
        try Self.check(input.choices)
        let answer = try await ask(request, kind: .choose, message: input.message, choices: input.choices)
        return Prompt.Choose.Reply(choice: answer.choice)
    }

    package func secret(
        _ input: consuming Prompt.Secret.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> Prompt.Secret.Reply {
        let answer = try await ask(request, kind: .secret, message: input.message)
        return Prompt.Secret.Reply(secret: answer.secret)
    }

    package func notify(
        _ input: consuming Prompt.Notify.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> Prompt.Notify.Reply {
        _ = try await ask(request, kind: .notice, message: input.message)
        return .init()
    }
}
