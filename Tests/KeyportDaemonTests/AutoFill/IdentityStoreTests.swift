import Foundation
import KeyportInterfaces
import KeyportTestSupport
import Testing
import Varlink

/// A Python provider talking to keyportd with PyPI's varlink client: it runs each step given on its
/// command line (`METHOD JSON-PARAMETERS`; a bare method name is the identity store's) and prints
/// one JSON line per step, the reply or the error.
private let provider = """
    import json, os, sys, varlink
    with varlink.Client(address="unix:" + os.environ["KEYPORT_SOCKET"]) as client:
        connection = client.open_connection()
        for step in sys.argv[1:]:
            method, parameters = step.split(" ", 1)
            if not method.startswith("org."):
                method = "org.keyport.IdentityStore." + method
            message = {"method": method, "parameters": json.loads(parameters)}
            connection.send(json.dumps(message).encode() + b"\\0")
            reply = b""
            while not reply.endswith(b"\\0"):
                chunk = connection.recv(65536)
                if not chunk:
                    break
                reply += chunk
            print(json.dumps(json.loads(reply.rstrip(b"\\0")), sort_keys=True), flush=True)
    """

private struct IdentitySandbox {
    let directory: TemporaryDirectory
    let environment: [String: String]
    let python: String
    let script: String

    /// A registered provider (the venv's Python, by its program) that provides what `provides` says.
    init(provides: [String] = ["ProvidesPasswords", "ProvidesOneTimeCodes"]) async throws {
        python = try await Peers.python(importing: ["varlink"])
        directory = try TemporaryDirectory("kp-ids")
        environment = sandboxEnvironment(in: directory.url)
        script = directory.url.appendingPathComponent("provider.py").path
        try provider.write(toFile: script, atomically: true, encoding: .utf8)
        var capabilities: [String: Any] = [:]
        for key in provides { capabilities[key] = true }
        let manifest: [String: Any] = [
            "id": "org.example.provider", "name": "Example Provider", "exec": [python, script],
            "capabilities": capabilities,
        ]
        let providers = try directory.subdirectory("data/keyport/providers")
        try JSONSerialization.data(withJSONObject: manifest).write(to: providers.appendingPathComponent("p.json"))
    }

    /// Runs the provider with `steps` (`METHOD JSON`; a bare method name is the identity store's);
    /// each answer as a dictionary.
    func run(_ steps: [String]) async throws -> [[String: Any]] {
        let ran = try await Program.run(python, [script] + steps, environment: environment, timeout: .seconds(60))
        #expect(ran.status == 0, "\(ran.standardError)")
        return try ran.standardOutput.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    func enable() async throws {
        let ran = try await Program.run(
            keyport,
            ["providers", "enable", "org.example.provider"],
            environment: environment,
            timeout: .seconds(60)
        )
        #expect(ran.status == 0, "\(ran.standardError)")
    }

    var storeFile: String {
        directory.url.appendingPathComponent("state/keyport/identities/org.example.provider.json").path
    }
}

private func identity(
    _ kind: String,
    _ service: String,
    _ type: String = "domain",
    user: String,
    record: String,
    rank: Int = 0
) -> String {
    #"{"kind":"\#(kind)","serviceIdentifier":{"identifier":"\#(service)","type":"\#(type)"},"user":"\#(user)","recordIdentifier":"\#(record)","rank":\#(rank)}"#
}

private func error(_ answer: [String: Any]) -> String? { answer["error"] as? String }

private func users(_ answer: [String: Any]) -> [String] {
    ((answer["parameters"] as? [String: Any])?["identities"] as? [[String: Any]] ?? []).compactMap {
        $0["user"] as? String
    }
}

@Suite("the credential identity store in keyportd", .serialized)
struct IdentityStoreTests {
    @Test(
        "a provider's identities: refused while disabled, saved, matched by site, replaced, removed; kept across restarts, 0600"
    )
    func lifecycle() async throws {
        let sandbox = try await IdentitySandbox()
        defer { sandbox.directory.remove() }
        var daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }

