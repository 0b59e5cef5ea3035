#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a Unix-domain socket could not be made or connected.
package struct UnixSocketError: Error, Hashable, Sendable, CustomStringConvertible {
    package var description: String
    /// Nothing listens there: no socket at the path, or a stale one.
    package var isRefused: Bool

    package init(_ description: String, isRefused: Bool = false) {
        self.description = description
        self.isRefused = isRefused
    }
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
            throw UnixSocketError("the socket path \(path) is longer than \(capacity - 1 - start) bytes")
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
    /// - Throws: ``UnixSocketError``, with `isRefused` when nothing listens there.
    package static func connect(_ path: String, abstract: Bool = false) throws(UnixSocketError) -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw UnixSocketError("cannot make a socket: \(String(cString: strerror(errno)))")
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
                "cannot connect to \(abstract ? "@" : "")\(path): \(String(cString: strerror(code)))",
                isRefused: code == ECONNREFUSED || code == ENOENT
            )
        }
        return descriptor
    }
}
