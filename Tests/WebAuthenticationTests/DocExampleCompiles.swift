import Foundation
import WebAuthentication

// The catalog's example, compiled (not run) so the documentation cannot drift from the API.
func catalogExample(issuer: URL) async throws {
    let configuration = try await OAuthClient().discover(issuer: issuer)
    let receiver = try await LoopbackReceiver.start()  // http://127.0.0.1:PORT/callback
    let request = AuthorizationRequest(
        authorizationEndpoint: configuration.authorizationEndpoint,
        clientID: "my-cli",
        redirectURI: receiver.redirectURI,
        scopes: ["openid"]
    )
    let callback = try await AuthenticationFlow.run(
        url: request.url,
        receiver: receiver,
        browser: .shared(BrowserLauncher()),
        timeout: .seconds(300),
        presentURL: { url, reason in print("Open \(url) in a browser (\(reason))") }
    )
    let code = try request.authorizationCode(
        from: callback,
        matching: receiver.matcher,
        expectedIssuer: configuration.issuer
    )
    _ = try await OAuthClient().redeem(code, for: request, at: configuration.tokenEndpoint)
}
