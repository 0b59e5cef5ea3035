// libFuzzer entry point for the loopback receiver's request handling (see scripts/fuzz): the
// bytes a local program sends to the receiver's port go through the listener's own pipeline
// (NIO's HTTP/1 parser and Keyport's handler) over an in-memory channel.
//
// Properties checked for every input:
//   - the answer, if any, is 200, 400 or 404
//   - the sign-in completes only with a GET on the callback path that returns the state the
//     session sent: the URL it completes with matches the receiver's redirect and carries that state
//   - 200 is answered exactly when the sign-in completes

import Foundation
import NIOCore
import NIOEmbedded
@_spi(Fuzzing) import WebAuthentication

private let state = "xyzSTATE-4f1c"
private let accept = CallbackMatcher.stateFilter(for: URL(string: "https://auth.example/authorize?state=\(state)")!)
/// The receiver's own rule for its redirect (scheme, host, port and path, the path compared as
/// `CallbackMatcher` normalises it).
private let matcher = CallbackMatcher.loopback(host: "127.0.0.1", port: 49152, path: "/callback")

private func fail(_ message: String, _ bytes: [UInt8]) -> Never {
    fatalError(
        "loopback fuzz property violated: \(message); request: \(String(decoding: bytes, as: UTF8.self).debugDescription)"
    )
}

private func check(_ bytes: [UInt8]) {
    let loop = EmbeddedEventLoop()
    let channel = EmbeddedChannel(loop: loop)
    let callback = loop.makePromise(of: URL.self)
    var completed: URL?
    callback.futureResult.whenSuccess { completed = $0 }
    do {
        try LoopbackReceiver.configureConnection(
            channel,
            port: 49152,
            path: "/callback",
            accept: accept,
            callback: callback
        ).wait()
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 50000)).wait()
    } catch {
        fatalError("could not set up the in-memory connection: \(error)")
    }
    _ = try? channel.writeInbound(ByteBuffer(bytes: bytes))
    var response: [UInt8] = []
    while let part = try? channel.readOutbound(as: IOData.self) {
        if case .byteBuffer(let buffer) = part { response += Array(buffer.readableBytesView) }
    }
    _ = try? channel.finish()
    callback.fail(CancellationError())
    // Run what is still scheduled (the request deadline) and stop the loop, so nothing it holds
    // outlives the input.
    loop.advanceTime(by: .seconds(60))
    try? loop.syncShutdownGracefully()

    let statusLine = String(decoding: response.prefix { $0 != 0x0D }, as: UTF8.self)
    let status = statusLine.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    if !response.isEmpty, ![200, 400, 404].contains(status ?? 0) {
        fail("answered \(statusLine.debugDescription)", bytes)
    }
    if let url = completed {
        if !accept(url) { fail("completed with \(url), which lacks the session's state", bytes) }
        if !matcher.matches(url) { fail("completed with \(url), which is not the receiver's redirect", bytes) }
        if status != 200 { fail("completed but answered \(statusLine.debugDescription)", bytes) }
    } else if status == 200 {
        fail("answered 200 without completing the sign-in", bytes)
    }
}

/// libFuzzer calls this with each input (see main.swift).
func loopbackRequestFuzzTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    check(Array(UnsafeRawBufferPointer(start: UnsafeRawPointer(start), count: count)))
    return 0
}
