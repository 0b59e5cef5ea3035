import Foundation
import KeyportInterfaces
import KeyportSystem
import Logging
import Synchronization
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The credential providers keyportd has started, each with its connection.
///
/// A provider is started on its first request: its manifest's program, with one end of a
/// `socketpair` as descriptor 3 and `LISTEN_FDS=1`, `LISTEN_PID`, `LISTEN_FDNAMES=varlink` (the
/// `exec:` convention of systemd's `varlinkctl`; a one-line `sh` sets `LISTEN_PID` to the pid the
/// program will have, as systemd does after forking). Its calls are made one after another on
/// the connection; it is stopped once unused for the idle time. A provider that crashes, closes
/// its end, answers what is not Varlink, or does not answer in time fails the call it was given
/// (it is killed in the last case) and affects nothing else: the next request starts it again.
package final class ProviderPool: Sendable {
    /// A provider could not answer: why, for the client.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    private struct Job: Sendable {
        var method: String
        var parameters: RawJSON
        var reply: CheckedContinuation<Result<RawJSON, any Error>, Never>
    }

    private final class Running: Sendable {
        let child: ChildProcess
        let jobs: AsyncStream<Job>.Continuation
        /// Calls under way, and when the last one ended (for the idle stop).
        let use = Mutex((calls: 0, last: ContinuousClock.now))

        init(child: ChildProcess, jobs: AsyncStream<Job>.Continuation) {
            self.child = child
            self.jobs = jobs
        }
    }

    private let running = Mutex<[String: Running]>([:])
    private let environment: [String: String]
    private let idleTime: Duration
    private let logger: Logger

    /// `environment` is what providers start with (keyportd's own).
    package init(environment: [String: String], idleTime: Duration, logger: Logger) {
        self.environment = environment
        self.idleTime = idleTime
        self.logger = logger
    }

    /// Calls `method` on `provider` (starting it if it is not running); the provider's reply, or
    /// its `VarlinkError`.
    ///
    /// - Throws: the provider's ``VarlinkError``, or ``Failure`` when it could not answer.
    package func call(
        _ provider: ProviderManifest,
        _ method: String,
        _ parameters: RawJSON,
        timeout: Duration
    ) async throws -> RawJSON {
        let running = try instance(of: provider)
        running.use.withLock { $0.calls += 1 }
        defer {
            running.use.withLock { use in
                use.calls -= 1
                use.last = .now
            }
            scheduleIdleStop(provider.id, running)
        }
        let outcome = await withTaskGroup(of: Result<RawJSON, any Error>?.self) { group in
            group.addTask {
                await withCheckedContinuation { reply in
                    running.jobs.yield(Job(method: method, parameters: parameters, reply: reply))
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            var first = await group.next() ?? nil
            if first == nil {
                // Out of time: the provider is killed, which ends its connection and this call.
                running.child.signalGroup(SIGKILL)
                _ = await group.next()
                first = .failure(
                    Failure(description: "\(provider.name) did not answer within \(timeout.components.seconds) seconds")
                )
            }
            group.cancelAll()
            return first!
        }
        return try outcome.get()
    }

    /// Stops every provider (keyportd is stopping).
    package func shutDown() {
        let all = running.withLock { running in
            defer { running = [:] }
            return Array(running.values)
        }
        for provider in all { provider.jobs.finish() }
    }

    /// The running provider, started if it is not.
    private func instance(of provider: ProviderManifest) throws -> Running {
        try running.withLock { running in
            if let existing = running[provider.id], existing.child.isRunning { return existing }
            let started = try start(provider)
            running[provider.id] = started
            return started
        }
    }

    private func start(_ provider: ProviderManifest) throws -> Running {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw Failure(description: "cannot make a socket for \(provider.name): \(String(cString: strerror(errno)))")
        }
        var environment = self.environment
        environment["LISTEN_FDS"] = "1"
        environment["LISTEN_FDNAMES"] = "varlink"
        let child: ChildProcess
        do {
            child = try ChildProcess(
                executable: "/bin/sh",
                arguments: ["-c", #"LISTEN_PID=$$; export LISTEN_PID; exec "$0" "$@""#] + provider.exec,
                environment: environment,
                descriptor3: ends[1]
            )
        } catch {
            close(ends[0])
            close(ends[1])
            throw Failure(description: "\(provider.name) could not be started (\(provider.exec[0])): \(error)")
        }
        close(ends[1])
        logger.info("provider started", metadata: ["provider": "\(provider.id)", "pid": "\(child.pid)"])
        let (jobs, continuation) = AsyncStream.makeStream(of: Job.self)
        let running = Running(child: child, jobs: continuation)
        let name = provider.name
        let id = provider.id
        let logger = logger
        Task {
            var broken: (any Error)?
            do {
                try await VarlinkConnection.withConnection(connectedDescriptor: ends[0], maximumMessageSize: 1 << 20) {
                    connection in
                    for await job in jobs {
                        do {
                            job.reply.resume(returning: .success(try await connection.call(job.method, job.parameters)))
                        } catch let error as VarlinkError {
                            // The provider's answer: the connection goes on.
                            job.reply.resume(returning: .failure(error))
                        } catch {
                            job.reply.resume(returning: .failure(error))
                            throw error
                        }
                    }
                }
            } catch {
                broken = error
            }
            // The connection is over: whatever still waits fails, and the provider goes.
            continuation.finish()
            for await job in jobs {
                job.reply.resume(returning: .failure(Failure(description: "\(name) is no longer running")))
            }
            self.running.withLock { if $0[id] === running { $0[id] = nil } }
            await self.stop(child, name: name, within: .seconds(3))
            if let broken {
                logger.info("provider ended", metadata: ["provider": "\(id)", "why": "\(broken)"])
            } else {
                logger.info("provider stopped", metadata: ["provider": "\(id)"])
            }
        }
        return running
    }

    /// Once `running` has been unused for the idle time, its connection is closed, which asks the
    /// provider to exit.
    private func scheduleIdleStop(_ id: String, _ running: Running) {
        let idleTime = idleTime
        Task {
            try? await Task.sleep(for: idleTime)
            let idle = running.use.withLock { $0.calls == 0 && ContinuousClock.now - $0.last >= idleTime }
            guard idle else { return }
            self.running.withLock { if $0[id] === running { $0[id] = nil } }
            running.jobs.finish()
        }
    }

    /// Waits up to `grace` for a provider whose connection closed to exit, then kills it.
    private func stop(_ child: ChildProcess, name: String, within grace: Duration) async {
        let exited = await within(grace) { () -> Bool? in
            await child.waitForExit()
            return child.isRunning ? nil : true
        }
        if exited == nil {
            child.signalGroup(SIGKILL)
            await child.waitForExit()
        }
        // What ended it, when it was not asked to: for the reason a client gets.
        if case .signalled(let signal)? = child.termination, signal != SIGKILL {
            logger.warning("provider crashed", metadata: ["provider": "\(name)", "signal": "\(signal)"])
        }
    }
}
