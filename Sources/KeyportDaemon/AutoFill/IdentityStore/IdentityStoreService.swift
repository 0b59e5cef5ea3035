import Foundation
import KeyportDomains
import KeyportEncoding
import KeyportInterfaces
import KeyportSystem
import Logging
import Synchronization
import Varlink

/// `org.keyport.IdentityStore`: each provider's credential identities (never a secret), kept in
/// `$XDG_STATE_HOME/keyport/identities/<provider id>.json` (0600, written atomically: a crash
/// leaves the old file or the new one), and filed by site in memory for AutoFill.
///
/// A provider sees and changes only its own identities; which provider is calling is read from
/// its process (``AppResolver``). Changes are refused while it is not enabled in Settings, as
/// Apple's store is disabled then; every change is all or nothing.
package final class IdentityStoreService: IdentityStore.Server {
    /// One provider's identities, indexed as AutoFill looks them up: by origin (scheme, host and
    /// port: the exact fits, answered without the person) and by site (``ServiceOrigin/site(in:)``:
    /// where the wider fits, only offered, are found), so a request reads only the identities it
    /// could use however many share its registrable domain. Passkeys are filed apart, by their
    /// relying party id as saved: WebAuthn's rule is not AutoFill's (the relying party id names
    /// the passkey, whatever page of its domain asks), and a password request never sees them.
    package struct Identities: Sendable {
        package struct Entry: Sendable {
            package var identity: IdentityStore.CredentialIdentity
            package var origin: ServiceOrigin
        }

        package var all: [IdentityStore.CredentialIdentity] = []
        package var byRelyingParty: [String: [IdentityStore.CredentialIdentity]] = [:]
        package var byOrigin: [ServiceOrigin: [Entry]] = [:]
        package var bySite: [String: [Entry]] = [:]
        /// How many are saved as a domain (no scheme), which AutoFill gives without the person
        /// only to `https` on the default port of that very host (`keyport providers list` says so).
        package var domainOnly = 0

        init(_ identities: [IdentityStore.CredentialIdentity], list: PublicSuffixList) {
            all = identities
            for identity in identities {
                if identity.kind == .passkey {
                    byRelyingParty[identity.serviceIdentifier.identifier, default: []].append(identity)
                    continue
                }
                guard let origin = ServiceOrigin(identity.serviceIdentifier.identifier) else { continue }
                let entry = Entry(identity: identity, origin: origin)
                byOrigin[origin, default: []].append(entry)
                bySite[origin.site(in: list), default: []].append(entry)
                if !identity.serviceIdentifier.identifier.contains("://") { domainOnly += 1 }
            }
        }
    }

    private let registry: ProviderRegistry
    private let configuration: URL
    private let directory: URL
    private let list: PublicSuffixList
    private let logger: Logger
    /// The providers keyportd started: a process it started is that provider.
    private let pool: ProviderPool?
    /// Loaded stores by provider id. File writes happen under this lock, so changes are ordered.
    private let stores = Mutex<[String: Identities]>([:])

    package init(
        registry: ProviderRegistry,
        locations: DaemonLocations,
        list: PublicSuffixList = .current,
        pool: ProviderPool? = nil,
        logger: Logger
    ) {
        self.pool = pool
        self.logger = logger
        self.registry = registry
        self.configuration = URL(fileURLWithPath: locations.configuration, isDirectory: true)
        self.directory = URL(fileURLWithPath: locations.state, isDirectory: true)
            .appendingPathComponent("identities", isDirectory: true)
        self.list = list
    }

    // MARK: - The caller

    /// The registered provider making `request`.
    private func provider(_ request: VarlinkRequest) throws(VarlinkError) -> ProviderManifest {
        switch AppResolver.provider(
            request.peer.process,
            among: registry.scan().manifests,
            startedAs: pool?.provider(startedAs: request.peer.process)
        ) {
        case .success(let manifest): return manifest
        case .failure(let refusal):
            throw VarlinkError(IdentityStore.NotAProvider(message: refusal.message))
        }
    }

    private func isEnabled(_ provider: ProviderManifest) -> Bool {
        ProviderSettings.load(from: configuration).settings.enabled.contains(provider.id)
    }

    private func requireEnabled(_ provider: ProviderManifest) throws(VarlinkError) {
        guard isEnabled(provider) else {
            throw VarlinkError(
                IdentityStore.StoreDisabled(
                    message:
                        "\(provider.name) is not enabled for AutoFill in Settings (keyport providers enable \(provider.id)); its identities are kept but not changed"
                )
            )
        }
    }

    // MARK: - Storage

    private func file(of provider: String) -> URL {
        directory.appendingPathComponent("\(provider).json")
    }

    /// The provider's identities, read from its file the first time. Called under the lock.
    private func load(_ provider: String, _ stores: inout [String: Identities]) throws(VarlinkError) -> Identities {
        if let loaded = stores[provider] { return loaded }
        let path = file(of: provider).path
        var identities: [IdentityStore.CredentialIdentity] = []
        if FileManager.default.fileExists(atPath: path) {
            do {
                // The file holds what List replies: {"identities": […]}.
                let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
                identities = try RawJSON(bytes: bytes).decode(IdentityStore.List.Reply.self).identities
            } catch {
                // Left as it is: the person's data, and perhaps a newer keyportd's format.
                throw VarlinkError(
                    IdentityStore.StoreFailed(
                        message: "the identity store \(path) cannot be read (\(error)); it was left as it is"
                    )
                )
            }
        }
        let loaded = Identities(identities, list: list)
        stores[provider] = loaded
        return loaded
    }

    /// Writes `identities` as the provider's store, then keeps them. Called under the lock.
    private func store(
        _ identities: [IdentityStore.CredentialIdentity],
        of provider: String,
        _ stores: inout [String: Identities]
    ) throws(VarlinkError) {
        do {
            _ = try PrivateDirectory.prepare(directory.path, contents: "the credential identity store", create: true)
            let file = RawJSON(encoding: IdentityStore.List.Reply(identities: identities))
            try AtomicFile.write(Data(file.bytes), to: self.file(of: provider).path)
        } catch {
            throw VarlinkError(
                IdentityStore.StoreFailed(
                    message: "the identity store could not be written (\(error)); nothing was changed"
                )
            )
        }
        stores[provider] = Identities(identities, list: list)
    }

    /// Checks identities before any is stored: a service a request could name, a kind the
    /// provider declares.
    private func check(
        _ identities: [IdentityStore.CredentialIdentity],
        of provider: ProviderManifest
    ) throws(VarlinkError) {
        for (index, identity) in identities.enumerated() {
            func invalid(_ why: String) -> VarlinkError {
                VarlinkError(IdentityStore.InvalidIdentity(message: "identities[\(index)] \(why); nothing was changed"))
            }
            if identity.kind == .passkey {
                try checkPasskey(identity, invalid)
            } else if case .failure(let error) = ServiceOrigin.parse(identity.serviceIdentifier.identifier) {
                throw invalid("names no service: \(error)")
            } else if identity.credentialID != nil || identity.userHandle != nil {
                throw invalid("is a \(identity.kind.noun), which has no credential id or user handle")
            }
            guard provider.capabilities.provides(identity.kind) else {
                throw invalid(
                    "is a \(identity.kind.noun), and \(provider.id)'s manifest does not declare \(identity.kind.capability)"
                )
            }
        }
    }

    /// A passkey's identity names its relying party id as a domain (written as a host is: what
    /// WebAuthn's requests compare it with), and carries its credential id (1 to 1023 bytes) and
    /// user handle (1 to 64 bytes), base64url.
    private func checkPasskey(
        _ identity: IdentityStore.CredentialIdentity,
        _ invalid: (String) -> VarlinkError
    ) throws(VarlinkError) {
        let rpID = identity.serviceIdentifier.identifier
        guard identity.serviceIdentifier.type == .domain, case .domain(let name)? = ServiceHost(rpID), name == rpID
        else {
            throw invalid(
                "is a passkey whose relying party \"\(DisplayText.escaping(rpID))\" is not a domain written as a host is (example.com)"
            )
        }
        guard let id = identity.credentialID, let bytes = try? Base64URL.decode(id), (1...1023).contains(bytes.count)
        else {
            throw invalid("is a passkey without a credential id of 1 to 1023 bytes in base64url")
        }
        guard let handle = identity.userHandle, let bytes = try? Base64URL.decode(handle),
            (1...64).contains(bytes.count)
        else {
            throw invalid("is a passkey without a user handle of 1 to 64 bytes in base64url")
        }
    }

    /// Loads, changes and writes the provider's identities under the lock.
    private func change(
        _ provider: ProviderManifest,
        _ body: ([IdentityStore.CredentialIdentity]) -> [IdentityStore.CredentialIdentity]
    ) throws(VarlinkError) {
        try requireEnabled(provider)
        try stores.withLock { stores throws(VarlinkError) in
            let current = try load(provider.id, &stores).all
            try store(body(current), of: provider.id, &stores)
        }
    }

    /// The identities of the provider `id`, for AutoFill; none when its store cannot be read
    /// (which the log says).
    package func identities(of id: String) -> Identities {
        stores.withLock { stores in
            do {
                return try load(id, &stores)
            } catch {
                logger.warning("identity store unreadable", metadata: ["provider": "\(id)", "why": "\(error)"])
                return Identities([], list: list)
            }
        }
    }

    // MARK: - Methods

    /// Only a registered provider's processes use the store: anyone else is refused before the
    /// identities it sent (up to a message's 64 MiB) are read.
    package func admit(_ method: String, request: VarlinkRequest) async throws(VarlinkError) {
        _ = try provider(request)
    }

    package func state(
        _: consuming IdentityStore.State.Parameters,
        request: VarlinkRequest
    ) throws(VarlinkError) -> IdentityStore.State.Reply {
        IdentityStore.State.Reply(isEnabled: isEnabled(try provider(request)), supportsIncrementalUpdates: true)
    }

    package func save(
        _ input: consuming IdentityStore.Save.Parameters,
        request: VarlinkRequest
    ) throws(VarlinkError) -> IdentityStore.Save.Reply {
        let provider = try provider(request)
        try check(input.identities, of: provider)
        // One identity per key: the last of a batch that repeats one counts.
        var seen = Set<IdentityStore.CredentialIdentity.Key>()
        let unique = input.identities.reversed().filter { seen.insert($0.key).inserted }.reversed()
        try change(provider) { current in
            current.filter { !seen.contains($0.key) } + unique
        }
        return .init()
    }

    package func remove(
        _ input: consuming IdentityStore.Remove.Parameters,
        request: VarlinkRequest
    ) throws(VarlinkError) -> IdentityStore.Remove.Reply {
        let provider = try provider(request)
        let removed = Set(input.identities.map(\.key))
        try change(provider) { current in current.filter { !removed.contains($0.key) } }
        return .init()
    }

    package func replace(
        _ input: consuming IdentityStore.Replace.Parameters,
        request: VarlinkRequest
    ) throws(VarlinkError) -> IdentityStore.Replace.Reply {
        let provider = try provider(request)
        try check(input.identities, of: provider)
        try change(provider) { _ in input.identities }
        return .init()
    }

    package func removeAll(
        _: consuming IdentityStore.RemoveAll.Parameters,
        request: VarlinkRequest
    ) throws(VarlinkError) -> IdentityStore.RemoveAll.Reply {
        let provider = try provider(request)
        try change(provider) { _ in [] }
        return .init()
    }

    package func list(
        _ input: consuming IdentityStore.List.Parameters,
        request: VarlinkRequest
    ) throws(VarlinkError) -> IdentityStore.List.Reply {
        let provider = try provider(request)
        let kinds = Set(input.kinds ?? IdentityStore.CredentialType.allCases)
        let identities = try stores.withLock { stores throws(VarlinkError) in try load(provider.id, &stores).all }
            .filter { kinds.contains($0.kind) }
        guard let service = input.service else { return IdentityStore.List.Reply(identities: identities) }
        let requested: ServiceOrigin
        switch ServiceOrigin.parse(service.identifier) {
        case .success(let origin): requested = origin
        case .failure(let error):
            throw VarlinkError(IdentityStore.InvalidIdentity(message: "service: \(error)"))
        }
        // The provider's own identities for the service, exact fits first (AutoFill's rule).
        let matching =
            identities
            .compactMap { identity -> (IdentityStore.CredentialIdentity, ServiceFit)? in
                guard let origin = ServiceOrigin(identity.serviceIdentifier.identifier) else { return nil }
                let fit = origin.fit(for: requested, in: self.list)
                return fit == .none ? nil : (identity, fit)
            }
            .sorted { ($0.1, $0.0.rank) > ($1.1, $1.0.rank) }
            .map(\.0)
        return IdentityStore.List.Reply(identities: matching)
    }
}
