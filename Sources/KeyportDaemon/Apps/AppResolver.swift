import Foundation
import KeyportInterfaces
import KeyportSystem

/// Which registered app a calling process is, by what the platform says about the process and
/// never by what the process says about itself.
///
/// The rules, in order (docs/protocol.md, "Who is calling"):
/// 1. A process in a Flatpak sandbox is the app its `/.flatpak-info` names, and nothing else:
///    inside a sandbox the program path is the sandbox's own, so it cannot be matched against a
///    host manifest. A Flatpak app with no manifest of its id is not registered.
/// 2. A process in a systemd unit a desktop started an app in (`app-…-APPID-RANDOM.scope`, read as
///    xdg-desktop-portal reads it) is that app when a manifest has that id. This is how an app
///    whose program is an interpreter (Python, Java) is found.
/// 3. Otherwise the program the process runs, matched against the program of each manifest's
///    command lines (`exec` and its `helpers`) with links resolved, and then by its arguments:
///    the process's command line must begin with the command line's arguments (any, for a
///    command line without arguments), the longest if several fit. The program is what is
///    trusted; its arguments only say which registration it acts for, so a process whose
///    arguments fit none of its program's command lines (a second instance, for other data, that
///    is not registered) is nobody, and so is one that fits two alike — never the first.
///
/// A unit's app id that no manifest has does not stop rule 3: a desktop starts a terminal in a
/// unit of its own, and everything run from that terminal shares it.
package enum AppResolver {
    /// What a process turned out to be.
    package enum Identity: Sendable, Equatable {
        /// A registered app, and how it was recognised (for logs and messages).
        case app(ProviderManifest, recognisedBy: String)
        /// No registered app; `description` says what the process is instead, for a message.
        case unregistered(program: String?, description: String)
    }

    /// Identifies `process` among `manifests`.
    ///
    /// - Throws: ``ProcessIdentityError`` when what identifies it cannot be read (it ended, its
    ///   `.flatpak-info` names no app).
    package static func identify(
        _ process: PinnedProcess,
        among manifests: [ProviderManifest]
    ) throws(ProcessIdentityError) -> Identity {
        if let flatpak = try process.flatpakAppID {
            if let manifest = manifests.first(where: { $0.id == flatpak }) {
                return .app(manifest, recognisedBy: "its Flatpak app id \(flatpak)")
            }
            return .unregistered(
                program: nil,
                description: "the Flatpak app \(flatpak), which has no manifest with that id"
            )
        }
        let unit = try process.cgroupUnit
        if let unit, let appID = AppIdentity.appID(fromUnitName: unit),
            let manifest = manifests.first(where: { $0.id == appID })
        {
            return .app(manifest, recognisedBy: "the app id \(appID) of its systemd unit \(unit)")
        }
        let executable = try process.executable
        let candidates = manifests.flatMap { manifest in
            manifest.commandLines.filter { Self.program(of: $0) == executable }.map { (manifest, $0) }
        }
        guard !candidates.isEmpty else {
            return .unregistered(
                program: executable,
                description: "\(executable), which no manifest names in \"exec\" or \"helpers\""
            )
        }
        let arguments = try process.arguments.dropFirst()
        let fitting = candidates.filter { arguments.starts(with: $0.1.dropFirst()) }
        let longest = fitting.map(\.1.count).max()
        let chosen = Dictionary(
            fitting.filter { $0.1.count == longest }.map { ($0.0.id, $0.0) },
            uniquingKeysWith: { first, _ in first }
        )
        if chosen.count == 1, let manifest = chosen.values.first {
            return .app(manifest, recognisedBy: "its program \(executable) with the arguments of its manifest")
        }
        let ids = Set(candidates.map(\.0.id)).sorted().joined(separator: ", ")
        return .unregistered(
            program: executable,
            description:
                "\(executable) with arguments that fit \(chosen.isEmpty ? "none" : "more than one") of the command lines its manifests (\(ids)) give it; a process acts for an app by running its program with the arguments of the manifest's exec or of one of its helpers, or is recognised by the app id of its Flatpak or systemd unit"
        )
    }

    /// The registered credential provider `process` is (its manifest declares `ProvidesPasswords`
    /// or `ProvidesOneTimeCodes`), or why it is none, for a message. `startedAs` is the provider
    /// keyportd itself started that process as (``ProviderPool/provider(startedAs:)``), which
    /// decides before anything the process's surroundings say.
    package static func provider(
        _ process: PinnedProcess,
        among manifests: [ProviderManifest],
        startedAs started: String? = nil
    ) -> Result<ProviderManifest, NotAProvider> {
        let identity: Identity
        if let started, let manifest = manifests.first(where: { $0.id == started }) {
            identity = .app(manifest, recognisedBy: "keyportd having started it")
        } else {
            do {
                identity = try identify(process, among: manifests)
            } catch {
                return .failure(NotAProvider(message: "keyportd cannot tell which app is asking: \(error)"))
            }
        }
        switch identity {
        case .app(let manifest, _) where manifest.capabilities.providesCredentials:
            return .success(manifest)
        case .app(let manifest, _):
            return .failure(
                NotAProvider(
                    message:
                        "\(manifest.name) (\(manifest.id)) declares none of \(IdentityStore.CredentialType.allCases.map { $0.capability }.joined(separator: ", ")) in its manifest"
                )
            )
        case .unregistered(_, let description):
            return .failure(NotAProvider(message: "the caller is not a registered provider: it is \(description)"))
        }
    }

    /// Why a caller is not a credential provider.
    package struct NotAProvider: Error, Sendable {
        package var message: String
    }

    /// The path a command line's program runs as, links resolved, as `/proc/PID/exe` shows it.
    private static func program(of commandLine: [String]) -> String {
        URL(fileURLWithPath: commandLine[0]).resolvingSymlinksInPath().path
    }
}
