import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Wipe {
    /// Zeroes `data` with `explicit_bzero` and empties it: for secrets an API hands out as a
    /// `Data` of their own (`AES.GCM.open`'s plaintext), once they are copied into a
    /// ``SecretBytes``.
    ///
    /// Never for a `Data` that may share its maker's storage: swift-crypto's keys give their
    /// `rawRepresentation` as a `Data` over the key's own bytes, and zeroing it zeroes the key.
    package static func data(_ data: inout Data) {
        data.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            explicit_bzero(base, buffer.count)
        }
        data = Data()
    }
}
