import Foundation
import KeyportAutoFillTestSupport
import KeyportInterfaces
import KeyportSystem
import KeyportTestSupport
import Testing
import Varlink

@Suite("AutoFill through keyportd and providers", .serialized)
struct AutoFillTests {
    @Test("a one-time code and a password from the quiet provider: matched by site, the code equals oathtool's")
    func quiet() async throws {
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(order: ["quiet"], services: ["quiet": "example.com"])

        let before = try await Peers.oathtoolCodes()
        let code = try await sandbox.request(.oneTimeCode, ["https://login.example.com/mfa", "example.com"]).get()
        #expect(code.provider == "org.example.quiet")
        #expect(before.contains(code.credential.code ?? "none"), "\(code.credential.code ?? "none") not in \(before)")
        #expect(code.credential.password == nil)

        let password = try await sandbox.request(.password, ["https://example.com/login"]).get()
        #expect(password.credential.user == "alice")
        #expect(password.credential.password == "correct horse battery staple")

        // Nothing saved for another site, nor for another github.io page.
        #expect(await sandbox.requestResult(.password, ["https://example.org/"])?.name == AutoFill.NoCredential.name)
        // One provider process served both requests: started once, kept warm.
        let started = daemon.standardError.components(separatedBy: "provider started").count - 1
        #expect(started == 1, "\(daemon.standardError)")
    }

