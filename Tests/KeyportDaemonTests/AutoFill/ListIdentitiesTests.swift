import Foundation
import KeyportAutoFillTestSupport
import KeyportInterfaces
import KeyportTestSupport
import Testing
import Varlink

@Suite("what fits a site, listed; the identity the person chose, asked for", .serialized)
struct ListIdentitiesTests {
    @Test(
        "ListIdentities names the fitting identities in RequestCredential's order, wakes no provider and carries no secret"
    )
    func listed() async throws {
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(
            order: ["quiet", "interactive", "hang"],
            services: ["quiet": "example.com", "interactive": "https://example.com/", "hang": "https://a.example.org/"]
        )

        let exact = try await sandbox.list(.password, ["https://example.com/login", "example.com"])
        #expect(exact.truncated == false)
        #expect(exact.identities.map(\.identity.provider) == ["org.example.quiet", "org.example.interactive"])
        #expect(exact.identities.map(\.providerName) == ["Example quiet", "Example interactive"])
        #expect(exact.identities.allSatisfy { $0.fit == .exact && $0.origin == "https://example.com" })
        #expect(exact.identities.allSatisfy { $0.service == 0 && $0.identity.user == "alice" })
        // The site as its provider saved it: how RequestCredential's `identity` names it.
        #expect(exact.identities.map(\.identity.site) == ["example.com", "https://example.com/"])

        // Only wider fits: listed with how they fit; an https identity is not listed for http.
        let wider = try await sandbox.list(.oneTimeCode, ["https://login.a.example.org/", "http://a.example.org/"])
        #expect(wider.identities.count == 1)
        #expect(wider.identities.first?.fit == .sameSite && wider.identities.first?.origin == "https://a.example.org")
        #expect(wider.identities.first?.identity.provider == "org.example.hang")
        #expect(try await sandbox.list(.password, ["http://a.example.org/"]).identities.isEmpty)
        #expect(try await sandbox.list(.password, ["https://example.net/"]).identities.isEmpty)
        // A service that names nothing is refused, saying which.
        do {
            _ = try await sandbox.list(.password, ["https://example.com/", "https://exa mple.com/"])
            Issue.record("a service naming no host was listed")
        } catch let error as VarlinkError {
            #expect(error.name == "org.varlink.service.InvalidParameter", "\(error)")
            #expect(error.sentence.contains("serviceIdentifiers[1]"), "\(error.sentence)")
        }

        // Listing started no provider (the hanging one would have held the answer back).
        #expect(!daemon.standardError.contains("provider started"), "\(daemon.standardError)")

        // PyPI's varlink client reads the same reply, and it holds no secret.
        let python = try await Peers.python(importing: ["varlink"])
        let script = """
            import json, sys, varlink
            with varlink.Client(address="unix:" + sys.argv[1]) as client, client.open("org.keyport.AutoFill", namespaced=False) as autofill:
                print(json.dumps(autofill.ListIdentities("password", [{"identifier": "https://example.com/", "type": "URL"}])))
            """
        let ran = try await Program.run(
            python,
            ["-c", script, try #require(sandbox.environment["KEYPORT_SOCKET"])],
            timeout: .seconds(60)
        )
        #expect(ran.status == 0, "\(ran.standardError)")
        #expect(ran.standardOutput.contains("\"providerName\": \"Example quiet\""), "\(ran.standardOutput)")
        #expect(!ran.standardOutput.contains("correct horse") && !ran.standardOutput.contains("password\":"))
    }

    @Test("the identity named is the one asked: exact, it is given; wider, only once the person confirmed it")
    func named() async throws {
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment, allowingScriptedAgent: true)
        defer { daemon.stop() }
        try await sandbox.setUp(order: ["quiet", "interactive"], services: ["interactive": "https://example.com/"])
        let saved = try await Program.run(
            sandbox.program,
            ["quiet", "save", "https://a.example.org/", "https://example.com/"],
            environment: sandbox.environment,
            timeout: .seconds(60)
        )
        #expect(saved.status == 0, "\(saved.standardError)")
        let listed = try await sandbox.list(.password, ["https://example.com/"]).identities.map(\.identity)
        try #require(listed.count == 2)

        // The second one listed, though RequestCredential alone would give the first.
        let second = await sandbox.requestResult(
            .password,
            ["https://example.com/"],
            interactive: false,
            identity: listed[1]
        )
        #expect(second?.name == AutoFill.InteractionRequired.name, "\(second?.message ?? "given")")
        #expect(second?.message?.contains("Example interactive") == true, "\(second?.message ?? "")")
        let first = try await sandbox.request(.password, ["https://example.com/"], identity: listed[0]).get()
        #expect(first.provider == "org.example.quiet" && first.credential.user == "alice")

        // An identity that does not fit, or that no enabled provider has, gives nothing.
        var forged = listed[0]
        forged.user = "mallory"
        let unknown = await sandbox.requestResult(.password, ["https://example.com/"], identity: forged)
        #expect(unknown?.name == AutoFill.NoCredential.name, "\(unknown?.message ?? "given")")
        #expect(unknown?.message?.contains("as the identity asked for (mallory") == true, "\(unknown?.message ?? "")")
        var elsewhere = listed[0]
        elsewhere.provider = "org.example.crash"
        #expect(
            await sandbox.requestResult(.password, ["https://example.com/"], identity: elsewhere)?.name
                == AutoFill.NoCredential.name
        )

        // A wider fit named by a client: never given without the person.
        let widerFit = try #require(try await sandbox.list(.password, ["https://evil.example.org/"]).identities.first)
        #expect(widerFit.fit == .sameSite)
        let quietly = await sandbox.requestResult(
            .password,
            ["https://evil.example.org/"],
            interactive: false,
            identity: widerFit.identity
        )
        #expect(quietly?.name == AutoFill.NoCredential.name, "\(quietly?.message ?? "given")")
        #expect(quietly?.message?.contains("only given when you choose it in the agent") == true)

        // The person says no, then yes, to the question naming the site, the account and the provider.
        let declining = try await sandbox.startAgent(secret: nil)
        let declined = await sandbox.requestResult(
            .password,
            ["https://evil.example.org/"],
            identity: widerFit.identity
        )
        #expect(declined?.name == AutoFill.Canceled.name, "\(declined?.message ?? "given")")
        #expect(declined?.message?.contains("you did not confirm") == true, "\(declined?.message ?? "")")
        declining.stop()
        _ = await declining.waitForExit(timeout: .seconds(30))
        let agent = try await sandbox.startAgent(secret: "unused")
        defer { agent.stop() }
        let given = try await sandbox.request(.password, ["https://evil.example.org/"], identity: widerFit.identity)
            .get()
        #expect(given.site == "https://a.example.org" && given.credential.password == "correct horse battery staple")
        _ = try await agent.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains("Keyport: you said yes to: No password is saved for https://evil.example.org.")
                && $0.contains("https://a.example.org — alice (Example quiet)")
        }
    }
}
