import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A small HTTP/1.1 server on 127.0.0.1, over real sockets, for the OAuth client's tests: each
/// request is answered with what `respond` returns for it, and every request is recorded, so a
/// test can see what reached which server (a redirect target must see nothing).
final class TestHTTPServer: Sendable {
    struct Request: Sendable {
        var method: String
        var uri: String
        var body: String
    }

    struct Reply: Sendable {
        var status: Int
        var headers: [(String, String)] = []
        var body: String = ""

        static func json(_ text: String) -> Reply {
            Reply(status: 200, headers: [("Content-Type", "application/json")], body: text)
        }
        static func redirect(_ status: Int, to location: String) -> Reply {
            Reply(status: status, headers: [("Location", location)])
        }
    }

    let port: Int
    /// `http://127.0.0.1:PORT`.
    var base: String { "http://127.0.0.1:\(port)" }
    private let channel: any Channel
    private let log: RequestLog

    final class RequestLog: Sendable {
        let requests = Mutex<[Request]>([])
    }

    /// Starts serving; `respond` gets each request and this server's base address.
    static func start(_ respond: @escaping @Sendable (Request, String) -> Reply) async throws -> TestHTTPServer {
        let log = RequestLog()
        let portBox = Mutex(0)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                // On the connection's event loop: the handler is added synchronously and stays there.
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(
                        Handler(log: log, base: { "http://127.0.0.1:\(portBox.withLock { $0 })" }, respond: respond)
                    )
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        portBox.withLock { $0 = port }
        return TestHTTPServer(port: port, channel: channel, log: log)
    }

    private init(port: Int, channel: any Channel, log: RequestLog) {
        self.port = port
        self.channel = channel
        self.log = log
    }

    /// What was asked so far, in order.
    var requests: [Request] { log.requests.withLock { $0 } }

    deinit {
        channel.close(promise: nil)
    }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let log: RequestLog
        let base: @Sendable () -> String
        let respond: @Sendable (Request, String) -> Reply
        private var head: HTTPRequestHead?
        private var body = ""

        init(
            log: RequestLog,
            base: @escaping @Sendable () -> String,
            respond: @escaping @Sendable (Request, String) -> Reply
        ) {
            self.log = log
            self.base = base
            self.respond = respond
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                self.head = head
                body = ""
            case .body(var buffer):
                body += buffer.readString(length: buffer.readableBytes) ?? ""
            case .end:
                guard let head else { return }
                let request = Request(method: head.method.rawValue, uri: head.uri, body: body)
                log.requests.withLock { $0.append(request) }
                let reply = respond(request, base())
                var headers = HTTPHeaders(reply.headers)
                headers.add(name: "Content-Length", value: String(reply.body.utf8.count))
                headers.add(name: "Connection", value: "close")
                let status = HTTPResponseStatus(statusCode: reply.status)
                context.write(
                    wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
                    promise: nil
                )
                context.write(
                    wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: reply.body)))),
                    promise: nil
                )
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
            }
        }
    }
}
