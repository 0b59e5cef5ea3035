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

    /// Makes this process undumpable (`PR_SET_DUMPABLE` 0): no core dump, and none of the user's
    /// other processes without `CAP_SYS_PTRACE` can ptrace it or read its memory, environment or
    /// descriptors through `/proc` (the kernel gives those files to root). Programs it starts are
    /// dumpable again (exec resets it). Only for a process nobody needs to identify through
    /// `/proc`. `false` when the kernel refused.
    package static func makeUndumpable() -> Bool {
        ckp_make_undumpable() == 0
    }
}
