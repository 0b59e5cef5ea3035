import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The HTTP half of a native app's sign-in: discovery and the token request. Plain HTTP is
/// refused except to a loopback address (RFC 9700 §2.6 wants TLS for every endpoint; a server on
/// 127.0.0.1 is one a developer runs on the same machine).
public struct OAuthClient: Sendable {
    private let session: URLSession

    public init(session: URLSession = .shared) {
        self.session = session
    }

    /// Fetches `ISSUER/.well-known/openid-configuration` and checks it belongs to `issuer`.
    public func discover(issuer: URL) async throws(OAuthError) -> OpenIDConfiguration {
        try Self.checkTransport(issuer, "issuer")
        let trimmed = issuer.absoluteString.hasSuffix("/") ? String(issuer.absoluteString.dropLast()) : issuer.absoluteString
        guard let discovery = URL(string: trimmed + "/.well-known/openid-configuration") else {
            throw OAuthError(.invalidResponse, "no discovery address can be made from the issuer \(issuer)")
        }
        let (status, body) = try await send(URLRequest(url: discovery), to: "the discovery endpoint")
        guard status == 200 else {
            throw OAuthError(.invalidResponse, "the discovery endpoint \(discovery) answered HTTP \(status)")
        }
        let configuration = try OpenIDConfiguration.parse(body, expectedIssuer: trimmed)
        try Self.checkTransport(configuration.authorizationEndpoint, "authorization endpoint")
        try Self.checkTransport(configuration.tokenEndpoint, "token endpoint")
        return configuration
    }

    /// Redeems `code` at `tokenEndpoint` with the request's redirect URI and PKCE verifier.
    public func redeem(_ code: OAuthSecretValue, for request: AuthorizationRequest, at tokenEndpoint: URL) async throws(OAuthError) -> TokenResponse {
        try Self.checkTransport(tokenEndpoint, "token endpoint")
        var post = URLRequest(url: tokenEndpoint)
        post.httpMethod = "POST"
        post.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        post.setValue("application/json", forHTTPHeaderField: "Accept")
        post.httpBody = request.tokenRequestBody(code: code)
        let (status, body) = try await send(post, to: "the token endpoint")
        return try TokenResponse.parse(status: status, body: body)
    }

    private func send(_ request: URLRequest, to name: String) async throws(OAuthError) -> (Int, Data) {
        do {
            let (body, response) = try await session.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, body)
        } catch {
            throw OAuthError(.invalidResponse, "\(name) at \(request.url?.host ?? "?") could not be reached: \(error.localizedDescription)")
        }
    }

    static func checkTransport(_ url: URL, _ name: String) throws(OAuthError) {
        switch url.scheme?.lowercased() {
        case "https": return
        case "http" where ["127.0.0.1", "localhost", "::1", "[::1]"].contains(url.host ?? ""): return
        default:
            throw OAuthError(.invalidResponse, "the \(name) \(url.absoluteString) is not https (plain http is allowed only on a loopback address)")
        }
    }
}
