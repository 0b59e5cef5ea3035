import Foundation
import KeyportDaemon
import KeyportInterfaces
import KeyportSystem
import KeyportTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Runs commands the way the desktop would have started an app: in a Flatpak-like sandbox (the
/// bubblewrap Flatpak itself uses, with a `/.flatpak-info` at its root), or in a systemd app unit
/// (a real cgroup named as a desktop names one).
private enum Confinement {
    /// `command` run by bubblewrap in a new mount namespace that shows the host's files, with
    /// `/.flatpak-info` naming `appID` on the sandbox's own root (a tmpfs; the host's root is not
    /// touched). `info` is where the file is written first.
    static func flatpak(_ appID: String, info: URL, _ command: [String]) throws -> [String] {
        let bwrap = try Peers.require("/usr/bin/bwrap", "bubblewrap")
        try "[Application]\nname=\(appID)\nruntime=runtime/org.freedesktop.Platform/x86_64/24.08\n".write(
            to: info,
            atomically: true,
            encoding: .utf8
        )
        // No --die-with-parent: bwrap ties it to the thread that started it (PR_SET_PDEATHSIG), and
        // an idle thread of the test process's pool ending killed the sandbox under load; the
        // tests stop their sandboxes themselves.
        var arguments = [bwrap, "--proc", "/proc", "--dev", "/dev"]
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/").sorted()
        where !["proc", "dev", ".flatpak-info"].contains(entry) {
            let path = "/" + entry
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
                arguments += ["--symlink", target, path]
            } else {
                arguments += ["--bind", path, path]
            }
        }
        return arguments + ["--ro-bind", info.path, "/.flatpak-info", "--"] + command
    }

    /// Where systemd's hierarchy is mounted, when this process may make cgroups in it: as root,
    /// the named `systemd` hierarchy of a legacy or hybrid setup, or the unified one.
    static let hierarchy: String? = {
        guard geteuid() == 0 else { return nil }
        for candidate in ["/sys/fs/cgroup/systemd", "/sys/fs/cgroup"]
        where access(candidate + "/cgroup.procs", W_OK) == 0 {
            return candidate
        }
        return nil
    }()

    /// A cgroup named `unit` below this user's manager, as systemd makes one for an app a desktop
    /// starts; removed (with the levels it made) by ``AppUnit/remove()`` once its processes ended.
    struct AppUnit {
        let path: String
        private let made: [String]

        init(_ unit: String) throws {
            let hierarchy = try #require(Confinement.hierarchy)
            let uid = geteuid()
            var made: [String] = []
            var path = hierarchy
            for level in ["user.slice", "user-\(uid).slice", "user@\(uid).service", "app.slice", unit] {
                path += "/" + level
                if mkdir(path, 0o755) == 0 {
                    made.append(path)
                } else {
                    try #require(errno == EEXIST, "cannot make the cgroup \(path): \(String(cString: strerror(errno)))")
                }
            }
            self.path = path
            self.made = made
        }

        /// Moves the process `pid` into the unit.
        func add(_ pid: pid_t) throws {
            try "\(pid)".write(toFile: path + "/cgroup.procs", atomically: false, encoding: .utf8)
        }

        func remove() {
            for level in made.reversed() { rmdir(level) }
        }
    }
}

/// Starts a shell that prints `READY PID` and then becomes `sleep`, under `prefix`; returns it
/// and its pid once it has started.
private func sleeper(under prefix: [String] = []) async throws -> (program: Program, pid: pid_t) {
    let command = prefix + ["/bin/sh", "-c", "echo READY $$; exec /bin/sleep 120"]
    let program = try Program(command[0], Array(command.dropFirst()))
    let ready = try await program.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("READY ") }
    return (program, try #require(pid_t(ready.dropFirst("READY ".count))))
}

