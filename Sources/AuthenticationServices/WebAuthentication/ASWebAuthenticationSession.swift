import Foundation
import Logging
import Synchronization
import WebAuthentication

/// What shows a web authentication session's browser. On Apple platforms this is a window; Linux
/// has no window to anchor the browser to, so an empty anchor does.
open class ASPresentationAnchor: NSObject {
    /// An anchor; Linux sessions never look at it.
    public override init() { super.init() }
}

/// Supplies the window a session's browser is shown over (Apple platforms). Linux sessions do not
/// need a provider and do not call it; code that sets one builds and runs unchanged.
public protocol ASWebAuthenticationPresentationContextProviding: NSObjectProtocol {
    /// The window to show the sign-in over; never called on Linux.
    @MainActor func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor
}

/// A session that signs a person in through a web service, with Apple's API, on Linux.
///
/// The sign-in page opens in the person's browser (`$BROWSER`, then `xdg-open`), or, with
/// ``prefersEphemeralWebBrowserSession``, in a browser Keyport launches with a profile made for
/// this sign-in and removed afterwards. The session ends when the callback arrives, on
/// ``cancel()``, when ``timeout`` passes, or when an ephemeral browser is closed; the completion
/// handler then runs exactly once, on a background thread (Linux has no main run loop to return
/// to), and the session keeps itself alive until it has.
///
/// Callbacks on Linux:
/// - ``Callback/customScheme(_:)``: the desktop starts `keyport url-scheme open URL` for the scheme
///   (register it with `keyport url-scheme register NAME`), which hands the URL to this session
///   through a per-user socket.
/// - ``Callback/loopback(_:)`` (Linux addition, RFC 8252 §7.3): open a ``LoopbackRedirect`` first,
///   put its ``LoopbackRedirect/url`` in the authorization URL, then start the session.
/// - ``Callback/https(host:path:)`` needs the browser to hand the page over to the app (Apple's
///   associated domains); Linux browsers cannot, so ``start()`` returns `false`.
///
/// When the authorization URL carries a `state` parameter, a callback is accepted only when it
/// returns the same state; any other is refused and the session keeps waiting, so a stray or
/// forged request cannot end it.
///
/// ``start()`` returns `false`, logs why and keeps the reason in ``startFailureReason`` when the
/// session cannot do what was asked: a second start, a cancelled session, a URL that is not http
/// or https, no callback, an https callback, ``additionalHeaderFields`` (Keyport cannot add headers
/// to a browser's request), or an ephemeral session without a browser that can run with a fresh
/// profile. The handler then never runs.
open class ASWebAuthenticationSession: NSObject, @unchecked Sendable {
    // @unchecked: an open class cannot be checked Sendable. Its mutable state is behind `phase`
    // (a Mutex) and `settingsLock`; the completion handler is called once, from the session's
    // task, as Apple's Objective-C class calls its block.

    /// The handler's type: the callback URL, or an ``ASWebAuthenticationSessionError``.
    public typealias CompletionHandler = (URL?, (any Error)?) -> Void

    /// Where the callback arrives, and whether a URL is it.
    public final class Callback: NSObject, Sendable {
        enum Kind: Sendable {
            case matcher(CallbackMatcher)
            case loopback(LoopbackRedirect)
        }

        let kind: Kind

        init(_ kind: Kind) {
            self.kind = kind
        }

        /// A callback to a private-use URL scheme such as `com.example.app`.
        public static func customScheme(_ customScheme: String) -> Callback {
            Callback(.matcher(.customScheme(customScheme)))
        }

        /// A callback to an https URL on `host` at `path`. Linux sessions cannot receive one; see
        /// ``ASWebAuthenticationSession``.
        public static func https(host: String, path: String) -> Callback {
            Callback(.matcher(.https(host: host, path: path)))
        }

        /// A callback to a loopback redirect opened beforehand (Linux addition).
        public static func loopback(_ redirect: LoopbackRedirect) -> Callback {
            Callback(.loopback(redirect))
        }

        /// Whether `url` is this callback: same scheme (custom scheme); same host and path, query
        /// and fragment ignored (https); same address, port and path (loopback).
        public func matchesURL(_ url: URL) -> Bool {
            matcher.matches(url)
        }

        /// The matching rule behind this callback, for the OAuth helpers of `WebAuthentication`
        /// (Linux addition).
        public var matcher: CallbackMatcher {
            switch kind {
            case .matcher(let matcher): matcher
            case .loopback(let redirect): redirect.receiver.matcher
            }
        }
    }

