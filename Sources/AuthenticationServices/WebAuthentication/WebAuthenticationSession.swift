import Foundation
import Synchronization

/// Signs a person in through a web service with one `await`, as SwiftUI's
/// `WebAuthenticationSession` does on Apple platforms.
///
/// ```swift
/// let callback = try await WebAuthenticationSession().authenticate(
///     using: authorizationURL, callbackURLScheme: "com.example.app", preferredBrowserSession: .ephemeral)
/// ```
///
/// SwiftUI hands this value out through the environment; Linux has no SwiftUI, so it is made with
/// ``init(timeout:browser:)``, whose parameters are the Linux additions of
/// ``ASWebAuthenticationSession``. Cancelling the awaiting task cancels the session. Errors are
/// ``ASWebAuthenticationSessionError``; when the session cannot start (see
/// ``ASWebAuthenticationSession``), the error is `canceledLogin` with a ``ASWebAuthenticationSessionError/Cause/failed(_:)``
/// cause that gives the reason.
public struct WebAuthenticationSession: Sendable {
    /// Which browser session the sign-in uses.
    public enum BrowserSession: Hashable, Sendable {
        /// No cookies or data from earlier browsing, none kept afterwards.
        case ephemeral
        /// The person's browser, signed in where they already are.
        case shared
    }

    /// How long to wait for the callback (Linux addition); `nil` waits until cancelled.
    public var timeout: Duration?
    /// Which browser to use (Linux addition).
    public var browser: ASWebAuthenticationSession.Browser
    /// Where the URL goes when no browser can be shown (Linux addition); `nil`: standard error.
    public var presentURL: (@Sendable (URL, String) -> Void)?
    /// Called when a callback with another `state` than the one sent is refused (the session keeps
    /// waiting); `nil`: nothing is said (Linux addition).
    public var callbackRefused: (@Sendable () -> Void)?

    /// A session value with the Linux settings (the defaults wait without a timeout in the
    /// person's usual browser, printing the URL to standard error when none can be shown).
    public init(
        timeout: Duration? = nil,
        browser: ASWebAuthenticationSession.Browser = .automatic,
        presentURL: (@Sendable (URL, String) -> Void)? = nil,
        callbackRefused: (@Sendable () -> Void)? = nil
    ) {
        self.timeout = timeout
        self.browser = browser
        self.presentURL = presentURL
        self.callbackRefused = callbackRefused
    }

    /// Signs in at `url` and returns the callback URL, which uses `callbackURLScheme`.
    public func authenticate(
        using url: URL,
        callbackURLScheme: String,
        preferredBrowserSession: BrowserSession? = nil
    ) async throws -> URL {
        try await authenticate(
            using: url,
            callback: .customScheme(callbackURLScheme),
            preferredBrowserSession: preferredBrowserSession,
            additionalHeaderFields: [:]
        )
    }

    /// Signs in at `url` and returns the callback URL that `callback` matches.
    public func authenticate(
        using url: URL,
        callback: ASWebAuthenticationSession.Callback,
        preferredBrowserSession: BrowserSession? = nil,
        additionalHeaderFields: [String: String]
    ) async throws -> URL {
        let box = SessionBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<URL, any Error>) in
                let session = ASWebAuthenticationSession(url: url, callback: callback) { url, error in
                    if let url {
                        continuation.resume(returning: url)
                    } else {
                        continuation.resume(throwing: error ?? ASWebAuthenticationSessionError(.canceledLogin))
                    }
                }
                session.prefersEphemeralWebBrowserSession = preferredBrowserSession == .ephemeral
                session.additionalHeaderFields = additionalHeaderFields
                session.timeout = timeout
                session.browser = browser
                session.presentURL = presentURL
                session.callbackRefused = callbackRefused
                guard box.set(session) else {
                    continuation.resume(throwing: ASWebAuthenticationSessionError(.canceledLogin, cause: .cancelled))
                    return
                }
                guard session.start() else {
                    let reason = session.startFailureReason ?? "the session did not start"
                    continuation.resume(
                        throwing: ASWebAuthenticationSessionError(.canceledLogin, cause: .failed(reason))
                    )
                    return
                }
            }
        } onCancel: {
            box.cancel()
        }
    }
}

/// Passes cancellation to a session that may not exist yet.
private final class SessionBox: Sendable {
    private struct State {
        var session: ASWebAuthenticationSession?
        var cancelled = false
    }

    private let state = Mutex(State())

    /// Stores the session; `false` when the task was already cancelled.
    func set(_ session: ASWebAuthenticationSession) -> Bool {
        state.withLock { state in
            state.session = session
            return !state.cancelled
        }
    }

    func cancel() {
        let session = state.withLock { state in
            state.cancelled = true
            return state.session
        }
        session?.cancel()
    }
}
