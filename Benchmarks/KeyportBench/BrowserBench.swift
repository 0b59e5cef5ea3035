import Foundation
import KeyportSystem

// AutoFill and passkeys in a real browser, measured in the page: from the person's click in the
// extension's menu or prompt to the fields filled, or to the credential in the page's hands (the
// content script's clock, `performance.timeOrigin + now()`, against the click event's time in the
// menu's frame), through the extension's background, keyport-browser (the native port already
// open), keyportd, Keyport Vault's provider (warm) and its keeper (unlocked). The first, with the
// host just started, is reported beside the rest. The browser is driven by the tests' own peers
// (Tests/KeyportBrowserTests/Peers/browser_autofill.py or browser_passkeys.py, --bench), from the
// test venv that scripts/test makes; programs come from this build.

/// `browser-fill`: click → fields filled.
func browserFillBenchmark(runs: Int, browser: String) async throws {
    let report = try await browserPeer("browser_autofill.py", runs: runs, browser: browser)
    try printBrowserTimes("browser fill (\(browser), click → fields filled)", report)
}

/// `browser-passkeys`: click → assertion in the page, and a registration (Chromium: the page's
/// console carries the times).
func browserPasskeysBenchmark(runs: Int) async throws {
    let report = try await browserPeer("browser_passkeys.py", runs: runs, browser: "chromium")
    if let registration = report["registration"] as? Double {
        print(
            String(
                format: "browser passkeys (chromium): a registration, click → credential in the page: %.1f ms",
                registration
            )
        )
    }
    try printBrowserTimes("browser passkeys (chromium, click → assertion in the page)", report)
}

/// Runs the peer `script` with `--bench runs` against keyportd, Keyport Vault and the extension of
/// this build: its JSON report.
private func browserPeer(_ script: String, runs: Int, browser: String) async throws -> [String: Any] {
    let (repository, python) = requireBuilt(["keyportd", "keyport", "keyport-cli", "keyport-vault", "keyport-browser"])
    let keyport = buildDirectory.appendingPathComponent("keyport").path
    let root = try benchSandbox("kp-browser-bench", making: ["home", "work"])
    defer { try? FileManager.default.removeItem(at: root) }
    var environment = benchEnvironment(root)
    environment["HOME"] = root.appendingPathComponent("home").path
    environment["XDG_RUNTIME_DIR"] = root.appendingPathComponent("run").path
    let daemon = try await startKeyportdWithVault(environment)
    defer { daemon.signalGroup(SIGTERM) }
    try await runKeyport(
        ["browser", "install", "--browser", browser, "--extension", repository.appendingPathComponent("browser").path],
        nil,
        environment
    )

    let peer = try ChildProcess(
        executable: python,
        arguments: [
            repository.appendingPathComponent("Tests/KeyportBrowserTests/Peers/\(script)").path,
            "--browser", browser, "--keyport", keyport, "--extension",
            repository.appendingPathComponent("browser").path,
            "--work", root.appendingPathComponent("work").path, "--bench", "\(runs)",
        ],
        environment: environment,
        streams: .captured(input: nil)
    )
    await peer.waitForExit()
    await peer.output?.waitForEnd()
    let output = peer.output?.standardOutput ?? Data()
    guard peer.termination == .exited(0), let report = try JSONSerialization.jsonObject(with: output) as? [String: Any]
    else {
        let said = String(decoding: peer.output?.standardError ?? Data(), as: UTF8.self)
        throw BenchFailure(description: "the browser peer failed: \(said.suffix(2000))")
    }
    return report
}

/// The report's first (`cold`) time, and the percentiles of the rest (`warm`).
private func printBrowserTimes(_ title: String, _ report: [String: Any]) throws {
    guard let cold = report["cold"] as? Double, let warm = report["warm"] as? [Double], !warm.isEmpty else {
        throw BenchFailure(description: "the browser peer measured nothing: \(report)")
    }
    let sorted = warm.sorted()
    func percentile(_ p: Double) -> Double {
        sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }
    print("\(title), \(warm.count) runs:")
    print(String(format: "  first (host just started): %.1f ms", cold))
    print(
        String(
            format: "  p50 %.1f ms   p90 %.1f ms   p99 %.1f ms   max %.1f ms",
            percentile(0.5),
            percentile(0.9),
            percentile(0.99),
            sorted.last!
        )
    )
}
