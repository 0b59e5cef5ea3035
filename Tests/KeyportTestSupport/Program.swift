import Foundation
import KeyportSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A program a test runs: the `keyport` executable, a peer (the Authlib server, oathtool, pyotp), a
/// shell script, `xdg-open`.
///
/// Every test starts programs this way, and Keyport itself the same way underneath:
/// `KeyportSystem.ChildProcess` spawns (a process group of its own, no signal blocked, no
/// descriptor of ours inherited) and reads standard output and standard error together on a thread
/// of its own, so neither pipe can fill up and stall the program. What only tests want lives here,
/// outside the product: a time limit on every wait, past which the program's process group is
/// killed and the test fails with a message quoting what the program printed; waiting for a
/// "ready" line from a peer that keeps running.
///
/// Nothing is polled: each wait is for the program's exit or output, raced against one timer. A
/// program still running when its `Program` is released is killed with its process group, so
/// nothing a test starts outlives it.
package final class Program: Sendable {
    /// How a program that ran to its end ended, and what it printed.
    package struct Ran: Sendable {
        package var termination: ChildProcess.Termination
        package var standardOutput: String
        package var standardError: String

        /// The exit status, or 128 plus the signal that ended it (as a shell reports it).
        package var status: Int32 { termination.shellStatus }
    }

    /// The program and its arguments, for messages.
    package let command: [String]
    /// Its process id (a tracer attaches by it).
    package var pid: pid_t { child.pid }
    private let child: ChildProcess
    private let output: ChildProcess.Output

    /// Starts `executable` (a path) with `arguments`, exactly `environment`, and `input` on its
    /// standard input (`nil`: `/dev/null`).
    package init(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        input: Data? = nil
    ) throws {
        command = [executable] + arguments
        do {
            child = try ChildProcess(
                executable: executable,
                arguments: arguments,
                environment: environment,
                streams: .captured(input: input)
            )
        } catch {
            throw SupportFailure(description: "cannot start \(executable): \(error)")
        }
        guard let output = child.output else { preconditionFailure("a child started with .captured has an output") }
        self.output = output
    }

    deinit {
        child.signalGroup(SIGKILL)
    }

    /// Runs a program to its end (see ``init(_:_:environment:input:)`` and ``finish(timeout:)``).
    package static func run(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        input: Data? = nil,
        timeout: Duration = .seconds(120)
    ) async throws -> Ran {
        try await Program(executable, arguments, environment: environment, input: input).finish(timeout: timeout)
    }

    /// What the program has written to standard output so far.
    package var standardOutput: String { String(decoding: output.standardOutput, as: UTF8.self) }

    /// What the program has written to standard error so far.
    package var standardError: String { String(decoding: output.standardError, as: UTF8.self) }

    /// Sends `signal` to the program alone.
    package func signal(_ signal: Int32) {
        child.signal(signal)
    }

    /// Asks the program and its process group to quit (SIGTERM), without waiting.
    package func stop() {
        child.signalGroup(SIGTERM)
    }

    /// Waits until the program has exited and its output has ended, and returns how it ended; `nil`
    /// when `timeout` passes first (it keeps running then).
    package func waitForExit(timeout: Duration) async -> ChildProcess.Termination? {
        let child = child
        let output = output
        _ = await within(timeout) {
            await child.waitForExit()
            await output.waitForEnd()
            return true
        }
        guard output.isClosed else { return nil }
        return child.termination
    }

    /// Waits until the program has ended and returns how, with what it printed. When `timeout`
    /// passes first, kills its process group and throws a ``SupportFailure`` quoting its output.
    package func finish(timeout: Duration) async throws -> Ran {
        guard let termination = await waitForExit(timeout: timeout) else {
            let reason =
                Task.isCancelled ? "was still running when the test was cancelled" : "did not finish within \(timeout)"
            throw await killed(because: reason)
        }
        return Ran(termination: termination, standardOutput: standardOutput, standardError: standardError)
    }

    /// Waits until the program has written a whole line to standard output (or standard error, when
    /// `onStandardError`) that `isReady` accepts, and returns that line. When the program ends first
    /// or `timeout` passes, kills its process group and throws a ``SupportFailure`` quoting its output.
    package func waitForLine(
        timeout: Duration,
        onStandardError: Bool = false,
        where isReady: @escaping @Sendable (String) -> Bool
    ) async throws -> String {
        let output = output
        let line = await within(timeout) {
            await output.wait { standardOutput, standardError in
                // Only lines already ended by a newline: the last piece may be half a line.
                String(decoding: onStandardError ? standardError : standardOutput, as: UTF8.self)
                    .split(separator: "\n", omittingEmptySubsequences: false)
                    .dropLast().lazy.map(String.init).first(where: isReady)
            }
        }
        if let line { return line }
        throw await killed(because: output.isClosed ? "ended before it was ready" : "was not ready within \(timeout)")
    }

    /// Kills the process group, waits (a bounded time, even when the calling task is cancelled)
    /// for what it printed last, and describes the failure.
    private func killed(because reason: String) async -> SupportFailure {
        child.signalGroup(SIGKILL)
        let child = child
        let output = output
        await Task {
            _ = await within(.seconds(10)) {
                await child.waitForExit()
                await output.waitForEnd()
                return true
            }
        }.value
        return SupportFailure(
            description: "\(command.joined(separator: " ")) \(reason), and was killed.\n\(quotedOutput)"
        )
    }

    /// The end of both outputs, for a failure message.
    private var quotedOutput: String {
        func quoted(_ text: String) -> String {
            let limit = 4000
            guard !text.isEmpty else { return "(nothing)" }
            return text.count > limit ? "…" + String(text.suffix(limit)) : text
        }
        return "standard output: \(quoted(standardOutput))\nstandard error: \(quoted(standardError))"
    }
}

/// What a test's surroundings could not do: start a program, have it finish or get ready in time,
/// make or watch a directory. The description says what, with what the program printed.
package struct SupportFailure: Error, CustomStringConvertible {
    package var description: String

    package init(description: String) {
        self.description = description
    }
}
