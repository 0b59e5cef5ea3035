import KeyportSystemCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A connection to a server of the person's session (an X server, a Wayland compositor, the D-Bus
/// session bus): whole writes, reads that wait until a deadline, and the descriptors that come
/// with the bytes (Wayland's `send`).
final class DisplaySocket {
    private let descriptor: Int32
    /// What was read and not taken yet, from `start`.
    private var buffer: [UInt8] = []
    private var start = 0
    /// Descriptors received and not taken yet, in the order they came.
    private var descriptors: [Int32] = []
    /// What the server is called in errors ("the X server :0").
    let name: String

    init(descriptor: Int32, name: String) {
        self.descriptor = descriptor
        self.name = name
    }

    deinit {
        close(descriptor)
        for received in descriptors { close(received) }
    }

    /// The bytes read and not taken.
    var available: Int { buffer.count - start }

    /// Sends all of `bytes`.
    func write(_ bytes: [UInt8]) throws(DesktopError) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                send(descriptor, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw DesktopError(.unreachable, "\(name) closed the connection: \(reason())") }
            sent += count
        }
    }

    /// Waits until at least `count` bytes are read, or `deadline` passes (false).
    ///
    /// - Throws: ``DesktopError`` when the server closes the connection.
    func fill(_ count: Int, until deadline: ContinuousClock.Instant) throws(DesktopError) -> Bool {
        while available < count {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            let (seconds, attoseconds) = left.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var wait = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&wait, 1, milliseconds)
            if ready < 0, errno == EINTR { continue }
            guard ready >= 0 else { throw DesktopError(.unreachable, "cannot wait for \(name): \(reason())") }
            guard ready > 0 else { continue }
            // What was taken is let go once all of it was, or once it is large.
            if start > 0, start == buffer.count || start > 65536 {
                buffer.removeFirst(start)
                start = 0
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let result = chunk.withUnsafeMutableBytes { raw in
                Result { () throws(MemoryFileError) in
                    try DescriptorPassing.receive(
                        into: raw,
                        on: descriptor,
                        maximum: DescriptorPassing.maximumReceivable
                    )
                }
            }
            let received: (count: Int, descriptors: [Int32])
            switch result {
            case .success(let value): received = value
            case .failure(let error): throw DesktopError(.unreachable, "cannot read from \(name): \(error)")
            }
            descriptors += received.descriptors
            guard received.count > 0 else { throw DesktopError(.unreachable, "\(name) closed the connection") }
            buffer += chunk.prefix(received.count)
        }
        return true
    }

    /// Reads a line that ends in CR LF (D-Bus's authentication), without its end; nil when
    /// `deadline` passes first or the line is longer than 512 bytes.
    func readLine(until deadline: ContinuousClock.Instant) throws(DesktopError) -> String? {
        var scanned = 0
        while true {
            let bytes = Array(peek(available))
            while scanned + 1 < bytes.count {
                if bytes[scanned] == 13, bytes[scanned + 1] == 10 {
                    return String(decoding: take(scanned + 2).dropLast(2), as: UTF8.self)
                }
                scanned += 1
            }
            guard available < 512, try fill(available + 1, until: deadline) else { return nil }
        }
    }

    /// The next `count` bytes, which must have been read (``fill(_:until:)``), without taking them.
    func peek(_ count: Int) -> ArraySlice<UInt8> {
        precondition(count <= available, "peek past what was read")
        return buffer[start..<start + count]
    }

    /// Takes the next `count` bytes, which must have been read.
    func take(_ count: Int) -> [UInt8] {
        defer { start += count }
        return Array(peek(count))
    }

    /// Takes the oldest descriptor received, the caller's to close.
    func takeDescriptor() -> Int32? {
        descriptors.isEmpty ? nil : descriptors.removeFirst()
    }

    private func reason() -> String { String(cString: strerror(errno)) }
}

/// Little-endian fields, as both protocols are spoken here (X11 in the byte order the client
/// chooses; Wayland in the host's, little-endian on the machines Keyport builds for).
extension [UInt8] {
    mutating func append16(_ value: Int) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func append32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    /// Zeroes until the count is a multiple of four.
    mutating func pad4() {
        while count % 4 != 0 { append(0) }
    }
}

extension Collection<UInt8> where Index == Int {
    func read16(at offset: Int) -> Int {
        Int(self[startIndex + offset]) | Int(self[startIndex + offset + 1]) << 8
    }

    func read32(at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(self[startIndex + offset + $1]) << UInt32(8 * $1) }
    }
}
