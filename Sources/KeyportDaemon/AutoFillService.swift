import Foundation
import KeyportDomains
import KeyportInterfaces
import Logging
import Varlink

/// `org.keyport.AutoFill`: a client asks for a credential for some services; keyportd picks the
/// identity that fits best among the enabled providers' and asks its provider, as Apple's
/// AutoFill does (seed 003): without the person first, with them when the provider needs it.
///
/// Which identity: for the earliest (most specific) service identifier that any identity fits,
/// the best fit (same host and port, same host, same registrable domain), then the provider
/// earlier in Settings, then the higher rank. Only providers enabled in Settings, and declaring
/// the kind asked for, are considered.
package final class AutoFillService: Sendable {
    private let registry: ProviderRegistry
    private let identities: IdentityStoreService
    private let configuration: URL
    private let pool: ProviderPool
    private let agents: AgentHub
    private let list: PublicSuffixList
    private let logger: Logger
    /// How long a provider has to answer without the person, and with them (its clock stopped
    /// while the person is asked); how long the person has to answer.
    private let quickTime: Duration
    private let interactiveTime: Duration
    private let personTime: Duration

    package init(
        registry: ProviderRegistry,
        identities: IdentityStoreService,
        configuration: URL,
        pool: ProviderPool,
        agents: AgentHub,
        quickTime: Duration,
        interactiveTime: Duration,
        personTime: Duration,
        list: PublicSuffixList = .current,
        logger: Logger
    ) {
        self.registry = registry
        self.identities = identities
        self.configuration = configuration
        self.pool = pool
        self.agents = agents
        self.quickTime = quickTime
        self.interactiveTime = interactiveTime
        self.personTime = personTime
        self.list = list
        self.logger = logger
    }

    /// An identity that fits a request, and how well.
    package struct Candidate {
        var provider: ProviderManifest
        var identity: IdentityStore.Identity
        /// Sort key: earlier identifier, better fit, earlier provider, higher rank.
        var key: (identifier: Int, fit: Int, provider: Int, rank: Int)
    }

    /// The providers enabled in Settings whose capabilities pass `accepts`, in Settings order.
    private func enabledProviders(where accepts: (Providers.Capabilities) -> Bool) -> [ProviderManifest] {
        let manifests = Dictionary(
            registry.scan().manifests.map { ($0.id, $0) },
            uniquingKeysWith: { first, _ in first }
        )
        return ProviderSettings.load(from: configuration).settings.enabled.compactMap { manifests[$0] }.filter {
            accepts($0.capabilities)
        }
    }

    /// The identity that fits `requested` best among the enabled providers', or `nil`.
    package func best(kind: IdentityStore.Kind, user: String? = nil, for requested: [ServiceAddress]) -> Candidate? {
        best(kind: kind, user: user, for: requested, among: enabledProviders { $0.provides(kind) })
    }

    /// The identity that fits `requested` best among `providers`' (in Settings order), or `nil`.
    private func best(
        kind: IdentityStore.Kind,
        user: String?,
        for requested: [ServiceAddress],
        among providers: [ProviderManifest]
    ) -> Candidate? {
        var best: Candidate?
        for (order, provider) in providers.enumerated() {
            let stored = identities.identities(of: provider.id)
            for (index, address) in requested.enumerated() {
                for (identity, saved) in stored.bySite[address.site(in: list)] ?? []
                where identity.kind == kind && (user == nil || identity.user == user) {
                    let fit = saved.match(for: address, in: list)
                    guard fit != .none else { continue }
                    let candidate = Candidate(
                        provider: provider,
                        identity: identity,
                        key: (index, -fit.rawValue, order, -identity.rank)
                    )
                    if best.map({ candidate.key < $0.key }) ?? true { best = candidate }
                }
            }
        }
        return best
    }

    private func requestCredential(_ request: VarlinkRequest) async throws(VarlinkError) -> RawJSON {
        let input = try request.parameters(as: AutoFill.RequestIn.self)
        let requested = input.serviceIdentifiers.compactMap { ServiceAddress($0.identifier) }
        guard let candidate = best(kind: input.type, user: input.user, for: requested) else {
            let services =
                input.serviceIdentifiers.map(\.identifier).joined(separator: ", ")
                + (input.user.map { " (user \($0))" } ?? "")
            throw VarlinkError(
                name: AutoFill.Error.noCredential,
                [
                    "message":
                        "no enabled provider has a \(input.type == .password ? "password" : "one-time code") for \(services.isEmpty ? "no service" : services)"
                ]
            )
        }
        let provider = candidate.provider
        let parameters = try RawJSON.reply(
            CredentialProvider.RequestIn(
                request: CredentialProvider.Request(type: input.type, credentialIdentity: candidate.identity)
            )
        )
        let reply = try await ask(
            provider,
            CredentialProvider.provideWithoutUserInteraction,
            then: CredentialProvider.provideWithUserInteraction,
            parameters,
            interactive: input.interactive ?? true,
            as: Self.call(for: request, to: provider)
        )
        return try answer(reply, from: provider)
    }

    /// A provider's call on behalf of `request`: when the provider asks the person through the
    /// agent and the client called with `more`, the client hears so at once (an `Asking` reply),
    /// rather than waiting in silence while the person is asked.
    private static func call(for request: VarlinkRequest, to provider: ProviderManifest) -> ProviderPool.Call {
        ProviderPool.Call { message in
            guard request.call.more,
                let reply = try? RawJSON(encoding: AutoFill.Asking(provider: provider.id, asking: message))
            else { return }
            try? await request.send(reply)
        }
    }

    private func savePassword(_ request: VarlinkRequest) async throws(VarlinkError) -> RawJSON {
        let input = try request.parameters(as: AutoFill.SavePasswordIn.self)
        guard let address = ServiceAddress(input.serviceIdentifier.identifier) else {
            throw .invalidParameter(
                "serviceIdentifier",
                "'\(input.serviceIdentifier.identifier)' is neither a domain nor a URL with a host"
            )
        }
        guard !input.password.isEmpty else { throw .invalidParameter("password", "an empty password is not saved") }
        let savers = enabledProviders { $0.SavesPasswords }
        // An update goes where the account is already; a new one to the first provider in Settings.
        guard
            let provider = best(kind: .password, user: input.user, for: [address], among: savers)?.provider
                ?? savers.first
        else {
            throw VarlinkError(
                name: AutoFill.Error.noSavingProvider,
                [
                    "message":
                        "no enabled provider takes passwords to save (its manifest would declare SavesPasswords); nothing was saved"
                ]
            )
        }
        let parameters = try RawJSON.reply(
            CredentialProvider.SavePasswordIn(
                request: CredentialProvider.SavePasswordRequest(
                    serviceIdentifier: input.serviceIdentifier,
                    user: input.user,
                    password: input.password,
                    title: input.title,
                    sessionID: UUID().uuidString,
                    event: input.event ?? .formDidDisappear
                )
            )
        )
        _ = try await ask(
            provider,
            CredentialProvider.savePasswordWithoutUserInteraction,
            then: CredentialProvider.savePasswordWithUserInteraction,
            parameters,
            interactive: input.interactive ?? true,
            as: Self.call(for: request, to: provider)
        )
        logger.info("password saved", metadata: ["provider": "\(provider.id)"])
        return try RawJSON.reply(AutoFill.SavePasswordOut(provider: provider.id))
    }

    /// Seed 003's dance: `quick` without the person first; when the provider answers
    /// `userInteractionRequired`, `withPerson` (unless the request is not to involve them).
    private func ask(
        _ provider: ProviderManifest,
        _ quick: String,
        then withPerson: String,
        _ parameters: RawJSON,
        interactive: Bool,
        as call: ProviderPool.Call
    ) async throws(VarlinkError) -> RawJSON {
        do {
            return try await ask(provider, quick, parameters, quickTime, passingOnInteraction: true)
        } catch  where Self.extensionCode(error) == 100 {
            guard interactive else {
                throw VarlinkError(
                    name: AutoFill.Error.interactionRequired,
                    [
                        "message":
                            "\(provider.name) needs you (to unlock, or to choose), and the request was not to involve you"
                    ]
                )
            }
            logger.info("provider needs the person", metadata: ["provider": "\(provider.id)"])
            return try await ask(provider, withPerson, parameters, interactiveTime, as: call)
        }
    }

    private func requestFromList(_ request: VarlinkRequest) async throws(VarlinkError) -> RawJSON {
        let input = try request.parameters(as: CredentialProvider.ListIn.self)
        let providers = enabledProviders { $0.provides(input.type) }
        let kind = input.type == .password ? "passwords" : "one-time codes"
        guard var provider = providers.first else {
            throw VarlinkError(
                name: AutoFill.Error.noCredential,
                ["message": "no provider of \(kind) is enabled in Settings (keyport providers enable ID)"]
            )
        }
        if providers.count > 1 {
            // As Apple's picker does: which provider's list, before the list itself.
            let services = input.serviceIdentifiers.map(\.identifier).joined(separator: ", ")
            let question = Agent.Request(
                id: UUID().uuidString,
                kind: .choose,
                app: "Keyport",
                message: "Which provider's \(kind)\(services.isEmpty ? "" : " for \(services)")?",
                choices: providers.map { Agent.Choice(id: $0.id, name: $0.name) }
            )
            let answer: Agent.Answer
            do {
                answer = try await agents.ask(question, within: personTime)
            } catch {
                let why =
                    switch error {
                    case .noAgent:
                        "several providers could answer and no agent is running to ask you which; start one with `keyport agent`"
                    case .withdrawn: "the question was withdrawn"
                    case .stopping: "keyportd is stopping"
                    case .timedOut:
                        "you did not choose a provider in the agent within \(personTime.components.seconds) seconds"
                    }
                throw VarlinkError(name: AutoFill.Error.canceled, ["message": why])
            }
            guard let chosen = providers.first(where: { $0.id == answer.choice }) else {
                throw VarlinkError(name: AutoFill.Error.canceled, ["message": "you chose no provider"])
            }
            provider = chosen
        }
        let reply = try await ask(
            provider,
            CredentialProvider.provideFromList,
            try RawJSON.reply(input),
            interactiveTime,
            as: Self.call(for: request, to: provider)
        )
        return try answer(reply, from: provider)
    }

    /// Calls the provider; its refusal and its failures become AutoFill's errors — except
    /// `userInteractionRequired` when `passingOnInteraction`, which the caller handles (asking
    /// again with the person).
    private func ask(
        _ provider: ProviderManifest,
        _ method: String,
        _ parameters: RawJSON,
        _ timeout: Duration,
        passingOnInteraction: Bool = false,
        as call: ProviderPool.Call = ProviderPool.Call()
    ) async throws(VarlinkError) -> RawJSON {
        do {
            // A client that leaves takes its provider's questions off the agent's screen.
            return try await withTaskCancellationHandler {
                try await pool.call(provider, method, parameters, timeout: timeout, as: call)
            } onCancel: {
                call.callerLeft()
            }
        } catch let error as VarlinkError where error.name == CredentialProvider.canceled {
            if let limit = call.personTimedOut {
                throw VarlinkError(
                    name: AutoFill.Error.canceled,
                    [
                        "message":
                            "you did not answer \(provider.name)'s question in the agent within \(limit.components.seconds) seconds"
                    ]
                )
            }
            if Self.extensionCode(error) == 100 {
                if passingOnInteraction { throw error }
                throw VarlinkError(
                    name: AutoFill.Error.canceled,
                    ["message": "\(provider.name) needs you, though it was given the chance to ask you"]
                )
            }
            // ASExtensionError.userCanceled: the person said no to what the provider asked.
            if Self.extensionCode(error) == 1 {
                throw VarlinkError(
                    name: AutoFill.Error.canceled,
                    ["message": "you declined what \(provider.name) asked in the agent; nothing was given"]
                )
            }
            let why = error.message ?? "it gave no reason"
            throw VarlinkError(name: AutoFill.Error.canceled, ["message": "\(provider.name) declined: \(why)"])
        } catch let error as VarlinkError {
            throw Self.failed(provider, "it answered with an error its interface does not have: \(error.name)")
        } catch let error as ProviderPool.Failure {
            throw Self.failed(provider, error.description)
        } catch {
            throw Self.failed(provider, "it ended without answering (\(error))")
        }
    }

    private func answer(_ reply: RawJSON, from provider: ProviderManifest) throws(VarlinkError) -> RawJSON {
        guard let credential = try? reply.decode(CredentialProvider.CredentialOut.self).credential else {
            throw Self.failed(provider, "its answer is not a credential")
        }
        logger.info("credential provided", metadata: ["provider": "\(provider.id)"])
        return try RawJSON.reply(AutoFill.RequestOut(credential: credential, provider: provider.id))
    }

    private static func failed(_ provider: ProviderManifest, _ why: String) -> VarlinkError {
        VarlinkError(
            name: AutoFill.Error.providerFailed,
            parameters: (try? RawJSON(encoding: ["provider": provider.id, "message": "\(provider.name): \(why)"]))
                ?? .emptyObject
        )
    }

    /// The `ASExtensionError` code of a provider's `Canceled`.
    private static func extensionCode(_ error: VarlinkError) -> Int? {
        guard error.name == CredentialProvider.canceled else { return nil }
        return try? error.parameters.member("code")?.decode(Int.self)
    }

    /// The interface and its methods, for the server.
    package var implementation: VarlinkInterfaceImplementation {
        VarlinkInterfaceImplementation(
            KeyportInterfaces.autoFill,
            methods: [
                "RequestCredential": { [self] request throws(VarlinkError) in try await requestCredential(request) },
                "RequestFromList": { [self] request throws(VarlinkError) in try await requestFromList(request) },
                "SavePassword": { [self] request throws(VarlinkError) in try await savePassword(request) },
            ]
        )
    }
}