    /// A loopback redirect listening on `127.0.0.1` at a port the system chose (Linux addition).
    /// Open it before building the authorization URL, so the URL can name ``url`` as its
    /// `redirect_uri`; then pass it to a session with ``Callback/loopback(_:)``. A redirect serves
    /// one session; it closes when that session ends.
    public final class LoopbackRedirect: Sendable {
        let receiver: LoopbackReceiver
        /// The claiming session's callback filter, read by the receiver for each request.
        private let filter: FilterBox
        private let claimed = Mutex(false)

        private final class FilterBox: Sendable {
            let accept = Mutex<(@Sendable (URL) -> Bool)?>(nil)
        }

        /// `http://127.0.0.1:PORT/PATH`.
        public var url: URL { receiver.redirectURI }

        /// Starts listening. `path` is the redirect's path.
        public static func open(path: String = "/callback") async throws -> LoopbackRedirect {
            let filter = FilterBox()
            // Until a session claims the redirect, nothing is accepted.
            let receiver = try await LoopbackReceiver.start(path: path) { url in
                filter.accept.withLock { $0 }?(url) ?? false
            }
            return LoopbackRedirect(receiver: receiver, filter: filter)
        }

        private init(receiver: LoopbackReceiver, filter: FilterBox) {
            self.receiver = receiver
            self.filter = filter
        }

        /// Whether a session has taken this redirect.
        var isClaimed: Bool { claimed.withLock { $0 } }

        /// Binds the redirect to one session and its filter; `false` when another session has it.
        func claim(filter accept: @escaping @Sendable (URL) -> Bool) -> Bool {
            let isFirst = claimed.withLock { claimed in
                defer { claimed = true }
                return !claimed
            }
            if isFirst { filter.accept.withLock { $0 = accept } }
            return isFirst
        }

        /// Stops listening, for a redirect no session will use.
        public func close() {
            receiver.cancel()
        }
    }

    /// The browser an ephemeral session launches (Linux addition).
    public enum Browser: Sendable, Hashable {
        /// Shared sessions use `$BROWSER`, then `xdg-open`; ephemeral sessions the first of
        /// chromium, google-chrome and firefox found, given a fresh profile.
        case automatic
        /// This command, one word per element; `%s` stands for the URL and, for an ephemeral
        /// session, `%p` for the fresh profile directory (required: without it the browser would
        /// use the person's own profile). For a shared session the command replaces `$BROWSER`.
        case command([String])
    }

    private enum Phase {
        case idle
        case running(Task<Void, Never>)
        case finished
        case cancelledBeforeStart
    }

    private let url: URL
    private let callback: Callback?
    private nonisolated(unsafe) let completionHandler: CompletionHandler
    private let phase = Mutex(Phase.idle)
    // NSLock, not Mutex: Settings holds Apple's presentation-context provider, which is not
    // Sendable, and Mutex's `sending` rules refuse to hand such a value into its lock.
    private let settingsLock = NSLock()
    private var settingsStorage = Settings()
    private static let logger = Logger(label: "AuthenticationServices.ASWebAuthenticationSession")

    private func withSettings<T>(_ body: (inout Settings) -> T) -> T {
        settingsLock.withLock { body(&settingsStorage) }
    }

    private struct Settings {
        weak var presentationContextProvider: (any ASWebAuthenticationPresentationContextProviding)?
        var prefersEphemeralWebBrowserSession = false
        var additionalHeaderFields: [String: String]?
        var timeout: Duration?
        var browser = Browser.automatic
        var presentURL: (@Sendable (URL, String) -> Void)?
        var callbackRefused: (@Sendable () -> Void)?
        var startFailureReason: String?
    }

    /// A session for `url` whose callback uses `callbackURLScheme`.
    public convenience init(url URL: URL, callbackURLScheme: String?, completionHandler: @escaping CompletionHandler) {
        self.init(
            url: URL,
            callback: callbackURLScheme.map { Callback.customScheme($0) },
            completionHandler: completionHandler
        )
    }

    /// A session for `url` whose callback is `callback`.
    public convenience init(url URL: URL, callback: Callback, completionHandler: @escaping CompletionHandler) {
        self.init(url: URL, callback: Optional(callback), completionHandler: completionHandler)
    }

    private init(url: URL, callback: Callback?, completionHandler: @escaping CompletionHandler) {
        self.url = url
        self.callback = callback
        self.completionHandler = completionHandler
        super.init()
    }

    /// Supplies the window to show the browser over (Apple platforms); not needed on Linux.
    open weak var presentationContextProvider: (any ASWebAuthenticationPresentationContextProviding)? {
        get { withSettings { $0.presentationContextProvider } }
        set { withSettings { $0.presentationContextProvider = newValue } }
    }

