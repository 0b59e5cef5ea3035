import Foundation
import KeyportDomains
import KeyportEncoding
import KeyportErrors
import KeyportInterfaces
import KeyportSystem
import Synchronization
import Varlink

/// An app's manifest: the keys Apple's apps declare in Info.plist, as a JSON file in
/// `keyport/providers/` under `$XDG_DATA_HOME` or one of `$XDG_DATA_DIRS`.
///
/// ```json
/// {"id": "org.example.app", "name": "Example", "exec": ["/usr/bin/example", "--flag"],
///  "helpers": [["/usr/bin/example", "sync"]],
///  "capabilities": {"SupportsCredentialExchange": true, "SupportedCredentialExchangeVersions": ["1.0"],
///                   "ProvidesPasswords": false, "ProvidesOneTimeCodes": false}}
/// ```
package struct ProviderManifest: Hashable, Sendable {
    package var id: String
    package var name: String
    /// The program (an absolute path: keyportd recognises the app by it) and its arguments.
    package var exec: [String]
    /// The command lines of the app's other processes that act for it (an agent that keeps its
    /// identities current), each program first, recognised as `exec` is: by the program, then
    /// by the arguments it starts with.
    package var helpers: [[String]]
    package var capabilities: Providers.Capabilities
    /// The web domains the app says are its own for passkeys, as Apple's Associated Domains
    /// entitlement names them (`webcredentials:example.com`, with a port for a site on another:
    /// `webcredentials:localhost:8443`), kept as `example.com` and `localhost:8443`. Each must be
    /// confirmed by the site itself before the app may speak for it (docs/protocol.md, "Passkeys").
    package var associatedDomains: [String]
    /// The file it was read from.
    package var file: String

    /// Reads a manifest; members it does not know are ignored, so later versions can add some.
    ///
    /// - Throws: ``ManifestError`` saying which member is wrong and how.
    package init(data: Data, file: String) throws(ManifestError) {
        var id: String?
        var name: String?
        var exec: [String]?
        var helpers: [[String]] = []
        var associatedDomains: [String] = []
        var capabilities = Providers.Capabilities(
            SupportsCredentialExchange: false,
            SupportedCredentialExchangeVersions: [],
            ProvidesPasswords: false,
            ProvidesOneTimeCodes: false,
            SavesPasswords: false,
            ImportsCredentials: nil
        )
        var versionsGiven = false
        var cursor = JSONCursor(Array(data))
        do {
            guard try cursor.peekKind() == .object else { throw ManifestError(.notJSON, "it is not a JSON object") }
            try cursor.forEachMember { cursor, key in
                switch key {
                case "id": id = try Self.string(&cursor)
                case "name": name = try Self.string(&cursor)
                case "exec":
                    guard try cursor.peekKind() == .array else { throw Self.badExec }
                    var words: [String] = []
                    try cursor.forEachElement { cursor in
                        guard try cursor.peekKind() == .string else { throw Self.badExec }
                        words.append(try cursor.string())
                    }
                    exec = words
                case "helpers":
                    guard try cursor.peekKind() == .array else { throw Self.badHelpers }
                    try cursor.forEachElement { cursor in
                        guard try cursor.peekKind() == .array else { throw Self.badHelpers }
                        var words: [String] = []
                        try cursor.forEachElement { cursor in
                            guard try cursor.peekKind() == .string else { throw Self.badHelpers }
                            words.append(try cursor.string())
                        }
                        guard words.first?.hasPrefix("/") == true else { throw Self.badHelpers }
                        helpers.append(words)
                    }
                case "associatedDomains":
                    let problem = ManifestError(
                        .invalidMember,
                        "\"associatedDomains\" must be entries such as [\"webcredentials:example.com\"]"
                    )
                    guard try cursor.peekKind() == .array else { throw problem }
                    try cursor.forEachElement { cursor in
                        guard try cursor.peekKind() == .string else { throw problem }
                        let entry = try cursor.string()
                        // Apple's other services (applinks:, activitycontinuation:) are not Keyport's to use.
                        guard entry.hasPrefix("webcredentials:") else { return }
                        let domain = String(entry.dropFirst("webcredentials:".count))
                        guard let origin = ServiceOrigin(domain), origin.description == "https://\(domain)",
                            case .domain = origin.host
                        else { throw problem }
                        associatedDomains.append(domain)
                    }
                case "capabilities":
                    guard try cursor.peekKind() == .object else {
                        throw ManifestError(.invalidMember, "\"capabilities\" must be an object")
                    }
                    try cursor.forEachMember { cursor, key in
                        func flag() throws -> Bool {
                            guard try cursor.peekKind() == .bool else {
                                throw ManifestError(.invalidMember, "\"capabilities.\(key)\" must be true or false")
                            }
                            return try cursor.bool()
                        }
                        switch key {
                        case "SupportsCredentialExchange": capabilities.SupportsCredentialExchange = try flag()
                        case "ProvidesPasswords": capabilities.ProvidesPasswords = try flag()
                        case "ProvidesOneTimeCodes": capabilities.ProvidesOneTimeCodes = try flag()
                        case "ProvidesPasskeys": capabilities.ProvidesPasskeys = try flag()
                        case "SavesPasswords": capabilities.SavesPasswords = try flag()
                        case "ImportsCredentials": capabilities.ImportsCredentials = try flag()
                        case "SupportedCredentialExchangeVersions":
                            let problem = ManifestError(
                                .invalidMember,
                                "\"capabilities.SupportedCredentialExchangeVersions\" must be versions such as [\"1.0\"]"
                            )
                            guard try cursor.peekKind() == .array else { throw problem }
                            var versions: [String] = []
                            try cursor.forEachElement { cursor in
                                guard try cursor.peekKind() == .string else { throw problem }
                                let version = try cursor.string()
                                guard Self.isVersion(version) else { throw problem }
                                versions.append(version)
                            }
                            capabilities.SupportedCredentialExchangeVersions = versions
                            versionsGiven = true
                        default: try cursor.skipValue()
                        }
                    }
                default: try cursor.skipValue()
                }
            }
            guard cursor.isAtEnd else { throw ManifestError(.notJSON, "there is more after the JSON object") }
        } catch let error as ManifestError {
            throw error
        } catch {
            throw ManifestError(.notJSON, "it is not JSON (\(error))")
        }
        guard let id, Self.isReverseDNS(id) else {
            throw ManifestError(.invalidMember, "\"id\" must be a reverse-DNS name such as org.example.app")
        }
        guard let name, !name.trimmingWhitespace(newlines: false).isEmpty else {
            throw ManifestError(.invalidMember, "\"name\" must be the app's name, a non-empty string")
        }
        guard let exec, exec.first?.hasPrefix("/") == true else { throw Self.badExec }
        if capabilities.SupportsCredentialExchange, !versionsGiven {
            // An app that supports exchange without naming versions takes the first one.
            capabilities.SupportedCredentialExchangeVersions = ["1.0"]
        }
        // An app that supports exchange imports too, unless it says it only exports.
        capabilities.ImportsCredentials =
            capabilities.SupportsCredentialExchange && capabilities.ImportsCredentials != false
        self.id = id
        self.name = name
        self.exec = exec
        self.helpers = helpers
        self.capabilities = capabilities
        self.associatedDomains = associatedDomains
        self.file = file
    }

    private static let badExec = ManifestError(
        .invalidMember,
        "\"exec\" must be an array of strings whose first is the program's absolute path"
    )
    private static let badHelpers = ManifestError(
        .invalidMember,
        "\"helpers\" must be an array of command lines, each an array of strings whose first is the program's absolute path"
    )

    /// Every command line a process of the app runs: `exec`, then the helpers'.
    package var commandLines: [[String]] { [exec] + helpers }

    /// The string at the cursor, or `nil` (the value skipped) when it is something else.
    private static func string(_ cursor: inout JSONCursor) throws -> String? {
        guard try cursor.peekKind() == .string else {
            try cursor.skipValue()
            return nil
        }
        return try cursor.string()
    }

    /// Two or more dot-separated labels of letters, digits, `-` and `_`.
    static func isReverseDNS(_ id: String) -> Bool {
        let labels = id.split(separator: ".", omittingEmptySubsequences: false)
        return id.utf8.count <= 255 && labels.count >= 2
            && labels.allSatisfy { label in
                !label.isEmpty
                    && label.unicodeScalars.allSatisfy {
                        $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" || $0 == "_")
                    }
            }
    }

    /// `MAJOR.MINOR`, both numbers.
    static func isVersion(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isASCII) && UInt32($0) != nil }
    }
}

