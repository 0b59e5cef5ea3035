// The page world's navigator.credentials (browser/page/webauthn.js), run by node's own test runner
// in a DOM from jsdom, with the browser's WebAuthn classes stood in for and this test playing the
// extension's content script. The real browsers, a real relying party and keyportd are
// BrowserPasskeyTests'.
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { JSDOM } = require("jsdom");

const script = fs.readFileSync(path.join(__dirname, "..", "..", "browser", "page", "webauthn.js"), "utf8");

/// A secure page with the browser's WebAuthn stood in for (its own calls recorded in `native`),
/// page/webauthn.js loaded, and `answer(request)` as the extension: what it returns is the reply.
function page(answer) {
  const dom = new JSDOM("<!doctype html><body></body>", { url: "https://site.test/", runScripts: "outside-only" });
  const { window } = dom;
  const native = [];
  window.eval(`
    Object.defineProperty(window, "isSecureContext", { value: true });
    class CredentialsContainer {}
    CredentialsContainer.prototype.create = function (options) { window.nativeCalls.push(["create", options]); return Promise.resolve("browser's own"); };
    CredentialsContainer.prototype.get = function (options) { window.nativeCalls.push(["get", options]); return Promise.resolve("browser's own"); };
    window.CredentialsContainer = CredentialsContainer;
    Object.defineProperty(navigator, "credentials", { value: new CredentialsContainer() });
    window.PublicKeyCredential = function PublicKeyCredential() {};
    PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable = () => Promise.resolve(false);
    PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);
    window.AuthenticatorAttestationResponse = function AuthenticatorAttestationResponse() {};
    window.AuthenticatorAssertionResponse = function AuthenticatorAssertionResponse() {};
  `);
  window.nativeCalls = native;
  const requests = [];
  window.document.addEventListener("keyport:webauthn-request", (event) => {
    const request = JSON.parse(event.detail);
    if (answer === gone) return;
    // Taken, as the content script takes what it relays.
    event.preventDefault();
    if (request.op === "alive") return;
    requests.push(request);
    const reply = answer(request);
    if (reply === undefined) return;
    setTimeout(() => {
      window.document.dispatchEvent(new window.CustomEvent("keyport:webauthn-reply", { detail: JSON.stringify({ id: request.id, ...reply }) }));
    }, 0);
  });
  window.eval(script);
  return { window, native, requests };
}

/// No content script in the document (its extension went).
function gone() {}

/// A value of the page's realm as this one's, to compare.
function plain(value) {
  return JSON.parse(JSON.stringify(value));
}

const assertion = {
  id: "AQID",
  rawId: "AQID",
  type: "public-key",
  authenticatorAttachment: "platform",
  response: { clientDataJSON: "e30", authenticatorData: "AAAA", signature: "MEQ", userHandle: "dXNlcg" },
  clientExtensionResults: { prf: { results: { first: "AAECAw" } } },
};

/// The extension of a person with a provider of passkeys, signing in with `assertion`.
function withPasskeys(request) {
  if (request.op === "capabilities") return { passkeys: true };
  if (request.op === "get") return { credential: assertion };
  return undefined;
}

test("a sign-in goes to the extension as WebAuthn's JSON, and comes back as the browser's objects", async () => {
  const { window, native, requests } = page(withPasskeys);
  const challenge = new Uint8Array([251, 255, 0]);
  const credential = await window.eval("navigator.credentials").get({
    publicKey: { challenge, rpId: "site.test", allowCredentials: [{ type: "public-key", id: new Uint8Array([1, 2, 3]).buffer }], madeUp: 1 },
  });
  const asked = requests.find((request) => request.op === "get");
  // base64url without padding; a member WebAuthn does not define is left out, as a browser ignores it.
  assert.deepEqual(asked.options, { challenge: "-_8A", rpId: "site.test", allowCredentials: [{ type: "public-key", id: "AQID" }] });
  assert.equal(asked.mediation, null);
  assert.equal(native.length, 0);
  assert.ok(credential instanceof window.PublicKeyCredential);
  assert.ok(credential.response instanceof window.AuthenticatorAssertionResponse);
  assert.ok(credential.rawId instanceof window.ArrayBuffer || credential.rawId.constructor.name === "ArrayBuffer");
  assert.deepEqual([...new Uint8Array(credential.rawId)], [1, 2, 3]);
  assert.deepEqual([...new Uint8Array(credential.response.userHandle)], [...Buffer.from("user")]);
  assert.deepEqual([...new Uint8Array(credential.getClientExtensionResults().prf.results.first)], [0, 1, 2, 3]);
  assert.deepEqual(plain(credential.toJSON()), assertion);
});

