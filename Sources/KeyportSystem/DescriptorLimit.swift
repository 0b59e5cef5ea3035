#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How many descriptors this process may have open.
package enum DescriptorLimit {
    /// Raises the soft limit to the hard one (at most 2^20): a daemon whose every connection is a
    /// descriptor should not stop at the traditional 1 024 while the system allows more. `select`
    /// is not used anywhere here, so descriptors past 1 024 are safe. Returns the soft limit.
    @discardableResult
    package static func raise() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        let wanted = min(limit.rlim_max, 1 << 20)
        if limit.rlim_cur < wanted {
            limit.rlim_cur = wanted
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return Int(limit.rlim_cur)
    }
}
