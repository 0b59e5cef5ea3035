import Foundation
import KeyportInterfaces
import KeyportSystem
import KeyportTestSupport
import Testing
import Varlink

/// keyportd, and the example provider registered four times (quiet, interactive, hang, crash), each
/// as a program of its own (a hard link) so that each can save its identities.
struct AutoFillSandbox {
    let directory: TemporaryDirectory
    let environment: [String: String]
    static let modes = ["quiet", "interactive", "hang", "crash"]

    init(timeout: Int = 3, idle: Int = 60) throws {
        directory = try TemporaryDirectory("kp-fill")
        var environment = sandboxEnvironment(in: directory.url)
        environment["KEYPORT_PROVIDER_TIMEOUT"] = "\(timeout)"
        environment["KEYPORT_PROVIDER_IDLE"] = "\(idle)"
        self.environment = environment
        let providers = try directory.subdirectory("data/keyport/providers")
        for mode in Self.modes {
            let program = program(mode)
            do {
                try FileManager.default.linkItem(atPath: builtProgram("ExampleProvider"), toPath: program)
            } catch {
                try FileManager.default.copyItem(atPath: builtProgram("ExampleProvider"), toPath: program)
            }
            let manifest: [String: Any] = [
                "id": "org.example.\(mode)", "name": "Example \(mode)", "exec": [program, mode],
                "capabilities": ["ProvidesPasswords": true, "ProvidesOneTimeCodes": true],
            ]
            try JSONSerialization.data(withJSONObject: manifest).write(
                to: providers.appendingPathComponent("\(mode).json")
            )
        }
    }

    func program(_ mode: String) -> String { directory.url.appendingPathComponent("provider-\(mode)").path }