    /// Use a browser with no cookies or other data from earlier browsing, keeping none afterwards.
    /// Read when the session starts.
    open var prefersEphemeralWebBrowserSession: Bool {
        get { withSettings { $0.prefersEphemeralWebBrowserSession } }
        set { withSettings { $0.prefersEphemeralWebBrowserSession = newValue } }
    }

    /// Headers for the first request. Linux browsers cannot be given any: a non-empty value makes
    /// ``start()`` return `false`.
    open var additionalHeaderFields: [String: String]? {
        get { withSettings { $0.additionalHeaderFields } }
        set { withSettings { $0.additionalHeaderFields = newValue } }
    }

    /// How long to wait for the callback; `nil` waits until ``cancel()`` (Linux addition). The
    /// session then ends with ``ASWebAuthenticationSessionError/Code/canceledLogin`` and the cause
    /// ``ASWebAuthenticationSessionError/Cause/timedOut``.
    open var timeout: Duration? {
        get { withSettings { $0.timeout } }
        set { withSettings { $0.timeout = newValue } }
    }

    /// Which browser to use (Linux addition).
    open var browser: Browser {
        get { withSettings { $0.browser } }
        set { withSettings { $0.browser = newValue } }
    }

    /// Called when no browser can be shown (no display, no `$BROWSER`), with the URL and the
    /// reason, so the person can open it elsewhere; the session keeps waiting. `nil` writes both to
    /// standard error (Linux addition).
    open var presentURL: (@Sendable (URL, String) -> Void)? {
        get { withSettings { $0.presentURL } }
        set { withSettings { $0.presentURL = newValue } }
    }

    /// Called each time a callback arrives that the session refuses because its `state` is not
    /// the one the session sent (a forged response, or one from an earlier attempt): the browser
    /// is told so and the session keeps waiting for the real one, so that a forged callback
    /// cannot end it. `nil` says nothing (Linux addition).
    open var callbackRefused: (@Sendable () -> Void)? {
        get { withSettings { $0.callbackRefused } }
        set { withSettings { $0.callbackRefused = newValue } }
    }

    /// Why the last ``start()`` returned `false` (Linux addition).
    public var startFailureReason: String? { withSettings { $0.startFailureReason } }

    /// Whether ``start()`` would succeed now, without starting.
    open var canStart: Bool {
        phase.withLock { phase in
            guard case .idle = phase else { return false }
            return true
        } && plan() != nil
    }

    /// Opens the browser and waits for the callback. Returns `false` (and the handler never runs)
    /// when the session cannot start; see ``ASWebAuthenticationSession`` for the reasons.
    @discardableResult
    open func start() -> Bool {
        let reason: String? = phase.withLock { phase in
            switch phase {
            case .idle: return nil
            case .running, .finished: return "the session was already started; a session starts once"
            case .cancelledBeforeStart: return "the session was cancelled"
            }
        }
        if let reason { return refuse(reason) }
        let plan: Plan
        switch makePlan() {
        case .success(let made): plan = made
        case .failure(let refusal): return refuse(refusal.reason)
        }
        if case .loopback(let redirect) = plan.receiver, !redirect.claim(filter: plan.filter) {
            return refuse("the loopback redirect is already used by another session")
        }
        return phase.withLock { phase in
            guard case .idle = phase else {
                // cancel() or another start() came in between.
                if case .loopback(let redirect) = plan.receiver { redirect.close() }
                return false
            }
            // The task holds the session until the handler has run.
            phase = .running(Task { await self.run(plan) })
            return true
        }
    }

    /// Ends the session. A running session's handler gets `canceledLogin`; a session not yet
    /// started will not start. Calling it again does nothing.
    open func cancel() {
        phase.withLock { phase in
            switch phase {
            case .idle: phase = .cancelledBeforeStart
            case .running(let task): task.cancel()
            case .finished, .cancelledBeforeStart: break
            }
        }
    }

    // MARK: Running

    private struct Plan: Sendable {
        enum Receiver: Sendable {
            case scheme(String)
            case loopback(LoopbackRedirect)
        }

        var receiver: Receiver
        var filter: @Sendable (URL) -> Bool
        var browser: BrowserChoice
        var timeout: Duration?
        var presentURL: @Sendable (URL, String) -> Void
    }

    private struct Refusal: Error {
        var reason: String
    }

    private func plan() -> Plan? {
        try? makePlan().get()
    }

