import KeyportSystem
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A client's connection to a Varlink service, for the duration of ``withConnection(path:maximumMessageSize:_:)``.
///
/// Calls are made one after another (the protocol answers them in order); a call with `more`
/// returns each reply as it comes.
package final class VarlinkConnection {
    private var inbound: NIOAsyncChannelInboundStream<[UInt8]>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<OutgoingMessage>
    private let channel: any Channel

    private init(
        inbound: NIOAsyncChannelInboundStream<[UInt8]>,
        outbound: NIOAsyncChannelOutboundWriter<OutgoingMessage>,
        channel: any Channel
    ) {
        self.inbound = inbound.makeAsyncIterator()
        self.outbound = outbound
        self.channel = channel
    }

    /// The process at the other end, as the kernel says (`SO_PEERCRED`), held by the pidfd the
    /// socket gives (`SO_PEERPIDFD`; by its number on kernels before 6.5): for a client that must
    /// know which program it talks to before it says anything secret.
    ///
    /// - Throws: ``VarlinkConnectionError`` when the kernel does not say, or the peer has ended.
    package func peerProcess() async throws -> PinnedProcess {
        guard let provider = channel as? SocketOptionProvider else {
            throw VarlinkConnectionError(.socketFailed, "the connection is not a socket")
        }
        do {
            let credentials: SocketPeerCredentials = try await provider.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_SOCKET),
                name: SocketOptionName(SO_PEERCRED)
            ).get()
            let pidfd: Int32? = try? await provider.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_SOCKET),
                name: SocketOptionName(PinnedProcess.peerPIDFDOption)
            ).get()
            let peer = PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
            return try PinnedProcess(peer: peer, pidfd: pidfd)
        } catch {
            throw VarlinkConnectionError(.unexpectedPeer, "cannot tell which process serves this socket: \(error)")
        }
    }

    /// Connects to the service at `path`, runs `body` with the connection, and closes it.
    ///
    /// - Throws: ``VarlinkConnectionError`` when nothing listens at `path`, or what `body` throws.
    package static func withConnection<T>(
        path: String,
        maximumMessageSize: Int,
        _ body: (VarlinkConnection) async throws -> T
    ) async throws -> T {
        let channel: NIOAsyncChannel<[UInt8], OutgoingMessage>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: path) { channel in
                    channel.varlinkAsyncChannel(maximumMessageSize: maximumMessageSize)
                }
        } catch let error as IOError where error.errnoCode == ECONNREFUSED || error.errnoCode == ENOENT {
            throw VarlinkConnectionError(.refused, "nothing listens at \(path)")
        } catch {
            throw VarlinkConnectionError(.socketFailed, "cannot connect to \(path): \(error)")
        }
        return try await channel.executeThenClose { inbound, outbound in
            try await body(VarlinkConnection(inbound: inbound, outbound: outbound, channel: channel.channel))
        }
    }

    /// Runs `body` with a connection on a socket that is already connected (one end of a
    /// `socketpair` whose other end a started program got as descriptor 3), and closes it.
    package static func withConnection<T>(
        connectedDescriptor descriptor: Int32,
        maximumMessageSize: Int,
        _ body: (VarlinkConnection) async throws -> T
    ) async throws -> T {
        let channel: NIOAsyncChannel<[UInt8], OutgoingMessage>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .withConnectedSocket(descriptor) { channel in
                    channel.varlinkAsyncChannel(maximumMessageSize: maximumMessageSize)
                }
        } catch {
            throw VarlinkConnectionError(.socketFailed, "cannot use descriptor \(descriptor) as a connection: \(error)")
        }
        return try await channel.executeThenClose { inbound, outbound in
            try await body(VarlinkConnection(inbound: inbound, outbound: outbound, channel: channel.channel))
        }
    }

    /// Calls a method that replies once; returns the reply's parameters.
    ///
    /// - Throws: the service's ``VarlinkError``, or ``VarlinkConnectionError``.
    package func call(_ method: String, _ parameters: RawJSON = .emptyObject) async throws -> RawJSON {
        try await send(VarlinkCall(method: method, parameters: parameters))
        return try await reply()
    }

    /// Calls `method`, which replies once, with `parameters`; returns its reply.
    ///
    /// - Throws: the service's ``VarlinkError``, ``VarlinkConnectionError``, or a
    ///   ``VarlinkDecodingError`` when the reply is not the method's.
    package func call<Method: VarlinkMethodType>(
        _ method: Method.Type,
        _ parameters: Method.Parameters
    ) async throws -> Method.Reply {
        try await call(Method.name, RawJSON(encoding: parameters)).decode(Method.Reply.self)
    }

    /// Sends `call` without waiting for its reply (read it with ``reply()``, unless it is oneway).
    package func send(_ call: VarlinkCall) async throws {
        do {
            try await outbound.write(call.outgoing)
        } catch {
            throw VarlinkConnectionError(.connectionBroken, "the service closed the connection: \(error)")
        }
    }

    /// The next reply's parameters, and whether another follows.
    ///
    /// - Throws: the service's ``VarlinkError``, or ``VarlinkConnectionError``.
    package func nextReply() async throws -> (parameters: RawJSON, continues: Bool) {
        let message: [UInt8]?
        do {
            message = try await inbound.next()
        } catch {
            throw VarlinkConnectionError(.connectionBroken, "the connection failed: \(error)")
        }
        guard let message else {
            throw VarlinkConnectionError(.connectionBroken, "the service closed the connection before it replied")
        }
        let reply: VarlinkReply
        do {
            reply = try VarlinkReply(message: message)
        } catch {
            throw VarlinkConnectionError(.connectionBroken, "the service's reply is not Varlink: \(error)")
        }
        if let name = reply.error { throw VarlinkError(name: name, parameters: reply.parameters) }
        return (reply.parameters, reply.continues)
    }

    /// The reply to a call that replies once.
    package func reply() async throws -> RawJSON {
        try await nextReply().parameters
    }
}
