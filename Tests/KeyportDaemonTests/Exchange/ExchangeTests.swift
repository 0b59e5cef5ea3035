import CKeyportSystem
import CredentialExchangeFormat
import Foundation
import KeyportDaemon
import KeyportInterfaces
import KeyportSystem
import KeyportTestSupport
import Synchronization
import Testing
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// keyportd, an agent and a registered importer (a Python app using PyPI's varlink), each a real
/// process, in a sandbox of XDG directories.
struct ExchangeSandbox {
    let directory: TemporaryDirectory
    let environment: [String: String]
    let output: String

    /// `importer`: the importing app's command; by default the Python importer writing to `output`.
    /// `name`: the importer's name in its manifest.
    init(importer: [String]? = nil, mode: String = "import", name: String = "Example Importer") async throws {
        let python = try await Peers.python(importing: ["varlink"])
        directory = try TemporaryDirectory("kp-exchange")
        output = directory.url.appendingPathComponent("imported.json").path
        let providers = try directory.subdirectory("data/keyport/providers")
        let exec = importer ?? [python, Peers.file("Tests/KeyportDaemonTests/Peers/importer.py"), output, mode]
        let manifest: [String: Any] = [
            "id": "org.example.importer", "name": name, "exec": exec,
            "capabilities": ["SupportsCredentialExchange": true, "SupportedCredentialExchangeVersions": ["1.0"]],
        ]
        try JSONSerialization.data(withJSONObject: manifest).write(
            to: providers.appendingPathComponent("importer.json")
        )
        var environment = sandboxEnvironment(in: directory.url)
        environment["KEYPORT_TOKEN_LIFETIME"] = "20"
        // Where the example apps (ExampleImporter) write what they received.
        environment["KEYPORT_EXAMPLE_OUTPUT"] = output
        self.environment = environment
    }

    /// Registers this test's own program as an app that exports, as any exporter is registered.
    func registerThisProgramAsExporter() throws {
        let program = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let manifest: [String: Any] = [
            "id": "org.keyport.test.exporter", "name": "Test Exporter", "exec": [program],
            "capabilities": ["SupportsCredentialExchange": true, "ImportsCredentials": false],
        ]
        try JSONSerialization.data(withJSONObject: manifest).write(
            to: directory.url.appendingPathComponent("data/keyport/providers/exporter.json")
        )
    }

    func start(_ program: String, _ arguments: [String] = [], readyWhen marker: String) async throws -> Program {
        let started = try Program(program, arguments, environment: environment)
        _ = try await started.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains(marker) }
        return started
    }

    /// Runs `body` with keyportd and an agent answering with `policy` (`keyport agent --auto`), both
    /// ready, and stops both after it.
    func withSystem(
        agent policy: String = "accept-first",
        _ body: (_ daemon: Program, _ agent: Program) async throws -> Void
    ) async throws {
        let daemon = try await start(keyportd, [scriptedAgent], readyWhen: "listening")
        defer { daemon.stop() }
        let agent = try await start(keyport, ["agent", "--auto", policy], readyWhen: "waiting")
        defer { agent.stop() }
        try await body(daemon, agent)
    }

    /// The token the importer (started in "wait" mode) was given, once it has written it.
    func waitForToken() async throws -> String {
        let tokenFile = output + ".token"
        try #require(
            try await FileChanges.waitUntil(within: .seconds(30), changesIn: directory.url) {
                FileManager.default.fileExists(atPath: tokenFile)
            }
        )
        return try String(contentsOfFile: tokenFile, encoding: .utf8)
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