/// Why a manifest was skipped.
package struct ManifestError: RecordedError {
    /// A stable name for why.
    package typealias Code = ErrorCodeOf<ManifestError>

    package var record: ErrorRecord<Code>

    package init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
    }
}

extension ErrorCodeOf<ManifestError> {
    /// The file cannot be read, or is larger than a manifest may be.
    package static let unreadable = Self(rawValue: "unreadable")
    /// It is not one JSON object.
    package static let notJSON = Self(rawValue: "not-json")
    /// A member is missing, of the wrong type, or not a value the manifest allows.
    package static let invalidMember = Self(rawValue: "invalid-member")
    /// Another manifest registers the same id.
    package static let duplicateID = Self(rawValue: "duplicate-id")
}

/// The registered apps: every manifest in the providers directories, as they are when asked (an
/// app installed or removed is seen at the next request, with no watcher to keep).
///
/// What was read is kept until a directory or a manifest changes (``FileStamp``): a request
/// then costs a `stat` per directory and per manifest instead of reading and parsing each.
package struct ProviderRegistry: Sendable {
    /// Where manifests are looked for, most important first: `$XDG_DATA_HOME/keyport/providers`,
    /// then each of `$XDG_DATA_DIRS` (default `/usr/local/share:/usr/share`).
    package var directories: [URL]

    private final class Cache: Sendable {
        /// The stamps of the directories and the manifest files last read, and what they gave.
        let last = Mutex<(stamps: [String: FileStamp?], scanned: Scan)?>(nil)
    }

    package typealias Scan = (manifests: [ProviderManifest], problems: [Providers.Problem])
    private let cache = Cache()

    package init(environment: [String: String]) {
        let base = BaseDirectories(environment: environment)
        let system = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
            .split(separator: ":").filter { $0.hasPrefix("/") }.map {
                URL(fileURLWithPath: String($0), isDirectory: true)
            }
        directories = ([URL(fileURLWithPath: base.dataHome, isDirectory: true)] + system).map {
            $0.appendingPathComponent("keyport/providers", isDirectory: true)
        }
    }

    /// The providers enabled in Settings (kept in `configuration`) whose capabilities pass
    /// `accepts`, in Settings order: whom AutoFill and WebAuthn may ask.
    package func enabled(in configuration: URL, where accepts: (Providers.Capabilities) -> Bool) -> [ProviderManifest] {
        let manifests = Dictionary(scan().manifests.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return ProviderSettings.load(from: configuration).settings.enabled.compactMap { manifests[$0] }.filter {
            accepts($0.capabilities)
        }
    }

    /// The manifests, and the files that were skipped with why. An id found again in a later
    /// directory is the earlier one's (a user's manifest overrides the system's): not a problem.
    /// Two files with one id in the same directory are.
    package func scan() -> Scan {
        if let last = cache.last.withLock({ $0 }), last.stamps.allSatisfy({ FileStamp($0.key) == $0.value }) {
            return last.scanned
        }
        var stamps: [String: FileStamp?] = [:]
        for directory in directories { stamps[directory.path] = FileStamp(directory.path) }
        let scanned = read(stamping: &stamps)
        cache.last.withLock { $0 = (stamps, scanned) }
        return scanned
    }

    /// Reads every manifest, noting the stamp of each file read in `stamps`.
    private func read(stamping stamps: inout [String: FileStamp?]) -> Scan {
        var manifests: [ProviderManifest] = []
        var problems: [Providers.Problem] = []
        var byID: [String: (file: String, directory: URL)] = [:]
        for directory in directories {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            for name in names.sorted() where name.hasSuffix(".json") {
                let file = directory.appendingPathComponent(name).path
                stamps[file] = FileStamp(file)
                do {
                    guard let data = FileManager.default.contents(atPath: file) else {
                        throw ManifestError(.unreadable, "it cannot be read")
                    }
                    guard data.count <= 1 << 20 else { throw ManifestError(.unreadable, "it is larger than 1 MiB") }
                    let manifest = try ProviderManifest(data: data, file: file)
                    if let earlier = byID[manifest.id] {
                        if earlier.directory == directory {
                            throw ManifestError(
                                .duplicateID,
                                "the id \(manifest.id) is already registered by \(earlier.file)"
                            )
                        }
                        continue
                    }
                    byID[manifest.id] = (file, directory)
                    manifests.append(manifest)
                } catch {
                    problems.append(Providers.Problem(manifest: file, message: "\(error)"))
                }
            }
        }
        return (manifests, problems)
    }
}
