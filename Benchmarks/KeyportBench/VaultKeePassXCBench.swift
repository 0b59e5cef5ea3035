import Foundation
import KeyportSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Keyport Vault beside KeePassXC on the same entries, each through its own command line, in one
// run: a KeePass 2 XML file of `entries` logins (title, user, password, URL, a note and a TOTP
// secret each, times, an earlier version in the history), as KeePassXC writes it (made by
// `keepassxc-cli import` of a generated file and `keepassxc-cli export --format xml`), is
// imported by `keyport vault import` (into a vault unlocked in its keeper) and by
// `keepassxc-cli import` (into a new database); then one entry is shown, and one added, by each.
// KeePassXC opens its whole database for every command, so its `show` and `add` are compared with
// Keyport's both warm (the keeper unlocked) and cold (`unlock`, then `show`). Peak memory is the
// process's VmHWM, read every 10 ms while it runs.
func vaultKeePassXCBenchmark(entries count: Int, shape: SiteShape) async throws {
    let keepassxc = "/usr/bin/keepassxc-cli"
    guard FileManager.default.isExecutableFile(atPath: keepassxc) else {
        throw BenchFailure(description: "\(keepassxc) is missing: scripts/test installs it (Debian's keepassxc)")
    }
    let keyport = buildDirectory.appendingPathComponent("keyport").path
    let root = try benchSandbox("kp-vault-keepassxc")
    defer {
        // The vault's keeper, which `keyport vault unlock` started, listens on this run's socket.
        _ = try? ChildProcess.run(
            executable: keyport,
            arguments: ["vault", "lock"],
            environment: benchEnvironment(root)
        )
        for pid in keepers(of: root) { kill(pid, SIGTERM) }
        try? FileManager.default.removeItem(at: root)
    }
    let environment = benchEnvironment(root)
    // The file is what KeePassXC writes: the generated entries (each with an earlier version in
    // its history) imported by keepassxc-cli into a database, and that database exported as
    // XML — with KeePassXC's `<Times>` on every entry and in every history entry.
    let generated = root.appendingPathComponent("generated.xml").path
    try keePassXML(entries: count, shape: shape).write(toFile: generated, atomically: false, encoding: .utf8)
    let source = root.appendingPathComponent("source.kdbx").path
    _ = try await timed(keepassxc, ["import", "-p", generated, source], environment: environment, input: "pw\npw\n")
    let xml = root.appendingPathComponent("entries.xml").path
    try await exportXML(keepassxc, database: source, to: xml, environment: environment)
    try? FileManager.default.removeItem(atPath: generated)
    let size = (try FileManager.default.attributesOfItem(atPath: xml)[.size] as? Int) ?? 0
    print(
        "\(count) entries, sites \(shape.rawValue), KeePass XML as keepassxc-cli exports it \(size / 1_000_000) MB; keepassxc-cli \(try version(keepassxc))"
    )

    func keyportRun(_ arguments: [String], _ input: String? = nil) async throws -> Timed {
        try await timed(keyport, arguments, environment: environment, input: input)
    }
    let passphrase = "bench passphrase\n"
    _ = try await keyportRun(["vault", "init", "--passphrase-stdin"], passphrase)
    _ = try await keyportRun(["vault", "unlock", "--passphrase-stdin"], passphrase)
    let keyportImport = try await keyportRun(["vault", "import", xml])
    // `vault show HOST` as a person runs it, the `keyport` front (one call to the keeper), beside
    // keyport-cli given the same command (Foundation, swift-nio and ArgumentParser starting),
    // round by round: 200 each, for a p99.
    let keyportCLI = buildDirectory.appendingPathComponent("keyport-cli").path
    var warm: [Double] = []
    var warmCLI: [Double] = []
    for round in 0..<200 {
        let arguments = ["vault", "show", shape.host(round * 4099 % count)]
        warm += try await spawnTimes(keyport, { _ in arguments }, environment: environment, runs: 1)
        warmCLI += try await spawnTimes(keyportCLI, { _ in arguments }, environment: environment, runs: 1)
    }
    var cold: [Double] = []
    for index in 0..<3 {
        _ = try await keyportRun(["vault", "lock"])
        let unlock = try await keyportRun(["vault", "unlock", "--passphrase-stdin"], passphrase)
        let show = try await keyportRun(["vault", "show", shape.host(index * 7919 % count)])
        cold.append(unlock.ms + show.ms)
    }
    var adds: [Double] = []
    for index in 0..<11 {
        let url = "https://added-\(index).example/"
        adds.append(
            try await keyportRun(
                ["vault", "add", "--passphrase-stdin", "--title", "Added \(index)", "--url", url, "--user", "u"],
                "a password\n"
            ).ms
        )
    }
    // Once the import, the look-ups and the adds are done and the keeper has settled (after each
    // unlock it sends AutoFill the identities of every item): what it keeps, and its peak.
    var agentMemory = 0
    var agentPeak = 0
    for keeper in keepers(of: root) {
        agentMemory = max(agentMemory, await settledMemory(of: keeper))
        agentPeak = max(agentPeak, memory(of: keeper).peak)
    }
    let vaultSize =
        (try FileManager.default.attributesOfItem(
            atPath: root.appendingPathComponent("data/keyport/vault.keyport").path
        )[
            .size
        ] as? Int) ?? 0

    let database = root.appendingPathComponent("entries.kdbx").path
    let keepassImport = try await timed(
        keepassxc,
        ["import", "-p", xml, database],
        environment: environment,
        input: "pw\npw\n"
    )
    var keepassShows: [Timed] = []
    for index in 0..<3 {
        keepassShows.append(
            try await timed(
                keepassxc,
                ["show", database, "Site \(index * 7919 % count)"],
                environment: environment,
                input: "pw\n"
            )
        )
    }
    var keepassAdds: [Double] = []
    for index in 0..<3 {
        keepassAdds.append(
            try await timed(
                keepassxc,
                ["add", "-u", "u", "--url", "https://added-\(index).example/", "-p", database, "Added \(index)"],
                environment: environment,
                input: "pw\na password\n"
            ).ms
        )
    }
    let databaseSize = (try FileManager.default.attributesOfItem(atPath: database)[.size] as? Int) ?? 0

    func line(_ what: String, _ keyport: String, _ keepass: String) {
        print(
            what.padding(toLength: 34, withPad: " ", startingAt: 0)
                + keyport.padding(toLength: 30, withPad: " ", startingAt: 0) + keepass
        )
    }
    func ms(_ value: Double) -> String {
        value >= 1000 ? String(format: "%.2f s", value / 1000) : String(format: "%.1f ms", value)
    }
    func mb(_ bytes: Int) -> String { "\(bytes / 1_000_000) MB" }
    let showTimes = keepassShows.map(\.ms).sorted()
    line("", "Keyport Vault", "KeePassXC")
    line(
        "import \(count) (XML file)",
        "\(ms(keyportImport.ms)), peak \(mb(keyportImport.peak))",
        "\(ms(keepassImport.ms)), peak \(mb(keepassImport.peak))"
    )
    line(
        "show one entry",
        "\(ms(percentile(warm, 0.5))) p50, \(ms(percentile(warm, 0.99))) p99",
        "\(ms(showTimes[1])) median of 3, peak \(mb(keepassShows.map(\.peak).max() ?? 0))"
    )
    line(
        "  by keyport-cli (before)",
        "\(ms(percentile(warmCLI, 0.5))) p50, \(ms(percentile(warmCLI, 0.99))) p99",
        ""
    )
    line("  cold: unlock + show", "\(ms(cold.sorted()[1])) median of 3", "")
    line("add one entry", "\(ms(percentile(adds, 0.5))) p50", "\(ms(keepassAdds.sorted()[1])) median of 3")
    line("file", mb(vaultSize), mb(databaseSize))
    line(
        "memory holding it open",
        "keeper \(mb(agentMemory)) (peak \(mb(agentPeak)))",
        "(nothing stays open)"
    )
}

