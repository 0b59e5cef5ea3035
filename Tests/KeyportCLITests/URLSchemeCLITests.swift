import AuthenticationServices
import Foundation
import KeyportTestSupport
import Testing

@testable import WebAuthentication

/// A home for one test: temporary XDG directories, so nothing touches the real ~/.local or
/// ~/.config, and a runtime directory for the callback sockets.
struct DesktopSandbox {
    let root: URL
    let environment: [String: String]

    init() throws {
        // A short name: the callback sockets are bound in run/keyport/callbacks below it.
        root = try TemporaryDirectory("kp-cli").url
        for name in ["home", "data", "config", "run", "system"] {
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent(name),
                withIntermediateDirectories: true
            )
        }
        environment = [
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": root.appendingPathComponent("home").path,
            "XDG_DATA_HOME": root.appendingPathComponent("data").path,
            "XDG_CONFIG_HOME": root.appendingPathComponent("config").path,
            "XDG_DATA_DIRS": root.appendingPathComponent("system").path,
            "XDG_CONFIG_DIRS": root.appendingPathComponent("system").path,
            "XDG_RUNTIME_DIR": root.appendingPathComponent("run").path,
            // xdg-open's generic desktop only looks up x-scheme-handler entries with a display.
            "XDG_CURRENT_DESKTOP": "X-Generic", "DISPLAY": ":0",
        ]
    }

    func keyport(_ arguments: [String]) async throws -> CLI.Result {
        try await runProgram(CLI.executable.path, arguments, environment: environment)
    }

    /// Runs one of xdg-utils' programs (`/usr/bin/xdg-mime`, `/usr/bin/xdg-open`).
    func run(_ program: String, _ arguments: [String]) async throws -> CLI.Result {
        try await runProgram(
            try Peers.require(program, "xdg-utils (Debian package xdg-utils)"),
            arguments,
            environment: environment
        )
    }

    func remove() {
        try? FileManager.default.removeItem(at: root)
    }
}

@Suite("keyport url-scheme")
struct URLSchemeCLITests {
    @Test("register, then xdg-open hands the URL to a waiting session through the desktop entry; unregister undoes it")
    func desktopRoundTrip() async throws {
        let sandbox = try DesktopSandbox()
        defer { sandbox.remove() }
        let scheme = "com.example.keyport-test"

        let registered = try await sandbox.keyport(["url-scheme", "register", scheme])
        #expect(registered.status == 0, "\(registered.stderr)")
        let file = sandbox.root.appendingPathComponent("data/applications/keyport-url-\(scheme).desktop")
        #expect(registered.stdout.contains("wrote \(file.path)"))
        // The entry runs the command line itself (`keyport` hands `url-scheme open` to it anyway).
        let executable = CLI.executable.resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("keyport-cli").path
        #expect(registered.stdout.contains("Exec=\(executable) url-scheme open %u"))
        #expect(try String(contentsOf: file, encoding: .utf8).contains("MimeType=x-scheme-handler/\(scheme);"))
        let query = try await sandbox.run("/usr/bin/xdg-mime", ["query", "default", "x-scheme-handler/\(scheme)"])
        #expect(query.stdout == "keyport-url-\(scheme).desktop\n")

        // A session waits where `keyport url-scheme open` will look: $XDG_RUNTIME_DIR/keyport/callbacks.
        let directory = SchemeCallbackListener.defaultDirectory(environment: sandbox.environment)
        let listener = try await SchemeCallbackListener.start(scheme: scheme, directory: directory) {
            URLComponents(url: $0, resolvingAgainstBaseURL: false)?.queryItems?.contains(
                URLQueryItem(name: "state", value: "y")
            ) == true
        }
        let opened = try await sandbox.run("/usr/bin/xdg-open", ["\(scheme):/callback?code=x&state=y"])
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdout.contains("handed \(scheme):/callback to the waiting Keyport session"))
        #expect(!(opened.stdout + opened.stderr).contains("code=x"))
        let url = try await listener.waitForCallback(timeout: .seconds(30))
        #expect(url.absoluteString == "\(scheme):/callback?code=x&state=y")

