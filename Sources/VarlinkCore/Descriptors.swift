import KeyportErrors
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The descriptors that came with one message, owned until taken: those nobody takes are closed
/// with this object, so a descriptor a peer sends with a call that does not use it is not left
/// open. A receiver may have refused some as they came (a negative number in their place): those
/// cannot be taken.
package final class ReceivedDescriptors: Sendable {
    private let slots: Mutex<[Int32?]>
    /// How many came.
    package let count: Int

    package init(_ descriptors: [Int32]) {
        slots = Mutex(descriptors.map(Optional.some))
        count = descriptors.count
    }

    /// None: what a message that came without descriptors has.
    package static var none: ReceivedDescriptors { ReceivedDescriptors([]) }

    /// Takes descriptor `index` over (the caller now closes it, or hands it to something that
    /// will); `nil` when there is no such descriptor or it was taken already.
    package func take(_ index: Int) -> Int32? {
        slots.withLock { slots in
            guard slots.indices.contains(index), let descriptor = slots[index], descriptor >= 0 else { return nil }
            slots[index] = nil
            return descriptor
        }
    }

    deinit {
        for case let descriptor? in slots.withLock({ $0 }) where descriptor >= 0 { close(descriptor) }
    }
}

/// A message whose framing or descriptors break the rules: the connection it came on is closed.
package struct DescriptorFramingError: RecordedError {
    /// A stable name for why.
    package typealias Code = ErrorCodeOf<DescriptorFramingError>

    package var record: ErrorRecord<Code>

    package init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
    }
}

extension ErrorCodeOf<DescriptorFramingError> {
    /// A message is longer than the connection takes.
    package static let tooLong = Self(rawValue: "too-long")
    /// A message carries more descriptors than the connection takes.
    package static let tooManyDescriptors = Self(rawValue: "too-many-descriptors")
}

/// Varlink's framing (each message followed by a NUL) on a socket that passes descriptors, and
/// which message each descriptor belongs to.
///
/// Linux gives a read the descriptors of the first send it reaches that carried some, and ends
/// that read within the bytes of that send (it never reads on into the next send's bytes): the
/// descriptors belong to the message the read's last byte is part of. That holds when a sender
/// attaches descriptors to a send of that message's bytes only, as ``VarlinkBlockingConnection``
/// and the server's transport do (the first send of the message; what is left goes without).
package final class DescriptorFraming {
    /// The longest message taken, without its NUL.
    package let maximumMessageSize: Int
    /// The most descriptors one message may carry.
    package let maximumDescriptors: Int
    private var pending: [UInt8] = []
    private var pendingDescriptors: [Int32] = []

    package init(maximumMessageSize: Int, maximumDescriptors: Int) {
        self.maximumMessageSize = maximumMessageSize
        self.maximumDescriptors = maximumDescriptors
    }

    deinit {
        for descriptor in pendingDescriptors where descriptor >= 0 { close(descriptor) }
    }

    /// Bytes of a message that has begun and not ended.
    package var unfinished: Int { pending.count }

    /// Takes what one read brought, `chunk` and the `descriptors` that came with it (taken over);
    /// returns the messages it completed, each with its descriptors.
    ///
    /// - Throws: ``DescriptorFramingError`` when a message is longer than the maximum or carries
    ///   more descriptors than it may (those are closed).
    package func append(
        _ chunk: UnsafeRawBufferPointer,
        descriptors: [Int32]
    ) throws(DescriptorFramingError) -> [(bytes: [UInt8], descriptors: ReceivedDescriptors)] {
        var messages: [(bytes: [UInt8], descriptors: ReceivedDescriptors)] = []
        let endsMessage = chunk.last == 0
        var start = 0
        while start < chunk.count, let base = chunk.baseAddress,
            let hit = memchr(base + start, 0, chunk.count - start)
        {
            let end = base.distance(to: UnsafeRawPointer(hit))
            guard pending.count + end - start <= maximumMessageSize else {
                for descriptor in descriptors where descriptor >= 0 { close(descriptor) }
                throw tooLong()
            }
            var message = pending
            pending = []
            message.append(contentsOf: chunk[start..<end])
            var attached = pendingDescriptors
            pendingDescriptors = []
            if endsMessage && end == chunk.count - 1 { attached += descriptors }
            messages.append((message, ReceivedDescriptors(attached)))
            start = end + 1
        }
        if !endsMessage { pendingDescriptors += descriptors }
        pending.append(contentsOf: chunk[start...])
        guard pending.count <= maximumMessageSize else { throw tooLong() }
        // Checked once the descriptors are owned by a message or by this framing, so that they
        // are closed either way.
        for (_, attached) in messages where attached.count > maximumDescriptors {
            throw tooManyDescriptors()
        }
        guard pendingDescriptors.count <= maximumDescriptors else { throw tooManyDescriptors() }
        return messages
    }

    private func tooLong() -> DescriptorFramingError {
        DescriptorFramingError(
            .tooLong,
            "a message is longer than \(maximumMessageSize) bytes, the most this connection takes"
        )
    }

    private func tooManyDescriptors() -> DescriptorFramingError {
        DescriptorFramingError(
            .tooManyDescriptors,
            "a message carries more than \(maximumDescriptors) descriptors, the most this connection takes"
        )
    }
}
