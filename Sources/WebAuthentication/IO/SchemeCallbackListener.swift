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

/// Waits for a callback to a private-use URL scheme (`com.example.app:/callback?code=…`, RFC 8252
/// §7.1) that the desktop hands to Keyport's URL handler.
///
/// When the browser follows such a redirect, the desktop starts the program registered for the
/// scheme (``SchemeRegistration``; `keyport url-scheme open URL`) as a new process. That process
/// hands the URL to the waiting session through a Unix-domain socket with
/// ``SchemeCallbackDelivery/deliver(_:directory:)``; the wire protocol is in `docs/protocol.md`,
/// "Custom-scheme callback hand-off".
///
/// Each listener binds its own socket, `<128 random bits in hex>.sock` (mode 0600), in a directory
/// only this user can enter: `$XDG_RUNTIME_DIR/keyport/callbacks`, or without XDG_RUNTIME_DIR
/// `$XDG_CACHE_HOME/keyport/run/callbacks` (`~/.cache/keyport/run/callbacks`). So any number of sessions in any number of processes can wait at once
/// with no daemon: the handler offers the URL to each socket until one accepts it. (Once keyportd
/// exists it will own a single socket and route URLs to its sessions itself; this directory of
/// per-session sockets is the daemon-less form of the same hand-off.)
///
/// A URL is accepted only when its scheme is the listener's (case-insensitive, as
/// ``CallbackMatcher/customScheme(_:)``) and `accept` agrees — the session uses `accept` to check
/// `state`, so a callback meant for another sign-in is refused and the wait goes on. The socket is
/// closed and its file removed when the wait ends: by the callback, ``cancel()``, a timeout, or the
/// listener being released.
public final class SchemeCallbackListener: CallbackReceiver {
    /// The scheme waited for, as given to ``start(scheme:directory:accept:)``.
    public let scheme: String
    /// The socket this listener waits on.
    public let socketPath: String
    /// The matcher for this listener's callbacks.
    public var matcher: CallbackMatcher { .customScheme(scheme) }

    private let channel: any Channel
    private let outcome: ListenerOutcome

    /// Where listeners bind and the handler looks when no directory is given:
    /// `$XDG_RUNTIME_DIR/keyport/callbacks`, or `$XDG_CACHE_HOME/keyport/run/callbacks` (by default
    /// `~/.cache/keyport/run/callbacks`) when XDG_RUNTIME_DIR is unset: a per-user directory
    /// nobody else can create first, as they could a name in `/tmp`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        CallbackSocketDirectory.defaultURL(environment: environment)
    }

    /// Starts listening for callbacks to `scheme`.
    ///
    /// - Parameters:
    ///   - scheme: the private-use scheme, such as `com.example.app` (checked as
    ///     ``SchemeRegistration/validate(scheme:)`` does).
    ///   - directory: where to bind; `nil` for ``defaultDirectory(environment:)``. Missing
    ///     directories are created with mode 0700.
    ///   - accept: whether a URL of the right scheme is the one awaited (say, its `state` is this
    ///     session's); the default accepts the first. Called on a NIO event loop: keep it quick.
    /// - Throws: ``SchemeCallbackError`` — `.invalidScheme`; `.unsafeDirectory` when the directory
    ///   (or the directory Keyport owns above the default one) belongs to another user or is open to
    ///   group or others; `.directoryUnavailable`; `.listenFailed` when the socket cannot be bound.
    public static func start(
        scheme: String,
        directory: URL? = nil,
        accept: @escaping @Sendable (URL) -> Bool = { _ in true }
    ) async throws -> SchemeCallbackListener {
        try await start(
            scheme: scheme,
            directory: directory,
            environment: ProcessInfo.processInfo.environment,
            accept: accept
        )
    }

    /// ``start(scheme:directory:accept:)`` with the default directory taken from `environment`.
    static func start(
        scheme: String,
        directory: URL?,
        environment: [String: String],
        accept: @escaping @Sendable (URL) -> Bool
    ) async throws -> SchemeCallbackListener {
        _ = try SchemeRegistration.validate(scheme: scheme)
        guard let directory = try CallbackSocketDirectory.prepare(directory, environment: environment, create: true)
        else {
            throw SchemeCallbackError(.directoryUnavailable, "the callback socket directory could not be created")
        }
        let path = try CallbackSocketDirectory.newSocketPath(in: directory)
        let group = MultiThreadedEventLoopGroup.singleton
        let outcome = ListenerOutcome(promise: group.any().makePromise(of: URL.self))
        let matcher = CallbackMatcher.customScheme(scheme)
        let bootstrap = ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        HandOffServerHandler(matcher: matcher, accept: accept, outcome: outcome)
                    )
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(unixDomainSocketPath: path).get()
        } catch {
            outcome.finish(.failure(CancellationError()))
            throw SchemeCallbackError(.listenFailed, "cannot listen on \(path): \(error)")
        }
        // Only this user can enter the directory already; the mode keeps the socket private even if
        // the directory is ever loosened.
        chmod(path, 0o600)
        // Whatever ends the wait removes the socket file first (so no new handler finds it) and
        // closes the socket. Registered before any waiter, so it runs before a waiter resumes.
        outcome.promise.futureResult.whenComplete { _ in
            unlink(path)
            channel.close(promise: nil)
        }
        return SchemeCallbackListener(scheme: scheme, socketPath: path, channel: channel, outcome: outcome)
    }

    private init(scheme: String, socketPath: String, channel: any Channel, outcome: ListenerOutcome) {
        self.scheme = scheme
        self.socketPath = socketPath
        self.channel = channel
        self.outcome = outcome
    }

    deinit {
        // A listener nobody holds can never be waited on: stop listening and remove the socket.
        outcome.finish(.failure(CancellationError()))
    }

    /// Waits for the callback URL.
    ///
    /// - Parameter timeout: how long to wait; `nil` waits until a callback, ``cancel()`` or task
    ///   cancellation. When it passes, the listener stops listening.
    /// - Returns: the accepted URL, whole.
    /// - Throws: `CancellationError` after ``cancel()`` or when the task is cancelled;
    ///   ``CallbackTimedOut`` when `timeout` passes first.
    public func waitForCallback(timeout: Duration? = nil) async throws -> URL {
        let outcome = self.outcome
        let timer = timeout.map { timeout in
            channel.eventLoop.scheduleTask(in: .nanoseconds(timeout.clampedNanoseconds)) {
                outcome.finish(.failure(CallbackTimedOut()))
            }
        }
        defer { timer?.cancel() }
        return try await withTaskCancellationHandler {
            try await outcome.promise.futureResult.get()
        } onCancel: {
            outcome.finish(.failure(CancellationError()))
        }
    }

    /// Stops waiting and listening, and removes the socket file. Idempotent; after a callback was
    /// accepted it changes nothing.
    public func cancel() {
        outcome.finish(.failure(CancellationError()))
    }
}

