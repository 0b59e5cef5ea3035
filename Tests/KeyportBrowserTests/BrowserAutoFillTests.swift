import Foundation
import KeyportSystem
import KeyportTestSupport
import Testing

/// Keyport's browser extension in real Chromium (Selenium) and Firefox ESR (Marionette), with a real
/// keyportd and Keyport Vault as the provider: Peers/browser_autofill.py plays the person and
/// reports what each field held afterwards; these tests say what it must have held.
@Suite("AutoFill in Chromium and Firefox", .serialized)
struct BrowserAutoFillTests {
    /// What the person should find after each scenario, whatever the browser.
    private func check(_ results: [String: Any], browser: String) {
        func values(_ scenario: String, _ key: String = "values") -> [String: String] {
            ((results[scenario] as? [String: Any])?[key] as? [String: String]) ?? [:]
        }
        func menu(_ scenario: String) -> Bool { (results[scenario] as? [String: Any])?["menu"] as? Bool ?? false }
        let signedIn = ["user": "alice", "pass": "hunter2"]
        let empty = ["user": "", "pass": ""]
        let context = "\(browser): \(results)"

        // Filled on the person's choice in the menu: a sign-in form from either field, and one-time
        // codes in every shape a site asks for them (oathtool's code for the vault's secret).
        #expect(values("login") == signedIn, "\(context)")
        #expect(values("login-from-password") == signedIn, "\(context)")
        for page in ["otp", "otp-named", "otp-boxes"] {
            let codes = ((results[page] as? [String: Any])?["codes"] as? [String]) ?? []
            let typed = values(page).sorted { $0.key < $1.key }.map(\.value).joined()
            #expect(codes.contains(typed), "\(page): \(typed) not in \(codes): \(results[page] ?? "no outcome")")
        }
        // Nothing on load, nor on the page's focus() or the events it makes up; the person's click
        // into the field the page focused opens the menu.
        #expect(values("synthetic") == empty, "\(context)")
        #expect((results["synthetic"] as? [String: Any])?["menu"] as? Bool == false, "\(context)")
        #expect((results["synthetic"] as? [String: Any])?["clicked"] as? Bool == true, "\(context)")
        // What is saved for https is never offered to http on the same host; http's own is filled.
        #expect(values("http-page") == empty, "\(context)")
        #expect(values("http-own") == ["user": "bob", "pass": "plain-pass"], "\(context)")
        // The page hides, fades, clips, moves or covers the menu: the click fills nothing, and the
        // same click fills once the page stops.
        for attack in ["html-opacity", "html-transform", "html-scale", "popover", "dialog"] {
            #expect(menu("attack-\(attack)"), "\(attack): \(context)")
            #expect(values("attack-\(attack)", "attacked") == empty, "\(attack): \(context)")
            #expect(values("attack-\(attack)", "after") == signedIn, "\(attack): \(context)")
        }
        // The page fades, clips or zooms the menu's host, or takes it out of the top layer: refused
        // (and a menu the page touched stays refused).
        for attack in ["host-opacity", "host-clip", "host-zoom", "host-moved"] {
            #expect(values("attack-\(attack)", "attacked") == empty, "\(attack): \(context)")
        }
        // A box of the page's own, however high its z-index, is drawn under the menu (the top layer).
        #expect(values("attack-cover-div", "attacked") == signedIn, "\(context)")
        // Pseudo-elements the page draws from the menu's host (and from any element of <html>'s, or
        // in the top layer) are drawn under the menu, not over it: the menu is what the person sees
        // where it is (no pixel of the cover's colour inside it), and their click there fills.
        let pseudo = results["attack-pseudo-cover"] as? [String: Any] ?? [:]
        #expect(pseudo["menu"] as? Bool == true, "\(context)")
        #expect(pseudo["covered"] as? Int == 0, "\(context)")
        #expect(values("attack-pseudo-cover") == signedIn, "\(context)")
        // A cover the compositor slides over the menu while the page's main thread is blocked, gone
        // before the page draws again: the click meanwhile fills nothing (the page drew no frame to
        // check); once the page draws steadily again, the same click fills.
        #expect(menu("attack-blocked-cover"), "\(context)")
        #expect(values("attack-blocked-cover", "attacked") == empty, "\(context)")
        #expect(values("attack-blocked-cover", "after") == signedIn, "\(context)")
        // The page makes the menu the next Tab stop: the Tab reaches the menu, and Enter there
        // fills nothing (the name typed stays alone); ↓ from the field, then Enter, fills.
        let trap = results["keyboard-tab-trap"] as? [String: Any] ?? [:]
        #expect(trap["tabbed-into-menu"] as? Bool == true, "\(context)")
        #expect(values("keyboard-tab-trap", "attacked") == ["user": "mallory", "pass": ""], "\(context)")
        #expect(values("keyboard-tab-trap", "down") == signedIn, "\(context)")
        // A menu summoned under a still pointer: a press without a move in it fills nothing; after
        // a move, the same press fills.
        #expect((results["still-pointer"] as? [String: Any])?["summoned"] as? Bool == true, "\(context)")
        #expect(values("still-pointer", "pressed") == empty, "\(context)")
        #expect(values("still-pointer", "moved") == signedIn, "\(context)")
        // Hidden and transparent fields stay empty.
        #expect(
            values("decoys") == ["user": "alice", "pass": "hunter2", "decoy-offscreen": "", "decoy-transparent": ""],
            "\(context)"
        )
        // Only the document where the menu was: not a frame of another site in it, which is offered nothing.
        #expect(values("framed", "top") == signedIn, "\(context)")
        #expect(values("framed", "child") == empty, "\(context)")
        #expect(
            (results["framed"] as? [String: Any])?["child-said"] as? String
                == "Keyport has nothing saved for this site.",
            "\(context)"
        )
        // A sandboxed document at the site's own address (user content a site serves) is of no site.
        #expect(!menu("sandboxed") && values("sandboxed") == empty, "\(context)")
        if browser == "chromium" {
            // IntersectionObserver v2: a page of another site covering the frame the menu is in.
            #expect(values("frame-cover") == empty, "\(context)")
        }
        // A wider fit: not without an agent, not when the person says no; once they say yes, filled.
        #expect(menu("wider-no-agent") && values("wider-no-agent") == empty, "\(context)")
        #expect(values("wider-declined") == empty, "\(context)")
        #expect(values("wider-confirmed") == signedIn, "\(context)")
        let confirmed = (results["wider-confirmed"] as? [String: Any])?["agent"] as? String ?? ""
        #expect(
            confirmed.contains("you said yes to: No password is saved for https://login.site.test")
                && confirmed.contains("— alice (Keyport Vault)"),
            "\(confirmed)"
        )
        // "All passwords…": the person picks in the agent.
        #expect(values("all") == signedIn, "\(context)")
        // Locked: the vault asks for its passphrase through the agent.
        #expect(values("locked") == signedIn, "\(context)")
        let unlocking = (results["locked"] as? [String: Any])?["agent"] as? String
        #expect(unlocking?.contains("Keyport Vault: gave the secret it asked for") == true, "\(unlocking ?? "")")
        // Saved on submit once the person said so, from the offer on the next page: the vault gives
        // it for that site and user. A user name of 200 characters leaves the site shown whole.
        for scenario in ["save", "save-slow", "save-changed"] {
            let saved = results[scenario] as? [String: Any] ?? [:]
            #expect(saved["menu"] as? Bool == true, "\(scenario): \(context)")
            #expect(saved["page-ready"] as? Bool == true, "\(scenario): \(context)")
            #expect(saved["origin-shown"] as? Bool == true, "\(scenario): \(context)")
            #expect(saved["saved"] as? Bool == true, "\(scenario): \(context)")
        }
        // A sign-in with what Keyport filled offers nothing; one with another password for that
        // user offers to change it, which the vault asked the person to confirm.
        let unchanged = results["save-unchanged"] as? [String: Any] ?? [:]
        #expect(values("save-unchanged") == signedIn && unchanged["offer"] as? Bool == false, "\(context)")
        let changed = (results["save-changed"] as? [String: Any])?["agent"] as? String ?? ""
        #expect(changed.contains("Change the password of the user “alice”"), "\(changed)")
    }

    @Test(
        "Chromium: fill and save through keyportd, on a trusted click in the extension's frame only",
        .timeLimit(.minutes(10))
    )
    func chromium() async throws {
        let results = try await BrowserPerson.run("browser_autofill.py", browser: "chromium", importing: ["selenium"])
        check(results, browser: "chromium")
        // The page's console says how long a fill took (what the benchmark reads), and why a
        // click filled nothing when the menu's own frame had not refused it first.
        let console = (results["console"] as? [String]) ?? []
        #expect(console.contains { $0.contains("ms after the gesture") }, "\(console)")
        #expect(console.contains { $0.contains("not filled: the page is transformed") }, "\(console)")
        // The blocked page's click: refused for the frames the page did not draw.
        #expect(
            console.contains { $0.contains("the page drew no frame for") },
            "\(console) \(results["attack-blocked-cover"] ?? "")"
        )
        // The menu's page is not at the extension's fixed address, for a page to find.
        let fixed = results["fixed-address"] as? [String: Any] ?? [:]
        #expect(fixed["fetched"] as? Bool == false, "\(fixed)")
    }

    @Test("Firefox ESR: the same, without IntersectionObserver v2", .timeLimit(.minutes(10)))
    func firefox() async throws {
        let results = try await BrowserPerson.run(
            "browser_autofill.py",
            browser: "firefox",
            importing: ["marionette_driver"]
        )
        check(results, browser: "firefox")
    }
}
