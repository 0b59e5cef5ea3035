import Foundation
import KeyportDomains
import KeyportInterfaces
import Logging

/// The credential providers as keyportd's services ask them — AutoFill for passwords and one-time
/// codes, WebAuthn for passkeys —: who is registered and enabled in Settings, the identities they
/// keep, how they are asked (``ProviderRequests``), the person's agent and how long the person has,
/// and the Public Suffix List the services match sites with.
package struct CredentialProviders: Sendable {
    package let registry: ProviderRegistry
    package let identities: IdentityStoreService
    /// Where Settings are kept.
    package let configuration: URL
    package let requests: ProviderRequests
    package let agents: AgentHub
    /// How long the person has to answer a question of keyportd's.
    package let personTime: Duration
    package let list: PublicSuffixList

    /// A provider has `quickTime` to answer without the person and `interactiveTime` with them
    /// (its clock stopped while the person is asked); the person has `personTime`.
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
        self.requests = ProviderRequests(
            pool: pool,
            quickTime: quickTime,
            interactiveTime: interactiveTime,
            logger: logger
        )
        self.agents = agents
        self.personTime = personTime
        self.list = list
    }

    /// The providers enabled in Settings whose capabilities pass `accepts`, in Settings order.
    package func enabled(where accepts: (Providers.Capabilities) -> Bool) -> [ProviderManifest] {
        registry.enabled(in: configuration, where: accepts)
    }
}
