import CKeyportSystem
import Foundation
import KeyportSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Keyport's own Varlink transport, beside swift-nio's, for the calls that pass descriptors.
//
// swift-nio reads a stream socket with plain reads: descriptors a peer attaches to its bytes
// (`SCM_RIGHTS`) are dropped by the kernel, and a channel has no way to attach any to a write.
// So the calls that carry a credential exchange's document as a sealed memory file come on a
// second socket, served here with blocking calls on threads of their own: a thread accepts, and
// each connection has a thread that reads (`recvmsg`, descriptors and all). Everything else —
// the checks against the interface, the methods, the order of replies, cancellation when the
// client goes, how connection limits are applied — is the server's, the same code as for
// swift-nio's connections (with limits of its own, below).
// docs/architecture.md says why this is not all of keyportd's transport.

extension VarlinkServer {
    /// The most descriptors one message may carry: one document.
    package static let descriptorsPerMessage = 1

    /// How many calls of one connection may wait for their turn on the descriptor transport.
    static let maximumQueuedDescriptorCalls = 4

    /// The descriptor transport's own, tighter limits: each connection costs a thread and may
    /// hold descriptors, and only a few exchanges run at once.
    static func descriptorLimits(maximumMessageSize: Int) -> VarlinkConnectionLimits {
        VarlinkConnectionLimits(
            perProcess: 8,
            total: 128,
            bufferedPerProcess: 2 * maximumMessageSize,
            messageDeadline: .seconds(30)
        )
    }

    /// Binds `path` as ``serve(path:ready:)`` does and serves `interfaces` of this server (and
    /// `org.varlink.service`) there over a transport that passes descriptors: calls get what came
    /// with them (``VarlinkRequest/descriptors``) and replies can carry some
    /// (``VarlinkRequest/attach(_:)``). Only memory files are kept (any other descriptor is
    /// closed as it arrives); messages are at most `maximumMessageSize` bytes; connections are
    /// held to limits of their own (``descriptorLimits(maximumMessageSize:)``). Serves until the
    /// task is cancelled.
    ///
    /// - Throws: ``SocketLock/Held`` when another process serves `path`; a `VarlinkConnectionError`
    ///   when the socket cannot be made or stops accepting.
    package func serveWithDescriptors(
        path: String,
        interfaces: [String],
        maximumMessageSize: Int,
        ready: @Sendable () -> Void = {}
    ) async throws {
        let lock = try SocketLock(socketPath: path)
        defer { withExtendedLifetime(lock) {} }
        try Self.removeDeadSocket(at: path)
        defer { unlink(path) }
        let listener = try DescriptorSocket(listeningAt: path)
        let transport = Transport(
            connections: ConnectionTable(limits: Self.descriptorLimits(maximumMessageSize: maximumMessageSize)),
            maximumQueuedCalls: Self.maximumQueuedDescriptorCalls,
            passesDescriptors: true,
            interfaces: Set(interfaces)
        )
        ready()
        // Connections accepted and not yet taken in wait here, a few at most: past that they are
        // closed, as a full backlog would refuse them.
        let accepted = AsyncStream<DescriptorSocket>(bufferingPolicy: .bufferingOldest(16)) { continuation in
            let thread = Thread {
                while let socket = listener.accept() { continuation.yield(socket) }
                continuation.finish()
            }
            thread.name = "varlink-accept"
            thread.start()
        }
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                for await socket in accepted {
                    group.addTask { await self.serve(socket, on: transport, maximumMessageSize: maximumMessageSize) }
                }
            }
        } onCancel: {
            listener.shutDown()
        }
        if !Task.isCancelled {
            throw VarlinkConnectionError(
                .socketFailed,
                "\(path) stopped accepting connections: \(listener.failure ?? "unknown")"
            )
        }
    }

    /// Serves one connection of the descriptor transport until it closes or the task is
    /// cancelled.
    private func serve(_ socket: DescriptorSocket, on transport: Transport, maximumMessageSize: Int) async {
        defer { socket.shutDown() }
        let peer: VarlinkPeer
        do {
            let credentials = try PeerCredentials(socket: socket.descriptor)
            guard credentials.uid == geteuid() else { return }
            peer = VarlinkPeer(credentials: credentials, process: try PinnedProcess(peerOf: socket.descriptor))
        } catch {
            return
        }
        let connections = transport.connections
        let account = connections.framing(for: peer.credentials.pid).account
        let deadline = connections.limits.messageDeadline
        // Messages read and not yet taken by the server: a few at most; a client that sends more
        // without waiting is closed (the server would refuse them anyway, past its queue).
        let (inbound, continuation) = AsyncThrowingStream.makeStream(
            of: InboundMessage.self,
            throwing: (any Error).self,
            bufferingPolicy: .bufferingOldest(transport.maximumQueuedCalls)
        )
        // Closing the connection ends the server's reading at once, also when the thread that
        // reads is held up (closing a refused descriptor, say).
        let close: @Sendable () -> Void = {
            socket.shutDown()
            continuation.finish()
        }
        let id = nextConnectionNumber()
        connections.admit(id, process: peer.credentials.pid, close: close)
        guard connections.isAdmitted(id) else { return }
        let thread = Thread {
            socket.read(maximumMessageSize: maximumMessageSize, account: account, messageDeadline: deadline) {
                message in
                if case .dropped = continuation.yield(message) { return false }
                return true
            }
            continuation.finish()
        }
        thread.name = "varlink-read"
        thread.start()
        await withTaskCancellationHandler {
            await handle(
                inbound: inbound,
                outbound: DescriptorReplyOutbound(socket: socket, close: close),
                on: transport,
                peer: peer,
                id: id
            )
        } onCancel: {
            close()
        }
    }
}

