import CredentialExchangeFormat
import Foundation
import KeyportInterfaces
import KeyportSystem
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// A credential exchange end to end: this program is the exporter (registered by a manifest that
// names it), keyportd and `keyport agent --auto` run from the same build directory, and this
// program again, started by keyportd, is the importer. Measured: from the export call until the
// importer holds the decoded document, beside the raw CXF decode and encode of the same document
// in the same run; and keyportd's resident memory idle and at its peak.

/// Monotonic nanoseconds, comparable between processes on one machine.
private func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// The importer's side, when keyportd starts this program: redeem, decode, write the time.
func exchangeImporter() async throws {
    let environment = ProcessInfo.processInfo.environment
    guard let token = environment[Exchange.importTokenVariable], let marker = environment["KEYPORT_BENCH_MARKER"] else {
        print("exchange-importer is started by keyportd")
        exit(2)
    }
    // As ASCredentialImportManager redeems: on the descriptor socket, the document a sealed
    // memory file, decoded where it is mapped.
    let connection = try DaemonClient.connectForDescriptors(environment: environment)
    try connection.send(
        VarlinkCall(
            method: Exchange.ImportCredentials.name,
            parameters: RawJSON(encoding: Exchange.ImportCredentials.Parameters(token: token))
        )
    )
    let (reply, descriptors) = try connection.nextReply()
    guard let index = try reply.parameters.decode(Exchange.ImportCredentials.Reply.self).dataDescriptor,
        let descriptor = descriptors.take(index)
    else { exit(1) }
    let decoded = try MemoryFile(checking: descriptor).withBytes { try CXF.Decoder().decode($0) }
    let done = monotonicNanoseconds()
    let items = decoded.document.accounts.reduce(0) { $0 + $1.items.count }
    try "\(done) \(items)".write(toFile: marker, atomically: true, encoding: .utf8)
}

/// Runs `rounds` exchanges of a document of `items` items and prints the times.
func exchangeBenchmark(items: Int, rounds: Int) async throws {
    let keyportd = buildDirectory.appendingPathComponent("keyportd").path
    let keyport = buildDirectory.appendingPathComponent("keyport").path
    let bench = buildDirectory.appendingPathComponent("KeyportBench").path
    for program in [keyportd, keyport] where !FileManager.default.isExecutableFile(atPath: program) {
        print("\(program) is missing: swift build -c release --product keyportd --product keyport first")
        exit(2)
    }
    let document = Generator.document(items: items)
    let bytes = CXF.Encoder().encode(document)
    print("exchange: \(items) items, \(bytes.count) bytes, \(rounds) rounds")

    // A private sandbox: sockets, manifests, settings.
    let root = try benchSandbox("kp-bench", making: ["data/keyport/providers"])
    defer { try? FileManager.default.removeItem(at: root) }
    let providers = root.appendingPathComponent("data/keyport/providers")
    let marker = root.appendingPathComponent("imported").path
    // keyportd recognises an app by its program, and one program two manifests name is nobody's:
    // the importer runs as a program of its own, a link to (or copy of) this one.
    let importer = root.appendingPathComponent("KeyportBench-importer").path
    do {
        try FileManager.default.linkItem(atPath: bench, toPath: importer)
    } catch {
        try FileManager.default.copyItem(atPath: bench, toPath: importer)
    }
    for (id, exec) in [
        ("org.keyport.bench.exporter", [bench]), ("org.keyport.bench.importer", [importer, "exchange-importer"]),
    ] {
        let manifest: [String: Any] = [
            "id": id, "name": id, "exec": exec, "capabilities": ["SupportsCredentialExchange": true],
        ]
        try JSONSerialization.data(withJSONObject: manifest).write(to: providers.appendingPathComponent("\(id).json"))
    }
    var environment = benchEnvironment(root)
    environment["KEYPORT_BENCH_MARKER"] = marker
    for (name, value) in environment { setenv(name, value, 1) }

    let daemon = try ChildProcess(executable: keyportd, arguments: ["--allow-scripted-agent"], environment: environment)
    defer { daemon.signalGroup(SIGTERM) }
    // keyportd listens once its socket exists; then the agent can connect.
    while !FileManager.default.fileExists(atPath: environment["KEYPORT_SOCKET"]!) { usleep(10_000) }
    let agent = try ChildProcess(
        executable: keyport,
        arguments: ["agent", "--auto", "accept:org.keyport.bench.importer"],
        environment: environment
    )
    defer { agent.signalGroup(SIGTERM) }
    try await Task.sleep(for: .milliseconds(500))
    let idle = memory(of: daemon.pid)

    var exchanges: [Double] = []
    var raw: [Double] = []
    for _ in 0..<rounds {
        try? FileManager.default.removeItem(atPath: marker)
        let start = monotonicNanoseconds()
        // As ASCredentialExportManager exports: RequestExport, then the document encoded into a
        // sealed memory file whose descriptor goes to keyportd's descriptor socket.
        let options = try await DaemonClient.withConnection(environment: environment) { connection in
            try await connection.call(Exchange.RequestExport.self, Exchange.RequestExport.Parameters())
        }
        let encoded = CXF.Encoder().encode(document)
        let file = try encoded.withUnsafeBytes { try MemoryFile(name: "bench-export", contents: $0) }
        let call = VarlinkCall(
            method: Exchange.ExportCredentials.name,
            parameters: RawJSON(
                encoding: Exchange.ExportCredentials.Parameters(export: options.export, data: nil, dataDescriptor: 0)
            )
        )
        _ = try await DaemonClient.withDescriptorConnection(
            environment: environment,
            sending: call,
            descriptors: [file.descriptor]
        ) { connection in try await connection.reply() }
        withExtendedLifetime(file) {}
        while !FileManager.default.fileExists(atPath: marker) { usleep(1_000) }
        let parts = try String(contentsOfFile: marker, encoding: .utf8).split(separator: " ")
        guard let done = UInt64(parts[0]), Int(parts[1]) == items else {
            fatalError("the importer did not get every item")
        }
        exchanges.append(Double(done - start) / 1e9)
        // The raw codec on the same document, moments apart.
        let (encode, again) = measure(1) { CXF.Encoder().encode(document) }
        let (decode, _) = try measure(1) { try CXF.Decoder().decode(again) }
        raw.append(encode + decode)
    }
    let peak = memory(of: daemon.pid)
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    let ratios = zip(exchanges, raw).map { $0 / $1 }
    print(
        String(
            format: "exchange (export call → importer holds the decoded document): median %.1f ms, best %.1f ms",
            median(exchanges) * 1000,
            exchanges.min()! * 1000
        )
    )
    print(
        String(
            format: "raw CXF encode + decode of the same document:                 median %.1f ms, best %.1f ms",
            median(raw) * 1000,
            raw.min()! * 1000
        )
    )
    print(String(format: "median ratio per round: %.2fx the raw codec", median(ratios)))
    print(
        String(
            format: "keyportd resident memory: idle %.1f MB; peak %.1f MB (%.1fx the document)",
            Double(idle.resident) / 1e6,
            Double(peak.peak) / 1e6,
            Double(peak.peak - idle.resident) / Double(bytes.count)
        )
    )
}

