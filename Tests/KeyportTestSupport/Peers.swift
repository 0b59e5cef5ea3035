import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real peers the web-authentication tests talk to: the Authlib authorization server and the
/// Selenium-driven headless chromium in `Tests/WebAuthenticationTests/Peers`, run with the venv
/// `scripts/test` creates. Without them the tests fail and say what is missing.
public enum WebPeers {
    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    public static var python: String { packageRoot.appendingPathComponent(".venv/bin/python3").path }

    static func peer(_ name: String) -> String {
        packageRoot.appendingPathComponent("Tests/WebAuthenticationTests/Peers/\(name)").path
    }

    /// The command that plays the person's browser: `%s` is the URL; `profile` is a directory
    /// (or `%p`, the ephemeral session's fresh one) or `nil` for chromedriver's own throw-away
    /// profile. `marker` goes into the command line so a test can find and stop the process.
    public static func browser(action: String, profile: String? = nil, marker: String, extra: [String] = []) -> [String] {
        var command = [python, peer("browser.py"), "--action", action, "--log", "/tmp/keyport-test-browser-\(marker).log"]
        if let profile { command += ["--profile", profile] }
        return command + extra + ["%s"]
    }

    /// Ends every browser started with `marker` (shared sessions do not own their browser, so a
    /// test that leaves one waiting stops it itself).
    public static func stopBrowsers(marker: String) {
        let pkill = Process()
        pkill.executableURL = URL(fileURLWithPath: "/usr/bin/pkill")
        pkill.arguments = ["-TERM", "-f", "keyport-test-browser-\(marker)"]
        try? pkill.run()
        pkill.waitUntilExit()
    }

    /// The events `browser.py` logged for `marker`.
    public static func browserLog(marker: String) -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: "/tmp/keyport-test-browser-\(marker).log", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Waits up to `timeout` for `browser.py` to log an event that `matches` (it logs some after
    /// the session has already ended).
    public static func waitForBrowserEvent(
        marker: String, timeout: Duration = .seconds(10), _ matches: ([String: Any]) -> Bool
    ) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if browserLog(marker: marker).contains(where: matches) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// A fresh private directory, removed by the caller.
    public static func temporaryDirectory(_ prefix: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return directory
    }
}

/// `authorization_server.py` running on 127.0.0.1 for one test: public client `keyport-test`,
/// user alice / wonderland, PKCE S256 required. Stopped on `stop()` or when released.
public final class AuthorizationServer: @unchecked Sendable {
    // @unchecked: `process` is only read after `init`; Process itself is thread-safe to signal.
    public static let clientID = "keyport-test"
    public let issuer: URL
    private let process: Process

    /// Starts the server; `tokenRedirect` makes its token endpoint answer with a 307 to that path.
    public init(redirectURIs: [String] = [], tokenRedirect: String? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: WebPeers.python)
        process.arguments = [WebPeers.peer("authorization_server.py")] + redirectURIs.flatMap { ["--redirect-uri", $0] }
            + (tokenRedirect.map { ["--token-redirect", $0] } ?? [])
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        guard FileManager.default.isExecutableFile(atPath: WebPeers.python) else {
            throw PeerMissing(what: "the test venv (\(WebPeers.python)); run scripts/test")
        }
        try process.run()
        // The first line is `READY http://127.0.0.1:PORT`.
        var line = Data()
        while true {
            let byte = try out.fileHandleForReading.read(upToCount: 1) ?? Data()
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("READY "), let issuer = URL(string: String(text.dropFirst(6))) else {
            process.terminate()
            throw PeerMissing(what: "authorization_server.py did not start (it printed \(text.debugDescription)); are Authlib and Flask in .venv?")
        }
        self.issuer = issuer
        self.process = process
    }

    /// `/_test/stats`: logins (password sign-ins), authorize_requests, tokens_issued, token_errors, token_redirects, token_sink_requests.
    public func stats() async throws -> [String: Int] {
        let (data, _) = try await URLSession.shared.data(from: issuer.appendingPathComponent("_test/stats"))
        return try JSONSerialization.jsonObject(with: data) as? [String: Int] ?? [:]
    }

    public func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }
}

public struct PeerMissing: Error, CustomStringConvertible {
    public var what: String
    public var description: String { "missing test peer: \(what)" }
}

/// One HTTP GET on a fresh connection, as a stray request from a browser or a port scan would be.
public func httpGet(_ url: URL) async throws -> Int {
    var request = URLRequest(url: url)
    request.timeoutInterval = 5
    let (_, response) = try await URLSession.shared.data(for: request)
    return (response as? HTTPURLResponse)?.statusCode ?? 0
}
