import AuthenticationServices
import Foundation
import KeyportTestSupport
import Synchronization
import Testing
import WebAuthentication

/// ASWebAuthenticationSession end to end: a real authorization server (Authlib), real headless
/// chromium driven as the person (Selenium), real loopback HTTP, real token exchange.
@Suite("ASWebAuthenticationSession with chromium and an Authlib server", .serialized)
struct WebAuthenticationSessionE2ETests {
    let server: AuthorizationServer
    let configuration: OpenIDConfiguration
    let browsers: BrowserPeer

    init() async throws {
        server = try await AuthorizationServer()
        configuration = try await OAuthClient().discover(issuer: server.issuer)
        browsers = try await BrowserPeer()
    }

    /// A loopback redirect and an authorization request that names it.
    func prepare(
        scopes: [String] = ["openid", "profile"]
    ) async throws -> (ASWebAuthenticationSession.LoopbackRedirect, AuthorizationRequest) {
        let redirect = try await ASWebAuthenticationSession.LoopbackRedirect.open()
        let request = AuthorizationRequest(
            authorizationEndpoint: configuration.authorizationEndpoint,
            clientID: AuthorizationServer.clientID,
            redirectURI: redirect.url,
            scopes: scopes
        )
        return (redirect, request)
    }

    /// Starts `session` (configured by `configure`) and returns what its handler got.
    func run(
        _ url: URL,
        callback: ASWebAuthenticationSession.Callback,
        configure: (ASWebAuthenticationSession) -> Void = { _ in },
        whileRunning: @escaping @Sendable (ASWebAuthenticationSession) async throws -> Void = { _ in }
    ) async throws -> Result<URL, ASWebAuthenticationSessionError> {
        let calls = Mutex(0)
        let result: Result<URL, ASWebAuthenticationSessionError> = await withCheckedContinuation { continuation in
            let session = ASWebAuthenticationSession(url: url, callback: callback) { url, error in
                calls.withLock { $0 += 1 }
                if let url {
                    continuation.resume(returning: .success(url))
                } else {
                    continuation.resume(returning: .failure(error as! ASWebAuthenticationSessionError))
                }
            }
            // No test waits forever: a session the test did not time itself ends after two
            // minutes with `timedOut`, which fails the test that expected a callback.
            session.timeout = .seconds(120)
            configure(session)
            #expect(session.start(), "start() refused: \(session.startFailureReason ?? "")")
            Task {
                do {
                    try await whileRunning(session)
                } catch {
                    Issue.record(error, "while the session ran")
                }
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(calls.withLock { $0 } == 1, "the completion handler must run exactly once")
        return result
    }

    func browser(_ action: String, profile: String? = nil) -> ASWebAuthenticationSession.Browser {
        .command(browsers.command(action: action, profile: profile))
    }

    @Test("happy path: sign in with the login form, redeem the code, check the ID token")
    func happyPath() async throws {
        let (redirect, request) = try await prepare()
        let result = try await run(request.url, callback: .loopback(redirect)) { $0.browser = browser("approve") }
        let callbackURL = try result.get()
        let code = try request.authorizationCode(
            from: callbackURL,
            matching: .loopback(host: "127.0.0.1", port: redirect.url.port!, path: "/callback"),
            expectedIssuer: configuration.issuer
        )
        let token = try await OAuthClient().redeem(code, for: request, at: configuration.tokenEndpoint)
        #expect(token.tokenType == "Bearer")
        let idToken = try #require(token.idToken)
        try IDTokenClaims(token: idToken).check(
            issuer: configuration.issuer,
            clientID: AuthorizationServer.clientID,
            nonce: request.nonce
        )
        #expect(!token.description.contains(token.accessToken.rawValue))
        #expect(try await server.stats()["tokens_issued"] == 1)
        // The person saw the login form (the browser logs the loopback page later, after quitting).
        let events = browsers.events.compactMap { $0["event"] as? String }
        #expect(events.contains("login_form"))
    }

    @Test("the person declines: the callback carries access_denied, read as a typed error")
    func declined() async throws {
        let (redirect, request) = try await prepare()
        let callbackURL = try await run(request.url, callback: .loopback(redirect)) { $0.browser = browser("deny") }
            .get()
        #expect(throws: OAuthError.self) {
            try request.authorizationCode(
                from: callbackURL,
                matching: .loopback(host: "127.0.0.1", port: redirect.url.port!, path: "/callback")
            )
        }
        do {
            _ = try request.authorizationCode(
                from: callbackURL,
                matching: .loopback(host: "127.0.0.1", port: redirect.url.port!, path: "/callback")
            )
        } catch {
            #expect(error.code == .accessDenied)
        }
    }

    @Test("a wrong PKCE verifier is refused by the server (invalid_grant)")
    func wrongVerifier() async throws {
        let (redirect, request) = try await prepare()
        let callbackURL = try await run(request.url, callback: .loopback(redirect)) { $0.browser = browser("approve") }
            .get()
        let matcher = CallbackMatcher.loopback(host: "127.0.0.1", port: redirect.url.port!, path: "/callback")
        let code = try request.authorizationCode(from: callbackURL, matching: matcher)
        var forged = request
        forged.pkce = PKCE()
        do {
            _ = try await OAuthClient().redeem(code, for: forged, at: configuration.tokenEndpoint)
            Issue.record("the server accepted a wrong verifier")
        } catch {
            #expect(error.code == .server)
            #expect(error.serverError == "invalid_grant")
        }
        #expect(try await server.stats()["token_errors"] == 1)
    }

    @Test("stray requests (favicon, wrong path, wrong state) are refused and the session keeps waiting")
    func strays() async throws {
        let (redirect, request) = try await prepare()
        let state = request.state.rawValue
        let result = try await run(
            request.url,
            callback: .loopback(redirect),
            configure: { $0.browser = browser("ignore") },
            whileRunning: { _ async throws in
                let base = redirect.url.absoluteString
                #expect(try await httpGet(URL(string: "http://127.0.0.1:\(redirect.url.port!)/favicon.ico")!) == 404)
                #expect(
                    try await httpGet(
                        URL(string: "http://127.0.0.1:\(redirect.url.port!)/other?code=x&state=\(state)")!
                    )
                        == 404
                )
                #expect(try await httpGet(URL(string: "\(base)?code=forged&state=not-the-state")!) == 400)
                #expect(try await httpGet(URL(string: "\(base)?code=forged")!) == 400)
                #expect(try await httpGet(URL(string: "\(base)?code=right&state=\(state)")!) == 200)
            }
        )
        browsers.stop()
        let url = try result.get()
        #expect(parameter("code", in: url) == "right")
    }

