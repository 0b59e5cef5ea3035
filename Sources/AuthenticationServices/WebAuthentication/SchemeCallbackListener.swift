import Foundation
import KeyportCallbacks
import KeyportSystem
import NIOCore
import NIOPosix
import Synchronization
import Varlink
import WebAuthentication

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Waits for a callback to a private-use URL scheme (`com.example.app:/callback?code=…`, RFC 8252
/// §7.1) that the desktop hands to Keyport's URL handler (a Linux addition: what
/// ``ASWebAuthenticationSession`` waits with for a custom-scheme callback).
///
/// When the browser follows such a redirect, the desktop starts the program registered for the
/// scheme (``SchemeRegistration``; `keyport url-scheme open URL`) as a new process, which hands
/// the URL over with ``SchemeCallbackDelivery/deliver(_:directory:)``. Everything travels by
/// Varlink (docs/protocol.md, "Custom-scheme callback hand-off"):
///
/// - Each listener serves `org.keyport.CallbackSession` on a socket of its own,
///   `<128 random bits in hex>.sock` (mode 0600), in a directory only this user can enter:
///   `$XDG_RUNTIME_DIR/keyport/callbacks`, or without XDG_RUNTIME_DIR
///   `$XDG_CACHE_HOME/keyport/run/callbacks` (`~/.cache/keyport/run/callbacks`). Its one method,
///   `Offer(url)`, answers whether the session took the URL.
/// - In the default directory, the listener also registers its socket and scheme with keyportd
///   (`org.keyport.Callbacks.Listen`), which routes each delivered URL to the sessions waiting
///   for its scheme. When keyportd is not running, the handler offers the URL to each socket in
///   the directory itself: any number of sessions in any number of processes wait at once either way.
///
/// A URL is accepted only when its scheme is the listener's (case-insensitive, as
/// ``CallbackMatcher/customScheme(_:)``) and `accept` agrees — the session uses `accept` to check
/// `state`, so a callback meant for another sign-in is refused and the wait goes on. The socket is
/// closed and its file removed when the wait ends: by the callback, ``cancel()``, a timeout, or the
/// listener being released.
public final class SchemeCallbackListener: CallbackReceiver {
    /// The scheme waited for, as given to ``start(scheme:directory:accept:)``.
    public let scheme: String
    /// The socket this listener waits on.
    public let socketPath: String
    /// The matcher for this listener's callbacks.
    public var matcher: CallbackMatcher { .customScheme(scheme) }

    private let outcome: ListenerOutcome

    /// Where listeners bind and the handler looks when no directory is given:
    /// `$XDG_RUNTIME_DIR/keyport/callbacks`, or `$XDG_CACHE_HOME/keyport/run/callbacks` (by default
    /// `~/.cache/keyport/run/callbacks`) when XDG_RUNTIME_DIR is unset: a per-user directory
    /// nobody else can create first, as they could a name in `/tmp`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        CallbackSocketDirectory.defaultURL(environment: environment)
    }

    /// Starts listening for callbacks to `scheme`.
    ///
    /// - Parameters:
    ///   - scheme: the private-use scheme, such as `com.example.app` (checked as
    ///     ``SchemeRegistration/validate(scheme:)`` does).
    ///   - directory: where to bind; `nil` for ``defaultDirectory(environment:)``, where the
    ///     listener also registers with keyportd when it runs. A directory given here is a private
    ///     hand-off between this listener and a ``SchemeCallbackDelivery/deliver(_:directory:)``
    ///     given the same directory; keyportd is not involved. Missing directories are created
    ///     with mode 0700.
    ///   - accept: whether a URL of the right scheme is the one awaited (say, its `state` is this
    ///     session's); the default accepts the first. Keep it quick: the handler waits for it.
    /// - Throws: ``SchemeCallbackError`` — `.invalidScheme`; `.unsafeDirectory` when the directory
    ///   (or the directory Keyport owns above the default one) belongs to another user or is open to
    ///   group or others; `.directoryUnavailable`; `.listenFailed` when the socket cannot be bound.
    public static func start(
        scheme: String,
        directory: URL? = nil,
        accept: @escaping @Sendable (URL) -> Bool = { _ in true }
    ) async throws -> SchemeCallbackListener {
        try await start(
            scheme: scheme,
            directory: directory,
            environment: ProcessInfo.processInfo.environment,
            accept: accept
        )
    }

    /// ``start(scheme:directory:accept:)`` with the default directory and keyportd's socket taken
    /// from `environment`.
    package static func start(
        scheme: String,
        directory: URL?,
        environment: [String: String],
        accept: @escaping @Sendable (URL) -> Bool
    ) async throws -> SchemeCallbackListener {
        _ = try SchemeRegistration.validate(scheme: scheme)
        let path: String
        do throws(CallbackHandOffError) {
            guard
                let socketDirectory = try CallbackSocketDirectory.prepare(
                    directory,
                    environment: environment,
                    create: true
                )
            else {
                throw CallbackHandOffError(.directoryUnavailable, "the callback socket directory could not be created")
            }
            path = try CallbackSocketDirectory.newSocketPath(in: socketDirectory)
        } catch {
            throw SchemeCallbackError(error)
        }
        let outcome = ListenerOutcome(promise: MultiThreadedEventLoopGroup.singleton.any().makePromise(of: URL.self))
        let matcher = CallbackMatcher.customScheme(scheme)
        let server = CallbackHandOff.sessionServer { url in
            matcher.matches(url) && accept(url) && outcome.claim()
        } accepted: { url in
            outcome.promise.succeed(url)
        }
        let (ready, readiness) = AsyncStream.makeStream(of: Void.self)
        let serving = Task {
            defer { readiness.finish() }
            do {
                try await server.serve(path: path) { readiness.yield() }
                outcome.finish(.failure(CancellationError()))
            } catch {
                outcome.finish(.failure(SchemeCallbackError(.listenFailed, "cannot listen on \(path): \(error)")))
            }
        }
        // Whatever ends the wait stops serving, which removes the socket file and closes it.
        // Registered before any waiter, so it runs before a waiter resumes.
        outcome.promise.futureResult.whenComplete { _ in
            unlink(path)
            serving.cancel()
        }
        var iterator = ready.makeAsyncIterator()
        guard await iterator.next() != nil else {
            // Serving ended before it began: the reason is the outcome's.
            do {
                _ = try await outcome.promise.futureResult.get()
            } catch let error as SchemeCallbackError {
                throw error
            } catch {}
            throw SchemeCallbackError(.listenFailed, "cannot listen on \(path)")
        }
        if directory == nil {
            await CallbackHandOff.register(scheme: scheme, socket: path, environment: environment, until: outcome)
        }
        return SchemeCallbackListener(scheme: scheme, socketPath: path, outcome: outcome)
    }

    private init(scheme: String, socketPath: String, outcome: ListenerOutcome) {
        self.scheme = scheme
        self.socketPath = socketPath
        self.outcome = outcome
    }

    deinit {
        // A listener nobody holds can never be waited on: stop listening and remove the socket.
        outcome.finish(.failure(CancellationError()))
    }

    /// Waits for the callback URL.
    ///
    /// - Parameter timeout: how long to wait; `nil` waits until a callback, ``cancel()`` or task
    ///   cancellation. When it passes, the listener stops listening.
    /// - Returns: the accepted URL, whole.
    /// - Throws: `CancellationError` after ``cancel()`` or when the task is cancelled;
    ///   ``CallbackTimedOut`` when `timeout` passes first.
    public func waitForCallback(timeout: Duration? = nil) async throws -> URL {
        let outcome = self.outcome
        let timer = timeout.map { timeout in
            outcome.promise.futureResult.eventLoop.scheduleTask(in: .nanoseconds(timeout.clampedNanoseconds)) {
                outcome.finish(.failure(CallbackTimedOut()))
            }
        }
        defer { timer?.cancel() }
        return try await withTaskCancellationHandler {
            try await outcome.promise.futureResult.get()
        } onCancel: {
            outcome.finish(.failure(CancellationError()))
        }
    }

    /// Stops waiting and listening, and removes the socket file. Idempotent; after a callback was
    /// accepted it changes nothing.
    public func cancel() {
        outcome.finish(.failure(CancellationError()))
    }
}

