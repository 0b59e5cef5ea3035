import KeyportErrors

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a Unix-domain socket could not be made, connected or used (Varlink's blocking connections
/// say `VarlinkConnectionError`, the same type).
package struct UnixSocketError: RecordedError {
    /// A stable name for why.
    package typealias Code = ErrorCodeOf<UnixSocketError>

    package var record: ErrorRecord<Code>

    package init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
    }

    /// Nothing listens there: no socket at the path, or a stale one.
    package var isRefused: Bool { code == .refused }
}

extension ErrorCodeOf<UnixSocketError> {
    /// Nothing listens there: no socket at the path, or a stale one.
    package static let refused = Self(rawValue: "refused")
    /// The path does not fit in a socket address.
    package static let pathTooLong = Self(rawValue: "path-too-long")
    /// The system refused to make, bind or connect the socket for another reason.
    package static let socketFailed = Self(rawValue: "socket-failed")
    /// The connection broke, or the other side does not speak the protocol.
    package static let connectionBroken = Self(rawValue: "connection-broken")
    /// The process that answers is not the one the caller means to talk to, or cannot be told.
    package static let unexpectedPeer = Self(rawValue: "unexpected-peer")
    /// The service the caller starts did not come up.
    package static let notStarted = Self(rawValue: "not-started")
}

/// Unix-domain socket addresses, for the connections and listeners that make their own sockets:
/// keyportd's clients, its descriptor transport, and the clipboard's X11 and Wayland connections.
package enum UnixSocketAddress {
    /// Calls `body` with the address of `path`; `abstract`, in Linux's abstract namespace (no
    /// file: a leading NUL, then the name), where X servers listen too.
    ///
    /// - Throws: ``UnixSocketError`` when `path` is too long for a socket address.
    package static func with<Result>(
        _ path: String,
        abstract: Bool = false,
        _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) throws(UnixSocketError) -> Result {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let start = abstract ? 1 : 0
        guard start + path.utf8.count < capacity else {
            throw UnixSocketError(.pathTooLong, "the socket path \(path) is longer than \(capacity - 1 - start) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw[0] = 0
            UnsafeMutableRawBufferPointer(rebasing: raw[start...]).copyBytes(from: path.utf8)
            raw[start + path.utf8.count] = 0
        }
        // An abstract name is as long as it is, without a terminating NUL.
        let length =
            abstract
            ? MemoryLayout<sa_family_t>.size + 1 + path.utf8.count
            : MemoryLayout<sockaddr_un>.size
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(length)) }
        }
    }

    /// A new stream socket connected to `path` (close-on-exec).
    ///
    /// - Throws: ``UnixSocketError``, `refused` when nothing listens there.
    package static func connect(_ path: String, abstract: Bool = false) throws(UnixSocketError) -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw UnixSocketError(.socketFailed, "cannot make a socket: \(String(cString: strerror(errno)))")
        }
        let connected: Int32
        do {
            connected = try with(path, abstract: abstract) { address, length in
                #if canImport(Glibc)
                Glibc.connect(descriptor, address, length)
                #else
                Musl.connect(descriptor, address, length)
                #endif
            }
        } catch {
            close(descriptor)
            throw error
        }
        guard connected == 0 else {
            let code = errno
            close(descriptor)
            throw UnixSocketError(
                code == ECONNREFUSED || code == ENOENT ? .refused : .socketFailed,
                "cannot connect to \(abstract ? "@" : "")\(path): \(String(cString: strerror(code)))"
            )
        }
        return descriptor
    }
}
