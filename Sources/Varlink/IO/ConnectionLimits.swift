import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a server lets its peers hold: connections, and memory for messages that have not fully
/// arrived. Every connection is this user's, but any process of the user could otherwise take
/// every descriptor or gigabytes of memory and leave the person's own agent and commands without.
///
/// Limits are counted per process (the pinned peer), and what goes first when one is reached is
/// a connection with no call in progress — never an agent's `Serve`, nor a call a provider is
/// answering — the oldest first, so a new connection always gets in while another of the same
/// process (or, past the total, of the process with the most) sits idle.
package struct VarlinkConnectionLimits: Sendable {
    /// Connections one process may have open. Past it, that process's oldest connection with no
    /// call in progress is closed to make room; when all of them have calls, the new one is.
    package var perProcess: Int
    /// Connections in all. Past it, the oldest idle connection of the process with the most
    /// connections is closed (else the oldest idle one); when none is idle, the new one is.
    package var total: Int
    /// Bytes of unfinished messages one process may have buffered across all its connections;
    /// the connection whose message would pass it is closed.
    package var bufferedPerProcess: Int
    /// How long a message may take to arrive once its first byte has; then its connection is
    /// closed (a deadline: trickling bytes does not extend it).
    package var messageDeadline: Duration

    package init(perProcess: Int, total: Int, bufferedPerProcess: Int, messageDeadline: Duration) {
        self.perProcess = perProcess
        self.total = total
        self.bufferedPerProcess = bufferedPerProcess
        self.messageDeadline = messageDeadline
    }

    /// Limits for a server whose messages may be `maximumMessageSize` bytes: 64 connections a
    /// process, 4 096 in all (or fewer, to stay under the descriptors this process may open),
    /// one whole message's worth buffered a process, 30 seconds for a message to arrive.
    package static func standard(maximumMessageSize: Int) -> VarlinkConnectionLimits {
        var descriptors = rlimit()
        let available = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &descriptors) == 0 ? Int(descriptors.rlim_cur) : 1024
        return VarlinkConnectionLimits(
            perProcess: 64,
            total: max(16, min(4096, available - 64)),
            bufferedPerProcess: maximumMessageSize + (1 << 20),
            messageDeadline: .seconds(30)
        )
    }
}

/// The bytes of unfinished messages one process has buffered, against its budget.
final class BufferAccount: Sendable {
    private let used = Atomic<Int>(0)
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts `delta` more bytes (fewer when negative); `false`, counting nothing, when that
    /// would pass the limit.
    func add(_ delta: Int) -> Bool {
        guard delta > 0 else {
            used.subtract(-delta, ordering: .relaxed)
            return true
        }
        var current = used.load(ordering: .relaxed)
        while current + delta <= limit {
            let (exchanged, original) = used.compareExchange(
                expected: current,
                desired: current + delta,
                ordering: .relaxed
            )
            if exchanged { return true }
            current = original
        }
        return false
    }
}

/// What a connection's framing is held to: its process's buffer budget and the message deadline.
struct FramingLimits: Sendable {
    var account: BufferAccount
    var messageDeadline: TimeAmount
}

/// The open connections of one server, by process, and which are idle, to apply
/// ``VarlinkConnectionLimits``.
final class ConnectionTable: Sendable {
    private struct Entry {
        var process: pid_t
        var calls = 0
        /// Closes the connection (from any thread); the transport then removes it.
        var close: @Sendable () -> Void
    }

    private struct State {
        /// By connection number, which grows with age (connections are numbered as their set-up
        /// completes, which is nearly the order they were accepted in).
        var entries: [Int: Entry] = [:]
        var perProcess: [pid_t: Int] = [:]
        var accounts: [pid_t: BufferAccount] = [:]
    }

    let limits: VarlinkConnectionLimits
    private let state = Mutex(State())

    init(limits: VarlinkConnectionLimits) {
        self.limits = limits
    }

    /// The framing limits for a new connection of `process`.
    func framing(for process: pid_t) -> FramingLimits {
        let account = state.withLock { state in
            if let account = state.accounts[process] { return account }
            let account = BufferAccount(limit: limits.bufferedPerProcess)
            state.accounts[process] = account
            return account
        }
        return FramingLimits(
            account: account,
            messageDeadline: .nanoseconds(Int64(limits.messageDeadline / .nanoseconds(1)))
        )
    }

    /// Takes connection `id` in, closing what the limits say must go (possibly this one): `close`
    /// closes it, from any thread.
    func admit(_ id: Int, process: pid_t, close: @escaping @Sendable () -> Void) {
        let closing = state.withLock { state -> [@Sendable () -> Void] in
            state.entries[id] = Entry(process: process, close: close)
            state.perProcess[process, default: 0] += 1
            var closing: [Int] = []
            if state.perProcess[process, default: 0] > limits.perProcess {
                closing.append(Self.oldestIdle(in: state, of: process) ?? id)
            }
            if state.entries.count - closing.count > limits.total {
                let crowded = state.perProcess.max { $0.value < $1.value }?.key
                let victim =
                    crowded.flatMap { Self.oldestIdle(in: state, of: $0, except: closing) }
                    ?? Self.oldestIdle(in: state, of: nil, except: closing) ?? id
                if !closing.contains(victim) { closing.append(victim) }
            }
            return closing.compactMap { victim in Self.remove(victim, from: &state)?.close }
        }
        for close in closing { close() }
    }

    /// Whether connection `id` is still in: ``admit(_:process:close:)`` may have closed it at once.
    func isAdmitted(_ id: Int) -> Bool {
        state.withLock { $0.entries[id] != nil }
    }

    /// Connection `id` closed.
    func remove(_ id: Int) {
        state.withLock { state in _ = Self.remove(id, from: &state) }
    }

    /// A call began (`true`) or ended on connection `id`.
    func call(on id: Int, began: Bool) {
        state.withLock { state in state.entries[id]?.calls += began ? 1 : -1 }
    }

    private static func remove(_ id: Int, from state: inout State) -> Entry? {
        guard let entry = state.entries.removeValue(forKey: id) else { return nil }
        let left = state.perProcess[entry.process, default: 1] - 1
        if left == 0 {
            state.perProcess.removeValue(forKey: entry.process)
            state.accounts.removeValue(forKey: entry.process)
        } else {
            state.perProcess[entry.process] = left
        }
        return entry
    }

    /// The oldest connection with no call in progress, of `process` (or of any when `nil`).
    private static func oldestIdle(in state: State, of process: pid_t?, except: [Int] = []) -> Int? {
        state.entries.lazy.filter { id, entry in
            entry.calls == 0 && (process == nil || entry.process == process) && !except.contains(id)
        }.min { $0.key < $1.key }?.key
    }
}
