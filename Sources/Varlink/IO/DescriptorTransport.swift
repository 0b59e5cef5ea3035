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
// client goes, the connection limits — is the server's, shared with swift-nio's connections.
// docs/architecture.md says why this is not all of keyportd's transport.

extension VarlinkServer {
    /// The longest message taken on a socket that passes descriptors by default: its calls carry
    /// documents as descriptors, so their messages are small.
    package static let descriptorMessageSize = 1 << 20

    /// The most descriptors one message may carry.
    package static let descriptorsPerMessage = 4

    /// Binds `path` as ``serve(path:ready:)`` does and serves the same interfaces there over a
    /// transport that passes descriptors: calls get what came with them
    /// (``VarlinkRequest/descriptors``) and replies can carry some (``VarlinkRequest/attach(_:)``).
    /// Messages are at most `maximumMessageSize` bytes; connections count against the same
    /// limits as the server's others. Serves until the task is cancelled.
    ///
    /// - Throws: ``SocketLock/Held`` when another process serves `path`; a `VarlinkConnectionError`
    ///   when the socket cannot be made.
    package func serveWithDescriptors(
        path: String,
        maximumMessageSize: Int = descriptorMessageSize,
        ready: @Sendable () -> Void = {}
    ) async throws {
        let lock = try SocketLock(socketPath: path)
        defer { withExtendedLifetime(lock) {} }
        try Self.removeDeadSocket(at: path)
        let listener = try DescriptorSocket(listeningAt: path)
        defer { unlink(path) }
        ready()
        let accepted = AsyncStream<DescriptorSocket> { continuation in
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
                    group.addTask { await self.serve(socket, maximumMessageSize: maximumMessageSize) }
                }
            }
        } onCancel: {
            listener.shutDown()
        }
    }

    /// Serves one connection of the descriptor transport until it closes or the task is
    /// cancelled.
    private func serve(_ socket: DescriptorSocket, maximumMessageSize: Int) async {
        defer { socket.shutDown() }
        let peer: VarlinkPeer
        do {
            let credentials = try PeerCredentials(socket: socket.descriptor)
            guard credentials.uid == geteuid() else { return }
            peer = VarlinkPeer(credentials: credentials, process: try PinnedProcess(peerOf: socket.descriptor))
        } catch {
            return
        }
        let id = nextConnectionNumber()
        connections.admit(id, process: peer.credentials.pid) { socket.shutDown() }
        // A client that does not read its replies holds a write up this long, then is closed.
        socket.setTimeout(SO_SNDTIMEO, .seconds(5))
        let account = connections.framing(for: peer.credentials.pid).account
        let deadline = connections.limits.messageDeadline
        let inbound = AsyncThrowingStream<InboundMessage, any Error> { continuation in
            let thread = Thread {
                socket.read(
                    maximumMessageSize: maximumMessageSize,
                    account: account,
                    messageDeadline: deadline
                ) { continuation.yield($0) }
                continuation.finish()
            }
            thread.name = "varlink-read"
            thread.start()
        }
        await withTaskCancellationHandler {
            await handle(
                inbound: inbound,
                outbound: DescriptorReplyOutbound(socket: socket),
                passesDescriptors: true,
                peer: peer,
                id: id
            )
        } onCancel: {
            socket.shutDown()
        }
    }
}

/// A socket of the descriptor transport: closed when released; shut down (from any thread) to
/// wake what blocks on it.
final class DescriptorSocket: Sendable {
    let descriptor: Int32
    /// Replies are written one at a time.
    private let writing = Mutex(())

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// A socket bound to `path` (mode 0600) and listening.
    convenience init(listeningAt path: String) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw VarlinkConnectionError("cannot make a socket: \(String(cString: strerror(errno)))")
        }
        self.init(descriptor: descriptor)
        let bound = try UnixSocketAddress.with(path) { address, length in bind(descriptor, address, length) }
        guard bound == 0, listen(descriptor, SOMAXCONN) == 0 else {
            throw VarlinkConnectionError("cannot listen at \(path): \(String(cString: strerror(errno)))")
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
            default: return nil
            }
        }
    }

    /// Sets a send or receive timeout (`SO_SNDTIMEO`, `SO_RCVTIMEO`); `nil`: none.
    func setTimeout(_ option: Int32, _ duration: Duration?) {
        let (seconds, attoseconds) = (duration ?? .zero).components
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        if duration != nil && seconds == 0 && value.tv_usec == 0 { value.tv_usec = 1 }
        _ = setsockopt(descriptor, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Reads messages and hands each to `deliver`, until the peer closes, breaks a rule (a
    /// message too long, with too many descriptors, over its process's buffer budget, or not
    /// complete within `messageDeadline` of its first byte), or the socket is shut down.
    func read(
        maximumMessageSize: Int,
        account: BufferAccount,
        messageDeadline: Duration,
        deliver: (InboundMessage) -> Void
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
                setTimeout(SO_RCVTIMEO, left)
            } else if due != nil {
                due = nil
                setTimeout(SO_RCVTIMEO, nil)
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
                guard count > 0 else {
                    for descriptor in descriptors { close(descriptor) }
                    return
                }
                messages = try buffer.withUnsafeBytes { bytes in
                    try framing.append(UnsafeRawBufferPointer(rebasing: bytes[..<count]), descriptors: descriptors)
                }
            } catch {
                return
            }
            guard account.add(framing.unfinished - counted) else { return }
            counted = framing.unfinished
            for (bytes, descriptors) in messages { deliver(InboundMessage(bytes: bytes, descriptors: descriptors)) }
        }
    }

    /// Writes `bytes` with `descriptors` attached to the first send; `false` when the
    /// connection cannot take them (closed, or not read within the send timeout).
    func write(_ bytes: [UInt8], descriptors: [Int32]) -> Bool {
        writing.withLock { _ in
            var sent = 0
            while sent < bytes.count {
                do {
                    sent += try bytes.withUnsafeBytes { all in
                        try DescriptorPassing.send(
                            UnsafeRawBufferPointer(rebasing: all[sent...]),
                            descriptors: sent == 0 ? descriptors : [],
                            on: descriptor
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

    func write(_ message: OutgoingMessage, descriptors: [MemoryFile]) async {
        var bytes = message.joined
        bytes.append(0)
        let written = withExtendedLifetime(descriptors) {
            socket.write(bytes, descriptors: descriptors.map(\.descriptor))
        }
        if !written { socket.shutDown() }
    }
}
