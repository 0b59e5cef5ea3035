import Foundation
import KeyportSystem
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One call as a method's implementation sees it, with the way to send more than one reply.
package struct VarlinkRequest: Sendable {
    /// The call; its parameters have been checked against the method's input.
    package let call: VarlinkCall
    /// Which connection it came on (numbered from 1 in the order accepted), for logs and for
    /// state a service keeps per connection.
    package let connection: Int
    /// Who connected, read as the connection was accepted: always this user.
    package let peer: VarlinkPeer
    /// The descriptors that came with the call, which its parameters name by index: none unless
    /// it came on a socket that passes descriptors (``VarlinkServer/serveWithDescriptors(path:interfaces:maximumMessageSize:ready:)``).
    package let descriptors: ReceivedDescriptors
    /// Whether the connection passes descriptors: only then can a reply carry some (``attach(_:)``).
    package let passesDescriptors: Bool
    fileprivate let outbound: any ReplyOutbound
    fileprivate let state = CallState()

    /// Runs `action` once the call's last reply has been written to the connection (or could not
    /// be: the client left), so that what the reply announces happens only after it is on its way.
    package func afterReply(_ action: @escaping @Sendable () -> Void) {
        state.actions.withLock { $0.append(action) }
    }

    /// Attaches `file`'s descriptor to the next reply sent (the client gets its own copy); returns
    /// its index among that reply's descriptors, which the reply's parameters name. Only where
    /// ``passesDescriptors``.
    package func attach(_ file: MemoryFile) -> Int {
        precondition(passesDescriptors, "a reply on this connection cannot carry descriptors")
        return state.attached.withLock { attached in
            attached.append(file)
            return attached.count - 1
        }
    }

    /// Sends a reply that another will follow (`continues: true`). Only for a call with `more`;
    /// the implementation's return value is the last reply.
    package func send(_ parameters: RawJSON) async throws(VarlinkError) {
        guard call.more else { throw VarlinkError.expectedMore(call.method) }
        await outbound.write(
            VarlinkReply(parameters: parameters, continues: true).outgoing,
            descriptors: state.takeAttached()
        )
    }

    /// Sends `reply`, which another will follow (see ``send(_:)-(RawJSON)``).
    package func send(_ reply: some VarlinkCodable) async throws(VarlinkError) {
        try await send(RawJSON(encoding: reply))
    }
}

/// Where a connection's replies are written: swift-nio's channel, or the transport that passes
/// descriptors.
protocol ReplyOutbound: Sendable {
    /// Writes `message` with `descriptors` attached (none where the transport cannot pass them);
    /// a connection that cannot take it is closed.
    func write(_ message: OutgoingMessage, descriptors: [MemoryFile]) async
}

/// swift-nio's writer, which passes no descriptors.
struct ChannelReplyOutbound: ReplyOutbound {
    let writer: NIOAsyncChannelOutboundWriter<OutgoingMessage>

    func write(_ message: OutgoingMessage, descriptors: [MemoryFile]) async {
        assert(descriptors.isEmpty, "swift-nio's connections pass no descriptors")
        guard Task.isCancelled else {
            try? await writer.write(message)
            return
        }
        // A call cancelled because its client closed its sending side still owes that client its
        // reply, and swift-nio's writer takes nothing from a cancelled task: written from a task
        // of its own (to a client that closed altogether, the write fails as before).
        await Task { try? await writer.write(message) }.value
    }
}

/// The other end of a connection, as the kernel reported it when the connection was accepted.
package struct VarlinkPeer: Sendable {
    /// `SO_PEERCRED`: the process, its user (always this one) and group.
    package let credentials: PeerCredentials
    /// The process held by a pidfd: what keyportd reads about it (its program, its app id) is
    /// known to be this process's, whatever happened to its pid number since.
    package let process: PinnedProcess
}

/// What a call's implementation asked for beyond its reply: actions to run after it, and
/// descriptors to go with it.
final class CallState: Sendable {
    let actions = Mutex<[@Sendable () -> Void]>([])
    let attached = Mutex<[MemoryFile]>([])

    func runActions() {
        for action in actions.withLock({ $0 }) { action() }
    }

    /// The descriptors attached since the last reply, for the next.
    func takeAttached() -> [MemoryFile] {
        attached.withLock { attached in
            defer { attached = [] }
            return attached
        }
    }
}

/// What `org.varlink.service.GetInfo` says about a service.
package struct VarlinkServiceInfo: Sendable, Equatable {
    package var vendor: String
    package var product: String
    package var version: String
    package var url: String

    package init(vendor: String, product: String, version: String, url: String) {
        self.vendor = vendor
        self.product = product
        self.version = version
        self.url = url
    }
}

