import Foundation
import KeyportSystem

// Passkeys through keyport-browser, keyportd and Keyport Vault (its provider warm, the vault
// unlocked), as the browser extension asks: from the native messaging frame written to the host
// to its last reply read, for registrations (Create), sign-ins (Get) and ListPasskeys (keyportd
// alone: no provider is asked). The first Create and Get, with the host and the provider just
// started, are reported apart. Driven by the tests' own peer
// (Tests/KeyportVaultTests/Peers/passkeys_through_host.py --bench), with py_webauthn making the
// options; programs come from this build. The page's part (the extension's content script) is
// not in it. keyportd's own part of each call (all but the provider's time) is read from its log.
func passkeyBenchmark(runs: Int) async throws {
    let (repository, python) = requireBuilt(["keyportd", "keyport", "keyport-cli", "keyport-vault", "keyport-browser"])
    let root = try benchSandbox("kp-passkey-bench", making: ["home"])
    defer { try? FileManager.default.removeItem(at: root) }
    var environment = benchEnvironment(root)
    environment["HOME"] = root.appendingPathComponent("home").path
    // keyportd's log at info: its lines for each passkey made or used carry its own part.
    environment["KEYPORT_LOG"] = "info"
    let daemon = try await startKeyportdWithVault(environment, streams: .captured(input: nil))
    defer { daemon.signalGroup(SIGTERM) }
    let peer = try ChildProcess(
        executable: python,
        arguments: [
            repository.appendingPathComponent("Tests/KeyportVaultTests/Peers/passkeys_through_host.py").path,
            buildDirectory.appendingPathComponent("keyport-browser").path,
            repository.appendingPathComponent("Tests/KeyportPasskeysTests/Peers/relying_party.py").path,
            "webauthn", "https://login.example.com", "example.com", "--bench", "\(runs)",
        ],
        environment: environment,
        streams: .captured(input: nil)
    )
    await peer.waitForExit()
    await peer.output?.waitForEnd()
    guard peer.termination == .exited(0),
        let report = try JSONSerialization.jsonObject(with: peer.output?.standardOutput ?? Data())
            as? [String: [Double]]
    else {
        let said = String(decoding: peer.output?.standardError ?? Data(), as: UTF8.self)
        throw BenchFailure(description: "the peer failed: \(said.suffix(2000))")
    }
    func line(_ name: String, _ times: [Double], coldFirst: Bool) {
        let warm = (coldFirst ? Array(times.dropFirst()) : times).sorted()
        guard !warm.isEmpty else { return }
        func at(_ share: Double) -> Double { warm[min(warm.count - 1, Int(Double(warm.count) * share))] }
        let cold = coldFirst ? String(format: "cold %.1f ms, ", times[0]) : ""
        print(
            String(
                format: "%@: %@p50 %.2f ms, p99 %.2f ms, max %.2f ms (%d runs)",
                name,
                cold,
                at(0.5),
                at(0.99),
                warm.last!,
                warm.count
            )
        )
    }
    line("Create (registration)", report["create"] ?? [], coldFirst: true)
    line("Get (sign-in)", report["get"] ?? [], coldFirst: true)
    line("ListPasskeys (keyportd alone)", report["list"] ?? [], coldFirst: false)
    // keyportd logs `keyportd_ms=…` with each passkey made or used.
    let log = String(decoding: daemon.output?.standardError ?? Data(), as: UTF8.self).split(separator: "\n")
    for (name, event) in [("Create", "passkey registered"), ("Get", "passkey assertion")] {
        let own = log.filter { $0.contains(event) }.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("keyportd_ms=") }.flatMap { Double($0.dropFirst(12)) }
        }
        line("\(name), keyportd's own part", own, coldFirst: true)
    }
}
