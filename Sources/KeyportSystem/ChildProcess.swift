import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A browser (or other helper program) started with `posix_spawn`, leading a process group of its
/// own, with standard input and output on `/dev/null`.
///
/// Foundation's `Process` is not used for browsers: the child inherits the signal mask of
/// whichever thread spawned it, and Swift's worker threads block SIGTERM, SIGCHLD and most other
/// signals, so a browser started from a task could not be asked to quit and a shell script it ran
/// would hang in `wait`. Here the child always starts with no signal blocked and every signal at
/// its default action (`POSIX_SPAWN_SETSIGMASK`, `POSIX_SPAWN_SETSIGDEF`), whatever thread spawns
/// it. A thread of its own reaps the child, so it never lingers as a zombie.
package final class ChildProcess: Sendable {
    package let pid: pid_t
    private let exit = Latch()

    /// Starts `executable` (a path) with `arguments` and exactly `environment`.
    package init(executable: String, arguments: [String], environment: [String: String]) throws {
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
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        // Nothing else of ours (sockets, pipes, the receiver's listener) goes to the browser.
        Self.closeInheritedDescriptors(&actions)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid = pid_t()
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard status == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO)
        }
        self.pid = pid
        let child = pid
        let exit = self.exit
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) == -1 && errno == EINTR {}
            exit.open()
        }
    }

    /// Adds "close every descriptor from 3 up" to `actions`: glibc's
    /// `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; looked up at run time because the
    /// Swift Glibc module does not export it), else a close for each descriptor open now.
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
            return
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap({ Int32($0) }) where descriptor >= 3 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
    }

    /// Whether the process is still running (not yet reaped).
    package var isRunning: Bool { !exit.isOpen }

    /// Returns when the process has exited, or early when the waiting task is cancelled.
    package func waitForExit() async {
        await exit.wait()
    }

    /// Sends `signal` to the process's group: the browser and the helpers it started.
    package func signalGroup(_ signal: Int32) {
        guard isRunning else { return }
        kill(-pid, signal)
    }
}