    @Test(
        "given only to the same scheme, host and port; a subdomain, another port or a site of the domain is only offered; never https to http; hosts read as browsers read them"
    )
    func matching() async throws {
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(order: ["quiet"], services: [:])
        let saved = try await Program.run(
            sandbox.program,
            [
                "quiet", "save", "example.com", "alice.github.io", "bücher.example", "http://127.0.0.1:8080/", "[::1]",
                "localhost:3000", "www.city.kawasaki.jp",
            ],
            environment: sandbox.environment,
            timeout: .seconds(60)
        )
        #expect(saved.status == 0, "\(saved.standardError)")
        enum Outcome { case given, offered, none }
        let cases: [(request: String, outcome: Outcome)] = [
            ("https://example.com/login?x#y", .given),  // path, query and fragment do not count
            ("example.com", .given),  // a domain means https on 443
            ("https://example.com:443/", .given),
            ("https://login.example.com/", .offered),  // a subdomain: offered, never given
            ("https://example.com:8443/", .offered),  // another port of the host
            ("http://example.com/", .none),  // https's password never goes to http
            ("ftp://example.com/", .none),
            ("https://example.com.evil.test/", .none),
            ("https://evil.test\\@example.com/", .none),  // browsers go to evil.test
            ("https://alice.github.io/project", .given),
            ("https://bob.github.io/", .none),  // github.io is a (private) public suffix
            ("https://xn--bcher-kva.example/", .given),  // the IDN, in Punycode
            ("https://BÜCHER.example/", .given),  // the IDN, in capitals
            ("https://bucher.example/", .none),
            ("http://127.0.0.1:8080/login", .given),
            ("http://2130706433:8080/", .given),  // the same address, as browsers read it
            ("http://127.0.0.1:9090/", .offered),  // the same host, another port
            ("https://127.0.0.1:8080/", .offered),  // http's saved password, offered to https
            ("http://127.0.0.2:8080/", .none),  // an IP address fits only itself
            ("https://[0:0:0:0:0:0:0:1]/", .given),
            ("https://[::1]:5000/", .offered),
            ("localhost:3000", .given),
            ("localhost:3001", .offered),
            ("https://other.localhost:3000/", .none),
            ("https://www.city.kawasaki.jp/", .given),
            ("https://shop.city.kawasaki.jp/", .offered),  // !city.kawasaki.jp: registrable itself
            ("https://foo.other.kawasaki.jp/", .none),  // *.kawasaki.jp: other.kawasaki.jp is a suffix
        ]
        for (request, outcome) in cases {
            let result = await sandbox.requestResult(.password, [request])
            switch outcome {
            case .given:
                #expect(result == nil, "\(request): \(result?.message ?? "")")
            case .offered:
                // No agent to ask: the client is told the nearest fit, and nothing is given.
                #expect(result?.name == AutoFill.NoCredential.name, "\(request): \(result?.message ?? "given")")
                #expect(result?.message?.contains("the nearest fit") == true, "\(request): \(result?.message ?? "")")
            case .none:
                #expect(result?.name == AutoFill.NoCredential.name, "\(request): \(result?.message ?? "given")")
                #expect(result?.message?.contains("nearest") == false, "\(request): \(result?.message ?? "")")
                if request == "http://example.com/" {
                    #expect(
                        result?.message?.contains(
                            "one is saved for https://example.com, and what is saved for a secure scheme is never given to one that is not"
                        ) == true,
                        "\(result?.message ?? "")"
                    )
                }
            }
        }
        // Those saved as a bare domain are counted where people look after upgrading (a password and
        // a code for each service).
        let listed = try await sandbox.keyport(["providers", "list"])
        #expect(
            listed.standardOutput.contains(
                "14 identities; 12 saved as a domain, given without asking only to https://DOMAIN itself"
            ),
            "\(listed.standardOutput)"
        )
        // The site that answered is in the reply.
        let answered = try await sandbox.request(.password, ["http://2130706433:8080/x"]).get()
        #expect(answered.site == "http://127.0.0.1:8080")
        // The command line takes the same: an IDN in Unicode, an IP URL with its port.
        for site in ["bücher.example", "http://127.0.0.1:8080/"] {
            let code = try await sandbox.keyport(["otp", site])
            #expect(code.status == 0 && code.standardOutput.utf8.count == 7, "\(site): \(code.standardError)")
        }
        // What names no service is refused before keyportd is asked, saying what is wrong.
        for front in [KeyportTestSupport.keyport, builtProgram("keyport-cli")] {
            let bad = try await Program.run(
                front,
                ["password", "https://exa mple.com/"],
                environment: sandbox.environment,
                timeout: .seconds(60)
            )
            #expect(bad.status == 2, "\(bad.standardError)")
            #expect(
                bad.standardError.contains(
                    "'https://exa mple.com/' is not a site Keyport can read: the host 'exa mple.com' cannot be read"
                ),
                "\(bad.standardError)"
            )
        }
    }

    @Test(
        "a wider fit goes only to the person's choice in the agent, which names each fit's site, account and provider"
    )
    func widerFits() async throws {
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment, allowingScriptedAgent: true)
        defer { daemon.stop() }
        try await sandbox.setUp(order: ["quiet"], services: ["quiet": "https://a.example.org/"])

        // Not to involve the person: the nearest fit is named, nothing given.
        let quietly = await sandbox.requestResult(.password, ["https://evil.example.org/"], interactive: false)
        #expect(quietly?.name == AutoFill.NoCredential.name)
        #expect(
            quietly?.message?.contains("the nearest fit is saved for https://a.example.org in Example quiet") == true,
            "\(quietly?.message ?? "")"
        )
        #expect(quietly?.message?.contains("the request was not to involve you") == true)

        // A client nobody here wrote (PyPI's varlink), as another process of the person's would
        // try it: lookalike URLs, a wider fit asked for 20 times at once, and an answer it forges
        // for a question it cannot see. None gives the password or names the account.
        let python = try await Peers.python(importing: ["varlink"])
        let attacker = """
            import concurrent.futures, json, sys, varlink
            def ask(site, **extra):
                with varlink.Client(address="unix:" + sys.argv[1]) as client, client.open("org.keyport.AutoFill", namespaced=False) as autofill:
                    try:
                        reply = autofill.RequestCredential("password", [{"identifier": site, "type": "URL"}], None, *([extra["interactive"]] if "interactive" in extra else []))
                        return "GIVEN " + json.dumps(reply)
                    except varlink.VarlinkError as error:
                        return error.error() + " " + json.dumps(error.parameters())
            sites = ["https://evil.example.org/", "https://evil.com\\@a.example.org/", "https://evil.com#@a.example.org",
                     "http://a.example.org/", "https://a.example.org:8443/", "https://a.example.org./x"]
            with concurrent.futures.ThreadPoolExecutor(20) as pool:
                results = list(pool.map(ask, sites + ["https://evil.example.org/"] * 20))
            with varlink.Client(address="unix:" + sys.argv[1]) as client, client.open("org.keyport.Agent", namespaced=False) as agent:
                try:
                    agent.Answer("guess", "1", None)
                    results.append("ANSWER TAKEN")
                except varlink.VarlinkError as error:
                    results.append(error.error())
            print(json.dumps(results))
            """
        let attacked = try await Program.run(
            python,
            ["-c", attacker, sandbox.environment["KEYPORT_SOCKET"]!],
            timeout: .seconds(120)
        )
        #expect(attacked.status == 0, "\(attacked.standardError)")
        let results = try #require(
            try JSONSerialization.jsonObject(with: Data(attacked.standardOutput.utf8)) as? [String]
        )
        #expect(results.count == 27, "\(results)")
        // The trailing dot is the same host: the only exact fit, given as to any client.
        #expect(results[5].hasPrefix("GIVEN"), "\(results[5])")
        for (index, result) in results.enumerated() where index != 5 {
            #expect(!result.hasPrefix("GIVEN") && !result.contains("alice"), "\(index): \(result)")
        }
        #expect(results.last == "org.keyport.Agent.NotTheAgent", "\(results.last ?? "")")

        // The person declines: nothing is given.
        let declining = try await sandbox.startAgent(secret: nil)
        let declined = await sandbox.requestResult(.password, ["https://evil.example.org/"])
        #expect(declined?.name == AutoFill.Canceled.name, "\(declined?.message ?? "")")
        _ = try await declining.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains("Keyport: declined")
        }
        declining.stop()
        _ = await declining.waitForExit(timeout: .seconds(30))

        // The person chooses it: the password is given, and the reply says where it was saved.
        let agent = try Program(
            KeyportTestSupport.keyport,
            ["agent", "--auto", "accept:1"],
            environment: sandbox.environment
        )
        defer { agent.stop() }
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        let chosen = try await sandbox.request(.password, ["https://evil.example.org/"]).get()
        #expect(chosen.credential.password == "correct horse battery staple")
        #expect(chosen.site == "https://a.example.org")
        // What the person was offered named the fit's site, account and provider.
        _ = try await agent.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains("Keyport: chose 1: https://a.example.org — alice (Example quiet)")
        }
        // The command line tells which account answered, and where it was saved.
        let told = try await sandbox.keyport(["password", "https://evil.example.org/"])
        #expect(told.status == 0, "\(told.standardError)")
        #expect(
            told.standardError.contains(
                "the password of alice saved for https://a.example.org (org.example.quiet)"
            ),
            "\(told.standardError)"
        )
        #expect(told.standardError.contains("Keyport is asking you through the agent which saved password"))
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
        #expect(refused?.name == AutoFill.InteractionRequired.name)
        let nobody = await sandbox.requestResult(.password, ["example.com"])
        #expect(nobody?.name == AutoFill.Canceled.name)
        #expect(nobody?.message?.contains("no agent is running") == true, "\(nobody?.message ?? "")")

        // The person types the passphrase into the agent; the provider unlocks and answers.
        let agent = try await sandbox.startAgent(secret: "open sesame")
        let answered = try await sandbox.request(.password, ["example.com"]).get()
        #expect(answered.credential.user == "alice" && answered.provider == "org.example.interactive")
        _ = try await agent.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains("Example interactive: gave the secret it asked for")
        }
        _ = try await daemon.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains("provider needs the person")
        }
        agent.stop()
        _ = await agent.waitForExit(timeout: .seconds(30))

        let wrong = try await sandbox.startAgent(secret: "open says me")
        let mistyped = await sandbox.requestResult(.password, ["example.com"])
        #expect(mistyped?.name == AutoFill.Canceled.name && mistyped?.message?.contains("wrong passphrase") == true)
        wrong.stop()
        _ = await wrong.waitForExit(timeout: .seconds(30))

        let declining = try await sandbox.startAgent(secret: nil)
        let declined = await sandbox.requestResult(.password, ["example.com"])
        #expect(declined?.name == AutoFill.Canceled.name, "\(declined?.message ?? "")")
        // The person said no: they are told so, not that the provider declined.
        #expect(
            declined?.message == "you declined what Example interactive asked in the agent",
            "\(declined?.message ?? "")"
        )
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
        #expect(hung?.name == AutoFill.ProviderFailed.name)
        #expect(hung?.message?.contains("did not answer within 2 seconds") == true, "\(hung?.message ?? "")")
        #expect(ContinuousClock.now - started < .seconds(30))

        let crashed = await sandbox.requestResult(.password, ["crash.example"])
        #expect(crashed?.name == AutoFill.ProviderFailed.name)
        #expect(crashed?.message?.contains("Example crash") == true, "\(crashed?.message ?? "")")

        // The quiet provider is not disturbed, and the hung one is asked again (and started again).
        #expect(try await sandbox.request(.password, ["example.com"]).get().credential.user == "alice")
        #expect(await sandbox.requestResult(.oneTimeCode, ["hang.example"])?.name == AutoFill.ProviderFailed.name)
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
        #expect(await sandbox.requestResult(.password, ["example.com"])?.name == AutoFill.NoCredential.name)
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
        // Under load the test may read the line after the idle second is over and the provider
        // gone: then there is nothing left to pin, which is what the test waits for anyway.
        let process = try? PinnedProcess(pid: pid)
        // Stopped once idle: its connection closed, it exits by itself.
        _ = try await daemon.waitForLine(timeout: .seconds(20), onStandardError: true) {
            $0.contains("provider stopped")
        }
        if let process { #expect(!process.isAlive) }
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
    @Test("the code alone, the password alone or as JSON; --copy without a display server; clear failures")
    func clients() async throws {
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        // Not running yet: exit 2, saying how to start it.
        let down = try await sandbox.keyport(["otp", "example.com"])
        #expect(down.status == 2 && down.standardError.contains("keyportd is not running"), "\(down.standardError)")

        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(order: ["quiet"], services: ["quiet": "example.com"])

        let before = try await Peers.oathtoolCodes()
        let code = try await sandbox.keyport(["otp", "https://example.com/mfa"])
        #expect(code.status == 0, "\(code.standardError)")
        #expect(before.contains(code.standardOutput.trimmingCharacters(in: .newlines)), "\(code.standardOutput)")
        #expect(code.standardOutput.utf8.count == 7)  // six digits and a newline, nothing else

        let password = try await sandbox.keyport(["password", "example.com"])
        #expect(password.standardOutput == "correct horse battery staple\n")
        #expect(
            password.standardError
                == "keyport: the password of alice saved for https://example.com (org.example.quiet)\n"
        )
        let json = try await sandbox.keyport(["password", "https://example.com/login", "--json", "--user", "alice"])
        #expect(
            json.standardOutput
                == #"{"password":"correct horse battery staple","provider":"org.example.quiet","site":"https://example.com","user":"alice"}"#
                + "\n"
        )

        let nobody = try await sandbox.keyport(["password", "example.com", "--user", "bob"])
        #expect(nobody.status == 1 && nobody.standardError.contains("no enabled provider has a password"))
        let elsewhere = try await sandbox.keyport(["otp", "example.org"])
        #expect(
            elsewhere.status == 1 && elsewhere.standardError.contains("one-time code for https://example.org"),
            "\(elsewhere.standardError)"
        )

        // --copy where no display server answers: said plainly, after the code was printed. (The
        // clipboard itself is served to Xvfb and a headless sway in DesktopTypingTests.)
        var environment = sandbox.environment
        environment["DISPLAY"] = ":99"
        environment["WAYLAND_DISPLAY"] = nil
        let copied = try await Program.run(
            keyport,
            ["otp", "example.com", "--copy"],
            environment: environment,
            timeout: .seconds(60)
        )
        #expect(
            copied.status == 2 && copied.standardError.contains("cannot reach the X server :99"),
            "\(copied.standardError)"
        )
        environment["DISPLAY"] = nil
        let nowhere = try await Program.run(
            keyport,
            ["otp", "example.com", "--copy"],
            environment: environment,
            timeout: .seconds(60)
        )
        #expect(nowhere.status == 2 && nowhere.standardError.contains("no clipboard"), "\(nowhere.standardError)")
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
        let before = try await Peers.oathtoolCodes()
        let one = try await sandbox.keyport(["otp", "example.org", "--list"])
        #expect(one.status == 0, "\(one.standardError)")
        #expect(before.contains(one.standardOutput.trimmingCharacters(in: .newlines)))

        #expect(try await sandbox.keyport(["providers", "enable", "org.example.interactive"]).status == 0)
        let unasked = try await sandbox.keyport(["password", "example.org", "--list"])
        #expect(unasked.status == 1 && unasked.standardError.contains("no agent is running to ask you which"))

        let agent = try Program(
            KeyportTestSupport.keyport,
            ["agent", "--auto", "accept:org.example.interactive"],
            environment: sandbox.environment
        )
        defer { agent.stop() }
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        let picked = try await sandbox.keyport(["password", "example.org", "--list", "--json"])
        #expect(
            picked.standardOutput
                == #"{"password":"correct horse battery staple","provider":"org.example.interactive","user":"alice"}"#
                + "\n"
        )
        _ = try await agent.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains("Keyport: chose org.example.interactive")
        }
        #expect(try await sandbox.keyport(["password", "example.org", "--list", "--user", "x"]).status == 2)
    }

    @Test("no provider's list for a web page sent in clear text: keyportd refuses it before any provider is asked")
    func noListForClearText() async throws {
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        #expect(try await sandbox.keyport(["providers", "enable", "org.example.quiet"]).status == 0)
        // https (a domain means https): the provider's list.
        for site in ["https://example.org/login", "example.org"] {
            let listed = try await sandbox.keyport(["password", site, "--list"])
            #expect(listed.status == 0, "\(site): \(listed.standardError)")
        }
        for site in ["http://example.org/login", "http://localhost:8080", "ws://example.org"] {
            let refused = try await sandbox.keyport(["password", site, "--list"])
            #expect(refused.status == 1, "\(site): \(refused.standardOutput)")
            #expect(refused.standardError.contains("which is not https"), "\(site): \(refused.standardError)")
        }
    }
}

