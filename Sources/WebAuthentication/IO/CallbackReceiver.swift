import Foundation

/// Something a web-authentication session waits on for its callback URL: the loopback receiver
/// (``LoopbackReceiver``, an `http://127.0.0.1` redirect) or the custom-scheme listener
/// (``SchemeCallbackListener``, a `com.example.app:` redirect handed over by the desktop's URL
/// handler). A session holds either as `any CallbackReceiver` and treats both alike.
///
/// Both accept exactly one callback, keep waiting after a URL their `accept` check refuses, and
/// stop listening once the wait ends — by a callback, ``cancel()`` or a timeout.
public protocol CallbackReceiver: Sendable {
    /// Waits for the callback URL.
    ///
    /// - Parameter timeout: how long to wait; `nil` waits until a callback arrives or the wait is
    ///   cancelled.
    /// - Returns: the whole callback URL, query included.
    /// - Throws: `CancellationError` after ``cancel()`` or when the waiting task is cancelled;
    ///   ``CallbackTimedOut`` when `timeout` passes first.
    func waitForCallback(timeout: Duration?) async throws -> URL

    /// Stops waiting and stops listening. Idempotent; does nothing once a callback was accepted.
    func cancel()
}

/// The wait for a callback ended because its timeout passed. Both receivers throw this one type
/// (it is declared as `LoopbackReceiver.TimedOut`, where it first appeared).
public typealias CallbackTimedOut = LoopbackReceiver.TimedOut

extension LoopbackReceiver: CallbackReceiver {}

extension Duration {
    /// This duration as a NIO time amount, clamped to what `TimeAmount` can hold (a negative
    /// duration is zero), so no timeout a caller passes can overflow.
    package var clampedNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        if seconds < 0 { return 0 }
        if seconds >= Int64.max / 1_000_000_000 - 1 { return Int64.max }
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