/// A Varlink service on a Unix-domain socket: it reads calls, checks each against its interface,
/// runs the implementation and writes the replies, connection by connection.
///
/// Calls on one connection are answered in the order they came, as the protocol requires;
/// connections are independent of each other. A connection that sends something that is not a
/// Varlink message, or a message over the size limit, is closed; nothing it does reaches another
/// connection. When a client goes away mid-call, the implementation's task is cancelled.
package final class VarlinkServer: Sendable {
    package let info: VarlinkServiceInfo
    package let maximumMessageSize: Int
    private let interfaces: [String: any VarlinkInterfaceServer<VarlinkRequest>]
    /// swift-nio's connections, held to their limits (the descriptor transport has its own).
    private let connections: ConnectionTable
    /// The number the last connection accepted got, on any transport.
    private let lastConnection = Atomic<Int>(0)
    /// Calls being answered, and who waits for there to be none.
    private let calls = Mutex(Calls())

    private struct Calls {
        var running = 0
        var nextWaiter = 0
        var idle: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    /// A server of `interfaces`, taking messages of up to `maximumMessageSize` bytes, its
    /// connections held to `limits` (by default ``VarlinkConnectionLimits/standard(maximumMessageSize:)``).
    package init(
        info: VarlinkServiceInfo,
        interfaces: [any VarlinkInterfaceServer<VarlinkRequest>],
        maximumMessageSize: Int,
        limits: VarlinkConnectionLimits? = nil
    ) {
        self.info = info
        self.maximumMessageSize = maximumMessageSize
        connections = ConnectionTable(limits: limits ?? .standard(maximumMessageSize: maximumMessageSize))
        var byName: [String: any VarlinkInterfaceServer<VarlinkRequest>] = [:]
        for server in interfaces { byName[type(of: server).interface.name] = server }
        self.interfaces = byName
    }

    /// Binds `path` (mode 0600; a stale socket file there is replaced) and serves until the task is
    /// cancelled; the socket file is removed on the way out. `path` must be in a directory only this
    /// user can enter (`PrivateDirectory`). Only one process serves a path: the lock beside it
    /// (``SocketLock``) is taken before anything there is touched, and held until serving ends.
    ///
    /// - Parameter ready: called once the socket accepts connections.
    /// - Throws: ``SocketLock/Held`` when another process serves `path` (its socket is left alone).
    package func serve(path: String, ready: @Sendable () -> Void = {}) async throws {
        let lock = try SocketLock(socketPath: path)
        defer { withExtendedLifetime(lock) {} }
        try Self.removeDeadSocket(at: path)
        let maximum = maximumMessageSize
        let table = connections
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(unixDomainSocketPath: path) { channel in
                channel.acceptVarlinkPeer(maximumMessageSize: maximum, connections: table)
            }
        // The directory is what keeps other users out (callers put the socket in a private
        // directory); 0600 says the same on the socket itself. Not done with umask, which is
        // process-wide and would reach files other threads are making.
        chmod(path, 0o600)
        defer { unlink(path) }
        ready()
        try await serve(listener)
    }

    /// Serves on a socket that is already bound and listening, such as the one systemd hands a
    /// socket-activated service as descriptor 3, until the task is cancelled. The socket is closed
    /// on the way out; its file belongs to whoever made it.
    package func serve(listeningDescriptor descriptor: Int32, ready: @Sendable () -> Void = {}) async throws {
        let maximum = maximumMessageSize
        let table = connections
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(descriptor) { channel in channel.acceptVarlinkPeer(maximumMessageSize: maximum, connections: table) }
        ready()
        try await serve(listener)
    }

    /// Serves the one connection a socket that is already connected carries — what keyportd hands a
    /// provider it starts, as descriptor 3 (the `exec:` address of systemd's `varlinkctl`) — until
    /// the peer closes it or the task is cancelled. The peer is checked as any other.
    package func serve(connectedDescriptor descriptor: Int32) async throws {
        let maximum = maximumMessageSize
        let accepted = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .withConnectedSocket(descriptor) { channel in
                channel.acceptVarlinkPeer(maximumMessageSize: maximum, connections: nil)
            }
        let channel = accepted.channel.channel
        let id = nextConnectionNumber()
        connections.admit(id, process: accepted.peer.credentials.pid) { channel.close(promise: nil) }
        await handle(accepted.channel, peer: accepted.peer, id: id)
    }

    /// Removes a socket file at `path` that nothing listens on any more (left by a process that
    /// ended), so that it can be bound again; the caller holds the path's lock.
    ///
    /// - Throws: ``SocketLock/Held`` when something listens there.
    static func removeDeadSocket(at path: String) throws {
        guard UnixSocketPath.isSocket(path) else { return }
        // A socket nobody locked may still be listened on: systemd's, waiting to start keyportd
        // on its first connection. Only a dead one is replaced.
        if (try? VarlinkBlockingConnection(path: path, maximumMessageSize: 1)) != nil {
            throw SocketLock.Held(
                holder: nil,
                description:
                    "something already listens on \(path) (a socket systemd holds for the service, say); stop it first"
            )
        }
        unlink(path)
    }

    /// A new connection's number: from 1, in the order accepted, unique across transports.
    func nextConnectionNumber() -> Int {
        lastConnection.add(1, ordering: .relaxed).newValue
    }

    private func serve(_ listener: NIOAsyncChannel<AcceptedConnection, Never>) async throws {
        do {
            try await acceptConnections(listener)
        } catch is CancellationError where Task.isCancelled {
            // Cancellation is how serving is meant to end.
        }
    }

    private func acceptConnections(_ listener: NIOAsyncChannel<AcceptedConnection, Never>) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            try await listener.executeThenClose { connections in
                for try await connection in connections {
                    let id = self.nextConnectionNumber()
                    // In the order accepted, so that "oldest" means what it says.
                    let channel = connection.channel.channel
                    self.connections.admit(id, process: connection.peer.credentials.pid) {
                        channel.close(promise: nil)
                    }
                    group.addTask { await self.handle(connection.channel, peer: connection.peer, id: id) }
                }
            }
        }
    }

    /// How many calls of one connection may wait for their turn (calls are answered in order).
    static let maximumQueuedCalls = 16

    /// Serves one swift-nio connection until it closes.
    private func handle(_ connection: NIOAsyncChannel<[UInt8], OutgoingMessage>, peer: VarlinkPeer, id: Int) async {
        try? await connection.executeThenClose { inbound, outbound in
            await handle(
                inbound: inbound.map { InboundMessage(bytes: $0, descriptors: .none) },
                outbound: ChannelReplyOutbound(writer: outbound),
                on: .channels(connections),
                peer: peer,
                id: id
            )
        }
    }

    /// Serves one connection, whichever its `transport`, until `inbound` ends. Errors end this
    /// connection only; the caller closes it.
    func handle<Inbound: AsyncSequence & Sendable>(
        inbound: Inbound,
        outbound: any ReplyOutbound,
        on transport: Transport,
        peer: VarlinkPeer,
        id: Int
    ) async where Inbound.Element == InboundMessage {
        let connections = transport.connections
        defer { connections.remove(id) }
        // Messages are read by one task and answered by another, so that a client closing its
        // end is seen while a call is still running, and that call is cancelled. The reader
        // parses each message (`nil`: not a call) and lets its bytes go at once: a call that
        // runs long (an exchange waiting for its importer) keeps its parameters, not also the
        // message they came in.
        //
        // Calls read and not answered yet count against the process's buffer budget, and at
        // most ``maximumQueuedCalls`` wait: a client that sends call after call without
        // reading the replies is closed, rather than have keyportd read on without bound.
        let account = connections.framing(for: peer.credentials.pid).account
        let queued = QueuedCalls()
        let (calls, continuation) = AsyncStream.makeStream(of: QueuedCall.self)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await queuedCall in calls {
                    let open = await self.answer(
                        queuedCall,
                        connection: id,
                        peer: peer,
                        outbound: outbound,
                        transport: transport
                    )
                    queued.count.subtract(1, ordering: .relaxed)
                    queued.bytes.subtract(queuedCall.size, ordering: .relaxed)
                    _ = account.add(-queuedCall.size)
                    guard open else { break }
                }
            }
            group.addTask {
                do {
                    for try await message in inbound {
                        let size = message.bytes.count
                        let waiting = queued.count.add(1, ordering: .relaxed).newValue
                        // Ending the reading closes the connection (below).
                        guard waiting <= transport.maximumQueuedCalls, account.add(size) else { break }
                        queued.bytes.add(size, ordering: .relaxed)
                        continuation.yield(
                            QueuedCall(
                                call: try? VarlinkCall(message: message.bytes),
                                size: size,
                                descriptors: message.descriptors
                            )
                        )
                    }
                } catch {}
                continuation.finish()
            }
            await group.next()
            group.cancelAll()
        }
        // Calls that were never answered give their bytes back to the process's budget.
        _ = account.add(-queued.bytes.load(ordering: .relaxed))
    }

    /// Answers one call (`nil`: a message that is not one); `false` when the connection must be
    /// closed.
    private func answer(
        _ queued: QueuedCall,
        connection: Int,
        peer: VarlinkPeer,
        outbound: any ReplyOutbound,
        transport: Transport
    ) async -> Bool {
        let connections = transport.connections
        guard let call = queued.call else { return false }
        if call.upgrade {
            // No interface of ours upgrades; say so rather than leaving the client waiting.
            await outbound.write(VarlinkReply(error: .methodNotImplemented(call.method)).outgoing, descriptors: [])
            return false
        }
        calls.withLock { $0.running += 1 }
        connections.call(on: connection, began: true)
        defer {
            let idle = calls.withLock { calls -> [CheckedContinuation<Void, Never>] in
                calls.running -= 1
                guard calls.running == 0 else { return [] }
                defer { calls.idle = [:] }
                return Array(calls.idle.values)
            }
            for waiter in idle { waiter.resume() }
        }
        let request = VarlinkRequest(
            call: call,
            connection: connection,
            peer: peer,
            descriptors: queued.descriptors,
            passesDescriptors: transport.passesDescriptors,
            outbound: outbound
        )
        let reply: VarlinkReply
        do {
            reply = VarlinkReply(parameters: try await run(request, serving: transport.interfaces))
        } catch {
            reply = VarlinkReply(error: error)
        }
        // Answered: a client that does not read its reply holds nothing that the limits spare.
        connections.call(on: connection, began: false)
        let attached = request.state.takeAttached()
        if !call.oneway { await outbound.write(reply.outgoing, descriptors: reply.error == nil ? attached : []) }
        request.state.runActions()
        return true
    }

    /// Returns once no call is being answered (its reply written), or after `limit`. A service
    /// that is stopping first ends its long calls with an error, then waits here so those replies
    /// reach their clients before the connections close.
    package func waitUntilIdle(limit: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                let id = self.calls.withLock { calls in
                    calls.nextWaiter += 1
                    return calls.nextWaiter
                }
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (idle: CheckedContinuation<Void, Never>) in
                        let now = self.calls.withLock { calls -> Bool in
                            if calls.running == 0 || Task.isCancelled { return true }
                            calls.idle[id] = idle
                            return false
                        }
                        if now { idle.resume() }
                    }
                } onCancel: {
                    self.calls.withLock { $0.idle.removeValue(forKey: id) }?.resume()
                }
            }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Answers `request` from the interfaces `served` (all, when `nil`) and `org.varlink.service`.
    private func run(_ request: VarlinkRequest, serving served: Set<String>?) async throws(VarlinkError) -> RawJSON {
        let call = request.call
        if call.interface == VarlinkService.name { return try serviceMethod(call, serving: served) }
        guard served?.contains(call.interface) ?? true, let server = interfaces[call.interface] else {
            throw VarlinkError.interfaceNotFound(call.interface)
        }
        let interface = type(of: server).interface
        guard let method = interface.methods[call.methodName] else {
            throw VarlinkError.methodNotFound(call.method)
        }
        if let problem = interface.check(call.parameters, against: method.input) { throw problem }
        return try await server.dispatch(method: call.methodName, parameters: call.parameters, request: request)
    }

    /// `org.varlink.service`: `GetInfo` and `GetInterfaceDescription`.
    private func serviceMethod(_ call: VarlinkCall, serving served: Set<String>?) throws(VarlinkError) -> RawJSON {
        let service = VarlinkService.interface
        guard let method = service.methods[call.methodName] else { throw VarlinkError.methodNotFound(call.method) }
        if let problem = service.check(call.parameters, against: method.input) { throw problem }
        if call.method == VarlinkService.GetInfo.name {
            return RawJSON(
                encoding: VarlinkService.GetInfo.Reply(
                    vendor: info.vendor,
                    product: info.product,
                    version: info.version,
                    url: info.url,
                    interfaces: ([service.name] + interfaces.keys.filter { served?.contains($0) ?? true }).sorted()
                )
            )
        }
        let name = (try? call.parameters.decode(VarlinkService.GetInterfaceDescription.Parameters.self).interface) ?? ""
        if name == service.name {
            return RawJSON(encoding: VarlinkService.GetInterfaceDescription.Reply(description: service.description))
        }
        guard served?.contains(name) ?? true, let server = interfaces[name] else {
            throw VarlinkError.interfaceNotFound(name)
        }
        return RawJSON(
            encoding: VarlinkService.GetInterfaceDescription.Reply(description: type(of: server).interface.description)
        )
    }
}