/// A repository with one commit, served as a bare copy over git's dumb HTTP protocol to `user`
/// with `password` only, and git set up to run in the sandbox.
private struct GitPeer {
    let git: String
    let environment: [String: String]
    let root: String
    let server: Program
    let port: Int

    var url: String { "http://127.0.0.1:\(port)/repo.git" }
    var helper: [String] { ["-c", "credential.helper=!\(keyport) git-credential"] }

    init(_ sandbox: AutoFillSandbox, user: String, password: String) async throws {
        git = try Peers.require("/usr/bin/git", "git")
        var environment = sandbox.environment
        environment["HOME"] = sandbox.directory.url.path
        environment["GIT_CONFIG_NOSYSTEM"] = "1"
        environment["GIT_TERMINAL_PROMPT"] = "0"
        environment["GIT_AUTHOR_NAME"] = "Keyport"
        environment["GIT_AUTHOR_EMAIL"] = "keyport@example.invalid"
        environment["GIT_COMMITTER_NAME"] = "Keyport"
        environment["GIT_COMMITTER_EMAIL"] = "keyport@example.invalid"
        self.environment = environment
        root = sandbox.directory.url.path
        let git = git
        let root = root
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
        server = try Program(
            python,
            [Peers.file("Tests/KeyportDaemonTests/Peers/git_server.py"), root + "/served", user, password]
        )
        let ready = try await server.waitForLine(timeout: .seconds(30)) { $0.hasPrefix("READY ") }
        port = try #require(Int(ready.dropFirst("READY ".count)))
    }

