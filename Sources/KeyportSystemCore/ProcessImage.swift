#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// This process's program.
package enum ProcessImage {
    /// Replaces this process with `program` run with `arguments` (its `argv`, its name first) and
    /// the same environment, as `exec` does: a program that hands its work to another keeps its
    /// process id, its parent and its standard streams. Returns only when that failed, with why.
    package static func replace(with program: String, arguments: [String]) -> String {
        let argv = arguments.map { strdup($0) } + [nil]
        execv(program, argv)
        let reason = String(cString: strerror(errno))
        for word in argv { free(word) }
        return reason
    }
}
