import Foundation
import KeyportTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite("AutoFill from Keyport Vault", .serialized)
struct VaultAutoFillTests {
    @Test("the vault's provider answers keyport otp and keyport password, unlocked or (through the agent) locked")
    func autoFill() async throws {
        let directory = try TemporaryDirectory("kp-vault-fill")
        defer { directory.remove() }
        var environment = sandboxEnvironment(in: directory.url)
        environment["KEYPORT_VAULT_SOCKET"] = directory.url.appendingPathComponent("vault.sock").path
        environment["KEYPORT_PROVIDER_TIMEOUT"] = "10"
        let manifest: [String: Any] = [
            "id": "org.keyport.vault", "name": "Keyport Vault", "exec": [builtProgram("keyport-vault"), "provider"],
            "capabilities": ["ProvidesPasswords": true, "ProvidesOneTimeCodes": true],
        ]
        try JSONSerialization.data(withJSONObject: manifest).write(
            to: try directory.subdirectory("data/keyport/providers").appendingPathComponent("vault.json")
        )
        func run(_ arguments: [String], _ input: String? = nil) async throws -> Program.Ran {
            try await Program.run(
                keyport,
                arguments,
                environment: environment,
                input: input.map { Data($0.utf8) },
                timeout: .seconds(120)
            )
        }
        let daemon = try await startKeyportd(environment)
        defer { daemon.stop() }
        #expect(try await run(["providers", "enable", "org.keyport.vault"]).status == 0)
        // The agent, started here (not by `unlock`) so the test can read what it says.
        let agent = try Program(builtProgram("keyport-vault"), ["agent"], environment: environment)
        defer { agent.stop() }
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }

        #expect(try await run(["vault", "init", "--passphrase-stdin"], "open sesame\n").status == 0)
        #expect(try await run(["vault", "unlock", "--passphrase-stdin"], "open sesame\n").status == 0)
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) {
            $0.contains("identities updated (0)")
        }
        let added = try await run(
            [
                "vault", "add", "--passphrase-stdin", "--title", "GitHub", "--url", "https://github.com/", "--user",
                "alice", "--otp",
            ],
            "hunter2\nJBSWY3DPEHPK3PXP\n"
        )
        #expect(added.status == 0, "\(added.standardError)")
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) {
            $0.contains("identities updated (2)")
        }

        let oathtool = try Peers.require("/usr/bin/oathtool", "oathtool")
        func codes() async throws -> Set<String> {
            let now = Int(Date().timeIntervalSince1970)
            var codes: Set<String> = []
            for time in [now, now + 30] {
                let ran = try await Program.run(
                    oathtool,
                    ["--totp", "--base32", "--now", "@\(time)", "JBSWY3DPEHPK3PXP"],
                    timeout: .seconds(30)
                )
                codes.insert(ran.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            return codes
        }
        var expected = try await codes()
        let code = try await run(["otp", "github.com"])
        #expect(
            code.status == 0 && expected.contains(code.standardOutput.trimmingCharacters(in: .newlines)),
            "\(code.standardError)"
        )
        let password = try await run(["password", "https://github.com/login", "--json"])
        #expect(
            password.standardOutput == #"{"password":"hunter2","user":"alice"}"# + "\n",
            "\(password.standardError)"
        )

        // Locked: the provider asks for the passphrase through keyportd's agent, then answers.
        #expect(try await run(["vault", "lock"]).status == 0)
        let refused = try await run(["otp", "github.com"])
        #expect(refused.status == 1, "no agent to ask: \(refused.standardOutput)")
        let secret = directory.url.appendingPathComponent("secret").path
        try "open sesame\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let asking = try Program(
            keyport,
            ["agent", "--auto", "accept-first", "--secret-file", secret],
            environment: environment
        )
        defer { asking.stop() }
        _ = try await asking.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        expected = try await codes()
        let unlocked = try await run(["otp", "github.com"])
        #expect(
            unlocked.status == 0 && expected.contains(unlocked.standardOutput.trimmingCharacters(in: .newlines)),
            "\(unlocked.standardError)"
        )
        #expect(try await run(["vault", "status"]).standardOutput.hasPrefix("unlocked"))
    }
}