/// A socket of the descriptor transport: closed when released; shut down (from any thread) to
/// wake what blocks on it.
final class DescriptorSocket: Sendable {
    let descriptor: Int32
    /// Replies are written one at a time.
    private let writing = Mutex(())
    /// Why accepting stopped, when it was not shut down.
    private let acceptFailure = Mutex<String?>(nil)

    /// Why ``accept()`` stopped, when it was not shut down.
    var failure: String? { acceptFailure.withLock { $0 } }

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// A socket bound to `path` (mode 0600) and listening.
    convenience init(listeningAt path: String) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw VarlinkConnectionError(.socketFailed, "cannot make a socket: \(String(cString: strerror(errno)))")
        }
        self.init(descriptor: descriptor)
        let bound = try UnixSocketAddress.with(path) { address, length in bind(descriptor, address, length) }
        guard bound == 0, listen(descriptor, SOMAXCONN) == 0 else {
            throw VarlinkConnectionError(.socketFailed, "cannot listen at \(path): \(String(cString: strerror(errno)))")
        }
        // As serve(path:) does: the directory keeps other users out, the mode says so too.
        chmod(path, 0o600)
    }

    deinit { close(descriptor) }

    /// Wakes a blocked accept or read, which then ends; the descriptor stays open until released.
    func shutDown() {
        #if canImport(Glibc)
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
        #else
        _ = Musl.shutdown(descriptor, Int32(SHUT_RDWR))
        #endif
    }

    /// The next connection; `nil` once the socket is shut down or fails.
    func accept() -> DescriptorSocket? {
        while true {
            let accepted = ckp_accept(descriptor)
            if accepted >= 0 { return DescriptorSocket(descriptor: accepted) }
            switch errno {
            case EINTR, ECONNABORTED: continue
            case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                // Out of descriptors or memory for now: connections wait in the backlog.
                usleep(50_000)
            case EINVAL:
                // Shut down: serving ends.
                return nil
            case let code:
                acceptFailure.withLock { $0 = String(cString: strerror(code)) }
                return nil
            }
        }
    }

    /// Sets the receive timeout (`SO_RCVTIMEO`); `nil`: none.
    func setReceiveTimeout(_ duration: Duration?) {
        let (seconds, attoseconds) = (duration ?? .zero).components
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        if duration != nil && seconds == 0 && value.tv_usec == 0 { value.tv_usec = 1 }
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Reads messages and hands each to `deliver` (`false`: no more are taken), until the peer
    /// closes, breaks a rule (a message too long, with too many descriptors, over its process's
    /// buffer budget, or not complete within `messageDeadline` of its first byte), or the socket
    /// is shut down. A descriptor that is not a memory file is closed here, as it arrives, on
    /// this thread (closing some descriptors can wait on whoever serves them: a FUSE mount, a
    /// lingering socket); what is kept of it is a place that cannot be taken.
    func read(
        maximumMessageSize: Int,
        account: BufferAccount,
        messageDeadline: Duration,
        deliver: (InboundMessage) -> Bool
    ) {
        let framing = DescriptorFraming(
            maximumMessageSize: maximumMessageSize,
            maximumDescriptors: VarlinkServer.descriptorsPerMessage
        )
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var counted = 0
        defer { _ = account.add(-counted) }
        var due: ContinuousClock.Instant?
        while true {
            // A message begun must end by its deadline; between messages a client may wait.
            if framing.unfinished > 0 {
                let end = due ?? .now + messageDeadline
                due = end
                let left = end - .now
                guard left > .zero else { return }
                setReceiveTimeout(left)
            } else if due != nil {
                due = nil
                setReceiveTimeout(nil)
            }
            let messages: [(bytes: [UInt8], descriptors: ReceivedDescriptors)]
            do {
                let (count, descriptors) = try buffer.withUnsafeMutableBytes { bytes in
                    try DescriptorPassing.receive(
                        into: bytes,
                        on: descriptor,
                        maximum: VarlinkServer.descriptorsPerMessage
                    )
                }
                let kept = descriptors.map { descriptor -> Int32 in
                    guard count > 0, MemoryFile.isMemoryFile(descriptor) else {
                        close(descriptor)
                        return -1
                    }
                    return descriptor
                }
                guard count > 0 else { return }
                messages = try buffer.withUnsafeBytes { bytes in
                    try framing.append(UnsafeRawBufferPointer(rebasing: bytes[..<count]), descriptors: kept)
                }
            } catch {
                return
            }
            guard account.add(framing.unfinished - counted) else { return }
            counted = framing.unfinished
            // A message that ended restarts the deadline for the next one.
            if !messages.isEmpty { due = nil }
            for (bytes, descriptors) in messages
            where !deliver(InboundMessage(bytes: bytes, descriptors: descriptors)) {
                return
            }
        }
    }

    /// Writes `bytes` with `descriptors` attached to the first send, without waiting; `false`
    /// when the connection cannot take them now (closed, or its buffer full: a client that does
    /// not read its replies). Replies here are small, so a client that reads has room for them.
    func write(_ bytes: [UInt8], descriptors: [Int32]) -> Bool {
        writing.withLock { _ in
            var sent = 0
            while sent < bytes.count {
                do {
                    sent += try bytes.withUnsafeBytes { all in
                        try DescriptorPassing.send(
                            UnsafeRawBufferPointer(rebasing: all[sent...]),
                            descriptors: sent == 0 ? descriptors : [],
                            on: descriptor,
                            waiting: false
                        )
                    }
                } catch {
                    return false
                }
            }
            return true
        }
    }
}

/// Replies on the descriptor transport: the message and its NUL, the descriptors with its first
/// bytes.
struct DescriptorReplyOutbound: ReplyOutbound {
    let socket: DescriptorSocket
    /// Closes the connection.
    let close: @Sendable () -> Void

    func write(_ message: OutgoingMessage, descriptors: [MemoryFile]) async {
        var bytes = message.joined
        bytes.append(0)
        let written = withExtendedLifetime(descriptors) {
            socket.write(bytes, descriptors: descriptors.map(\.descriptor))
        }
        if !written { close() }
    }
}
