import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Waiting for files other processes write (a browser's event log, a pid a script records),
/// without polling: inotify reports each change in the directory, and only then is the
/// condition checked again.
package enum FileChanges {
    /// Returns `true` once `condition` holds, checking it now and after every change in
    /// `directory` (a file in it created, written, closed, moved or deleted), or `false` when
    /// `timeout` passes first.
    package static func waitUntil(
        within timeout: Duration,
        changesIn directory: URL,
        _ condition: () -> Bool
    ) async throws -> Bool {
        let watch = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard watch >= 0 else { throw failure("cannot watch \(directory.path)") }
        defer { close(watch) }
        // Watching starts before the first check, so a change between the two is not missed.
        let events = UInt32(
            IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_ATTRIB
        )
        guard inotify_add_watch(watch, directory.path, events) >= 0 else {
            throw failure("cannot watch \(directory.path)")
        }
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return false }
            await readable(watch, within: remaining)
            discardEvents(watch)
        }
        return true
    }

    /// Returns when `descriptor` has something to read or `timeout` has passed: a `poll` on a
    /// thread of its own, so no task's thread is held.
    private static func readable(_ descriptor: Int32, within timeout: Duration) async {
        let (seconds, attoseconds) = timeout.components
        let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                while poll(&entry, 1, milliseconds) < 0 && errno == EINTR {}
                continuation.resume()
            }
        }
    }

    /// Reads away the events waiting (which say what changed; the condition looks for itself).
    private static func discardEvents(_ descriptor: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while read(descriptor, &buffer, buffer.count) > 0 {}
    }

    private static func failure(_ what: String) -> SupportFailure {
        SupportFailure(description: "\(what): \(String(cString: strerror(errno)))")
    }
}
