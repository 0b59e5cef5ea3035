import Foundation
import KeyportInterfaces
import KeyportTestSupport
import Testing
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

private let buildDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    .deletingLastPathComponent()
private let keyport = buildDirectory.appendingPathComponent("keyport").path
private let keyportd = buildDirectory.appendingPathComponent("keyportd").path

/// keyportd, an agent and a registered importer (a Python app using PyPI's varlink), each a real
/// process, in a sandbox of XDG directories.
private struct ExchangeSandbox {
    let directory: TemporaryDirectory
    let environment: [String: String]
    let output: String

    /// `importer`: the importing app's command; by default the Python importer writing to `output`.
    init(importer: [String]? = nil, mode: String = "import") async throws {
        let python = try await Peers.python(importing: ["varlink"])
        directory = try TemporaryDirectory("kp-exchange")
        output = directory.url.appendingPathComponent("imported.json").path
        let providers = try directory.subdirectory("data/keyport/providers")
        let exec = importer ?? [python, Peers.file("Tests/KeyportDaemonTests/Peers/importer.py"), output, mode]
        let manifest: [String: Any] = [
            "id": "org.example.importer", "name": "Example Importer", "exec": exec,
            "capabilities": ["SupportsCredentialExchange": true, "SupportedCredentialExchangeVersions": ["1.0"]],
        ]
        try JSONSerialization.data(withJSONObject: manifest).write(
            to: providers.appendingPathComponent("importer.json")
        )
        var environment = ProcessInfo.processInfo.environment
        environment["KEYPORT_SOCKET"] = directory.url.appendingPathComponent("d.sock").path
        environment["XDG_DATA_HOME"] = directory.url.appendingPathComponent("data").path
        environment["XDG_DATA_DIRS"] = directory.url.appendingPathComponent("none").path
        environment["XDG_CONFIG_HOME"] = directory.url.appendingPathComponent("config").path
        environment["XDG_STATE_HOME"] = directory.url.appendingPathComponent("state").path
        environment["KEYPORT_TOKEN_LIFETIME"] = "20"
        self.environment = environment
    }

    func start(_ program: String, _ arguments: [String] = [], readyWhen marker: String) async throws -> Program {
        let started = try Program(program, arguments, environment: environment)
        _ = try await started.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains(marker) }
        return started
    }

    func export(_ file: String) async throws -> Program.Ran {
        try await Program.run(keyport, ["exchange", "export", file], environment: environment, timeout: .seconds(60))
    }

    /// What the importer wrote. It writes after keyportd handed it the data (which is when the
    /// export returns), so this waits for the file.
    func imported() async throws -> [String: Any] {
        let output = output
        try #require(
            try await FileChanges.waitUntil(within: .seconds(30), changesIn: directory.url) {
                FileManager.default.fileExists(atPath: output)
            },
            "the importer wrote nothing"
        )
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}

private let sample = Peers.file("Examples/sample.cxf.json")

/// The sample document as a JSON value, for comparison with what the importer received.
private func sampleObject() throws -> NSDictionary {
    try #require(
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sample))) as? NSDictionary
    )
}

@Suite("credential exchange through keyportd", .serialized)
struct ExchangeTests {
    @Test("keyport exchange export: the agent's choice is started with activity and token, and receives the document")
    func happyPath() async throws {
        let sandbox = try await ExchangeSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await sandbox.start(keyportd, readyWhen: "listening")
        defer { daemon.stop() }
        let agent = try await sandbox.start(
            keyport,
            ["agent", "--auto", "accept:org.example.importer"],
            readyWhen: "waiting"
        )
        defer { agent.stop() }

        let exported = try await sandbox.export(sample)
        #expect(exported.status == 0, "\(exported.standardError)")
        #expect(exported.standardOutput == "The chosen app has the credentials.\n")
        let imported = try await sandbox.imported()
        #expect(imported["activity"] as? String == "ASCredentialExchangeActivity")
        #expect((imported["data"] as? NSDictionary) == (try sampleObject()))
    }

