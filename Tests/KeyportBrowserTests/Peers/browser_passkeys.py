"""Plays the person at a real browser with Keyport's extension on a real relying party's site, for
Keyport's passkey tests in the browsers.

Usage: browser_passkeys.py --browser chromium|firefox --keyport PATH --extension DIR --work DIR
                           [--bench N]

Set up as browser_autofill.py's (keyportd, Keyport Vault unlocked and enabled, the host manifest
written), whose browsers, person and test CA this uses. The relying party is a Flask site on
https://site.test (the test CA's certificate) verifying with py_webauthn, its page calling
navigator.credentials as sites do (ArrayBuffers in and out, read as SimpleWebAuthn reads them). The
person signs up, signs in from the extension's prompt and from the username field's menu
(conditional mediation), signs in with the vault locked (the agent gives its passphrase), hands a
request to the browser's own WebAuthn, and meets a page that clicks for them, a page that covers the
prompt, and a frame of another site with and without the permission. Prints one JSON object of
what the page and the relying party saw; it asserts nothing: the Swift test does.

--bench N: only measures N sign-ins in a warm browser: the milliseconds from the person's click in
the prompt to the credential in the page, as the page world reports them (Chromium), and the
registration's, beside the first (cold) sign-in.
"""
import json
import os
import secrets
import sys
import threading
import time

import browser_autofill as autofill

# --- The relying party ------------------------------------------------------------------------------

PAGE = """<!doctype html><html><head><title>passkeys</title>{head}</head><body>
<form id="form" onsubmit="return false">
<input id="user" name="username" autocomplete="username webauthn" value="{user}">
<button type="button" id="signup">Sign up</button>
<button type="button" id="signin">Sign in with a passkey</button>
</form>
<script>
const b64 = (buffer) => btoa(String.fromCharCode(...new Uint8Array(buffer))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
const bytes = (text) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0)).buffer;
async function post(path, body) {{
  const response = await fetch(path, {{method: "POST", headers: {{"Content-Type": "application/json"}}, body: JSON.stringify(body)}});
  return response.json();
}}
window.outcomes = [];
async function signup() {{
  try {{
    const options = await post("/register/begin", {{name: document.getElementById("user").value}});
    const publicKey = {{...options, challenge: bytes(options.challenge), user: {{...options.user, id: bytes(options.user.id)}},
      excludeCredentials: (options.excludeCredentials || []).map((c) => ({{...c, id: bytes(c.id)}}))}};
    const credential = await navigator.credentials.create({{publicKey}});
    const response = credential.response;
    const json = {{id: credential.id, rawId: b64(credential.rawId), type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment,
      response: {{clientDataJSON: b64(response.clientDataJSON), attestationObject: b64(response.attestationObject),
        transports: response.getTransports(), publicKeyAlgorithm: response.getPublicKeyAlgorithm(),
        publicKey: b64(response.getPublicKey()), authenticatorData: b64(response.getAuthenticatorData())}},
      clientExtensionResults: credential.getClientExtensionResults()}};
    const verdict = await post("/register/finish", json);
    window.outcomes.push({{op: "create", ...verdict, shaped: credential instanceof PublicKeyCredential &&
      response instanceof AuthenticatorAttestationResponse && credential.toJSON().rawId === json.rawId}});
  }} catch (error) {{
    window.outcomes.push({{op: "create", error: error.name, message: error.message}});
  }}
}}
async function signin(mediation, signal) {{
  const op = mediation || "get";
  try {{
    const options = await post("/signin/begin", {{unknown: location.search.includes("unknown")}});
    const publicKey = {{...options, challenge: bytes(options.challenge),
      allowCredentials: (options.allowCredentials || []).map((c) => ({{...c, id: bytes(c.id)}}))}};
    const credential = await navigator.credentials.get({{publicKey, mediation, signal}});
    const received = performance.now();
    const response = credential.response;
    const json = {{id: credential.id, rawId: b64(credential.rawId), type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment,
      response: {{clientDataJSON: b64(response.clientDataJSON), authenticatorData: b64(response.authenticatorData),
        signature: b64(response.signature), userHandle: response.userHandle ? b64(response.userHandle) : null}},
      clientExtensionResults: credential.getClientExtensionResults()}};
    const verdict = await post("/signin/finish", json);
    window.outcomes.push({{op, ...verdict, received: performance.timeOrigin + received,
      shaped: credential instanceof PublicKeyCredential && response instanceof AuthenticatorAssertionResponse}});
  }} catch (error) {{
    window.outcomes.push({{op, error: error.name, message: error.message}});
  }}
}}
document.getElementById("signup").addEventListener("click", signup);
document.getElementById("signin").addEventListener("click", () => signin(undefined));
Promise.all([
  PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable(),
  PublicKeyCredential.isConditionalMediationAvailable(),
]).then(([platform, conditional]) => {{
  window.capabilities = {{platform, conditional}};
  if (conditional && location.search.includes("conditional")) signin("conditional");
}});
</script>{after}</body></html>"""

