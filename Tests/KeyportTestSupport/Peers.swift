import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The real programs the tests check Keyport against: oathtool, pyotp, the Authlib authorization
/// server and the Selenium-driven headless chromium (the last three in a venv at `.venv`).
/// `scripts/test`, the README's test command, installs them all; a test that finds one missing
/// fails and says so.
package enum Peers {
    package static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// The TOTP codes oathtool gives for `secret` (the example provider's by default) now and one
    /// period later: a request can straddle the boundary.
    package static func oathtoolCodes(secret: String = "JBSWY3DPEHPK3PXP") async throws -> Set<String> {
        let oathtool = try require("/usr/bin/oathtool", "oathtool")
        let now = Int(Date().timeIntervalSince1970)
        var codes: Set<String> = []
        for time in [now, now + 30] {
            let ran = try await Program.run(
                oathtool,
                ["--totp", "--base32", "--now", "@\(time)", secret],
                timeout: .seconds(30)
            )
            codes.insert(ran.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return codes
    }

    /// A file of the package, by its path from the package root.
    package static func file(_ path: String) -> String {
        packageRoot.appendingPathComponent(path).path
    }

    /// `path` when it is an executable; else throws ``PeerMissing`` naming `what`.
    @discardableResult
    package static func require(_ path: String, _ what: String) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: path) else { throw PeerMissing(what: "\(what) (\(path))") }
        return path
    }

    /// The venv's Python, once each of `modules` imports in it; else throws ``PeerMissing``. Each
    /// list is tried once per test process (a Python started with a time limit).
    package static func python(importing modules: [String]) async throws -> String {
        let python = try require(file(".venv/bin/python3"), "the test venv")
        let check = importChecks.withLock { checks in
            let key = modules.joined(separator: ", ")
            if let check = checks[key] { return check }
            let check = Task { await importProblem(python, modules) }
            checks[key] = check
            return check
        }
        if let problem = await check.value { throw PeerMissing(what: problem) }
        return python
    }

    private static let importChecks = Mutex<[String: Task<String?, Never>]>([:])

    /// Why `modules` do not import, or `nil` when they do.
    private static func importProblem(_ python: String, _ modules: [String]) async -> String? {
        let names = modules.joined(separator: ", ")
        do {
            let ran = try await Program.run(python, ["-c", "import \(names)"], timeout: .seconds(60))
            guard ran.status != 0 else { return nil }
            let reason = ran.standardError.split(separator: "\n").last.map(String.init) ?? "\(ran.termination)"
            return "\(names) in the test venv (\(reason))"
        } catch {
            return "\(names) in the test venv (\(error))"
        }
    }
}

/// A peer a test needs is not installed.
package struct PeerMissing: Error, CustomStringConvertible {
    package var what: String
    package var description: String {
        "missing test peer: \(what). Run scripts/test (the README's test command): it installs every test peer, "
            + "then builds and runs the tests"
    }
}

/// `authorization_server.py` running on 127.0.0.1 for one test: public client `keyport-test`,
/// user alice / wonderland, PKCE S256 required. Stopped by ``stop()``, or killed when released.
package final class AuthorizationServer: Sendable {
    package static let clientID = "keyport-test"
    package let issuer: URL
    private let program: Program

    /// Starts the server and waits (up to a minute) until it listens; `tokenRedirect` makes its
    /// token endpoint answer with a 307 to that path.
    package init(redirectURIs: [String] = [], tokenRedirect: String? = nil) async throws {
        let python = try await Peers.python(importing: ["authlib", "flask"])
        program = try Program(
            python,
            [Peers.file("Tests/WebAuthenticationTests/Peers/authorization_server.py")]
                + redirectURIs.flatMap { ["--redirect-uri", $0] }
                + (tokenRedirect.map { ["--token-redirect", $0] } ?? [])
        )
        // Its first line is `READY http://127.0.0.1:PORT`.
        let line = try await program.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("READY ") }
        guard let issuer = URL(string: String(line.dropFirst(6))) else {
            throw SupportFailure(description: "authorization_server.py announced no URL: \(line.debugDescription)")
        }
        self.issuer = issuer
    }

    /// `/_test/stats`: logins (password sign-ins), authorize_requests, tokens_issued, token_errors, token_redirects, token_sink_requests.
    package func stats() async throws -> [String: Int] {
        let (data, _) = try await URLSession.shared.data(from: issuer.appendingPathComponent("_test/stats"))
        return try JSONSerialization.jsonObject(with: data) as? [String: Int] ?? [:]
    }

    /// Asks the server to quit (SIGTERM), without waiting.
    package func stop() {
        program.stop()
    }
}