    /// Everything `start()` checks, without side effects.
    private func makePlan() -> Result<Plan, Refusal> {
        let settings = withSettings { $0 }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            return .failure(
                Refusal(
                    reason: "the URL \(url.scheme.map { "\($0):…" } ?? "without a scheme") is not an http or https URL"
                )
            )
        }
        if let headers = settings.additionalHeaderFields, !headers.isEmpty {
            return .failure(
                Refusal(
                    reason:
                        "additionalHeaderFields cannot be sent: Keyport cannot add headers to a request made by a browser it does not control"
                )
            )
        }
        let receiver: Plan.Receiver
        switch callback?.kind {
        case nil:
            return .failure(Refusal(reason: "there is no callback to wait for (callbackURLScheme is nil)"))
        case .matcher(.customScheme(let name)):
            let lowered = name.lowercased()
            guard lowered != "http" && lowered != "https" && !lowered.isEmpty else {
                return .failure(
                    Refusal(
                        reason:
                            "a custom callback scheme cannot be \"\(name)\"; use .https(host:path:) or a private-use scheme"
                    )
                )
            }
            receiver = .scheme(name)
        case .matcher(.https):
            return .failure(
                Refusal(
                    reason:
                        "an https callback needs the browser to hand the page to this app, which Linux browsers cannot; use a custom scheme or a loopback redirect"
                )
            )
        case .matcher(.loopback):
            return .failure(
                Refusal(reason: "a loopback callback is made with Callback.loopback(_:) from an open LoopbackRedirect")
            )
        case .loopback(let redirect):
            guard !redirect.isClaimed else {
                return .failure(Refusal(reason: "the loopback redirect is already used by another session"))
            }
            receiver = .loopback(redirect)
        }
        var environment = ProcessInfo.processInfo.environment
        let browser: BrowserChoice
        switch (settings.prefersEphemeralWebBrowserSession, settings.browser) {
        case (false, .automatic):
            browser = .shared(BrowserLauncher(environment: environment))
        case (false, .command(let words)):
            environment["BROWSER"] = words.joined(separator: " ")
            browser = .shared(BrowserLauncher(environment: environment))
        case (true, let choice):
            let command: [String]? = if case .command(let words) = choice { words } else { nil }
            do {
                browser = .ephemeral(try EphemeralBrowser(command: command, environment: environment))
            } catch {
                return .failure(Refusal(reason: "an ephemeral session cannot be run: \(error)"))
            }
        }
        let presentURL =
            settings.presentURL ?? { url, reason in
                FileHandle.standardError.write(
                    Data("Open this address in a browser to sign in (\(reason)):\n\(url.absoluteString)\n".utf8)
                )
            }
        return .success(
            Plan(
                receiver: receiver,
                filter: { [matches = CallbackMatcher.stateFilter(for: url), refused = settings.callbackRefused] in
                    if matches($0) { return true }
                    refused?()
                    return false
                },
                browser: browser,
                timeout: settings.timeout,
                presentURL: presentURL
            )
        )
    }

    private func refuse(_ reason: String) -> Bool {
        withSettings { $0.startFailureReason = reason }
        Self.logger.error("ASWebAuthenticationSession cannot start: \(reason)")
        return false
    }

    private func run(_ plan: Plan) async {
        let outcome: Result<URL, ASWebAuthenticationSessionError>
        do {
            let receiver: any CallbackReceiver
            switch plan.receiver {
            case .loopback(let redirect):
                receiver = redirect.receiver
            case .scheme(let scheme):
                receiver = try await SchemeCallbackListener.start(scheme: scheme, accept: plan.filter)
            }
            outcome = .success(
                try await AuthenticationFlow.run(
                    url: url,
                    receiver: receiver,
                    browser: plan.browser,
                    timeout: plan.timeout,
                    presentURL: plan.presentURL
                )
            )
        } catch let ending as FlowEnding {
            outcome = .failure(Self.error(for: ending))
        } catch is CancellationError {
            outcome = .failure(ASWebAuthenticationSessionError(.canceledLogin, cause: .cancelled))
        } catch {
            outcome = .failure(
                ASWebAuthenticationSessionError(
                    .canceledLogin,
                    cause: .failed("the callback could not be received: \(error)")
                )
            )
        }
        if case .loopback(let redirect) = plan.receiver { redirect.close() }
        phase.withLock { $0 = .finished }
        switch outcome {
        case .success(let callbackURL): completionHandler(callbackURL, nil)
        case .failure(let error): completionHandler(nil, error)
        }
    }

    private static func error(for ending: FlowEnding) -> ASWebAuthenticationSessionError {
        switch ending.code {
        case .cancelled: ASWebAuthenticationSessionError(.canceledLogin, cause: .cancelled)
        case .timedOut: ASWebAuthenticationSessionError(.canceledLogin, cause: .timedOut)
        case .browserClosed: ASWebAuthenticationSessionError(.canceledLogin, cause: .browserClosed)
        // `.failed`, and any ending added later: its message says what happened.
        default: ASWebAuthenticationSessionError(.canceledLogin, cause: .failed(ending.message))
        }
    }
}
