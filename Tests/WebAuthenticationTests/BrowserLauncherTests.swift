import Foundation
import Testing
import WebAuthentication

@Suite("Browser launching")
struct BrowserLauncherTests {
    let url = URL(string: "https://auth.example/authorize?client_id=x&state=y")!

    @Test("$BROWSER entries in order, %s replaced or the URL appended, then xdg-open")
    func candidates() {
        let launcher = BrowserLauncher(environment: ["BROWSER": "firefox --new-window:w3m %s::chromium"])
        #expect(launcher.candidates(for: url) == [
            ["firefox", "--new-window", url.absoluteString], ["w3m", url.absoluteString], ["chromium", url.absoluteString],
            ["xdg-open", url.absoluteString],
        ])
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
    func launches() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyport-launcher-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("opened")
        let script = directory.appendingPathComponent("fake-browser")
        try "#!/bin/sh\nprintf '%s' \"$1\" > '\(log.path)'\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)

        let launcher = BrowserLauncher(environment: ["BROWSER": "no-such-browser:\(script.path)", "PATH": "/usr/bin:/bin"])
        #expect(launcher.open(url) == .launched(command: [script.path, url.absoluteString]))
        var opened = ""
        for _ in 0..<600 where opened.isEmpty {  // up to 30 s on a busy machine
            opened = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(opened == url.absoluteString)
    }

    @Test("the browser starts with no signal blocked, so it can be asked to quit")
    func signalMask() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keyport-launcher-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("mask")
        let script = directory.appendingPathComponent("fake-browser")
        try "#!/bin/sh\nexec grep -e Sig /proc/self/status > '\(log.path)'\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        // Launched from a task, as a session does: Swift's worker threads block most signals.
        let outcome = await Task.detached { BrowserLauncher(environment: ["BROWSER": script.path, "PATH": "/usr/bin:/bin"]).open(url) }.value
        #expect(outcome == .launched(command: [script.path, url.absoluteString]))
        var mask = ""
        for _ in 0..<600 where !mask.hasSuffix("\n") {  // up to 30 s on a busy machine
            mask = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            try await Task.sleep(for: .milliseconds(50))
        }
        let blocked = mask.split(separator: "\n").first { $0.hasPrefix("SigBlk:") }
        #expect(blocked?.hasSuffix("0000000000000000") == true, "\(mask)")
    }
}