let sample = Peers.file("Examples/sample.cxf.json")

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
        let daemon = try await sandbox.start(keyportd, [scriptedAgent], readyWhen: "listening")
        defer { daemon.stop() }
        let agent = try await sandbox.start(
            keyport,
            ["agent", "--auto", "accept:org.example.importer"],
            readyWhen: "waiting"
        )
        defer { agent.stop() }

        let exported = try await sandbox.export(sample)
        #expect(exported.status == 0, "\(exported.standardError)")
        #expect(exported.standardOutput == "Example Importer has the credentials; it did not say what it kept.\n")
        #expect(
            exported.standardError.contains(
                "keyport: Example Importer has the credentials; waiting for it to say what it kept"
            )
        )
        let imported = try await sandbox.imported()
        #expect(imported["activity"] as? String == "ASCredentialExchangeActivity")
        #expect((imported["data"] as? NSDictionary) == (try sampleObject()))
    }

    @Test(
        "exports as real password managers write them get through: deviations, a later minor version, every credential type",
        arguments: ["real-export-deviations.json", "version-1-7.json", "full.json"]
    )
    func realExports(fixture: String) async throws {
        let file = Peers.file("Tests/CredentialExchangeFormatTests/Fixtures/\(fixture)")
        let sandbox = try await ExchangeSandbox()
        defer { sandbox.directory.remove() }
        try await sandbox.withSystem { daemon, agent async throws in
            let exported = try await sandbox.export(file)
            #expect(exported.status == 0, "\(exported.standardError)")
            // Handed over as written: the same JSON the exporter sent.
            let sent =
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? NSDictionary
            #expect((try await sandbox.imported()["data"] as? NSDictionary) == sent)
            // Then the validator reviews it, for the log, in a process of its own at background
            // priority (slow on a machine busy with other tests); the deviations are counted, not
            // refused.
            let review = try await daemon.waitForLine(timeout: .seconds(120), onStandardError: true) {
                $0.contains("export reviewed")
            }
            #expect(review.contains(fixture == "real-export-deviations.json" ? "warnings=" : "errors=0"), "\(review)")
            if fixture == "real-export-deviations.json" { #expect(!review.contains("warnings=0"), "\(review)") }
        }
    }

    @Test(
        "the review runs keyportd's codec in a process of its own: a verdict for a document, one naming what is unreadable, and why there is none"
    )
    func reviewProcess() async throws {
        func review(_ text: String, sealed: Bool = true) async throws -> ExchangeReview.Outcome {
            let program = try await Program.run(
                "/usr/bin/python3",
                [
                    "-c",
                    """
                    import fcntl, os, subprocess, sys
                    fd = os.memfd_create("review", os.MFD_ALLOW_SEALING)
                    os.write(fd, sys.argv[2].encode())
                    if sys.argv[3] == "sealed":
                        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
                    os.dup2(fd, 3, inheritable=True)
                    result = subprocess.run([sys.argv[1], "--review"], pass_fds=(3,), capture_output=True)
                    sys.stdout.buffer.write(result.stdout)
                    sys.stderr.buffer.write(result.stderr)
                    sys.exit(result.returncode)
                    """,
                    keyportd, text, sealed ? "sealed" : "open",
                ],
                timeout: .seconds(60)
            )
            return ExchangeReview.outcome(
                of: program.termination,
                output: Array(program.standardOutput.utf8),
                errors: Array(program.standardError.utf8)
            )
        }
        let document = try String(contentsOfFile: sample, encoding: .utf8)
        #expect(try await review(document) == .verdict(Review.Verdict(errors: 0, warnings: 0)))
        guard case .verdict(let unreadable) = try await review("{\"version\": ") else {
            Issue.record("a document that is not JSON has a verdict")
            return
        }
        #expect(unreadable.unreadable?.isEmpty == false && unreadable.errors == 0)
        // A descriptor its sender could still write is not reviewed; the log says why.
        guard case .notReviewed(let why) = try await review(document, sealed: false) else {
            Issue.record("an unsealed file was reviewed")
            return
        }
        #expect(
            why.contains(
                "the review exited with status 1: keyportd --review: the document cannot be read: the memory file is not sealed"
            ),
            "\(why)"
        )
        let garbled = ExchangeReview.outcome(of: .exited(0), output: Array("not json\n".utf8), errors: [])
        guard case .notReviewed(let reason) = garbled else {
            Issue.record("output that is no verdict was taken for one")
            return
        }
        #expect(reason.hasPrefix("the review's verdict does not read as one"), "\(reason)")
    }

    @Test("a token is single use: the second redemption is InvalidToken")
    func singleUse() async throws {
        let sandbox = try await ExchangeSandbox(mode: "twice")
        defer { sandbox.directory.remove() }
        try await sandbox.withSystem { daemon, agent async throws in
            #expect(try await sandbox.export(sample).status == 0)
            #expect(try await sandbox.imported()["second"] as? String == "org.keyport.Exchange.InvalidToken")
        }
    }

    @Test("a token presented by a process keyportd did not start is refused, and the importer still gets the data")
    func otherProcess() async throws {
        let sandbox = try await ExchangeSandbox(mode: "wait")
        defer { sandbox.directory.remove() }
        try await sandbox.withSystem { daemon, agent async throws in
            let exporting = Task { try await sandbox.export(sample) }
            let token = try await sandbox.waitForToken()
            let stolen = await #expect(throws: VarlinkError.self) {
                try await DaemonClient.withConnection(environment: sandbox.environment) {
                    try await $0.call(
                        "org.keyport.Exchange.ImportCredentials",
                        RawJSON(encoding: Exchange.ImportCredentials.Parameters(token: token))
                    )
                }
            }
            #expect(stolen?.name == Exchange.InvalidToken.name)
            #expect(stolen?.message?.contains("given to another process") == true, "\(stolen.map { "\($0)" } ?? "")")
            #expect(FileManager.default.createFile(atPath: sandbox.output + ".go", contents: Data()))
            #expect(try await exporting.value.status == 0)
            #expect((try await sandbox.imported()["data"] as? NSDictionary) == (try sampleObject()))
        }
    }

    @Test(
        "every failure reaches the exporter with what happened",
        arguments: ["declined", "no agent", "no importer", "export-only app", "importer ends", "not CXF", "version 2"]
    )
    func failures(kind: String) async throws {
        let importer: [String]? =
            switch kind {
            case "importer ends": ["/bin/true"]
            default: nil
            }
        let sandbox = try await ExchangeSandbox(importer: importer)
        defer { sandbox.directory.remove() }
        let importerManifest = sandbox.directory.url.appendingPathComponent("data/keyport/providers/importer.json")
        if kind == "no importer" { try FileManager.default.removeItem(at: importerManifest) }
        if kind == "export-only app" {
            // The only other app that supports exchange says it only exports: it is offered nothing.
            var manifest = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: importerManifest)) as? [String: Any]
            )
            var capabilities = manifest["capabilities"] as? [String: Any] ?? [:]
            capabilities["ImportsCredentials"] = false
            manifest["capabilities"] = capabilities
            try JSONSerialization.data(withJSONObject: manifest).write(to: importerManifest)
        }
        let daemon = try await sandbox.start(keyportd, [scriptedAgent], readyWhen: "listening")
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
        if kind == "version 2" {
            file = sandbox.directory.url.appendingPathComponent("v2.json").path
            let text = try String(contentsOfFile: sample, encoding: .utf8)
            let v2 = text.replacingOccurrences(of: #""major": 1"#, with: #""major": 2"#)
            #expect(v2 != text, "the sample's version is written as expected")
            try v2.write(toFile: file, atomically: true, encoding: .utf8)
        }
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
            case "no importer", "export-only app": (1, "no other registered app can import")
            case "importer ends": (1, "Example Importer ended (exited with status 0) without importing")
            case "version 2": (1, "no importer can read CXF 2.x")
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
        try await sandbox.withSystem { daemon, agent async throws in
            let exporting = Task { try await sandbox.export(sample) }
            _ = try await sandbox.waitForToken()
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
}

@Suite("the example apps exchange through keyportd", .serialized)
struct ExampleAppsTests {
    @Test("ExampleExporter → keyportd → ExampleImporter, with Apple's API on both sides; refusals map to Apple's codes")
    func exampleApps() async throws {
        let exporter = builtProgram("ExampleExporter")
        let importer = builtProgram("ExampleImporter")
        let sandbox = try await ExchangeSandbox(importer: [importer])
        defer { sandbox.directory.remove() }
        // The exporter is a registered app too: keyportd knows it by its executable.
        let providers = sandbox.directory.url.appendingPathComponent("data/keyport/providers")
        let manifest: [String: Any] = [
            "id": "org.keyport.example.exporter", "name": "Example Exporter", "exec": [exporter],
            "capabilities": ["SupportsCredentialExchange": true, "ImportsCredentials": false],
        ]
        try JSONSerialization.data(withJSONObject: manifest).write(
            to: providers.appendingPathComponent("exporter.json")
        )
        let environment = sandbox.environment
        let daemon = try Program(keyportd, [scriptedAgent], environment: environment)
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

/// A CXF document of `items` sign-ins, as JSON text.
private func largeDocument(items: Int, tag: String) -> String {
    let entries = (0..<items).map { index in
        let id = Data("item-\(tag)-\(index)".utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(
                of: "/",
                with: "_"
            )
        return """
            {"id":"\(id)","title":"Site \(index)","scope":{"urls":["https://site\(index).example"]},\
            "credentials":[{"type":"basic-auth","username":{"fieldType":"string","value":"user\(index)"},\
            "password":{"fieldType":"concealed-string","value":"secret-\(tag)-\(index)"}}]}
            """
    }
    return """
        {"version":{"major":1,"minor":0},"exporterRpId":"keyport.example","exporterDisplayName":"Test",\
        "timestamp":1700000000,"accounts":[{"id":"YWNjb3VudA","username":"person","email":"person@example.com",\
        "items":[\(entries.joined(separator: ","))]}]}
        """
}

@Suite("large and concurrent exchanges", .serialized)
struct LargeExchangeTests {
    @Test(
        "two 10 000-item exchanges at once each arrive whole, equal in canonical CXF; keyportd writes no file meanwhile"
    )
    func twoLargeAtOnce() async throws {
        let strace = try Peers.require("/usr/bin/strace", "strace")
        let sandbox = try await ExchangeSandbox(mode: "unique")
        defer { sandbox.directory.remove() }
        try await sandbox.withSystem { daemon, agent async throws in

            // Every call that could write a file, from keyportd, while the exchanges run.
            let log = sandbox.directory.url.appendingPathComponent("strace.log").path
            let tracer = try Program(
                strace,
                [
                    "-f", "-p", "\(daemon.pid)", "-o", log, "-e",
                    "trace=open,openat,creat,truncate,ftruncate,rename,renameat,renameat2,mkdir,mkdirat,unlink,unlinkat,link,linkat,symlink,symlinkat",
                ]
            )
            _ = try await tracer.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("attached") }

            let documents = try ["a", "b"].map { tag in
                let file = sandbox.directory.url.appendingPathComponent("export-\(tag).json").path
                try largeDocument(items: 10_000, tag: tag).write(toFile: file, atomically: true, encoding: .utf8)
                return file
            }
            async let first = sandbox.export(documents[0])
            async let second = sandbox.export(documents[1])
            let results = try await [first, second]
            for result in results { #expect(result.status == 0, "\(result.standardError)") }

            // keyportd's own threads: strace -f also follows the importers keyportd starts, whose
            // files are theirs to write.
            let threads = Set(try FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/task"))
            tracer.signal(SIGINT)
            _ = await tracer.waitForExit(timeout: .seconds(30))
            let calls = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { call in
                call.split(separator: " ").first.map { threads.contains(String($0)) } == true
            }
            #expect(!calls.isEmpty, "strace saw nothing of keyportd")
            let writes = calls.filter { call in
                [
                    "O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "rename", "mkdir", "unlink", "link(", "symlink",
                    "truncate",
                ]
                .contains {
                    call.contains($0)
                }
            }
            #expect(writes.isEmpty, "keyportd touched files during the exchange: \(writes.prefix(5))")

            // Each document arrived whole (files named by token: order unknown), equal in canonical CXF.
            // The importers write after they have the data, which is when the exports return.
            func outputs() -> [String] {
                ((try? FileManager.default.contentsOfDirectory(atPath: sandbox.directory.path)) ?? [])
                    .filter { $0.hasPrefix("imported.json-") && !$0.hasSuffix(".tmp") }
            }
            try #require(
                try await FileChanges.waitUntil(within: .seconds(60), changesIn: sandbox.directory.url) {
                    outputs().count == 2
                }
            )
            var received: Set<[UInt8]> = []
            for name in outputs() {
                let object = try #require(
                    try JSONSerialization.jsonObject(
                        with: Data(contentsOf: sandbox.directory.url.appendingPathComponent(name))
                    ) as? [String: Any]
                )
                let data = try JSONSerialization.data(withJSONObject: try #require(object["data"]))
                received.insert(CXF.Encoder().encode(try CXF.Decoder().decode(data).document))
            }
            let sent = Set(
                try documents.map {
                    CXF.Encoder().encode(try CXF.Decoder().decode(Data(contentsOf: URL(fileURLWithPath: $0))).document)
                }
            )
            // Compared without printing 4 MB of bytes on a failure.
            let equal = received == sent
            #expect(
                equal,
                "the documents received differ from those sent (\(received.map(\.count)) bytes against \(sent.map(\.count)))"
            )
        }
    }
}

@Suite("what the exporter hears", .serialized)
struct ExportOutcomeTests {
    @Test(
        "an importer that never takes its data: the exporter hears it started, is told soon with the importer named, and the process keyportd started is stopped"
    )
    func importerNeverRedeems() async throws {
        let sandbox = try await ExchangeSandbox(mode: "wait")
        defer { sandbox.directory.remove() }
        var environment = sandbox.environment
        environment["KEYPORT_TOKEN_LIFETIME"] = "2"
        let daemon = try Program(keyportd, [scriptedAgent], environment: environment)
        _ = try await daemon.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }
        defer { daemon.stop() }
        let agent = try await sandbox.start(keyport, ["agent", "--auto", "accept-first"], readyWhen: "waiting")
        defer { agent.stop() }
        let exported = try await Program.run(
            keyport,
            ["exchange", "export", sample],
            environment: environment,
            timeout: .seconds(60)
        )
        #expect(exported.status == 1)
        #expect(
            exported.standardError.contains(
                "keyport: started Example Importer; waiting for it to take the credentials"
            ),
            "\(exported.standardError)"
        )
        #expect(
            exported.standardError.contains("Example Importer did not take the credentials within 2 seconds"),
            "\(exported.standardError)"
        )
        let token = try await sandbox.waitForToken()
        let deadline = ContinuousClock.now + .seconds(10)
        var left: [pid_t] = []
        repeat {
            left = Started.processes(running: "python3", withEnvironment: "KEYPORT_IMPORT_TOKEN=\(token)")
            if left.isEmpty { break }
            try await Task.sleep(for: .milliseconds(100))
        } while ContinuousClock.now < deadline
        #expect(left.isEmpty, "the importer keyportd started is still running: \(left)")
    }

    @Test("the importer reports what it kept, and only it can: the exporter prints its report")
    func importerReports() async throws {
        let sandbox = try await ExchangeSandbox(mode: "report")
        defer { sandbox.directory.remove() }
        try await sandbox.withSystem { daemon, agent async throws in
            let exporter = try Program(keyport, ["exchange", "export", sample], environment: sandbox.environment)
            defer { exporter.stop() }
            let token = try await sandbox.waitForToken()
            // Another process of the person's that learned the token cannot speak for the importer.
            let python = try await Peers.python(importing: ["varlink"])
            let forged = try await Program.run(
                python,
                [
                    "-c",
                    """
                    import os, sys, varlink
                    with varlink.Client(address="unix:" + os.environ["KEYPORT_SOCKET"]) as client, client.open("org.keyport.Exchange", namespaced=False) as exchange:
                        try:
                            exchange.ReportImport(sys.argv[1], 999, False, "all of them")
                            print("accepted")
                        except varlink.VarlinkError as error:
                            print(error.error(), error.parameters().get("message"))
                    """,
                    token,
                ],
                environment: sandbox.environment,
                timeout: .seconds(30)
            )
            #expect(
                forged.standardOutput.hasPrefix("org.keyport.Exchange.InvalidToken only the app that imported"),
                "\(forged.standardOutput)\(forged.standardError)"
            )
            #expect(FileManager.default.createFile(atPath: sandbox.output + ".go", contents: Data()))
            let ran = try await exporter.finish(timeout: .seconds(60))
            #expect(ran.status == 0, "\(ran.standardError)")
            #expect(ran.standardOutput == "Example Importer kept 3 items. Example Importer says: three kept\n")
        }
    }
}

