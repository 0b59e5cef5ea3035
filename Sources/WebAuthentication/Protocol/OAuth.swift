import Foundation
import KeyportEncoding
import KeyportErrors

/// Why an OAuth step failed, with the server's words when it gave any. Check ``code`` to tell
/// one failure from another. Descriptions never include a code, token, verifier or state.
public struct OAuthError: RecordedError {
    /// What went wrong, as a stable name (`state-mismatch`). A struct of constants rather than an
    /// enum, so that a new code is not a breaking change for code that switches over them.
    public typealias Code = ErrorCodeOf<OAuthError>

    /// The code, the message and the place, kept as all Keyport's errors keep them.
    public var record: ErrorRecord<Code>
    /// The OAuth error code the server sent (`invalid_grant`, `access_denied`, …), as it sent it;
    /// `nil` when the failure is not the server's answer.
    ///
    /// It is kept here rather than made into a ``Code``: codes are Keyport's own verdicts, and a
    /// server's free text turned into one could name a check Keyport makes (`state-mismatch`) and
    /// pass for it, or grow the codes a caller switches over without bound.
    public var serverError: String?

    /// An error with `code`, the `message` a person reads, and the OAuth error code the server
    /// sent, if any; `file` and `line` record where it was made (``location``).
    public init(
        _ code: Code,
        _ message: String,
        serverError: String? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) {
        record = ErrorRecord(code, message, file: file, line: line)
        self.serverError = serverError
    }
}

extension ErrorCodeOf<OAuthError> {
    /// The URL that arrived is not the registered redirect; nothing in it was looked at.
    public static let redirectMismatch = Self(rawValue: "redirect-mismatch")
    /// The redirect's `state` is missing or not the one sent: possibly a forged response.
    public static let stateMismatch = Self(rawValue: "state-mismatch")
    /// The redirect names another authorization server (RFC 9207 `iss`).
    public static let issuerMismatch = Self(rawValue: "issuer-mismatch")
    /// The person declined at the server (`error=access_denied`).
    public static let accessDenied = Self(rawValue: "access-denied")
    /// The server answered with another OAuth error code (RFC 6749 §4.1.2.1, §5.2), which
    /// ``OAuthError/serverError`` holds.
    public static let server = Self(rawValue: "server")
    /// The server's answer is not what the protocol says it must be.
    public static let invalidResponse = Self(rawValue: "invalid-response")
    /// A server answered with a redirect Keyport does not follow: any redirect of the token
    /// request, or a discovery redirect off the issuer's origin or to plain http.
    public static let redirectRefused = Self(rawValue: "redirect-refused")
    /// An ID token whose signature Keyport cannot vouch for: it did not come straight from the
    /// token endpoint (TLS or loopback, no redirect), and Keyport does not verify signatures.
    public static let unverifiableIDToken = Self(rawValue: "unverifiable-id-token")
}

/// An authorization request for the code flow with PKCE (RFC 6749 §4.1, RFC 7636), with state and,
/// for OpenID Connect, a nonce — all random by default.
public struct AuthorizationRequest: Sendable {
    /// The server's authorization endpoint, where the person signs in.
    public var authorizationEndpoint: URL
    /// The app's client identifier at the server (`client_id`); a native app is a public client.
    public var clientID: String
    /// Where the server sends the person back (`redirect_uri`): a loopback URL
    /// (``LoopbackReceiver/redirectURI``) or a private-use scheme the app registered.
    public var redirectURI: URL
    /// The scopes asked for (`scope`, space-separated on the wire); `openid` for an ID token.
    public var scopes: [String]
    /// The random value the redirect must return (`state`), tying the answer to this request.
    public var state: OAuthSecretValue
    /// The random value the ID token must carry (`nonce`, OpenID Connect); `nil` sends none.
    public var nonce: OAuthSecretValue?
    /// The PKCE verifier and its S256 challenge (RFC 7636).
    public var pkce: PKCE
    /// Other parameters (`prompt`, `login_hint`, …), added after the standard ones.
    public var additionalParameters: [(name: String, value: String)]

    /// A request with a fresh random `state` and PKCE verifier unless others are given.
    public init(
        authorizationEndpoint: URL,
        clientID: String,
        redirectURI: URL,
        scopes: [String] = [],
        state: OAuthSecretValue = .random(),
        nonce: OAuthSecretValue? = nil,
        pkce: PKCE = PKCE(),
        additionalParameters: [(name: String, value: String)] = []
    ) {
        self.authorizationEndpoint = authorizationEndpoint
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.state = state
        self.nonce = nonce ?? (scopes.contains("openid") ? .random() : nil)
        self.pkce = pkce
        self.additionalParameters = additionalParameters
    }

