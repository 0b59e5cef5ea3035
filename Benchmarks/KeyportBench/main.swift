import CredentialExchangeFormat
import Foundation
import KeyportSystem

// Release-built benchmarks; see docs/performance.md for the numbers and how to run them.
//   swift run -c release KeyportBench cxf [items]
//   swift run -c release KeyportBench cxf-document [items] > doc.json   (the benchmark's document, to measure memory)
//   swift build -c release && .build/release/KeyportBench cxf-commands [items]   (keyport cxf validate/fmt, whole processes)
//   swift run -c release KeyportBench otp [codes]
//   swift run -c release KeyportBench webauth [sessions]
//   swift build -c release && .build/release/KeyportBench exchange [items]   (keyportd and keyport from the same build)
//   swift build -c release && .build/release/KeyportBench autofill [identities] [runs] [spread|one-domain]
//   swift run -c release KeyportBench vault [items] [spread|one-domain]
//   swift build -c release && .build/release/KeyportBench vault-autofill [items] [runs]
//   swift build -c release && .build/release/KeyportBench vault-keepassxc [entries] [spread|one-domain]
//   swift build -c release && .build/release/KeyportBench vault-import [items] [rounds] [spread|one-domain]   (`keyport vault import` of CXF beside `keyport cxf validate`)
//   swift run -c release KeyportBench vault-import-document [items] [spread|one-domain] > items.json   (that benchmark's document)
//   swift build -c release && .build/release/KeyportBench browser-fill [runs] [chromium]   (scripts/test's venv)
//   swift build -c release && .build/release/KeyportBench browser-passkeys [runs]   (Chromium, scripts/test's venv)
//   swift build -c release && .build/release/KeyportBench passkeys [runs]   (through keyport-browser, no browser)

/// The best time of `runs` calls of `body`, and its last result. The previous run's result is
/// freed before the clock starts, so no run pays for freeing another's output.
func measure<T>(_ runs: Int, _ body: () throws -> T) rethrows -> (seconds: Double, result: T) {
    var best = Double.infinity
    var last: T? = nil
    for _ in 0..<runs {
        last = nil
        let start = DispatchTime.now().uptimeNanoseconds
        let result = try body()
        best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        last = result
    }
    return (best, last!)
}

/// The directory this program was built into, where keyportd, keyport and the apps are beside it.
let buildDirectory = URL(fileURLWithPath: Executable.directory ?? FileManager.default.currentDirectoryPath)

/// Keyport's locations and XDG directories inside `root`, as the benchmarks' keyportd, vault
/// keepers and commands share them: the sockets in `run/`, no system-wide data directories, quiet
/// logs, providers kept warm between requests.
func benchEnvironment(_ root: URL) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["KEYPORT_SOCKET"] = root.appendingPathComponent("run/d.sock").path
    environment["KEYPORT_VAULT_SOCKET"] = root.appendingPathComponent("run/vault.sock").path
    environment["XDG_DATA_HOME"] = root.appendingPathComponent("data").path
    environment["XDG_DATA_DIRS"] = root.appendingPathComponent("none").path
    environment["XDG_CONFIG_HOME"] = root.appendingPathComponent("config").path
    environment["XDG_STATE_HOME"] = root.appendingPathComponent("state").path
    environment["KEYPORT_LOG"] = "warning"
    environment["KEYPORT_PROVIDER_IDLE"] = "3600"
    return environment
}

/// A new private sandbox for a benchmark (``privateDirectory(_:)``) with `run/` and each of
/// `directories` made in it (0700).
func benchSandbox(_ prefix: String, making directories: [String] = []) throws -> URL {
    let root = privateDirectory(prefix)
    for directory in ["run"] + directories {
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent(directory),
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
    }
    return root
}

/// The programs a benchmark that runs Keyport's own processes needs from this build and the test
/// venv's Python; says which is missing and exits 2 otherwise.
func requireBuilt(_ programs: [String]) -> (repository: URL, python: String) {
    let repository = buildDirectory.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let python = repository.appendingPathComponent(".venv/bin/python3").path
    for program in programs
    where !FileManager.default.isExecutableFile(atPath: buildDirectory.appendingPathComponent(program).path) {
        print("\(program) is missing: swift build -c release --product \(program) first")
        exit(2)
    }
    guard FileManager.default.isExecutableFile(atPath: python) else {
        print("the test venv is missing (\(python)): run scripts/test once")
        exit(2)
    }
    return (repository, python)
}

