import Foundation
import KeyportCallbacks
import KeyportDomains
import KeyportInterfaces
import KeyportSystem
import Logging
import Synchronization
import Varlink

/// `org.keyport.Callbacks`: routes sign-in callbacks to custom URL schemes to the sessions
/// waiting for them.
///
/// A session (AuthenticationServices' `SchemeCallbackListener` in the default directory) serves
/// `org.keyport.CallbackSession` on its own socket and registers it here with `Listen`, for as
/// long as its connection stays open. `Deliver` — what the handler the desktop starts for the
/// scheme calls — offers the URL to the sessions registered for its scheme, the most recent
/// first, then to any other socket in the callback directory (a session that began waiting
/// before keyportd did), until one takes it. A URL that names a scheme nobody waits for reaches
/// no session at all.
package final class CallbacksService: Callbacks.Server {
    private struct Session {
        var scheme: String
        var socket: String
    }

    private struct State {
        var sessions: [Int: Session] = [:]
        var nextSession = 0
    }

    private let state = Mutex(State())
    /// Opened when keyportd stops: every `Listen` call returns.
    private let stopping = Latch()
    private let environment: [String: String]
    private let logger: Logger

    /// `environment` places the callback directory, as it does for the sessions and the handler.
    package init(environment: [String: String], logger: Logger) {
        self.environment = environment
        self.logger = logger
    }

    /// `Listen(scheme, socket)`, with `more`: registers the session until its connection closes.
    package func listen(
        _ input: consuming Callbacks.Listen.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> Callbacks.Listen.Reply {
        guard request.call.more else { throw VarlinkError.expectedMore(request.call.method) }
        let scheme: String
        switch PrivateURLScheme.check(input.scheme) {
        case .success(let valid): scheme = valid
        case .failure(let problem): throw invalid(problem.description)
        }
        guard input.socket.hasPrefix("/"), UnixSocketPath.isOwnSocket(input.socket) else {
            throw invalid("\(input.socket) is not a socket of this user's (an absolute path)")
        }
        let id = state.withLock { state in
            state.nextSession += 1
            state.sessions[state.nextSession] = Session(scheme: scheme, socket: input.socket)
            return state.nextSession
        }
        defer { _ = state.withLock { $0.sessions.removeValue(forKey: id) } }
        try await request.send(Callbacks.Listen.Reply())
        // Until the session closes its connection (the server cancels this call then, which
        // ends the wait early) or keyportd stops.
        await stopping.wait()
        return .init()
    }

    /// `Deliver(url)`: offers the URL to the waiting sessions until one takes it.
    package func deliver(
        _ input: consuming Callbacks.Deliver.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> Callbacks.Deliver.Reply {
        let text = input.url
        // The definition's bound, which sessions hold to as well: a longer URL reaches none.
        guard text.utf8.count <= CallbackHandOff.maximumURLLength else {
            throw invalid(
                "the callback URL is \(text.utf8.count) bytes long; at most \(CallbackHandOff.maximumURLLength) are handed over"
            )
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            throw invalid("the callback is not a URL with a scheme")
        }
        let (registered, all) = state.withLock { state in
            let ordered = state.sessions.sorted { $0.key > $1.key }.map(\.value)
            return (ordered.filter { $0.scheme == scheme }.map(\.socket), Set(ordered.map(\.socket)))
        }
        for socket in registered where await CallbackHandOff.offer(text, to: socket) == .accepted {
            logger.info("callback handed over", metadata: ["scheme": "\(scheme)", "session": "registered"])
            return .init()
        }
        let unregistered: Bool
        do {
            unregistered = try await CallbackHandOff.offerToEach(
                text,
                in: nil,
                environment: environment,
                skipping: all
            )
        } catch {
            throw invalid("the callback directory cannot be used: \(error)")
        }
        if unregistered {
            logger.info("callback handed over", metadata: ["scheme": "\(scheme)", "session": "unregistered"])
            return .init()
        }
        // The query (authorization code) and fragment stay out of messages and logs.
        throw VarlinkError(
            Callbacks.NoSession(message: "no sign-in session is waiting for this \(scheme): URL; it was not used")
        )
    }

    /// keyportd is stopping: every `Listen` call ends, so the sessions know to be found without it.
    package func shutDown() {
        stopping.open()
    }

    private func invalid(_ message: String) -> VarlinkError {
        VarlinkError(Callbacks.InvalidCallback(message: message))
    }
}