    func run(_ arguments: [String], input: String? = nil) async throws -> Program.Ran {
        try await Program.run(
            git,
            ["-C", root] + arguments,
            environment: environment,
            input: input.map { Data($0.utf8) },
            timeout: .seconds(60)
        )
    }

    func helper(_ operation: String, _ input: String) async throws -> Program.Ran {
        try await Program.run(
            keyport,
            ["git-credential", operation],
            environment: environment,
            input: Data(input.utf8),
            timeout: .seconds(60)
        )
    }

    /// What `keyport password` answers for this server and `user`.
    func password(_ user: String) async throws -> Program.Ran {
        try await Program.run(
            keyport,
            ["password", "http://127.0.0.1:\(port)/", "--user", user],
            environment: environment,
            timeout: .seconds(60)
        )
    }
}

@Suite("keyport git-credential with a real git", .serialized)
struct GitCredentialTests {
    @Test(
        "git credential approve saves into Keyport Vault: a new login at once, the same password changes nothing, a changed one only when the person confirms, the old one kept"
    )
    func vaultSaves() async throws {
        let sandbox = try AutoFillSandbox(timeout: 10, privateRuntime: true)
        defer {
            Started.stop(running: "keyport-vault", withEnvironment: sandbox.runtime)
            sandbox.directory.remove()
        }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        let peer = try await GitPeer(sandbox, user: "bob", password: "s3cret bob")
        defer { peer.server.stop() }
        let host = "protocol=http\nhost=127.0.0.1:\(peer.port)\n"
        func run(_ arguments: [String], _ input: String? = nil) async throws -> Program.Ran {
            try await Program.run(
                keyport,
                arguments,
                environment: sandbox.environment,
                input: input.map { Data($0.utf8) },
                timeout: .seconds(120)
            )
        }
        func approve(_ user: String, _ password: String) async throws -> Program.Ran {
            try await peer.run(
                peer.helper + ["credential", "approve"],
                input: host + "username=\(user)\npassword=\(password)\n\n"
            )
        }
        func shown() async throws -> String {
            try await run(["vault", "show", "--reveal", "http://127.0.0.1:\(peer.port)"]).standardOutput
        }
        #expect(try await run(["vault", "init", "--passphrase-stdin"], "pass phrase\n").status == 0)
        #expect(try await run(["providers", "order", "org.keyport.vault"]).status == 0)
        #expect(try await run(["vault", "unlock", "--passphrase-stdin"], "pass phrase\n").status == 0)

        // Unlocked: a new login is saved without the person; git clones with it.
        let saved = try await approve("bob", "s3cret bob")
        #expect(saved.status == 0, "\(saved.standardError)")
        #expect(
            saved.standardError.contains(
                "saved the password of bob for http://127.0.0.1:\(peer.port) in org.keyport.vault"
            ),
            "\(saved.standardError)"
        )
        #expect(try await peer.password("bob").standardOutput == "s3cret bob\n")
        let cloned = try await peer.run(peer.helper + ["clone", "-q", peer.url, "with"])
        #expect(cloned.status == 0, "\(cloned.standardError)")
        let first = try await shown()
        #expect(first.contains("s3cret bob") && !first.contains("Password history"), "\(first)")

