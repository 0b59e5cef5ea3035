import Foundation
import KeyportSystem
import KeyportTestSupport
import Testing

/// Passkeys on a real relying party's site (Flask + py_webauthn over https) in real Chromium and
/// Firefox ESR, with Keyport's extension, keyportd and Keyport Vault: Peers/browser_passkeys.py
/// plays the person and reports what the page and the relying party saw.
@Suite("Passkeys in Chromium and Firefox", .serialized)
struct BrowserPasskeyTests {
    /// Keyport Vault's AAGUID, which the relying party reads from a registration.
    private static let vaultAAGUID = "721f7147-1b56-4e08-9f31-bb8d28eb1f09"

    private func check(_ results: [String: Any], browser: String) {
        func scenario(_ name: String) -> [String: Any] { results[name] as? [String: Any] ?? [:] }
        func page(_ name: String, _ key: String = "page") -> [String: Any] {
            scenario(name)[key] as? [String: Any] ?? [:]
        }
        let context = "\(browser): \(results)"

        // The page learns that a platform authenticator and conditional sign-in are there.
        let capabilities = results["capabilities"] as? [String: Any] ?? [:]
        #expect(capabilities["platform"] as? Bool == true && capabilities["conditional"] as? Bool == true, "\(context)")
        // Sign up from the prompt: a registration py_webauthn verifies, made by Keyport Vault
        // (its AAGUID, backed up), handed to the page as the browser's own objects.
        #expect(scenario("signup")["prompt"] as? Bool == true, "\(context)")
        let signup = page("signup")
        #expect(signup["ok"] as? Bool == true, "\(context)")
        #expect(signup["aaguid"] as? String == Self.vaultAAGUID, "\(context)")
        #expect(signup["backedUp"] as? Bool == true && signup["shaped"] as? Bool == true, "\(context)")
        // Sign in from the prompt, and from the username field's menu while the page waits for a
        // conditional sign-in: verified, as the account that signed up; a click is presence, not
        // verification.
        for name in ["signin", "conditional"] {
            let signin = page(name)
            #expect(signin["ok"] as? Bool == true, "\(name): \(context)")
            #expect(signin["user"] as? String == "alice@site.test", "\(name): \(context)")
            #expect(
                signin["shaped"] as? Bool == true && signin["userVerified"] as? Bool == false,
                "\(name): \(context)"
            )
        }
        #expect(page("conditional")["op"] as? String == "conditional", "\(context)")
        // 2 000 capability queries the page made up are each answered, and the person signs in after.
        #expect(scenario("flood")["answered"] as? Int == 2000, "\(context)")
        #expect(page("flood")["ok"] as? Bool == true, "\(context)")
        // Cancel in the prompt: NotAllowedError, as the browser's own says.
        #expect(page("cancel")["error"] as? String == "NotAllowedError", "\(context)")
        // A sign-in no passkey of Keyport's can answer has a prompt of the same size as one that
        // lists a passkey: the page cannot tell from it whether the person has one.
        #expect(page("unknown")["error"] as? String == "NotAllowedError", "\(context)")
        let sizes = [scenario("signin")["size"], scenario("unknown")["size"]].map { $0 as? [Double] }
        #expect(sizes[0] != nil && sizes[0] == sizes[1], "\(sizes): \(context)")
        // Locked: the vault asked for its passphrase through the agent, then signed.
        #expect(page("locked")["ok"] as? Bool == true, "\(context)")
        #expect(
            (scenario("locked")["agent"] as? String)?.contains("Keyport Vault: gave the secret it asked for") == true,
            "\(context)"
        )
        // "A security key or another device": not Keyport's; the prompt is gone.
        #expect(page("elsewhere")["aaguid"] as? String != Self.vaultAAGUID, "\(context)")
        #expect(scenario("elsewhere")["prompt"] as? Bool == true, "\(context)")
        // The page clicking the prompt itself, or covering it, signs nothing; the person's own
        // click, once the page stops, signs in.
        #expect(scenario("synthetic")["clicked"] as? Bool == true, "\(context)")
        for name in ["synthetic", "covered"] {
            #expect(scenario(name)["prompt"] as? Bool == true, "\(name): \(context)")
            #expect((scenario(name)["attacked"] as? [Any])?.isEmpty == true, "\(name): \(context)")
            #expect(page(name, "after")["ok"] as? Bool == true, "\(name): \(context)")
        }
        // A frame of another site without WebAuthn's permission: no prompt, and refused.
        #expect(scenario("frame-denied")["prompt"] as? Bool == false, "\(context)")
        #expect(page("frame-denied")["error"] as? String == "NotAllowedError", "\(context)")
    }

    @Test("Chromium: sign up and in with Keyport Vault's passkeys on a py_webauthn site", .timeLimit(.minutes(10)))
    func chromium() async throws {
        let results = try await BrowserPerson.run(
            "browser_passkeys.py",
            browser: "chromium",
            importing: ["selenium", "flask", "webauthn"]
        )
        check(results, browser: "chromium")
        // The browser's own WebAuthn took the request: its virtual authenticator registered.
        let elsewhere = (results["elsewhere"] as? [String: Any])?["page"] as? [String: Any] ?? [:]
        #expect(elsewhere["ok"] as? Bool == true, "\(elsewhere)")
        // A frame given the permission: Chromium says so, and Keyport signs in there.
        let allowed = results["frame-allowed"] as? [String: Any] ?? [:]
        #expect(allowed["prompt"] as? Bool == true, "\(allowed)")
        let framed = allowed["page"] as? [String: Any] ?? [:]
        #expect(framed["ok"] as? Bool == true, "\(allowed)")
        // The relying party reads in the client data that it was framed, and by whom.
        #expect(framed["crossOrigin"] as? Bool == true, "\(allowed)")
        #expect((framed["topOrigin"] as? String)?.hasPrefix("https://evil.test:") == true, "\(allowed)")
        let signin = (results["signin"] as? [String: Any])?["page"] as? [String: Any] ?? [:]
        #expect(signin["crossOrigin"] as? Bool == false && signin["topOrigin"] as? String == nil, "\(signin)")
        // The site's page in a frame of another site in a page of its own: cross-origin still,
        // with its own site on top.
        let nested = results["frame-nested"] as? [String: Any] ?? [:]
        let inner = nested["page"] as? [String: Any] ?? [:]
        #expect(nested["prompt"] as? Bool == true && inner["ok"] as? Bool == true, "\(nested)")
        #expect(inner["crossOrigin"] as? Bool == true, "\(nested)")
        #expect((inner["topOrigin"] as? String)?.hasPrefix("https://site.test:") == true, "\(nested)")
        // A page whose own permissions policy forbids WebAuthn: no prompt, and refused.
        let denied = results["policy-denied"] as? [String: Any] ?? [:]
        #expect(denied["prompt"] as? Bool == false, "\(denied)")
        #expect((denied["page"] as? [String: Any])?["error"] as? String == "NotAllowedError", "\(denied)")
    }

    @Test("Firefox ESR: the same; a frame's requests are the browser's own", .timeLimit(.minutes(10)))
    func firefox() async throws {
        let results = try await BrowserPerson.run(
            "browser_passkeys.py",
            browser: "firefox",
            importing: ["marionette_driver", "flask", "webauthn"]
        )
        check(results, browser: "firefox")
        // Firefox does not say what a frame's permissions policy allows: Keyport leaves the frame
        // to the browser's own WebAuthn, permission or not.
        #expect((results["frame-allowed"] as? [String: Any])?["prompt"] as? Bool == false, "\(results)")
        #expect((results["frame-nested"] as? [String: Any])?["prompt"] as? Bool == false, "\(results)")
    }
}
