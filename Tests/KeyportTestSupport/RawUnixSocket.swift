import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Unix-domain sockets at the system-call level, for tests that must do what no well-behaved client
/// would: send garbage, leave a stale socket file, read a peer's credentials.
package enum RawUnixSocket {
    /// A new stream socket bound to `path`, listening (non-blocking) when `listening`. The caller
    /// closes it.
    package static func bound(to path: String, listening: Bool) throws -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw failure("socket") }
        let bound = withAddress(path) { bind(descriptor, $0, $1) }
        guard bound == 0 else {
            close(descriptor)
            throw failure("cannot bind \(path)")
        }
        if listening {
            guard listen(descriptor, 8) == 0, fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK) == 0
            else {
                close(descriptor)
                throw failure("cannot listen on \(path)")
            }
        }
        return descriptor
    }

    /// A new stream socket connected to `path`. The caller closes it.
    package static func connected(to path: String) throws -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw failure("socket") }
        guard withAddress(path, { connect(descriptor, $0, $1) }) == 0 else {
            close(descriptor)
            throw failure("cannot connect to \(path)")
        }
        return descriptor
    }

    /// Connects to `path`, sends `bytes` (as much as the peer takes before it closes), and reads
    /// until the peer closes the connection or `enough` says what arrived suffices.
    ///
    /// - Throws: when nothing more arrives for `seconds` and the peer has not closed: a peer that
    ///   leaves the connection open is not mistaken for one that closed it.
    package static func exchange(
        _ bytes: [UInt8],
        with path: String,
        timeout seconds: Int = 10,
        enough: ([UInt8]) -> Bool = { _ in false }
    ) throws -> [UInt8] {
        let descriptor = try connected(to: path)
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written <= 0 { break }  // the peer may close early (a message over its limit)
            offset += written
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !enough(received) {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                throw SupportFailure(
                    description: "the peer neither answered nor closed the connection within \(seconds) s"
                )
            }
            if count <= 0 { break }  // closed (or reset)
            received += buffer[0..<count]
        }
        return received
    }

    private static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    private static func failure(_ what: String) -> SupportFailure {
        SupportFailure(description: "\(what): \(String(cString: strerror(errno)))")
    }
}

/// Runs blocking work (socket calls that wait) on a thread of its own, so the wait does not hold
/// one of Swift's few cooperative threads: with them all blocked, no other test's task — nor the
/// handler waiting on a listener in this process — could run until the wait ends.
package func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
