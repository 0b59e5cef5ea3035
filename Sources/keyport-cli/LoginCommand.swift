import ArgumentParser
import AuthenticationServices
import Foundation
import KeyportCommandLine
import KeyportSystem
import WebAuthentication

/// `keyport login`: the whole native-app sign-in (RFC 8252) against an OpenID Connect server,
/// built on ``WebAuthenticationSession`` the way an app would use it.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in at an OAuth 2.0 / OpenID Connect server in the browser and print the tokens.",
        discussion: """
            Discovers the server at ISSUER/.well-known/openid-configuration, opens the sign-in page \
            (always also printed on standard error, so it can be opened on another machine), waits for \
            the redirect, redeems the code with PKCE and prints the token response as JSON on standard \
            output. Token values are redacted unless --show-tokens is given. Exit status: 0 signed in; \
            1 when the sign-in was declined, timed out, was cancelled or the server refused it; 2 for a \
            usage error. Interrupted while waiting (Ctrl-C, SIGTERM, SIGHUP), keyport stops the browser \
            it launched, removes its profile, and then ends by that signal.
            """
    )

    @Option(help: "The authorization server's issuer URL.")
    var issuer: String
    @Option(name: .customLong("client-id"), help: "The client ID registered at the server (a public client).")
    var clientID: String
    @Option(help: "Space-separated scopes.")
    var scope = "openid"
    @Flag(help: "Sign in in a browser Keyport launches with a fresh profile, which keeps no cookies.")
    var ephemeral = false
    @Option(
        help:
            "loopback (http://127.0.0.1:PORT/callback), or a custom scheme registered with `keyport url-scheme register`."
    )
    var redirect = "loopback"
    @Option(help: "Seconds to wait for the sign-in.")
    var timeout: Int = 300
    @Option(
        help:
            "The browser command: %s is the URL, %p the profile directory (needed with --ephemeral). Default: $BROWSER, xdg-open, or for --ephemeral the first of chromium, google-chrome, firefox."
    )
    var browser: String?
    @Flag(help: "Print the token values instead of redacting them.")
    var showTokens = false

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be a positive number of seconds") }
        guard let url = URL(string: issuer), url.scheme != nil, url.host != nil else {
            throw ValidationError("--issuer must be an absolute URL such as https://accounts.example.com")
        }
    }

    func run() async throws {
        let client = OAuthClient()
        let configuration: OpenIDConfiguration
        do {
            configuration = try await client.discover(issuer: URL(string: issuer)!)
        } catch {
            throw CommandError.invalid("cannot use \(issuer): \(error.message)")
        }

        let callback: ASWebAuthenticationSession.Callback
        let redirectURI: URL
        var loopback: ASWebAuthenticationSession.LoopbackRedirect?
        if redirect == "loopback" {
            let opened: ASWebAuthenticationSession.LoopbackRedirect
            do {
                opened = try await .open(path: "/callback")
            } catch {
                throw CommandError.io("cannot listen on 127.0.0.1 for the redirect: \(error)")
            }
            loopback = opened
            callback = .loopback(opened)
            redirectURI = opened.url
        } else {
            do {
                _ = try SchemeRegistration.validate(scheme: redirect)
            } catch {
                throw CommandError.invalid(
                    "--redirect must be loopback or a URL scheme such as com.example.app: \(error)"
                )
            }
            guard let uri = URL(string: "\(redirect):/callback") else {
                throw CommandError.invalid("--redirect \(redirect) does not make a URL")
            }
            callback = .customScheme(redirect)
            redirectURI = uri
            if SchemeRegistration().isRegistered(scheme: redirect) == false {
                FileHandle.write(
                    "warning: the desktop does not send \(redirect): URLs to Keyport, so the redirect may never arrive; run `keyport url-scheme register \(redirect)` first\n",
                    to: .standardError
                )
            }
        }
        defer { loopback?.close() }

        let scopes = scope.split(separator: " ").map(String.init)
        let request = AuthorizationRequest(
            authorizationEndpoint: configuration.authorizationEndpoint,
            clientID: clientID,
            redirectURI: redirectURI,
            scopes: scopes
        )
        FileHandle.write(
            "Open this address in a browser to sign in:\n\(request.url.absoluteString)\n",
            to: .standardError
        )

        let session = WebAuthenticationSession(
            timeout: .seconds(timeout),
            browser: browser.map { .command($0.split(separator: " ").map(String.init)) } ?? .automatic,
            presentURL: { _, reason in
                // The address is already on standard error; say why no browser opened.
                FileHandle.write("(no browser was opened: \(reason); waiting for the sign-in)\n", to: .standardError)
            },
            callbackRefused: {
                FileHandle.write(
                    "keyport: a sign-in answer came back with a state that is not this sign-in's (forged, or from an earlier attempt): it was refused; still waiting for yours (Ctrl-C stops)\n",
                    to: .standardError
                )
            }
        )
        // Ctrl-C, SIGTERM or SIGHUP while waiting cancel the session, which stops the browser
        // Keyport launched and removes its profile before keyport ends by that signal.
        let authorizationURL = request.url
        let browserSession: WebAuthenticationSession.BrowserSession = ephemeral ? .ephemeral : .shared
        let (outcome, signal) = await TerminationSignals.cancelling {
            try await session.authenticate(
                using: authorizationURL,
                callback: callback,
                preferredBrowserSession: browserSession,
                additionalHeaderFields: [:]
            )
        }
        if let signal {
            let cleanup = ephemeral ? "; the browser Keyport launched was stopped and its profile removed" : ""
            FileHandle.write(
                "keyport: sign-in interrupted by \(TerminationSignals.name(signal))\(cleanup)\n",
                to: .standardError
            )
            TerminationSignals.end(by: signal)
        }
        let callbackURL: URL
        do {
            callbackURL = try outcome.get()
        } catch let error as ASWebAuthenticationSessionError {
            throw CommandError.invalid(Self.message(for: error))
        }

        let token: TokenResponse
        do throws(OAuthError) {
            let code = try request.authorizationCode(
                from: callbackURL,
                matching: callback.matcher,
                expectedIssuer: configuration.issuer
            )
            token = try await client.redeem(code, for: request, at: configuration.tokenEndpoint)
            if token.idToken != nil {
                // Keyport does not verify ID token signatures: the claims are read only from an
                // answer that came straight from the token endpoint (TLS or loopback, no redirect).
                try IDTokenClaims(unverifiedFrom: token).check(
                    issuer: configuration.issuer,
                    clientID: clientID,
                    nonce: request.nonce
                )
            }
        } catch {
            throw CommandError.invalid(
                error.code == .accessDenied ? "sign-in declined: \(error.message)" : "sign-in failed: \(error.message)"
            )
        }
        FileHandle.write(Self.json(token, reveal: showTokens) + "\n")
    }

    static func message(for error: ASWebAuthenticationSessionError) -> String {
        switch error.cause {
        case .timedOut: "sign-in timed out: no redirect arrived in time"
        case .browserClosed: "sign-in cancelled: the browser was closed"
        case .cancelled, nil: "sign-in cancelled"
        case .failed(let reason): "sign-in could not start: \(reason)"
        }
    }

    /// The token response as RFC 6749 names it; token values redacted unless `reveal`.
    static func json(_ token: TokenResponse, reveal: Bool) -> String {
        func value(_ secret: OAuthSecretValue) -> String { reveal ? secret.rawValue : secret.description }
        var object: [String: Any] = ["access_token": value(token.accessToken), "token_type": token.tokenType]
        if let expiresIn = token.expiresIn { object["expires_in"] = expiresIn }
        if let refreshToken = token.refreshToken { object["refresh_token"] = value(refreshToken) }
        if let idToken = token.idToken { object["id_token"] = value(idToken) }
        if let scope = token.scope { object["scope"] = scope }
        let data = try! JSONSerialization.data(
            withJSONObject: object,
            options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        )
        return String(decoding: data, as: UTF8.self)
    }
}
