#if os(Linux)
import CKeyportSystem
import KeyportErrors

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a socket's peer or a process could not be identified. `message` says what happened.
package struct ProcessIdentityError: RecordedError {
    /// A stable name for why.
    package typealias Code = ErrorCodeOf<ProcessIdentityError>

    package var record: ErrorRecord<Code>

    package init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
    }
}

extension ErrorCodeOf<ProcessIdentityError> {
    /// The descriptor is not a connected Unix socket, or the kernel knows no process for its peer in
    /// this pid namespace (it reports pid 0 for a peer in a namespace this process cannot see).
    package static let noPeer = Self(rawValue: "no-peer")
    /// The process ended: before it could be pinned, or before what was read about it could be
    /// trusted to be its.
    package static let exited = Self(rawValue: "exited")
    /// No pidfd could be had: the kernel has none (Linux before 5.3), or refused one (too many open
    /// descriptors).
    package static let pidfdUnavailable = Self(rawValue: "pidfd-unavailable")
    /// A file about the process could not be read or understood: `/proc/PID/exe` of a process that
    /// is not dumpable, a `/proc` mounted with `hidepid`, a `.flatpak-info` without an app id.
    package static let unreadable = Self(rawValue: "unreadable")
}

/// Who was at the other end of a Unix socket when it connected, as the kernel recorded it then
/// (`SO_PEERCRED`): the process, its effective user and group. Later `setuid` calls or `exec`s of
/// the peer do not change it; the pid, though, may name another process once the peer has ended,
/// which is why ``PinnedProcess`` exists.
package struct PeerCredentials: Sendable, Hashable {
    /// The peer's process id, in this process's pid namespace.
    package var pid: pid_t
    package var uid: uid_t
    package var gid: gid_t

    /// Credentials read elsewhere (swift-nio reads `SO_PEERCRED` on its own channels).
    package init(pid: pid_t, uid: uid_t, gid: gid_t) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// The credentials of the peer of the connected Unix socket `descriptor`.
    package init(socket descriptor: Int32) throws(ProcessIdentityError) {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
        guard ckp_peer_credentials(descriptor, &pid, &uid, &gid) == 0 else {
            throw ProcessIdentityError(
                .noPeer,
                "cannot read the peer credentials of descriptor \(descriptor): \(errorText())"
            )
        }
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }
}

