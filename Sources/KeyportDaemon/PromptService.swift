import Foundation
import KeyportInterfaces
import Varlink

/// `org.keyport.Prompt`: a provider asks the person, through the agents (``AgentHub``), in its
/// own name: confirm, choose one of several, type a secret, or be told something. The Linux stand-in for the view a
/// provider shows on Apple platforms. The answer is passed on; keyportd keeps nothing.
package final class PromptService: Sendable {
    private let registry: ProviderRegistry
    private let agents: AgentHub
    private let pool: ProviderPool?

    package init(registry: ProviderRegistry, agents: AgentHub, pool: ProviderPool?) {
        self.registry = registry
        self.agents = agents
        self.pool = pool
    }

    private func ask(
        _ request: VarlinkRequest,
        kind: Agent.Kind,
        message: String,
        choices: [Agent.Choice] = []
    ) async throws(VarlinkError) -> Agent.Answer {
        let provider: ProviderManifest
        switch AppResolver.provider(
            request.peer.process,
            among: registry.scan().manifests,
            startedAs: pool?.provider(startedAs: request.peer.process)
        ) {
        case .success(let manifest): provider = manifest
        case .failure(let refusal):
            throw VarlinkError(name: Prompt.Error.notAProvider, ["message": refusal.message])
        }
        let question = Agent.Request(
            id: UUID().uuidString,
            kind: kind,
            app: provider.name,
            message: message,
            choices: choices
        )
        do {
            return try await agents.ask(question)
        } catch {
            switch error {
            case .noAgent:
                throw VarlinkError(
                    name: Prompt.Error.noAgent,
                    ["message": "no agent is running to ask you; start one with `keyport agent`"]
                )
            case .withdrawn:
                // The provider that asked has gone; nobody reads this.
                return Agent.Answer(request: question.id, choice: nil)
            case .stopping:
                throw VarlinkError(name: Prompt.Error.shuttingDown, ["message": "keyportd is stopping"])
            }
        }
    }

    /// The interface and its methods, for the server.
    package var implementation: VarlinkInterfaceImplementation {
        VarlinkInterfaceImplementation(
            KeyportInterfaces.prompt,
            methods: [
                "Confirm": { [self] request throws(VarlinkError) in
                    let input = try request.parameters(as: Prompt.MessageIn.self)
                    let answer = try await ask(request, kind: .confirm, message: input.message)
                    return try RawJSON.reply(Prompt.ConfirmOut(confirmed: answer.choice == Agent.yes))
                },
                "Choose": { [self] request throws(VarlinkError) in
                    let input = try request.parameters(as: Prompt.ChooseIn.self)
                    let answer = try await ask(request, kind: .choose, message: input.message, choices: input.choices)
                    return try RawJSON.reply(Prompt.ChooseOut(choice: answer.choice))
                },
                "Notify": { [self] request throws(VarlinkError) in
                    let input = try request.parameters(as: Prompt.MessageIn.self)
                    _ = try await ask(request, kind: .notice, message: input.message)
                    return .emptyObject
                },
                "Secret": { [self] request throws(VarlinkError) in
                    let input = try request.parameters(as: Prompt.MessageIn.self)
                    let answer = try await ask(request, kind: .secret, message: input.message)
                    return try RawJSON.reply(Prompt.SecretOut(secret: answer.secret))
                },
            ]
        )
    }
}
