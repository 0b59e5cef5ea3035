#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The connection ended, or could not be made, before the reply came.
package struct VarlinkConnectionError: Error, Hashable, Sendable, CustomStringConvertible {
    package var description: String
    /// The connection was refused: nothing listens on the socket (a stale socket file).
    package var isRefused: Bool

    package init(_ description: String, isRefused: Bool = false) {
        self.description = description
        self.isRefused = isRefused
    }
}

/// A connection for a program that makes a call or two and exits (`keyport otp`): plain blocking
/// socket calls on the caller's thread.
///
/// It exists beside swift-nio's ``VarlinkConnection`` for start-up time: a program that links only
/// the standard library and this module starts in about 2 ms, one that loads Foundation and an
/// event loop in 10–20 ms (docs/performance.md). Messages are the same ``VarlinkCall`` and
/// ``VarlinkReply``; only the transport differs.
package final class VarlinkBlockingConnection {
    private let descriptor: Int32
    private let maximumMessageSize: Int
    /// What arrived after the last message's NUL: the start of the next message.
    private var pending: [UInt8] = []

    /// Connects to the service listening at `path` (a Unix-domain socket).
    ///
    /// - Throws: ``VarlinkConnectionError``, with `isRefused` when nothing listens there.
    package init(path: String, maximumMessageSize: Int) throws(VarlinkConnectionError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            throw VarlinkConnectionError("the socket path \(path) is longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw VarlinkConnectionError("cannot make a socket: \(String(cString: strerror(errno)))")
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            close(descriptor)
            throw VarlinkConnectionError(
                "cannot connect to \(path): \(String(cString: strerror(code)))",
                isRefused: code == ECONNREFUSED || code == ENOENT
            )
        }
        self.descriptor = descriptor
        self.maximumMessageSize = maximumMessageSize
    }

    deinit { close(descriptor) }

    /// Calls a method that replies once; returns the reply's parameters.
    ///
    /// - Throws: the service's ``VarlinkError``, or ``VarlinkConnectionError``.
    package func call(_ method: String, _ parameters: RawJSON = .emptyObject) throws -> RawJSON {
        try transmit(VarlinkCall(method: method, parameters: parameters))
        return try nextReply().parameters
    }

    /// Calls `method`, which replies once, with `parameters`; returns its reply.
    ///
    /// - Throws: the service's ``VarlinkError``, ``VarlinkConnectionError``, or a
    ///   ``VarlinkDecodingError`` when the reply is not the method's.
    package func call<Method: VarlinkMethodType>(
        _ method: Method.Type,
        _ parameters: Method.Parameters
    ) throws -> Method.Reply {
        try call(Method.name, RawJSON(encoding: parameters)).decode(Method.Reply.self)
    }

    /// Calls a method with `more`: `each` hears every reply but the last, as it comes; the last
    /// one's parameters are returned.
    ///
    /// - Throws: the service's ``VarlinkError``, ``VarlinkConnectionError``, or what `each` throws.
    package func call(
        _ method: String,
        _ parameters: RawJSON,
        each: (RawJSON) throws -> Void
    ) throws -> RawJSON {
        try transmit(VarlinkCall(method: method, parameters: parameters, more: true))
        while true {
            let reply = try nextReply()
            guard reply.continues else { return reply.parameters }
            try each(reply.parameters)
        }
    }

    private func nextReply() throws -> VarlinkReply {
        let reply: VarlinkReply
        do {
            reply = try VarlinkReply(message: try receive())
        } catch let error as VarlinkMessageError {
            throw VarlinkConnectionError("the service's reply is not Varlink: \(error)")
        }
        if let name = reply.error { throw VarlinkError(name: name, parameters: reply.parameters) }
        return reply
    }

    private func transmit(_ call: VarlinkCall) throws(VarlinkConnectionError) {
        var message = call.message
        message.append(0)
        var sent = 0
        while sent < message.count {
            let written = message.withUnsafeBytes {
                send(descriptor, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw VarlinkConnectionError("the service closed the connection: \(String(cString: strerror(errno)))")
            }
            sent += written
        }
    }

    /// The next message, without its NUL.
    private func receive() throws(VarlinkConnectionError) -> [UInt8] {
        var searched = 0
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let end = pending[searched...].firstIndex(of: 0)
            guard (end ?? pending.count) <= maximumMessageSize else {
                throw VarlinkConnectionError(
                    "a message is longer than \(maximumMessageSize) bytes, the most this connection takes"
                )
            }
            if let end {
                let message = Array(pending[..<end])
                pending.removeSubrange(...end)
                return message
            }
            searched = pending.count
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw VarlinkConnectionError("the connection failed: \(String(cString: strerror(errno)))")
            }
            guard count > 0 else {
                throw VarlinkConnectionError("the service closed the connection before it replied")
            }
            pending += chunk[..<count]
        }
    }
}
