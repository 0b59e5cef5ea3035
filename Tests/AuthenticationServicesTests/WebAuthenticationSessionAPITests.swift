import AuthenticationServices
import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Apple's rules for ASWebAuthenticationSession that need no browser: when start() refuses, the
/// callback matching rules, cancellation before start, and the error's Apple shape.
@Suite("ASWebAuthenticationSession API rules")
struct WebAuthenticationSessionAPITests {
    let url = URL(string: "https://auth.example/authorize?client_id=app&state=abc")!

    /// A session whose handler records calls; the handler must never run when start() refuses.
    final class Recorder: Sendable {
        let calls = Mutex(0)
        var handler: ASWebAuthenticationSession.CompletionHandler { { _, _ in self.calls.withLock { $0 += 1 } } }
    }

    func refused(_ session: ASWebAuthenticationSession, because words: String, recorder: Recorder) {
        #expect(!session.canStart)
        #expect(!session.start())
        #expect(session.startFailureReason?.contains(words) == true, "reason: \(session.startFailureReason ?? "nil")")
        #expect(recorder.calls.withLock { $0 } == 0)
    }

    @Test("start() refuses an https callback, naming why Linux cannot honour it")
    func httpsCallback() {
        let recorder = Recorder()
        let session = ASWebAuthenticationSession(
            url: url,
            callback: .https(host: "app.example", path: "/done"),
            completionHandler: recorder.handler
        )
        refused(session, because: "https callback", recorder: recorder)
    }

    @Test("start() refuses additionalHeaderFields, which a browser cannot be given")
    func headers() {
        let recorder = Recorder()
        let session = ASWebAuthenticationSession(
            url: url,
            callbackURLScheme: "com.example.app",
            completionHandler: recorder.handler
        )
        session.additionalHeaderFields = ["X-Client": "1"]
        refused(session, because: "additionalHeaderFields", recorder: recorder)
        session.additionalHeaderFields = [:]
        #expect(session.canStart)
    }

    @Test("start() refuses a URL that is not http or https, and a nil callback scheme")
    func badURLAndNoScheme() {
        let recorder = Recorder()
        refused(
            ASWebAuthenticationSession(
                url: URL(string: "ftp://auth.example/x")!,
                callbackURLScheme: "com.example.app",
                completionHandler: recorder.handler
            ),
            because: "not an http or https URL",
            recorder: recorder
        )
        refused(
            ASWebAuthenticationSession(url: url, callbackURLScheme: nil, completionHandler: recorder.handler),
            because: "no callback",
            recorder: recorder
        )
        refused(
            ASWebAuthenticationSession(url: url, callbackURLScheme: "HTTPS", completionHandler: recorder.handler),
            because: "custom callback scheme cannot be",
            recorder: recorder
        )
    }

    @Test("an ephemeral session whose browser cannot take a fresh profile does not start")
    func ephemeralWithoutProfile() {
        let recorder = Recorder()
        let session = ASWebAuthenticationSession(
            url: url,
            callbackURLScheme: "com.example.app",
            completionHandler: recorder.handler
        )
        session.prefersEphemeralWebBrowserSession = true
        session.browser = .command(["/bin/echo", "%s"])
        refused(session, because: "profile directory", recorder: recorder)
    }

    @Test("cancel() before start(): start() refuses and the handler never runs; cancel is idempotent")
    func cancelBeforeStart() {
        let recorder = Recorder()
        let session = ASWebAuthenticationSession(
            url: url,
            callbackURLScheme: "com.example.app",
            completionHandler: recorder.handler
        )
        session.cancel()
        session.cancel()
        refused(session, because: "cancelled", recorder: recorder)
    }

    @Test("a loopback redirect serves one session; a second is refused")
    func loopbackClaimedOnce() async throws {
        let redirect = try await ASWebAuthenticationSession.LoopbackRedirect.open()
        defer { redirect.close() }
        #expect(redirect.url.absoluteString.hasPrefix("http://127.0.0.1:"))
        #expect(redirect.url.path == "/callback")
        let first = ASWebAuthenticationSession(url: url, callback: .loopback(redirect)) { _, _ in }
        first.browser = .command(["/bin/true"])
        #expect(first.start())
        let recorder = Recorder()
        let second = ASWebAuthenticationSession(
            url: url,
            callback: .loopback(redirect),
            completionHandler: recorder.handler
        )
        #expect(!second.canStart)
        #expect(!second.start())
        #expect(second.startFailureReason?.contains("already used") == true)
        first.cancel()
    }

