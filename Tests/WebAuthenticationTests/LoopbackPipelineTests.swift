import Foundation
import NIOCore
import NIOEmbedded
import Testing
@_spi(Fuzzing) import WebAuthentication

/// The connection pipeline the fuzz harness drives (Fuzz/Sources/LoopbackRequestFuzzer), over an
/// in-memory channel: the same answers as over a socket, and pipelined or malformed requests
/// cannot finish a sign-in they do not belong to.
@Suite("Loopback connection pipeline in memory")
struct LoopbackPipelineTests {
    static let accept = CallbackMatcher.stateFilter(for: URL(string: "https://auth.example/authorize?state=s-42")!)

    /// Feeds `request` to a connection; the status line answered and the callback, if any.
    func exchange(_ request: String) throws -> (status: String, callback: URL?) {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(loop: loop)
        let callback = loop.makePromise(of: URL.self)
        nonisolated(unsafe) var completed: URL?
        callback.futureResult.whenSuccess { completed = $0 }
        try LoopbackReceiver.configureConnection(
            channel,
            port: 49152,
            path: "/callback",
            accept: Self.accept,
            callback: callback
        ).wait()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 50000)).wait()
        _ = try? channel.writeInbound(ByteBuffer(string: request))
        var response = ""
        while let part = try? channel.readOutbound(as: IOData.self) {
            if case .byteBuffer(let buffer) = part { response += String(buffer: buffer) }
        }
        _ = try? channel.finish()
        callback.fail(CancellationError())
        loop.advanceTime(by: .seconds(60))
        try loop.syncShutdownGracefully()
        return (response.components(separatedBy: "\r\n").first ?? "", completed)
    }

    @Test("the awaited callback: 200 and the sign-in completes with it")
    func awaited() throws {
        let result = try exchange("GET /callback?code=c&state=s-42 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(result.status == "HTTP/1.1 200 OK")
        #expect(result.callback?.query == "code=c&state=s-42")
    }

    @Test(
        "strays, other states, other methods and garbage finish nothing",
        arguments: [
            ("GET /favicon.ico HTTP/1.1\r\n\r\n", "HTTP/1.1 404 Not Found"),
            ("GET /callback?code=c&state=other HTTP/1.1\r\n\r\n", "HTTP/1.1 400 Bad Request"),
            ("POST /callback?code=c&state=s-42 HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 404 Not Found"),
            ("\u{1B}[2K not http at all\r\n\r\n", "HTTP/1.1 400 Bad Request"),  // NIO's own answer to a broken request
            // Found by scripts/fuzz loopback: a request pipelined behind a refused one was read too.
            (
                "GET /callback?state=other HTTP/1.1\r\n\r\nGET /callback?code=c&state=s-42 HTTP/1.1\r\n\r\n",
                "HTTP/1.1 400 Bad Request"
            ),
        ]
    )
    func refused(request: String, status: String) throws {
        let result = try exchange(request)
        #expect(result.status == status)
        #expect(result.callback == nil)
    }
}
