import Foundation
import Testing
import WebAuthentication

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Real HTTP requests over real loopback sockets, as a browser makes them.
func get(_ url: URL) async throws -> (status: Int, body: String) {
    var request = URLRequest(url: url)
    request.timeoutInterval = 10
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
}

@Suite("Loopback receiver")
struct LoopbackReceiverTests {
    @Test("the redirect URI is known before waiting; strays get 404; the callback gets the page")
    func callback() async throws {
        let receiver = try await LoopbackReceiver.start()
        #expect(receiver.port > 0)
        #expect(receiver.redirectURI.absoluteString == "http://127.0.0.1:\(receiver.port)/callback")
        let stray = try await get(URL(string: "http://127.0.0.1:\(receiver.port)/favicon.ico")!)
        #expect(stray.status == 404)
        let other = try await get(URL(string: "http://127.0.0.1:\(receiver.port)/callbackx?code=1")!)
        #expect(other.status == 404)
        let page = try await get(URL(string: "http://127.0.0.1:\(receiver.port)/callback?code=abc&state=xyz")!)
        #expect(page.status == 200)
        #expect(page.body.contains("You can close this window"))
        let url = try await receiver.waitForCallback(timeout: .seconds(20))
        #expect(url.absoluteString == "http://127.0.0.1:\(receiver.port)/callback?code=abc&state=xyz")
        #expect(receiver.matcher.matches(url))
    }

    @Test("a callback that accept refuses gets 400 and the wait goes on")
    func refused() async throws {
        let receiver = try await LoopbackReceiver.start { $0.query?.contains("state=good") == true }
        let bad = try await get(URL(string: "http://127.0.0.1:\(receiver.port)/callback?code=1&state=bad")!)
        #expect(bad.status == 400)
        let good = try await get(URL(string: "http://127.0.0.1:\(receiver.port)/callback?code=2&state=good")!)
        #expect(good.status == 200)
        #expect(try await receiver.waitForCallback(timeout: .seconds(20)).query == "code=2&state=good")
    }

    @Test("after the callback, cancel or a timeout the listener is closed")
    func shutsDown() async throws {
        let receiver = try await LoopbackReceiver.start()
        await #expect(throws: LoopbackReceiver.TimedOut.self) {
            try await receiver.waitForCallback(timeout: .milliseconds(200))
        }
        await #expect(throws: (any Error).self) {
            try await get(URL(string: "http://127.0.0.1:\(receiver.port)/callback?code=late")!)
        }

        let cancelled = try await LoopbackReceiver.start()
        let waiting = Task { try await cancelled.waitForCallback() }
        cancelled.cancel()
        cancelled.cancel()  // idempotent
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }
}
