#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The right to serve a socket path, held while the process serves it: an exclusive `flock` on
/// `PATH.lock` beside the socket, which the kernel drops however the process ends.
///
/// Binding a Unix socket path means first removing whatever file is there, so a second server
/// started on the same path would delete the live socket and take its clients (keyportd's agent
/// and exports, a provider's secrets). With the lock, only the process that holds it removes a
/// stale socket and binds; a second one is refused, told which process serves the path. The lock
/// file holds the holder's process id for that message, and is removed when the holder lets go
/// (a socket of one sign-in leaves nothing behind). A lock taken on a file that was removed
/// meanwhile is let go and taken again on the file now at the path, so two processes never
/// hold locks on two files of one name.
package final class SocketLock: Sendable {
    /// Another process serves the path.
    package struct Held: Error, Sendable, CustomStringConvertible {
        /// The process that holds the lock, when its file says; `nil` when it does not.
        package var holder: Int32?
        package var description: String

        package init(holder: Int32?, description: String) {
            self.holder = holder
            self.description = description
        }
    }

    private let descriptor: Int32
    private let path: String

    /// Takes the lock for `socketPath`, which must be in a directory only this user can enter
    /// (``PrivateDirectory``): the lock file is made there with mode 0600, never through a link.
    ///
    /// - Throws: ``Held`` when another process serves the path, naming it; ``Held`` with no holder
    ///   and the reason when the lock file cannot be made.
    package init(socketPath: String) throws(Held) {
        let path = socketPath + ".lock"
        while true {
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0o600)
            guard descriptor >= 0 else {
                throw Held(
                    holder: nil,
                    description: "cannot make the lock file \(path): \(String(cString: strerror(errno)))"
                )
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let holder = Self.readHolder(descriptor)
                close(descriptor)
                let who =
                    holder.map { "process \($0)\(Self.command(of: $0).map { " (\($0))" } ?? "")" } ?? "another process"
                throw Held(holder: holder, description: "\(who) already serves \(socketPath)")
            }
            // The holder before may have removed the file between our open and our lock.
            var held = stat()
            var named = stat()
            guard fstat(descriptor, &held) == 0, lstat(path, &named) == 0, held.st_dev == named.st_dev,
                held.st_ino == named.st_ino
            else {
                close(descriptor)
                continue
            }
            let text = Array("\(getpid())\n".utf8)
            _ = ftruncate(descriptor, 0)
            _ = text.withUnsafeBufferPointer { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
            self.descriptor = descriptor
            self.path = path
            return
        }
    }

    deinit {
        // Removed while still held: whoever opens the name next makes a new file.
        unlink(path)
        close(descriptor)
    }

    private static func readHolder(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBufferPointer { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n").first ?? "")
    }

    /// The holder's program name (`/proc/PID/comm`), for the message.
    private static func command(of pid: Int32) -> String? {
        let descriptor = open("/proc/\(pid)/comm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(descriptor, &buffer, buffer.count)
        guard count > 0 else { return nil }
        let name = String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n").first.map(String.init)
        return name.map { $0.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7f } ? $0 : "?" }
    }
}