# The page clicks the prompt itself, every way a script can, once it is there.
SYNTHETIC = """<script>
new MutationObserver(() => {
  const host = [...document.documentElement.children].find((e) => e.tagName === "DIV");
  if (!host) return;
  setTimeout(() => {
    const r = host.getBoundingClientRect();
    for (const target of [host, document.elementFromPoint(r.left + 60, r.top + 130)]) {
      for (const type of ["pointerdown", "mousedown", "pointerup", "mouseup", "click"]) {
        target && target.dispatchEvent(new MouseEvent(type, {bubbles: true, clientX: r.left + 60, clientY: r.top + 130}));
      }
      target && target.click && target.click();
    }
    window.clicked = true;
  }, 900);
}).observe(document.documentElement, {childList: true});
</script>"""

# A page of another site framing the relying party's, without or with WebAuthn's permission; the
# frame at the page's corner, so that its places are the page's.
FRAMED = """<!doctype html><html><body style="margin:0">
<iframe id="child" src="{src}" {allow} style="position:absolute;left:0;top:0;width:900px;height:500px;border:0"></iframe>
</body></html>"""
ALLOW = 'allow="publickey-credentials-get *; publickey-credentials-create *"'


def relying_party(port_holder):
    """The Flask app: registration and sign-in, verified by py_webauthn, for rpId site.test."""
    from flask import Flask, request
    import webauthn
    from webauthn.helpers import base64url_to_bytes, bytes_to_base64url, options_to_json
    from webauthn.helpers.cose import COSEAlgorithmIdentifier
    from webauthn.helpers.structs import AuthenticatorSelectionCriteria, ResidentKeyRequirement

    app = Flask("relying-party")
    state = {"challenge": None, "credentials": {}}
    rp_id = "site.test"

    def origin():
        return f"https://site.test:{port_holder['port']}"

    @app.get("/")
    def index():
        query = request.args
        head = autofill.ATTACK % json.dumps(query["attack"]) if "attack" in query else ""
        after = SYNTHETIC if "synthetic" in query else ""
        page = PAGE.format(head=head, after=after, user=query.get("user", ""))
        # The top document's own policy may forbid WebAuthn.
        headers = {"Permissions-Policy": "publickey-credentials-get=(), publickey-credentials-create=()"} if "denied" in query else {}
        return page, 200, headers

    @app.get("/framed")
    def framed():
        """The relying party's page in a frame (of whatever site serves this one)."""
        allow = ALLOW if "allow" in request.args else ""
        return FRAMED.format(src=f"https://site.test:{port_holder['port']}/", allow=allow)

    @app.get("/nested")
    def nested():
        """The relying party's page in a frame of another site's page, in a frame of its own site's."""
        return FRAMED.format(src=f"https://evil.test:{port_holder['port']}/framed?allow", allow=ALLOW)

    @app.post("/register/begin")
    def register_begin():
        name = request.get_json().get("name") or "alice@site.test"
        options = webauthn.generate_registration_options(
            rp_id=rp_id, rp_name="Site", user_name=name, user_id=secrets.token_bytes(16),
            authenticator_selection=AuthenticatorSelectionCriteria(resident_key=ResidentKeyRequirement.REQUIRED),
            supported_pub_key_algs=[COSEAlgorithmIdentifier.ECDSA_SHA_256, COSEAlgorithmIdentifier.EDDSA])
        state["challenge"] = options.challenge
        state["user"] = name
        return options_to_json(options), 200, {"Content-Type": "application/json"}

    @app.post("/register/finish")
    def register_finish():
        try:
            verified = webauthn.verify_registration_response(
                credential=request.get_data(as_text=True), expected_challenge=state["challenge"],
                expected_origin=origin(), expected_rp_id=rp_id)
        except Exception as error:
            return {"ok": False, "why": str(error)}
        state["credentials"][bytes_to_base64url(verified.credential_id)] = {
            "key": verified.credential_public_key, "count": verified.sign_count, "user": state["user"]}
        return {"ok": True, "aaguid": str(verified.aaguid), "backedUp": verified.credential_backed_up,
                "userVerified": verified.user_verified}

    @app.post("/signin/begin")
    def signin_begin():
        # `unknown`: the site allows only a credential nobody has.
        from webauthn.helpers.structs import PublicKeyCredentialDescriptor
        allowed = [PublicKeyCredentialDescriptor(id=secrets.token_bytes(16))] if request.get_json().get("unknown") else None
        options = webauthn.generate_authentication_options(rp_id=rp_id, allow_credentials=allowed)
        state["challenge"] = options.challenge
        return options_to_json(options), 200, {"Content-Type": "application/json"}

    @app.post("/signin/finish")
    def signin_finish():
        body = request.get_data(as_text=True)
        stored = state["credentials"].get(json.loads(body).get("rawId"))
        if stored is None:
            return {"ok": False, "why": "no such credential registered here"}
        try:
            verified = webauthn.verify_authentication_response(
                credential=body, expected_challenge=state["challenge"], expected_origin=origin(),
                expected_rp_id=rp_id, credential_public_key=stored["key"],
                credential_current_sign_count=stored["count"])
        except Exception as error:
            return {"ok": False, "why": str(error)}
        stored["count"] = verified.new_sign_count
        client_data = json.loads(base64url_to_bytes(json.loads(body)["response"]["clientDataJSON"]))
        return {"ok": True, "user": stored["user"], "backedUp": verified.credential_backed_up,
                "userVerified": verified.user_verified, "crossOrigin": client_data.get("crossOrigin"),
                "topOrigin": client_data.get("topOrigin")}

    return app


