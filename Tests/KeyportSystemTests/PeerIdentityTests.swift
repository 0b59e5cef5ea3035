import Foundation
import KeyportSystem
import KeyportTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Peer credentials and pinned processes, with real sockets and real processes.
@Suite("Peer credentials and pinned processes")
struct PeerCredentialsTests {
    /// A Python program that connects to the socket at its first argument, then prints
    /// `READY PID EXE` and waits.
    static let connector = """
        import os, socket, sys, time
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sys.argv[1])
        print("READY", os.getpid(), os.readlink("/proc/self/exe"), flush=True)
        time.sleep(120)
        """

    /// How this kernel pins a socket's peer: by `SO_PEERPIDFD` from Linux 6.5 on.
    static var expectedPinning: PinnedProcess.Pinning {
        Kernel.isAtLeast(6, 5) ? .socketPeer : .pidNumber
    }

    /// Starts a shell that prints `READY PID` and becomes `sleep`; returns it and its pid.
    static func sleeper() async throws -> (program: Program, pid: pid_t) {
        let program = try Program("/bin/sh", ["-c", "echo READY $$; exec sleep 120"])
        let ready = try await program.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("READY ") }
        return (program, try #require(pid_t(ready.dropFirst("READY ".count))))
    }

    @Test("a socket pair's peer is this process: its pid, user and group, pinned by the kernel's way")
    func ownProcess() throws {
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { for end in ends { close(end) } }

        let credentials = try PeerCredentials(socket: ends[0])
        #expect(credentials.pid == getpid())
        #expect(credentials.uid == geteuid())
        #expect(credentials.gid == getegid())

        let process = try PinnedProcess(peerOf: ends[0])
        #expect(process.pid == getpid())
        #expect(process.pinning == Self.expectedPinning)
        #expect(process.isAlive)
        #expect(try process.executable == FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        let ownCgroup = try String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)
        #expect(try process.cgroupUnit == AppIdentity.userUnit(fromCgroupFile: ownCgroup))
        #expect(try process.flatpakAppID == nil)
    }

    @Test("a child that connects: its pid and program while it lives; once killed, the pidfd says so")
    func childPeer() async throws {
        let listener = try Listener()
        let python = try await Peers.python(importing: ["socket"])
        let child = try Program(python, ["-c", Self.connector, listener.path])
        let ready = try await child.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("READY ") }
        let words = ready.split(separator: " ", maxSplits: 2).map(String.init)
        let pid = try #require(pid_t(words[1]))
        let connection = try listener.takeConnection()
        defer { close(connection) }

