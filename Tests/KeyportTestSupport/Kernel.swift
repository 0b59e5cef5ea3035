#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The running kernel, for tests whose expectations depend on what it has.
package enum Kernel {
    /// Whether the kernel's release is `major.minor` or later.
    package static func isAtLeast(_ major: Int, _ minor: Int) -> Bool {
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let numbers = release.split(separator: ".").prefix(2).map { Int($0.prefix { $0.isNumber }) ?? 0 }
        return !numbers.lexicographicallyPrecedes([major, minor])
    }
}

/// Pipes, as tests use them to see whether another side closed a descriptor it was sent.
package enum Pipes {
    /// Whether every reading end of the pipe whose writing end is `descriptor` is closed (in every
    /// process): its writing end then polls as an error.
    package static func nobodyReads(_ descriptor: Int32) -> Bool {
        var event = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        return poll(&event, 1, 0) == 1 && event.revents & Int16(POLLERR) != 0
    }
}