/// Hands a callback URL to the session waiting for it: what the program the desktop starts for a
/// registered scheme (`keyport url-scheme open URL`) does.
public enum SchemeCallbackDelivery {
    /// Offers `url` to the waiting sessions until one accepts it.
    ///
    /// With no `directory`, the URL goes to keyportd (`org.keyport.Callbacks.Deliver`), which
    /// offers it to the sessions waiting for its scheme; when keyportd is not running, it is
    /// offered to each socket in ``SchemeCallbackListener/defaultDirectory(environment:)`` here.
    /// With a `directory`, it is offered to each socket there, and keyportd is not involved.
    ///
    /// Sockets are tried one at a time. A socket file nobody listens on any more (its process
    /// died; connecting fails with ECONNREFUSED) is deleted and skipped; a file that is not this
    /// user's socket is skipped. A session that refuses — another scheme, another sign-in's
    /// `state` — is passed over; one that does not answer within 10 seconds too.
    ///
    /// - Parameters:
    ///   - url: the callback URL, at most 8192 bytes of UTF-8.
    ///   - directory: the socket directory of a private hand-off; `nil` for the system's. It is
    ///     never created here: when it does not exist nobody is waiting.
    /// - Returns: whether a waiting session accepted the URL. When false, the URL was not used.
    /// - Throws: ``SchemeCallbackError`` — `.urlTooLong`; `.unsafeDirectory` when the directory is
    ///   not private to this user (the URL is then not handed to anyone);
    ///   `.directoryUnavailable`.
    public static func deliver(_ url: URL, directory: URL? = nil) async throws -> Bool {
        try await deliver(url, directory: directory, environment: ProcessInfo.processInfo.environment)
    }

    /// ``deliver(_:directory:)`` with the default directory and keyportd's socket taken from
    /// `environment`.
    package static func deliver(_ url: URL, directory: URL?, environment: [String: String]) async throws -> Bool {
        do {
            return try await CallbackHandOff.deliver(url.absoluteString, directory: directory, environment: environment)
        } catch {
            throw SchemeCallbackError(error)
        }
    }
}

extension SchemeCallbackError {
    /// The hand-off's error, under the public code of the same name.
    init(_ error: CallbackHandOffError) {
        self.init(Code(rawValue: error.code.rawValue), error.message)
    }
}