    @Test("timeout: no callback in time ends in canceledLogin, cause timedOut")
    func timeout() async throws {
        let (redirect, request) = try await prepare()
        let result = try await run(request.url, callback: .loopback(redirect)) {
            $0.browser = browser("ignore")
            $0.timeout = .seconds(2)
        }
        browsers.stop()
        #expect(throws: ASWebAuthenticationSessionError(.canceledLogin, cause: .timedOut)) { try result.get() }
        // The receiver has closed: the redirect port no longer answers.
        await #expect(throws: (any Error).self) { _ = try await httpGet(redirect.url) }
    }

    @Test("cancel() while waiting: canceledLogin once; cancel again and start again do nothing")
    func cancelWhileWaiting() async throws {
        let (redirect, request) = try await prepare()
        let result = try await run(
            request.url,
            callback: .loopback(redirect),
            configure: { $0.browser = browser("ignore") },
            whileRunning: { session in
                try? await Task.sleep(for: .seconds(1))
                session.cancel()
                session.cancel()
                #expect(!session.start())
            }
        )
        browsers.stop()
        #expect(throws: ASWebAuthenticationSessionError(.canceledLogin, cause: .cancelled)) { try result.get() }
    }

    @Test("a second start() is refused while the first runs, and the handler runs once")
    func secondStart() async throws {
        let (redirect, request) = try await prepare()
        let result = try await run(
            request.url,
            callback: .loopback(redirect),
            configure: { $0.browser = browser("approve") },
            whileRunning: { session in
                #expect(!session.start())
                #expect(!session.canStart)
                #expect(session.startFailureReason?.contains("already started") == true)
            }
        )
        _ = try result.get()
    }

    @Test("ephemeral sessions do not reuse the shared session's cookies; shared ones do")
    func ephemeralVersusShared() async throws {
        let profile = try TemporaryDirectory("keyport-shared-profile")
        defer { profile.remove() }
        for _ in 0..<2 {
            let (redirect, request) = try await prepare()
            _ = try await run(request.url, callback: .loopback(redirect)) {
                $0.browser = browser("approve", profile: profile.path)
            }.get()
        }
        // The second shared sign-in found the cookie: one password sign-in for two sessions.
        #expect(try await server.stats()["logins"] == 1)

        let (redirect, request) = try await prepare()
        _ = try await run(request.url, callback: .loopback(redirect)) {
            $0.prefersEphemeralWebBrowserSession = true
            $0.browser = browser("approve", profile: "%p")
        }.get()
        // The ephemeral browser had no cookie: the person signed in again.
        #expect(try await server.stats()["logins"] == 2)
        let events = browsers.events.compactMap { $0["event"] as? String }
        #expect(events.filter { $0 == "login_form" }.count == 2 && events.filter { $0 == "consent_page" }.count == 1)
    }

    @Test("the ephemeral browser closed before the callback: canceledLogin, cause browserClosed")
    func ephemeralClosed() async throws {
        let (redirect, request) = try await prepare()
        let result = try await run(request.url, callback: .loopback(redirect)) {
            $0.prefersEphemeralWebBrowserSession = true
            $0.browser = browser("close", profile: "%p")
        }
        #expect(throws: ASWebAuthenticationSessionError(.canceledLogin, cause: .browserClosed)) { try result.get() }
    }

    @Test("async authenticate: ephemeral sign-in returns the callback; task cancellation cancels")
    func asyncAuthenticate() async throws {
        let (redirect, request) = try await prepare()
        let session = WebAuthenticationSession(timeout: .seconds(60), browser: browser("approve", profile: "%p"))
        let url = try await session.authenticate(
            using: request.url,
            callback: .loopback(redirect),
            preferredBrowserSession: .ephemeral,
            additionalHeaderFields: [:]
        )
        #expect(parameter("state", in: url) == request.state.rawValue)

        let (second, secondRequest) = try await prepare()
        let waiting = WebAuthenticationSession(browser: browser("ignore"))
        let task = Task {
            try await waiting.authenticate(
                using: secondRequest.url,
                callback: .loopback(second),
                additionalHeaderFields: [:]
            )
        }
        try await Task.sleep(for: .seconds(1))
        task.cancel()
        await #expect(throws: ASWebAuthenticationSessionError(.canceledLogin, cause: .cancelled)) {
            try await task.value
        }
        browsers.stop()
    }
}

func parameter(_ name: String, in url: URL) -> String? {
    URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == name }?.value
}