    @Test("a token is single use: the second redemption is InvalidToken")
    func singleUse() async throws {
        let sandbox = try await ExchangeSandbox(mode: "twice")
        defer { sandbox.directory.remove() }
        let daemon = try await sandbox.start(keyportd, readyWhen: "listening")
        defer { daemon.stop() }
        let agent = try await sandbox.start(keyport, ["agent", "--auto", "accept-first"], readyWhen: "waiting")
        defer { agent.stop() }
        #expect(try await sandbox.export(sample).status == 0)
        #expect(try await sandbox.imported()["second"] as? String == "org.keyport.Exchange.InvalidToken")
    }

    @Test("a token presented by a process keyportd did not start is refused, and the importer still gets the data")
    func otherProcess() async throws {
        let sandbox = try await ExchangeSandbox(mode: "wait")
        defer { sandbox.directory.remove() }
        let daemon = try await sandbox.start(keyportd, readyWhen: "listening")
        defer { daemon.stop() }
        let agent = try await sandbox.start(keyport, ["agent", "--auto", "accept-first"], readyWhen: "waiting")
        defer { agent.stop() }
        let exporting = Task { try await sandbox.export(sample) }
        let tokenFile = sandbox.output + ".token"
        try #require(
            try await FileChanges.waitUntil(within: .seconds(30), changesIn: sandbox.directory.url) {
                FileManager.default.fileExists(atPath: tokenFile)
            }
        )
        let token = try String(contentsOfFile: tokenFile, encoding: .utf8)
        let stolen = await #expect(throws: VarlinkError.self) {
            try await DaemonClient.withConnection(environment: sandbox.environment) {
                try await $0.call(
                    "org.keyport.Exchange.ImportCredentials",
                    RawJSON(encoding: Exchange.ImportIn(token: token))
                )
            }
        }
        #expect(stolen?.name == Exchange.Error.invalidToken)
        #expect(stolen?.message?.contains("given to another process") == true, "\(stolen.map { "\($0)" } ?? "")")
        #expect(FileManager.default.createFile(atPath: sandbox.output + ".go", contents: Data()))
        #expect(try await exporting.value.status == 0)
        #expect((try await sandbox.imported()["data"] as? NSDictionary) == (try sampleObject()))
    }

    @Test(
        "every failure reaches the exporter with what happened",
        arguments: ["declined", "no agent", "no importer", "importer ends", "not CXF"]
    )
    func failures(kind: String) async throws {
        let importer: [String]? =
            switch kind {
            case "importer ends": ["/bin/true"]
            default: nil
            }
        let sandbox = try await ExchangeSandbox(importer: importer)
        defer { sandbox.directory.remove() }
        if kind == "no importer" {
            try FileManager.default.removeItem(
                at: sandbox.directory.url.appendingPathComponent("data/keyport/providers/importer.json")
            )
        }
        let daemon = try await sandbox.start(keyportd, readyWhen: "listening")
        defer { daemon.stop() }
        var agent: Program?
        if kind != "no agent" {
            agent = try await sandbox.start(
                keyport,
                ["agent", "--auto", kind == "declined" ? "decline" : "accept-first"],
                readyWhen: "waiting"
            )
        }
        defer { agent?.stop() }
        var file = sample
        if kind == "not CXF" {
            file = sandbox.directory.url.appendingPathComponent("account.json").path
            try #"{"id":"YQ","username":"a","email":"a@example.com","items":[]}"#.write(
                toFile: file,
                atomically: true,
                encoding: .utf8
            )
        }
        let ran = try await sandbox.export(file)
        let expected: (Int32, String) =
            switch kind {
            case "declined": (1, "the export was declined")
            case "no agent": (1, "no agent is running")
            case "no importer": (1, "no other registered app can import")
            case "importer ends": (1, "Example Importer ended (exited with status 0) without importing")
            default: (1, "a single account without the document's header")
            }
        #expect(ran.status == expected.0, "\(ran.standardError)")
        #expect(ran.standardError.contains(expected.1), "\(ran.standardError)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.output))
    }
}