/// keyportd started with `environment`, and Keyport Vault made, enabled as its provider and
/// unlocked with `keyport` from this build: what the browser and passkey benchmarks measure on.
func startKeyportdWithVault(
    _ environment: [String: String],
    streams: ChildProcess.Streams = .null
) async throws -> ChildProcess {
    let daemon = try ChildProcess(
        executable: buildDirectory.appendingPathComponent("keyportd").path,
        arguments: [],
        environment: environment,
        streams: streams
    )
    let socket = environment["KEYPORT_SOCKET"]!
    for _ in 0..<300 where !FileManager.default.fileExists(atPath: socket) {
        try await Task.sleep(for: .milliseconds(10))
    }
    for (arguments, input) in [
        (["vault", "init", "--passphrase-stdin"], "open sesame\n"),
        (["providers", "enable", "org.keyport.vault"], nil),
        (["vault", "unlock", "--passphrase-stdin"], "open sesame\n"),
    ] {
        try await runKeyport(arguments, input, environment)
    }
    return daemon
}

/// Runs `keyport` from this build to its end; throws when it fails.
func runKeyport(_ arguments: [String], _ input: String? = nil, _ environment: [String: String]) async throws {
    let child = try ChildProcess(
        executable: buildDirectory.appendingPathComponent("keyport").path,
        arguments: arguments,
        environment: environment,
        streams: .captured(input: input.map { Data($0.utf8) })
    )
    await child.waitForExit()
    guard child.termination == .exited(0) else {
        throw BenchFailure(description: "keyport \(arguments.joined(separator: " ")) failed")
    }
}

/// A new private (0700) directory under the temporary directory, named `prefix-XXXXXX`.
func privateDirectory(_ prefix: String) -> URL {
    var template = Array((FileManager.default.temporaryDirectory.path + "/\(prefix)-XXXXXX").utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        print("cannot make a directory under \(FileManager.default.temporaryDirectory.path)")
        exit(2)
    }
    return URL(fileURLWithPath: String(cString: made))
}

/// `VmRSS` and `VmHWM` of a process, in bytes (0 once it has ended).
func memory(of pid: pid_t) -> (resident: Int, peak: Int) {
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    func value(_ key: String) -> Int {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }) else { return 0 }
        return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
    }
    return (value("VmRSS"), value("VmHWM"))
}

/// The resident memory of `pid` once it has settled: read every half second until two readings
/// are within 1 MB of each other (at most 30 s), since a process may still be freeing what its
/// last piece of work needed.
func settledMemory(of pid: pid_t) async -> Int {
    var last = memory(of: pid).resident
    for _ in 0..<60 {
        try? await Task.sleep(for: .milliseconds(500))
        let now = memory(of: pid).resident
        if abs(now - last) < 1_000_000 { return now }
        last = now
    }
    return last
}

func mbps(_ bytes: Int, _ seconds: Double) -> String {
    String(format: "%7.1f MB/s (%6.1f ms)", Double(bytes) / 1e6 / seconds, seconds * 1000)
}