/// What differs between the server's transports, for the one way calls are answered.
struct Transport: Sendable {
    /// The connections of this transport and their limits.
    var connections: ConnectionTable
    /// How many calls of one connection may wait for their turn.
    var maximumQueuedCalls: Int
    /// Whether descriptors pass: only then do calls bring any and replies take any.
    var passesDescriptors: Bool
    /// The interfaces answered (with `org.varlink.service`); all of the server's when `nil`.
    var interfaces: Set<String>?

    /// swift-nio's connections: every interface, no descriptors.
    static func channels(_ connections: ConnectionTable) -> Transport {
        Transport(
            connections: connections,
            maximumQueuedCalls: VarlinkServer.maximumQueuedCalls,
            passesDescriptors: false,
            interfaces: nil
        )
    }
}

/// A message as a transport read it: its bytes and the descriptors that came with it.
struct InboundMessage: Sendable {
    var bytes: [UInt8]
    var descriptors: ReceivedDescriptors
}

/// A call read and waiting for its turn (`call` is `nil` for a message that is not one).
private struct QueuedCall: Sendable {
    var call: VarlinkCall?
    var size: Int
    var descriptors: ReceivedDescriptors
}

/// How many calls of a connection are read and not answered yet.
private final class QueuedCalls: Sendable {
    let count = Atomic<Int>(0)
    /// Their bytes, counted against the process's budget until answered.
    let bytes = Atomic<Int>(0)
}

