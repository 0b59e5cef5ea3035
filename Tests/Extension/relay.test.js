// The content script's relay of a page's passkey requests (browser/content/webauthn.js), run by
// node's own test runner in a DOM from jsdom, this test playing the page world and the rest of the
// content script. The whole way, in real browsers, is BrowserPasskeyTests'.
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { JSDOM } = require("jsdom");

const relay = fs.readFileSync(path.join(__dirname, "..", "..", "browser", "content", "webauthn.js"), "utf8");

/// A document with the relay loaded: `ask(request)` sends a request as the page world does, and
/// `replies` holds what the page world heard back.
function document() {
  const dom = new JSDOM("<!doctype html><body></body>", { url: "https://site.test/", runScripts: "outside-only" });
  const { window } = dom;
  window.eval(relay);
  const replies = [];
  window.document.addEventListener("keyport:webauthn-reply", (event) => replies.push(JSON.parse(event.detail)));
  // Whether the relay took the request (it cancels what it takes).
  const ask = (request) => !window.document.dispatchEvent(new window.CustomEvent("keyport:webauthn-request", { detail: JSON.stringify(request), cancelable: true }));
  return { window, replies, ask, K: window.eval('globalThis[Symbol.for("org.keyport.AutoFill")]') };
}

test("a request the extension can no longer take is the browser's own at once", () => {
  const { replies, ask, K } = document();
  K.post = () => {
    throw new Error("Extension context invalidated.");
  };
  K.webauthnConnected();
  ask({ id: 1, op: "get", options: { challenge: "AQ" } });
  ask({ id: 2, op: "capabilities" });
  assert.deepEqual(replies, [
    { id: 1, fallback: true },
    { id: 2, passkeys: false },
  ]);
});

test("requests the background had not answered when it went are answered; a late answer is dropped", () => {
  const { replies, ask, K } = document();
  const sent = [];
  // Before the port is up, requests wait; then they go, in order.
  ask({ id: 1, op: "capabilities" });
  ask({ id: 2, op: "create", options: { challenge: "AQ" } });
  K.post = (message) => sent.push(message);
  K.webauthnConnected();
  assert.deepEqual(
    sent.map((message) => [message.id, message.op]),
    [
      [1, "capabilities"],
      [2, "create"],
    ],
  );
  // A repeated id is the page's mistake, not a second request.
  ask({ id: 2, op: "create", options: { challenge: "AQ" } });
  assert.equal(sent.length, 2);
  K.webauthnReply({ id: 1, passkeys: true });
  K.webauthnDisconnected();
  K.webauthnReply({ id: 2, credential: { id: "late" } });
  assert.deepEqual(replies, [
    { id: 1, passkeys: true },
    { id: 2, fallback: true },
  ]);
});

test("what the page world cannot make up goes with each request; what it adds is dropped", () => {
  const { ask, K } = document();
  const sent = [];
  K.post = (message) => sent.push(message);
  K.webauthnConnected();
  ask({ id: 7, op: "get", options: { challenge: "AQ" }, mediation: "conditional", policy: true, ancestors: ["https://a.test"], activated: true });
  assert.equal(sent.length, 1);
  // jsdom has neither a permissions policy nor ancestorOrigins nor user activation: the relay
  // says so (null, nothing), whatever the page world claimed.
  assert.equal(sent[0].policy, null);
  assert.equal(sent[0].ancestors, undefined);
  assert.equal(sent[0].activated, null);
  assert.equal(sent[0].mediation, "conditional");
});

test("the relay takes what it relays, and says while a request waits that it still has it", () => {
  const { ask, K } = document();
  K.post = () => {};
  K.webauthnConnected();
  assert.equal(ask({ id: 1, op: "get", options: { challenge: "AQ" } }), true);
  assert.equal(ask({ id: 1, op: "alive" }), true);
  assert.equal(ask({ id: 2, op: "alive" }), false);
  K.webauthnReply({ id: 1, fallback: true });
  assert.equal(ask({ id: 1, op: "alive" }), false);
  assert.equal(ask({ id: 3, op: "madeUp" }), false);
});