        let credentials = try PeerCredentials(socket: connection)
        #expect(credentials.pid == pid)
        #expect(credentials.uid == geteuid())
        let process = try PinnedProcess(peerOf: connection)
        #expect(process.pid == pid)
        #expect(process.pinning == Self.expectedPinning)
        #expect(process.isAlive)
        #expect(try process.executable == words[2])
        // The child is in this process's cgroup, and not in a Flatpak sandbox.
        let ownCgroup = try String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8)
        let ownUnit = AppIdentity.userUnit(fromCgroupFile: ownCgroup)
        #expect(try process.cgroupUnit == ownUnit)
        #expect(try process.systemdAppID == ownUnit.flatMap(AppIdentity.appID(fromUnitName:)))
        #expect(try process.flatpakAppID == nil)

        child.signal(SIGKILL)
        #expect(await child.waitForExit(timeout: .seconds(60)) == .signalled(SIGKILL))
        #expect(!process.isAlive)
        let error = #expect(throws: ProcessIdentityError.self) { try process.executable }
        #expect(error?.code == .exited)
        #expect(error?.message.contains("process \(pid) ended") == true)
        // What the kernel recorded at connect time stays.
        #expect(try PeerCredentials(socket: connection) == credentials)
    }

    @Test("a pid opened by number (the fallback before Linux 6.5) pins the process as well")
    func pidNumber() async throws {
        let (child, pid) = try await Self.sleeper()
        let process = try PinnedProcess(pid: pid)
        #expect(process.pinning == .pidNumber)
        #expect(process.isAlive)
        #expect(try process.executable.hasSuffix("/sleep"))

        child.signal(SIGKILL)
        #expect(await child.waitForExit(timeout: .seconds(60)) == .signalled(SIGKILL))
        #expect(!process.isAlive)
        let error = #expect(throws: ProcessIdentityError.self) { try process.cgroupUnit }
        #expect(error?.code == .exited)
    }

    @Test(
        "once a pinned process is gone, a new process given its pid is not taken for it",
        .enabled(if: geteuid() == 0, "needs root to choose the next pid (ns_last_pid)")
    )
    func pidReused() async throws {
        let (first, pid) = try await Self.sleeper()
        let process = try PinnedProcess(pid: pid)
        first.signal(SIGKILL)
        #expect(await first.waitForExit(timeout: .seconds(60)) == .signalled(SIGKILL))

        // Hand the number to a new process: the kernel gives out the number after ns_last_pid
        // next, unless another process is started in between (then try again).
        var successor: Program?
        for _ in 0..<20 where successor == nil {
            let lastPID = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC)
            let text = Array("\(pid - 1)".utf8)
            let written = lastPID >= 0 ? write(lastPID, text, text.count) : -1
            let reason = String(cString: strerror(errno))
            if lastPID >= 0 { close(lastPID) }
            if written != text.count { try Test.cancel("cannot choose the next pid here: \(reason)") }
            let candidate = try await Self.sleeper()
            if candidate.pid == pid { successor = candidate.program }
        }
        #expect(successor != nil, "no new process got pid \(pid) in 20 tries")
        guard successor != nil else { return }

        // /proc/PID/exe now shows the successor's program; the pidfd refuses it.
        #expect(!process.isAlive)
        let error = #expect(throws: ProcessIdentityError.self) { try process.executable }
        #expect(error?.code == .exited)
        #expect(try PinnedProcess(pid: pid).isAlive)
    }

    @Test("a shell's child descends from it and from this process; an unrelated process does not")
    func descendants() async throws {
        let shell = try Program("/bin/sh", ["-c", "sleep 120 >/dev/null 2>&1 & echo READY $$ $!; wait"])
        let ready = try await shell.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("READY ") }
        let pids = ready.split(separator: " ").dropFirst().compactMap { pid_t($0) }
        try #require(pids.count == 2)
        let parent = try PinnedProcess(pid: pids[0])
        let child = try PinnedProcess(pid: pids[1])
        let ourselves = try PinnedProcess(pid: getpid())
        let other = try await Self.sleeper()
        let unrelated = try PinnedProcess(pid: other.pid)

        #expect(try child.isDescendant(of: parent))
        #expect(try child.isDescendant(of: ourselves))
        #expect(try parent.isDescendant(of: ourselves))
        #expect(try !parent.isDescendant(of: child))
        #expect(try !parent.isDescendant(of: parent))
        #expect(try !child.isDescendant(of: unrelated))
        #expect(try !unrelated.isDescendant(of: parent))

        // The shell ends alone: its child lives on, handed to another parent.
        shell.signal(SIGKILL)
        #expect(await shell.waitForExit(timeout: .seconds(60)) == .signalled(SIGKILL))
        defer { kill(-pids[0], SIGKILL) }  // the orphan, through the process group it still holds
        #expect(child.isAlive)
        #expect(try !child.isDescendant(of: parent))
        let error = #expect(throws: ProcessIdentityError.self) { try parent.isDescendant(of: ourselves) }
        #expect(error?.code == .exited)
    }

    @Test(
        "a peer running as another user is seen with that user's ids",
        .enabled(if: geteuid() == 0, "needs root to start a process as another user")
    )
    func otherUser() async throws {
        // The venv's Python may live where another user cannot enter (root's home): the system's.
        let python = try Peers.require("/usr/bin/python3", "the system's python3")
        let setpriv = try Peers.require("/usr/bin/setpriv", "setpriv (util-linux)")
        let listener = try Listener()
        // Let the other user reach the socket: through the directory, and write to the socket.
        #expect(chmod(listener.directory.path, 0o711) == 0 && chmod(listener.path, 0o777) == 0)
        let child = try Program(
            setpriv,
            ["--reuid=65534", "--regid=65534", "--clear-groups", python, "-c", Self.connector, listener.path],
            environment: ["PATH": "/usr/bin:/bin"]
        )
        let ready = try await child.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("READY ") }
        let pid = try #require(ready.split(separator: " ").dropFirst().first.flatMap { pid_t($0) })
        let connection = try listener.takeConnection()
        defer { close(connection) }

        let credentials = try PeerCredentials(socket: connection)
        #expect(credentials.pid == pid)
        #expect(credentials.uid == 65534)
        #expect(credentials.gid == 65534)
        let process = try PinnedProcess(peerOf: connection)
        #expect(process.pid == pid)
        #expect(process.isAlive)
    }

    @Test("what is not a connected socket has no peer; a pid no process has cannot be pinned")
    func failures() throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { for end in ends { close(end) } }
        let error = #expect(throws: ProcessIdentityError.self) { try PeerCredentials(socket: ends[0]) }
        #expect(error?.code == .noPeer)
        #expect(error?.message.contains("descriptor \(ends[0])") == true)
        let pinning = #expect(throws: ProcessIdentityError.self) { try PinnedProcess(peerOf: ends[0]) }
        #expect(pinning?.code == .noPeer)

        // A TCP connection has a peer, but no process the kernel records for it.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer {
            close(listener)
            close(client)
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let connected = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(listener, address, length) == 0 && listen(listener, 1) == 0
                    && getsockname(listener, address, &length) == 0 && connect(client, address, length) == 0
            }
        }
        #expect(connected)
        let tcp = #expect(throws: ProcessIdentityError.self) { try PinnedProcess(peerOf: client) }
        #expect(tcp?.code == .noPeer)

        // Larger than any pid_max the kernel allows (4,194,304).
        let none = #expect(throws: ProcessIdentityError.self) { try PinnedProcess(pid: 0x3fff_ffff) }
        #expect(none?.code == .exited)
    }
}

