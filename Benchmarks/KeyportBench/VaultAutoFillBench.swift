import CredentialExchangeFormat
import Foundation
import KeyportCrypto
import KeyportInterfaces
import KeyportSystem
import KeyportVault
import KeyportVaultKeeper
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// AutoFill from a large Keyport Vault, end to end: `keyport otp site-N.example` as a new process
// each time, through keyportd, the vault's provider (warm) and its keeper (unlocked), the vault
// holding `items` logins with a TOTP secret each, one site per item; and the memory the keeper and
// the provider hold meanwhile, beside the vault file's size. Then `keyport vault add` (a new
// process, the keeper unlocked) adding one login.
func vaultAutoFillBenchmark(items count: Int, runs: Int) async throws {
    let keyportd = buildDirectory.appendingPathComponent("keyportd").path
    let keyport = buildDirectory.appendingPathComponent("keyport").path
    let vaultProgram = buildDirectory.appendingPathComponent("keyport-vault").path
    let root = try benchSandbox("kp-vault-fill", making: ["data/keyport/providers", "config/keyport"])
    defer { try? FileManager.default.removeItem(at: root) }
    let environment = benchEnvironment(root)
    // As `keyport vault register` writes it: the vault's app and its keeper, each with the path.
    let vaultPath = try VaultLocations(environment: environment).defaultVault
    let manifest: [String: Any] = [
        "id": "org.keyport.vault", "name": "Keyport Vault", "exec": [vaultProgram, "provider", "--vault", vaultPath],
        "helpers": [[vaultProgram, "keeper", "--vault", vaultPath]],
        "capabilities": ["ProvidesPasswords": true, "ProvidesOneTimeCodes": true],
    ]
    try JSONSerialization.data(withJSONObject: manifest).write(
        to: root.appendingPathComponent("data/keyport/providers/vault.json")
    )
    try JSONEncoder().encode(["enabled": ["org.keyport.vault"]]).write(
        to: root.appendingPathComponent("config/keyport/settings.json")
    )

    let settled = environment
    // The vault, made here (its scrypt calibrated as `keyport vault init` does).
    let locations = try VaultLocations(environment: environment)
    let daemonSocket = try DaemonLocations(environment: environment).socket
    try FileManager.default.createDirectory(
        atPath: (locations.defaultVault as NSString).deletingLastPathComponent,
        withIntermediateDirectories: true
    )
    let passphrase = "bench passphrase"
    let vault = try Vault.create(
        at: locations.defaultVault,
        passphrase: SecretBytes(passphrase),
        kdf: ScryptParameters.calibrated()
    )
    let logins = (0..<count).map { number in
        CXF.Item(
            id: Data("item-\(number)".utf8),
            title: "Site \(number)",
            scope: CXF.CredentialScope(urls: ["https://site-\(number).example/login"]),
            credentials: [
                .basicAuth(
                    CXF.BasicAuth(
                        username: CXF.EditableField(value: "user\(number)"),
                        password: CXF.EditableField(fieldType: .concealedString, value: "password-\(number)")
                    )
                ),
                .totp(
                    CXF.TOTP(
                        secret: "JBSWY3DPEHPK3PXP",
                        period: 30,
                        digits: 6,
                        username: "user\(number)",
                        algorithm: .sha1
                    )
                ),
            ]
        )
    }
    _ = try vault.importItems(logins)
    let size = (try FileManager.default.attributesOfItem(atPath: locations.defaultVault)[.size] as? Int) ?? 0

    // A scripted agent answers for the person: the keeper asks them before `keyport vault add`, a
    // program it has not seen, writes to the vault.
    let daemon = try ChildProcess(executable: keyportd, arguments: ["--allow-scripted-agent"], environment: environment)
    defer { daemon.signalGroup(SIGTERM) }
    let keeper = try ChildProcess(
        executable: vaultProgram,
        arguments: ["keeper", "--vault", locations.defaultVault],
        environment: environment
    )
    defer { keeper.signalGroup(SIGTERM) }
    // Both listening, then the vault unlocked (its identities go to keyportd after the reply).
    let unlocked = await within(.seconds(60)) { () -> Bool? in
        while !Task.isCancelled {
            if (try? await VaultKeeperClient.call(
                locations,
                VaultKeeper.Unlock.name,
                RawJSON(encoding: VaultKeeper.Unlock.Parameters(path: locations.defaultVault, passphrase: passphrase))
            )) != nil, FileManager.default.fileExists(atPath: daemonSocket) {
                return true
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }
    guard unlocked != nil else { throw BenchFailure(description: "the keeper or keyportd did not start within 60 s") }
    // The identities reach keyportd a little after the unlock; the provider starts on the first request.
    let warm = await within(.seconds(120)) { () -> Bool? in
        while !Task.isCancelled {
            if (try? await spawnTimes(
                keyport,
                { _ in ["otp", "site-\(count - 1).example"] },
                environment: settled,
                runs: 1
            ))
                != nil
            {
                return true
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return nil
    }
    guard warm != nil else { throw BenchFailure(description: "AutoFill did not answer from the vault within 120 s") }
    let times = try await spawnTimes(
        keyport,
        { ["otp", "site-\(($0 * 7919) % count).example"] },
        environment: environment,
        runs: runs
    )
    let passwords = try await spawnTimes(
        keyport,
        { ["password", "https://site-\(($0 * 104_729) % count).example/"] },
        environment: environment,
        runs: runs
    )
    func residentMB(_ pid: pid_t) -> Double {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
    }
    let provider = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(pid_t.init).first
    { pid in
        ((try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? "").contains("provider")
            && ((try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? "").contains("keyport-vault")
    }

    let agent = try ChildProcess(
        executable: keyport,
        arguments: ["agent", "--auto", "accept-first"],
        environment: environment
    )
    defer { agent.signalGroup(SIGTERM) }
    // Adding one login through `keyport vault add`, a new process each time.
    let adds = try await spawnTimes(
        keyport,
        {
            [
                "vault", "add", "--passphrase-stdin", "--no-password", "--title", "new \($0)", "--url",
                "https://new-\($0).example/",
            ]
        },
        environment: environment,
        runs: 20
    )

    print("vault AutoFill: \(count) logins with TOTP, file \(size / 1_000_000) MB, \(runs) runs each")
    print(
        String(
            format: "keyport otp DOMAIN:        p50 %.1f ms, p99 %.1f ms",
            percentile(times, 0.5),
            percentile(times, 0.99)
        )
    )
    print(
        String(
            format: "keyport password URL:      p50 %.1f ms, p99 %.1f ms",
            percentile(passwords, 0.5),
            percentile(passwords, 0.99)
        )
    )
    print(
        String(
            format: "keyport vault add (one):   p50 %.1f ms, max %.1f ms",
            percentile(adds, 0.5),
            percentile(adds, 1)
        )
    )
    print(String(format: "keeper resident memory:     %.0f MB", residentMB(keeper.pid)))
    if let provider { print(String(format: "provider resident memory:  %.0f MB", residentMB(provider))) }
}
