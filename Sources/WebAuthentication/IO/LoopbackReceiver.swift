import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// Receives an OAuth redirect on the loopback interface (RFC 8252 §7.3): listens on 127.0.0.1 at a
/// port the system picks, so the redirect URI is known before the authorization URL is built, and
/// hands over exactly one callback.
///
/// Requests for other paths (a browser's `/favicon.ico`, a port scan) get 404 and change nothing;
/// a request on the callback path that `accept` refuses (say, a state from another attempt) gets
/// 400 and the receiver keeps waiting. The browser is answered with a short page saying the window
/// can be closed. The listener shuts down after the callback, on `cancel()`, or when the wait times
/// out.
///
/// Any local program can connect to the port, so connections cannot tie the receiver up: one
/// that has not sent a whole request 5 seconds after it was accepted is closed, and when more
/// than 32 are open at once the oldest that has not sent a whole request is closed. The browser's
/// redirect, which sends its request at once, still gets through a flood of idle connections.
public final class LoopbackReceiver: Sendable {
    /// How long a connection may take to send a whole request, and how many may be open at once.
    struct ConnectionLimits: Sendable {
        /// A connection that has not sent a whole request this long after it was accepted is closed.
        /// A deadline rather than an idle timer, so a client trickling a byte at a time cannot keep
        /// a connection forever.
        var requestTimeout: TimeAmount
        /// More open connections than this, and the oldest still waiting for its request is closed.
        var maximumConnections: Int

        static let standard = ConnectionLimits(requestTimeout: .seconds(5), maximumConnections: 32)
    }

    /// The port the system chose.
    public let port: Int
    /// The path the callback must come to (`/callback` by default).
    public let path: String
    /// `http://127.0.0.1:PORT/PATH`, the redirect URI to register in the authorization request.
    public var redirectURI: URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }
    /// The matcher for this receiver's redirect.
    public var matcher: CallbackMatcher { .loopback(host: "127.0.0.1", port: port, path: path) }

    private let channel: any Channel
    private let callback: EventLoopPromise<URL>

    /// Opens the listener. `accept` decides whether a request on the callback path is the one
    /// awaited; the default accepts the first.
    public static func start(
        path: String = "/callback",
        successPage: String = LoopbackReceiver.defaultPage,
        accept: @escaping @Sendable (URL) -> Bool = { _ in true }
    ) async throws -> LoopbackReceiver {
        try await start(path: path, successPage: successPage, limits: .standard, accept: accept)
    }

    /// ``start(path:successPage:accept:)`` with other connection limits (tests use short ones).
    static func start(
        path: String = "/callback",
        successPage: String = LoopbackReceiver.defaultPage,
        limits: ConnectionLimits,
        accept: @escaping @Sendable (URL) -> Bool = { _ in true }
    ) async throws -> LoopbackReceiver {
        let group = MultiThreadedEventLoopGroup.singleton
        let callback = group.any().makePromise(of: URL.self)
        let connections = OpenConnections(limit: limits.maximumConnections)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.pipeline.addHandler(AcceptOrder(connections: connections))
            }
            .childChannelInitializer { channel in
                configure(
                    channel,
                    CallbackHandler(
                        path: path,
                        port: nil,
                        page: successPage,
                        accept: accept,
                        callback: callback,
                        requestTimeout: limits.requestTimeout,
                        connections: connections
                    )
                )
            }
        let channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw CancellationError()
        }
        let receiver = LoopbackReceiver(port: port, path: path, channel: channel, callback: callback)
        // Whatever ends the wait closes the listener.
        callback.futureResult.whenComplete { _ in channel.close(promise: nil) }
        return receiver
    }

    /// One accepted connection's pipeline: the HTTP/1 parser, then the handler that answers.
    /// Called on the connection's event loop (channel initializers are), so the handlers are added
    /// synchronously and never cross threads: they need not be `Sendable`.
    private static func configure(_ channel: any Channel, _ handler: CallbackHandler) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.configureHTTPServerPipeline()
            try channel.pipeline.syncOperations.addHandler(handler)
        }
    }

    /// Sets up `channel` as the listener sets up each connection it accepts, for a receiver on
    /// `port` waiting at `path`; the awaited callback completes `callback`. SPI for the fuzz
    /// harness (Fuzz/Sources/LoopbackRequestFuzzer), which drives the real pipeline over an
    /// in-memory channel with arbitrary bytes. The connection cap is not applied here.
    @_spi(Fuzzing) public static func configureConnection(
        _ channel: any Channel,
        port: Int,
        path: String,
        accept: @escaping @Sendable (URL) -> Bool,
        callback: EventLoopPromise<URL>
    ) -> EventLoopFuture<Void> {
        configure(
            channel,
            CallbackHandler(
                path: path,
                port: port,
                page: defaultPage,
                accept: accept,
                callback: callback,
                requestTimeout: ConnectionLimits.standard.requestTimeout,
                connections: OpenConnections(limit: ConnectionLimits.standard.maximumConnections)
            )
        )
    }

    private init(port: Int, path: String, channel: any Channel, callback: EventLoopPromise<URL>) {
        self.port = port
        self.path = path
        self.channel = channel
        self.callback = callback
    }

    /// Waits for the callback URL. Throws `CancellationError` after `cancel()` or when the task is
    /// cancelled, and `LoopbackReceiver.TimedOut` when `timeout` passes first.
    public func waitForCallback(timeout: Duration? = nil) async throws -> URL {
        let callback = self.callback
        let timer = timeout.map { timeout in
            channel.eventLoop.scheduleTask(in: .nanoseconds(timeout.clampedNanoseconds)) {
                callback.fail(TimedOut())
            }
        }
        defer { timer?.cancel() }
        return try await withTaskCancellationHandler {
            try await callback.futureResult.get()
        } onCancel: {
            callback.fail(CancellationError())
        }
    }

    /// Stops waiting; idempotent.
    public func cancel() {
        callback.fail(CancellationError())
    }

    /// A receiver nobody holds any more stops listening.
    deinit {
        callback.fail(CancellationError())
    }

    /// The wait ended before the callback arrived.
    public struct TimedOut: Error, CustomStringConvertible {
        /// The error a receiver ends its wait with when the timeout passes.
        public init() {}

        /// "no callback arrived before the timeout".
        public var description: String { "no callback arrived before the timeout" }
    }

    /// The page the browser shows after a callback was taken: "you can close this window".
    public static let defaultPage = """
        <!doctype html><html><head><meta charset="utf-8"><title>Signed in</title></head>
        <body style="font-family: sans-serif; margin: 3em"><h1>You are signed in.</h1>
        <p>You can close this window and return to the application.</p></body></html>
        """
}