    /// `keyport agent --auto`, answering a provider's request for a secret with `secret`, or
    /// declining everything without one.
    func startAgent(secret: String?) async throws -> Program {
        var arguments = ["agent", "--auto", secret == nil ? "decline" : "accept-first"]
        if let secret {
            let file = directory.url.appendingPathComponent("secret-\(UUID().uuidString)").path
            try (secret + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            arguments += ["--secret-file", file]
        }
        let agent = try Program(KeyportDaemonTests.keyport, arguments, environment: environment)
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        return agent
    }

    func keyport(_ arguments: [String]) async throws -> Program.Ran {
        try await Program.run(KeyportDaemonTests.keyport, arguments, environment: environment, timeout: .seconds(60))
    }

    /// Enables the providers in this order, then has each save its identities for `service`.
    func setUp(order: [String], services: [String: String]) async throws {
        #expect(try await keyport(["providers", "order"] + order.map { "org.example.\($0)" }).status == 0)
        for (mode, service) in services {
            let saved = try await Program.run(
                program(mode),
                ["save", service],
                environment: environment,
                timeout: .seconds(60)
            )
            #expect(saved.status == 0, "\(mode): \(saved.standardError)")
        }
    }

    /// `RequestCredential` through keyportd: the reply, or the error's name and message.
    func request(
        _ kind: IdentityStore.Kind,
        _ services: [String],
        interactive: Bool? = nil
    ) async throws -> Result<AutoFill.RequestOut, VarlinkError> {
        let input = AutoFill.RequestIn(
            type: kind,
            serviceIdentifiers: services.map {
                IdentityStore.ServiceIdentifier(identifier: $0, type: $0.contains("://") ? .URL : .domain)
            },
            interactive: interactive
        )
        do {
            let reply = try await DaemonClient.withConnection(environment: environment) { connection in
                try await connection.call(AutoFill.requestCredential, RawJSON(encoding: input))
            }
            return .success(try reply.decode(AutoFill.RequestOut.self))
        } catch let error as VarlinkError {
            return .failure(error)
        }
    }
}

/// The TOTP codes oathtool gives for the example's secret now and one period later (a request can
/// straddle the boundary).
private func oathtoolCodes() async throws -> Set<String> {
    let oathtool = try Peers.require("/usr/bin/oathtool", "oathtool")
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

@Suite("AutoFill through keyportd and providers", .serialized)
struct AutoFillTests {
    @Test("a one-time code and a password from the quiet provider: matched by site, the code equals oathtool's")
    func quiet() async throws {
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(order: ["quiet"], services: ["quiet": "example.com"])

        let before = try await oathtoolCodes()
        let code = try await sandbox.request(.oneTimeCode, ["https://login.example.com/mfa", "example.com"]).get()
        #expect(code.provider == "org.example.quiet")
        #expect(before.contains(code.credential.code ?? "none"), "\(code.credential.code ?? "none") not in \(before)")
        #expect(code.credential.password == nil)

        let password = try await sandbox.request(.password, ["https://example.com/login"]).get()
        #expect(password.credential.user == "alice")
        #expect(password.credential.password == "correct horse battery staple")

        // Nothing saved for another site, nor for another github.io page.
        #expect(await sandbox.requestResult(.password, ["https://example.org/"])?.name == AutoFill.Error.noCredential)
        // One provider process served both requests: started once, kept warm.
        let started = daemon.standardError.components(separatedBy: "provider started").count - 1
        #expect(started == 1, "\(daemon.standardError)")
    }

    @Test(
        "seed 003's dance: userInteractionRequired, then prepareInterfaceToProvideCredential, which unlocks through the agent"
    )
    func interactive() async throws {
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(order: ["interactive"], services: ["interactive": "example.com"])

        let refused = await sandbox.requestResult(.password, ["example.com"], interactive: false)
        #expect(refused?.name == AutoFill.Error.interactionRequired)
        let nobody = await sandbox.requestResult(.password, ["example.com"])
        #expect(nobody?.name == AutoFill.Error.canceled)
        #expect(nobody?.message?.contains("no agent is running") == true, "\(nobody?.message ?? "")")

        // The person types the passphrase into the agent; the provider unlocks and answers.
        let agent = try await sandbox.startAgent(secret: "open sesame")
        let answered = try await sandbox.request(.password, ["example.com"]).get()
        #expect(answered.credential.user == "alice" && answered.provider == "org.example.interactive")
        _ = try await agent.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains("Example interactive: gave a secret")
        }
        _ = try await daemon.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains("provider needs the person")
        }
        agent.stop()
        _ = await agent.waitForExit(timeout: .seconds(30))

        let wrong = try await sandbox.startAgent(secret: "open says me")
        let mistyped = await sandbox.requestResult(.password, ["example.com"])
        #expect(mistyped?.name == AutoFill.Error.canceled && mistyped?.message?.contains("wrong passphrase") == true)
        wrong.stop()
        _ = await wrong.waitForExit(timeout: .seconds(30))

        let declining = try await sandbox.startAgent(secret: nil)
        let declined = await sandbox.requestResult(.password, ["example.com"])
        #expect(declined?.name == AutoFill.Error.canceled, "\(declined?.message ?? "")")
        declining.stop()
    }

    @Test("a provider that hangs or crashes fails its request within the time limit; the others go on")
    func misbehaving() async throws {
        let sandbox = try AutoFillSandbox(timeout: 2)
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(
            order: ["hang", "crash", "quiet"],
            services: ["hang": "hang.example", "crash": "crash.example", "quiet": "example.com"]
        )
        let started = ContinuousClock.now
        let hung = await sandbox.requestResult(.oneTimeCode, ["hang.example"])
        #expect(hung?.name == AutoFill.Error.providerFailed)
        #expect(hung?.message?.contains("did not answer within 2 seconds") == true, "\(hung?.message ?? "")")
        #expect(ContinuousClock.now - started < .seconds(30))

        let crashed = await sandbox.requestResult(.password, ["crash.example"])
        #expect(crashed?.name == AutoFill.Error.providerFailed)
        #expect(crashed?.message?.contains("Example crash") == true, "\(crashed?.message ?? "")")

        // The quiet provider is not disturbed, and the hung one is asked again (and started again).
        #expect(try await sandbox.request(.password, ["example.com"]).get().credential.user == "alice")
        #expect(await sandbox.requestResult(.oneTimeCode, ["hang.example"])?.name == AutoFill.Error.providerFailed)
        // keyportd lives on.
        #expect(await daemon.waitForExit(timeout: .milliseconds(100)) == nil)
    }

