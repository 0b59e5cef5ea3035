import CKeyportSystem

/// The process's memory, as the C library manages it.
package enum Memory {
    /// Gives what the allocator holds free back to the system. After a large, short-lived piece of
    /// work made of many small allocations (a decoded 50 MB document), glibc keeps the freed memory
    /// in its heaps, where a long-running process such as keyportd would carry it as resident
    /// memory until it exits; this returns it.
    package static func releaseFreed() {
        _ = ckp_release_free_memory()
    }
}