def serve_relying_party(certificate):
    from werkzeug.serving import make_server
    import ssl
    holder = {}
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    server = make_server("127.0.0.1", 0, relying_party(holder), threaded=True, ssl_context=context)
    holder["port"] = server.server_port
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return holder["port"]


# --- The person ------------------------------------------------------------------------------------

class Passkeys:
    def __init__(self, person, browser, port):
        self.person = person
        self.browser = browser
        self.site = f"https://site.test:{port}"
        self.port = port

    def outcomes(self):
        return self.browser.run("return window.outcomes || []") or []

    def wait_outcome(self, count, wait=15.0):
        """The page's outcomes once there are `count`."""
        deadline = time.time() + wait
        outcomes = self.outcomes()
        while len(outcomes) < count and time.time() < deadline:
            time.sleep(0.1)
            outcomes = self.outcomes()
        return outcomes

    def prompt(self, button, row, query="", wait=15.0):
        """Opens the page, clicks `button` (a trusted click: the page's own gesture), and the
        prompt's row `row` once it is there: what the page and the relying party saw."""
        self.browser.open(f"{self.site}/{query}")
        before = len(self.outcomes())
        self.browser.click(button)
        rect = self.person.menu()
        outcome = {"prompt": rect is not None}
        if rect:
            outcome["size"] = [rect["width"], rect["height"]]
            self.person.choose(rect, row, save=True)
        outcomes = self.wait_outcome(before + 1, wait)
        outcome["page"] = outcomes[before] if len(outcomes) > before else None
        if outcome["page"] is None:
            # For whoever reads a failure: what the prompt and the extension said (Chromium).
            outcome["said"] = self.person.said()
            outcome["console"] = self.browser.logs()
        return outcome

    def refused_then_allowed(self, query, stop, person_clicks=True):
        """A page that attacks the prompt: its own clicks, and the person's click meanwhile
        (`person_clicks`), sign nothing; once the page stops (`stop`, a script), the person's
        click signs in."""
        self.browser.open(f"{self.site}/{query}")
        self.browser.click("signin")
        rect = self.person.menu()
        outcome = {"prompt": rect is not None}
        if not rect:
            return outcome
        time.sleep(1.2)  # the page's own clicks, if it makes them
        if person_clicks:
            self.person.choose(rect, 0, save=True)
        time.sleep(1.5)
        outcome["attacked"] = self.outcomes()
        outcome["said"] = self.person.said()
        self.browser.run(stop)
        time.sleep(autofill.STEADY)
        self.person.choose(rect, 0, save=True)
        outcomes = self.wait_outcome(1)
        outcome["after"] = outcomes[0] if outcomes else None
        return outcome


