import AuthenticationServices
import Foundation
import KeyportTestSupport
import Testing
import WebAuthentication

/// A sandbox where keyportd, the waiting sessions (in this process) and `keyport url-scheme open`
/// agree on keyportd's socket and on the callback directory (`$XDG_RUNTIME_DIR/keyport/callbacks`).
private struct CallbackSandbox {
    let directory: TemporaryDirectory
    let environment: [String: String]
    let scheme = "com.example.routed"

    init() throws {
        directory = try TemporaryDirectory("kp-cb")
        var environment = sandboxEnvironment(in: directory.url)
        environment["XDG_RUNTIME_DIR"] = try directory.subdirectory("run").path
        self.environment = environment
    }

    var callbackDirectory: URL { SchemeCallbackListener.defaultDirectory(environment: environment) }

    /// A session waiting for this sandbox's scheme, taking only URLs with `state`.
    func listen(state: String) async throws -> SchemeCallbackListener {
        try await SchemeCallbackListener.start(scheme: scheme, directory: nil, environment: environment) { url in
            URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.contains {
                $0.name == "state" && $0.value == state
            } == true
        }
    }

    /// What the desktop runs for the scheme: `keyport url-scheme open URL`.
    func open(code: String, state: String) async throws -> Program.Ran {
        try await Program.run(
            keyport,
            ["url-scheme", "open", "\(scheme):/callback?code=\(code)&state=\(state)"],
            environment: environment,
            timeout: .seconds(60)
        )
    }
}

private func code(_ url: URL) -> String? {
    URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "code" }?.value
}

@Suite("custom-scheme callbacks routed by keyportd", .serialized)
struct CallbackRoutingTests {
    @Test("keyportd routes each URL to the registered session whose state it carries")
    func routed() async throws {
        let sandbox = try CallbackSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        let first = try await sandbox.listen(state: "one")
        let second = try await sandbox.listen(state: "two")

        let toSecond = try await sandbox.open(code: "B", state: "two")
        #expect(toSecond.status == 0, "\(toSecond.standardError)")
        #expect(code(try await second.waitForCallback(timeout: .seconds(20))) == "B")
        // keyportd did it, to a session that had registered with it.
        _ = try await daemon.waitForLine(timeout: .seconds(20), onStandardError: true) {
            $0.contains("callback handed over") && $0.contains("session=registered")
        }
        let toFirst = try await sandbox.open(code: "A", state: "one")
        #expect(toFirst.status == 0, "\(toFirst.standardError)")
        #expect(code(try await first.waitForCallback(timeout: .seconds(20))) == "A")

        // Nobody waits any more: keyportd says so, and the URL's code is in no message.
        let late = try await sandbox.open(code: "secret-code", state: "one")
        #expect(late.status == 1)
        #expect(late.standardError.contains("no Keyport session is waiting"), "\(late.standardError)")
        #expect(!late.standardError.contains("secret-code"))
        #expect(!daemon.standardError.contains("secret-code"))
    }

    @Test("a session that began waiting before keyportd started is still found by it")
    func unregistered() async throws {
        let sandbox = try CallbackSandbox()
        defer { sandbox.directory.remove() }
        // keyportd is not running: the session waits on its socket alone.
        let session = try await sandbox.listen(state: "early")
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        let ran = try await sandbox.open(code: "C", state: "early")
        #expect(ran.status == 0, "\(ran.standardError)")
        #expect(code(try await session.waitForCallback(timeout: .seconds(20))) == "C")
        _ = try await daemon.waitForLine(timeout: .seconds(20), onStandardError: true) {
            $0.contains("callback handed over") && $0.contains("session=unregistered")
        }
    }

    @Test("without keyportd, or after it stopped, the handler hands the URL over itself")
    func withoutKeyportd() async throws {
        let sandbox = try CallbackSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        let registered = try await sandbox.listen(state: "one")
        // keyportd stops: it ends the registration; the session goes on waiting on its socket.
        daemon.stop()
        #expect(await daemon.waitForExit(timeout: .seconds(30)) == .exited(0))
        let ran = try await sandbox.open(code: "D", state: "one")
        #expect(ran.status == 0, "\(ran.standardError)")
        #expect(code(try await registered.waitForCallback(timeout: .seconds(20))) == "D")
    }

    @Test("a session that ends is no longer registered: its socket is gone and keyportd offers it nothing")
    func sessionEnds() async throws {
        let sandbox = try CallbackSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        let ended = try await sandbox.listen(state: "gone")
        ended.cancel()
        let waiting = try await sandbox.listen(state: "gone")
        #expect(socketCount(in: sandbox.callbackDirectory) == 1)
        let ran = try await sandbox.open(code: "E", state: "gone")
        #expect(ran.status == 0, "\(ran.standardError)")
        #expect(code(try await waiting.waitForCallback(timeout: .seconds(20))) == "E")
    }

    @Test("PyPI's varlink client: Listen wants more, a bad socket or scheme is refused, Deliver to nobody is NoSession")
    func pythonClient() async throws {
        let python = try await Peers.python(importing: ["varlink"])
        let sandbox = try CallbackSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        let script = """
            import json, sys, varlink
            def attempt(call):
                try:
                    call()
                    print("ok")
                except varlink.VarlinkError as error:
                    print(error.error(), json.dumps(error.parameters().get("message", "")))
            with varlink.Client(address="unix:" + sys.argv[1]) as client, client.open("org.keyport.Callbacks", namespaced=False) as callbacks:
                attempt(lambda: callbacks.Listen("com.example.routed", sys.argv[1]))
                attempt(lambda: next(iter(callbacks.Listen("com.example.routed", "/etc/passwd", _more=True))))
                attempt(lambda: next(iter(callbacks.Listen("https", sys.argv[1], _more=True))))
                attempt(lambda: callbacks.Deliver("com.example.routed:/callback?code=hidden"))
                attempt(lambda: callbacks.Deliver("com.example.routed:/callback?code=" + "x" * 9000))
            """
        let socket = try #require(sandbox.environment["KEYPORT_SOCKET"])
        let ran = try await Program.run(python, ["-c", script, socket], timeout: .seconds(60))
        #expect(ran.status == 0, "\(ran.standardError)")
        let lines = ran.standardOutput.split(separator: "\n").map(String.init)
        try #require(lines.count == 5, "\(ran.standardOutput)")
        #expect(lines[0].hasPrefix("org.varlink.service.ExpectedMore"))
        #expect(lines[1].hasPrefix("org.keyport.Callbacks.InvalidCallback") && lines[1].contains("/etc/passwd"))
        #expect(lines[2].hasPrefix("org.keyport.Callbacks.InvalidCallback") && lines[2].contains("https"))
        #expect(lines[3].hasPrefix("org.keyport.Callbacks.NoSession") && !lines[3].contains("hidden"))
        // Longer than the definition allows: refused as such, not looked for, the code not repeated.
        #expect(lines[4].hasPrefix("org.keyport.Callbacks.InvalidCallback") && lines[4].contains("at most 8192"))
        #expect(!lines[4].contains("xxxx"))
    }
}

private func socketCount(in directory: URL) -> Int {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".sock") }
        .count
}