/// A Unix socket listening in a private temporary directory, removed when released.
private final class Listener {
    let directory: TemporaryDirectory
    let path: String
    private let descriptor: Int32

    init() throws {
        directory = try TemporaryDirectory("kp-peer")
        path = directory.path + "/s"
        descriptor = try RawUnixSocket.bound(to: path, listening: true)
    }

    deinit {
        close(descriptor)
        directory.remove()
    }

    /// The connection a peer has already made (it said so), accepted without waiting.
    func takeConnection() throws -> Int32 {
        let connection = accept(descriptor, nil, nil)
        guard connection >= 0 else {
            throw SupportFailure(description: "no connection to accept on \(path): \(String(cString: strerror(errno)))")
        }
        return connection
    }
}

/// The naming rules, as text in and text out.
@Suite("App identity rules")
struct AppIdentityTests {
    @Test(
        "an app id from a systemd unit name, by the portal's rule",
        arguments: [
            ("app-org.example.App-1234.scope", "org.example.App"),
            ("app-gnome-org.example.App-1234.scope", "org.example.App"),
            ("app-flatpak-org.example.App-1234.scope", "org.example.App"),
            ("app-kde-org.example.App-ab12.slice", "org.example.App"),
            ("app-org.example.App.service", "org.example.App"),
            ("app-org.example.App@xyz.service", "org.example.App"),
            ("app-gnome-org.example.App@12ab.service", "org.example.App"),
            ("app-gnome-org.example.App-autostart.service", "org.example.App"),
            // Escaped as unit names are: "-" in an app id is \x2d, other bytes too.
            (#"app-gnome-org.gnome.Evolution\x2dalarm\x2dnotify-2437.scope"#, "org.gnome.Evolution-alarm-notify"),
            (#"app-org.example.my\x2dapp-1234.scope"#, "org.example.my-app"),
            (#"app-org.\xc3\xa9t\xc3\xa9.App-1.scope"#, "org.été.App"),
            (#"app-org.ex\ample-1.scope"#, #"org.ex\ample"#),
            // A launcher is taken only when what follows still holds an app id and a RANDOM.
            ("app-firefox-1234.scope", "firefox"),
            ("app-gnome-firefox-1234.scope", "firefox"),
            // The shortest app id that leaves a RANDOM of letters and digits.
            ("app-gnome-org.example.App-1234-5678.scope", "org.example.App-1234"),
        ]
    )
    func unitNames(unit: String, appID: String) {
        #expect(AppIdentity.appID(fromUnitName: unit) == appID)
    }

    @Test(
        "units that are not an app's name none",
        arguments: [
            "session-2.scope", "init.scope", "app.slice", "gnome-terminal-server.service",
            "vte-spawn-0c5e2f0e-b8d5-4d62-9b5d-1f6e0b3c1a2d.scope", "app-org.example.App.scope",
            "app-org.example.App-12.34.scope", "app-org.example.App-1234.socket", "app-.scope", "app-.service",
            "app--1.scope", #"app-org.example.App\x00-1.scope"#, #"app-org.\xff.App-1.scope"#, "",
        ]
    )
    func notAppUnits(unit: String) {
        #expect(AppIdentity.appID(fromUnitName: unit) == nil)
    }

    @Test(
        "the user unit of a /proc/PID/cgroup file",
        arguments: [
            (
                "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-org.example.App-1234.scope\n",
                "app-gnome-org.example.App-1234.scope"
            ),
            (
                "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-org.example.App-1234.scope/worker",
                "app-gnome-org.example.App-1234.scope"
            ),
            (
                "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-org.example.App@ab12.service\n",
                "app-org.example.App@ab12.service"
            ),
            ("0::/user.slice/user-1000.slice/user@1000.service/init.scope\n", "init.scope"),
            ("0::/user.slice/user-1000.slice/user@1000.service/_cpu.service\n", "cpu.service"),
            (
                "12:name=systemd:/user.slice/user-1000.slice/user@1000.service/app.slice/app-x-1.scope\n4:memory:/\n0::/\n",
                "app-x-1.scope"
            ),
        ]
    )
    func cgroupFiles(file: String, unit: String) {
        #expect(AppIdentity.userUnit(fromCgroupFile: file) == unit)
    }

    @Test(
        "no user unit outside a user manager",
        arguments: [
            "0::/user.slice/user-1000.slice/session-2.scope\n", "0::/system.slice/keyportd.service\n", "0::/\n",
            "9:name=systemd:/\n4:memory:/process_api/3e25\n0::/\n",
            "0::/user.slice/user-1000.slice/user@1000.service\n",
            "",
        ]
    )
    func noUserUnit(file: String) {
        #expect(AppIdentity.userUnit(fromCgroupFile: file) == nil)
    }

    @Test(
        "the app id of a .flatpak-info file",
        arguments: [
            (
                "[Application]\nname=org.example.App\nruntime=runtime/org.gnome.Platform/x86_64/47\n\n[Instance]\ninstance-id=1\n",
                "org.example.App"
            ),
            ("# a comment\n[Application]\nname[de]=org.example.Anders\nname = org.example.App\n", "org.example.App"),
            ("[Application]\nname=org.example.First\nname=org.example.Second\n", "org.example.Second"),
            // A runtime run on its own names itself; the portal reads the runtime's name then.
            ("[Runtime]\nname=org.gnome.Sdk\n", "org.gnome.Sdk"),
            ("[Application]\nname=org.example.App\n[Runtime]\nname=org.gnome.Platform\n", "org.gnome.Platform"),
        ]
    )
    func flatpakInfo(file: String, appID: String) {
        #expect(AppIdentity.flatpakAppID(fromInfo: file) == appID)
    }

    @Test(
        "no app id from a .flatpak-info that names none or an invalid one",
        arguments: [
            "[Instance]\nname=org.example.App\n", "[Application]\nname=../../etc/passwd\n", "[Application]\nname=org\n",
            "[Application]\nname=org.example.App \n", "[Runtime]\nruntime=org.gnome.Platform\n",
            "name=org.example.App\n",
            "",
        ]
    )
    func noFlatpakInfo(file: String) {
        #expect(AppIdentity.flatpakAppID(fromInfo: file) == nil)
    }

    @Test("valid app ids: dotted, two elements or more, '-' only in the last")
    func appIDs() {
        for valid in ["org.example.App", "com.example.my-app", "org.example.App_2", "snap.foo", "0ad.example.Game"] {
            #expect(AppIdentity.isValidAppID(valid), "\(valid)")
        }
        let invalid = [
            "", "org", ".org.example", "org..example", "org.example.", "org.my-example.App", "org.example.App!",
            "org.exämple.App", "org.example." + String(repeating: "a", count: 244),
        ]
        for id in invalid {
            #expect(!AppIdentity.isValidAppID(id), "\(id)")
        }
        #expect(AppIdentity.isValidAppID("org.example." + String(repeating: "a", count: 243)))
    }
}
