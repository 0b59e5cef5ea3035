import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// SIGINT (Ctrl-C), SIGTERM and SIGHUP (the terminal closed), turned into the cancellation of one
/// task while it runs, so that what the task owns is cleaned up before the program ends — for
/// `keyport login`, the browser Keyport launched (its whole process group) and its profile
/// directory. Left to their default action, these signals would end the program at once and leave
/// both behind: the browser runs in a process group of its own, so the terminal's Ctrl-C never
/// reaches it. (Long-running services use swift-service-lifecycle's graceful shutdown instead.)
///
/// How: a handler that only writes the signal's number to a pipe (all a signal handler may safely
/// do), and a thread of its own that reads the pipe and cancels the task. That thread unblocks the
/// three signals for itself, so they are delivered even when the program was started with them blocked
/// (Foundation's `Process` passes its thread's signal mask to the programs it starts, and Swift's
/// worker threads block nearly every signal).
package enum TerminationSignals {
    package static let caught: [Int32] = [SIGINT, SIGTERM, SIGHUP]

    /// Runs `body` in a task that any of ``caught`` cancels. Returns its result and the first signal
    /// that arrived while it ran, if one did. A signal ignored when the program started (`nohup`, a
    /// background job's SIGINT) stays ignored. Afterwards the signals have their earlier actions again.
    package static func cancelling<T: Sendable>(
        _ body: @escaping @Sendable () async throws -> T
    ) async -> (result: Result<T, any Error>, signal: Int32?) {
        let arrived = Mutex<Int32?>(nil)
        let task = Task { try await body() }
        Reader.shared.receiver.withLock { receiver in
            receiver = { signal in
                arrived.withLock { $0 = $0 ?? signal }
                task.cancel()
            }
        }
        let previous = install()
        let result = await task.result
        restore(previous)
        Reader.shared.receiver.withLock { $0 = nil }
        return (result, arrived.withLock { $0 })
    }

    /// Runs `body` on this thread while each of ``caught`` that arrives is handed to `onSignal`
    /// (on the signals' own thread) instead of ending the program: for blocking work that the
    /// handler stops from outside — closing the sending side of a call's socket, say, so that the
    /// service gives the call up and its answer says how it ended. Returns `body`'s result and the
    /// first signal that arrived while it ran, if one did; ignored signals stay ignored, and
    /// afterwards the signals have their earlier actions again.
    package static func handling<T>(
        _ onSignal: @escaping @Sendable (Int32) -> Void,
        _ body: () throws -> T
    ) -> (result: Result<T, any Error>, signal: Int32?) {
        let arrived = Mutex<Int32?>(nil)
        Reader.shared.receiver.withLock { receiver in
            receiver = { signal in
                arrived.withLock { $0 = $0 ?? signal }
                onSignal(signal)
            }
        }
        let previous = install()
        let result = Result { try body() }
        restore(previous)
        Reader.shared.receiver.withLock { $0 = nil }
        return (result, arrived.withLock { $0 })
    }

    /// Ends the program by `signal` with its default action, as if it had never been caught, so the
    /// program that started it (a shell, a script) sees how it ended.
    package static func end(by signal: Int32) -> Never {
        Glibc.signal(signal, SIG_DFL)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        raise(signal)
        exit(128 + signal)
    }

    /// `SIGINT`, `SIGTERM`, `SIGHUP`.
    package static func name(_ signal: Int32) -> String {
        switch signal {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(signal)"
        }
    }

    /// Points each caught signal that is not ignored at the handler; returns the earlier actions.
    private static func install() -> [(Int32, sigaction)] {
        _ = Reader.shared
        var previous: [(Int32, sigaction)] = []
        for signal in caught {
            var old = sigaction()
            guard sigaction(signal, nil, &old) == 0 else { continue }
            if unsafeBitCast(old.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
                continue
            }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                var byte = UInt8(truncatingIfNeeded: signal)
                _ = write(signalPipeWriteEnd, &byte, 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            if sigaction(signal, &action, nil) == 0 { previous.append((signal, old)) }
        }
        return previous
    }

    private static func restore(_ previous: [(Int32, sigaction)]) {
        for (signal, old) in previous {
            var action = old
            sigaction(signal, &action, nil)
        }
    }

    /// The pipe and the thread that reads it, made once per process and kept: a handler running
    /// late on another thread must never write to a closed (or reused) descriptor.
    private final class Reader: Sendable {
        static let shared = Reader()
        /// Who is told of a signal now; `nil` when no task is running under ``cancelling(_:)``.
        let receiver = Mutex<(@Sendable (Int32) -> Void)?>(nil)

        private init() {
            var ends: [Int32] = [-1, -1]
            guard pipe(&ends) == 0 else {
                fatalError("cannot make a pipe for signals: \(String(cString: strerror(errno)))")
            }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            // The handler must never block, even with the pipe full.
            _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
            signalPipeWriteEnd = ends[1]
            let readEnd = ends[0]
            let thread = Thread { [self] in
                var set = sigset_t()
                sigemptyset(&set)
                for signal in TerminationSignals.caught { sigaddset(&set, signal) }
                pthread_sigmask(SIG_UNBLOCK, &set, nil)
                var byte: UInt8 = 0
                while true {
                    let count = read(readEnd, &byte, 1)
                    if count == 1 {
                        self.receiver.withLock { $0 }?(Int32(byte))
                    } else if count < 0 && errno == EINTR {
                        continue
                    } else {
                        return
                    }
                }
            }
            thread.name = "keyport signals"
            thread.start()
        }
    }
}

/// The pipe's write end, for the signal handler (a C function pointer, which cannot capture).
/// Written once, before any handler that reads it is installed.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1
