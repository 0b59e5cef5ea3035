import Foundation
import KeyportSystem

// AutoFill in a real browser, measured in the page: from the person's click in the extension's
// menu to the fields filled (the content script's clock, `performance.timeOrigin + now()`, against
// the click event's time in the menu's frame), through the extension's background, keyport-browser
// (the native port already open), keyportd, Keyport Vault's provider (warm) and its keeper
// (unlocked). The first fill, with the host just started, is reported beside the rest. The browser
// is driven by the tests' own peer (Tests/KeyportBrowserTests/Peers/browser_autofill.py --bench),
// from the test venv that scripts/test makes; programs come from this build.
func browserFillBenchmark(runs: Int, browser: String) async throws {
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
            repository.appendingPathComponent("Tests/KeyportBrowserTests/Peers/browser_autofill.py").path,
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
    guard peer.termination == .exited(0),
        let report = try JSONSerialization.jsonObject(with: output) as? [String: Any],
        let cold = report["cold"] as? Double, let warm = report["warm"] as? [Double], !warm.isEmpty
    else {
        let said = String(decoding: peer.output?.standardError ?? Data(), as: UTF8.self)
        throw BenchFailure(description: "the browser peer failed: \(said.suffix(2000))")
    }
    let sorted = warm.sorted()
    func percentile(_ p: Double) -> Double {
        sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }
    print("browser fill (\(browser), \(warm.count) fills, measured in the page, click → fields filled):")
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
