import Foundation
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
    let marker = UUID().uuidString.prefix(8).lowercased()

    init() throws {
        server = try AuthorizationServer()
    }

    func browser(_ action: String, profile: String? = nil) -> String {
        WebPeers.browser(action: action, profile: profile, marker: String(marker)).joined(separator: " ")
    }

    /// Runs `keyport login` with the test issuer and client, in `environment` added to ours.
    func login(_ arguments: [String], environment: [String: String] = [:]) throws -> CLI.Result {
        try runProgram(
            CLI.executable, ["login", "--issuer", server.issuer.absoluteString, "--client-id", AuthorizationServer.clientID] + arguments,
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
    }

    @Test("signs in through the loopback redirect; tokens redacted; the URL on stderr")
    func loopback() throws {
        let result = try login(["--scope", "openid profile", "--browser", browser("approve"), "--timeout", "60"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let json = try result.json()
        #expect(json["token_type"] as? String == "Bearer")
        #expect(json["scope"] as? String == "openid profile")
        #expect((json["access_token"] as? String)?.hasSuffix("[redacted]") == true)
        #expect((json["id_token"] as? String)?.hasSuffix("[redacted]") == true)
        #expect(result.stderr.contains("\(server.issuer.absoluteString)/authorize?response_type=code&client_id=keyport-test"))
        #expect(result.stderr.contains("code_challenge_method=S256"))
    }

    @Test("--show-tokens prints the token values; --ephemeral signs in with a fresh profile")
    func showTokensEphemeral() async throws {
        let result = try login(["--ephemeral", "--show-tokens", "--browser", browser("approve", profile: "%p"), "--timeout", "60"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let json = try result.json()
        let access = try #require(json["access_token"] as? String)
        #expect(!access.contains("redacted") && access.count > 20)
        #expect((json["id_token"] as? String)?.split(separator: ".").count == 3)
        #expect(try await server.stats()["logins"] == 1)
    }

    @Test("SIGINT, SIGTERM or SIGHUP during an ephemeral sign-in: the browser's process group ends, its profile goes, keyport ends by the signal", arguments: [SIGINT, SIGTERM, SIGHUP])
    func interrupted(signal: Int32) async throws {
        let sandbox = try WebPeers.temporaryDirectory("keyport-login-signal")
        defer { try? FileManager.default.removeItem(at: sandbox) }
        let runtime = sandbox.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // A browser that keeps a helper process running and never finishes the sign-in.
        let browser = sandbox.appendingPathComponent("browser")
        try """
            #!/bin/sh
            echo "$1" > '\(sandbox.path)/profile'
            sleep 300 &
            echo $$ > '\(sandbox.path)/pid'
            wait
            """.write(to: browser, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: browser.path)

        let process = Process()
        process.executableURL = CLI.executable
        process.arguments = [
            "login", "--issuer", server.issuer.absoluteString, "--client-id", AuthorizationServer.clientID, "--ephemeral",
            "--browser", "\(browser.path) %p %s", "--timeout", "120",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = runtime.path
        process.environment = environment
        let errors = sandbox.appendingPathComponent("stderr")
        try #require(FileManager.default.createFile(atPath: errors.path, contents: nil))
        process.standardError = try FileHandle(forWritingTo: errors)
        process.standardOutput = FileHandle.nullDevice
        try process.run()

        let pidFile = sandbox.appendingPathComponent("pid").path
        try #require(await waitFor(seconds: 30) { FileManager.default.fileExists(atPath: pidFile) })
        let group = try #require(pid_t(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        let profile = try String(contentsOfFile: sandbox.appendingPathComponent("profile").path, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(profile.hasPrefix(runtime.path + "/keyport-browser-"))
        #expect(!liveProcesses(inGroup: group).isEmpty)

        kill(process.processIdentifier, signal)
        let exited = await waitFor(seconds: 30) { !process.isRunning }
        if !exited { process.interrupt() }
        try #require(exited, "keyport did not end after the signal")
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(process.terminationStatus == signal)
        #expect(liveProcesses(inGroup: group).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: profile))
        let stderr = try String(contentsOf: errors, encoding: .utf8)
        #expect(stderr.contains("sign-in interrupted by"), "\(stderr)")
        #expect(stderr.contains("its profile removed"))
    }

    @Test("a token endpoint that redirects: exit 1, the code and verifier never follow, no ID token is read")
    func tokenRedirect() async throws {
        let redirecting = try AuthorizationServer(tokenRedirect: "/_test/token-sink")
        defer { redirecting.stop() }
        let result = try runProgram(
            CLI.executable,
            ["login", "--issuer", redirecting.issuer.absoluteString, "--client-id", AuthorizationServer.clientID, "--browser", browser("approve"), "--timeout", "60"],
            environment: ProcessInfo.processInfo.environment)
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("sign-in failed: the token endpoint answered HTTP 307"), "\(result.stderr)")
        #expect(result.stderr.contains("never redirected"))
        let stats = try await redirecting.stats()
        #expect(stats["token_redirects"] == 1)
        #expect(stats["token_sink_requests"] == 0)
    }

    @Test("the person declines: exit 1, and the message says so")
    func declined() throws {
        let result = try login(["--browser", browser("deny"), "--timeout", "60"])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains("sign-in declined"))
    }

    @Test("nobody signs in: exit 1 after the timeout")
    func timeout() throws {
        let result = try login(["--browser", browser("ignore"), "--timeout", "2"])
        WebPeers.stopBrowsers(marker: String(marker))
        #expect(result.status == 1)
        #expect(result.stderr.contains("timed out"))
    }

    @Test("no display and no $BROWSER: the URL is printed and the wait times out")
    func headless() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["BROWSER"] = nil
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        let result = try runProgram(
            CLI.executable, ["login", "--issuer", server.issuer.absoluteString, "--client-id", AuthorizationServer.clientID, "--timeout", "1"],
            environment: environment)
        #expect(result.status == 1)
        #expect(result.stderr.contains("/authorize?"))
        #expect(result.stderr.contains("no display"))
        #expect(result.stderr.contains("timed out"))
    }

    @Test("an issuer that is not there, or not over TLS: exit 1 with the reason")
    func badIssuer() throws {
        let unreachable = try CLI.run(["login", "--issuer", "http://127.0.0.1:9/", "--client-id", "x", "--timeout", "1"])
        #expect(unreachable.status == 1)
        #expect(unreachable.stderr.contains("could not be reached"))
        let plain = try CLI.run(["login", "--issuer", "http://auth.example", "--client-id", "x"])
        #expect(plain.status == 1)
        #expect(plain.stderr.contains("not https"))
        let usage = try CLI.run(["login", "--issuer", "auth.example", "--client-id", "x"])
        #expect(usage.status == 2)
    }

    @Test("a custom scheme the desktop does not send to Keyport: a warning, then the timeout")
    func unregisteredScheme() throws {
        let home = try WebPeers.temporaryDirectory("keyport-login-unregistered")
        defer { try? FileManager.default.removeItem(at: home) }
        let result = try login(
            ["--redirect", "com.example.keyport", "--browser", "/bin/true", "--timeout", "1"],
            environment: ["XDG_DATA_HOME": home.appendingPathComponent("data").path, "XDG_CONFIG_HOME": home.appendingPathComponent("config").path, "XDG_RUNTIME_DIR": home.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("keyport url-scheme register com.example.keyport"))
        #expect(result.stderr.contains("timed out"))
    }

    @Test("custom scheme: the redirect goes through xdg-open, the registered handler and the socket")
    func customScheme() async throws {
        let home = try WebPeers.temporaryDirectory("keyport-login-desktop")
        defer { try? FileManager.default.removeItem(at: home) }
        let runtime = home.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let environment = [
            "XDG_DATA_HOME": home.appendingPathComponent("data").path, "XDG_CONFIG_HOME": home.appendingPathComponent("config").path,
            "XDG_RUNTIME_DIR": runtime.path,
        ]
        let register = try runProgram(
            CLI.executable, ["url-scheme", "register", "com.example.keyport"],
            environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        #expect(register.status == 0)

        let result = try login(["--redirect", "com.example.keyport", "--browser", browser("approve"), "--timeout", "60"], environment: environment)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(try result.json()["token_type"] as? String == "Bearer")
        #expect(result.stderr.contains("redirect_uri=com.example.keyport%3A%2Fcallback"))
        #expect(await WebPeers.waitForBrowserEvent(marker: String(marker)) {
            $0["event"] as? String == "handed_to_xdg_open" && $0["status"] as? Int == 0
        })
    }
}

/// Polls `condition` every 50 ms until it holds or `seconds` pass.
private func waitFor(seconds: Int, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return true
}

/// The processes of process group `group` that are still running (a zombie, dead but not yet
/// reaped by whoever inherited it, is not).
private func liveProcesses(inGroup group: pid_t) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap(pid_t.init).filter { pid in
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let end = stat.lastIndex(of: ")") else { return false }
        // After "pid (comm) ": state, ppid, pgrp, …
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        return fields.count > 2 && fields[0] != "Z" && pid_t(fields[2]) == group
    }
}
