import Foundation
import KeyportTestSupport
import Testing

@testable import WebAuthentication

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A plain blocking TCP connection to 127.0.0.1, as any local program can open to the receiver.
private final class RawConnection: Sendable {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0, "connect failed: \(String(cString: strerror(errno)))")
    }

    func send(_ text: String) {
        _ = text.utf8CString.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL)) }
    }

    /// Waits up to `seconds` for the receiver to close the connection; true when it did (end of
    /// file or a reset), false when the wait ran out with the connection still open.
    func closedByPeer(within seconds: Int = 30) async throws -> Bool {
        let fd = self.fd
        return try await onOwnThread {
            var timeout = timeval(tv_sec: seconds, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var buffer = [UInt8](repeating: 0, count: 256)
            while true {
                let count = recv(fd, &buffer, buffer.count, 0)
                if count == 0 { return true }
                if count < 0 { return errno == ECONNRESET }
            }
        }
    }

    deinit { close(fd) }
}

@Suite("Loopback receiver: connection limits")
struct LoopbackLimitsTests {
    @Test("past the connection cap the oldest idle connections are closed, and the callback still gets through")
    func connectionCap() async throws {
        let receiver = try await LoopbackReceiver.start(
            limits: .init(requestTimeout: .seconds(120), maximumConnections: 4)
        )
        defer { receiver.cancel() }
        let idle = try (0..<10).map { _ in try RawConnection(port: receiver.port) }
        // Six over the cap: the six oldest are closed to make room.
        for connection in idle.prefix(6) { #expect(try await connection.closedByPeer()) }

        let url = URL(string: receiver.redirectURI.absoluteString + "?code=c&state=s")!
        let waiting = Task { try await receiver.waitForCallback(timeout: .seconds(30)) }
        #expect(try await get(url).status == 200)
        #expect(try await waiting.value == url)
    }

    @Test("a connection that sends nothing, or part of a request, is closed after the request timeout")
    func requestTimeout() async throws {
        // Long enough that the real request below, from URLSession on a loaded machine, arrives
        // whole within it; short enough for a quick test.
        let receiver = try await LoopbackReceiver.start(
            limits: .init(requestTimeout: .seconds(1), maximumConnections: 32)
        )
        defer { receiver.cancel() }
        let silent = try RawConnection(port: receiver.port)
        let trickling = try RawConnection(port: receiver.port)
        trickling.send("GET /callback?code=x HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        #expect(try await silent.closedByPeer())
        #expect(try await trickling.closedByPeer())

        // The receiver itself is still there for the real callback.
        let url = URL(string: receiver.redirectURI.absoluteString + "?code=c")!
        let waiting = Task { try await receiver.waitForCallback(timeout: .seconds(30)) }
        #expect(try await get(url).status == 200)
        #expect(try await waiting.value == url)
    }

    @Test("the standard limits: 5 seconds for a request, 32 connections")
    func standard() {
        #expect(LoopbackReceiver.ConnectionLimits.standard.requestTimeout == .seconds(5))
        #expect(LoopbackReceiver.ConnectionLimits.standard.maximumConnections == 32)
    }
}
