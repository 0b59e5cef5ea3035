import Foundation
import KeyportEncoding
import KeyportInterfaces
import KeyportSystem
import Synchronization
import Varlink

/// The person's Settings for providers: which AutoFill may ask, in which order. Kept in
/// `$XDG_CONFIG_HOME/keyport/settings.json`, `{"enabled": ["org.example.app", …]}`, written
/// atomically (0600) so a crash never leaves half a file.
///
/// Ids of apps that are not registered now stay in the file: an app that is reinstalled comes
/// back where it was.
package struct ProviderSettings: Hashable, Sendable {
    package var enabled: [String]

    package init(enabled: [String] = []) {
        self.enabled = enabled
    }

    /// The settings file in `configuration` (the keyport configuration directory).
    package static func file(in configuration: URL) -> URL {
        configuration.appendingPathComponent("settings.json")
    }

    /// What was last read from each settings file, kept until the file changes (``FileStamp``).
    private static let readBefore = Mutex<[String: (stamp: FileStamp?, loaded: Loaded)]>([:])

    package typealias Loaded = (settings: ProviderSettings, problem: Providers.Problem?)

    /// Reads the settings; a missing file is the defaults. A file that cannot be read is reported
    /// (and the defaults used) but left as it is until the person changes a setting. Read again
    /// only when the file has changed.
    package static func load(from configuration: URL) -> Loaded {
        let path = file(in: configuration).path
        let stamp = FileStamp(path)
        if let known = readBefore.withLock({ $0[path] }), known.stamp == stamp { return known.loaded }
        let loaded = read(from: configuration)
        readBefore.withLock { $0[path] = (stamp, loaded) }
        return loaded
    }

    private static func read(from configuration: URL) -> Loaded {
        let file = file(in: configuration)
        guard FileManager.default.fileExists(atPath: file.path) else { return (ProviderSettings(), nil) }
        do {
            return (try ProviderSettings(json: Array(Data(contentsOf: file))), nil)
        } catch {
            let problem = Providers.Problem(
                manifest: file.path,
                message: "the settings cannot be read (\(error)); no provider is enabled until they are saved again"
            )
            return (ProviderSettings(), problem)
        }
    }

    /// Reads `{"enabled": ["org.example.app", …]}`, read as keyportd reads every message
    /// (``JSONCursor``); members a later version adds are passed over.
    package init(json: [UInt8]) throws {
        var cursor = JSONCursor(json)
        guard try cursor.peekKind() == .object else { throw cursor.error("it is not a JSON object") }
        var enabled: [String]?
        try cursor.forEachMember { cursor, key in
            guard key == "enabled" else { return try cursor.skipValue() }
            guard enabled == nil else { throw cursor.error("\"enabled\" is given twice") }
            guard try cursor.peekKind() == .array else { throw cursor.error("\"enabled\" must be an array of app ids") }
            var ids: [String] = []
            try cursor.forEachElement { cursor in
                guard try cursor.peekKind() == .string else { throw cursor.error("\"enabled\" must hold app ids") }
                ids.append(try cursor.string())
            }
            enabled = ids
        }
        guard cursor.isAtEnd else { throw cursor.error("there is more after the JSON object") }
        guard let enabled else { throw cursor.error("\"enabled\" is missing") }
        self.enabled = enabled
    }

    /// The settings as the file holds them, one id a line.
    package var json: [UInt8] {
        var out = Array(#"{"enabled": ["#.utf8)
        for (index, id) in enabled.enumerated() {
            out += (index == 0 ? "\n  " : ",\n  ").utf8
            JSONString.append(id, to: &out)
        }
        out += (enabled.isEmpty ? "]}\n" : "\n]}\n").utf8
        return out
    }

    /// Writes the settings, creating the directory (0700) when needed.
    package func save(to configuration: URL) throws(Providers.SaveError) {
        do {
            try FileManager.default.createDirectory(
                at: configuration,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
            try AtomicFile.write(Data(json), to: Self.file(in: configuration).path)
        } catch {
            throw Providers.SaveError(message: "the settings could not be saved: \(error)")
        }
    }
}

extension Providers {
    /// Settings could not be written.
    package struct SaveError: Error, Sendable {
        package var message: String
    }
}

/// `org.keyport.Providers`: the registry and the Settings.
package final class ProvidersService: Providers.Server {
    private let registry: ProviderRegistry
    private let configuration: URL
    /// Serialises read-modify-write of the settings file.
    private let settingsLock = Mutex(())

    /// The identity store, for the counts `List` shows; `nil` shows none.
    private let identities: IdentityStoreService?
    /// The app keyportd started as a process (a provider, an importer), if it did.
    private let launched: @Sendable (PinnedProcess) -> String?

    package init(
        registry: ProviderRegistry,
        configuration: URL,
        identities: IdentityStoreService? = nil,
        launched: @escaping @Sendable (PinnedProcess) -> String? = { _ in nil }
    ) {
        self.launched = launched
        self.registry = registry
        self.configuration = configuration
        self.identities = identities
    }

    /// The registered apps with their Settings: enabled ones first in order, then the others by id.
    package func list() -> Providers.List.Reply {
        let (manifests, problems) = registry.scan()
        let (settings, settingsProblem) = ProviderSettings.load(from: configuration)
        let registered = Set(manifests.map(\.id))
        let enabled = settings.enabled.filter { registered.contains($0) }
        let position = Dictionary(enabled.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        let providers = manifests.map { manifest in
            let stored =
                manifest.capabilities.providesCredentials ? identities?.identities(of: manifest.id) : nil
            return Providers.Provider(
                id: manifest.id,
                name: manifest.name,
                exec: manifest.exec,
                helpers: manifest.helpers.isEmpty ? nil : manifest.helpers,
                capabilities: manifest.capabilities,
                manifest: manifest.file,
                enabled: position[manifest.id] != nil,
                position: position[manifest.id],
                identities: stored?.all.count,
                domainIdentities: stored?.domainOnly,
                associatedDomains: manifest.associatedDomains.isEmpty ? nil : manifest.associatedDomains
            )
        }
        .sorted { ($0.position ?? Int.max, $0.id) < ($1.position ?? Int.max, $1.id) }
        return Providers.List.Reply(providers: providers, problems: problems + (settingsProblem.map { [$0] } ?? []))
    }

    /// `Launched`: whether keyportd started `pid` as the app the caller acts for (recognised from
    /// the kernel, as every caller is). The process is pinned first and must still be the one
    /// keyportd holds: a number that passed to another process answers false.
    private func launched(_ pid: Int, for request: VarlinkRequest) throws(VarlinkError) -> Bool {
        let app: String
        switch try? AppResolver.identify(request.peer.process, among: registry.scan().manifests) {
        case .app(let manifest, _)?: app = manifest.id
        default:
            throw VarlinkError(
                Providers.NotAnApp(
                    message: "only a registered app's own processes may ask which processes keyportd started for it"
                )
            )
        }
        guard let number = pid_t(exactly: pid), number > 0, let process = try? PinnedProcess(pid: number) else {
            return false
        }
        return launched(process) == app
    }

    // MARK: - Methods

    package func list(_: consuming Providers.List.Parameters, request: VarlinkRequest) -> Providers.List.Reply {
        list()
    }

    package func launched(
        _ input: consuming Providers.Launched.Parameters,
        request: VarlinkRequest
    ) throws(VarlinkError) -> Providers.Launched.Reply {
        Providers.Launched.Reply(launched: try launched(input.pid, for: request))
    }

    package func enable(
        _ input: consuming Providers.Enable.Parameters,
        request: VarlinkRequest
    ) throws(VarlinkError) -> Providers.Enable.Reply {
        try change([input.id]) { enabled, _ in if !enabled.contains(input.id) { enabled.append(input.id) } }
        return .init()
    }

    package func disable(
        _ input: consuming Providers.Disable.Parameters,
        request: VarlinkRequest
    ) throws(VarlinkError) -> Providers.Disable.Reply {
        try change([input.id]) { enabled, _ in enabled.removeAll { $0 == input.id } }
        return .init()
    }

    package func order(
        _ input: consuming Providers.Order.Parameters,
        request: VarlinkRequest
    ) throws(VarlinkError) -> Providers.Order.Reply {
        let ids = input.ids
        var seen = Set<String>()
        for id in ids where !seen.insert(id).inserted {
            throw VarlinkError(
                Providers.DuplicateProvider(
                    id: id,
                    message: "\(id) is given twice; name each provider once, in the order AutoFill should ask them"
                )
            )
        }
        try change(ids) { enabled, registered in
            // Unregistered ids kept in the settings stay, after the ones given.
            enabled = ids + enabled.filter { !registered.contains($0) && !ids.contains($0) }
        }
        return .init()
    }

    /// Applies `edit` to the enabled list for the providers `ids`, which must all be registered.
    private func change(_ ids: [String], _ edit: (inout [String], Set<String>) -> Void) throws(VarlinkError) {
        let registered = Set(registry.scan().manifests.map(\.id))
        for id in ids where !registered.contains(id) {
            throw VarlinkError(
                Providers.UnknownProvider(
                    id: id,
                    message: "no registered app has the id \(id); `keyport providers list` shows the registered ones"
                )
            )
        }
        let failure = settingsLock.withLock { _ -> Providers.SaveError? in
            var settings = ProviderSettings.load(from: configuration).settings
            edit(&settings.enabled, registered)
            do throws(Providers.SaveError) {
                try settings.save(to: configuration)
                return nil
            } catch {
                return error
            }
        }
        if let failure {
            throw VarlinkError(Providers.SettingsUnavailable(message: failure.message))
        }
    }
}
