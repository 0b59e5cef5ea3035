import KeyportSystemCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The browsers' native messaging frames on a pair of descriptors (the host's standard input and
/// output): each message is a 32-bit length in native byte order, then that many bytes of UTF-8
/// JSON. Chromium and Firefox frame alike.
package enum NativeMessaging {
    /// The largest message the host reads from the browser; the extension's calls are a few
    /// hundred bytes.
    package static let maximumIncoming = 1 << 20
    /// The largest message a browser takes from its host (Chromium's limit; Firefox's is larger).
    package static let maximumOutgoing = 1_000_000

    /// What came on the input.
    package enum Incoming {
        /// A message, whole.
        case message([UInt8])
        /// A message longer than ``maximumIncoming``, read past: its length.
        case tooLarge(Int)
        /// The browser closed the port (end of input).
        case closed
    }

    /// Reads the next message from `descriptor`. A stream that ends inside a frame is the port
    /// closing.
    package static func readMessage(from descriptor: Int32) -> Incoming {
        var header = [UInt8](repeating: 0, count: 4)
        guard readFully(descriptor, into: &header, count: 4) else { return .closed }
        let length = Int(header.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
        guard length <= maximumIncoming else {
            var scratch = [UInt8](repeating: 0, count: 1 << 16)
            var left = length
            while left > 0 {
                let part = min(left, scratch.count)
                guard readFully(descriptor, into: &scratch, count: part) else { return .closed }
                left -= part
            }
            return .tooLarge(length)
        }
        var message = [UInt8](repeating: 0, count: length)
        guard readFully(descriptor, into: &message, count: length) else { return .closed }
        return .message(message)
    }

    /// Writes `message` as one frame to `descriptor`; false when the browser is gone.
    package static func writeMessage(_ message: [UInt8], to descriptor: Int32) -> Bool {
        var length = UInt32(message.count)
        var frame = withUnsafeBytes(of: &length) { Array($0) }
        frame += message
        defer { Wipe.bytes(&frame) }
        var written = 0
        while written < frame.count {
            let result = frame.withUnsafeBytes { bytes in
                write(descriptor, bytes.baseAddress! + written, bytes.count - written)
            }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { return false }
            written += result
        }
        return true
    }

    private static func readFully(_ descriptor: Int32, into buffer: inout [UInt8], count: Int) -> Bool {
        var done = 0
        while done < count {
            let result = buffer.withUnsafeMutableBytes { bytes in
                read(descriptor, bytes.baseAddress! + done, count - done)
            }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { return false }
            done += result
        }
        return true
    }
}