    @Test("the session keeps itself alive until its handler has run")
    func selfRetaining() async throws {
        let redirect = try await ASWebAuthenticationSession.LoopbackRedirect.open()
        let weakSession = WeakBox()
        let received: URL? = await withCheckedContinuation { continuation in
            // No reference to the session is kept here once this closure returns.
            let session = ASWebAuthenticationSession(url: url, callback: .loopback(redirect)) { url, _ in
                continuation.resume(returning: url)
            }
            session.browser = .command(["/bin/true"])
            weakSession.value = session
            #expect(session.start())
            Task {
                try await Task.sleep(for: .milliseconds(200))
                #expect(weakSession.value != nil, "the running session was released")
                var request = URLRequest(url: URL(string: "\(redirect.url.absoluteString)?code=c&state=abc")!)
                request.timeoutInterval = 5
                _ = try await URLSession.shared.data(for: request)
            }
        }
        #expect(received?.query == "code=c&state=abc")
        try await Task.sleep(for: .milliseconds(100))
        #expect(weakSession.value == nil, "the session outlived its handler")
    }

    /// A weak reference the test's tasks share.
    final class WeakBox: @unchecked Sendable {
        // @unchecked: `value` is written once, before the task that reads it is created (task
        // creation orders the write before the reads); the runtime's weak references are safe
        // to read while another thread releases the object.
        weak var value: ASWebAuthenticationSession?
    }

    @Test("async authenticate: a session that cannot start throws canceledLogin with the reason")
    func asyncRefused() async {
        do {
            _ = try await WebAuthenticationSession().authenticate(
                using: url,
                callback: .https(host: "app.example", path: "/done"),
                additionalHeaderFields: [:]
            )
            Issue.record("an https callback started")
        } catch let error as ASWebAuthenticationSessionError {
            #expect(error.code == .canceledLogin)
            guard case .failed(let reason) = error.cause else {
                Issue.record("cause: \(String(describing: error.cause))")
                return
            }
            #expect(reason.contains("https callback"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test("Callback.matchesURL follows Apple's rules")
    func callbackMatching() {
        let scheme = ASWebAuthenticationSession.Callback.customScheme("com.Example.App")
        #expect(scheme.matchesURL(URL(string: "com.example.app:/done?code=1")!))
        #expect(!scheme.matchesURL(URL(string: "com.example.other:/done")!))
        let https = ASWebAuthenticationSession.Callback.https(host: "App.example", path: "/auth/done")
        #expect(https.matchesURL(URL(string: "https://app.example/auth/done?code=1#x")!))
        #expect(https.matchesURL(URL(string: "https://APP.EXAMPLE/Auth/./done/")!))
        #expect(!https.matchesURL(URL(string: "http://app.example/auth/done")!))
        #expect(!https.matchesURL(URL(string: "https://evil.example/auth/done")!))
        #expect(!https.matchesURL(URL(string: "https://app.example/auth/other")!))
    }

    @Test("errors bridge to NSError with Apple's domain and codes")
    func errorShape() {
        let error = ASWebAuthenticationSessionError(.canceledLogin, cause: .timedOut)
        let bridged = error as NSError
        #expect(bridged.domain == "com.apple.AuthenticationServices.WebAuthenticationSession")
        #expect(bridged.domain == ASWebAuthenticationSessionErrorDomain)
        #expect(bridged.code == 1)
        #expect(error.code == .canceledLogin)
        #expect(ASWebAuthenticationSessionError.Code.presentationContextNotProvided.rawValue == 2)
        #expect(ASWebAuthenticationSessionError.Code.presentationContextInvalid.rawValue == 3)
        #expect(ASWebAuthenticationSessionError(.canceledLogin).code == ASWebAuthenticationSessionError.canceledLogin)
        #expect(bridged.localizedDescription.contains("timeout"))
    }

    @Test("a presentation context provider can be set as on Apple platforms, and is held weakly")
    func presentationContext() {
        final class Provider: NSObject, ASWebAuthenticationPresentationContextProviding {
            func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor {
                ASPresentationAnchor()
            }
        }
        let session = ASWebAuthenticationSession(url: url, callbackURLScheme: "com.example.app") { _, _ in }
        var provider: Provider? = Provider()
        session.presentationContextProvider = provider
        #expect(session.presentationContextProvider === provider)
        provider = nil
        #expect(session.presentationContextProvider == nil)
    }
}