/// Where an exchange's time goes, piece by piece (a profiling aid).
func exchangeParts(items: Int) throws {
    let document = Generator.document(items: items)
    let bytes = CXF.Encoder().encode(document)
    func time(_ name: String, _ body: () throws -> Void) rethrows {
        let (seconds, _) = try measure(3) { try body() }
        print(String(format: "%-40@ %8.1f ms", name as NSString, seconds * 1000))
    }
    time("CXF encode (exporter)") { _ = CXF.Encoder().encode(document) }
    try time("into a sealed memory file (exporter)") {
        _ = try bytes.withUnsafeBytes { try MemoryFile(name: "bench", contents: $0) }
    }
    let file = try bytes.withUnsafeBytes { try MemoryFile(name: "bench", contents: $0) }
    try time("header check on the mapping (keyportd)") {
        _ = try file.withBytes { try CXF.Decoder().peekHeader($0) }
    }
    try time("CXF decode of the mapping (importer)") { _ = try file.withBytes { try CXF.Decoder().decode($0) } }
    try time("CXF decode of an array") { _ = try CXF.Decoder().decode(bytes) }
}

/// Keyport's one JSON reader (KeyportEncoding's `JSONReader`) skipping the same 40 MB document
/// whole through its two users: VarlinkCore's `JSONCursor` (messages) and the CXF decoder
/// (reached through `peekHeader`, which skips `accounts` when the version comes after it).
func jsonReaders(items: Int) throws {
    var bytes = CXF.Encoder().encode(Generator.document(items: items))
    // Move "version" to the end, so that the header peek skips everything before it.
    let text = String(decoding: bytes, as: UTF8.self)
    guard let range = text.range(of: #""version":{"major":1,"minor":0},"#) else { return }
    bytes =
        Array(text.replacingCharacters(in: range, with: "").dropLast().utf8)
        + Array(#","version":{"major":1,"minor":0}}"#.utf8)
    func time(_ name: String, _ body: () throws -> Void) rethrows {
        let (seconds, _) = try measure(5) { try body() }
        print(
            String(
                format: "%-34@ %8.1f ms  %6.0f MB/s",
                name as NSString,
                seconds * 1000,
                Double(bytes.count) / seconds / 1e6
            )
        )
    }
    try time("VarlinkCore JSONCursor.skipValue") {
        var cursor = JSONCursor(bytes)
        try cursor.skipValue()
    }
    try time("CXF decoder (peekHeader)") {
        let header = try bytes.withUnsafeBytes { try CXF.Decoder().peekHeader($0) }
        precondition(header.major == 1)
    }
}