        // The same password again (git approves after every use): nothing changes, nobody is asked.
        #expect(try await approve("bob", "s3cret bob").standardError.isEmpty)
        #expect(try await shown() == first)

        // Another password for bob: only the person may change it. No agent: nothing is saved,
        // and git's helper says so once.
        let unasked = try await approve("bob", "new pass")
        #expect(unasked.standardError.contains("no agent"), "\(unasked.standardError)")
        #expect(
            unasked.standardError.components(separatedBy: "nothing was saved").count == 2,
            "\(unasked.standardError)"
        )
        #expect(try await peer.password("bob").standardOutput == "s3cret bob\n")

        // The person declines: unchanged.
        let declining = try await sandbox.startAgent(secret: nil)
        let declined = try await approve("bob", "new pass")
        #expect(declined.standardError.contains("you declined what Keyport Vault asked"), "\(declined.standardError)")
        #expect(try await peer.password("bob").standardOutput == "s3cret bob\n")
        declining.stop()
        _ = await declining.waitForExit(timeout: .seconds(30))

        // The person confirms, told the site and the user: changed, the old password in its history.
        let agent = try await sandbox.startAgent(secret: "pass phrase")
        defer { agent.stop() }
        let changed = try await approve("bob", "new pass")
        #expect(changed.status == 0 && changed.standardError.contains("saved the password"), "\(changed.standardError)")
        _ = try await agent.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains("Keyport Vault: you said yes")
        }
        #expect(try await peer.password("bob").standardOutput == "new pass\n")
        let after = try await shown()
        #expect(after.contains("Password history") && after.contains("s3cret bob"), "\(after)")

        // Locked: a new login waits for the passphrase in the agent, then is saved.
        #expect(try await run(["vault", "lock"]).status == 0)
        let locked = try await approve("carol", "c4rol")
        #expect(locked.status == 0 && locked.standardError.contains("saved the password"), "\(locked.standardError)")
        #expect(try await peer.password("carol").standardOutput == "c4rol\n")
    }

    @Test("git clones over HTTP with basic auth, the credentials coming from a provider through the helper")
    func clone() async throws {
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        let peer = try await GitPeer(sandbox, user: "alice", password: "correct horse battery staple")
        defer { peer.server.stop() }

        // Without the helper's answer git cannot get in. The password is saved for this http
        // server, and one for https on localhost (the same machine, another scheme).
        try await sandbox.setUp(order: ["quiet"], services: [:])
        let saved = try await Program.run(
            sandbox.program,
            ["quiet", "save", "http://127.0.0.1:\(peer.port)/", "https://localhost:\(peer.port)/"],
            environment: sandbox.environment,
            timeout: .seconds(60)
        )
        #expect(saved.status == 0, "\(saved.standardError)")
        let refused = try await peer.run(["clone", "-q", peer.url, "without"])
        #expect(refused.status != 0)

        let cloned = try await peer.run(peer.helper + ["clone", "-q", peer.url, "with"])
        #expect(cloned.status == 0, "\(cloned.standardError)")
        #expect(try String(contentsOfFile: peer.root + "/with/README", encoding: .utf8) == "hello\n")

        // The helper by itself: git's protocol in, username and password out (no capability is
        // declared, no expiry given); erase changes nothing and says so.
        let get = try await peer.helper(
            "get",
            "protocol=http\nhost=127.0.0.1:\(peer.port)\npath=repo.git\ncapability[]=authtype\ncapability[]=state\n\n"
        )
        #expect(get.standardOutput == "username=alice\npassword=correct horse battery staple\n")
        #expect(
            get.standardError.contains(
                "the password of alice saved for http://127.0.0.1:\(peer.port) (org.example.quiet)"
            ),
            "\(get.standardError)"
        )
        // What was saved for https is never sent to http (git would send it in clear Basic auth).
        let downgrade = try await peer.helper("get", "protocol=http\nhost=localhost:\(peer.port)\n\n")
        #expect(downgrade.status == 0 && downgrade.standardOutput.isEmpty, "\(downgrade.standardOutput)")
        #expect(
            downgrade.standardError.contains("no enabled provider has a password for http://localhost:\(peer.port)")
        )
        let erase = try await peer.helper(
            "erase",
            "protocol=http\nhost=127.0.0.1:\(peer.port)\nusername=alice\npassword=x\n\n"
        )
        #expect(erase.status == 0 && erase.standardError.contains("Nothing was changed"), "\(erase.standardError)")
        // Nothing for another host: no answer, so git asks elsewhere.
        let none = try await peer.helper("get", "protocol=https\nhost=example.org\n\n")
        #expect(none.status == 0 && none.standardOutput.isEmpty && none.standardError.contains("no enabled provider"))
    }

    @Test(
        "git credential approve saves through the helper to the provider that takes saving; git then clones with it; reject, expiring tokens and a locked provider lose and add nothing unasked"
    )
    func store() async throws {
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        let peer = try await GitPeer(sandbox, user: "bob", password: "s3cret bob")
        defer { peer.server.stop() }
        let host = "protocol=http\nhost=127.0.0.1:\(peer.port)\n"

        // keyportd's own checks, whoever the client.
        let invalid = [
            (
                #"{"serviceIdentifier":{"identifier":"not a host","type":"domain"},"user":"x","password":"y"}"#,
                "serviceIdentifier"
            ),
            (
                #"{"serviceIdentifier":{"identifier":"example.com","type":"domain"},"user":"x","password":""}"#,
                "password"
            ),
        ]
        for (parameters, parameter) in invalid {
            let error = await #expect(throws: VarlinkError.self) {
                try await DaemonClient.withConnection(environment: sandbox.environment) {
                    try await $0.call(AutoFill.SavePassword.name, RawJSON(bytes: Array(parameters.utf8)))
                }
            }
            #expect(error?.name == "org.varlink.service.InvalidParameter", "\(parameters)")
            #expect(error?.parameters.description.contains(#""parameter":"\#(parameter)""#) == true, "\(parameters)")
            #expect(error?.message?.isEmpty == false)
        }

        // No enabled provider takes passwords to save (crash does not declare SavesPasswords).
        try await sandbox.setUp(order: ["crash"], services: [:])
        let nowhere = try await peer.run(
            peer.helper + ["credential", "approve"],
            input: host + "username=bob\npassword=s3cret bob\n\n"
        )
        #expect(
            nowhere.standardError.contains("no enabled provider takes passwords to save"),
            "\(nowhere.standardError)"
        )

        // git approves bob's password: the quiet provider saves it, AutoFill finds it, git clones with it.
        try await sandbox.setUp(order: ["quiet"], services: [:])
        let approved = try await peer.run(
            peer.helper + ["credential", "approve"],
            input: host + "username=bob\npassword=s3cret bob\n\n"
        )
        #expect(
            approved.status == 0 && approved.standardError.contains("in org.example.quiet"),
            "\(approved.standardError)"
        )
        #expect(try await peer.password("bob").standardOutput == "s3cret bob\n")
        let saved = sandbox.directory.url.appendingPathComponent("state/keyport-example-provider/quiet.json").path
        let written = try FileManager.default.attributesOfItem(atPath: saved)[.modificationDate] as? Date
        let cloned = try await peer.run(peer.helper + ["clone", "-q", peer.url, "with"])
        #expect(cloned.status == 0, "\(cloned.standardError)")
        // git stored what it had just been given after the clone: nothing was written again.
        #expect(try FileManager.default.attributesOfItem(atPath: saved)[.modificationDate] as? Date == written)

        // git rejects it (as after a 401): nothing is deleted.
        let rejected = try await peer.run(
            peer.helper + ["credential", "reject"],
            input: host + "username=bob\npassword=s3cret bob\n\n"
        )
        #expect(rejected.standardError.contains("Nothing was changed"), "\(rejected.standardError)")
        #expect(try await peer.password("bob").standardOutput == "s3cret bob\n")

        // A token that expires, or is not a password, belongs to the helper that made it. (Debian
        // 12's git 2.39 predates password_expiry_utc and authtype: the helper is given them as
        // git 2.41 and 2.46 send them.)
        let expiring = try await peer.helper(
            "store",
            host + "username=carol\npassword=token\npassword_expiry_utc=4102444800\n\n"
        )
        #expect(expiring.status == 0 && expiring.standardError.contains("expires"), "\(expiring.standardError)")
        let bearer = try await peer.helper(
            "store",
            host + "capability[]=authtype\nusername=carol\nauthtype=Bearer\ncredential=abc\npassword=token\n\n"
        )
        #expect(bearer.status == 0 && bearer.standardError.contains("not a password"), "\(bearer.standardError)")
        let oauth = try await peer.helper("store", host + "username=carol\npassword=token\noauth_refresh_token=r\n\n")
        #expect(oauth.standardError.contains("OAuth access token"), "\(oauth.standardError)")
        #expect(try await peer.password("carol").status == 1)

        // A password holding a carriage return (saved by any client) is never handed to git: a CR
        // would let it add lines of its own to git's credential.
        _ = try await DaemonClient.withConnection(environment: sandbox.environment) {
            try await $0.call(
                AutoFill.SavePassword.name,
                RawJSON(
                    encoding: AutoFill.SavePassword.Parameters(
                        serviceIdentifier: .init(identifier: "http://127.0.0.1:\(peer.port)/", type: .URL),
                        user: "eve",
                        password: "pw\r\nquit=1"
                    )
                )
            )
        }
        let injected = try await peer.helper("get", host + "username=eve\n\n")
        #expect(
            injected.standardOutput.isEmpty && injected.standardError.contains("line break"),
            "\(injected.standardOutput)"
        )

        // A locked provider asks the person through the agent: with none, nothing is saved; with
        // one that unlocks it, the password is saved.
        try await sandbox.setUp(order: ["interactive"], services: [:])
        let locked = try await peer.run(
            peer.helper + ["credential", "approve"],
            input: host + "username=dave\npassword=d4ve\n\n"
        )
        #expect(locked.standardError.contains("nothing was saved"), "\(locked.standardError)")
        let agent = try await sandbox.startAgent(secret: "open sesame")
        defer { agent.stop() }
        let unlocked = try await peer.run(
            peer.helper + ["credential", "approve"],
            input: host + "username=dave\npassword=d4ve\n\n"
        )
        #expect(
            unlocked.status == 0 && unlocked.standardError.contains("saved the password"),
            "\(unlocked.standardError)"
        )
        #expect(try await peer.password("dave").standardOutput == "d4ve\n")
    }
}

extension AutoFillSandbox {
    /// The error of a request that must fail, or `nil` when it succeeded.
    func requestResult(
        _ kind: AutoFill.CredentialType,
        _ services: [String],
        interactive: Bool? = nil,
        identity: AutoFill.IdentityReference? = nil
    ) async -> VarlinkError? {
        guard
            case .failure(let error)? = try? await request(
                kind,
                services,
                interactive: interactive,
                identity: identity
            )
        else {
            return nil
        }
        return error
    }
}
