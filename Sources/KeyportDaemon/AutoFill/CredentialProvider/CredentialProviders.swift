import Foundation
import KeyportDomains
import KeyportInterfaces
import Logging
import Varlink

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
    /// What sites say of the apps that claim them, and of their related origins.
    package let associations: SiteAssociations

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
        associations: SiteAssociations = SiteAssociations(),
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
        self.associations = associations
    }

    /// The registered app making `request`, known from the kernel (``AppResolver``), when its
    /// manifest names associated domains: the only apps that may ask for a site's passkeys or
    /// passwords, and only for the domains their sites confirm.
    package func associatedApp(of request: VarlinkRequest) -> ProviderManifest? {
        let manifests = registry.scan().manifests
        guard case .app(let manifest, _)? = try? AppResolver.identify(request.peer.process, among: manifests),
            !manifest.associatedDomains.isEmpty
        else { return nil }
        return manifest
    }

    /// The providers enabled in Settings whose capabilities pass `accepts`, in Settings order.
    package func enabled(where accepts: (Providers.Capabilities) -> Bool) -> [ProviderManifest] {
        registry.enabled(in: configuration, where: accepts)
    }
}
