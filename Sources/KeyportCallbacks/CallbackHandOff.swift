import Foundation
import KeyportInterfaces
import KeyportSystem
import NIOCore
import Synchronization
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The custom-scheme callback hand-off on Varlink (docs/protocol.md, "Custom-scheme callback
/// hand-off"): a waiting session's `org.keyport.CallbackSession` server and its registration with
/// keyportd (`org.keyport.Callbacks.Listen`), and offering a URL to the sessions — what the
/// handler the desktop starts does, and keyportd, which routes URLs to the sessions registered
/// with it.
package enum CallbackHandOff {
    /// The longest URL handed over, in bytes of UTF-8.
    package static let maximumURLLength = 8192
    /// The largest message a session's socket reads: an `Offer` of the longest URL, JSON-escaped.
    package static let maximumMessageSize = 64 << 10
    /// How long a session has to answer an offer before it is passed over.
    package static let answerTime = Duration.seconds(10)
    /// How long a listener waits for keyportd to confirm its registration before waiting without.
    package static let registrationTime = Duration.seconds(5)

    /// A session's server: `take` decides whether the session takes an offered URL (called once
    /// per offer); `accepted` runs for a URL taken, once the offerer has been told.
    package static func sessionServer(
        take: @escaping @Sendable (URL) -> Bool,
        accepted: @escaping @Sendable (URL) -> Void
    ) -> VarlinkServer {
        VarlinkServer(
            info: VarlinkServiceInfo(
                vendor: "Keyport",
                product: "sign-in session",
                version: "1",
                url: "https://github.com/keyport/keyport"
            ),
            interfaces: [SessionServer(take: take, accepted: accepted)],
            maximumMessageSize: maximumMessageSize
        )
    }

    /// `org.keyport.CallbackSession`, served by a session.
    private struct SessionServer: CallbackSession.Server {
        let take: @Sendable (URL) -> Bool
        let accepted: @Sendable (URL) -> Void

        func offer(
            _ input: consuming CallbackSession.Offer.Parameters,
            request: VarlinkRequest
        ) -> CallbackSession.Offer.Reply {
            guard input.url.utf8.count <= maximumURLLength, let url = URL(string: input.url), take(url) else {
                return CallbackSession.Offer.Reply(accepted: false)
            }
            // The offerer hears the answer before the session resumes, so the handler can exit 0
            // even if the session's process ends right after.
            request.afterReply { accepted(url) }
            return CallbackSession.Offer.Reply(accepted: true)
        }
    }

    /// Registers a listener's socket with keyportd (`org.keyport.Callbacks.Listen`) and keeps the
    /// registration, on a connection of its own, until `outcome` is decided. Returns once keyportd
    /// confirmed it, or at once when keyportd is not running, or after ``registrationTime``: a
    /// session that is not registered is still found, by keyportd's look through the directory
    /// or by the handler's own when keyportd is not running.
    package static func register(
        scheme: String,
        socket: String,
        environment: [String: String],
        until outcome: ListenerOutcome
    ) async {
        let registered = Latch()
        let registration = Task {
            defer { registered.open() }
            _ = try? await DaemonClient.withConnection(environment: environment) { connection in
                try await connection.send(
                    VarlinkCall(
                        method: Callbacks.Listen.name,
                        parameters: RawJSON(encoding: Callbacks.Listen.Parameters(scheme: scheme, socket: socket)),
                        more: true
                    )
                )
                _ = try await connection.nextReply()
                registered.open()
                // keyportd replies again only as it stops; cancelling this task closes the
                // connection, which ends the registration.
                _ = try await connection.nextReply()
            }
        }
        outcome.promise.futureResult.whenComplete { _ in registration.cancel() }
        _ = await within(registrationTime) { await registered.wait() }
    }

    /// How a session answered an offer.
    package enum Answer: Sendable {
        /// It took the URL.
        case accepted
        /// Another scheme, another sign-in's `state`, or it has stopped waiting.
        case refused
        /// Nothing listens on the socket any more (its process died): the file can go.
        case stale
        /// It could not be reached, or did not answer in time.
        case unreachable
    }

    /// Offers `url` to the session serving `socket`.
    package static func offer(_ url: String, to socket: String) async -> Answer {
        let answer = await within(answerTime) { () -> Answer? in
            do {
                let reply = try await VarlinkConnection.withConnection(
                    path: socket,
                    maximumMessageSize: maximumMessageSize
                ) { connection in
                    try await connection.call(CallbackSession.Offer.self, .init(url: url))
                }
                return reply.accepted ? .accepted : .refused
            } catch let error as VarlinkConnectionError where error.isRefused {
                return .stale
            } catch {
                return .unreachable
            }
        }
        return answer ?? .unreachable
    }

    /// Hands `text` (a callback URL) to the waiting sessions until one accepts it: with no
    /// `directory`, to keyportd (`org.keyport.Callbacks.Deliver`), or, when keyportd is not
    /// running, to each socket in the default directory; with one, to each socket there.
    package static func deliver(
        _ text: String,
        directory: URL?,
        environment: [String: String]
    ) async throws(CallbackHandOffError) -> Bool {
        guard text.utf8.count <= maximumURLLength else {
            throw CallbackHandOffError(
                .urlTooLong,
                "the callback URL is \(text.utf8.count) bytes long; at most \(maximumURLLength) can be handed over"
            )
        }
        if directory == nil {
            do {
                try await DaemonClient.withConnection(environment: environment) { connection in
                    _ = try await connection.call(Callbacks.Deliver.self, .init(url: text))
                }
                return true
            } catch let error as VarlinkError where error.name == Callbacks.NoSession.name {
                return false
            } catch {
                // keyportd is not running, or went away mid-call: hand the URL over directly.
            }
        }
        return try await offerToEach(text, in: directory, environment: environment, skipping: [])
    }

    /// Offers `url` to each socket in `directory` (`nil`: the default one) but those in
    /// `skipping`, until one accepts it: the daemon-less hand-off, and keyportd's way to reach
    /// sessions that did not register with it.
    package static func offerToEach(
        _ url: String,
        in directory: URL?,
        environment: [String: String],
        skipping: Set<String>
    ) async throws(CallbackHandOffError) -> Bool {
        guard let directory = try CallbackSocketDirectory.prepare(directory, environment: environment, create: false)
        else {
            return false
        }
        for path in CallbackSocketDirectory.sockets(in: directory)
        where !skipping.contains(path) && UnixSocketPath.isOwnSocket(path) {
            switch await offer(url, to: path) {
            case .accepted: return true
            case .refused, .unreachable: continue
            case .stale: unlink(path)
            }
        }
        return false
    }
}

/// How the wait ends, decided once: by the first URL accepted, a cancellation or the timeout.
/// Connections are served on several event loops, so the decision is taken under a lock.
package final class ListenerOutcome: Sendable {
    package let promise: EventLoopPromise<URL>
    private let decided = Mutex(false)

    package init(promise: EventLoopPromise<URL>) {
        self.promise = promise
    }

    /// Takes the decision; true for the first caller only.
    package func claim() -> Bool {
        decided.withLock { decided in
            if decided { return false }
            decided = true
            return true
        }
    }

    /// Ends the wait with `result` unless it has ended already.
    package func finish(_ result: Result<URL, any Error>) {
        if claim() { promise.completeWith(result) }
    }
}