test("a registration's response has the methods libraries call", async () => {
  const registration = {
    id: "AQID",
    rawId: "AQID",
    type: "public-key",
    response: { clientDataJSON: "e30", attestationObject: "oA", authenticatorData: "AAAA", transports: ["internal", "hybrid"], publicKey: "MCo", publicKeyAlgorithm: -7 },
    clientExtensionResults: { credProps: { rk: true } },
  };
  const { window, requests } = page((request) => (request.op === "capabilities" ? { passkeys: true } : { credential: registration }));
  const credential = await window.eval("navigator.credentials").create({
    publicKey: { rp: { name: "Site", icon: "x" }, user: { id: new Uint8Array([9]), name: "alice", displayName: "Alice" }, challenge: new Uint8Array([1]), pubKeyCredParams: [{ type: "public-key", alg: -7 }] },
  });
  assert.deepEqual(requests.find((request) => request.op === "create").options.rp, { name: "Site" });
  assert.ok(credential.response instanceof window.AuthenticatorAttestationResponse);
  assert.equal(credential.response.getPublicKeyAlgorithm(), -7);
  assert.deepEqual(Array.from(credential.response.getTransports()), ["internal", "hybrid"]);
  assert.equal(credential.response.getPublicKey().byteLength, 2);
  assert.deepEqual(plain(credential.getClientExtensionResults()), { credProps: { rk: true } });
});

test("without a provider of passkeys, or on the person's 'another device', the browser's own answers", async () => {
  const options = { publicKey: { challenge: new Uint8Array([1]) } };
  const none = page((request) => (request.op === "capabilities" ? { passkeys: false } : undefined));
  assert.equal(await none.window.eval("navigator.credentials").get(options), "browser's own");
  assert.equal(none.native[0][1], options);
  assert.equal(await none.window.eval("PublicKeyCredential").isConditionalMediationAvailable(), false);

  const elsewhere = page((request) => (request.op === "capabilities" ? { passkeys: true } : { fallback: true }));
  assert.equal(await elsewhere.window.eval("navigator.credentials").get(options), "browser's own");
  assert.equal(elsewhere.native.length, 1);
  assert.equal(await elsewhere.window.eval("PublicKeyCredential").isConditionalMediationAvailable(), true);
  assert.equal(await elsewhere.window.eval("PublicKeyCredential").isUserVerifyingPlatformAuthenticatorAvailable(), true);

  // A password or any other credential is never Keyport's here.
  const other = page(withPasskeys);
  assert.equal(await other.window.eval("navigator.credentials").get({ password: true }), "browser's own");
});

test("a refusal is the DOMException WebAuthn names; an abort withdraws the request", async () => {
  const refused = page((request) => (request.op === "capabilities" ? { passkeys: true } : { error: "InvalidStateError", message: "a passkey the site excluded is already yours" }));
  await assert.rejects(refused.window.eval("navigator.credentials").create({ publicKey: { challenge: new Uint8Array([1]), user: { id: new Uint8Array([1]), name: "a", displayName: "a" }, rp: { name: "S" }, pubKeyCredParams: [] } }), (error) => {
    assert.equal(error.name, "InvalidStateError");
    assert.match(error.message, /excluded/);
    return true;
  });

  const waiting = page((request) => (request.op === "capabilities" ? { passkeys: true } : undefined));
  const controller = new waiting.window.AbortController();
  const pending = waiting.window.eval("navigator.credentials").get({ publicKey: { challenge: new Uint8Array([1]) }, mediation: "conditional", signal: controller.signal });
  await new Promise((resolve) => setTimeout(resolve, 10));
  controller.abort();
  await assert.rejects(pending, (error) => error.name === "AbortError");
  const get = waiting.requests.find((request) => request.op === "get");
  assert.equal(get.mediation, "conditional");
  assert.ok(waiting.requests.some((request) => request.op === "cancel" && request.id === get.id));
});

test("an extension that never answers leaves the page its browser's own, and is asked again next time", async () => {
  let asked = 0;
  const silent = page((request) => {
    if (request.op === "capabilities") asked += 1;
    return undefined;
  });
  const options = { publicKey: { challenge: new Uint8Array([1]) } };
  assert.equal(await silent.window.eval("navigator.credentials").get(options), "browser's own");
  assert.equal(await silent.window.eval("PublicKeyCredential").isConditionalMediationAvailable(), false);
  assert.equal(asked, 2);
});

test("with the extension's script gone from the document, everything is the browser's own at once", async () => {
  const { window, native } = page(gone);
  const options = { publicKey: { challenge: new Uint8Array([1]) } };
  assert.equal(await window.eval("navigator.credentials").get(options), "browser's own");
  assert.equal(await window.eval("PublicKeyCredential").isConditionalMediationAvailable(), false);
  assert.equal(native.length, 1);
});
