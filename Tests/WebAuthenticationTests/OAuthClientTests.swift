import Foundation
import Testing

@testable import WebAuthentication

/// `OAuthClient` against real HTTP servers on 127.0.0.1 that redirect, publish issuers with and
/// without a trailing `/`, and answer token requests.
@Suite("OAuth client: redirects, issuers, token provenance")
struct OAuthClientTests {
    /// A discovery document for `issuer`, with endpoints on `base`.
    static func document(issuer: String, base: String) -> String {
        #"{"issuer":"\#(issuer)","authorization_endpoint":"\#(base)/authorize","token_endpoint":"\#(base)/token","code_challenge_methods_supported":["S256"]}"#
    }

    static let request = AuthorizationRequest(
        authorizationEndpoint: URL(string: "http://127.0.0.1:1/authorize")!,
        clientID: "app",
        redirectURI: URL(string: "http://127.0.0.1:50123/callback")!,
        scopes: ["openid"]
    )

    @Test("discovery follows a redirect within the issuer's origin")
    func sameOriginRedirect() async throws {
        let server = try await TestHTTPServer.start { request, base in
            switch request.uri {
            case "/.well-known/openid-configuration": .redirect(302, to: "/moved/openid-configuration")
            case "/moved/openid-configuration": .json(Self.document(issuer: base, base: base))
            default: TestHTTPServer.Reply(status: 404)
            }
        }
        let configuration = try await OAuthClient().discover(issuer: URL(string: server.base)!)
        #expect(configuration.issuer == server.base)
        #expect(server.requests.map(\.uri) == ["/.well-known/openid-configuration", "/moved/openid-configuration"])
    }

    @Test("discovery refuses a redirect to another origin or to plain http off loopback, before requesting it")
    func discoveryRedirectRefused() async throws {
        let elsewhere = try await TestHTTPServer.start { _, base in .json(Self.document(issuer: base, base: base)) }
        for target in [
            "\(elsewhere.base)/.well-known/openid-configuration",
            "http://auth.example.invalid/.well-known/openid-configuration?x=1",
        ] {
            let server = try await TestHTTPServer.start { _, _ in .redirect(301, to: target) }
            let error = await #expect(throws: OAuthError.self) {
                try await OAuthClient().discover(issuer: URL(string: server.base)!)
            }
            #expect(error?.code == .redirectRefused)
            #expect(error?.message.contains("discovery endpoint redirected to") == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("x=1") == false)
        }
        #expect(elsewhere.requests.isEmpty)
    }

    @Test(
        "the token request is never redirected: the code and verifier never reach the target",
        arguments: [307, 308, 302]
    )
    func tokenRedirectRefused(status: Int) async throws {
        let elsewhere = try await TestHTTPServer.start { _, _ in
            .json(#"{"access_token":"stolen","token_type":"Bearer"}"#)
        }
        let server = try await TestHTTPServer.start { _, base in
            .redirect(status, to: status == 302 ? "\(base)/token2" : "\(elsewhere.base)/token")
        }
        let error = await #expect(throws: OAuthError.self) {
            try await OAuthClient().redeem(
                OAuthSecretValue(rawValue: "the-code"),
                for: Self.request,
                at: URL(string: "\(server.base)/token")!
            )
        }
        #expect(error?.code == .redirectRefused)
        #expect(error?.message.contains("never redirected") == true, "\(error?.message ?? "")")
        #expect(elsewhere.requests.isEmpty)
        #expect(server.requests.map(\.uri) == ["/token"])
    }

    @Test(
        "an issuer ending in / is used as published: discovery at ISSUER-without-/ + /.well-known/…, issuer compared exactly",
        arguments: ["/", "/tenant/"]
    )
    func trailingSlashIssuer(path: String) async throws {
        let server = try await TestHTTPServer.start { request, base in
            let issuer = base + path
            return request.uri == "\(path)/.well-known/openid-configuration".replacingOccurrences(of: "//", with: "/")
                ? .json(Self.document(issuer: issuer, base: base)) : TestHTTPServer.Reply(status: 404)
        }
        let issuer = server.base + path
        let configuration = try await OAuthClient().discover(issuer: URL(string: issuer)!)
        #expect(configuration.issuer == issuer)
        #expect(server.requests.count == 1)

        // Without the slash the issuer is another one (Discovery §4.3: exactly equal); the message says which to use.
        let trimmed = String(issuer.dropLast())
        let error = await #expect(throws: OAuthError.self) {
            try await OAuthClient().discover(issuer: URL(string: trimmed)!)
        }
        #expect(error?.code == .issuerMismatch)
        #expect(error?.message.contains("use the issuer \(issuer)") == true, "\(error?.message ?? "")")
    }

    @Test("the discovery URL drops one terminating / of the issuer")
    func discoveryURL() {
        #expect(
            OAuthClient.discoveryURL(for: URL(string: "https://a.example")!)?.absoluteString
                == "https://a.example/.well-known/openid-configuration"
        )
        #expect(
            OAuthClient.discoveryURL(for: URL(string: "https://a.example/")!)?.absoluteString
                == "https://a.example/.well-known/openid-configuration"
        )
        #expect(
            OAuthClient.discoveryURL(for: URL(string: "https://a.example/t/1/")!)?.absoluteString
                == "https://a.example/t/1/.well-known/openid-configuration"
        )
    }

    @Test("an ID token is read unverified only from an answer that came straight from the token endpoint")
    func unverifiedIDToken() async throws {
        let claims = #"{"iss":"https://issuer.example","sub":"u1","aud":"app","exp":4102444800}"#
        let idToken = "eyJhbGciOiJSUzI1NiJ9.\(base64url(claims)).c2ln"
        let body = #"{"access_token":"at-123","token_type":"Bearer","id_token":"\#(idToken)"}"#
        let server = try await TestHTTPServer.start { _, _ in .json(body) }
        let endpoint = URL(string: "\(server.base)/token")!
        let token = try await OAuthClient().redeem(OAuthSecretValue(rawValue: "c"), for: Self.request, at: endpoint)
        #expect(token.receivedDirectlyFrom == endpoint)
        #expect(try IDTokenClaims(unverifiedFrom: token).subject == "u1")

        // The same bytes read some other way: the token is refused, with why.
        let parsed = try TokenResponse.parse(status: 200, body: Data(body.utf8))
        #expect(parsed.receivedDirectlyFrom == nil)
        let error = #expect(throws: OAuthError.self) { try IDTokenClaims(unverifiedFrom: parsed) }
        #expect(error?.code == .unverifiableIDToken)
        #expect(error?.message.contains("does not verify ID token signatures") == true)
        #expect(error?.message.contains(idToken) == false)

        let noIDToken = try await TestHTTPServer.start { _, _ in .json(#"{"access_token":"at","token_type":"Bearer"}"#)
        }
        let plain = try await OAuthClient().redeem(
            OAuthSecretValue(rawValue: "c"),
            for: Self.request,
            at: URL(string: "\(noIDToken.base)/token")!
        )
        #expect(
            (#expect(throws: OAuthError.self) { try IDTokenClaims(unverifiedFrom: plain) })?.code == .invalidResponse
        )
    }
}

private func base64url(_ text: String) -> String {
    Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
        of: "/",
        with: "_"
    )
    .replacingOccurrences(of: "=", with: "")
}
