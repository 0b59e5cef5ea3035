import AuthenticationServices
import Foundation
import WebAuthentication

#if canImport(Glibc)
import Glibc
#endif

/// What a web-authentication session costs: opening the loopback redirect, `start()`, and the
/// time from the browser's redirect request reaching the receiver to the completion handler
/// running — for loopback and for the custom-scheme socket hand-off.
///
/// The "browser" is `/bin/true` (its launch is part of start-up, not of the redirect). The
/// redirect is written on a connection opened beforehand, the way a browser's keep-alive or
/// pre-connect does, so the time counts Keyport's work — reading and matching the request,
/// answering the page, ending the flow, calling the handler — and not TCP's handshake.
func webAuthBenchmark(rounds: Int) async throws {
    var open: [Double] = []
    var start: [Double] = []
    var loopback: [Double] = []
    var scheme: [Double] = []
    let url = URL(string: "https://auth.example/authorize?client_id=bench&state=s")!

    for _ in 0..<rounds {
        let t0 = ContinuousClock.now
        let redirect = try await ASWebAuthenticationSession.LoopbackRedirect.open()
        open.append(seconds(ContinuousClock.now - t0))
        let socket = try connect(port: redirect.url.port!)
        defer { close(socket) }
        let request = Array("GET /callback?code=c&state=s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)

        let handled = HandlerClock()
        let session = ASWebAuthenticationSession(url: url, callback: .loopback(redirect)) { _, _ in handled.stamp() }
        session.browser = .command(["/bin/true"])
        let t1 = ContinuousClock.now
        precondition(session.start())
        start.append(seconds(ContinuousClock.now - t1))
        // Let the session reach its wait, as it has long before a person finishes signing in.
        try await Task.sleep(for: .milliseconds(30))
        let sent = ContinuousClock.now
        _ = request.withUnsafeBytes { write(socket, $0.baseAddress, $0.count) }
        loopback.append(seconds(await handled.value() - sent))
    }

    // The custom-scheme path: a per-user socket directory of our own for the run.
    let runtime = FileManager.default.temporaryDirectory.appendingPathComponent("keyport-bench-\(getpid())")
    try FileManager.default.createDirectory(
        at: runtime,
        withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700]
    )
    defer { try? FileManager.default.removeItem(at: runtime) }
    setenv("XDG_RUNTIME_DIR", runtime.path, 1)
    for _ in 0..<rounds {
        let handled = HandlerClock()
        let session = ASWebAuthenticationSession(url: url, callbackURLScheme: "com.example.bench") { _, _ in
            handled.stamp()
        }
        session.browser = .command(["/bin/true"])
        precondition(session.start())
        try await Task.sleep(for: .milliseconds(30))
        let sent = ContinuousClock.now
        guard try await SchemeCallbackDelivery.deliver(URL(string: "com.example.bench:/callback?code=c&state=s")!)
        else {
            fatalError("no session accepted the custom-scheme callback")
        }
        scheme.append(seconds(await handled.value() - sent))
    }

    print("web authentication, \(rounds) sessions each (release build)")
    report("LoopbackRedirect.open()", open)
    report("start()", start)
    report("loopback redirect -> handler", loopback)
    report("scheme hand-off -> handler", scheme)
}

private func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

private func report(_ name: String, _ samples: [Double]) {
    let sorted = samples.sorted()
    func ms(_ q: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] * 1000 }
    print(
        String(
            format: "  %-30@ median %7.3f ms  p90 %7.3f ms  p99 %7.3f ms  max %7.3f ms",
            name as NSString,
            ms(0.5),
            ms(0.9),
            ms(0.99),
            sorted.last! * 1000
        )
    )
}

/// When the completion handler ran.
private final class HandlerClock: @unchecked Sendable {
    // @unchecked: `instant` and `waiter` are only touched under `lock`.
    private let lock = NSLock()
    private var instant: ContinuousClock.Instant?
    private var waiter: CheckedContinuation<ContinuousClock.Instant, Never>?

    func stamp() {
        let now = ContinuousClock.now
        let waiter = lock.withLock {
            instant = now
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: now)
    }

    func value() async -> ContinuousClock.Instant {
        await withCheckedContinuation { continuation in
            let ready = lock.withLock {
                if instant == nil { waiter = continuation }
                return instant
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// A TCP connection to 127.0.0.1:`port`.
private func connect(port: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let status = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard status == 0 else { throw POSIXError(.ECONNREFUSED) }
    return fd
}