@Suite("the desktop agent", .serialized)
struct DesktopAgentTests {
    /// A stand-in for the person at zenity's dialogs: it records what each window was given (its
    /// arguments, and its input: the question's text, or the list's rows), then either presses OK
    /// — in the list, on the last row: its last cell is the row's number — or presses cancel.
    private func dialog(in directory: URL, choose: Bool) throws -> URL {
        let bin = directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let script = bin.appendingPathComponent("zenity")
        try """
        #!/bin/sh
        printf '%s\\n' "$@" >> '\(directory.path)/zenity-arguments'
        cat > '\(directory.path)/zenity-input'
        cat '\(directory.path)/zenity-input' >> '\(directory.path)/zenity-inputs'
        \(choose ? "tail -n 1 '\(directory.path)/zenity-input'" : "exit 1")
        """.write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        return bin
    }

    @Test(
        "with a display, the question goes to a zenity dialog; choosing exports, cancelling declines",
        arguments: [true, false]
    )
    func zenity(choose: Bool) async throws {
        let sandbox = try await ExchangeSandbox()
        defer { sandbox.directory.remove() }
        let bin = try dialog(in: sandbox.directory.url, choose: choose)
        let daemon = try await sandbox.start(keyportd, [scriptedAgent], readyWhen: "listening")
        defer { daemon.stop() }
        // A real X server: the agent asks in dialogs only on a display that answers.
        let server = try await XServer(cookieIn: sandbox.directory.url)
        defer { server.stop() }
        var environment = server.environment(sandbox.environment)
        environment["PATH"] = bin.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        let agent = try Program(keyport, ["agent"], environment: environment)
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        defer { agent.stop() }

        let exported = try await sandbox.export(sample)
        let asked = try String(
            contentsOfFile: sandbox.directory.url.appendingPathComponent("zenity-arguments").path,
            encoding: .utf8
        )
        // The question is on the text window's input, never on a command line.
        #expect(asked.contains("--text-info"))
        #expect(!asked.contains("export your credentials") && !asked.contains("Example"), "\(asked)")
        let inputs = try String(
            contentsOfFile: sandbox.directory.url.appendingPathComponent("zenity-inputs").path,
            encoding: .utf8
        )
        #expect(inputs.contains("wants to export your credentials"))
        // Cancelled in the question's window, the list is never shown.
        #expect(asked.contains("--list") == choose)
        if choose { #expect(inputs.hasSuffix("\nExample Importer\n1\n"), "\(inputs)") }
        if choose {
            #expect(exported.status == 0, "\(exported.standardError)")
            #expect((try await sandbox.imported()["data"] as? NSDictionary) == (try sampleObject()))
        } else {
            #expect(exported.status == 1)
            #expect(exported.standardError.contains("the export was declined"))
        }
    }
}

@Suite("agents that go away", .serialized)
struct AgentGoneTests {
    @Test("the only agent leaving while its question waits ends the export with NoAgent")
    func agentLeaves() async throws {
        let python = try await Peers.python(importing: ["varlink"])
        let sandbox = try await ExchangeSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await sandbox.start(keyportd, [scriptedAgent], readyWhen: "listening")
        defer { daemon.stop() }
        // The person's agent, in a terminal that closes while the question is on it.
        let steps = [
            ["expect", "waiting for keyportd's questions"], ["say", "ready"], ["expect", "Export to which app? "],
            ["say", "asked"],
        ]
        let terminal = try Program(
            python,
            [
                Peers.file("Tests/KeyportDaemonTests/Peers/pty_driver.py"),
                String(decoding: try JSONSerialization.data(withJSONObject: steps), as: UTF8.self), keyport, "agent",
            ],
            environment: sandbox.environment.filter { $0.key != "DISPLAY" && $0.key != "WAYLAND_DISPLAY" }
        )
        defer { terminal.stop() }
        _ = try await terminal.waitForLine(timeout: .seconds(60)) { $0 == "@@ ready" }
        let exporter = Task { try await sandbox.export(sample) }
        _ = try await terminal.waitForLine(timeout: .seconds(60)) { $0 == "@@ asked" }
        terminal.stop()
        let exported = try await exporter.value
        #expect(exported.status == 1)
        #expect(exported.standardError.contains("no agent is running"), "\(exported.standardError)")
    }
}

/// Calls `ExportCredentials` on keyportd's descriptor socket with `parameters` and `descriptors`;
/// returns keyportd's error, or `nil` once the export is over.
private func exportThroughDescriptors(
    _ parameters: Exchange.ExportCredentials.Parameters,
    descriptors: [Int32],
    environment: [String: String],
    afterSending: @escaping @Sendable () -> Void = {}
) async throws -> VarlinkError? {
    try await onOwnThread {
        let connection = try DaemonClient.connectForDescriptors(environment: environment)
        try connection.send(
            VarlinkCall(method: Exchange.ExportCredentials.name, parameters: RawJSON(encoding: parameters)),
            descriptors: descriptors
        )
        afterSending()
        do {
            _ = try connection.nextReply()
            return nil
        } catch let error as VarlinkError {
            return error
        }
    }
}

@Suite("the document as a sealed memory file", .serialized)
struct DescriptorExchangeTests {
    @Test(
        "keyportd refuses a descriptor that is not a sealed memory file, one that did not come, the data given twice, and a descriptor on keyportd.sock; a sealed one arrives as it was, though its sender writes through it"
    )
    func sealedOnly() async throws {
        let sandbox = try await ExchangeSandbox()
        defer { sandbox.directory.remove() }
        try sandbox.registerThisProgramAsExporter()
        try await sandbox.withSystem { daemon, agent async throws in
            let export = try await DaemonClient.withConnection(environment: sandbox.environment) {
                try await $0.call(Exchange.RequestExport.self, .init(formatVersions: nil)).export
            }
            let document = try Data(contentsOf: URL(fileURLWithPath: sample))
            func refusal(_ error: VarlinkError?) -> String {
                guard let error, error.name == Exchange.InvalidData.name else {
                    return "not InvalidData: \(String(describing: error))"
                }
                return ([error.message ?? ""] + (error.parameters(as: Exchange.InvalidData.self)?.problems ?? []))
                    .joined(separator: "; ")
            }

            // Not sealed: its writer could change it after keyportd looked.
            let open = ckp_sealable_memory_file("open")
            try #require(open >= 0)
            defer { close(open) }
            _ = document.withUnsafeBytes { write(open, $0.baseAddress, $0.count) }
            let unsealed = refusal(
                try await exportThroughDescriptors(
                    .init(export: export, data: nil, dataDescriptor: 0),
                    descriptors: [open],
                    environment: sandbox.environment
                )
            )
            #expect(unsealed.contains("F_SEAL_WRITE"), "\(unsealed)")

            // Not a memory file at all.
            var pipe: [Int32] = [-1, -1]
            try #require(Glibc.pipe(&pipe) == 0)
            defer { for end in pipe { close(end) } }
            let piped = refusal(
                try await exportThroughDescriptors(
                    .init(export: export, data: nil, dataDescriptor: 0),
                    descriptors: [pipe[0]],
                    environment: sandbox.environment
                )
            )
            #expect(piped.contains("no descriptor 0: 1 came with the call, and only memory files are kept"), "\(piped)")

            // A descriptor the call names but did not send; the data and a descriptor both.
            let file = try document.withUnsafeBytes { try MemoryFile(name: "test-export", contents: $0) }
            let missing = refusal(
                try await exportThroughDescriptors(
                    .init(export: export, data: nil, dataDescriptor: 1),
                    descriptors: [file.descriptor],
                    environment: sandbox.environment
                )
            )
            #expect(missing.contains("no descriptor 1: 1 came with the call"), "\(missing)")
            let twice = refusal(
                try await exportThroughDescriptors(
                    .init(export: export, data: RawJSON(bytes: Array(#"{"accounts":[]}"#.utf8)), dataDescriptor: 0),
                    descriptors: [file.descriptor],
                    environment: sandbox.environment
                )
            )
            #expect(twice.contains("not both"), "\(twice)")

            // keyportd.sock (swift-nio's) passes no descriptors, and says where they go.
            let elsewhere = await #expect(throws: VarlinkError.self) {
                try await DaemonClient.withConnection(environment: sandbox.environment) {
                    try await $0.call(
                        Exchange.ExportCredentials.self,
                        .init(export: export, data: nil, dataDescriptor: 0)
                    )
                }
            }
            #expect(refusal(elsewhere).contains("descriptor socket"), "\(refusal(elsewhere))")

            // Sealed: handed over. Once sent, its writer cannot change it either.
            let descriptor = file.descriptor
            let writes = Mutex<[Int32]>([])
            let handed = try await exportThroughDescriptors(
                .init(export: export, data: nil, dataDescriptor: 0),
                descriptors: [descriptor],
                environment: sandbox.environment
            ) {
                let overwrite = Array("{}".utf8)
                let written = overwrite.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
                writes.withLock { $0 = [Int32(written), errno, ftruncate(descriptor, 1), errno] }
            }
            #expect(handed == nil, "\(String(describing: handed))")
            #expect(writes.withLock { $0 } == [-1, EPERM, -1, EPERM])
            let sent = try JSONSerialization.jsonObject(with: document) as? NSDictionary
            #expect((try await sandbox.imported()["data"] as? NSDictionary) == sent)
            withExtendedLifetime(file) {}

            // The JSON form on keyportd.sock, as a client that cannot pass descriptors sends it: the
            // document in the message, handed to the importer (PyPI's varlink) in its reply.
            try FileManager.default.removeItem(atPath: sandbox.output)
            let again = try await DaemonClient.withConnection(environment: sandbox.environment) {
                try await $0.call(Exchange.RequestExport.self, .init(formatVersions: nil)).export
            }
            let reply = try await DaemonClient.withConnection(environment: sandbox.environment) {
                try await $0.call(
                    Exchange.ExportCredentials.self,
                    .init(export: again, data: RawJSON(bytes: Array(document)), dataDescriptor: nil)
                )
            }
            #expect(reply.importer == "Example Importer")
            #expect((try await sandbox.imported()["data"] as? NSDictionary) == sent)
        }
    }

    @Test("a document that came in a message reaches an app on Apple's API as a sealed memory file")
    func messageToMemoryFile() async throws {
        let sandbox = try await ExchangeSandbox(importer: [builtProgram("ExampleImporter")])
        defer { sandbox.directory.remove() }
        try sandbox.registerThisProgramAsExporter()
        let environment = sandbox.environment
        try await sandbox.withSystem { daemon, agent async throws in
            // The JSON form, as PyPI's varlink exports: keyportd puts the bytes in a memory file for
            // an importer on the descriptor socket, as ASCredentialImportManager is.
            let export = try await DaemonClient.withConnection(environment: environment) {
                try await $0.call(Exchange.RequestExport.self, .init(formatVersions: nil)).export
            }
            let document = try Data(contentsOf: URL(fileURLWithPath: sample))
            let reply = try await DaemonClient.withConnection(environment: environment) {
                try await $0.call(
                    Exchange.ExportCredentials.self,
                    .init(export: export, data: RawJSON(bytes: Array(document)), dataDescriptor: nil)
                )
            }
            #expect(reply.importer == "Example Importer")
            let summary = try await sandbox.imported()
            #expect(summary["error"] == nil, "\(summary)")
            #expect((summary["credentials"] as? Int ?? 0) > 0, "\(summary)")
        }
    }

    @Test(
        "an exchange larger than keyportd's 64 MiB message limit arrives whole, from keyport to an app on Apple's API"
    )
    func largerThanAMessage() async throws {
        let importer = builtProgram("ExampleImporter")
        let sandbox = try await ExchangeSandbox(importer: [importer])
        defer { sandbox.directory.remove() }
        // 72 notes of a mebibyte each.
        let note = String(repeating: "a line of a long note. ", count: (1 << 20) / 23)
        let items = (0..<72).map { index in
            #"{"id":"bm90ZS\#(index)","title":"Note \#(index)","credentials":[{"type":"note","content":{"fieldType":"string","value":"\#(note)"}}]}"#
        }
        let text = """
            {"version":{"major":1,"minor":0},"exporterRpId":"keyport.example","exporterDisplayName":"Test",\
            "timestamp":1700000000,"accounts":[{"id":"YWNjb3VudA","username":"person","email":"person@example.com",\
            "items":[\(items.joined(separator: ","))]}]}
            """
        #expect(text.utf8.count > DaemonClient.maximumMessageSize)
        let file = sandbox.directory.url.appendingPathComponent("large.json").path
        try text.write(toFile: file, atomically: false, encoding: .utf8)
        let environment = sandbox.environment
        try await sandbox.withSystem { daemon, agent async throws in
            let exported = try await Program.run(
                keyport,
                ["exchange", "export", file],
                environment: environment,
                timeout: .seconds(300)
            )
            #expect(exported.status == 0, "\(exported.standardError)")
            let summary = try await sandbox.imported()
            #expect(summary["error"] == nil, "\(summary)")
            #expect(summary["credentials"] as? Int == 72, "\(summary)")
            #expect((summary["credentialTypes"] as? [String: Int])?["note"] == 72, "\(summary)")
        }
    }
}
