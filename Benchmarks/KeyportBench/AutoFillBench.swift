import Foundation
import KeyportDaemon
import KeyportDomains
import KeyportInterfaces
import KeyportSystem
import Logging
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// AutoFill end to end: `keyport otp DOMAIN` as a new process each time, until the code is on its
// standard output, with `identities` identities over three enabled providers (copies of
// ExampleProvider, kept warm by keyportd); beside `secret-tool lookup` against a headless
// gnome-keyring holding 1 000 items, in the same run. And keyportd's own matching, in process.

/// Why the benchmark could not run; thrown, so that what it started is stopped on the way out.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
}

/// Milliseconds from spawning `program` to its exit, `runs` times; throws if a run fails.
func spawnTimes(
    _ program: String,
    _ arguments: (Int) -> [String],
    environment: [String: String],
    runs: Int
)
    async throws -> [Double]
{
    var times: [Double] = []
    for run in 0..<runs {
        let start = ContinuousClock.now
        let child = try ChildProcess(
            executable: program,
            arguments: arguments(run),
            environment: environment,
            streams: .captured(input: nil)
        )
        await child.waitForExit()
        let elapsed = ContinuousClock.now - start
        guard child.termination == .exited(0) else {
            let output = child.output.map { String(decoding: $0.standardError, as: UTF8.self) } ?? ""
            throw BenchFailure(description: "\(program) \(arguments(run).joined(separator: " ")) failed: \(output)")
        }
        times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
    }
    return times
}

func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
}

