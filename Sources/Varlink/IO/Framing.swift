import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Varlink's framing on a stream socket: each message is one JSON text followed by a NUL byte.
///
/// A message longer than `maximumMessageSize` (not counting its NUL) is refused as soon as that
/// many bytes have arrived without a NUL: the connection is closed, so a peer cannot make the
/// other side buffer without bound.
final class NULFramer: ByteToMessageDecoder, MessageToByteEncoder {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = [UInt8]
    typealias OutboundIn = OutgoingMessage

    /// A message exceeded the limit.
    struct MessageTooLarge: Error, CustomStringConvertible {
        var limit: Int
        var description: String { "a message is longer than \(limit) bytes, the most this connection takes" }
    }

    /// The peer's process has as many bytes of unfinished messages buffered as it may.
    struct OverBudget: Error, CustomStringConvertible {
        var limit: Int
        var description: String {
            "the peer's process has \(limit) bytes of unfinished messages buffered, the most it may"
        }
    }

    private let maximumMessageSize: Int
    /// How far the current message has been searched for its NUL.
    private var searched = 0
    /// A server's connection: its process's buffer budget, and the message deadline.
    private let limits: FramingLimits?
    /// The bytes of the unfinished message counted against the budget.
    private var counted = 0
    /// Closes the connection when the unfinished message has not arrived by its deadline.
    private var deadline: Scheduled<Void>?

    init(maximumMessageSize: Int, limits: FramingLimits? = nil) {
        self.maximumMessageSize = maximumMessageSize
        self.limits = limits
    }

    func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        // memchr: a message can be 50 MB, searched as it arrives, never twice over.
        let readable = buffer.readableBytes
        let found = buffer.withUnsafeReadableBytes { bytes -> Int? in
            guard let base = bytes.baseAddress, searched < readable,
                let hit = memchr(base + searched, 0, readable - searched)
            else { return nil }
            return base.distance(to: UnsafeRawPointer(hit))
        }
        guard let length = found else {
            searched = readable
            if readable > maximumMessageSize { throw MessageTooLarge(limit: maximumMessageSize) }
            try count(readable, context: context)
            return .needMoreData
        }
        if length > maximumMessageSize { throw MessageTooLarge(limit: maximumMessageSize) }
        let message = buffer.readBytes(length: length) ?? []
        buffer.moveReaderIndex(forwardBy: 1)
        searched = 0
        try count(0, context: context)
        context.fireChannelRead(Self.wrapInboundOut(message))
        return .continue
    }

    /// Counts `unfinished` bytes of a message still arriving against the process's budget, and
    /// keeps the deadline for it running (0: none is arriving).
    private func count(_ unfinished: Int, context: ChannelHandlerContext) throws {
        guard let limits else { return }
        if unfinished > 0 && deadline == nil {
            let channel = context.channel
            deadline = context.eventLoop.scheduleTask(in: limits.messageDeadline) { channel.close(promise: nil) }
        } else if unfinished == 0 {
            deadline?.cancel()
            deadline = nil
        }
        guard limits.account.add(unfinished - counted) else { throw OverBudget(limit: limits.account.limit) }
        counted = unfinished
    }

    func decoderRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        if let limits { _ = limits.account.add(-counted) }
        counted = 0
    }

    func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // Bytes after the last NUL when the peer closes are an unfinished message: dropped.
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }

    func encode(data: OutgoingMessage, out: inout ByteBuffer) throws {
        out.reserveCapacity(out.writerIndex + data.count + 1)
        for part in data.parts { out.writeBytes(part) }
        out.writeInteger(UInt8(0))
    }
}

extension Channel {
    /// Adds the framing to a new connection's pipeline and wraps it for async use. Runs on the
    /// channel's event loop (channel initializers do), so the handlers need not be Sendable.
    ///
    /// With `halfClosable` (the server's side), a peer that closes only its sending side ends the
    /// inbound messages, and what is still written to it arrives: a client that gives up on a call
    /// (shutdown SHUT_WR) cancels it and still reads how it ended.
    func varlinkAsyncChannel(
        maximumMessageSize: Int,
        limits: FramingLimits? = nil,
        halfClosable: Bool = false
    ) -> EventLoopFuture<NIOAsyncChannel<[UInt8], OutgoingMessage>> {
        eventLoop.makeCompletedFuture {
            if halfClosable { try syncOptions?.setOption(ChannelOptions.allowRemoteHalfClosure, value: true) }
            // Reads grow up to 4 MiB at a time (swift-nio's default stops at 64 KiB): a 50 MB
            // message then takes tens of reads through the pipeline, not hundreds.
            try syncOptions?.setOption(
                ChannelOptions.recvAllocator,
                value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 4 << 20)
            )
            let framer = NULFramer(maximumMessageSize: maximumMessageSize, limits: limits)
            try pipeline.syncOperations.addHandler(ByteToMessageHandler(framer))
            try pipeline.syncOperations.addHandler(
                MessageToByteHandler(NULFramer(maximumMessageSize: maximumMessageSize))
            )
            return try NIOAsyncChannel<[UInt8], OutgoingMessage>(wrappingChannelSynchronously: self)
        }
    }
}
