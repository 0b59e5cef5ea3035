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
/// (it is killed in the last case; the calls queued behind fail with it) and affects no other
/// provider: the next request starts it again.
package final class ProviderPool: Sendable {
    /// A provider could not answer: why, for the client.
    package struct CallError: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    /// One call's dealings with the person while its provider answers it: the provider's clock
    /// stops while one of its prompts waits on the agent (the person is reading, or typing a
    /// passphrase: that is not the provider being slow), and whoever made the call hears that
    /// the person is being asked.
    package final class Call: Sendable {
        private struct State {
            var prompts = 0
            var used = Duration.zero
            var since: ContinuousClock.Instant?
            var personTimedOut: Duration?
            /// What takes the prompts open for this call off the agent's screen.
            var withdrawals: [@Sendable () -> Void] = []
            var left = false
        }

        private let state = Mutex(State())
        private let asking: @Sendable (String) async -> Void

        /// `asking` hears, each time the provider asks the person through the agent, what to tell
        /// whoever is waiting (the provider's name is in it).
        package init(asking: @escaping @Sendable (String) async -> Void = { _ in }) {
            self.asking = asking
        }

        /// How long the person had when they did not answer one of the provider's prompts.
        package var personTimedOut: Duration? { state.withLock { $0.personTimedOut } }

        fileprivate func start() {
            state.withLock { $0.since = .now }
        }

        /// The provider's time used so far, its clock stopped while a prompt waits.
        fileprivate var used: Duration {
            state.withLock { state in state.used + (state.since.map { .now - $0 } ?? .zero) }
        }

        /// Whoever made the call has gone: its prompts waiting on the person are withdrawn (the
        /// provider hears a decline; nobody is there for its answer).
        package func callerLeft() {
            let withdrawals = state.withLock { state in
                state.left = true
                defer { state.withdrawals = [] }
                return state.withdrawals
            }
            for withdraw in withdrawals { withdraw() }
        }

        fileprivate func promptBegan(_ provider: String, withdraw: @escaping @Sendable () -> Void) async {
            let left = state.withLock { state in
                state.withdrawals.append(withdraw)
                return state.left
            }
            if left { withdraw() }
            state.withLock { state in
                state.prompts += 1
                if let since = state.since {
                    state.used += .now - since
                    state.since = nil
                }
            }
            await asking("\(provider) is asking you through the agent")
        }

        fileprivate func promptEnded(personTimedOut limit: Duration?) {
            state.withLock { state in
                state.prompts -= 1
                if state.prompts == 0 { state.since = .now }
                if let limit { state.personTimedOut = limit }
            }
        }
    }

    private struct Job: Sendable {
        var method: String
        var parameters: RawJSON
        /// How long the provider has once it is given the call (not while it waits its turn, nor
        /// while one of its prompts waits on the person).
        var timeout: Duration
        var call: Call
        /// Resumed with the outcome, or `nil` when the provider took no more calls.
        var reply: CheckedContinuation<Result<RawJSON, any Error>?, Never>
    }

    private final class Running: Sendable {
        let child: ChildProcess
        /// The provider's process, held by a pidfd (`nil` if it ended before it could be).
        let process: PinnedProcess?
        private let jobs: AsyncStream<Job>.Continuation
        /// Calls given and not yet answered, when the last one ended (for the idle stop), and
        /// whether the provider takes calls no more.
        private let use = Mutex((calls: 0, last: ContinuousClock.now, closed: false))
        /// The call the provider is answering now.
        let current = Mutex<Call?>(nil)

        init(child: ChildProcess, jobs: AsyncStream<Job>.Continuation) {
            self.child = child
            self.process = try? PinnedProcess(pid: child.pid)
            self.jobs = jobs
        }

        var isClosed: Bool { use.withLock { $0.closed } }

        /// Gives the provider a call; `false` when it takes none any more (then `job` is not
        /// resumed here: the caller fails it).
        func submit(_ job: Job) -> Bool {
            use.withLock { use in
                guard !use.closed, case .enqueued = jobs.yield(job) else { return false }
                use.calls += 1
                return true
            }
        }

        /// A call has ended.
        func ended() {
            use.withLock { use in
                use.calls -= 1
                use.last = .now
            }
        }

        /// Takes no more calls; the ones waiting are still answered, then the connection closes.
        /// With `ifIdleFor`, only when no call is under way and none ended within that time.
        @discardableResult
        func close(ifIdleFor idleTime: Duration? = nil) -> Bool {
            let closing = use.withLock { use -> Bool in
                if let idleTime, use.calls > 0 || ContinuousClock.now - use.last < idleTime { return false }
                use.closed = true
                return true
            }
            if closing { jobs.finish() }
            return closing
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
    /// its `VarlinkError`. The provider has `timeout` from when it is given the call, its clock
    /// stopped while one of its prompts waits on the person (`call` hears of them); calls to one
    /// provider are given one after another.
    ///
    /// - Throws: the provider's ``VarlinkError``, or ``CallError`` when it could not answer.
    package func call(
        _ provider: ProviderManifest,
        _ method: String,
        _ parameters: RawJSON,
        timeout: Duration,
        as call: Call = Call()
    ) async throws -> RawJSON {
        // A provider closing as this call arrives (idle, or gone) is started again, once.
        for _ in 0..<2 {
            let running = try instance(of: provider)
            let outcome: Result<RawJSON, any Error>? = await withCheckedContinuation { reply in
                let job = Job(method: method, parameters: parameters, timeout: timeout, call: call, reply: reply)
                if !running.submit(job) { reply.resume(returning: nil) }
            }
            guard let outcome else { continue }
            running.ended()
            scheduleIdleStop(provider.id, running)
            return try outcome.get()
        }
        throw CallError(description: "\(provider.name) stopped as it was asked; try again")
    }

    /// The id of the provider keyportd started that `process` is (or was started by): keyportd's
    /// own record, the surest way to recognise it, even when several manifests share a program.
    package func provider(startedAs process: PinnedProcess) -> String? {
        let started = running.withLock { running in running.map { ($0.key, $0.value.process) } }
        for (id, pinned) in started {
            guard let pinned, pinned.isAlive else { continue }
            if pinned.pid == process.pid || (try? process.isDescendant(of: pinned)) == true { return id }
        }
        return nil
    }

    /// The provider `id` began asking the person (`org.keyport.Prompt`): the call it is
    /// answering stops its clock and tells its caller. Returns once the caller was told.
    package func promptBegan(_ id: String, name: String, withdraw: @escaping @Sendable () -> Void) async {
        await running.withLock { $0[id] }?.current.withLock { $0 }?.promptBegan(name, withdraw: withdraw)
    }

    /// The provider `id`'s prompt ended: its clock runs again. `personTimedOut`: the person did
    /// not answer within that time.
    package func promptEnded(_ id: String, personTimedOut: Duration? = nil) {
        running.withLock { $0[id] }?.current.withLock { $0 }?.promptEnded(personTimedOut: personTimedOut)
    }

    /// Stops every provider (keyportd is stopping): no more calls, and each is asked to end
    /// (SIGTERM to its process group) and killed if it does not within 3 seconds.
    package func shutDown() {
        let all = running.withLock { running in
            defer { running = [:] }
            return Array(running.values)
        }
        for provider in all {
            provider.close()
            provider.child.signalGroup(SIGTERM)
        }
    }

    /// The running provider, started if it is not.
    private func instance(of provider: ProviderManifest) throws -> Running {
        try running.withLock { running in
            if let existing = running[provider.id], !existing.isClosed, existing.child.isRunning { return existing }
            let started = try start(provider)
            running[provider.id] = started
            return started
        }
    }

    private func start(_ provider: ProviderManifest) throws -> Running {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw CallError(
                description: "cannot make a socket for \(provider.name): \(String(cString: strerror(errno)))"
            )
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
            throw CallError(description: "\(provider.name) could not be started (\(provider.exec[0])): \(error)")
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
                        // Out of time, the provider is stuck: killed, which ends this call with a
                        // broken connection; the calls waiting their turn fail below, and the next
                        // request starts it afresh.
                        let timedOut = Mutex(false)
                        job.call.start()
                        running.current.withLock { $0 = job.call }
                        let watchdog = Task {
                            // The clock stops while a prompt waits on the person: checked in
                            // slices, each as long as the time left.
                            while true {
                                let left = job.timeout - job.call.used
                                if left <= .zero { break }
                                try await Task.sleep(for: min(left, .seconds(1)))
                            }
                            timedOut.withLock { $0 = true }
                            child.signalGroup(SIGKILL)
                        }
                        let outcome: Result<RawJSON, any Error>
                        do {
                            outcome = .success(try await connection.call(job.method, job.parameters))
                        } catch {
                            outcome = .failure(error)
                        }
                        watchdog.cancel()
                        running.current.withLock { $0 = nil }
                        if timedOut.withLock({ $0 }) {
                            let failure = CallError(
                                description: "\(name) did not answer within \(job.timeout.components.seconds) seconds"
                            )
                            job.reply.resume(returning: .failure(failure))
                            throw failure
                        }
                        job.reply.resume(returning: outcome)
                        // An error that is not the provider's answer means the connection broke.
                        if case .failure(let error) = outcome, !(error is VarlinkError) { throw error }
                    }
                }
            } catch {
                broken = error
            }
            // The connection is over: whatever still waits fails, and the provider goes.
            running.close()
            for await job in jobs {
                job.reply.resume(returning: .failure(CallError(description: "\(name) is no longer running; try again")))
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
            guard running.close(ifIdleFor: idleTime) else { return }
            self.running.withLock { if $0[id] === running { $0[id] = nil } }
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
        // What ended it, when it was not asked to, for the log (the client was told it ended
        // without answering).
        if case .signalled(let signal)? = child.termination, signal != SIGKILL && signal != SIGTERM {
            logger.warning("provider crashed", metadata: ["provider": "\(name)", "signal": "\(signal)"])
        }
    }
}
