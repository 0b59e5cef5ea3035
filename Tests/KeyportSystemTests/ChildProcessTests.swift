import Foundation
import KeyportSystem
import KeyportTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `ChildProcess` with pipes, and the tests' `Program` on it, with real programs.
@Suite("Running programs")
struct ChildProcessTests {
    /// Writes 1 MiB to standard error, then 1 MiB to standard output: far more than a pipe holds,
    /// so a reader that waited for the end of standard output before reading standard error would
    /// never see either end.
    static let errorsFirst = "head -c 1048576 /dev/zero | tr '\\0' e >&2; head -c 1048576 /dev/zero | tr '\\0' o"

    @Test("both outputs are read together: a child filling standard error first does not stall")
    func bothOutputs() async throws {
        let ran = try await Program.run("/bin/sh", ["-c", Self.errorsFirst], timeout: .seconds(60))
        #expect(ran.termination == .exited(0))
        #expect(ran.standardError == String(repeating: "e", count: 1 << 20))
        #expect(ran.standardOutput == String(repeating: "o", count: 1 << 20))
    }

    @Test("a descriptor passed on is the child's descriptor 3, and the only one of ours it has")
    func descriptor3() async throws {
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { for end in ends { close(end) } }
        // Another descriptor of ours, not close-on-exec: it must not reach the child either.
        let stray = open("/dev/null", O_RDONLY)
        defer { close(stray) }
        let child = try ChildProcess(
            executable: "/bin/sh",
            arguments: ["-c", "printf through-3 >&3; ls /proc/self/fd"],
            environment: [:],
            streams: .captured(input: nil),
            descriptor3: ends[1]
        )
        await child.waitForExit()
        #expect(child.termination == .exited(0))
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(ends[0], &buffer, buffer.count)
        #expect(count > 0 && String(decoding: buffer[..<count], as: UTF8.self) == "through-3")
        let output = try #require(child.output)
        await output.waitForEnd()
        // 0, 1, 2, 3, and the one `ls` opened to read the directory.
        let open = output.standardOutput.split(separator: UInt8(ascii: "\n")).compactMap {
            Int32(String(decoding: $0, as: UTF8.self))
        }
        #expect(open.filter { $0 > 3 }.count <= 1 && open.contains(3), "\(open)")
    }

    @Test("the blocking run reads both outputs together too")
    func blockingRun() throws {
        let ran = try ChildProcess.run(
            executable: "/bin/sh",
            arguments: ["-c", Self.errorsFirst],
            environment: ["PATH": "/usr/bin:/bin"]
        )
        #expect(ran.termination == .exited(0))
        #expect(ran.standardError == Data(repeating: UInt8(ascii: "e"), count: 1 << 20))
        #expect(ran.standardOutput == Data(repeating: UInt8(ascii: "o"), count: 1 << 20))
    }

    @Test("input larger than a pipe reaches the child while its output is read")
    func input() async throws {
        let text = String((0..<(4 << 20)).map { Character(Unicode.Scalar(UInt8(ascii: "a") + UInt8($0 % 26))) })
        let ran = try await Program.run(
            "/bin/sh",
            ["-c", "cat; echo done >&2"],
            input: Data(text.utf8),
            timeout: .seconds(60)
        )
        #expect(ran.status == 0)
        #expect(ran.standardOutput == text)
        #expect(ran.standardError == "done\n")
    }

    @Test("a child that stops reading its input is not an error for the parent (no SIGPIPE)")
    func inputNotRead() async throws {
        let ran = try await Program.run(
            "/bin/sh",
            ["-c", "head -c 1"],
            input: Data(repeating: 0x61, count: 4 << 20),
            timeout: .seconds(60)
        )
        #expect(ran.status == 0)
        #expect(ran.standardOutput == "a")
    }

    @Test("how a child ended: its exit status, or the signal that ended it")
    func termination() async throws {
        #expect(try await Program.run("/bin/sh", ["-c", "exit 3"]).termination == .exited(3))
        let killed = try await Program.run("/bin/sh", ["-c", "kill -TERM $$"])
        #expect(killed.termination == .signalled(SIGTERM))
        #expect(killed.status == 128 + SIGTERM)
    }

    @Test("past its time limit a program is killed, and the failure quotes what it printed")
    func timeLimit() async throws {
        let error = await #expect(throws: SupportFailure.self) {
            try await Program.run(
                "/bin/sh",
                ["-c", "echo started; echo trouble >&2; exec sleep 300"],
                timeout: .seconds(1)
            )
        }
        let message = error?.description ?? ""
        #expect(message.contains("did not finish within 1.0 seconds"), "\(message)")
        #expect(message.contains("standard output: started"))
        #expect(message.contains("standard error: trouble"))
    }

    @Test("a peer is ready at the line it announces; stopped, it ends by SIGTERM")
    func readyLine() async throws {
        let peer = try Program("/bin/sh", ["-c", "echo starting; echo 'READY here'; exec sleep 300"])
        #expect(try await peer.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("READY ") } == "READY here")
        peer.stop()
        #expect(await peer.waitForExit(timeout: .seconds(60)) == .signalled(SIGTERM))
    }

    @Test("a peer that ends before its ready line fails, quoting what it printed")
    func endedBeforeReady() async throws {
        let peer = try Program("/bin/sh", ["-c", "echo 'no module named flask' >&2; exit 1"])
        let error = await #expect(throws: SupportFailure.self) {
            try await peer.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("READY ") }
        }
        #expect(error?.description.contains("ended before it was ready") == true)
        #expect(error?.description.contains("no module named flask") == true)
    }

    @Test("a program that is not there cannot be started, and says which")
    func missing() {
        let error = #expect(throws: SupportFailure.self) { try Program("/nonexistent/keyport-test-program") }
        #expect(error?.description.contains("/nonexistent/keyport-test-program") == true)
    }
}