        // Nobody waits any more: the handler fails, and xdg-open with it.
        let unused = try await sandbox.run("/usr/bin/xdg-open", ["\(scheme):/callback?code=x&state=y"])
        #expect(unused.status != 0)
        #expect(unused.stderr.contains("no Keyport session is waiting for this URL"))
        #expect(!unused.stderr.contains("code=x"))

        let unregistered = try await sandbox.keyport(["url-scheme", "unregister", scheme])
        #expect(unregistered.status == 0)
        #expect(unregistered.stdout == "keyport no longer handles \(scheme): URLs\n")
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(
            try await sandbox.run("/usr/bin/xdg-mime", ["query", "default", "x-scheme-handler/\(scheme)"]).stdout == ""
        )
        let again = try await sandbox.keyport(["url-scheme", "unregister", scheme])
        #expect(again.status == 0)
        #expect(again.stdout == "nothing was registered for \(scheme): URLs\n")
    }

    @Test("open with nobody waiting exits 1, says the URL was not used, and never prints its query")
    func openUnused() async throws {
        let sandbox = try DesktopSandbox()
        defer { sandbox.remove() }
        let result = try await sandbox.keyport([
            "url-scheme", "open", "com.example.app:/callback?code=SECRETCODE&state=s#frag",
        ])
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr
                == "keyport: no Keyport session is waiting for this URL (com.example.app:/callback); it was not used\n"
        )
        #expect(!result.stderr.contains("SECRETCODE"))
    }

    @Test("open refuses to use a socket directory open to others (exit 2)")
    func openUnsafeDirectory() async throws {
        let sandbox = try DesktopSandbox()
        defer { sandbox.remove() }
        let directory = SchemeCallbackListener.defaultDirectory(environment: sandbox.environment)
        try FileManager.default.createDirectory(
            at: directory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o777]
        )
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        let result = try await sandbox.keyport(["url-scheme", "open", "com.example.app:/callback?code=SECRETCODE"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("chmod 700"))
        #expect(!result.stderr.contains("SECRETCODE"))
    }

    @Test("without XDG_RUNTIME_DIR, open finds the waiting session in ~/.cache/keyport/run/callbacks")
    func openWithoutRuntimeDirectory() async throws {
        let sandbox = try DesktopSandbox()
        defer { sandbox.remove() }
        var environment = sandbox.environment
        environment["XDG_RUNTIME_DIR"] = nil
        let listener = try await SchemeCallbackListener.start(
            scheme: "com.example.app",
            directory: nil,
            environment: environment
        ) { _ in true }
        #expect(
            listener.socketPath.hasPrefix(
                sandbox.root.appendingPathComponent("home/.cache/keyport/run/callbacks").path + "/"
            )
        )
        let result = try await runProgram(
            CLI.executable.path,
            ["url-scheme", "open", "com.example.app:/callback?code=1"],
            environment: environment
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            try await listener.waitForCallback(timeout: .seconds(60)).absoluteString
                == "com.example.app:/callback?code=1"
        )
    }

    @Test("an invalid name exits 1 naming the character; nothing is written")
    func invalidName() async throws {
        let sandbox = try DesktopSandbox()
        defer { sandbox.remove() }
        let result = try await sandbox.keyport(["url-scheme", "register", "com.example app"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("U+0020 (a space) at position 12"))
        let https = try await sandbox.keyport(["url-scheme", "register", "https"])
        #expect(https.status == 1)
        #expect(https.stderr.contains("browsers and the system handle themselves"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: sandbox.root.appendingPathComponent("data").path)
                .isEmpty
        )
    }

    @Test(
        "usage errors exit 2",
        arguments: [["url-scheme", "register"], ["url-scheme", "open"], ["url-scheme", "frobnicate", "x"]]
    )
    func usage(arguments: [String]) async throws {
        let sandbox = try DesktopSandbox()
        defer { sandbox.remove() }
        let result = try await sandbox.keyport(arguments)
        #expect(result.status == 2)
        #expect(!result.stderr.isEmpty)
    }
}
