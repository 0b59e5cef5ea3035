import Foundation
import KeyportErrors

/// How the sign-in page is shown.
public enum BrowserChoice: Sendable {
    /// The person's own browser (`$BROWSER`, then `xdg-open`), with its cookies: a shared session.
    /// Keyport does not own that browser, so closing it goes unnoticed; the timeout or `cancel()`
    /// ends such a wait.
    case shared(BrowserLauncher)
    /// A browser Keyport launches with a fresh profile and removes afterwards: an ephemeral session.
    case ephemeral(EphemeralBrowser)
}

/// Why a flow ended without a callback. Check ``code`` to tell the endings apart.
public struct FlowEnding: RecordedError {
    /// How the flow ended, as a stable name (`timed-out`). A struct of constants rather than an
    /// enum, so that a new code is not a breaking change for code that switches over them.
    public typealias Code = ErrorCodeOf<FlowEnding>

    /// The code, the message and the place, kept as all Keyport's errors keep them.
    public var record: ErrorRecord<Code>
    /// The timeout that passed, for `Code.timedOut`; `nil` for the other endings.
    public var timeout: Duration?

    /// An ending with `code`, the `message` a person reads and, for `Code.timedOut`, the
    /// `timeout` that passed; `file` and `line` record where it was made (``location``).
    public init(
        _ code: Code,
        _ message: String,
        timeout: Duration? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) {
        record = ErrorRecord(code, message, file: file, line: line)
        self.timeout = timeout
    }

    // The endings the flow itself reports, each with its message written once.
    static let cancelled = FlowEnding(.cancelled, "the sign-in was cancelled")
    static let browserClosed = FlowEnding(.browserClosed, "the browser was closed before the sign-in finished")

    static func timedOut(_ timeout: Duration) -> FlowEnding {
        FlowEnding(
            .timedOut,
            "no sign-in callback arrived within \(timeout.components.seconds) seconds",
            timeout: timeout
        )
    }

    static func failed(_ reason: String) -> FlowEnding { FlowEnding(.failed, reason) }
}

extension ErrorCodeOf<FlowEnding> {
    /// `cancel()` or the task's cancellation.
    public static let cancelled = Self(rawValue: "cancelled")
    /// No callback arrived within the timeout (``FlowEnding/timeout``).
    public static let timedOut = Self(rawValue: "timed-out")
    /// The browser Keyport launched exited before the callback arrived (the person closed it).
    public static let browserClosed = Self(rawValue: "browser-closed")
    /// The browser could not be started, or the callback channel failed; the message says how.
    public static let failed = Self(rawValue: "failed")
}

/// One web sign-in on Linux: show the page, wait for the callback, clean up. This is the engine
/// under `ASWebAuthenticationSession`; it knows nothing of Apple's API shapes.
public enum AuthenticationFlow {
    /// Opens `url` with `browser` and waits on `receiver` for the callback.
    ///
    /// - When no browser can be shown (no display, no `$BROWSER`), `presentURL` gets the URL and
    ///   the reason, and the wait goes on: the person can open the URL on another machine.
    /// - An ephemeral browser's exit ends the wait (`browserClosed`); after the callback, a
    ///   timeout or cancellation, that browser is asked to quit and its profile is removed.
    /// - The receiver is cancelled whatever the outcome, so its socket closes.
    public static func run(
        url: URL,
        receiver: any CallbackReceiver,
        browser: BrowserChoice,
        timeout: Duration?,
        presentURL: @escaping @Sendable (URL, String) -> Void
    ) async throws(FlowEnding) -> URL {
        defer { receiver.cancel() }
        switch browser {
        case .shared(let launcher):
            if case .showURL(let reason) = launcher.open(url) { presentURL(url, reason) }
            return try await wait(receiver, timeout: timeout, browser: nil)
        case .ephemeral(let ephemeral):
            let running: EphemeralBrowser.Running
            do {
                running = try ephemeral.launch(url)
            } catch {
                throw .failed("the browser \(ephemeral.command[0]) could not be started: \(error)")
            }
            let result: Result<URL, FlowEnding>
            do throws(FlowEnding) {
                result = .success(try await wait(receiver, timeout: timeout, browser: running))
            } catch {
                result = .failure(error)
            }
            await running.terminate()
            return try result.get()
        }
    }

    private enum Event: Sendable {
        case callback(URL)
        case browserExited
    }

    /// Waits for the first of: the callback, the browser's exit, the timeout, cancellation.
    private static func wait(
        _ receiver: any CallbackReceiver,
        timeout: Duration?,
        browser: EphemeralBrowser.Running?
    ) async throws(FlowEnding) -> URL {
        do {
            return try await withThrowingTaskGroup(of: Event.self) { group in
                group.addTask { .callback(try await receiver.waitForCallback(timeout: timeout)) }
                if let browser {
                    group.addTask {
                        await browser.waitForExit()
                        try Task.checkCancellation()  // waitForExit returns early when cancelled
                        return .browserExited
                    }
                }
                defer { group.cancelAll() }
                switch try await group.next()! {
                case .callback(let url): return url
                case .browserExited: throw FlowEnding.browserClosed
                }
            }
        } catch let ending as FlowEnding {
            throw ending
        } catch is CallbackTimedOut {
            throw .timedOut(timeout ?? .zero)
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .failed("waiting for the callback failed: \(error)")
        }
    }
}
