import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The HTTP half of a native app's sign-in: discovery and the token request. Plain HTTP is
/// refused except to a loopback address (RFC 9700 §2.6 wants TLS for every endpoint; a server on
/// 127.0.0.1 is one a developer runs on the same machine), and the rule holds for redirects too:
///
/// - The token request is never redirected. A 307 or 308 would re-send its body — the
///   authorization code and the PKCE verifier — to wherever the server points; the redirect is
///   refused before it is followed and the request fails.
/// - Discovery follows a redirect only within the issuer's origin (same scheme, host and port)
///   and only over https or plain http to a loopback address; every hop is checked before it is
///   requested.
///
/// The checks run in `willPerformHTTPRedirection` of the delegate of a session made for each
/// request: FoundationNetworking on Linux does not consult the task delegate passed to
/// `URLSession.data(for:delegate:)` before following a redirect, only the session's.
public struct OAuthClient: Sendable {
    private let configuration: URLSessionConfiguration

    /// A client whose requests use `session`'s configuration (proxies, timeouts, headers). Each
    /// request runs in a session of its own, whose delegate decides redirects as described above;
    /// `session`'s own delegate is not consulted.
    public init(session: URLSession = .shared) {
        self.configuration = session.configuration
    }

    /// The discovery document's address for `issuer` (OpenID Connect Discovery §4.1): a
    /// terminating `/` of the issuer is removed before `/.well-known/openid-configuration` is
    /// appended. `nil` when no URL can be made.
    public static func discoveryURL(for issuer: URL) -> URL? {
        var text = issuer.absoluteString
        if text.hasSuffix("/") { text.removeLast() }
        return URL(string: text + "/.well-known/openid-configuration")
    }

    /// Fetches the discovery document of `issuer` and checks it belongs to `issuer`: its `issuer`
    /// member must be exactly the issuer given, trailing `/` and all (Discovery §4.3).
    public func discover(issuer: URL) async throws(OAuthError) -> OpenIDConfiguration {
        try Self.checkTransport(issuer, "issuer")
        guard let discovery = Self.discoveryURL(for: issuer) else {
            throw OAuthError(.invalidResponse, "no discovery address can be made from the issuer \(issuer)")
        }
        let policy = RedirectPolicy.sameOrigin(as: issuer, endpoint: "discovery endpoint")
        let (status, body, _) = try await send(URLRequest(url: discovery), to: "the discovery endpoint", policy: policy)
        guard status == 200 else {
            throw OAuthError(.invalidResponse, "the discovery endpoint \(discovery) answered HTTP \(status)")
        }
        let configuration = try OpenIDConfiguration.parse(body, expectedIssuer: issuer.absoluteString)
        try Self.checkTransport(configuration.authorizationEndpoint, "authorization endpoint")
        try Self.checkTransport(configuration.tokenEndpoint, "token endpoint")
        return configuration
    }

    /// Redeems `code` at `tokenEndpoint` with the request's redirect URI and PKCE verifier. A
    /// redirect is never followed (the request fails with `OAuthError.Code.redirectRefused`).
    /// The response's ``TokenResponse/receivedDirectlyFrom`` names the endpoint it came from.
    public func redeem(
        _ code: OAuthSecretValue,
        for request: AuthorizationRequest,
        at tokenEndpoint: URL
    ) async throws(OAuthError) -> TokenResponse {
        try Self.checkTransport(tokenEndpoint, "token endpoint")
        var post = URLRequest(url: tokenEndpoint)
        post.httpMethod = "POST"
        post.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        post.setValue("application/json", forHTTPHeaderField: "Accept")
        post.httpBody = request.tokenRequestBody(code: code)
        let (status, body, reached) = try await send(
            post,
            to: "the token endpoint",
            policy: .refuseAll(endpoint: "token endpoint")
        )
        var token = try TokenResponse.parse(status: status, body: body)
        // `send` has refused every redirect, so this is the endpoint itself; checked again so the
        // mark is only ever set on an answer from the address the transport check passed.
        if reached == tokenEndpoint {
            token.receivedDirectlyFrom = tokenEndpoint
        }
        return token
    }