        let alice = identity("password", "example.com", user: "alice", record: "r1")
        let bob = identity("password", "https://login.example.com/", "URL", user: "bob", record: "r2", rank: 5)
        let code = identity("oneTimeCode", "example.com", user: "Example (alice)", record: "r3")
        let other = identity("password", "alice.github.io", user: "carol", record: "r4")
        let disabled = try await sandbox.run(["State {}", "Save {\"identities\":[\(alice)]}"])
        #expect((disabled[0]["parameters"] as? [String: Any])?["isEnabled"] as? Bool == false)
        #expect(error(disabled[1]) == "org.keyport.IdentityStore.StoreDisabled")
        #expect(!FileManager.default.fileExists(atPath: sandbox.storeFile))

        try await sandbox.enable()
        let answers = try await sandbox.run([
            "State {}",
            "Save {\"identities\":[\(alice),\(bob),\(code),\(other)]}",
            // Saved again with another rank: replaced, not doubled.
            "Save {\"identities\":[\(identity("password", "example.com", user: "alice", record: "r1", rank: 9))]}",
            "List {}",
            "List {\"service\":{\"identifier\":\"https://www.example.com/signin\",\"type\":\"URL\"},\"kinds\":[\"password\"]}",
            "List {\"service\":{\"identifier\":\"bob.github.io\",\"type\":\"domain\"}}",
            "List {\"service\":{\"identifier\":\"example.com\",\"type\":\"domain\"},\"kinds\":[\"oneTimeCode\"]}",
        ])
        #expect((answers[0]["parameters"] as? [String: Any])?["isEnabled"] as? Bool == true)
        #expect(error(answers[1]) == nil && error(answers[2]) == nil, "\(answers)")
        #expect(users(answers[3]).sorted() == ["Example (alice)", "alice", "bob", "carol"])
        // Same site, best rank first; never another github.io page's.
        #expect(users(answers[4]) == ["alice", "bob"])
        #expect(users(answers[5]).isEmpty)
        #expect(users(answers[6]) == ["Example (alice)"])

        var info = stat()
        #expect(stat(sandbox.storeFile, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let stored = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: sandbox.storeFile)))
        #expect(((stored as? [String: Any])?["identities"] as? [Any])?.count == 4)

        // keyportd restarts: the identities are still there.
        daemon.stop()
        #expect(await daemon.waitForExit(timeout: .seconds(30)) == .exited(0))
        daemon = try await startKeyportd(sandbox.environment)
        let after = try await sandbox.run([
            "List {}",
            "Remove {\"identities\":[\(bob)]}",
            "List {}",
            "Replace {\"identities\":[\(other)]}",
            "List {}",
            "RemoveAll {}",
            "List {}",
        ])
        #expect(users(after[0]).count == 4)
        #expect(users(after[2]).sorted() == ["Example (alice)", "alice", "carol"])
        #expect(users(after[4]) == ["carol"])
        #expect(users(after[6]).isEmpty)
    }

