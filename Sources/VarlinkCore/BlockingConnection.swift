import KeyportSystemCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The connection ended, or could not be made, before the reply came: the Unix socket's error
/// (`isRefused` when nothing listens on the socket, a stale socket file).
package typealias VarlinkConnectionError = UnixSocketError

/// A connection for a program that makes a call or two and exits (`keyport otp`): plain blocking
/// socket calls on the caller's thread.
///
/// It exists beside swift-nio's ``VarlinkConnection`` for start-up time: a program that links only
/// the standard library and this module starts in about 2 ms, one that loads Foundation and an
/// event loop in 10–20 ms (docs/performance.md). Messages are the same ``VarlinkCall`` and
/// ``VarlinkReply``; only the transport differs.
package final class VarlinkBlockingConnection {
    private var descriptor: Int32
    /// The messages' framing, and which descriptors came with which.
    private let framing: DescriptorFraming
    /// Replies read from the socket and not returned yet.
    private var received: [(bytes: [UInt8], descriptors: ReceivedDescriptors)] = []

    /// The most descriptors one reply may carry.
    static let maximumDescriptors = 4

    /// Connects to the service listening at `path` (a Unix-domain socket).
    ///
    /// - Throws: ``VarlinkConnectionError``, with `isRefused` when nothing listens there.
    package init(path: String, maximumMessageSize: Int) throws(VarlinkConnectionError) {
        descriptor = try UnixSocketAddress.connect(path)
        framing = DescriptorFraming(maximumMessageSize: maximumMessageSize, maximumDescriptors: Self.maximumDescriptors)
    }

    /// The connection's socket, for a caller that stops a blocked call from another thread
    /// (`shutdown(2)`) while the connection still holds it.
    package var socket: Int32 { descriptor }

    /// Gives up the connection's socket to the caller, who closes it (a swift-nio connection that
    /// reads the rest of the replies, say); the connection cannot be used after.
    package func releaseSocket() -> Int32 {
        precondition(descriptor >= 0, "the socket was given up already")
        precondition(received.isEmpty && framing.unfinished == 0, "replies read here would be lost")
        defer { descriptor = -1 }
        return descriptor
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Calls a method that replies once; returns the reply's parameters.
    ///
    /// - Throws: the service's ``VarlinkError``, or ``VarlinkConnectionError``.
    package func call(_ method: String, _ parameters: RawJSON = .emptyObject) throws -> RawJSON {
        try transmit(VarlinkCall(method: method, parameters: parameters).outgoing)
        return try nextReply().reply.parameters
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
        try transmit(VarlinkCall(method: method, parameters: parameters, more: true).outgoing)
        while true {
            let reply = try nextReply().reply
            guard reply.continues else { return reply.parameters }
            try each(reply.parameters)
        }
    }

    /// Sends `call` with `descriptors` attached (passed with `SCM_RIGHTS`; the service gets its
    /// own copies, these stay open): the call's parameters name them by their index. Read the
    /// reply with ``nextReply()``.
    ///
    /// - Throws: ``VarlinkConnectionError``.
    package func send(_ call: VarlinkCall, descriptors: [Int32] = []) throws(VarlinkConnectionError) {
        try transmit(call.outgoing, descriptors: descriptors)
    }

    /// Sends `call` with `pieces` for its parameters (``VarlinkCall/outgoing(parameterPieces:)``),
    /// each written from where it lies. Read the reply with ``nextReply()``.
    ///
    /// - Throws: ``VarlinkConnectionError``.
    package func send(_ call: VarlinkCall, parameterPieces pieces: [[UInt8]]) throws(VarlinkConnectionError) {
        try transmit(call.outgoing(parameterPieces: pieces))
    }

    /// The next reply, with the descriptors that came with it.
    ///
    /// - Throws: the service's ``VarlinkError``, or ``VarlinkConnectionError``.
    package func nextReply() throws -> (reply: VarlinkReply, descriptors: ReceivedDescriptors) {
        let (message, descriptors) = try receive()
        let reply: VarlinkReply
        do {
            reply = try VarlinkReply(message: message)
        } catch {
            throw VarlinkConnectionError(.connectionBroken, "the service's reply is not Varlink: \(error)")
        }
        if let name = reply.error { throw VarlinkError(name: name, parameters: reply.parameters) }
        return (reply, descriptors)
    }

    /// Writes `message` in the pieces it was made of (the envelope, parameters that may be a 45 MB
    /// document, the rest, the NUL), never joined into one more copy of the message.
    private func transmit(_ message: OutgoingMessage, descriptors: [Int32] = []) throws(VarlinkConnectionError) {
        var first = true
        for part in message.parts + [[0]] {
            var sent = 0
            while sent < part.count {
                do {
                    // The descriptors go with the first send, which holds this message's bytes only
                    // (DescriptorFraming says why that matters).
                    sent += try part.withUnsafeBytes { bytes in
                        try DescriptorPassing.send(
                            UnsafeRawBufferPointer(rebasing: bytes[sent...]),
                            descriptors: first ? descriptors : [],
                            on: descriptor
                        )
                    }
                    first = false
                } catch {
                    throw VarlinkConnectionError(.connectionBroken, "the service closed the connection: \(error)")
                }
            }
        }
    }

    /// The next message, without its NUL, and its descriptors.
    private func receive() throws(VarlinkConnectionError) -> (bytes: [UInt8], descriptors: ReceivedDescriptors) {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while received.isEmpty {
            do {
                let (count, descriptors) = try chunk.withUnsafeMutableBytes { buffer in
                    try DescriptorPassing.receive(into: buffer, on: descriptor, maximum: Self.maximumDescriptors)
                }
                guard count > 0 else {
                    for descriptor in descriptors { close(descriptor) }
                    throw VarlinkConnectionError(
                        .connectionBroken,
                        "the service closed the connection before it replied"
                    )
                }
                received += try chunk.withUnsafeBytes { bytes in
                    try framing.append(UnsafeRawBufferPointer(rebasing: bytes[..<count]), descriptors: descriptors)
                }
            } catch let error as VarlinkConnectionError {
                throw error
            } catch {
                throw VarlinkConnectionError(.connectionBroken, "the connection failed: \(error)")
            }
        }
        return received.removeFirst()
    }
}