    @Test("Settings decide: a disabled provider is not asked; of two for one site, the earlier in Settings answers")
    func settings() async throws {
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(
            order: ["interactive", "quiet"],
            services: ["interactive": "example.com", "quiet": "example.com"]
        )
        let agent = try await sandbox.startAgent(secret: "open sesame")
        defer { agent.stop() }
        #expect(try await sandbox.request(.password, ["example.com"]).get().provider == "org.example.interactive")
        #expect(
            try await sandbox.keyport(["providers", "order", "org.example.quiet", "org.example.interactive"]).status
                == 0
        )
        #expect(try await sandbox.request(.password, ["example.com"]).get().provider == "org.example.quiet")
        #expect(try await sandbox.keyport(["providers", "disable", "org.example.quiet"]).status == 0)
        #expect(try await sandbox.request(.password, ["example.com"]).get().provider == "org.example.interactive")
        #expect(try await sandbox.keyport(["providers", "disable", "org.example.interactive"]).status == 0)
        #expect(await sandbox.requestResult(.password, ["example.com"])?.name == AutoFill.Error.noCredential)
    }

    @Test("an unused provider is stopped after the idle time and started again when needed")
    func idle() async throws {
        let sandbox = try AutoFillSandbox(idle: 1)
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(order: ["quiet"], services: ["quiet": "example.com"])
        #expect(try await sandbox.request(.password, ["example.com"]).get().credential.user == "alice")
        let first = try await daemon.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains("provider started")
        }
        let pid = try #require(first.split(separator: "pid=").last.flatMap { pid_t($0.prefix { $0.isNumber }) })
        let process = try PinnedProcess(pid: pid)
        // Stopped once idle: its connection closed, it exits by itself.
        _ = try await daemon.waitForLine(timeout: .seconds(20), onStandardError: true) {
            $0.contains("provider stopped")
        }
        #expect(!process.isAlive)
        #expect(try await sandbox.request(.password, ["example.com"]).get().credential.user == "alice")
        #expect(daemon.standardError.components(separatedBy: "provider started").count - 1 == 2)
    }

    @Test("the provider answers PyPI's varlink client, started by it as keyportd starts it")
    func foreignClient() async throws {
        let python = try await Peers.python(importing: ["varlink"])
        let script = """
            import json, sys, varlink
            with varlink.Client.new_with_activate([sys.argv[1], "quiet"]) as client, client.open("org.keyport.CredentialProvider", namespaced=False) as provider:
                identity = {"kind": "password", "serviceIdentifier": {"identifier": "example.com", "type": "domain"}, "user": "alice", "recordIdentifier": "alice", "rank": 0}
                reply = provider.ProvideWithoutUserInteraction({"type": "password", "credentialIdentity": identity})
                print(json.dumps(reply["credential"], sort_keys=True))
                try:
                    provider.ProvideWithoutUserInteraction({"type": "password", "credentialIdentity": dict(identity, recordIdentifier="bob")})
                except varlink.VarlinkError as error:
                    print(error.error(), error.parameters()["code"])
            """
        let ran = try await Program.run(python, ["-c", script, builtProgram("ExampleProvider")], timeout: .seconds(60))
        #expect(ran.status == 0, "\(ran.standardError)")
        #expect(
            ran.standardOutput
                == #"{"password": "correct horse battery staple", "user": "alice"}"# + "\n"
                + "org.keyport.CredentialProvider.Canceled 101\n"
        )
        // Started by hand, it says what it is.
        let alone = try await Program.run(builtProgram("ExampleProvider"), [], timeout: .seconds(30))
        #expect(alone.status == 2 && alone.standardError.contains("keyportd starts it"))
    }
}