/// `keepassxc-cli export --format xml DATABASE` (password `pw`) into `path`.
private func exportXML(
    _ keepassxc: String,
    database: String,
    to path: String,
    environment: [String: String]
) async throws {
    let child = try ChildProcess(
        executable: keepassxc,
        arguments: ["export", "--format", "xml", database],
        environment: environment,
        streams: .captured(input: Data("pw\n".utf8))
    )
    await child.waitForExit()
    guard let output = child.output else { throw BenchFailure(description: "keepassxc-cli export: no output") }
    await output.waitForEnd()
    guard child.termination == .exited(0), output.standardOutput.count > 0 else {
        throw BenchFailure(
            description: "keepassxc-cli export failed: \(String(decoding: output.standardError, as: UTF8.self))"
        )
    }
    try output.standardOutput.write(to: URL(fileURLWithPath: path))
}

/// A run's wall time and its process's peak resident memory.
struct Timed {
    var ms: Double
    var peak: Int
}

/// Runs `program` to its end with `input` on standard input; throws when it fails.
func timed(
    _ program: String,
    _ arguments: [String],
    environment: [String: String],
    input: String?
) async throws -> Timed {
    let start = ContinuousClock.now
    let child = try ChildProcess(
        executable: program,
        arguments: arguments,
        environment: environment,
        streams: .captured(input: Data((input ?? "").utf8))
    )
    let sampler = Task {
        var peak = 0
        while !Task.isCancelled {
            peak = max(peak, memory(of: child.pid).peak)
            try? await Task.sleep(for: .milliseconds(10))
        }
        return peak
    }
    await child.waitForExit()
    let elapsed = ContinuousClock.now - start
    sampler.cancel()
    let peak = await sampler.value
    guard child.termination == .exited(0) else {
        let output = child.output.map { String(decoding: $0.standardError, as: UTF8.self) } ?? ""
        throw BenchFailure(description: "\(program) \(arguments.joined(separator: " ")) failed: \(output)")
    }
    return Timed(
        ms: Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15,
        peak: peak
    )
}