    /// Sends `request` under `policy`; returns the status, the body and the URL that answered.
    private func send(
        _ request: URLRequest,
        to name: String,
        policy: RedirectPolicy
    ) async throws(OAuthError) -> (Int, Data, URL?) {
        let body: Data
        let response: URLResponse
        // The policy is the delegate of a session of its own: FoundationNetworking ignores the
        // task delegate given to `data(for:delegate:)` when deciding a redirect, and follows it.
        let session = URLSession(configuration: configuration, delegate: policy, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        do {
            (body, response) = try await session.data(for: request)
        } catch {
            if let refusal = policy.refusal { throw refusal }
            throw OAuthError(
                .invalidResponse,
                "\(name) at \(request.url?.host ?? "?") could not be reached: \(error.localizedDescription)"
            )
        }
        // A refused redirect ends the task with the 3xx itself as the answer.
        if let refusal = policy.refusal { throw refusal }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if (300..<400).contains(status) {
            throw OAuthError(.redirectRefused, "\(name) answered HTTP \(status), a redirect that was not followed")
        }
        return (status, body, response.url)
    }

    static func checkTransport(_ url: URL, _ name: String) throws(OAuthError) {
        guard isSecureTransport(url) else {
            throw OAuthError(
                .invalidResponse,
                "the \(name) \(url.absoluteString) is not https (plain http is allowed only on a loopback address)"
            )
        }
    }

    /// https anywhere, or plain http to a loopback address.
    static func isSecureTransport(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "https": true
        case "http": ["127.0.0.1", "localhost", "::1", "[::1]"].contains(url.host ?? "")
        default: false
        }
    }
}

/// Decides each redirect of one request before FoundationNetworking follows it, and remembers why
/// it refused one so the request can fail with that reason.
final class RedirectPolicy: NSObject, URLSessionTaskDelegate, Sendable {
    private enum Rule {
        case refuseAll
        case sameOrigin(URL)
    }

    private let rule: Rule
    private let endpoint: String
    private let refused = Mutex<OAuthError?>(nil)

    private init(_ rule: Rule, endpoint: String) {
        self.rule = rule
        self.endpoint = endpoint
    }

    /// No redirect is followed.
    static func refuseAll(endpoint: String) -> RedirectPolicy {
        RedirectPolicy(.refuseAll, endpoint: endpoint)
    }

    /// Redirects stay on `origin`'s scheme, host and port, over https or loopback http.
    static func sameOrigin(as origin: URL, endpoint: String) -> RedirectPolicy {
        RedirectPolicy(.sameOrigin(origin), endpoint: endpoint)
    }

    /// Why a redirect was refused, if one was.
    var refusal: OAuthError? { refused.withLock { $0 } }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let target = request.url
        let shown = target.map(Self.withoutQuery) ?? "an address that cannot be read"
        let reason: String?
        switch rule {
        case .refuseAll:
            reason =
                "the \(endpoint) answered HTTP \(response.statusCode) redirecting to \(shown); a token request is never redirected (it would carry the authorization code and the PKCE verifier elsewhere), so it was not followed"
        case .sameOrigin(let origin):
            if let target, !OAuthClient.isSecureTransport(target) {
                reason =
                    "the \(endpoint) redirected to \(shown), which is not https (plain http is allowed only on a loopback address); the redirect was not followed"
            } else if let target, Self.origin(of: target) == Self.origin(of: origin) {
                reason = nil
            } else {
                reason =
                    "the \(endpoint) redirected to \(shown), outside the issuer's origin \(Self.origin(of: origin)); the redirect was not followed"
            }
        }
        if let reason {
            refused.withLock { $0 = OAuthError(.redirectRefused, reason) }
            completionHandler(nil)
        } else {
            completionHandler(request)
        }
    }

    /// `scheme://host:port`, lowercased, with the scheme's default port filled in.
    static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : 0)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }

    /// The URL without its query and fragment (a redirect target may carry parameters).
    static func withoutQuery(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return "an address that cannot be read"
        }
        components.query = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        return components.string ?? "an address that cannot be read"
    }
}
