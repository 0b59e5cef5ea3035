import Foundation
import KeyportTestSupport
import Testing
import WebAuthentication

@Suite("Browser launching")
struct BrowserLauncherTests {
    let url = URL(string: "https://auth.example/authorize?client_id=x&state=y")!

    @Test("$BROWSER entries in order, %s replaced or the URL appended, then xdg-open")
    func candidates() {
        let launcher = BrowserLauncher(environment: ["BROWSER": "firefox --new-window:w3m %s::chromium"])
        #expect(
            launcher.candidates(for: url) == [
                ["firefox", "--new-window", url.absoluteString], ["w3m", url.absoluteString],
                ["chromium", url.absoluteString],
                ["xdg-open", url.absoluteString],
            ]
        )
        #expect(BrowserLauncher(environment: [:]).candidates(for: url) == [["xdg-open", url.absoluteString]])
    }

    @Test("no display and no $BROWSER: nothing is launched, the URL is to be shown")
    func headless() {
        let outcome = BrowserLauncher(environment: ["PATH": "/usr/bin:/bin"]).open(url)
        guard case .showURL(let reason) = outcome else {
            Issue.record("expected the URL to be shown, got \(outcome)")
            return
        }
        #expect(reason.contains("no display"))
    }

    @Test("a $BROWSER program really runs, with the URL as its argument")
    func launches() async throws {
        let scratch = try TemporaryDirectory("keyport-launcher-test")
        defer { scratch.remove() }
        let directory = scratch.url
        let log = directory.appendingPathComponent("opened")
        let script = directory.appendingPathComponent("fake-browser")
        try "#!/bin/sh\nprintf '%s' \"$1\" > '\(log.path)'\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)

        let launcher = BrowserLauncher(environment: [
            "BROWSER": "no-such-browser:\(script.path)", "PATH": "/usr/bin:/bin",
        ])
        #expect(launcher.open(url) == .launched(command: [script.path, url.absoluteString]))
        var opened = ""
        _ = try await FileChanges.waitUntil(within: .seconds(30), changesIn: directory) {
            opened = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            return !opened.isEmpty
        }
        #expect(opened == url.absoluteString)
    }

    @Test("the browser starts with no signal blocked, so it can be asked to quit")
    func signalMask() async throws {
        let scratch = try TemporaryDirectory("keyport-launcher-test")
        defer { scratch.remove() }
        let directory = scratch.url
        let log = directory.appendingPathComponent("mask")
        let script = directory.appendingPathComponent("fake-browser")
        try "#!/bin/sh\nexec grep -e Sig /proc/self/status > '\(log.path)'\n".write(
            to: script,
            atomically: true,
            encoding: .utf8
        )
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        // Launched from a task, as a session does: Swift's worker threads block most signals.
        let outcome = await Task.detached {
            BrowserLauncher(environment: ["BROWSER": script.path, "PATH": "/usr/bin:/bin"]).open(url)
        }.value
        #expect(outcome == .launched(command: [script.path, url.absoluteString]))
        var mask = ""
        _ = try await FileChanges.waitUntil(within: .seconds(30), changesIn: directory) {
            mask = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            return mask.hasSuffix("\n")
        }
        let blocked = mask.split(separator: "\n").first { $0.hasPrefix("SigBlk:") }
        #expect(blocked?.hasSuffix("0000000000000000") == true, "\(mask)")
    }
}
