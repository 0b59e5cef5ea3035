import Foundation
import Testing
import WebAuthentication

@Suite("PKCE, state and callback matching")
struct PKCETests {
    @Test("RFC 7636 Appendix B: the S256 challenge of the example verifier")
    func rfcVector() {
        let pkce = PKCE(verifier: OAuthSecretValue(rawValue: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"))
        #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test("new verifiers: 43 characters from 32 random bytes, valid, never the same, never printed")
    func random() {
        let a = PKCE()
        let b = PKCE()
        #expect(a.verifier.rawValue.count == 43)
        #expect(PKCE.isValidVerifier(a.verifier.rawValue))
        #expect(a.verifier != b.verifier)
        #expect(!"\(a.verifier)".contains(a.verifier.rawValue))
        #expect("\(a.verifier)".hasSuffix("…[redacted]"))
        #expect(!PKCE.isValidVerifier("short"))
        #expect(!PKCE.isValidVerifier(String(repeating: "a", count: 42) + "!"))
    }

    @Test(
        "callbacks match as Apple's Callback does, plus loopback",
        arguments: [
            (CallbackMatcher.customScheme("com.example.App"), "COM.EXAMPLE.app://done?code=1", true),
            (.customScheme("com.example.app"), "com.example.other://done", false),
            (
                .https(host: "example.com", path: "/auth/callback"), "https://EXAMPLE.com/Auth/./callback/?code=1#x",
                true
            ),
            (.https(host: "example.com", path: "/auth/callback"), "http://example.com/auth/callback", false),
            (.https(host: "example.com", path: "/auth/callback"), "https://example.com/auth/other", false),
            (
                .loopback(host: "127.0.0.1", port: 51234, path: "/callback"), "http://127.0.0.1:51234/callback?code=1",
                true
            ),
            (.loopback(host: "127.0.0.1", port: 51234, path: "/callback"), "http://127.0.0.1:51235/callback", false),
            (.loopback(host: "127.0.0.1", port: 51234, path: "/callback"), "http://localhost:51234/callback", false),
            (.loopback(host: "127.0.0.1", port: 51234, path: "/callback"), "http://127.0.0.1:51234/favicon.ico", false),
            (.loopback(host: "[::1]", port: 8080, path: "/"), "http://[::1]:8080/?code=2", true),
        ]
    )
    func matching(matcher: CallbackMatcher, url: String, expected: Bool) throws {
        #expect(matcher.matches(try #require(URL(string: url))) == expected)
    }
}

@Suite("Authorization and token exchange")
struct AuthorizationTests {
    let redirect = URL(string: "http://127.0.0.1:50123/callback")!
    var matcher: CallbackMatcher { .loopback(host: "127.0.0.1", port: 50123, path: "/callback") }

    func request(scopes: [String] = ["openid", "profile"]) -> AuthorizationRequest {
        AuthorizationRequest(
            authorizationEndpoint: URL(string: "https://auth.example/authorize?tenant=x")!,
            clientID: "cli app",
            redirectURI: redirect,
            scopes: scopes
        )
    }

    @Test("the authorization URL carries every parameter, encoded")
    func url() throws {
        let r = request()
        let components = try #require(URLComponents(url: r.url, resolvingAgainstBaseURL: false))
        let items = Dictionary(uniqueKeysWithValues: (components.queryItems ?? []).map { ($0.name, $0.value ?? "") })
        #expect(items["tenant"] == "x")
        #expect(items["response_type"] == "code")
        #expect(items["client_id"] == "cli app")
        #expect(items["redirect_uri"] == redirect.absoluteString)
        #expect(items["scope"] == "openid profile")
        #expect(items["state"] == r.state.rawValue)
        #expect(items["code_challenge"] == r.pkce.challenge)
        #expect(items["code_challenge_method"] == "S256")
        #expect(items["nonce"] == r.nonce?.rawValue)
        #expect(r.url.absoluteString.contains("client_id=cli%20app"))
        #expect(request(scopes: ["repo"]).nonce == nil)
    }

    func callback(_ query: String) -> URL { URL(string: "http://127.0.0.1:50123/callback?\(query)")! }

    @Test("a matching callback with the right state gives the code")
    func code() throws {
        let r = request()
        let code = try r.authorizationCode(from: callback("code=abc123&state=\(r.state.rawValue)"), matching: matcher)
        #expect(code.rawValue == "abc123")
    }

    @Test("the redirect is matched before the state, and the state before any error")
    func order() {
        let r = request()
        // Errors are equal by code: the sentence is checked on its own.
        let mismatch = #expect(throws: OAuthError(.redirectMismatch, "")) {
            try r.authorizationCode(
                from: URL(string: "http://127.0.0.1:50124/callback?state=x&error=access_denied")!,
                matching: matcher
            )
        }
        #expect(mismatch?.message == "the callback is not the registered redirect URI; it was ignored")
        #expect {
            try r.authorizationCode(from: callback("code=abc&state=forged"), matching: matcher)
        } throws: { ($0 as? OAuthError)?.code == .stateMismatch }
        #expect {
            try r.authorizationCode(from: callback("error=access_denied"), matching: matcher)
        } throws: { ($0 as? OAuthError)?.code == .stateMismatch }
        #expect {
            try r.authorizationCode(
                from: callback("error=access_denied&error_description=User%20said%20no&state=\(r.state.rawValue)"),
                matching: matcher
            )
        } throws: { error in
            let e = error as? OAuthError
            return e?.code == .accessDenied && e?.message.contains("User said no") == true
        }
        #expect {
            try r.authorizationCode(from: callback("error=invalid_scope&state=\(r.state.rawValue)"), matching: matcher)
        } throws: { ($0 as? OAuthError)?.code == .server && ($0 as? OAuthError)?.serverError == "invalid_scope" }
        #expect {
            try r.authorizationCode(from: callback("state=\(r.state.rawValue)"), matching: matcher)
        } throws: { ($0 as? OAuthError)?.code == .invalidResponse }
        #expect {
            try r.authorizationCode(
                from: callback("code=a&state=\(r.state.rawValue)&iss=https://evil.example"),
                matching: matcher,
                expectedIssuer: "https://auth.example"
            )
        } throws: { ($0 as? OAuthError)?.code == .issuerMismatch }
    }

    @Test("the token request sends the verifier; responses and errors are parsed; tokens never print")
    func tokens() throws {
        let r = request()
        let body = String(decoding: r.tokenRequestBody(code: OAuthSecretValue(rawValue: "the code")), as: UTF8.self)
        #expect(body.contains("grant_type=authorization_code"))
        #expect(body.contains("code=the%20code"))
        #expect(body.contains("code_verifier=\(r.pkce.verifier.rawValue)"))
        #expect(body.contains("client_id=cli%20app"))

        let ok = try TokenResponse.parse(
            status: 200,
            body: Data(
                #"{"access_token":"SlAV32hkKG","token_type":"Bearer","expires_in":3600,"refresh_token":"8xLOxBtZp8","id_token":"eyJhbGciOi.x.y","scope":"openid"}"#
                    .utf8
            )
        )
        #expect(ok.accessToken.rawValue == "SlAV32hkKG")
        #expect(ok.expiresIn == 3600)
        #expect(!ok.description.contains("SlAV32hkKG"))
        #expect(!ok.description.contains("8xLOxBtZp8"))
        #expect(ok.description.contains("token_type: Bearer"))

        #expect {
            try TokenResponse.parse(
                status: 400,
                body: Data(#"{"error":"invalid_grant","error_description":"PKCE verification failed"}"#.utf8)
            )
        } throws: { error in
            let e = error as? OAuthError
            return e?.code == .server && e?.serverError == "invalid_grant"
                && e?.message.contains("PKCE verification failed") == true
        }
        #expect(throws: OAuthError.self) { try TokenResponse.parse(status: 500, body: Data("oops".utf8)) }
        #expect(throws: OAuthError.self) {
            try TokenResponse.parse(status: 200, body: Data(#"{"token_type":"Bearer"}"#.utf8))
        }
    }

    @Test("discovery documents are checked against the issuer and for S256")
    func discovery() throws {
        let json =
            #"{"issuer":"https://auth.example","authorization_endpoint":"https://auth.example/authorize","token_endpoint":"https://auth.example/token","code_challenge_methods_supported":["S256"]}"#
        let configuration = try OpenIDConfiguration.parse(Data(json.utf8), expectedIssuer: "https://auth.example")
        #expect(configuration.tokenEndpoint.absoluteString == "https://auth.example/token")
        #expect(throws: OAuthError.self) {
            try OpenIDConfiguration.parse(Data(json.utf8), expectedIssuer: "https://other.example")
        }
        let plainOnly = json.replacingOccurrences(of: #"["S256"]"#, with: #"["plain"]"#)
        #expect(throws: OAuthError.self) {
            try OpenIDConfiguration.parse(Data(plainOnly.utf8), expectedIssuer: "https://auth.example")
        }
    }
}