func version(_ program: String) throws -> String {
    let ran = try ChildProcess.run(executable: program, arguments: ["--version"], environment: [:])
    return String(decoding: ran.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// The vault keepers listening in `root` (started by `keyport vault unlock`, with its socket in
/// their environment).
func keepers(of root: URL) -> [pid_t] {
    let own = "KEYPORT_VAULT_SOCKET=" + root.appendingPathComponent("run/vault.sock").path
    return ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry in
        guard let pid = pid_t(entry),
            let environ = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ")),
            environ.split(separator: 0).contains(where: { String(decoding: $0, as: UTF8.self) == own }),
            let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8),
            command.hasPrefix(
                buildDirectory.path
                    + "/keyport-vault"
            )
        else { return nil }
        return pid
    }
}

/// A KeePass 2 XML file of `count` logins in the root group: "Site N", user, password, URL
/// `https://HOST/login` (the hosts in `shape`), a note and a TOTP secret (KeePassXC's `otp`
/// attribute), times, and an earlier version with another password in its history.
private func keePassXML(entries count: Int, shape: SiteShape) -> String {
    var text = """
        <?xml version="1.0" encoding="utf-8" standalone="yes"?>
        <KeePassFile><Meta><Generator>KeyportBench</Generator></Meta><Root><Group>\
        <UUID>\(uuid(0))</UUID><Name>Root</Name>

        """
    text.reserveCapacity(count * 700)
    for index in 0..<count {
        let secret = ["JBSWY3DPEHPK3PXP", "GEZDGNBVGY3TQOJQ", "MFRGGZDFMZTWQ2LK"][index % 3]
        text += """
            <Entry><UUID>\(uuid(index + 1))</UUID>\
            <String><Key>Title</Key><Value>Site \(index)</Value></String>\
            <String><Key>UserName</Key><Value>user\(index)@example.org</Value></String>\
            <String><Key>Password</Key><Value ProtectInMemory="True">pw-\(index)-\(index &* 2_654_435_761 % 1_000_003)</Value></String>\
            <String><Key>URL</Key><Value>https://\(shape.host(index))/login</Value></String>\
            <String><Key>Notes</Key><Value>Entry \(index) of the benchmark</Value></String>\
            <String><Key>otp</Key><Value ProtectInMemory="True">otpauth://totp/Site%20\(index):user\(index)?secret=\(secret)&amp;period=30&amp;digits=6&amp;issuer=Site%20\(index)</Value></String>\
            <Times><CreationTime>2025-01-02T03:04:05Z</CreationTime><LastModificationTime>2026-06-07T08:09:10Z</LastModificationTime></Times>\
            <History><Entry><UUID>\(uuid(index + 1))</UUID>\
            <String><Key>Title</Key><Value>Site \(index)</Value></String>\
            <String><Key>UserName</Key><Value>user\(index)@example.org</Value></String>\
            <String><Key>Password</Key><Value ProtectInMemory="True">old-pw-\(index)</Value></String>\
            <String><Key>URL</Key><Value>https://\(shape.host(index))/login</Value></String>\
            <Times><CreationTime>2025-01-02T03:04:05Z</CreationTime><LastModificationTime>2025-01-02T03:04:05Z</LastModificationTime></Times>\
            </Entry></History>\
            </Entry>

            """
    }
    return text + "</Group></Root></KeePassFile>\n"
}

/// A 16-byte UUID, Base64 as KeePass writes it, numbered.
private func uuid(_ number: Int) -> String {
    var bytes = [UInt8](repeating: 0x4b, count: 16)
    withUnsafeBytes(of: UInt64(number).bigEndian) { bytes.replaceSubrange(8..<16, with: $0) }
    return Data(bytes).base64EncodedString()
}