/// Times Keyport's codec and Foundation's on the same document. The machines this runs on vary in
/// speed from second to second, so the five operations run interleaved, round after round: each
/// round's ratio compares runs made moments apart, and the median ratio is reported beside the
/// best time of each operation.
func cxfBenchmark(items: Int, rounds: Int) throws {
    let document = Generator.document(items: items)
    let bytes = CXF.Encoder().encode(document)
    let data = Data(bytes)
    print("CXF document: \(items) items, \(bytes.count) bytes, \(rounds) interleaved rounds")

    let check = try CXF.Decoder().decode(bytes)
    precondition(check.document == document, "the decoded document differs from the generated one")
    precondition(check.diagnostics.isEmpty && CXF.Validator().validate(document).isEmpty, "the document is not clean")
    precondition(CXF.Encoder().encode(check.document) == bytes)
    let mirror = try JSONDecoder().decode(MirrorHeader.self, from: data)

    var best = [String: Double]()
    var decodeRatios: [Double] = []
    var encodeRatios: [Double] = []
    for _ in 0..<rounds {
        let (decode, decoded) = try measure(1) { try CXF.Decoder().decode(bytes) }
        let (validate, _) = measure(1) { CXF.Validator().validate(decoded.document) }
        let (encode, _) = measure(1) { CXF.Encoder().encode(decoded.document) }
        let (foundationDecode, _) = try measure(1) { try JSONDecoder().decode(MirrorHeader.self, from: data) }
        let (foundationEncode, _) = try measure(1) { try JSONEncoder().encode(mirror) }
        for (name, seconds) in [
            ("decode", decode), ("validate", validate), ("decode+validate", decode + validate), ("encode", encode),
            ("Foundation decode", foundationDecode), ("Foundation encode", foundationEncode),
        ] {
            best[name] = min(best[name] ?? .infinity, seconds)
        }
        decodeRatios.append(foundationDecode / (decode + validate))
        encodeRatios.append(foundationEncode / encode)
    }
    for name in ["decode", "validate", "decode+validate", "encode", "Foundation decode", "Foundation encode"] {
        print("\(name.padding(toLength: 20, withPad: " ", startingAt: 0)) \(mbps(bytes.count, best[name]!))")
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    print(
        String(
            format: "median ratio per round: decode+validate %.1fx Foundation decode; encode %.1fx Foundation encode",
            median(decodeRatios),
            median(encodeRatios)
        )
    )
}

let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "cxf", nil:
    try cxfBenchmark(items: arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000, rounds: 7)
case "cxf-commands":
    try cxfCommandsBenchmark(items: arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000, rounds: 7)
case "foundation-decode":
    try foundationDecode(arguments.dropFirst().first ?? "/dev/stdin")
case "foundation-fmt":
    try foundationFormat(arguments.dropFirst().first ?? "/dev/stdin")
case "cxf-document":
    let items = arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000
    FileHandle.standardOutput.write(Data(CXF.Encoder().encode(Generator.document(items: items))))
case "cxf-profile":
    // One phase of Keyport's codec over and over, for a profiler: decode, validate or encode.
    let phase = arguments.dropFirst().first ?? "decode"
    let document = Generator.document(items: 30_000)
    let bytes = CXF.Encoder().encode(document)
    for _ in 0..<20 {
        switch phase {
        case "validate": _ = CXF.Validator().validate(document)
        case "encode": _ = CXF.Encoder().encode(document)
        default: _ = try CXF.Decoder().decode(bytes)
        }
    }
case "otp":
    let codes = arguments.dropFirst().first.flatMap { Int($0) } ?? 2_000_000
    try otpBenchmark(codes: codes)
    otpPeers(codes: codes)
case "exchange":
    try await exchangeBenchmark(items: arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000, rounds: 5)
case "json-readers":
    try jsonReaders(items: arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000)
case "exchange-parts":
    try exchangeParts(items: arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000)
case "exchange-importer":
    try await exchangeImporter()
case "autofill":
    try await autoFillBenchmark(
        identities: arguments.dropFirst().first.flatMap { Int($0) } ?? 10_000,
        runs: arguments.dropFirst(2).first.flatMap { Int($0) } ?? 300,
        shape: SiteShape.named(arguments.dropFirst(3).first)
    )
case "vault-autofill":
    try await vaultAutoFillBenchmark(
        items: arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000,
        runs: arguments.dropFirst(2).first.flatMap { Int($0) } ?? 300
    )
case "vault-profile":
    try vaultImportProfile(items: arguments.dropFirst().first.flatMap { Int($0) } ?? 20_000)
case "vault":
    try vaultBenchmark(
        items: arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000,
        shape: SiteShape.named(arguments.dropFirst(2).first)
    )
case "vault-keepassxc":
    try await vaultKeePassXCBenchmark(
        entries: arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000,
        shape: SiteShape.named(arguments.dropFirst(2).first)
    )
case "vault-import":
    try await vaultImportBenchmark(
        items: arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000,
        rounds: arguments.dropFirst(2).first.flatMap { Int($0) } ?? 3,
        shape: SiteShape.named(arguments.dropFirst(3).first)
    )
case "vault-import-document":
    FileHandle.standardOutput.write(
        Data(
            vaultImportDocument(
                items: arguments.dropFirst().first.flatMap { Int($0) } ?? 100_000,
                shape: SiteShape.named(arguments.dropFirst(2).first)
            )
        )
    )
case "browser-fill":
    try await browserFillBenchmark(
        runs: arguments.dropFirst().first.flatMap { Int($0) } ?? 200,
        browser: arguments.dropFirst(2).first ?? "chromium"
    )
case "browser-passkeys":
    try await browserPasskeysBenchmark(runs: arguments.dropFirst().first.flatMap { Int($0) } ?? 200)
case "webauth":
    try await webAuthBenchmark(rounds: arguments.dropFirst().first.flatMap { Int($0) } ?? 200)
case "passkeys":
    try await passkeyBenchmark(runs: arguments.dropFirst().first.flatMap { Int($0) } ?? 200)
default:
    print(
        "usage: KeyportBench cxf [items] | cxf-profile decode|validate|encode | otp [codes] | webauth [sessions] | exchange [items] | autofill [identities] [runs] | vault [items] | vault-autofill [items] [runs] | vault-keepassxc [entries] | vault-import [items] [rounds] [spread|one-domain] | browser-fill [runs] | browser-passkeys [runs] | passkeys [runs]"
    )
    exit(2)
}