private func manifest(_ id: String, exec: String..., helpers: [[String]] = []) throws -> ProviderManifest {
    func array(_ words: [String]) -> String { "[" + words.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
    let json =
        #"{"id": "\#(id)", "name": "\#(id)", "exec": \#(array(exec)), "helpers": [\#(helpers.map(array).joined(separator: ", "))]}"#
    return try ProviderManifest(data: Data(json.utf8), file: "/test/\(id).json")
}

private func recognised(_ identity: AppResolver.Identity) -> String? {
    if case .app(let manifest, _) = identity { return manifest.id }
    return nil
}

@Suite("which app is calling: Flatpak, systemd unit, program")
struct CallerIdentityTests {
    @Test("a plain process is its program's app; a program two manifests name is nobody's")
    func byProgram() async throws {
        let (program, pid) = try await sleeper()
        defer { program.stop() }
        let process = try PinnedProcess(pid: pid)
        // /bin is a link to /usr/bin on most systems: manifests name programs either way.
        let sleep = try manifest("org.example.Sleep", exec: "/bin/sleep")
        let other = try manifest("org.example.Other", exec: "/bin/true")
        #expect(recognised(try AppResolver.identify(process, among: [other, sleep])) == "org.example.Sleep")

        let unknown = try AppResolver.identify(process, among: [other])
        guard case .unregistered(let path, let description) = unknown else {
            Issue.record("recognised as \(unknown)")
            return
        }
        #expect(path == URL(fileURLWithPath: "/bin/sleep").resolvingSymlinksInPath().path)
        #expect(description.contains("which no manifest names"))

        let twin = try manifest("org.example.Twin", exec: "/bin/sleep")
        let ambiguous = try AppResolver.identify(process, among: [sleep, twin])
        #expect(recognised(ambiguous) == nil)
        if case .unregistered(_, let description) = ambiguous {
            #expect(description.contains("org.example.Sleep, org.example.Twin"))
        }
    }

    @Test("registrations of one program are told apart by the arguments their exec gives")
    func byArguments() async throws {
        let (program, pid) = try await sleeper()
        defer { program.stop() }
        let process = try PinnedProcess(pid: pid)
        #expect(try process.arguments == ["/bin/sleep", "120"])
        let plain = try manifest("org.example.Plain", exec: "/bin/sleep")
        let long = try manifest("org.example.Long", exec: "/bin/sleep", "120")
        let short = try manifest("org.example.Short", exec: "/bin/sleep", "60")
        // The longest exec the command line begins with; one it does not begin with never counts.
        #expect(recognised(try AppResolver.identify(process, among: [plain, long, short])) == "org.example.Long")
        #expect(recognised(try AppResolver.identify(process, among: [plain, short])) == "org.example.Plain")
        // Arguments say which registration the program acts for, even when it has one: a second
        // vault that is not registered is not the registered one.
        #expect(recognised(try AppResolver.identify(process, among: [short])) == nil)
        let none = try AppResolver.identify(
            process,
            among: [short, try manifest("org.example.S2", exec: "/bin/sleep", "9")]
        )
        guard case .unregistered(_, let description) = none else {
            Issue.record("recognised as \(none)")
            return
        }
        #expect(description.contains("fit none of the command lines its manifests (org.example.S2, org.example.Short)"))
        let twin = try manifest("org.example.Twin", exec: "/bin/sleep", "120")
        #expect(recognised(try AppResolver.identify(process, among: [plain, long, twin])) == nil)
    }

    @Test("an app's helper processes act for it: a manifest's helpers are recognised as its exec is")
    func helpers() async throws {
        let (program, pid) = try await sleeper()
        defer { program.stop() }
        let process = try PinnedProcess(pid: pid)
        // The app runs /bin/sleep 60; its helper, running now, /bin/sleep 120.
        let app = try manifest("org.example.App", exec: "/bin/sleep", "60", helpers: [["/bin/sleep", "120"]])
        let other = try manifest("org.example.Other", exec: "/bin/sleep", "30", helpers: [["/bin/sleep", "9"]])
        #expect(recognised(try AppResolver.identify(process, among: [other, app])) == "org.example.App")
        #expect(recognised(try AppResolver.identify(process, among: [other])) == nil)
        // A helper line as long as another app's exec that fits too: nobody's.
        let rival = try manifest("org.example.Rival", exec: "/bin/sleep", "120")
        #expect(recognised(try AppResolver.identify(process, among: [app, rival])) == nil)
        // Malformed helpers are the manifest's error.
        for bad in [#""helpers": "/bin/x""#, #""helpers": [["x"]]"#, #""helpers": [[]]"#, #""helpers": [[1]]"#] {
            let json = #"{"id": "org.example.Bad", "name": "Bad", "exec": ["/bin/x"], \#(bad)}"#
            #expect(throws: ManifestError.self, "\(bad)") {
                try ProviderManifest(data: Data(json.utf8), file: "/test/bad.json")
            }
        }
    }

    @Test("in a Flatpak sandbox the app id decides, and only it")
    func flatpak() async throws {
        let directory = try TemporaryDirectory("kp-flatpak")
        defer { directory.remove() }
        let info = directory.url.appendingPathComponent("flatpak-info")
        let (program, pid) = try await sleeper(
            under: try Confinement.flatpak("org.example.Sandboxed", info: info, [])
        )
        defer { program.stop() }
        let process = try PinnedProcess(pid: pid)
        #expect(try process.flatpakAppID == "org.example.Sandboxed")

        let sandboxed = try manifest("org.example.Sandboxed", exec: "/app/bin/sandboxed")
        let sleep = try manifest("org.example.Sleep", exec: "/bin/sleep")
        #expect(recognised(try AppResolver.identify(process, among: [sleep, sandboxed])) == "org.example.Sandboxed")
        // Its program is one a host manifest names, but inside a sandbox that path is the
        // sandbox's: a Flatpak app without a manifest of its id is nobody.
        let unknown = try AppResolver.identify(process, among: [sleep])
        #expect(recognised(unknown) == nil)
        if case .unregistered(_, let description) = unknown {
            #expect(description.contains("the Flatpak app org.example.Sandboxed"))
        }
    }

    @Test(
        "in a desktop's app unit the unit's app id decides when a manifest has it; else the program",
        .enabled(if: Confinement.hierarchy != nil, "needs root and a systemd cgroup hierarchy it can write")
    )
    func appUnit() async throws {
        let scoped = try Confinement.AppUnit("app-gnome-org.example.Scoped-4711.scope")
        let terminal = try Confinement.AppUnit("app-org.gnome.Terminal-99.scope")
        let (first, firstPID) = try await sleeper()
        let (second, secondPID) = try await sleeper()
        defer {
            first.stop()
            second.stop()
            scoped.remove()
            terminal.remove()
        }
        try scoped.add(firstPID)
        try terminal.add(secondPID)
        let inScope = try PinnedProcess(pid: firstPID)
        let inTerminal = try PinnedProcess(pid: secondPID)
        #expect(try inScope.systemdAppID == "org.example.Scoped")

        // An interpreter's scripts are found this way: the program is /bin/sleep, named by nobody.
        let scopedApp = try manifest("org.example.Scoped", exec: "/usr/bin/python3")
        let sleep = try manifest("org.example.Sleep", exec: "/bin/sleep")
        #expect(recognised(try AppResolver.identify(inScope, among: [sleep, scopedApp])) == "org.example.Scoped")
        // Everything run from a terminal shares the terminal's unit: no manifest has that id, so
        // the program decides.
        #expect(try inTerminal.systemdAppID == "org.gnome.Terminal")
        #expect(recognised(try AppResolver.identify(inTerminal, among: [sleep, scopedApp])) == "org.example.Sleep")
    }

    @Test("keyportd recognises an exporter by its Flatpak app id, and names an unregistered one")
    func exporterThroughKeyportd() async throws {
        let directory = try TemporaryDirectory("kp-caller")
        defer { directory.remove() }
        let providers = try directory.subdirectory("data/keyport/providers")
        let capabilities: [String: Any] = [
            "SupportsCredentialExchange": true, "SupportedCredentialExchangeVersions": ["1.0"],
        ]
        for (file, id, name) in [
            ("sandboxed.json", "org.example.Sandboxed", "Sandboxed Exporter"),
            ("importer.json", "org.example.importer", "Example Importer"),
        ] {
            let manifest: [String: Any] = [
                "id": id, "name": name, "exec": ["/app/bin/\(file)"], "capabilities": capabilities,
            ]
            try JSONSerialization.data(withJSONObject: manifest).write(to: providers.appendingPathComponent(file))
        }
        let environment = sandboxEnvironment(in: directory.url)
        let daemon = try await startKeyportd(environment)
        defer { daemon.stop() }
        let agent = try Program(keyport, ["agent", "--auto", "decline"], environment: environment)
        defer { agent.stop() }
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }

        // The system's Python: the sandbox shows the host's files, the venv's included, but a
        // plain socket client needs nothing more.
        let python = try Peers.require("/usr/bin/python3", "the system's python3")
        let client = """
            import json, socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1])
            s.sendall(b'{"method":"org.keyport.Exchange.RequestExport","parameters":{}}\\0')
            reply = b""
            while not reply.endswith(b"\\0"):
                chunk = s.recv(65536)
                if not chunk: break
                reply += chunk
            answer = json.loads(reply.rstrip(b"\\0"))
            print(answer.get("error"))
            print(answer.get("parameters", {}).get("message"))
            """
        let socket = try #require(environment["KEYPORT_SOCKET"])
        let info = directory.url.appendingPathComponent("flatpak-info")
        func request(in sandbox: String?) async throws -> (error: String, message: String) {
            var command = [python, "-c", client, socket]
            if let sandbox { command = try Confinement.flatpak(sandbox, info: info, command) }
            let ran = try await Program.run(command[0], Array(command.dropFirst()), timeout: .seconds(60))
            let lines = ran.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
            try #require(lines.count >= 2, "the client printed \(ran.standardOutput), \(ran.standardError)")
            return (String(lines[0]), String(lines[1]))
        }
        // Recognised: the agent was asked, with the manifest's name, and declined.
        #expect(try await request(in: "org.example.Sandboxed").error == "org.keyport.Exchange.Declined")
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) {
            $0.contains("Sandboxed Exporter: declined")
        }

        // The same program outside the sandbox is only a Python no manifest names.
        let outside = try await request(in: nil)
        #expect(outside.error == "org.keyport.Exchange.NotAllowed")
        #expect(outside.message.contains("python3"), "\(outside.message)")
        #expect(outside.message.contains("which no manifest names"), "\(outside.message)")
        let unknown = try await request(in: "org.example.Unknown")
        #expect(unknown.error == "org.keyport.Exchange.NotAllowed")
        #expect(unknown.message.contains("the Flatpak app org.example.Unknown, which has no manifest"))
    }
}