    /// The URL to open in the browser. Parameters already in the endpoint's query are kept.
    public var url: URL {
        var components = URLComponents(url: authorizationEndpoint, resolvingAgainstBaseURL: false)!
        var items = components.queryItems ?? []
        items.append(URLQueryItem(name: "response_type", value: "code"))
        items.append(URLQueryItem(name: "client_id", value: clientID))
        items.append(URLQueryItem(name: "redirect_uri", value: redirectURI.absoluteString))
        if !scopes.isEmpty { items.append(URLQueryItem(name: "scope", value: scopes.joined(separator: " "))) }
        items.append(URLQueryItem(name: "state", value: state.rawValue))
        items.append(URLQueryItem(name: "code_challenge", value: pkce.challenge))
        items.append(URLQueryItem(name: "code_challenge_method", value: PKCE.method))
        if let nonce { items.append(URLQueryItem(name: "nonce", value: nonce.rawValue)) }
        for parameter in additionalParameters {
            items.append(URLQueryItem(name: parameter.name, value: parameter.value))
        }
        components.percentEncodedQuery = items.map { item in
            "\(PercentEncoding.escape(item.name))=\(PercentEncoding.escape(item.value ?? ""))"
        }.joined(separator: "&")
        return components.url!
    }

    /// Reads the redirect the browser brought back, in AppAuth's order: the URL must be the
    /// registered redirect (else nothing in it is trusted), then carry the state that was sent,
    /// then (when `expectedIssuer` is given and the server sends `iss`) name the right server, and
    /// only then is an `error` reported or the `code` returned.
    public func authorizationCode(
        from url: URL,
        matching matcher: CallbackMatcher,
        expectedIssuer: String? = nil
    ) throws(OAuthError) -> OAuthSecretValue {
        guard matcher.matches(url) else {
            throw OAuthError(.redirectMismatch, "the callback is not the registered redirect URI; it was ignored")
        }
        func value(_ name: String) -> String? { CallbackMatcher.queryValue(name, in: url) }
        guard let returned = value("state"), OAuthSecretValue(rawValue: returned) == state else {
            throw OAuthError(
                .stateMismatch,
                "the callback's state does not match the request's; the response may be forged and was refused"
            )
        }
        if let expectedIssuer, let issuer = value("iss"), issuer != expectedIssuer {
            throw OAuthError(
                .issuerMismatch,
                "the callback comes from the authorization server \(issuer), not \(expectedIssuer)"
            )
        }
        if let error = value("error") {
            let detail = value("error_description").map { ": \($0)" } ?? ""
            if error == "access_denied" {
                throw OAuthError(.accessDenied, "the sign-in was declined at the server\(detail)", serverError: error)
            }
            throw OAuthError(.server, "the authorization server answered \(error)\(detail)", serverError: error)
        }
        guard let code = value("code"), !code.isEmpty else {
            throw OAuthError(.invalidResponse, "the callback carries neither a code nor an error")
        }
        return OAuthSecretValue(rawValue: code)
    }

    /// The form body of the token request that redeems `code` (public client, RFC 6749 §4.1.3).
    public func tokenRequestBody(code: OAuthSecretValue) -> Data {
        let fields = [
            ("grant_type", "authorization_code"), ("code", code.rawValue), ("redirect_uri", redirectURI.absoluteString),
            ("client_id", clientID), ("code_verifier", pkce.verifier.rawValue),
        ]
        return Data(
            fields.map { "\(PercentEncoding.escape($0.0))=\(PercentEncoding.escape($0.1))" }.joined(separator: "&").utf8
        )
    }
}

/// A token endpoint's answer (RFC 6749 §5.1; OpenID Connect adds `id_token`). Tokens are
/// redacted in every description.
public struct TokenResponse: Sendable, Equatable, CustomStringConvertible {
    /// The access token (`access_token`).
    public var accessToken: OAuthSecretValue
    /// How to present the access token (`token_type`), usually `Bearer`.
    public var tokenType: String
    /// Seconds the access token stays valid from when it was issued (`expires_in`), if the server says.
    public var expiresIn: Int?
    /// The token that gets new access tokens (`refresh_token`), if the server issued one.
    public var refreshToken: OAuthSecretValue?
    /// The OpenID Connect ID token (`id_token`), a JWT; see ``IDTokenClaims``.
    public var idToken: OAuthSecretValue?
    /// The scopes granted (`scope`) when they differ from those asked for.
    public var scope: String?
    /// The token endpoint this answer came straight from — over TLS, or plain HTTP to a loopback
    /// address, with no redirect — when ``OAuthClient/redeem(_:for:at:)`` fetched it. `nil` for an
    /// answer read with ``parse(status:body:)``, whose way here Keyport cannot vouch for.
    /// ``IDTokenClaims/init(unverifiedFrom:)`` reads an ID token only from an answer that has it.
    public internal(set) var receivedDirectlyFrom: URL?

