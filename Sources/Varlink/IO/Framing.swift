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

    private let maximumMessageSize: Int
    /// How far the current message has been searched for its NUL.
    private var searched = 0

    init(maximumMessageSize: Int) {
        self.maximumMessageSize = maximumMessageSize
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
            return .needMoreData
        }
        if length > maximumMessageSize { throw MessageTooLarge(limit: maximumMessageSize) }
        let message = buffer.readBytes(length: length) ?? []
        buffer.moveReaderIndex(forwardBy: 1)
        searched = 0
        context.fireChannelRead(Self.wrapInboundOut(message))
        return .continue
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
    func varlinkAsyncChannel(maximumMessageSize: Int) -> EventLoopFuture<NIOAsyncChannel<[UInt8], OutgoingMessage>> {
        eventLoop.makeCompletedFuture {
            // Reads grow up to 4 MiB at a time (swift-nio's default stops at 64 KiB): a 50 MB
            // message then takes tens of reads through the pipeline, not hundreds.
            try syncOptions?.setOption(
                ChannelOptions.recvAllocator,
                value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 4 << 20)
            )
            let framer = NULFramer(maximumMessageSize: maximumMessageSize)
            try pipeline.syncOperations.addHandler(ByteToMessageHandler(framer))
            try pipeline.syncOperations.addHandler(
                MessageToByteHandler(NULFramer(maximumMessageSize: maximumMessageSize))
            )
            return try NIOAsyncChannel<[UInt8], OutgoingMessage>(wrappingChannelSynchronously: self)
        }
    }
}