@Suite("credential exchange when keyportd stops", .serialized)
struct ExchangeShutdownTests {
    @Test("SIGTERM during an exchange ends the exporter's call with the reason, and keyportd exits cleanly")
    func shutdownMidExchange() async throws {
        let sandbox = try await ExchangeSandbox(mode: "wait")
        defer { sandbox.directory.remove() }
        let daemon = try await sandbox.start(keyportd, readyWhen: "listening")
        defer { daemon.stop() }
        let agent = try await sandbox.start(keyport, ["agent", "--auto", "accept-first"], readyWhen: "waiting")
        defer { agent.stop() }
        let exporting = Task { try await sandbox.export(sample) }
        let tokenFile = sandbox.output + ".token"
        try #require(
            try await FileChanges.waitUntil(within: .seconds(30), changesIn: sandbox.directory.url) {
                FileManager.default.fileExists(atPath: tokenFile)
            }
        )
        daemon.signal(SIGTERM)
        let stopped = try await daemon.finish(timeout: .seconds(30))
        #expect(stopped.status == 0, "\(stopped.standardError)")
        let exported = try await exporting.value
        #expect(exported.status != 0)
        #expect(exported.standardError.contains("keyportd is stopping"), "\(exported.standardError)")
        // The importer, let go now, finds nobody to import from.
        #expect(FileManager.default.createFile(atPath: sandbox.output + ".go", contents: Data()))
        #expect(!FileManager.default.fileExists(atPath: sandbox.output))
    }
}

@Suite("the example apps exchange through keyportd", .serialized)
struct ExampleAppsTests {
    @Test("ExampleExporter → keyportd → ExampleImporter, with Apple's API on both sides; refusals map to Apple's codes")
    func exampleApps() async throws {
        let exporter = buildDirectory.appendingPathComponent("ExampleExporter").path
        let importer = buildDirectory.appendingPathComponent("ExampleImporter").path
        let sandbox = try await ExchangeSandbox(importer: [importer])
        defer { sandbox.directory.remove() }
        // The exporter is a registered app too: keyportd knows it by its executable.
        let providers = sandbox.directory.url.appendingPathComponent("data/keyport/providers")
        let manifest: [String: Any] = [
            "id": "org.keyport.example.exporter", "name": "Example Exporter", "exec": [exporter],
            "capabilities": ["SupportsCredentialExchange": true],
        ]
        try JSONSerialization.data(withJSONObject: manifest).write(
            to: providers.appendingPathComponent("exporter.json")
        )
        var environment = sandbox.environment
        environment["KEYPORT_EXAMPLE_OUTPUT"] = sandbox.output
        let daemon = try Program(keyportd, environment: environment)
        _ = try await daemon.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }
        defer { daemon.stop() }

        // No agent yet: Apple's notInteractive, with the reason.
        let lonely = try await Program.run(exporter, [sample], environment: environment, timeout: .seconds(60))
        #expect(lonely.status == 1)
        #expect(lonely.standardError.contains("1005"), "\(lonely.standardError)")

        let agent = try await sandbox.start(
            keyport,
            ["agent", "--auto", "accept:org.example.importer"],
            readyWhen: "waiting"
        )
        defer { agent.stop() }
        let exported = try await Program.run(exporter, [sample], environment: environment, timeout: .seconds(60))
        #expect(exported.status == 0, "\(exported.standardError)")
        let summary = try await sandbox.imported()
        #expect(summary["error"] == nil, "\(summary)")
        #expect(summary["formatVersion"] as? String == "1.0")
        #expect((summary["credentials"] as? Int ?? 0) > 0)
    }
}