/// A process held by a pidfd, so that what is read about it is known to be its own: a pid number
/// passes to a new process once its owner ends and is reaped, a pidfd never does.
///
/// Each read (``executable``, ``arguments``, ``cgroupUnit``, ``flatpakAppID``, ``systemdAppID``,
/// ``isDescendant(of:)``) goes through `/proc/PID` and then checks that the process is still
/// alive: while it is, its pid has stayed its own, so what was read was its. A process that ended
/// meanwhile makes the read throw ``ProcessIdentityError/Reason/exited``.
///
/// What the reads prove: the executable is what the process runs now (it may `exec` another
/// program after connecting, keeping the socket; a program run with `LD_PRELOAD` or under a
/// debugger is still that program's path), and the systemd unit is one the process's starter chose.
/// For a host app neither is a security boundary: any program of the user can start another under
/// any unit name. A Flatpak app id is strong: the sandbox cannot change its `/.flatpak-info`, and
/// a host process that fakes one in a user namespace of its own gains nothing, as it could run
/// code inside that app's sandbox anyway (`flatpak run --command`).
///
/// The pidfd is closed when the object is released.
package final class PinnedProcess: Sendable {
    /// How the pidfd was obtained.
    package enum Pinning: Sendable, Equatable {
        /// From the socket (`SO_PEERPIDFD`, Linux 6.5 and later): the kernel's own reference to the
        /// process that connected. Nothing can come between.
        case socketPeer
        /// By opening the pid number (`pidfd_open`): between learning the number and opening it,
        /// the process could have ended and its number passed to another. Opened right after
        /// reading a socket's credentials that window is short, and cycling through the pid space
        /// (up to 4,194,304 on a 64-bit systemd machine) to hit it takes a long time.
        case pidNumber
    }

    /// The process id, in this process's pid namespace.
    package let pid: pid_t
    package let pinning: Pinning
    private let pidfd: Int32

    /// Pins the peer of the connected Unix socket `descriptor`: by `SO_PEERPIDFD`, or on a kernel
    /// before 6.5 by opening the pid `SO_PEERCRED` reports (``Pinning/pidNumber``).
    package convenience init(peerOf descriptor: Int32) throws(ProcessIdentityError) {
        let credentials = try PeerCredentials(socket: descriptor)
        guard credentials.pid > 0 else { throw Self.noProcess(credentials) }
        let pidfd = ckp_peer_pidfd(descriptor)
        if pidfd < 0 && errno != ENOPROTOOPT {
            let code = errno
            // ESRCH: the peer has ended and been reaped; its number must not be opened, another
            // process may have it.
            if code == ESRCH { throw Self.ended(credentials.pid, "before it could be pinned") }
            throw ProcessIdentityError(
                .pidfdUnavailable,
                "cannot pin the peer of descriptor \(descriptor) (process \(credentials.pid)): \(errorText(code))"
            )
        }
        try self.init(peer: credentials, pidfd: pidfd >= 0 ? pidfd : nil)
    }

    /// The number of the `SO_PEERPIDFD` socket option, for code that reads a socket's options its
    /// own way: a swift-nio channel does not show its descriptor, but reads options for it.
    package static let peerPIDFDOption = ckp_peer_pidfd_option()

    /// Pins a socket's peer from what the socket said about it: its `SO_PEERCRED` `credentials`,
    /// and the pidfd `SO_PEERPIDFD` gave (this object takes it over; closed when released), or
    /// `nil` on a kernel before 6.5 that has no such option, when the pid is opened instead
    /// (``Pinning/pidNumber``). A caller whose `SO_PEERPIDFD` failed with `ESRCH` must not come
    /// here: the peer has ended, and its number may be another process's already.
    package init(peer credentials: PeerCredentials, pidfd: Int32?) throws(ProcessIdentityError) {
        guard credentials.pid > 0 else {
            if let pidfd { close(pidfd) }
            throw Self.noProcess(credentials)
        }
        self.pid = credentials.pid
        if let pidfd {
            self.pinning = .socketPeer
            self.pidfd = pidfd
        } else {
            self.pinning = .pidNumber
            self.pidfd = try Self.openPIDFD(credentials.pid)
        }
    }

    private static func noProcess(_ credentials: PeerCredentials) -> ProcessIdentityError {
        ProcessIdentityError(
            .noPeer,
            "the kernel reports no process for the socket's peer: the peer runs in a pid namespace this process cannot see, or the socket is not a Unix socket"
        )
    }

    /// Pins the process `pid` by opening its number (``Pinning/pidNumber``). Safe when the number
    /// cannot have passed to another process: a child of ours not yet reaped, a process another
    /// pinned one names as its parent while both are alive. (A `ChildProcess` is reaped by its own
    /// thread as soon as it exits, so one that ends at once leaves a short window; pin it right
    /// after starting it.)
    package init(pid: pid_t) throws(ProcessIdentityError) {
        self.pid = pid
        self.pinning = .pidNumber
        self.pidfd = try Self.openPIDFD(pid)
    }

    deinit {
        close(pidfd)
    }

    /// Whether the process has not exited yet (a zombie has). Once false, false for good.
    package var isAlive: Bool {
        ckp_pidfd_alive(pidfd) == 1
    }

    /// Whether `later`, pinned after this one, is this same process (another connection of it).
    ///
    /// Equal numbers while this process is still alive: no two living processes share a number,
    /// and this one, alive now, was alive when `later` was pinned, so the process `later` holds
    /// had this number then and is this one. (Once this process has ended, its number may be
    /// another's, and the answer is `false`.)
    package func isSameProcess(as later: PinnedProcess) -> Bool {
        later.pid == pid && isAlive && later.isAlive
    }

    /// The path of the program the process runs (`/proc/PID/exe`), as the kernel shows it: with
    /// ` (deleted)` appended when that file has since been removed or replaced (an upgrade).
    package var executable: String {
        get throws(ProcessIdentityError) {
            let path = "/proc/\(pid)/exe"
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            // A path as long as the buffer may have been cut short: read again with more room.
            while true {
                let count = readlink(path, &buffer, buffer.count)
                guard count >= 0 else { throw failure(reading: path) }
                if count < buffer.count {
                    let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    try checkAlive(after: "reading \(path)")
                    return target
                }
                buffer = [CChar](repeating: 0, count: buffer.count * 2)
            }
        }
    }

    /// The process's command line (`/proc/PID/cmdline`), its program's name first. A process can
    /// rewrite its own; keyportd reads it only to tell apart registrations of one program
    /// (``executable`` decides which program it is).
    package var arguments: [String] {
        get throws(ProcessIdentityError) {
            let path = "/proc/\(pid)/cmdline"
            guard let bytes = readFile(path, limit: 1 << 20) else { throw failure(reading: path) }
            try checkAlive(after: "reading \(path)")
            var words = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
            // Each argument ends with a NUL, so the split leaves an empty word after the last.
            if bytes.last == 0 { words.removeLast() }
            return words
        }
    }

    /// The systemd user unit the process runs in (``AppIdentity/userUnit(fromCgroupFile:)``);
    /// `nil` outside a user manager.
    package var cgroupUnit: String? {
        get throws(ProcessIdentityError) {
            let path = "/proc/\(pid)/cgroup"
            guard let text = readFile(path, limit: 1 << 16).map({ String(decoding: $0, as: UTF8.self) }) else {
                throw failure(reading: path)
            }
            try checkAlive(after: "reading \(path)")
            return AppIdentity.userUnit(fromCgroupFile: text)
        }
    }

    /// The app id the name of ``cgroupUnit`` gives (``AppIdentity/appID(fromUnitName:)``), as
    /// xdg-desktop-portal finds a host app's id; `nil` when the process runs in no app unit.
    package var systemdAppID: String? {
        get throws(ProcessIdentityError) {
            try cgroupUnit.flatMap(AppIdentity.appID(fromUnitName:))
        }
    }

    /// The Flatpak app id of the process: the `name` of `/.flatpak-info` at the root of its
    /// sandbox (``AppIdentity/flatpakAppID(fromInfo:)``); `nil` when it runs outside Flatpak.
    /// Throws when the file is there but no regular file, or names no valid app id.
    package var flatpakAppID: String? {
        get throws(ProcessIdentityError) {
            let rootPath = "/proc/\(pid)/root"
            let root = open(rootPath, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
            guard root >= 0 else {
                let code = errno
                // A root on FUSE (a toolbox container) refuses even its owner; Flatpak never uses
                // one, so such a process is not a Flatpak app (the portal decides the same).
                var filesystem = 0
                if code == EACCES, ckp_filesystem_type(rootPath, &filesystem) == 0, filesystem == Self.fuseMagic {
                    try checkAlive(after: "examining \(rootPath)")
                    return nil
                }
                throw failure(reading: rootPath, code: code)
            }
            defer { close(root) }
            // No link is followed: an absolute one would lead out of the sandbox, into our root.
            let info = openat(root, ".flatpak-info", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
            let infoPath = "\(rootPath)/.flatpak-info"
            guard info >= 0 else {
                guard errno == ENOENT else { throw failure(reading: infoPath) }
                try checkAlive(after: "looking for \(infoPath)")
                return nil
            }
            defer { close(info) }
            var status = stat()
            guard fstat(info, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
                let bytes = readAll(info, limit: 1 << 20)
            else {
                throw ProcessIdentityError(
                    .unreadable,
                    "\(infoPath) of process \(pid) is not a readable file of at most 1 MiB"
                )
            }
            try checkAlive(after: "reading \(infoPath)")
            guard let id = AppIdentity.flatpakAppID(fromInfo: String(decoding: bytes, as: UTF8.self)) else {
                throw ProcessIdentityError(
                    .unreadable,
                    "\(infoPath) of process \(pid) names no valid app id"
                )
            }
            return id
        }
    }

    /// Whether this process descends from `ancestor`: is its child, grandchild, and so on (a
    /// process does not descend from itself; equal ``pid``s of two live pinned processes mean the
    /// same process).
    ///
    /// The parent chain is walked through `/proc/PID/stat`, each parent pinned as it is found and
    /// the link to it read again once it is pinned; the answer is `true` only when, after the walk,
    /// this process, `ancestor` and every process between are all alive. As a parent changes only
    /// when it ends, all the links read then still hold together. When a process on the way ends
    /// during the walk, the walk starts again (a few times, then the answer is `false`).
    ///
    /// Limits: a process whose parent ended was handed to a subreaper or to init and no longer
    /// descends from `ancestor` (a program that daemonizes by forking twice leaves the tree this
    /// way); an ancestor that has ended has no descendants; a parent outside this pid namespace
    /// ends the walk (its pid reads as 0); chains longer than 64 processes are not followed.
    package func isDescendant(of ancestor: PinnedProcess) throws(ProcessIdentityError) -> Bool {
        for _ in 0..<4 {
            guard isAlive else { throw Self.ended(pid, "while its ancestry was being read") }
            guard ancestor.isAlive else { return false }
            if let answer = walkParents(toward: ancestor) { return answer }
        }
        return false
    }

    // MARK: - Reading

    /// The walk of ``isDescendant(of:)``; `nil` when a process on the way ended meanwhile.
    private func walkParents(toward ancestor: PinnedProcess) -> Bool? {
        var between: [PinnedProcess] = []
        var child = self
        while between.count < 64 {
            guard let parent = Self.parentPID(of: child.pid) else { return nil }
            if parent == ancestor.pid {
                return isAlive && ancestor.isAlive && between.allSatisfy(\.isAlive) ? true : nil
            }
            if parent <= 1 {
                return isAlive && between.allSatisfy(\.isAlive) ? false : nil
            }
            // Read before the parent was pinned, the number may have passed to another process
            // meanwhile: it is the pinned process's when the child still names it now.
            guard let pinned = try? PinnedProcess(pid: parent), Self.parentPID(of: child.pid) == parent,
                child.isAlive
            else { return nil }
            between.append(pinned)
            child = pinned
        }
        return false
    }

    /// The terminal session the process belongs to, as a grant for "this terminal" is tied to:
    /// its session id, its controlling terminal (`tty_nr`, 0 for none) and when the session's
    /// leader started (`nil` when the leader has ended), so that a later session given the same
    /// number is another one.
    package struct TerminalSession: Hashable, Sendable {
        package var id: pid_t
        package var terminal: Int64
        package var leaderStarted: UInt64?

        package init(id: pid_t, terminal: Int64, leaderStarted: UInt64?) {
            self.id = id
            self.terminal = terminal
            self.leaderStarted = leaderStarted
        }

        /// The terminal as `ps` names it (`pts/3`, `tty2`), or `nil` for none.
        package var terminalName: String? {
            guard terminal != 0 else { return nil }
            let major = (terminal >> 8) & 0xFFF
            let minor = (terminal & 0xFF) | ((terminal >> 12) & 0xFFF00)
            switch major {
            case 136...143: return "pts/\((major - 136) * 256 + minor)"
            case 4 where minor < 64: return "tty\(minor)"
            default: return "terminal \(major):\(minor)"
            }
        }
    }

    /// The process's ``TerminalSession``.
    package var terminalSession: TerminalSession {
        get throws(ProcessIdentityError) {
            let path = "/proc/\(pid)/stat"
            guard let fields = Self.statFields(of: pid), fields.count > 4, let session = pid_t(fields[3]),
                let terminal = Int64(fields[4])
            else { throw failure(reading: path) }
            // The leader's start, read while this process (in its session) is alive: a session
            // lives while any process is in it, so its number cannot be another's meanwhile.
            let leader = Self.statFields(of: session).flatMap { $0.count > 19 ? UInt64($0[19]) : nil }
            try checkAlive(after: "reading \(path)")
            return TerminalSession(id: session, terminal: terminal, leaderStarted: leader)
        }
    }

    /// When the process started, in clock ticks since boot (`/proc/PID/stat`'s field 22): with
    /// its number, a name for it that a later process given the same number does not share.
    package var startTime: UInt64 {
        get throws(ProcessIdentityError) {
            let path = "/proc/\(pid)/stat"
            guard let fields = Self.statFields(of: pid), fields.count > 19, let start = UInt64(fields[19]) else {
                throw failure(reading: path)
            }
            try checkAlive(after: "reading \(path)")
            return start
        }
    }

    /// The process's parent, pinned (its link read again once pinned, so it is the parent).
    package var parent: PinnedProcess {
        get throws(ProcessIdentityError) {
            let path = "/proc/\(pid)/stat"
            guard let number = Self.parentPID(of: pid) else { throw failure(reading: path) }
            let pinned = try PinnedProcess(pid: number)
            guard Self.parentPID(of: pid) == number else { throw failure(reading: path) }
            try checkAlive(after: "reading \(path)")
            return pinned
        }
    }

    /// The parent pid `/proc/PID/stat` gives; `nil` when the process is gone.
    private static func parentPID(of pid: pid_t) -> pid_t? {
        statFields(of: pid).flatMap { $0.count > 1 ? pid_t($0[1]) : nil }
    }

    /// The fields of `/proc/PID/stat` after the command's name, from STATE (field 3) on; `nil`
    /// when the process is gone.
    private static func statFields(of pid: pid_t) -> [String]? {
        guard let bytes = readFile("/proc/\(pid)/stat", limit: 4096) else { return nil }
        // "PID (COMMAND) STATE PPID …", where COMMAND may hold spaces and parentheses: the fields
        // follow its last ')'.
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        return bytes[(close + 1)...].split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Throws ``ProcessIdentityError/Reason/exited`` unless the process is still alive.
    private func checkAlive(after action: String) throws(ProcessIdentityError) {
        guard isAlive else { throw Self.ended(pid, "while \(action)") }
    }

    /// The error for a `/proc` file that could not be read, `code` (an `errno`) telling why: the
    /// process ended (its entry is gone), or it may not be read.
    private func failure(reading path: String, code: Int32 = errno) -> ProcessIdentityError {
        let reason = errorText(code)
        guard isAlive else { return Self.ended(pid, "before \(path) could be read") }
        return ProcessIdentityError(.unreadable, "cannot read \(path): \(reason)")
    }

    private static func ended(_ pid: pid_t, _ when: String) -> ProcessIdentityError {
        ProcessIdentityError(.exited, "process \(pid) ended \(when)")
    }

    private static func openPIDFD(_ pid: pid_t) throws(ProcessIdentityError) -> Int32 {
        let pidfd = ckp_pidfd_open(pid)
        guard pidfd < 0 else { return pidfd }
        switch errno {
        case ESRCH:
            throw ended(pid, "before it could be pinned")
        case ENOSYS:
            throw ProcessIdentityError(
                .pidfdUnavailable,
                "this kernel has no pidfds (Linux 5.3 or later is needed); process \(pid) cannot be pinned"
            )
        default:
            throw ProcessIdentityError(.pidfdUnavailable, "cannot pin process \(pid): \(errorText())")
        }
    }

    /// FUSE_SUPER_MAGIC, the `f_type` of a FUSE filesystem.
    private static let fuseMagic = 0x6573_5546
}

/// The whole of a file of at most `limit` bytes; `nil` (with `errno` set) when it cannot be opened
/// or read, or is larger.
private func readFile(_ path: String, limit: Int) -> [UInt8]? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    return readAll(descriptor, limit: limit)
}

/// Reads `descriptor` to its end; `nil` (with `errno` set) when reading fails or the end lies past
/// `limit` bytes (EFBIG).
private func readAll(_ descriptor: Int32, limit: Int) -> [UInt8]? {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(descriptor, &chunk, chunk.count)
        if count == 0 { return bytes }
        if count < 0 {
            if errno == EINTR { continue }
            return nil
        }
        bytes += chunk[..<count]
        if bytes.count > limit {
            errno = EFBIG
            return nil
        }
    }
}

/// The text of `code`, an `errno`.
private func errorText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
}
#endif