/// How the wait ends, decided once: by the first URL accepted, a cancellation or the timeout.
/// Connections are served on several event loops, so the decision is taken under a lock.
final class ListenerOutcome: Sendable {
    let promise: EventLoopPromise<URL>
    private let decided = Mutex(false)

    init(promise: EventLoopPromise<URL>) {
        self.promise = promise
    }

    /// Takes the decision; true for the first caller only.
    func claim() -> Bool {
        decided.withLock { decided in
            if decided { return false }
            decided = true
            return true
        }
    }

    /// Ends the wait with `result` unless it has ended already.
    func finish(_ result: Result<URL, any Error>) {
        if claim() { promise.completeWith(result) }
    }
}

/// The hand-off protocol's constants (docs/protocol.md, "Custom-scheme callback hand-off").
enum HandOffProtocol {
    /// The longest URL carried, in bytes of UTF-8, not counting the `\n`.
    static let maximumURLLength = 8192
    /// A connection that has not sent its line this long after connecting is closed unanswered.
    static let idleTimeout = TimeAmount.seconds(5)
    static let accepted = "accepted"
    static let refused = "refused"
    static let refusedTooLong = "refused too-long"
}

/// Serves one hand-off connection: reads one line, answers one line, closes.
private final class HandOffServerHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let matcher: CallbackMatcher
    let accept: @Sendable (URL) -> Bool
    let outcome: ListenerOutcome
    private var received: ByteBuffer?
    private var answered = false
    private var idleTimer: Scheduled<Void>?

    init(matcher: CallbackMatcher, accept: @escaping @Sendable (URL) -> Bool, outcome: ListenerOutcome) {
        self.matcher = matcher
        self.accept = accept
        self.outcome = outcome
    }

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
        idleTimer = context.eventLoop.scheduleTask(in: HandOffProtocol.idleTimeout) { channel.close(promise: nil) }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        var chunk = unwrapInboundIn(data)
        if received == nil {
            received = chunk
        } else {
            received!.writeBuffer(&chunk)
        }
        guard let buffer = received else { return }
        let view = buffer.readableBytesView
        guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > HandOffProtocol.maximumURLLength + 1 {  // room for a `\r`
                answer(HandOffProtocol.refusedTooLong, context: context)
            }
            return
        }
        var line = view[view.startIndex..<newline]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        guard line.count <= HandOffProtocol.maximumURLLength else {
            answer(HandOffProtocol.refusedTooLong, context: context)
            return
        }
        guard let text = String(validating: line, as: UTF8.self), let url = URL(string: text), matcher.matches(url),
            accept(url), outcome.claim()
        else {
            answer(HandOffProtocol.refused, context: context)
            return
        }
        // The handler process hears `accepted` before the session resumes, so it can exit 0 even
        // if the session's process ends right after.
        let promise = outcome.promise
        answer(HandOffProtocol.accepted, context: context) { promise.succeed(url) }
    }

    private func answer(_ reply: String, context: ChannelHandlerContext, then: (@Sendable () -> Void)? = nil) {
        answered = true
        received = nil
        idleTimer?.cancel()
        let channel = context.channel
        let line = context.channel.allocator.buffer(string: reply + "\n")
        context.writeAndFlush(wrapOutboundOut(line)).whenComplete { _ in
            then?()
            channel.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// Hands a callback URL to the session waiting for it: what the program the desktop starts for a
/// registered scheme (`keyport url-scheme open URL`) does.
public enum SchemeCallbackDelivery {
    /// Offers `url` to every listener in `directory` until one accepts it.
    ///
    /// Sockets are tried one at a time. A socket file nobody listens on any more (its process
    /// died; connecting fails with ECONNREFUSED) is deleted and skipped; a file that is not this
    /// user's socket is skipped. A listener that refuses — another scheme, another sign-in's
    /// `state` — is passed over.
    ///
    /// - Parameters:
    ///   - url: the callback URL, at most 8192 bytes of UTF-8.
    ///   - directory: the socket directory; `nil` for
    ///     ``SchemeCallbackListener/defaultDirectory(environment:)``. It is never created here: when
    ///     it does not exist nobody is waiting.
    /// - Returns: whether a waiting session accepted the URL. When false, the URL was not used.
    /// - Throws: ``SchemeCallbackError`` — `.urlTooLong`; `.unsafeDirectory` when the directory is
    ///   not private to this user (the URL is then not handed to anyone);
    ///   `.directoryUnavailable`.
    public static func deliver(_ url: URL, directory: URL? = nil) async throws -> Bool {
        try await deliver(url, directory: directory, environment: ProcessInfo.processInfo.environment)
    }

    /// ``deliver(_:directory:)`` with the default directory taken from `environment`.
    static func deliver(_ url: URL, directory: URL?, environment: [String: String]) async throws -> Bool {
        let line = url.absoluteString
        guard line.utf8.count <= HandOffProtocol.maximumURLLength else {
            throw SchemeCallbackError(
                .urlTooLong,
                "the callback URL is \(line.utf8.count) bytes long; at most \(HandOffProtocol.maximumURLLength) can be handed over"
            )
        }
        guard let directory = try CallbackSocketDirectory.prepare(directory, environment: environment, create: false)
        else {
            return false
        }
        for path in CallbackSocketDirectory.sockets(in: directory) where UnixSocketPath.isOwnSocket(path) {
            switch await offer(line, to: path) {
            case .accepted: return true
            case .refused, .unreachable: continue
            case .stale: unlink(path)
            }
        }
        return false
    }

    enum Answer {
        case accepted, refused, stale, unreachable
    }

    /// Offers the line to one listener.
    static func offer(_ line: String, to path: String) async -> Answer {
        let group = MultiThreadedEventLoopGroup.singleton
        let reply = group.any().makePromise(of: String.self)
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(.seconds(2))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(HandOffClientHandler(line: line, reply: reply))
                }
            }
        do {
            _ = try await bootstrap.connect(unixDomainSocketPath: path).get()
        } catch let error as IOError where error.errnoCode == ECONNREFUSED {
            reply.fail(error)
            return .stale
        } catch {
            reply.fail(error)
            return .unreachable
        }
        guard let answer = try? await reply.futureResult.get() else { return .unreachable }
        return answer == HandOffProtocol.accepted ? .accepted : .refused
    }
}

/// Sends the line as soon as the connection is up and collects the listener's one-line answer.
///
/// Everything happens on the connection's event loop, with no hop through the task that called
/// ``SchemeCallbackDelivery/deliver(_:directory:)``: on a busy machine that task may not run again
/// for seconds, and a line written only then would miss the listener's 5-second deadline for it.
private final class HandOffClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let line: String
    let reply: EventLoopPromise<String>
    private var received = ""
    private var timer: Scheduled<Void>?

    init(line: String, reply: EventLoopPromise<String>) {
        self.line = line
        self.reply = reply
    }

    func channelActive(context: ChannelHandlerContext) {
        // A listener answers at once; one that does not within this time is passed over.
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: .seconds(10)) { channel.close(promise: nil) }
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: line + "\n")), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        received += buffer.readString(length: buffer.readableBytes) ?? ""
        if let newline = received.firstIndex(of: "\n") {
            reply.succeed(String(received[..<newline]))
            context.close(promise: nil)
        } else if received.utf8.count > 256 {
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        // Closed without a whole line: no answer.
        reply.fail(ChannelError.eof)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        reply.fail(error)
        context.close(promise: nil)
    }
}
