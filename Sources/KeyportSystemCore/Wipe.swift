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