def scenarios(person, browser, port):
    keys = Passkeys(person, browser, port)
    site = keys.site
    results = {"browser": browser.name}

    browser.open(f"{site}/")
    time.sleep(1)
    results["capabilities"] = browser.run("return window.capabilities || null")

    # Sign up: the prompt offers Keyport Vault; the relying party verifies the registration.
    results["signup"] = keys.prompt("signup", 0, "?user=alice@site.test")
    # Sign in from the prompt: the one passkey is the first row.
    results["signin"] = keys.prompt("signin", 0)
    # A page that floods the extension with requests of its own making (the capability query, and
    # sign-ins while one is pending): they are answered, and the person still signs in after.
    browser.open(f"{site}/")
    time.sleep(1)
    results["flood"] = {"answered": browser.run("""return new Promise((done) => {
        let answered = 0;
        document.addEventListener("keyport:webauthn-reply", () => { if (++answered === 2000) done(answered); });
        for (let id = 100000; id < 102000; id++) {
          document.dispatchEvent(new CustomEvent("keyport:webauthn-request", {detail: JSON.stringify({id, op: "capabilities"})}));
        }
        setTimeout(() => done(answered), 20000);
      });""")}
    results["flood"].update(keys.prompt("signin", 0))
    # Cancel (the prompt's last row: the passkey, "another device", "Cancel"): NotAllowedError.
    results["cancel"] = keys.prompt("signin", 2)
    # A sign-in no passkey here can answer: the prompt is the size of one that lists a passkey
    # (the page sees its size); its "Cancel", the second row, is NotAllowedError.
    results["unknown"] = keys.prompt("signin", 1, "?unknown")
    # A page whose own permissions policy forbids WebAuthn: refused (Chromium says the policy).
    results["policy-denied"] = keys.prompt("signin", 0, "?denied", wait=5)
    # Conditional: the page waits; the username field's menu lists the passkey first.
    browser.open(f"{site}/?conditional")
    time.sleep(1)
    browser.click("user")
    rect = person.menu()
    results["conditional"] = {"menu": rect is not None}
    if rect:
        person.choose(rect, 0)
    outcomes = keys.wait_outcome(1)
    results["conditional"]["page"] = outcomes[0] if outcomes else None

    # Locked: the vault asks the agent for its passphrase, then signs.
    person.keyport("vault", "lock")
    person.start_agent("accept-first")
    results["locked"] = keys.prompt("signin", 0, wait=30)
    results["locked"]["agent"] = person.stop_agent()

    # "A security key or another device": the request is the browser's own (Chromium: its virtual
    # authenticator, which the relying party sees by its AAGUID; Firefox: no authenticator).
    if hasattr(browser, "driver"):
        from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions
        options = VirtualAuthenticatorOptions()
        options.protocol = Protocol.CTAP2
        options.transport = Transport.USB
        options.has_resident_key = True
        options.has_user_verification = True
        options.is_user_verified = True
        browser.driver.add_virtual_authenticator(options)
        results["elsewhere"] = keys.prompt("signup", 1, "?user=bob@site.test")
        browser.driver.remove_virtual_authenticator()
    else:
        results["elsewhere"] = keys.prompt("signup", 1, "?user=bob@site.test", wait=5)

    # The page clicks the prompt itself: nothing is signed; the person's own click then signs in.
    results["synthetic"] = keys.refused_then_allowed("?synthetic", "void 0", person_clicks=False)
    results["synthetic"]["clicked"] = browser.run("return window.clicked === true")
    # The page covers the prompt with a popover of its own: refused until it stops.
    results["covered"] = keys.refused_then_allowed("?attack=popover", "window.stopAttack()")

    def framed_signin(url, depth):
        """Opens `url`, clicks "Sign in" in its frame `depth` frames down, and the prompt's first
        row if it comes there: whether it came, and what the framed page saw."""
        browser.open(url)
        time.sleep(1.5)

        def into_frame():
            for _ in range(depth):
                browser.frame("child")

        into_frame()
        browser.click("signin")
        # The prompt is drawn in the frame's document, whose request it answers.
        rect = person.menu(wait=4)
        outcome = {"prompt": rect is not None}
        browser.top()
        if rect:
            person.choose(rect, 0, save=True)
        into_frame()
        outcomes = keys.wait_outcome(1, wait=70)
        browser.top()
        outcome["page"] = outcomes[0] if outcomes else None
        return outcome

    # A frame of another site: without the permission, Keyport offers nothing and the page is
    # refused; with it, Chromium (which says what the policy allows) signs in through Keyport.
    results["frame-denied"] = framed_signin(f"https://evil.test:{port}/framed", 1)
    results["frame-allowed"] = framed_signin(f"https://evil.test:{port}/framed?allow", 1)
    # The relying party's page in a frame of another site inside its own site's page: all allowed,
    # and still cross-origin (Chromium, which gives the frame's ancestors).
    results["frame-nested"] = framed_signin(f"{site}/nested", 2)
    return results


def bench(person, browser, port, runs):
    """Click in the prompt → credential in the page (the content script's count, Chromium), warm,
    beside the first (cold) sign-in; and a registration's."""
    keys = Passkeys(person, browser, port)

    def answered():
        lines = [line for line in browser.logs() if "passkey answered" in line]
        browser.console.clear()
        return float(lines[-1].split(" ms after")[0].split()[-1]) if lines else None

    registration = keys.prompt("signup", 0, "?user=bench@site.test")
    created = answered()
    times = []
    for _ in range(runs + 1):
        keys.prompt("signin", 0)
        times.append(answered())
    return {"registration": created, "registered": registration, "cold": times[0], "warm": times[1:]}


def main():
    args = autofill.arguments()
    ca, certificate = autofill.make_ca(args.work)
    port = serve_relying_party(certificate)
    person = autofill.Person(args, None, {"https": port})
    if not autofill.unlock(person):
        return 1
    return autofill.play(args, ca, person,
                         lambda browser: bench(person, browser, port, args.bench) if args.bench else scenarios(person, browser, port))


if __name__ == "__main__":
    sys.exit(main())
