import Foundation
import KeyportSystem
import KeyportTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite("XDG base directories")
struct BaseDirectoriesTests {
    @Test("absolute variables win; relative ones are ignored, as the specification says")
    func variables() {
        let set = BaseDirectories(environment: [
            "HOME": "/home/alice", "XDG_RUNTIME_DIR": "/run/user/1000", "XDG_CACHE_HOME": "/c",
            "XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "/e",
        ])
        #expect(set.runtime == "/run/user/1000")
        #expect(set.cacheHome == "/c")
        #expect(set.dataHome == "/d")
        #expect(set.configHome == "/e")
        #expect(set.keyportRuntime == "/run/user/1000/keyport")

        let relative = BaseDirectories(environment: [
            "HOME": "/home/alice", "XDG_RUNTIME_DIR": "run", "XDG_CACHE_HOME": "c", "XDG_DATA_HOME": "",
            "XDG_CONFIG_HOME": "e",
        ])
        #expect(relative.runtime == nil)
        #expect(relative.cacheHome == "/home/alice/.cache")
        #expect(relative.dataHome == "/home/alice/.local/share")
        #expect(relative.configHome == "/home/alice/.config")
        #expect(relative.stateHome == "/home/alice/.local/state")
        #expect(relative.keyportRuntime == "/home/alice/.cache/keyport/run")
    }

    @Test("without HOME the user database's home directory is used")
    func homeFromUserDatabase() throws {
        let entry = try #require(getpwuid(geteuid()))
        let expected = String(cString: entry.pointee.pw_dir)
        #expect(BaseDirectories(environment: [:]).home == URL(fileURLWithPath: expected).path)
        #expect(BaseDirectories(environment: ["HOME": "relative"]).home == URL(fileURLWithPath: expected).path)
    }

    @Test("paths are standardized as URL standardizes them: '.', '..', repeated and trailing slashes")
    func paths() {
        let cases = ["/a/b/", "/a//b/./c/..", "/../a", "/", "//", "/a/b/c/../../d/.", "/home/alice/.cache"]
        for path in cases {
            #expect(FilePaths.standardized(path) == URL(fileURLWithPath: path).standardizedFileURL.path, "\(path)")
            #expect(
                FilePaths.parent(path)
                    == URL(fileURLWithPath: path).standardizedFileURL.deletingLastPathComponent().path,
                "\(path)"
            )
        }
        #expect(FilePaths.join("/run/user/1000/", "keyport") == "/run/user/1000/keyport")
        #expect(
            BaseDirectories(environment: ["XDG_RUNTIME_DIR": "/run/user/1000/"]).keyportRuntime
                == "/run/user/1000/keyport"
        )
    }

    @Test("the environment read without Foundation is ProcessInfo's")
    func environment() {
        #expect(ProcessEnvironment.current == ProcessInfo.processInfo.environment)
    }

    @Test("programs are found on PATH, or taken as given when the name is a path")
    func executables() {
        #expect(Executable.find("sh", path: "/nonexistent:/bin:/usr/bin") != nil)
        #expect(Executable.find("sh", path: "/nonexistent") == nil)
        #expect(Executable.find("/bin/sh", path: "") == "/bin/sh")
        #expect(Executable.find("/nonexistent/sh", path: "/bin") == nil)
    }
}

@Suite("private directories")
struct PrivateDirectoryTests {
    /// A fresh 0700 directory under the temporary directory, removed by the caller.
    private func scratch() throws -> URL {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("keyport-system-XXXXXX").path
        var template = Array(base.utf8CString)
        let made = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
        return URL(fileURLWithPath: String(cString: made), isDirectory: true)
    }