    @Test(
        "all or nothing: one bad identity, a kind the manifest does not declare, or an unreadable store change nothing"
    )
    func refusals() async throws {
        let sandbox = try await IdentitySandbox(provides: ["ProvidesPasswords"])
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        try await sandbox.enable()
        let good = identity("password", "example.com", user: "alice", record: "r1")
        let answers = try await sandbox.run([
            "Save {\"identities\":[\(good),\(identity("password", "not a host", user: "x", record: "r"))]}",
            "Save {\"identities\":[\(good),\(identity("oneTimeCode", "example.com", user: "x", record: "r"))]}",
            "Save {\"identities\":[{\"kind\":\"password\"}]}",
            "List {}",
        ])
        #expect(error(answers[0]) == "org.keyport.IdentityStore.InvalidIdentity")
        let message = (answers[0]["parameters"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains("identities[1]") && message.contains("nothing was changed"), "\(message)")
        #expect(error(answers[1]) == "org.keyport.IdentityStore.InvalidIdentity")
        #expect(error(answers[2]) == "org.varlink.service.InvalidParameter")
        #expect(users(answers[3]).isEmpty)

        // A store file keyportd cannot read is reported, and left as it is.
        daemon.stop()
        #expect(await daemon.waitForExit(timeout: .seconds(30)) == .exited(0))
        try FileManager.default.createDirectory(
            atPath: (sandbox.storeFile as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true
        )
        try "{not json".write(toFile: sandbox.storeFile, atomically: true, encoding: .utf8)
        let restarted = try await startKeyportd(sandbox.environment)
        defer { restarted.stop() }
        let broken = try await sandbox.run(["Save {\"identities\":[\(good)]}"])
        #expect(error(broken[0]) == "org.keyport.IdentityStore.StoreFailed")
        #expect(try String(contentsOfFile: sandbox.storeFile, encoding: .utf8) == "{not json")
    }

    @Test("only a registered provider may use the store")
    func notAProvider() async throws {
        let sandbox = try await IdentitySandbox(provides: [])
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        // The provider's manifest declares neither capability.
        let declared = try await sandbox.run(["State {}"])
        #expect(error(declared[0]) == "org.keyport.IdentityStore.NotAProvider")
        // This test process is no registered app at all.
        let socket = try #require(sandbox.environment["KEYPORT_SOCKET"])
        await #expect(throws: VarlinkError.self) {
            try await VarlinkConnection.withConnection(path: socket, maximumMessageSize: 1 << 20) {
                try await $0.call("org.keyport.IdentityStore.State.Reply")
            }
        }
    }
}

@Suite("a provider's prompts through the agent", .serialized)
struct PromptTests {
    @Test("confirm, choose and secret reach the agent in the provider's name; other callers are refused")
    func prompts() async throws {
        let sandbox = try await IdentitySandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        let secretFile = sandbox.directory.url.appendingPathComponent("secret").path
        try "s3cret\n".write(toFile: secretFile, atomically: true, encoding: .utf8)
        let agent = try Program(
            keyport,
            ["agent", "--auto", "accept:b", "--secret-file", secretFile],
            environment: sandbox.environment
        )
        defer { agent.stop() }
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }

        // The provider here is the Python peer registered as org.example.provider.
        let steps = try await sandbox.run(
            [
                "org.keyport.Prompt.Confirm {\"message\":\"Fill alice's password?\"}",
                "org.keyport.Prompt.Choose {\"message\":\"Which account?\",\"choices\":[{\"id\":\"a\",\"name\":\"alice\"},{\"id\":\"b\",\"name\":\"bob\"}]}",
                "org.keyport.Prompt.Choose {\"message\":\"Which?\",\"choices\":[{\"id\":\"c\",\"name\":\"carol\"}]}",
                "org.keyport.Prompt.Secret {\"message\":\"Passphrase\"}",
            ]
        )
        func parameter(_ answer: [String: Any], _ name: String) -> Any? {
            (answer["parameters"] as? [String: Any])?[name]
        }
        #expect(parameter(steps[0], "confirmed") as? Bool == true)
        #expect(parameter(steps[1], "choice") as? String == "b")
        // accept:b, and b is not offered: declined.
        #expect(parameter(steps[2], "choice") == nil || parameter(steps[2], "choice") is NSNull)
        #expect(parameter(steps[3], "secret") as? String == "s3cret")
        _ = try await agent.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains("Example Provider: gave the secret it asked for")
        }
        // A process that is no registered provider cannot ask in anyone's name.
        let socket = try #require(sandbox.environment["KEYPORT_SOCKET"])
        let refused = await #expect(throws: VarlinkError.self) {
            try await VarlinkConnection.withConnection(path: socket, maximumMessageSize: 1 << 20) {
                try await $0.call("org.keyport.Prompt.Confirm", RawJSON(bytes: Array(#"{"message":"x"}"#.utf8)))
            }
        }
        #expect(refused?.name == "org.keyport.Prompt.NotAProvider")
    }
}