    /// Parses the token endpoint's HTTP answer: a success, or the OAuth error it carries.
    public static func parse(status: Int, body: Data) throws(OAuthError) -> TokenResponse {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw OAuthError(
                .invalidResponse,
                "the token endpoint answered HTTP \(status) with a body that is not a JSON object"
            )
        }
        if let error = object["error"] as? String {
            let detail = (object["error_description"] as? String).map { ": \($0)" } ?? ""
            throw OAuthError(.server, "the token endpoint answered \(error)\(detail)", serverError: error)
        }
        guard (200..<300).contains(status) else {
            throw OAuthError(.invalidResponse, "the token endpoint answered HTTP \(status) without an OAuth error")
        }
        guard let access = object["access_token"] as? String, !access.isEmpty else {
            throw OAuthError(.invalidResponse, "the token response has no access_token")
        }
        guard let type = object["token_type"] as? String else {
            throw OAuthError(.invalidResponse, "the token response has no token_type")
        }
        return TokenResponse(
            accessToken: OAuthSecretValue(rawValue: access),
            tokenType: type,
            expiresIn: (object["expires_in"] as? NSNumber)?.intValue,
            refreshToken: (object["refresh_token"] as? String).map(OAuthSecretValue.init(rawValue:)),
            idToken: (object["id_token"] as? String).map(OAuthSecretValue.init(rawValue:)),
            scope: object["scope"] as? String
        )
    }

    /// The members, each token redacted to its first characters.
    public var description: String {
        var parts = ["access_token: \(accessToken)", "token_type: \(tokenType)"]
        if let expiresIn { parts.append("expires_in: \(expiresIn)") }
        if let refreshToken { parts.append("refresh_token: \(refreshToken)") }
        if let idToken { parts.append("id_token: \(idToken)") }
        if let scope { parts.append("scope: \(scope)") }
        return "TokenResponse(\(parts.joined(separator: ", ")))"
    }
}

/// The parts of an OpenID Provider's discovery document (`/.well-known/openid-configuration`) a
/// native app needs.
public struct OpenIDConfiguration: Decodable, Sendable, Equatable {
    /// The issuer identifier (`issuer`), exactly as the server writes it.
    public var issuer: String
    /// Where authorization requests go (`authorization_endpoint`).
    public var authorizationEndpoint: URL
    /// Where codes are redeemed for tokens (`token_endpoint`).
    public var tokenEndpoint: URL
    /// The server's signing keys (`jwks_uri`); Keyport does not fetch them.
    public var jwksURI: URL?
    /// The PKCE methods the server takes (`code_challenge_methods_supported`); when listed, it
    /// must include `S256`.
    public var codeChallengeMethodsSupported: [String]?
    /// The scopes the server knows (`scopes_supported`).
    public var scopesSupported: [String]?

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case jwksURI = "jwks_uri"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case scopesSupported = "scopes_supported"
    }

    /// Parses a discovery document and checks it belongs to `issuer` (OpenID Connect Discovery §4.3).
    public static func parse(_ data: Data, expectedIssuer issuer: String) throws(OAuthError) -> OpenIDConfiguration {
        let configuration: OpenIDConfiguration
        do {
            configuration = try JSONDecoder().decode(OpenIDConfiguration.self, from: data)
        } catch {
            throw OAuthError(.invalidResponse, "the discovery document is not usable: \(error)")
        }
        // Exactly equal, as Discovery §4.3 says: no trimming of a trailing `/` on either side.
        guard configuration.issuer == issuer else {
            func trimmed(_ text: String) -> Substring { text.hasSuffix("/") ? text.dropLast() : Substring(text) }
            var hint = ""
            if trimmed(configuration.issuer) == trimmed(issuer) {
                hint =
                    " (issuers are compared exactly, trailing / included; use the issuer \(configuration.issuer) as the server publishes it)"
            }
            throw OAuthError(
                .issuerMismatch,
                "the discovery document is for \(configuration.issuer), not \(issuer)\(hint)"
            )
        }
        if let methods = configuration.codeChallengeMethodsSupported, !methods.contains(PKCE.method) {
            throw OAuthError(
                .invalidResponse,
                "the server does not support PKCE with S256 (it lists \(methods.joined(separator: ", ")))"
            )
        }
        return configuration
    }
}

