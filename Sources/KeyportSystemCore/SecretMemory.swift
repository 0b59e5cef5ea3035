#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Keeps the memory that holds a secret out of core dumps and, where the process may lock memory,
/// out of swap.
///
/// For processes that must stay dumpable because keyportd identifies them through `/proc` (the
/// person's agent, a provider and the processes that act for it: an undumpable process's `/proc/PID/exe` is
/// root's to read): the pages holding their secrets are marked `MADV_DONTDUMP` and locked with
/// `mlock` (best effort: `RLIMIT_MEMLOCK` may refuse, and then they are only left out of dumps).
/// Whole pages are marked, so the objects beside a secret are left out too; the marks stay when
/// the secret is freed and its memory reused.
package enum SecretMemory {
    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Marks the pages under `buffer`.
    package static func protect(_ buffer: UnsafeRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        let start = Int(bitPattern: base) & ~(pageSize - 1)
        let end = (Int(bitPattern: base) + buffer.count + pageSize - 1) & ~(pageSize - 1)
        guard let pages = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(pages, end - start, MADV_DONTDUMP)
        _ = mlock(pages, end - start)
    }

    /// Marks the pages under `bytes`' storage, which must not grow afterwards (a new buffer would
    /// not be marked).
    package static func protect(_ bytes: inout [UInt8]) {
        bytes.withUnsafeBytes { protect($0) }
    }
}