/// An accepted connection whose peer is this user, ready for Varlink.
struct AcceptedConnection: Sendable {
    var channel: NIOAsyncChannel<[UInt8], OutgoingMessage>
    var peer: VarlinkPeer
}

/// `struct ucred`, which `SO_PEERCRED` fills (Swift's Glibc module does not export the type).
struct SocketPeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// The peer is another user, or a process that cannot be pinned (it has already ended, or runs
/// where this process cannot see it): the connection is closed before a byte is read.
struct PeerRefused: Error, CustomStringConvertible {
    var description: String
}

extension Channel {
    /// Reads who connected and refuses every user but this one, whatever the socket's mode and
    /// directory allow (a misconfigured mode, a socket handed over by a service manager); pins the
    /// peer's process by the pidfd the socket gives (`SO_PEERPIDFD`; on kernels before 6.5 by its
    /// number, at once); then sets up Varlink on the connection.
    func acceptVarlinkPeer(
        maximumMessageSize: Int,
        connections: ConnectionTable?
    ) -> EventLoopFuture<AcceptedConnection> {
        guard let provider = self as? SocketOptionProvider else {
            close(promise: nil)
            return eventLoop.makeFailedFuture(PeerRefused(description: "the connection is not a socket"))
        }
        let credentials: EventLoopFuture<SocketPeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET),
            name: SocketOptionName(SO_PEERCRED)
        )
        let accepted = credentials.flatMap { credentials -> EventLoopFuture<VarlinkPeer> in
            guard credentials.uid == geteuid() else {
                return self.eventLoop.makeFailedFuture(
                    PeerRefused(description: "the peer runs as user \(credentials.uid), not as this user")
                )
            }
            let peer = PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
            let pidfd: EventLoopFuture<Int32> = provider.unsafeGetSocketOption(
                level: SocketOptionLevel(SOL_SOCKET),
                name: SocketOptionName(PinnedProcess.peerPIDFDOption)
            )
            return pidfd.map(Optional.some).flatMapErrorThrowing { error -> Int32? in
                // Only a kernel without the option falls back to the number; ESRCH (the peer is
                // gone, its number may be another's) and the rest refuse.
                guard (error as? IOError)?.errnoCode == ENOPROTOOPT else { throw error }
                return nil
            }.flatMapThrowing { pidfd in
                VarlinkPeer(credentials: peer, process: try PinnedProcess(peer: peer, pidfd: pidfd))
            }
        }
        return accepted.flatMap { peer in
            let limits = connections?.framing(for: peer.credentials.pid)
            return self.varlinkAsyncChannel(maximumMessageSize: maximumMessageSize, limits: limits, halfClosable: true)
                .map {
                    AcceptedConnection(channel: $0, peer: peer)
                }
        }.flatMapError { error in
            // A failed initializer leaves the connection open in swift-nio's async server; close it.
            self.close(promise: nil)
            let refusal = error as? PeerRefused ?? PeerRefused(description: "the peer cannot be pinned: \(error)")
            return self.eventLoop.makeFailedFuture(refusal)
        }
    }
}
