import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A program started with `posix_spawn`, leading a process group of its own: a browser, a helper
/// such as `xdg-mime`, or (in the tests) a peer.
///
/// Foundation's `Process` is not used: the child inherits the signal mask of whichever thread
/// spawned it, and Swift's worker threads block SIGTERM, SIGCHLD and most other signals, so a
/// browser started from a task could not be asked to quit and a shell script it ran would hang in
/// `wait`. Here the child always starts with no signal blocked and every signal at its default
/// action (`POSIX_SPAWN_SETSIGMASK`, `POSIX_SPAWN_SETSIGDEF`), whatever thread spawns it, and with
/// no descriptor of ours but the three standard ones. A thread of its own reaps the child, so it
/// never lingers as a zombie.
///
/// The standard streams are `/dev/null` (``Streams/null``), or pipes (``Streams/captured(input:)``)
/// that one more thread serves in a single `poll` loop: it writes the input and reads standard
/// output and standard error as they come, so a child that fills one pipe while nobody reads it
/// cannot stall. This is the only way Keyport, and its tests, run programs.
package final class ChildProcess: Sendable {
    /// How a process ended.
    package enum Termination: Sendable, Equatable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)

        /// The status as a shell reports it: the exit status, or 128 plus the signal.
        package var shellStatus: Int32 {
            switch self {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal
            }
        }

        package var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .signalled(let signal): "was ended by signal \(signal)"
            }
        }

        /// Reads a status from `waitpid` (which is never asked about stopped children).
        init(waitStatus status: Int32) {
            let signal = status & 0x7f
            self = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
        }
    }

    /// What the child's standard streams are connected to.
    package enum Streams: Sendable {
        /// All three to `/dev/null`: a browser or helper whose output nobody reads.
        case null
        /// Standard output and standard error to pipes read into ``ChildProcess/output``; standard
        /// input gets `input` and then its end (`nil`: `/dev/null`).
        case captured(input: Data?)
    }

    package let pid: pid_t
    /// What the child has written; `nil` unless its streams are ``Streams/captured(input:)``.
    package let output: Output?
    private let exit = Latch()
    private let ending = Mutex<Termination?>(nil)

    /// Starts `executable` (a path) with `arguments` and exactly `environment`; `descriptor3`, when
    /// given, is the one descriptor of ours the child gets, as its descriptor 3 (the caller keeps
    /// and closes its own).
    package init(
        executable: String,
        arguments: [String],
        environment: [String: String],
        streams: Streams = .null,
        descriptor3: Int32? = nil
    ) throws {
        let input: Data?
        switch streams {
        case .null: input = nil
        case .captured(let data): input = data
        }
        let spawned = try Self.spawn(
            executable: executable,
            arguments: arguments,
            environment: environment,
            streams: streams,
            descriptor3: descriptor3
        )
        pid = spawned.pid
        if let pipes = spawned.pipes {
            let output = Output()
            self.output = output
            Thread.detachNewThread {
                // A write to a child that has stopped reading fails with EPIPE instead of raising
                // SIGPIPE, which would end the whole program. Blocked in this thread only: the
                // signal is aimed at the thread that writes.
                var pipeSignal = sigset_t()
                sigemptyset(&pipeSignal)
                sigaddset(&pipeSignal, SIGPIPE)
                pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
                Self.serve(pipes, input: input ?? Data()) { stream, data in output.append(data, to: stream) }
                output.close()
            }
        } else {
            output = nil
        }
        // The thread holds this object until the child is reaped.
        Thread.detachNewThread { [self] in
            let termination = Self.reap(pid)
            ending.withLock { $0 = termination }
            exit.open()
        }
    }

    /// Runs `executable` to its end with standard input on `/dev/null`, blocking the calling
    /// thread, and returns how it ended and what it wrote. For short helpers (`xdg-mime`) run
    /// from synchronous code; there is no timeout.
    package static func run(
        executable: String,
        arguments: [String],
        environment: [String: String]
    ) throws -> (termination: Termination, standardOutput: Data, standardError: Data) {
        let spawned = try spawn(
            executable: executable,
            arguments: arguments,
            environment: environment,
            streams: .captured(input: nil),
            descriptor3: nil
        )
        var written = [Data(), Data()]
        if let pipes = spawned.pipes {
            serve(pipes, input: Data()) { stream, data in written[stream == .standardOutput ? 0 : 1].append(data) }
        }
        return (reap(spawned.pid), written[0], written[1])
    }

    /// Whether the process is still running (not yet reaped).
    package var isRunning: Bool { !exit.isOpen }

    /// How the process ended; `nil` while it runs.
    package var termination: Termination? { ending.withLock { $0 } }

    /// Returns when the process has exited, or early when the waiting task is cancelled.
    package func waitForExit() async {
        await exit.wait()
    }

    /// Sends `signal` to the process alone.
    package func signal(_ signal: Int32) {
        guard isRunning else { return }
        kill(pid, signal)
    }

    /// Sends `signal` to the process's group: the process and the helpers it started.
    package func signalGroup(_ signal: Int32) {
        guard isRunning else { return }
        kill(-pid, signal)
    }

    // MARK: - Spawning

    /// The parent's ends of a captured child's pipes.
    private struct Pipes {
        /// Where the input goes; nonblocking, so a child that does not read cannot stall the loop.
        var input: Int32?
        var standardOutput: Int32
        var standardError: Int32
    }

    private static func spawn(
        executable: String,
        arguments: [String],
        environment: [String: String],
        streams: Streams,
        descriptor3: Int32?
    ) throws -> (pid: pid_t, pipes: Pipes?) {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes,
            Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP)
        )

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The child's ends are closed here once it has them (or spawning failed); ours only when
        // spawning failed.
        var childEnds: [Int32] = []
        var parentEnds: [Int32] = []
        defer { for descriptor in childEnds { close(descriptor) } }
        var pipes: Pipes?
        do {
            switch streams {
            case .null:
                for descriptor: Int32 in [0, 1, 2] {
                    posix_spawn_file_actions_addopen(
                        &actions,
                        descriptor,
                        "/dev/null",
                        descriptor == 0 ? O_RDONLY : O_WRONLY,
                        0
                    )
                }
            case .captured(let input):
                var inputEnd: Int32?
                if input != nil {
                    let (read, write) = try makePipe()
                    childEnds.append(read)
                    parentEnds.append(write)
                    _ = fcntl(write, F_SETFL, fcntl(write, F_GETFL) | O_NONBLOCK)
                    posix_spawn_file_actions_adddup2(&actions, read, 0)
                    inputEnd = write
                } else {
                    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
                }
                var outputEnds: [Int32] = []
                for descriptor: Int32 in [1, 2] {
                    let (read, write) = try makePipe()
                    childEnds.append(write)
                    parentEnds.append(read)
                    posix_spawn_file_actions_adddup2(&actions, write, descriptor)
                    outputEnds.append(read)
                }
                pipes = Pipes(input: inputEnd, standardOutput: outputEnds[0], standardError: outputEnds[1])
            }
        } catch {
            for descriptor in parentEnds { close(descriptor) }
            throw error
        }
        // The one descriptor passed on, as descriptor 3 (systemd's socket-activation convention).
        // A descriptor that is 3 already is moved first: duplicating it onto itself would keep
        // its close-on-exec flag.
        var moved: Int32?
        defer { if let moved { close(moved) } }
        if var passed = descriptor3 {
            if passed == 3 {
                passed = fcntl(3, F_DUPFD_CLOEXEC, 4)
                guard passed >= 0 else {
                    for descriptor in parentEnds { close(descriptor) }
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
                moved = passed
            }
            posix_spawn_file_actions_adddup2(&actions, passed, 3)
        }
        // Nothing else of ours (sockets, pipes, the receiver's listener, the pipe ends just
        // duplicated) goes to the child.
        closeInheritedDescriptors(&actions, from: descriptor3 == nil ? 3 : 4)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid = pid_t()
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard status == 0 else {
            for descriptor in parentEnds { close(descriptor) }
            throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO)
        }
        return (pid, pipes)
    }

    /// A pipe whose ends are closed on `exec`, so no program another thread starts meanwhile gets
    /// one (`pipe2` is not in the Swift Glibc module; the window before `fcntl` is closed anyway
    /// for the programs started here, which get no descriptor of ours).
    private static func makePipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    /// Adds "close every descriptor from `first` up" to `actions`: glibc's
    /// `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; looked up at run time because the
    /// Swift Glibc module does not export it), else a close for each descriptor open now.
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t, from first: Int32) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, first)
            return
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap({ Int32($0) }) where descriptor >= first {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
    }

    /// Waits for `pid` to end and reaps it.
    private static func reap(_ pid: pid_t) -> Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { return .exited(-1) }  // not our child: cannot happen
        }
        return Termination(waitStatus: status)
    }

    // MARK: - Serving the pipes

    /// Writes `input` to the child and reads its two outputs, each chunk to `receive`, until both
    /// outputs are at their end (the child and every process that inherited them have closed
    /// them), in one `poll` loop. Closes every descriptor of `pipes`.
    private static func serve(_ pipes: Pipes, input: Data, receive: (Output.Stream, Data) -> Void) {
        // Polled: standard output, standard error, the input (a negative descriptor is skipped).
        var entries = [
            pollfd(fd: pipes.standardOutput, events: Int16(POLLIN), revents: 0),
            pollfd(fd: pipes.standardError, events: Int16(POLLIN), revents: 0),
            pollfd(fd: pipes.input ?? -1, events: Int16(POLLOUT), revents: 0),
        ]
        func finish(_ index: Int) {
            close(entries[index].fd)
            entries[index].fd = -1
        }
        if pipes.input != nil && input.isEmpty { finish(2) }
        var written = 0
        var buffer = [UInt8](repeating: 0, count: 65536)
        while entries[0].fd >= 0 || entries[1].fd >= 0 || entries[2].fd >= 0 {
            if poll(&entries, nfds_t(entries.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for (index, stream) in [(0, Output.Stream.standardOutput), (1, .standardError)]
            where entries[index].fd >= 0 && entries[index].revents != 0 {
                let count = read(entries[index].fd, &buffer, buffer.count)
                if count > 0 {
                    receive(stream, Data(buffer[0..<count]))
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    finish(index)
                }
            }
            if entries[2].fd >= 0 && entries[2].revents != 0 {
                let count = input.withUnsafeBytes { bytes in
                    write(entries[2].fd, bytes.baseAddress! + written, bytes.count - written)
                }
                if count > 0 {
                    written += count
                    if written == input.count { finish(2) }
                } else if errno != EINTR && errno != EAGAIN {
                    finish(2)  // the child closed its input (EPIPE): the rest is not wanted
                }
            }
        }
        for index in entries.indices where entries[index].fd >= 0 { finish(index) }
    }
}
