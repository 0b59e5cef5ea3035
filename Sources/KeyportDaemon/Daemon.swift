import Foundation
import KeyportInterfaces
import KeyportSystem
import Logging
import ServiceLifecycle
import Varlink

/// keyportd: the per-user service that stands between apps as the system does on Apple platforms.
///
/// It serves Varlink on one Unix-domain socket (``DaemonLocations``), or on the socket systemd
/// hands it when socket-activated, until a graceful shutdown (SIGTERM, SIGINT) ends it; the
/// socket file it made is removed then.
package struct KeyportDaemon: Service {
    /// Where to listen.
    package enum Listener: Sendable, Equatable {
        /// Bind the socket at the locations' path.
        case socketFile
        /// A socket that is already bound and listening (systemd socket activation: descriptor 3).
        case descriptor(Int32)
    }

    /// What `org.varlink.service.GetInfo` says.
    package static let info = VarlinkServiceInfo(
        vendor: "Keyport",
        product: "keyportd",
        version: KeyportRelease.version,
        // Keyport has no web site of its own to name here.
        url: ""
    )

    /// The keyport command line installed beside this keyportd (`keyport-cli`, links resolved):
    /// the only program that may be the person's agent, and keyport's own file exporter; `nil`
    /// when there is none.
    package static let keyportCLI = Executable.beside("keyport-cli")

    package let locations: DaemonLocations
    package let listener: Listener
    /// Whether an agent may answer without the person (`keyportd --allow-scripted-agent`: demos
    /// and tests).
    package let allowsScriptedAgent: Bool
    package let logger: Logger
    /// The environment manifests are found by (the XDG data directories).
    package let environment: [String: String]

    /// How long an importer keyportd started has to redeem its token: `KEYPORT_TOKEN_LIFETIME`
    /// seconds, 60 by default (an importer redeems it first thing, before asking the person for
    /// anything; one that has not by then is stopped, and the exporter told).
    package var tokenLifetime: Duration { seconds("KEYPORT_TOKEN_LIFETIME", default: 60) }

    /// How long a provider keyportd started stays running unused: `KEYPORT_PROVIDER_IDLE` seconds,
    /// 60 by default.
    package var providerIdleTime: Duration { seconds("KEYPORT_PROVIDER_IDLE", default: 60) }

    /// How long a provider has to answer without the person: `KEYPORT_PROVIDER_TIMEOUT` seconds, 10
    /// by default; with the person (who may be typing a passphrase), twelve times that.
    package var providerTimeout: Duration { seconds("KEYPORT_PROVIDER_TIMEOUT", default: 10) }

    /// How long the person has to answer a provider's question in the agent:
    /// `KEYPORT_PERSON_TIMEOUT` seconds, 120 by default. The provider's own clock stops meanwhile.
    package var personTimeout: Duration { seconds("KEYPORT_PERSON_TIMEOUT", default: 120) }

    private func seconds(_ name: String, default value: Int) -> Duration {
        .seconds(environment[name].flatMap(Int.init).flatMap { $0 > 0 ? $0 : nil } ?? value)
    }

    package init(
        locations: DaemonLocations,
        listener: Listener,
        allowsScriptedAgent: Bool = false,
        environment: [String: String],
        logger: Logger
    ) {
        self.locations = locations
        self.listener = listener
        self.allowsScriptedAgent = allowsScriptedAgent
        self.environment = environment
        self.logger = logger
    }

    package func run() async throws {
        let registry = ProviderRegistry(environment: environment)
        let pool = ProviderPool(environment: environment, idleTime: providerIdleTime, logger: logger)
        let identities = IdentityStoreService(registry: registry, locations: locations, pool: pool, logger: logger)
        let agents = AgentHub(
            policy: AgentHub.Policy(
                program: Self.keyportCLI,
                allowsScripted: allowsScriptedAgent,
                confirmationTime: personTimeout,
                dialog: Self.keyportCLI.map {
                    DialogAgentLauncher(program: $0, environment: environment, socket: self.locations.socket)
                }
            ),
            registry: registry
        )
        let exchange = ExchangeService(
            registry: registry,
            agents: agents,
            tokenLifetime: tokenLifetime,
            reportTime: personTimeout + .seconds(60),
            logger: logger
        )
        // An app's helper asks which processes are the app as keyportd started them.
        let providers = ProvidersService(
            registry: registry,
            configuration: URL(fileURLWithPath: locations.configuration, isDirectory: true),
            identities: identities,
            launched: { process in pool.provider(startedAs: process) ?? exchange.importer(startedAs: process) }
        )
        let callbacks = CallbacksService(environment: environment, logger: logger)
        let prompts = PromptService(registry: registry, agents: agents, pool: pool, personTime: personTimeout)
        let credentialProviders = CredentialProviders(
            registry: registry,
            identities: identities,
            configuration: URL(fileURLWithPath: locations.configuration, isDirectory: true),
            pool: pool,
            agents: agents,
            quickTime: providerTimeout,
            interactiveTime: providerTimeout * 12,
            personTime: personTimeout,
            logger: logger
        )
        let autoFill = AutoFillService(providers: credentialProviders, logger: logger)
        let webAuthn = WebAuthnService(providers: credentialProviders, logger: logger)
        let server = VarlinkServer(
            info: Self.info,
            interfaces: [
                providers, exchange, agents, callbacks, identities, autoFill, webAuthn, prompts,
            ],
            maximumMessageSize: DaemonClient.maximumMessageSize
        )
        let logger = logger
        let locations = locations
        let listener = listener
        _ = try locations.prepareSocketDirectory(create: true)
        // The main socket is taken first (a second keyportd is refused naming it), then the
        // descriptor socket; "listening" is said once both are. On SIGTERM or SIGINT: the
        // services end their waiting calls with ShuttingDown, those replies are written, then the
        // server stops (closing every connection and removing the socket files keyportd made).
        let mainReady = Latch()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // keyportd's own also under socket activation: it is only used once keyportd runs
                // (by an exporter after RequestExport, by importers keyportd started), so systemd
                // need not hold it.
                await mainReady.wait()
                guard mainReady.isOpen else { return }
                let path = locations.descriptorSocket
                try await server.serveWithDescriptors(
                    path: path,
                    interfaces: [Exchange.name],
                    maximumMessageSize: DaemonClient.descriptorMessageSize
                ) {
                    switch listener {
                    case .socketFile:
                        logger.info(
                            "listening",
                            metadata: ["socket": "\(locations.socket)", "descriptor socket": "\(path)"]
                        )
                    case .descriptor(let descriptor):
                        logger.info(
                            "listening on the socket systemd passed",
                            metadata: ["descriptor": "\(descriptor)", "descriptor socket": "\(path)"]
                        )
                    }
                }
            }
            group.addTask {
                switch listener {
                case .socketFile:
                    let path = locations.socket
                    try await server.serve(path: path) { mainReady.open() }
                case .descriptor(let descriptor):
                    // systemd made the socket, at this path when it is keyportd's own unit: the
                    // lock still says who serves it, so that a keyportd started by hand is refused
                    // rather than replacing systemd's socket with its own.
                    let lock = try SocketLock(socketPath: locations.socket)
                    defer { withExtendedLifetime(lock) {} }
                    try await server.serve(listeningDescriptor: descriptor) { mainReady.open() }
                }
            }
            group.addTask {
                // Returns when a graceful shutdown begins; throws when the service is cancelled.
                try await gracefulShutdown()
                logger.info("stopping")
                exchange.shutDown()
                agents.shutDown()
                callbacks.shutDown()
                pool.shutDown()
                await server.waitUntilIdle(limit: .seconds(5))
            }
            try await group.next()
            group.cancelAll()
        }
        logger.info("stopped")
    }
}
