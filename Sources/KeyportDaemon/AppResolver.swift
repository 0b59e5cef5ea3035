import Foundation
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
/// 3. Otherwise the program the process runs, matched against each manifest's `exec[0]` with its
///    links resolved. When several manifests name that program (two vaults of Keyport Vault, each
///    registered with its own `--vault`), the one whose arguments the process's command line
///    begins with, the longest if several do: the program is what is trusted, and its arguments
///    only say which of its registrations it acts for. A command line that fits none of them, or
///    two alike, is ambiguous, never the first.
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
        let matching = manifests.filter { Self.program(of: $0) == executable }
        switch matching.count {
        case 0:
            return .unregistered(program: executable, description: "\(executable), which no manifest names in \"exec\"")
        case 1:
            return .app(matching[0], recognisedBy: "its program \(executable)")
        default:
            let arguments = try process.arguments.dropFirst()
            let fitting = matching.filter { arguments.starts(with: $0.exec.dropFirst()) }
            let longest = fitting.map(\.exec.count).max()
            let chosen = fitting.filter { $0.exec.count == longest }
            if chosen.count == 1 {
                return .app(chosen[0], recognisedBy: "its program \(executable) with the arguments of its manifest")
            }
            let ids = matching.map(\.id).sorted().joined(separator: ", ")
            return .unregistered(
                program: executable,
                description:
                    "\(executable), which several manifests name (\(ids)), with arguments that fit \(chosen.isEmpty ? "none" : "more than one") of them; an app that shares its program with another is recognised by the arguments its manifest's exec gives, or by the app id of its Flatpak or systemd unit"
            )
        }
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
        case .app(let manifest, _)
        where manifest.capabilities.ProvidesPasswords || manifest.capabilities.ProvidesOneTimeCodes:
            return .success(manifest)
        case .app(let manifest, _):
            return .failure(
                NotAProvider(
                    message:
                        "\(manifest.name) (\(manifest.id)) declares neither ProvidesPasswords nor ProvidesOneTimeCodes in its manifest"
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

    /// The path a manifest's program runs as, links resolved, as `/proc/PID/exe` shows it.
    private static func program(of manifest: ProviderManifest) -> String {
        URL(fileURLWithPath: manifest.exec[0]).resolvingSymlinksInPath().path
    }
}