/// The receiver's open connections, in the order they were accepted, and which of them have sent
/// a whole request. Connections are served on several event loops, so the records are kept under
/// a lock; the order is taken where connections are accepted, one at a time on the listener's
/// event loop, because connections become active on their own loops in any order.
private final class OpenConnections: Sendable {
    private struct Connection {
        let id: ObjectIdentifier
        let sequence: Int
        let channel: any Channel
        var requestReceived = false
    }

    private struct State {
        var nextSequence = 0
        var sequences: [ObjectIdentifier: Int] = [:]
        /// Active connections, ordered by `sequence`.
        var open: [Connection] = []
    }

    private let limit: Int
    private let state = Mutex(State())

    init(limit: Int) {
        self.limit = limit
    }

    /// Numbers a connection as the listener accepts it.
    func accepted(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        state.withLock { state in
            state.sequences[id] = state.nextSequence
            state.nextSequence += 1
        }
        channel.closeFuture.whenComplete { _ in
            self.state.withLock { state in
                state.sequences.removeValue(forKey: id)
                state.open.removeAll { $0.id == id }
            }
        }
    }

    /// Records an active connection; past the limit, closes the earliest accepted one still
    /// waiting for its request (possibly this one).
    func opened(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let victim = state.withLock { state -> (any Channel)? in
            guard let sequence = state.sequences[id] else { return nil }  // already closed
            let connection = Connection(id: id, sequence: sequence, channel: channel)
            state.open.insert(connection, at: state.open.firstIndex { $0.sequence > sequence } ?? state.open.endIndex)
            guard state.open.count > limit, let oldest = state.open.firstIndex(where: { !$0.requestReceived }) else {
                return nil
            }
            return state.open.remove(at: oldest).channel
        }
        victim?.close(promise: nil)
    }

    /// A whole request arrived on `channel`: it is not closed to make room any more.
    func requestReceived(on channel: any Channel) {
        let id = ObjectIdentifier(channel)
        state.withLock { state in
            if let index = state.open.firstIndex(where: { $0.id == id }) { state.open[index].requestReceived = true }
        }
    }
}

/// On the listening channel: numbers each accepted connection before it is handed on.
private final class AcceptOrder: ChannelInboundHandler, Sendable {
    typealias InboundIn = any Channel

    let connections: OpenConnections

    init(connections: OpenConnections) {
        self.connections = connections
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        connections.accepted(unwrapInboundIn(data))
        context.fireChannelRead(data)
    }
}

/// Answers each request on one connection: the awaited callback completes the promise.
private final class CallbackHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let path: String
    /// The listener's port, for the callback URL; `nil`: the connection's own local port, which
    /// is the listener's (an in-memory channel has none and is given one).
    let port: Int?
    let page: String
    let accept: @Sendable (URL) -> Bool
    let callback: EventLoopPromise<URL>
    let requestTimeout: TimeAmount
    let connections: OpenConnections
    private var head: HTTPRequestHead?
    private var deadline: Scheduled<Void>?
    /// One request per connection: every answer says `Connection: close`, so a request pipelined
    /// behind the first is not read (the fuzzer found one answered after a 400).
    private var answered = false

    init(
        path: String,
        port: Int?,
        page: String,
        accept: @escaping @Sendable (URL) -> Bool,
        callback: EventLoopPromise<URL>,
        requestTimeout: TimeAmount,
        connections: OpenConnections
    ) {
        self.path = path
        self.port = port
        self.page = page
        self.accept = accept
        self.callback = callback
        self.requestTimeout = requestTimeout
        self.connections = connections
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // Added as the connection is accepted: the deadline counts from then.
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: requestTimeout) { channel.close(promise: nil) }
    }

    func channelActive(context: ChannelHandlerContext) {
        connections.opened(context.channel)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            answered = true
            deadline?.cancel()
            connections.requestReceived(on: context.channel)
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let port = self.port ?? context.channel.localAddress?.port ?? 0
        let url = URL(string: "http://127.0.0.1:\(port)\(head.uri)")
        let requestPath = url.map { CallbackMatcher.normalise($0.path) }
        guard head.method == .GET, let url, requestPath == CallbackMatcher.normalise(path) else {
            write(.notFound, "Not found.", context: context)
            return
        }
        guard accept(url) else {
            write(.badRequest, "This is not the sign-in this application is waiting for.", context: context)
            return
        }
        // The flow learns of the callback before the browser can see the answer (and, for an
        // ephemeral browser, exit), so the callback always wins over "the browser closed".
        callback.succeed(url)
        write(.ok, page, context: context)
    }

    private func write(_ status: HTTPResponseStatus, _ body: String, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(
            name: "Content-Type",
            value: status == .ok ? "text/html; charset=utf-8" : "text/plain; charset=utf-8"
        )
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "Connection", value: "close")
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
            promise: nil
        )
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
