import KeyportEncoding

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Overwrites secret bytes before their memory is let go.
package enum Wipe {
    /// Zeroes `bytes` with `explicit_bzero` (which the compiler may not drop as a dead store) and
    /// empties the array.
    package static func bytes(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            explicit_bzero(base, buffer.count)
        }
        bytes = []
    }
}

/// Secret bytes (a passphrase, a key's text) that are wiped when let go, never printed, compared
/// in constant time, and kept out of core dumps and swap (``SecretMemory``).
package final class SecretBytes: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    // Written only in init and deinit: no one else can reach the storage to change it.
    private var storage: [UInt8]

    /// Takes `bytes`, wiping the caller's copy.
    package init(taking bytes: inout [UInt8]) {
        // A copy of its own, never shared with the caller's array, so that the pages marked are
        // this storage's.
        storage = [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: bytes)
        }
        Wipe.bytes(&bytes)
        SecretMemory.protect(&storage)
    }

    /// The UTF-8 bytes of `text`. A `String` cannot be wiped: prefer ``init(taking:)`` where the
    /// secret arrives as bytes.
    package convenience init(_ text: String) {
        var bytes = Array(text.utf8)
        self.init(taking: &bytes)
    }

    deinit { Wipe.bytes(&storage) }

    /// How many bytes.
    package var count: Int { storage.count }

    /// Runs `body` with the bytes, which must not escape it.
    package func withUnsafeBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        var result: Result<T, E>!
        storage.withUnsafeBytes { buffer in
            result = Result { () throws(E) in try body(buffer) }
        }
        return try result.get()
    }

    /// Whether both hold the same bytes, in time that depends only on the lengths.
    package func isEqual(to other: SecretBytes) -> Bool {
        ConstantTime.equal(storage, other.storage)
    }

    package var description: String { "<secret, \(storage.count) bytes, hidden>" }
    package var debugDescription: String { description }
}
