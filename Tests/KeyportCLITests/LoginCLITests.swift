import Foundation
import KeyportSystem
import KeyportTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `keyport login` end to end: the real binary, the Authlib server, headless chromium as the
/// person's browser, and for custom schemes the real desktop path (xdg-open → .desktop file →
/// `keyport url-scheme open`).
@Suite("keyport login", .serialized)
struct LoginCLITests {
    let server: AuthorizationServer
    let browsers: BrowserPeer

    init() async throws {
        server = try await AuthorizationServer()
        browsers = try await BrowserPeer()
    }

    func browser(_ action: String, profile: String? = nil) -> String {
        browsers.command(action: action, profile: profile).joined(separator: " ")
    }

    /// Runs `keyport login` with the test issuer and client, in `environment` added to ours.
    func login(_ arguments: [String], environment: [String: String] = [:]) async throws -> CLI.Result {
        try await runProgram(
            CLI.executable.path,
            ["login", "--issuer", server.issuer.absoluteString, "--client-id", AuthorizationServer.clientID]
                + arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }
        )
    }

    @Test("signs in through the loopback redirect; tokens redacted; the URL on stderr")
    func loopback() async throws {
        let result = try await login(["--scope", "openid profile", "--browser", browser("approve"), "--timeout", "60"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let json = try result.json()
        #expect(json["token_type"] as? String == "Bearer")
        #expect(json["scope"] as? String == "openid profile")
        #expect((json["access_token"] as? String)?.hasSuffix("[redacted]") == true)
        #expect((json["id_token"] as? String)?.hasSuffix("[redacted]") == true)
        #expect(
            result.stderr.contains(
                "\(server.issuer.absoluteString)/authorize?response_type=code&client_id=keyport-test"
            )
        )
        #expect(result.stderr.contains("code_challenge_method=S256"))
    }

    @Test("--show-tokens prints the token values; --ephemeral signs in with a fresh profile")
    func showTokensEphemeral() async throws {
        let result = try await login([
            "--ephemeral", "--show-tokens", "--browser", browser("approve", profile: "%p"), "--timeout", "60",
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let json = try result.json()
        let access = try #require(json["access_token"] as? String)
        #expect(!access.contains("redacted") && access.count > 20)
        #expect((json["id_token"] as? String)?.split(separator: ".").count == 3)
        #expect(try await server.stats()["logins"] == 1)
    }

    @Test(
        "SIGINT, SIGTERM or SIGHUP during an ephemeral sign-in: the browser's process group ends, its profile goes, keyport ends by the signal; also when keyport starts with them blocked",
        arguments: [SIGINT, SIGTERM, SIGHUP],
        [false, true]
    )
    func interrupted(signal: Int32, startedBlocked: Bool) async throws {
        let sandbox = try TemporaryDirectory("kp-login-signal")
        defer { sandbox.remove() }
        let runtime = try sandbox.subdirectory("run")
        // A browser that keeps a helper process running and never finishes the sign-in.
        let browser = sandbox.url.appendingPathComponent("browser")
        try """
        #!/bin/sh
        echo "$1" > '\(sandbox.path)/profile'
        sleep 300 &
        echo $$ > '\(sandbox.path)/pid'
        wait
        """.write(to: browser, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: browser.path)

        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = runtime.path
        // Programs started with Foundation's Process from one of Swift's worker threads inherit its
        // signal mask, these three blocked: keyport must unblock them for itself.
        let blocking = [
            "/usr/bin/python3", "-c",
            "import os, signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}); os.execv(sys.argv[1], sys.argv[1:])",
        ]
        let command =
            (startedBlocked ? blocking : []) + [
                CLI.executable.path, "login", "--issuer", server.issuer.absoluteString, "--client-id",
                AuthorizationServer.clientID,
                "--ephemeral", "--browser", "\(browser.path) %p %s", "--timeout", "120",
            ]
        let keyport = try Program(command[0], Array(command.dropFirst()), environment: environment)

        // The browser script's pid, which leads its process group, once it has written it whole.
        let pidFile = sandbox.url.appendingPathComponent("pid").path
        var recorded: pid_t?
        try #require(
            try await FileChanges.waitUntil(within: .seconds(30), changesIn: sandbox.url) {
                recorded = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap {
                    pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
                }
                return recorded != nil
            },
            "the browser did not start; keyport printed: \(keyport.standardError)"
        )
        let group = try #require(recorded)
        let profile = try String(contentsOfFile: sandbox.url.appendingPathComponent("profile").path, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(profile.hasPrefix(runtime.path + "/keyport-browser-"))
        #expect(!liveProcesses(inGroup: group).isEmpty)

        keyport.signal(signal)
        let termination = try #require(
            await keyport.waitForExit(timeout: .seconds(30)),
            "keyport did not end after the signal"
        )
        #expect(termination == .signalled(signal))
        #expect(liveProcesses(inGroup: group).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: profile))
        let stderr = keyport.standardError
        #expect(stderr.contains("sign-in interrupted by"), "\(stderr)")
        #expect(stderr.contains("its profile removed"))
    }

    @Test("a token endpoint that redirects: exit 1, the code and verifier never follow, no ID token is read")
    func tokenRedirect() async throws {
        let redirecting = try await AuthorizationServer(tokenRedirect: "/_test/token-sink")
        defer { redirecting.stop() }
        let result = try await runProgram(
            CLI.executable.path,
            [
                "login", "--issuer", redirecting.issuer.absoluteString, "--client-id", AuthorizationServer.clientID,
                "--browser", browser("approve"), "--timeout", "60",
            ],
            environment: ProcessInfo.processInfo.environment
        )
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("sign-in failed: the token endpoint answered HTTP 307"), "\(result.stderr)")
        #expect(result.stderr.contains("never redirected"))
        let stats = try await redirecting.stats()
        #expect(stats["token_redirects"] == 1)
        #expect(stats["token_sink_requests"] == 0)
    }

    @Test("the person declines: exit 1, and the message says so")
    func declined() async throws {
        let result = try await login(["--browser", browser("deny"), "--timeout", "60"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("sign-in declined"))
    }

    @Test("nobody signs in: exit 1 after the timeout")
    func timeout() async throws {
        let result = try await login(["--browser", browser("ignore"), "--timeout", "2"])
        browsers.stop()
        #expect(result.status == 1)
        #expect(result.stderr.contains("timed out"))
    }

    @Test("an answer with a tampered state: refused, said when it comes, and the sign-in still waits for its own")
    func tamperedState() async throws {
        let sandbox = try TemporaryDirectory("kp-login-state")
        defer { sandbox.remove() }
        // A "browser" that sends the redirect back at once, with the state changed in one character.
        let browser = sandbox.url.appendingPathComponent("browser")
        let refused = sandbox.url.appendingPathComponent("refused").path
        try """
        #!/bin/sh
        exec /usr/bin/python3 -c '
        import sys, urllib.parse, urllib.request, urllib.error
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(sys.argv[1]).query)
        state = query["state"][0]
        forged = ("A" if state[0] != "A" else "B") + state[1:]
        try:
            urllib.request.urlopen(query["redirect_uri"][0] + "?code=forged&state=" + forged)
        except urllib.error.HTTPError as error:
            open(sys.argv[2], "w").write(str(error.code))
        ' "$1" '\(refused)'
        """.write(to: browser, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: browser.path)
        let result = try await login(["--browser", "\(browser.path) %s", "--timeout", "10"])
        #expect(result.status == 1)
        #expect(try String(contentsOfFile: refused, encoding: .utf8) == "400")
        let said = try #require(
            result.stderr.range(of: "a sign-in answer came back with a state that is not this sign-in's"),
            "\(result.stderr)"
        )
        // Said when it came, not at the end: before the wait ran out.
        let timedOut = try #require(result.stderr.range(of: "timed out"), "\(result.stderr)")
        #expect(said.lowerBound < timedOut.lowerBound)
        #expect(!result.stderr.contains("forged&"), "no part of the answer is printed")
    }

    @Test("no display and no $BROWSER: the URL is printed and the wait times out")
    func headless() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["BROWSER"] = nil
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        let result = try await runProgram(
            CLI.executable.path,
            [
                "login", "--issuer", server.issuer.absoluteString, "--client-id", AuthorizationServer.clientID,
                "--timeout", "1",
            ],
            environment: environment
        )
        #expect(result.status == 1)
        #expect(result.stderr.contains("/authorize?"))
        #expect(result.stderr.contains("no display"))
        #expect(result.stderr.contains("timed out"))
    }

    @Test("an issuer that is not there, or not over TLS: exit 1 with the reason")
    func badIssuer() async throws {
        let unreachable = try await CLI.run([
            "login", "--issuer", "http://127.0.0.1:9/", "--client-id", "x", "--timeout", "1",
        ])
        #expect(unreachable.status == 1)
        #expect(unreachable.stderr.contains("could not be reached"))
        let plain = try await CLI.run(["login", "--issuer", "http://auth.example", "--client-id", "x"])
        #expect(plain.status == 1)
        #expect(plain.stderr.contains("not https"))
        let usage = try await CLI.run(["login", "--issuer", "auth.example", "--client-id", "x"])
        #expect(usage.status == 2)
    }

    @Test("a custom scheme the desktop does not send to Keyport: a warning, then the timeout")
    func unregisteredScheme() async throws {
        let scratch = try TemporaryDirectory("kp-login")
        defer { scratch.remove() }
        let home = scratch.url
        let result = try await login(
            ["--redirect", "com.example.keyport", "--browser", "/bin/true", "--timeout", "1"],
            environment: [
                "XDG_DATA_HOME": home.appendingPathComponent("data").path,
                "XDG_CONFIG_HOME": home.appendingPathComponent("config").path, "XDG_RUNTIME_DIR": home.path,
            ]
        )
        #expect(result.status == 1)
        #expect(result.stderr.contains("keyport url-scheme register com.example.keyport"))
        #expect(result.stderr.contains("timed out"))
    }

    @Test("custom scheme: the redirect goes through xdg-open, the registered handler and the socket")
    func customScheme() async throws {
        let scratch = try TemporaryDirectory("kp-login")
        defer { scratch.remove() }
        let home = scratch.url
        // A short path: the callback socket is bound in run/keyport/callbacks below it.
        let runtime = try scratch.subdirectory("run")
        let environment = [
            "XDG_DATA_HOME": home.appendingPathComponent("data").path,
            "XDG_CONFIG_HOME": home.appendingPathComponent("config").path,
            "XDG_RUNTIME_DIR": runtime.path,
        ]
        let register = try await runProgram(
            CLI.executable.path,
            ["url-scheme", "register", "com.example.keyport"],
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }
        )
        #expect(register.status == 0)

        let result = try await login(
            ["--redirect", "com.example.keyport", "--browser", browser("approve"), "--timeout", "60"],
            environment: environment
        )
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(try result.json()["token_type"] as? String == "Bearer")
        #expect(result.stderr.contains("redirect_uri=com.example.keyport%3A%2Fcallback"))
        #expect(
            try await browsers.waitForEvent {
                $0["event"] as? String == "handed_to_xdg_open" && $0["status"] as? Int == 0
            }
        )
    }
}

/// The processes of process group `group` that are still running (a zombie, dead but not yet
/// reaped by whoever inherited it, is not).
private func liveProcesses(inGroup group: pid_t) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap(pid_t.init).filter { pid in
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return false }
        // After "pid (comm) ": state, ppid, pgrp, …
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        return fields.count > 2 && fields[0] != "Z" && pid_t(fields[2]) == group
    }
}
