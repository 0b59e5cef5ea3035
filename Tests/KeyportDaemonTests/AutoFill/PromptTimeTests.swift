import Foundation
import KeyportAutoFillTestSupport
import KeyportTestSupport
import Testing

/// The person's agent in a terminal (the pty driver), playing `steps`, with no display.
private func terminalAgent(_ steps: [[String]], environment: [String: String]) async throws -> Program {
    let python = try await Peers.python(importing: ["varlink"])
    return try Program(
        python,
        [
            Peers.file("Tests/KeyportDaemonTests/Peers/pty_driver.py"),
            String(decoding: try JSONSerialization.data(withJSONObject: steps), as: UTF8.self), keyport, "agent",
        ],
        environment: environment.filter { $0.key != "DISPLAY" && $0.key != "WAYLAND_DISPLAY" }
    )
}

@Suite("a provider asking the person: whose time runs, and what the client is told", .serialized)
struct PromptTimeTests {
    @Test(
        "keyport password says at once that the provider asks through the agent, and the provider's clock stops while the person takes longer than its time"
    )
    func providerClockStops() async throws {
        // The provider has 1 s without the person and 12 s with them; the person takes 14.
        let sandbox = try AutoFillSandbox(timeout: 1)
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(order: ["interactive"], services: ["interactive": "example.com"])
        let go = sandbox.directory.url.appendingPathComponent("go").path
        let agent = try await terminalAgent(
            [
                ["expect", "waiting for keyportd's questions"], ["say", "ready"],
                ["expect", "Type it (hidden; empty to decline): "],
                ["say", "asked"], ["wait-file", go], ["type", "open sesame\n"],
                ["expect", "gave the secret it asked for"],
            ],
            environment: sandbox.environment
        )
        defer { agent.stop() }
        _ = try await agent.waitForLine(timeout: .seconds(60)) { $0 == "@@ ready" }

        let client = try Program(keyport, ["password", "example.com"], environment: sandbox.environment)
        defer { client.stop() }
        _ = try await agent.waitForLine(timeout: .seconds(60)) { $0 == "@@ asked" }
        // Before the person answers, the command has said who is asking, and where.
        let said = try await client.waitForLine(timeout: .seconds(30), onStandardError: true) {
            $0.contains("asking you through the agent")
        }
        #expect(said == "keyport: Example interactive is asking you through the agent")
        try await Task.sleep(for: .seconds(14))
        #expect(FileManager.default.createFile(atPath: go, contents: Data()))
        let ran = try await client.finish(timeout: .seconds(60))
        #expect(ran.status == 0, "\(ran.standardError)")
        #expect(!ran.standardOutput.isEmpty)
    }

    @Test(
        "a person who does not answer in their time is named as the one who did not, and the question leaves the agent's screen"
    )
    func personTimesOut() async throws {
        let sandbox = try AutoFillSandbox(timeout: 5)
        defer { sandbox.directory.remove() }
        var environment = sandbox.environment
        environment["KEYPORT_PERSON_TIMEOUT"] = "2"
        let daemon = try await startKeyportd(environment)
        defer { daemon.stop() }
        try await sandbox.setUp(order: ["interactive"], services: ["interactive": "example.com"])
        // With no agent, nobody is said to be asking: the client is told there is no agent.
        let alone = try await Program.run(
            keyport,
            ["password", "example.com"],
            environment: environment,
            timeout: .seconds(60)
        )
        #expect(alone.status == 1)
        #expect(!alone.standardError.contains("asking you"), "\(alone.standardError)")
        #expect(alone.standardError.contains("no agent is running"), "\(alone.standardError)")
        let agent = try await terminalAgent(
            [
                ["expect", "waiting for keyportd's questions"], ["say", "ready"],
                ["expect", "Type it (hidden; empty to decline): "],
                ["expect", "the question was withdrawn"], ["say", "withdrawn"],
            ],
            environment: environment
        )
        defer { agent.stop() }
        _ = try await agent.waitForLine(timeout: .seconds(60)) { $0 == "@@ ready" }
        let ran = try await Program.run(
            keyport,
            ["password", "example.com"],
            environment: environment,
            timeout: .seconds(60)
        )
        #expect(ran.status == 1)
        #expect(
            ran.standardError.contains(
                "you did not answer Example interactive's question in the agent within 2 seconds"
            ),
            "\(ran.standardError)"
        )
        _ = try await agent.waitForLine(timeout: .seconds(30)) { $0 == "@@ withdrawn" }
    }
}

@Suite("a provider's question when its client leaves", .serialized)
struct PromptClientLeavesTests {
    @Test("the command that asked gives up: the provider's question leaves the agent's screen at once")
    func clientLeaves() async throws {
        let sandbox = try AutoFillSandbox(timeout: 5)
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(order: ["interactive"], services: ["interactive": "example.com"])
        let agent = try await terminalAgent(
            [
                ["expect", "waiting for keyportd's questions"], ["say", "ready"],
                ["expect", "Type it (hidden; empty to decline): "], ["say", "asked"],
                ["expect", "the question was withdrawn"], ["say", "withdrawn"],
            ],
            environment: sandbox.environment
        )
        defer { agent.stop() }
        _ = try await agent.waitForLine(timeout: .seconds(60)) { $0 == "@@ ready" }
        let client = try Program(keyport, ["password", "example.com"], environment: sandbox.environment)
        _ = try await agent.waitForLine(timeout: .seconds(60)) { $0 == "@@ asked" }
        client.stop()
        // The person's time is 120 s: the question goes because the client went.
        _ = try await agent.waitForLine(timeout: .seconds(20)) { $0 == "@@ withdrawn" }
    }
}