func autoFillBenchmark(identities total: Int, runs: Int, shape: SiteShape) async throws {
    let keyportd = buildDirectory.appendingPathComponent("keyportd").path
    let keyport = buildDirectory.appendingPathComponent("keyport").path
    let provider = buildDirectory.appendingPathComponent("ExampleProvider").path
    for program in [keyportd, keyport, provider] where !FileManager.default.isExecutableFile(atPath: program) {
        print("\(program) is missing: swift build -c release first")
        exit(2)
    }
    for program in ["/usr/bin/secret-tool", "/usr/bin/gnome-keyring-daemon", "/usr/bin/dbus-run-session"]
    where !FileManager.default.isExecutableFile(atPath: program) {
        print("\(program) is missing (the peer): apt-get install gnome-keyring libsecret-tools dbus")
        exit(2)
    }
    let root = try benchSandbox(
        "kp-fill",
        making: ["data/keyport/providers", "config/keyport", "state/keyport/identities"]
    )
    defer { try? FileManager.default.removeItem(at: root) }
    let manager = FileManager.default

    // Three providers, each a copy of ExampleProvider under its own name, enabled in this order;
    // the identities written as keyportd keeps them (a domain each, N round-robin over them; the
    // domains spread, or nearly all under one registrable domain).
    let ids = (0..<3).map { "org.keyport.bench.provider\($0)" }
    for (index, id) in ids.enumerated() {
        let program = root.appendingPathComponent("provider\(index)").path
        try manager.copyItem(atPath: provider, toPath: program)
        let manifest: [String: Any] = [
            "id": id, "name": id, "exec": [program, "quiet"], "capabilities": ["ProvidesOneTimeCodes": true],
        ]
        try JSONSerialization.data(withJSONObject: manifest).write(
            to: root.appendingPathComponent("data/keyport/providers/\(id).json")
        )
        let identities = stride(from: index, to: total, by: 3).map { number in
            IdentityStore.CredentialIdentity(
                kind: .oneTimeCode,
                serviceIdentifier: IdentityStore.ServiceIdentifier(identifier: shape.host(number), type: .domain),
                user: "alice",
                recordIdentifier: "alice",
                rank: 0
            )
        }
        // The store's file holds what List replies.
        try Data(RawJSON(encoding: IdentityStore.List.Reply(identities: identities)).bytes).write(
            to: root.appendingPathComponent("state/keyport/identities/\(id).json")
        )
    }
    try JSONEncoder().encode(["enabled": ids]).write(to: root.appendingPathComponent("config/keyport/settings.json"))

    let environment = benchEnvironment(root)

    // keyportd's matching alone, in this process, over the same files.
    let locations = try DaemonLocations(environment: environment)
    let registry = ProviderRegistry(environment: environment)
    let logger = Logger(label: "bench")
    let store = IdentityStoreService(registry: registry, locations: locations, logger: logger)
    let autoFill = AutoFillService(
        providers: CredentialProviders(
            registry: registry,
            identities: store,
            configuration: URL(fileURLWithPath: locations.configuration, isDirectory: true),
            pool: ProviderPool(environment: environment, idleTime: .seconds(60), logger: logger),
            agents: AgentHub(policy: AgentHub.Policy(program: nil, allowsScripted: false), registry: registry),
            quickTime: .seconds(10),
            interactiveTime: .seconds(10),
            personTime: .seconds(10),
            logger: logger
        ),
        logger: logger
    )
    let requests = (0..<1000).map { ServiceOrigin("https://\(shape.host(($0 * 7919) % total))/login")! }
    _ = autoFill.fits(kind: .oneTimeCode, for: [requests[0]])  // loads the stores
    let matchStart = ContinuousClock.now
    for request in requests where autoFill.fits(kind: .oneTimeCode, for: [request]).exact.isEmpty {
        throw BenchFailure(description: "no match for \(request)")
    }
    let matching = (ContinuousClock.now - matchStart) / requests.count
    // With no exact fit the wider ones are gathered (a site of the domain keyportd only offers):
    // every identity of the registrable domain is read, the best 20 kept.
    let wider = ServiceOrigin("https://nowhere.\(shape == .oneDomain ? "corp.example" : "example")/")!
    let widerStart = ContinuousClock.now
    let offered = autoFill.fits(kind: .oneTimeCode, for: [wider]).wider.count
    let widerTime = ContinuousClock.now - widerStart

    let daemon = try ChildProcess(executable: keyportd, arguments: [], environment: environment)
    defer { daemon.signalGroup(SIGTERM) }
    let socket = environment["KEYPORT_SOCKET"]!
    let listening = await within(.seconds(30)) { () -> Bool? in
        while !FileManager.default.fileExists(atPath: socket) {
            try? await Task.sleep(for: .milliseconds(10))
            if Task.isCancelled { return nil }
        }
        return true
    }
    guard listening != nil else { throw BenchFailure(description: "keyportd did not start listening within 30 s") }
    // Warm: each provider started once.
    _ = try await spawnTimes(keyport, { ["otp", shape.host($0)] }, environment: environment, runs: 3)
    let keyportTimes = try await spawnTimes(
        keyport,
        { ["otp", shape.host(($0 * 7919) % total)] },
        environment: environment,
        runs: runs
    )

    // secret-tool against gnome-keyring in a D-Bus session of its own, 1 000 items stored first.
    let session = try ChildProcess(
        executable: "/usr/bin/dbus-run-session",
        arguments: [
            "--", "/bin/sh", "-c",
            "echo \"$DBUS_SESSION_BUS_ADDRESS\"; printf bench | gnome-keyring-daemon --unlock --components=secrets >/dev/null; echo ready; exec sleep 3600",
        ],
        environment: ["PATH": "/usr/bin:/bin", "HOME": root.path, "XDG_RUNTIME_DIR": root.path],
        streams: .captured(input: nil)
    )
    defer { session.signalGroup(SIGTERM) }
    let output = session.output!
    let lines = await within(.seconds(30)) {
        await output.wait { standardOutput, _ in
            let text = String(decoding: standardOutput, as: UTF8.self)
            return text.contains("ready\n") ? text.split(separator: "\n").map(String.init) : nil
        }
    }
    guard let address = lines?.first else {
        throw BenchFailure(
            description: "gnome-keyring did not start in a D-Bus session (install gnome-keyring, libsecret-tools, dbus)"
        )
    }
    var keyringEnvironment = ["PATH": "/usr/bin:/bin", "HOME": root.path, "DBUS_SESSION_BUS_ADDRESS": address]
    keyringEnvironment["XDG_RUNTIME_DIR"] = root.path
    for number in 0..<1000 {
        let store = try ChildProcess(
            executable: "/usr/bin/secret-tool",
            arguments: ["store", "--label=site-\(number)", "service", "site-\(number).example", "user", "alice"],
            environment: keyringEnvironment,
            streams: .captured(input: Data("secret-\(number)".utf8))
        )
        await store.waitForExit()
    }
    let secretToolTimes = try await spawnTimes(
        "/usr/bin/secret-tool",
        { ["lookup", "service", "site-\(($0 * 7919) % 1000).example", "user", "alice"] },
        environment: keyringEnvironment,
        runs: runs
    )

    print("autofill: \(total) identities over 3 providers (warm), sites \(shape.rawValue), \(runs) runs each")
    print(
        String(
            format: "keyport otp DOMAIN (new process → code):   p50 %.1f ms, p99 %.1f ms",
            percentile(keyportTimes, 0.5),
            percentile(keyportTimes, 0.99)
        )
    )
    print(
        String(
            format: "secret-tool lookup (gnome-keyring, 1 000): p50 %.1f ms, p99 %.1f ms",
            percentile(secretToolTimes, 0.5),
            percentile(secretToolTimes, 0.99)
        )
    )
    print("keyportd's matching per request: \(matching)")
    print("keyportd's wider fits of a site no identity names (\(offered) offered): \(widerTime)")
}
