import ArgumentParser
import Foundation
import KeyportCommandLine
import KeyportDomains
import KeyportEncoding
import KeyportInterfaces
import KeyportSystem
import KeyportVaultKeeper
import Varlink

/// `keyport doctor`: what runs and what is missing, each with the command that fixes it.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Say what runs and what is missing, each with the command that fixes it.",
        discussion: """
            Checks keyportd (running, and how it is started: its systemd user units), who answers its \
            questions (an agent, or dialogs on a display), the registered and \
            enabled providers and the manifests that cannot be used, the default Keyport Vault (created, \
            registered, its keeper), the browsers' native messaging hosts (and snap or Flatpak browsers, \
            where AutoFill cannot work), and which Public Suffix List sites are matched with. Exit status: \
            0 all is well; 1 something needs fixing (each such line starts with "fix").
            """
    )

    /// One line of the report.
    struct Finding {
        var well: Bool
        var what: String
        /// The command (or step) that fixes it, when it is not well.
        var fix: String? = nil
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var findings: [Finding] = []
        let units = Self.units(environment)
        let providers = await Self.keyportd(environment, units: units, into: &findings)
        findings += units.findings
        if providers != nil { findings.append(await Self.agent(environment, manager: units.manager)) }
        if let providers { findings += Self.providers(providers) }
        findings += await Self.vault(environment, providers: providers)
        findings += Self.browsers(environment)
        findings.append(Finding(well: true, what: "Public Suffix List: \(PublicSuffixList.currentOrigin)"))
        for finding in findings {
            var line = "\(finding.well ? "ok " : "fix") \(DisplayText.escaping(finding.what))\n"
            if let fix = finding.fix { line += "    → \(fix)\n" }
            FileHandle.write(line)
        }
        guard findings.allSatisfy(\.well) else { throw ExitCode(1) }
    }

    /// keyportd: reachable, and the registered apps it reports (nil when it does not answer).
    private static func keyportd(
        _ environment: [String: String],
        units: Units,
        into findings: inout [Finding]
    ) async -> Providers.List.Reply? {
        let socket = (try? DaemonLocations(environment: environment).socket) ?? "(no socket path)"
        do {
            let reply = try await DaemonClient.withConnection(environment: environment) { connection in
                try await connection.call(Providers.List.self, .init())
            }
            findings.append(Finding(well: true, what: "keyportd answers at \(socket)"))
            return reply
        } catch {
            findings.append(
                Finding(
                    well: false,
                    what: "keyportd does not answer at \(socket): \(error)",
                    fix: !units.manager
                        ? "\(Executable.beside("keyportd") ?? "keyportd") & (no systemd user manager runs in this session to start it)"
                        : units.installed
                            ? "systemctl --user enable --now keyportd.socket"
                            : "scripts/install (from Keyport's sources) installs its units and starts it; or keyportd &"
                )
            )
            return nil
        }
    }

    /// Where keyportd's questions go: the agent that holds the role, or dialogs it would start.
    /// When neither, the fixes fit this machine: zenity's installation only when it is missing,
    /// systemd's environment only where a user manager runs.
    private static func agent(_ environment: [String: String], manager: Bool) async -> Finding {
        do {
            let status = try await DaemonClient.withConnection(environment: environment) { connection in
                try await connection.call(Agent.Status.self, .init())
            }
            if let holder = status.holder {
                return Finding(well: true, what: "keyportd's questions go to the agent \(holder)")
            }
            if let display = status.display {
                let from = status.source == "systemd" ? "systemd's user environment" : "keyportd's environment"
                return Finding(
                    well: true,
                    what:
                        "keyportd's questions go to dialogs it starts (keyport agent --dialog) on \(display), from \(from)"
                )
            }
            let zenity = Executable.find("zenity", path: environment["PATH"]) != nil
            let display = !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
            var fixes = ["keyport agent (in a terminal)"]
            if !zenity { fixes.append("install zenity, for keyportd's dialogs") }
            if display && manager {
                fixes.append(
                    "tell systemd your desktop's display: systemctl --user import-environment DISPLAY WAYLAND_DISPLAY XAUTHORITY"
                )
            } else if display && zenity {
                fixes.append("start keyportd again from this desktop session, so that it knows the display")
            }
            return Finding(
                well: false,
                what: zenity
                    ? "no agent runs and keyportd knows no display to ask you on: an exchange, or a provider's question, fails at once"
                    : "no agent runs and zenity is not installed for keyportd's dialogs: an exchange, or a provider's question, fails at once",
                fix: fixes.joined(separator: "; or ")
            )
        } catch {
            return Finding(well: false, what: "keyportd did not say who answers its questions: \(error)")
        }
    }

    /// keyportd's systemd user units, where systemd looks for them.
    struct Units {
        /// Whether the person's systemd user manager runs in this session, to start keyportd.
        var manager: Bool
        var installed = false
        var findings: [Finding] = []
    }

    /// Whether a systemd user manager runs in this session: it listens on
    /// `$XDG_RUNTIME_DIR/systemd/private`, where `systemctl --user` reaches it. A container, or a
    /// login that did not start one, has none.
    private static func managerRuns(_ environment: [String: String]) -> Bool {
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return false }
        var status = stat()
        return stat(runtime + "/systemd/private", &status) == 0 && status.st_mode & S_IFMT == S_IFSOCK
    }

    private static func units(_ environment: [String: String]) -> Units {
        let directories = BaseDirectories(environment: environment)
        let manager = managerRuns(environment)
        let places = [
            directories.configHome + "/systemd/user", "/etc/systemd/user", directories.dataHome + "/systemd/user",
            "/usr/local/lib/systemd/user", "/usr/lib/systemd/user",
        ]
        guard
            let place = places.first(where: {
                FileManager.default.fileExists(atPath: $0 + "/keyportd.socket")
                    && FileManager.default.fileExists(atPath: $0 + "/keyportd.service")
            })
        else {
            guard manager else {
                let what =
                    "no systemd user manager runs in this session (a container, or a login without one): keyportd is started by hand, not by its units"
                return Units(manager: false, findings: [Finding(well: true, what: what)])
            }
            return Units(
                manager: true,
                installed: false,
                findings: [
                    Finding(
                        well: false,
                        what: "keyportd's systemd user units (keyportd.socket, keyportd.service) are not installed",
                        fix:
                            "scripts/install (from Keyport's sources) writes them with its paths and enables them; by hand: contrib/systemd/keyportd.socket and keyportd.service into \(directories.configHome)/systemd/user/ (ExecStart= where keyportd is), then systemctl --user daemon-reload && systemctl --user enable --now keyportd.socket"
                    )
                ]
            )
        }
        var findings: [Finding] = []
        let service = (try? String(contentsOfFile: place + "/keyportd.service", encoding: .utf8)) ?? ""
        let program = service.split(whereSeparator: \.isNewline)
            .first { $0.hasPrefix("ExecStart=") }
            .map { String($0.dropFirst("ExecStart=".count).split(separator: " ").first ?? "") }
        if let program, FileManager.default.isExecutableFile(atPath: program) {
            findings.append(Finding(well: true, what: "keyportd's units are in \(place), starting \(program)"))
        } else {
            findings.append(
                Finding(
                    well: false,
                    what: "\(place)/keyportd.service starts \(program ?? "nothing"), which is not a program",
                    fix:
                        "point ExecStart= in \(place)/keyportd.service at keyportd, then systemctl --user daemon-reload"
                )
            )
        }
        return Units(manager: manager, installed: true, findings: findings)
    }

    /// The registered apps: manifests that cannot be used, and whether AutoFill has a provider.
    private static func providers(_ reply: Providers.List.Reply) -> [Finding] {
        var findings = reply.problems.map { problem in
            Finding(
                well: false,
                what: "\(problem.manifest): \(problem.message)",
                fix: "correct or remove \(problem.manifest)"
            )
        }
        let enabled = reply.providers.filter(\.enabled).sorted { ($0.position ?? 0) < ($1.position ?? 0) }
        if enabled.isEmpty {
            let registered = reply.providers.first { $0.capabilities.providesCredentials }
            findings.append(
                Finding(
                    well: false,
                    what: "no provider is enabled: AutoFill has nowhere to look",
                    fix: registered.map { "keyport providers enable \($0.id)" }
                        ?? "keyport vault init && keyport providers enable org.keyport.vault"
                )
            )
        } else {
            findings.append(
                Finding(
                    well: true,
                    what: "AutoFill asks, in order: \(enabled.map { "\($0.name) (\($0.id))" }.joined(separator: ", "))"
                )
            )
        }
        return findings
    }

    /// The default Keyport Vault: created, registered, and its keeper.
    private static func vault(_ environment: [String: String], providers: Providers.List.Reply?) async -> [Finding] {
        guard let locations = try? VaultLocations(environment: environment) else { return [] }
        let path = locations.defaultVault
        guard FileManager.default.fileExists(atPath: path) else {
            return [Finding(well: true, what: "no Keyport Vault at \(path) (`keyport vault init` creates one)")]
        }
        var findings: [Finding] = []
        if let providers,
            !providers.providers.contains(where: { $0.exec.contains(path) || $0.id == "org.keyport.vault" })
        {
            findings.append(
                Finding(
                    well: false,
                    what: "the vault at \(path) is not registered with keyportd",
                    fix: "keyport vault register"
                )
            )
        }
        let keeper = UnixSocketPath.isSocket(locations.keeperSocket)
        findings.append(
            Finding(
                well: true,
                what: "Keyport Vault at \(path): "
                    + (keeper
                        ? "its keeper runs (`keyport vault status` says more)"
                        : "locked, no keeper (`keyport vault unlock` opens it)")
            )
        )
        return findings
    }

    /// The browsers on PATH: each one's host manifest, pointing at a keyport-browser that exists.
    private static func browsers(_ environment: [String: String]) -> [Finding] {
        let directories = BaseDirectories(environment: environment)
        let installed = BrowserCommand.installed(environment)
        var findings: [Finding] = installed.map { browser in
            let manifest = browser.hostDirectory(directories) + "/\(BrowserCommand.hostName).json"
            let object = (try? Data(contentsOf: URL(fileURLWithPath: manifest)))
                .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            guard let host = object?["path"] as? String else {
                return Finding(
                    well: false,
                    what: "\(browser.shown): Keyport's native messaging host is not installed",
                    fix: "keyport browser install --browser \(browser.rawValue)"
                )
            }
            guard FileManager.default.isExecutableFile(atPath: host) else {
                return Finding(
                    well: false,
                    what: "\(browser.shown): the host manifest names \(host), which is not there",
                    fix: "keyport browser install --browser \(browser.rawValue)"
                )
            }
            return Finding(well: true, what: "\(browser.shown): the host is installed (\(host))")
        }
        findings += BrowserCommand.sandboxed(Array(BrowserCommand.Browser.allCases), directories: directories).map {
            Finding(well: true, what: $0)
        }
        return findings
    }
}
