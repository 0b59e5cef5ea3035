import Foundation
import KeyportTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// keyportd's resident memory and open descriptors, from /proc (read whole: the files have no size).
private func usage(of pid: pid_t) throws -> (residentMB: Int, descriptors: Int) {
    let status = try #require(FileHandle(forReadingAtPath: "/proc/\(pid)/status"))
    defer { try? status.close() }
    let text = String(decoding: try status.readToEnd() ?? Data(), as: UTF8.self)
    let resident =
        text.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        .flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) } ?? 0
    let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
    return (resident / 1024, descriptors)
}

@Suite("keyportd under a flood of connections", .serialized)
struct FloodTests {
    @Test(
        "after 20 000 connections from one rogue process, 8 of them holding unfinished 20 MB messages, the person's agent still gets an export's question and keyport providers list answers"
    )
    func twentyThousandConnections() async throws {
        let sandbox = try await ExchangeSandbox()
        defer { sandbox.directory.remove() }
        try await sandbox.withSystem(agent: "accept:org.example.importer") { daemon, agent async throws in

            let python = try await Peers.python(importing: ["varlink"])
            let socket = try #require(sandbox.environment["KEYPORT_SOCKET"])
            let flood = try Program(
                python,
                [Peers.file("Tests/KeyportDaemonTests/Peers/flood.py"), socket, "20000", "8", "20000000"],
                environment: sandbox.environment
            )
            defer { flood.stop() }
            let line = try await flood.waitForLine(timeout: .seconds(300)) { $0.hasPrefix("{") }
            let report = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Int])
            // Every connection was made, and keyportd kept at most 64 of them open (its limit per
            // process).
            #expect(report["connected"] == 20000, "\(report)")
            #expect((report["open"] ?? .max) <= 64, "\(report)")

            let listed = try await Program.run(
                keyport,
                ["providers", "list"],
                environment: sandbox.environment,
                timeout: .seconds(60)
            )
            #expect(listed.status == 0, "\(listed.standardError)")
            #expect(listed.standardOutput.contains("org.example.importer"))
            let exported = try await sandbox.export(sample)
            #expect(exported.status == 0, "\(exported.standardError)")
            // The agent kept its connection all along: it never had to come back.
            #expect(agent.standardError.components(separatedBy: "waiting for keyportd's questions").count == 2)
            #expect(!agent.standardError.contains("keyportd stopped"))
            let used = try usage(of: daemon.pid)
            #expect(used.descriptors < 200, "keyportd holds \(used.descriptors) descriptors")
            #expect(used.residentMB < 400, "keyportd holds \(used.residentMB) MB")
        }
    }
}
