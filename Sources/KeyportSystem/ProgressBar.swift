#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How far something long has gone (an import, an export), as a bar on standard error redrawn
/// in place, at most ten times a second. There is none when standard error is not a terminal: a
/// pipe or a log gets only the outcome, never a stream of carriage returns.
///
/// Used from one task at a time; ``finish()`` clears the line, so that what is printed next
/// starts on a clean one.
package final class ProgressBar {
    private let label: String
    private var total: Int?
    private let descriptor: Int32
    private var drawn: ContinuousClock.Instant?
    private static let width = 30

    /// A bar that says `label` (text the caller made safe to show), for `total` steps, or with no
    /// bar yet when the total is not known; `nil` when `descriptor` is not a terminal.
    package init?(_ label: String, total: Int? = nil, descriptor: Int32 = STDERR_FILENO) {
        guard isatty(descriptor) == 1 else { return nil }
        self.label = label
        self.total = total
        self.descriptor = descriptor
        draw(0)
    }

    /// `done` of the total steps have been taken (the total may be learnt on the way).
    package func update(_ done: Int, of total: Int? = nil) {
        if let total { self.total = total }
        let now = ContinuousClock.now
        if let drawn, now - drawn < .milliseconds(100), done < (self.total ?? .max) { return }
        draw(done)
    }

    /// Clears the bar's line.
    package func finish() {
        put("\r\u{1B}[K")
    }

    private func draw(_ done: Int) {
        drawn = .now
        guard let total, total > 0 else {
            put("\r\(label)…\u{1B}[K")
            return
        }
        let shown = min(max(done, 0), total)
        let filled = shown * Self.width / total
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: Self.width - filled)
        put("\r\(label) [\(bar)] \(shown)/\(total) \(shown * 100 / total)%\u{1B}[K")
    }

    private func put(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }  // a bar is not worth failing for
            bytes = bytes.dropFirst(count)
        }
    }
}
