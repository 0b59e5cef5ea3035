import Foundation
import KeyportDaemon
import KeyportInterfaces
import KeyportTestSupport
import Testing
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

private func manifest(_ id: String, _ name: String, exchange: Bool = false, extra: String = "") -> String {
    """
    {"id": "\(id)", "name": "\(name)", "exec": ["/usr/bin/true", "--import"],
     "capabilities": {"SupportsCredentialExchange": \(exchange), "ProvidesOneTimeCodes": true}\(extra)}
    """
}

@Suite("provider manifests")
struct ManifestTests {
    @Test(
        "a manifest is read with its capabilities; unknown members are ignored; exchange defaults to 1.0 and to importing"
    )
    func reads() throws {
        let read = try ProviderManifest(
            data: Data(manifest("org.example.app", "Example", exchange: true, extra: #", "future": [1]"#).utf8),
            file: "m.json"
        )
        #expect(read.id == "org.example.app" && read.name == "Example")
        #expect(read.exec == ["/usr/bin/true", "--import"])
        #expect(
            read.capabilities.SupportsCredentialExchange && read.capabilities.ProvidesOneTimeCodes
                && !read.capabilities.ProvidesPasswords
        )
        #expect(read.capabilities.SupportedCredentialExchangeVersions == ["1.0"])
        // An app that supports exchange imports, unless it says it only exports; one that does
        // not support exchange imports nothing, whatever it says.
        #expect(read.capabilities.ImportsCredentials == true)
        let exportOnly =
            #"{"id":"org.a","name":"A","exec":["/bin/a"],"capabilities":{"SupportsCredentialExchange":true,"ImportsCredentials":false}}"#
        #expect(
            try ProviderManifest(data: Data(exportOnly.utf8), file: "e.json").capabilities.ImportsCredentials == false
        )
        let noExchange = #"{"id":"org.a","name":"A","exec":["/bin/a"],"capabilities":{"ImportsCredentials":true}}"#
        #expect(
            try ProviderManifest(data: Data(noExchange.utf8), file: "n.json").capabilities.ImportsCredentials == false
        )
    }

    @Test(
        "a manifest that cannot be used says which member is wrong",
        arguments: [
            ("[]", "not a JSON object"),
            ("{", "not JSON"),
            (#"{"name":"A","exec":["/bin/a"]}"#, "\"id\" must be a reverse-DNS name"),
            (#"{"id":"app","name":"A","exec":["/bin/a"]}"#, "\"id\" must be a reverse-DNS name"),
            (#"{"id":"org.a","name":" ","exec":["/bin/a"]}"#, "\"name\" must be"),
            (#"{"id":"org.a","name":"A","exec":["a"]}"#, "absolute path"),
            (#"{"id":"org.a","name":"A","exec":[]}"#, "absolute path"),
            (#"{"id":"org.a","name":"A","exec":"/bin/a"}"#, "\"exec\" must be an array"),
            (
                #"{"id":"org.a","name":"A","exec":["/bin/a"],"capabilities":{"ProvidesPasswords":1}}"#,
                "capabilities.ProvidesPasswords\" must be true or false"
            ),
            (
                #"{"id":"org.a","name":"A","exec":["/bin/a"],"capabilities":{"SupportedCredentialExchangeVersions":["1"]}}"#,
                "versions such as"
            ),
            (#"{"id":"org.a","name":"A","exec":["/bin/a"]} x"#, "more after the JSON object"),
        ]
    )
    func refuses(text: String, reason: String) {
        let error = #expect(throws: ManifestError.self) { try ProviderManifest(data: Data(text.utf8), file: "m.json") }
        #expect(error?.description.contains(reason) == true, "\(error?.description ?? "")")
    }

    @Test("the registry reads the user's directory before the system's; a bad manifest is skipped and reported")
    func registry() throws {
        let directory = try TemporaryDirectory("kp-registry")
        defer { directory.remove() }
        let user = try directory.subdirectory("data/keyport/providers")
        let system = try directory.subdirectory("system/keyport/providers")
        try manifest("org.example.one", "One (user)").write(
            to: user.appendingPathComponent("one.json"),
            atomically: true,
            encoding: .utf8
        )
        try manifest("org.example.one", "One (system)").write(
            to: system.appendingPathComponent("one.json"),
            atomically: true,
            encoding: .utf8
        )
        try manifest("org.example.two", "Two").write(
            to: system.appendingPathComponent("two.json"),
            atomically: true,
            encoding: .utf8
        )
        try manifest("org.example.two", "Two again").write(
            to: system.appendingPathComponent("z-two.json"),
            atomically: true,
            encoding: .utf8
        )
        try "{".write(to: user.appendingPathComponent("broken.json"), atomically: true, encoding: .utf8)
        try "not a manifest".write(to: user.appendingPathComponent("README"), atomically: true, encoding: .utf8)
        let registry = ProviderRegistry(environment: [
            "XDG_DATA_HOME": directory.url.appendingPathComponent("data").path,
            "XDG_DATA_DIRS": directory.url.appendingPathComponent("system").path + ":relative/ignored",
        ])
        let (manifests, problems) = registry.scan()
        #expect(manifests.map(\.name) == ["One (user)", "Two"])
        #expect(
            problems.map(\.manifest) == [
                user.appendingPathComponent("broken.json").path, system.appendingPathComponent("z-two.json").path,
            ]
        )
        #expect(
            problems.last?.message.contains("already registered by \(system.appendingPathComponent("two.json").path)")
                == true
        )
    }
}

@Suite("keyport providers through keyportd")
struct ProvidersCommandTests {
    /// A sandbox: XDG directories, a socket, manifests.
    struct Sandbox {
        let directory: TemporaryDirectory
        let environment: [String: String]
        var socket: String { environment["KEYPORT_SOCKET"]! }
        var settings: URL { directory.url.appendingPathComponent("config/keyport/settings.json") }

        init() throws {
            directory = try TemporaryDirectory("kp-providers")
            let providers = try directory.subdirectory("data/keyport/providers")
            try manifest("org.example.alpha", "Alpha", exchange: true).write(
                to: providers.appendingPathComponent("alpha.json"),
                atomically: true,
                encoding: .utf8
            )
            try manifest("org.example.beta", "Beta").write(
                to: providers.appendingPathComponent("beta.json"),
                atomically: true,
                encoding: .utf8
            )
            try #"{"id": 5}"#.write(to: providers.appendingPathComponent("bad.json"), atomically: true, encoding: .utf8)
            let environment = sandboxEnvironment(in: directory.url)
            self.environment = environment
        }

        func startDaemon() async throws -> Program {
            let daemon = try Program(keyportd, environment: environment)
            _ = try await daemon.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }
            return daemon
        }

        func keyport(_ arguments: [String]) async throws -> Program.Ran {
            try await runKeyport(arguments, environment: environment, timeout: .seconds(60))
        }
    }

    @Test("list, enable, order and disable; Settings are saved 0600 and survive a restart of keyportd")
    func settings() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.directory.remove() }
        var daemon = try await sandbox.startDaemon()
        defer { daemon.stop() }

        let empty = try await sandbox.keyport(["providers", "list"])
        #expect(empty.status == 0, "\(empty.standardError)")
        #expect(empty.standardOutput.contains("- org.example.alpha  Alpha  [disabled]  exchange 1.0, one-time codes"))
        #expect(
            empty.standardOutput.contains(
                "skipped \(sandbox.directory.url.appendingPathComponent("data/keyport/providers/bad.json").path): \"id\" must be"
            )
        )

        #expect(try await sandbox.keyport(["providers", "enable", "org.example.beta"]).status == 0)
        #expect(try await sandbox.keyport(["providers", "enable", "org.example.alpha"]).status == 0)
        var info = stat()
        #expect(lstat(sandbox.settings.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let listed = try await sandbox.keyport(["providers", "list", "--json"])
        let list = try RawJSON(bytes: Array(listed.standardOutput.utf8)).decode(Providers.List.Reply.self)
        #expect(list.providers.map(\.id) == ["org.example.beta", "org.example.alpha"])
        #expect(list.providers.map(\.position) == [0, 1])

        #expect(try await sandbox.keyport(["providers", "order", "org.example.alpha", "org.example.beta"]).status == 0)
        #expect(try await sandbox.keyport(["providers", "disable", "org.example.beta"]).status == 0)

        daemon.signal(SIGTERM)
        #expect(try await daemon.finish(timeout: .seconds(30)).status == 0)
        daemon = try await sandbox.startDaemon()
        let after = try await sandbox.keyport(["providers", "list", "--json"])
        let restarted = try RawJSON(bytes: Array(after.standardOutput.utf8)).decode(Providers.List.Reply.self)
        #expect(
            restarted.providers.map { "\($0.id) \($0.enabled)" } == [
                "org.example.alpha true", "org.example.beta false",
            ]
        )
    }

    @Test("the Settings file reads back as written, passes over members it does not know, and names what is wrong")
    func settingsFile() throws {
        let settings = ProviderSettings(enabled: ["org.example.a", "org.example.\"b\""])
        #expect(try ProviderSettings(json: settings.json) == settings)
        #expect(try ProviderSettings(json: ProviderSettings().json) == ProviderSettings())
        #expect(
            try ProviderSettings(json: Array(#"{"later": {"x": [1]}, "enabled": ["a.b"]}"#.utf8)).enabled == ["a.b"]
        )
        for (text, problem) in [
            (#"["a.b"]"#, "it is not a JSON object"), (#"{"enabled": "a.b"}"#, "must be an array of app ids"),
            (#"{"enabled": [1]}"#, "must hold app ids"), (#"{"enabled": []} {}"#, "there is more after"),
            (#"{"enable": []}"#, "\"enabled\" is missing"),
            (#"{"enabled": ["a.b"], "enabled": ["c.d"]}"#, "given twice"),
        ] {
            do {
                _ = try ProviderSettings(json: Array(text.utf8))
                Issue.record("\(text) was read as Settings")
            } catch {
                #expect("\(error)".contains(problem), "\(text): \(error)")
            }
        }
    }

    @Test("an unknown or repeated id is refused with keyportd's reason (exit 1); nothing changes")
    func refusals() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await sandbox.startDaemon()
        defer { daemon.stop() }
        let unknown = try await sandbox.keyport(["providers", "enable", "org.example.nope"])
        #expect(unknown.status == 1)
        #expect(unknown.standardError.contains("no registered app has the id org.example.nope"))
        let repeated = try await sandbox.keyport(["providers", "order", "org.example.alpha", "org.example.alpha"])
        #expect(repeated.status == 1)
        #expect(repeated.standardError.contains("org.example.alpha is given twice"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.settings.path))
    }

    @Test("Launched answers only a registered app's own processes: this test process is refused (NotAnApp)")
    func launchedRefusesOthers() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await sandbox.startDaemon()
        defer { daemon.stop() }
        // Asked about keyportd itself, a process that certainly exists: the answer is not
        // "false" but a refusal, so no process learns which processes keyportd started.
        let refusal = await #expect(throws: VarlinkError.self) {
            try await VarlinkConnection.withConnection(path: sandbox.socket, maximumMessageSize: 1 << 20) {
                try await $0.call(Providers.Launched.self, .init(pid: Int(daemon.pid)))
            }
        }
        #expect(refusal?.name == Providers.NotAnApp.name, "\(String(describing: refusal))")
    }

    @Test("without keyportd, the command says how to start it (exit 2)")
    func notRunning() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.directory.remove() }
        let ran = try await sandbox.keyport(["providers", "list"])
        #expect(ran.status == 2)
        #expect(ran.standardError.contains("keyportd is not running"), "\(ran.standardError)")
    }

    @Test("PyPI's varlink client reads the interface, lists providers and gets keyportd's errors")
    func pythonClient() async throws {
        let python = try await Peers.python(importing: ["varlink"])
        let sandbox = try Sandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await sandbox.startDaemon()
        defer { daemon.stop() }
        let script = """
            import sys, varlink
            with varlink.Client(address="unix:" + sys.argv[1]) as client, client.open("org.keyport.Providers", namespaced=False) as providers:
                print(" ".join(p["id"] for p in providers.List()["providers"]))
                try:
                    providers.Enable("org.example.nope")
                except varlink.VarlinkError as error:
                    print(error.error(), error.parameters()["id"])
            """
        let ran = try await Program.run(python, ["-c", script, sandbox.socket], timeout: .seconds(60))
        #expect(ran.status == 0, "\(ran.standardError)")
        #expect(
            ran.standardOutput
                == "org.example.alpha org.example.beta\norg.keyport.Providers.UnknownProvider org.example.nope\n"
        )
    }
}
