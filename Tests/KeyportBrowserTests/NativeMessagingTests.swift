import Foundation
import Testing

@testable import KeyportBrowser

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The frames on the host's standard input and output, read and written on a pipe as the
/// browsers write them: a 32-bit length in native byte order, then the message.
@Suite("Native messaging frames")
struct NativeMessagingTests {
    /// A pipe holding `bytes`, its writing end closed: what a browser sent before it closed the port.
    private func input(_ bytes: [UInt8]) throws -> Int32 {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        try #require(bytes.count < 60_000, "a pipe holds 64 KiB; larger input would block the test")
        let written = bytes.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        close(ends[1])
        try #require(written == bytes.count)
        return ends[0]
    }

    private func frame(_ message: [UInt8], length: UInt32? = nil) -> [UInt8] {
        var length = length ?? UInt32(message.count)
        return withUnsafeBytes(of: &length) { Array($0) } + message
    }

    @Test("a message written is read back whole, and the next one after it; the end of input closes the port")
    func roundTrip() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let first = Array(#"{"method":"org.keyport.Browser.Ping"}"#.utf8)
        #expect(NativeMessaging.writeMessage(first, to: ends[1]))
        #expect(NativeMessaging.writeMessage([], to: ends[1]))
        close(ends[1])
        guard case .message(let read) = NativeMessaging.readMessage(from: ends[0]) else {
            Issue.record("the first frame was not read as a message")
            return
        }
        #expect(read == first)
        guard case .message(let empty) = NativeMessaging.readMessage(from: ends[0]) else {
            Issue.record("the empty frame was not read as a message")
            return
        }
        #expect(empty.isEmpty)
        guard case .closed = NativeMessaging.readMessage(from: ends[0]) else {
            Issue.record("the end of input was not the port closing")
            return
        }
    }

    @Test("a frame over the limit is read past and named by its length; the frame after it is read")
    func tooLarge() throws {
        // The length says more than the host reads; the bytes that follow are what the browser
        // sent, so the host reads them away (here, a length just over the limit with its bytes
        // cut short would block: the test sends the over-long frame's bytes in full).
        let over = NativeMessaging.maximumIncoming + 1
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let writer = ends[1]
        let next = Array(#"{"after":true}"#.utf8)
        let sending = Thread {
            var header = UInt32(over)
            _ = withUnsafeBytes(of: &header) { write(writer, $0.baseAddress, 4) }
            let chunk = [UInt8](repeating: 0x20, count: 1 << 16)
            var left = over
            while left > 0 {
                let part = min(left, chunk.count)
                let wrote = chunk.withUnsafeBytes { write(writer, $0.baseAddress, part) }
                guard wrote > 0 else { break }
                left -= wrote
            }
            _ = NativeMessaging.writeMessage(next, to: writer)
            close(writer)
        }
        sending.start()
        guard case .tooLarge(let length) = NativeMessaging.readMessage(from: ends[0]) else {
            Issue.record("the over-long frame was not refused")
            return
        }
        #expect(length == over)
        guard case .message(let read) = NativeMessaging.readMessage(from: ends[0]) else {
            Issue.record("the frame after the over-long one was lost")
            return
        }
        #expect(read == next)
    }

    @Test("input that ends inside a length or inside a message is the port closing, not a message")
    func cutShort() throws {
        for bytes in [[0x05, 0x00], frame(Array("abc".utf8), length: 10)] {
            let descriptor = try input(bytes)
            defer { close(descriptor) }
            guard case .closed = NativeMessaging.readMessage(from: descriptor) else {
                Issue.record("\(bytes.count) bytes cut short were read as something")
                continue
            }
        }
    }
}