@Suite("keyport otp and keyport password", .serialized)
struct AutoFillClientTests {
    @Test("the code alone, the password alone or as JSON; --copy through the clipboard tool; clear failures")
    func clients() async throws {
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        // Not running yet: exit 2, saying how to start it.
        let down = try await sandbox.keyport(["otp", "example.com"])
        #expect(down.status == 2 && down.standardError.contains("keyportd is not running"), "\(down.standardError)")

        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(order: ["quiet"], services: ["quiet": "example.com"])

        let before = try await oathtoolCodes()
        let code = try await sandbox.keyport(["otp", "https://www.example.com/mfa"])
        #expect(code.status == 0, "\(code.standardError)")
        #expect(before.contains(code.standardOutput.trimmingCharacters(in: .newlines)), "\(code.standardOutput)")
        #expect(code.standardOutput.utf8.count == 7)  // six digits and a newline, nothing else

        let password = try await sandbox.keyport(["password", "example.com"])
        #expect(password.standardOutput == "correct horse battery staple\n")
        let json = try await sandbox.keyport(["password", "https://example.com/login", "--json", "--user", "alice"])
        #expect(json.standardOutput == #"{"password":"correct horse battery staple","user":"alice"}"# + "\n")

        let nobody = try await sandbox.keyport(["password", "example.com", "--user", "bob"])
        #expect(nobody.status == 1 && nobody.standardError.contains("no enabled provider has a password"))
        let elsewhere = try await sandbox.keyport(["otp", "example.org"])
        #expect(elsewhere.status == 1 && elsewhere.standardError.contains("one-time code for example.org"))

        // --copy hands the code to xclip on its standard input (here a stand-in that keeps it).
        let bin = try sandbox.directory.subdirectory("bin")
        let clipboard = sandbox.directory.url.appendingPathComponent("clipboard").path
        let xclip = bin.appendingPathComponent("xclip").path
        try "#!/bin/sh\n[ \"$*\" = '-selection clipboard' ] && cat > '\(clipboard)'\n".write(
            toFile: xclip,
            atomically: true,
            encoding: .utf8
        )
        #expect(chmod(xclip, 0o755) == 0)
        var environment = sandbox.environment
        environment["DISPLAY"] = ":99"
        environment["WAYLAND_DISPLAY"] = nil
        environment["PATH"] = bin.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        let copied = try await Program.run(
            keyport,
            ["otp", "example.com", "--copy"],
            environment: environment,
            timeout: .seconds(60)
        )
        #expect(copied.status == 0, "\(copied.standardError)")
        #expect(
            try String(contentsOfFile: clipboard, encoding: .utf8)
                == copied.standardOutput.trimmingCharacters(in: .newlines)
        )
    }
}

@Suite("picking from a provider's list", .serialized)
struct AutoFillListTests {
    @Test("--list: one provider's list at once; with several, the agent asks which provider first")
    func list() async throws {
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        #expect(try await sandbox.keyport(["providers", "enable", "org.example.quiet"]).status == 0)
        // No identity is needed: the person picks from the provider's own list.
        let before = try await oathtoolCodes()
        let one = try await sandbox.keyport(["otp", "example.org", "--list"])
        #expect(one.status == 0, "\(one.standardError)")
        #expect(before.contains(one.standardOutput.trimmingCharacters(in: .newlines)))

        #expect(try await sandbox.keyport(["providers", "enable", "org.example.interactive"]).status == 0)
        let unasked = try await sandbox.keyport(["password", "example.org", "--list"])
        #expect(unasked.status == 1 && unasked.standardError.contains("no agent is running to ask you which"))

        let agent = try Program(
            KeyportDaemonTests.keyport,
            ["agent", "--auto", "accept:org.example.interactive"],
            environment: sandbox.environment
        )
        defer { agent.stop() }
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        let picked = try await sandbox.keyport(["password", "example.org", "--list", "--json"])
        #expect(picked.standardOutput == #"{"password":"correct horse battery staple","user":"alice"}"# + "\n")
        _ = try await agent.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains("Keyport: chose org.example.interactive")
        }
        #expect(try await sandbox.keyport(["password", "example.org", "--list", "--user", "x"]).status == 2)
    }
}

@Suite("keyport git-credential with a real git", .serialized)
struct GitCredentialTests {
    @Test("git clones over HTTP with basic auth, the credentials coming from a provider through the helper")
    func clone() async throws {
        let git = try Peers.require("/usr/bin/git", "git")
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }

        // A repository with one commit, served as a bare copy over git's dumb HTTP protocol.
        var environment = sandbox.environment
        environment["HOME"] = sandbox.directory.url.path
        environment["GIT_CONFIG_NOSYSTEM"] = "1"
        environment["GIT_TERMINAL_PROMPT"] = "0"
        environment["GIT_AUTHOR_NAME"] = "Keyport"
        environment["GIT_AUTHOR_EMAIL"] = "keyport@example.invalid"
        environment["GIT_COMMITTER_NAME"] = "Keyport"
        environment["GIT_COMMITTER_EMAIL"] = "keyport@example.invalid"
        let root = sandbox.directory.url.path
        func run(_ arguments: [String], in directory: String = root) async throws -> Program.Ran {
            try await Program.run(git, ["-C", directory] + arguments, environment: environment, timeout: .seconds(60))
        }
        #expect(try await run(["init", "-q", "source"]).status == 0)
        try "hello\n".write(toFile: root + "/source/README", atomically: true, encoding: .utf8)
        #expect(try await run(["add", "README"], in: root + "/source").status == 0)
        #expect(try await run(["commit", "-q", "-m", "first"], in: root + "/source").status == 0)
        #expect(try await run(["clone", "-q", "--bare", "source", "served/repo.git"]).status == 0)
        #expect(try await run(["update-server-info"], in: root + "/served/repo.git").status == 0)

        let python = try Peers.require("/usr/bin/python3", "the system's python3")
        let server = try Program(
            python,
            [
                Peers.file("Tests/KeyportDaemonTests/Peers/git_server.py"), root + "/served", "alice",
                "correct horse battery staple",
            ]
        )
        defer { server.stop() }
        let ready = try await server.waitForLine(timeout: .seconds(30)) { $0.hasPrefix("READY ") }
        let port = try #require(Int(ready.dropFirst("READY ".count)))

        // Without the helper's answer git cannot get in.
        try await sandbox.setUp(order: ["quiet"], services: ["quiet": "127.0.0.1:\(port)"])
        let url = "http://127.0.0.1:\(port)/repo.git"
        let refused = try await run(["clone", "-q", url, "without"])
        #expect(refused.status != 0)

        let cloned = try await run(["-c", "credential.helper=!\(keyport) git-credential", "clone", "-q", url, "with"])
        #expect(cloned.status == 0, "\(cloned.standardError)")
        #expect(try String(contentsOfFile: root + "/with/README", encoding: .utf8) == "hello\n")

        // The helper by itself: git's protocol in, username and password out; store and erase
        // change nothing and say so.
        let input = Data("protocol=http\nhost=127.0.0.1:\(port)\npath=repo.git\ncapability[]=authtype\n\n".utf8)
        let get = try await Program.run(
            keyport,
            ["git-credential", "get"],
            environment: environment,
            input: input,
            timeout: .seconds(60)
        )
        #expect(get.standardOutput == "username=alice\npassword=correct horse battery staple\n")
        let store = try await Program.run(
            keyport,
            ["git-credential", "erase"],
            environment: environment,
            input: Data("protocol=http\nhost=127.0.0.1:\(port)\nusername=alice\npassword=x\n\n".utf8),
            timeout: .seconds(60)
        )
        #expect(store.status == 0 && store.standardError.contains("nothing was changed"))
        // Nothing for another host: no answer, so git asks elsewhere.
        let none = try await Program.run(
            keyport,
            ["git-credential", "get"],
            environment: environment,
            input: Data("protocol=https\nhost=example.org\n\n".utf8),
            timeout: .seconds(60)
        )
        #expect(none.status == 0 && none.standardOutput.isEmpty && none.standardError.contains("no enabled provider"))
    }
}

extension AutoFillSandbox {
    /// The error of a request that must fail, or `nil` when it succeeded.
    func requestResult(
        _ kind: IdentityStore.Kind,
        _ services: [String],
        interactive: Bool? = nil
    ) async -> VarlinkError? {
        guard case .failure(let error)? = try? await request(kind, services, interactive: interactive) else {
            return nil
        }
        return error
    }
}