    @Test("missing levels are created 0700 and checked; without create, a missing directory is nil")
    func creates() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let target = root.appendingPathComponent("a/b", isDirectory: true)
        #expect(try PrivateDirectory.prepare(target.path, contents: "tests", create: false) == nil)
        let made = try #require(try PrivateDirectory.prepare(target.path, contents: "tests", create: true))
        #expect(made == target.standardizedFileURL.path)
        for path in [target.path, root.appendingPathComponent("a").path] {
            var info = stat()
            #expect(lstat(path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o700, "\(path)")
        }
    }

    @Test("a directory open to others, a link, or a file is refused, naming the path and the fix")
    func refuses() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let open = root.appendingPathComponent("open")
        #expect(mkdir(open.path, 0o700) == 0 && chmod(open.path, 0o755) == 0)
        let error = #expect(throws: PrivateDirectory.Unusable.self) {
            try PrivateDirectory.prepare(open.path, contents: "tests", create: true)
        }
        #expect(error?.code == .unsafe)
        #expect(error?.message.contains("chmod 700 \(open.path)") == true)

        let link = root.appendingPathComponent("link")
        let real = root.appendingPathComponent("real")
        #expect(mkdir(real.path, 0o700) == 0 && symlink(real.path, link.path) == 0)
        let linked = #expect(throws: PrivateDirectory.Unusable.self) {
            try PrivateDirectory.prepare(link.path, contents: "tests", create: false)
        }
        #expect(linked?.code == .unsafe)
        #expect(linked?.message.contains("not a directory") == true)

        // A private directory above an open one is not enough: each listed level is checked.
        let inner = root.appendingPathComponent("real/inner")
        #expect(mkdir(inner.path, 0o700) == 0)
        let above = #expect(throws: PrivateDirectory.Unusable.self) {
            try PrivateDirectory.prepare(inner.path, alsoPrivate: [open.path], contents: "tests", create: false)
        }
        #expect(above?.message.contains(open.path) == true)
    }

    @Test("only a socket of this user's counts as one")
    func ownSocket() throws {
        let root = try scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let file = root.appendingPathComponent("file.sock")
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data()))
        #expect(!UnixSocketPath.isOwnSocket(file.path))
        let path = root.appendingPathComponent("s.sock").path
        let descriptor = try RawUnixSocket.bound(to: path, listening: false)
        defer { close(descriptor) }
        #expect(UnixSocketPath.isOwnSocket(path))
    }
}

@Suite("Latch")
struct LatchTests {
    @Test("every waiter resumes once the latch opens; a later wait returns at once")
    func opens() async {
        let latch = Latch()
        #expect(!latch.isOpen)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 { group.addTask { await latch.wait() } }
            group.addTask { latch.open() }
        }
        #expect(latch.isOpen)
        await latch.wait()
    }

    @Test("a cancelled waiter returns without the latch opening")
    func cancellation() async {
        let latch = Latch()
        let waiter = Task { await latch.wait() }
        waiter.cancel()
        await waiter.value
        #expect(!latch.isOpen)
    }
}

@Suite("atomic file replacement")
struct AtomicFileTests {
    @Test("a new file is 0600; an existing one keeps its mode; a link is followed and stays a link")
    func replaces() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("keyport-atomic-XXXXXX").path
        var template = Array(base.utf8CString)
        let root = URL(
            fileURLWithPath: String(
                cString: try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
            )
        )
        defer { try? FileManager.default.removeItem(at: root) }

        let fresh = root.appendingPathComponent("new.json").path
        try AtomicFile.write(Array("one".utf8), to: fresh)
        var info = stat()
        #expect(stat(fresh, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(FileManager.default.contents(atPath: fresh) == Data("one".utf8))

        #expect(chmod(fresh, 0o644) == 0)
        try AtomicFile.write(Array("two".utf8), to: fresh)
        #expect(stat(fresh, &info) == 0 && info.st_mode & 0o777 == 0o644)
        #expect(FileManager.default.contents(atPath: fresh) == Data("two".utf8))

        let link = root.appendingPathComponent("link.json").path
        #expect(symlink(fresh, link) == 0)
        try AtomicFile.write(Array("three".utf8), to: link)
        #expect(lstat(link, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)
        #expect(FileManager.default.contents(atPath: fresh) == Data("three".utf8))
        // Nothing but the two names is left behind (no temporary files).
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() == ["link.json", "new.json"])
    }

    @Test("a failure names the file and leaves the old one as it was")
    func failure() throws {
        let error = #expect(throws: AtomicFile.WriteError.self) {
            try AtomicFile.write(Array("x".utf8), to: "/nonexistent-keyport-directory/file.json")
        }
        #expect(error?.message.hasPrefix("cannot write /nonexistent-keyport-directory/file.json") == true)
    }
}