/// The claims of an OpenID Connect ID token that a native app checks (OpenID Connect Core
/// §3.1.3.7).
///
/// > Important: **The token's signature is not verified.** Nothing here reads the JWS header,
/// > fetches the server's keys (`jwks_uri`) or checks the signature; a forged token with the
/// > right claims passes. Core §3.1.3.7 allows this only for a token received directly from the
/// > token endpoint over TLS in the code flow. Use ``init(unverifiedFrom:)``, which enforces
/// > that: it reads the token only from a ``TokenResponse`` that ``OAuthClient`` fetched straight
/// > from the token endpoint (TLS, or loopback HTTP; no redirect). ``init(token:)`` reads any
/// > token and leaves the question of where it came from to the caller. Never pass a token read
/// > this way on to another party as proof of identity: verify it against the server's JWKS
/// > first.
public struct IDTokenClaims: Sendable, Equatable {
    /// Who issued the token (`iss`).
    public var issuer: String
    /// The person's identifier at the issuer (`sub`), stable and unique there.
    public var subject: String
    /// The clients the token is meant for (`aud`; a single string is read as one element).
    public var audience: [String]
    /// When the token stops being valid (`exp`).
    public var expiresAt: Date
    /// The `nonce` of the authorization request, when it sent one.
    public var nonce: OAuthSecretValue?

    /// Reads the claims of the ID token in `response`, refusing a token whose way here Keyport
    /// cannot vouch for.
    ///
    /// - Throws: ``OAuthError`` `.unverifiableIDToken` when `response` did not come straight from
    ///   the token endpoint (``TokenResponse/receivedDirectlyFrom`` is `nil`); `.invalidResponse`
    ///   when it has no ID token or the token is not a JWT with `iss`, `sub`, `aud` and `exp`.
    public init(unverifiedFrom response: TokenResponse) throws(OAuthError) {
        guard let endpoint = response.receivedDirectlyFrom else {
            throw OAuthError(
                .unverifiableIDToken,
                "the id_token did not come straight from the token endpoint over TLS or a loopback connection, and Keyport does not verify ID token signatures; it was refused"
            )
        }
        guard let token = response.idToken else {
            throw OAuthError(
                .invalidResponse,
                "the token response from \(endpoint.host ?? "the token endpoint") has no id_token"
            )
        }
        try self.init(token: token)
    }

    /// Reads the payload of a compact JWS (`header.payload.signature`) **without verifying its
    /// signature**, wherever the token came from. Prefer ``init(unverifiedFrom:)``.
    public init(token: OAuthSecretValue) throws(OAuthError) {
        let parts = token.rawValue.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = try? Data(Base64URL.decode(String(parts[1]))),
            let object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
        else {
            throw OAuthError(.invalidResponse, "the id_token is not a JSON Web Token")
        }
        guard let issuer = object["iss"] as? String, let subject = object["sub"] as? String,
            let expiry = (object["exp"] as? NSNumber)?.doubleValue
        else {
            throw OAuthError(.invalidResponse, "the id_token lacks iss, sub or exp")
        }
        let audience: [String]
        switch object["aud"] {
        case let one as String: audience = [one]
        case let many as [String]: audience = many
        default: throw OAuthError(.invalidResponse, "the id_token has no aud")
        }
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
        self.expiresAt = Date(timeIntervalSince1970: expiry)
        self.nonce = (object["nonce"] as? String).map(OAuthSecretValue.init(rawValue:))
    }

    /// Checks the token was issued by `issuer` for `clientID`, is not expired at `now`, and
    /// carries the `nonce` the authorization request sent.
    public func check(
        issuer expectedIssuer: String,
        clientID: String,
        nonce expectedNonce: OAuthSecretValue?,
        now: Date = Date()
    ) throws(OAuthError) {
        guard issuer == expectedIssuer else {
            throw OAuthError(.issuerMismatch, "the id_token was issued by \(issuer), not \(expectedIssuer)")
        }
        guard audience.contains(clientID) else {
            throw OAuthError(.invalidResponse, "the id_token is not meant for client \(clientID)")
        }
        guard expiresAt > now else {
            throw OAuthError(.invalidResponse, "the id_token expired at \(expiresAt)")
        }
        if let expectedNonce, nonce != expectedNonce {
            throw OAuthError(
                .invalidResponse,
                "the id_token's nonce is not the one sent; the token may be replayed and was refused"
            )
        }
    }
}