/// The person's browser in the web tests, for one test: `browser.py` driving headless chromium
/// through Selenium.
///
/// The code under test starts it (as `$BROWSER`, or as a session's browser command), so the test
/// holds no handle on it. Instead every instance started with ``command(action:profile:extra:)``
/// logs to a directory of this test's own: first `{"event": "started", "pid": …}`, then what it
/// did (``events``). ``stop()`` asks each logged instance to quit by signalling that process
/// itself; when the `BrowserPeer` is released, the log's directory is taken away first, so an
/// instance still starting up then finds no log to write and quits on its own, and every instance
/// that did log is signalled.
package final class BrowserPeer: Sendable {
    private let directory: TemporaryDirectory
    private let python: String

    /// Fails with ``PeerMissing`` unless chromium, chromedriver and Selenium (in the venv) are there.
    package init() async throws {
        python = try await Peers.python(importing: ["selenium"])
        try Peers.require("/usr/bin/chromium", "chromium (Debian package chromium)")
        try Peers.require("/usr/bin/chromedriver", "chromedriver (Debian package chromium-driver)")
        // Not "keyport-browser-…": each ephemeral launch sweeps directories so named from the
        // temporary directory when nobody holds them.
        directory = try TemporaryDirectory("kp-browser-peer")
        _ = try directory.subdirectory("log")
    }

    deinit {
        let ended = directory.url.appendingPathComponent("ended")
        if rename(logDirectory.path, ended.path) == 0 {
            Self.signalStarted(loggedIn: ended.appendingPathComponent(Self.logName), commandNaming: log.path)
        }
        directory.remove()
    }

    private static let logName = "browser.log"
    private var logDirectory: URL { directory.url.appendingPathComponent("log", isDirectory: true) }
    private var log: URL { logDirectory.appendingPathComponent(Self.logName) }

    /// The command that plays the person's browser: `%s` is the URL; `profile` is a directory
    /// (or `%p`, the ephemeral session's fresh one) or `nil` for chromedriver's own throw-away
    /// profile. `action`: approve, deny, ignore or close (see `browser.py`).
    package func command(action: String, profile: String? = nil, extra: [String] = []) -> [String] {
        var command = [
            python, Peers.file("Tests/WebAuthenticationTests/Peers/browser.py"), "--action", action, "--log", log.path,
        ]
        if let profile { command += ["--profile", profile] }
        return command + extra + ["%s"]
    }

    /// The events the browsers of this test logged, in order.
    package var events: [[String: Any]] { Self.events(in: log) }

    /// Waits up to `timeout` for a browser to log an event that `matches` (some are logged after
    /// the session has already ended).
    package func waitForEvent(timeout: Duration = .seconds(10), _ matches: ([String: Any]) -> Bool) async throws -> Bool
    {
        try await FileChanges.waitUntil(within: timeout, changesIn: logDirectory) { events.contains(where: matches) }
    }

    /// Asks every browser of this test that is still running to quit (SIGTERM: it closes chromium
    /// through chromedriver), without waiting. Shared sessions do not own their browser, so a test
    /// that leaves one waiting stops it itself.
    package func stop() {
        Self.signalStarted(loggedIn: log, commandNaming: log.path)
    }

    private static func events(in log: URL) -> [[String: Any]] {
        guard let text = try? String(contentsOf: log, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// Sends SIGTERM to each process that logged "started" in `log` while its command line still
    /// names `path`: a pid read from a file could by now be another process's, and the command
    /// line of one of ours holds this test's own log path.
    private static func signalStarted(loggedIn log: URL, commandNaming path: String) {
        for event in events(in: log) where event["event"] as? String == "started" {
            guard let pid = (event["pid"] as? Int).map(pid_t.init),
                let commandLine = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8),
                commandLine.split(separator: "\0").contains(Substring(path))
            else { continue }
            kill(pid, SIGTERM)
        }
    }
}

/// One HTTP GET on a fresh connection, as a stray request from a browser or a port scan would be.
package func httpGet(_ url: URL) async throws -> Int {
    var request = URLRequest(url: url)
    request.timeoutInterval = 5
    let (_, response) = try await URLSession.shared.data(for: request)
    return (response as? HTTPURLResponse)?.statusCode ?? 0
}
