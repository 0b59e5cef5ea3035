import Foundation
import Synchronization

extension ChildProcess {
    /// What a child with captured streams has written so far, and a way to wait for what it has
    /// not written yet.
    package final class Output: Sendable {
        package enum Stream: Sendable {
            case standardOutput, standardError
        }

        /// A task waiting for something to be written.
        private struct Waiter {
            /// Resumes the task with what it waits for if that has been written; whether it did.
            var resumeIfWritten: @Sendable (_ standardOutput: Data, _ standardError: Data) -> Bool
            /// Resumes the task with nothing: the streams closed, or the task was cancelled.
            var resumeEmpty: @Sendable () -> Void
        }

        private struct State {
            var standardOutput = Data()
            var standardError = Data()
            var isClosed = false
            var nextWaiter = 0
            var waiters: [Int: Waiter] = [:]
        }

        private let state = Mutex(State())

        init() {}

        /// Everything written to standard output so far.
        package var standardOutput: Data { state.withLock { $0.standardOutput } }

        /// Everything written to standard error so far.
        package var standardError: Data { state.withLock { $0.standardError } }

        /// Whether both streams are at their end: the child and everything it started that
        /// inherited them have closed them (usually by exiting).
        package var isClosed: Bool { state.withLock { $0.isClosed } }

        /// The first value `find` reads from what has been written so far (tried now and after each
        /// new piece), or `nil` once both streams are closed without one, or early when the waiting
        /// task is cancelled. Nothing is polled.
        package func wait<Value: Sendable>(
            for find: @escaping @Sendable (_ standardOutput: Data, _ standardError: Data) -> Value?
        ) async -> Value? {
            let id = state.withLock { state in
                state.nextWaiter += 1
                return state.nextWaiter
            }
            return await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
                    // Tried and registered under the lock that `append`, `close` and the
                    // cancellation handler take, so nothing that happens meanwhile is missed; a
                    // waiter is resumed once, by whoever removes it (or finds it never registered).
                    let waiter = Waiter(
                        resumeIfWritten: { standardOutput, standardError in
                            guard let value = find(standardOutput, standardError) else { return false }
                            continuation.resume(returning: value)
                            return true
                        },
                        resumeEmpty: { continuation.resume(returning: nil) }
                    )
                    state.withLock { state in
                        if waiter.resumeIfWritten(state.standardOutput, state.standardError) { return }
                        if state.isClosed || Task.isCancelled {
                            waiter.resumeEmpty()
                            return
                        }
                        state.waiters[id] = waiter
                    }
                }
            } onCancel: {
                state.withLock { $0.waiters.removeValue(forKey: id) }?.resumeEmpty()
            }
        }

        /// Returns once both streams are closed, or early when the waiting task is cancelled.
        package func waitForEnd() async {
            _ = await wait { _, _ -> Bool? in nil }
        }

        func append(_ data: Data, to stream: Stream) {
            state.withLock { state in
                switch stream {
                case .standardOutput: state.standardOutput.append(data)
                case .standardError: state.standardError.append(data)
                }
                for (id, waiter) in state.waiters
                where waiter.resumeIfWritten(state.standardOutput, state.standardError) {
                    state.waiters[id] = nil
                }
            }
        }

        func close() {
            let waiters = state.withLock { state -> [Waiter] in
                state.isClosed = true
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.resumeEmpty() }
        }
    }
}
