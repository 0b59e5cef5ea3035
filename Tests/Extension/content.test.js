// The content script's field detection and visibility rules, run by node's own test runner in a
// DOM from jsdom (Debian's node-jsdom): `node --test Tests/Extension/`. What needs a real page —
// layout, the top layer, frames drawn — is the browsers' to test (BrowserAutoFillTests).
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { JSDOM } = require("jsdom");

const content = path.join(__dirname, "..", "..", "browser", "content");

/// A page of `html` with the content script's parts `files` loaded into it, as the manifest
/// loads them; jsdom lays nothing out, so each element is visible and 100×20 unless a test says
/// otherwise.
function page(html, files = ["fields.js", "visibility.js"]) {
  const dom = new JSDOM(`<!doctype html><body>${html}</body>`, { runScripts: "outside-only", pretendToBeVisual: true });
  const { window } = dom;
  window.HTMLElement.prototype.checkVisibility = function () {
    return this.dataset.hidden === undefined;
  };
  window.HTMLElement.prototype.getBoundingClientRect = function () {
    const [left, top, width, height] = (this.dataset.box || "10,10,100,20").split(",").map(Number);
    return { left, top, width, height, right: left + width, bottom: top + height };
  };
  for (const file of files) window.eval(fs.readFileSync(path.join(content, file), "utf8"));
  return { window, document: window.document, K: window.eval('globalThis[Symbol.for("org.keyport.AutoFill")]') };
}

test("a current password and the user name beside it are a sign-in; a new password is not", () => {
  const { document, K } = page(`
    <form><input id="user" name="username"><input id="password" type="password"></form>
    <form><input id="new" type="password" autocomplete="new-password"></form>`);
  assert.equal(K.kindOf(document.getElementById("password")), "login");
  assert.equal(K.kindOf(document.getElementById("user")), "login");
  assert.equal(K.kindOf(document.getElementById("new")), null);
});

test("an email field is a user name only where a password goes with it", () => {
  const { document, K } = page(`
    <form><input id="signin" type="email"><input type="password"></form>
    <form><input id="newsletter" type="email"></form>`);
  assert.equal(K.kindOf(document.getElementById("signin")), "login");
  assert.equal(K.kindOf(document.getElementById("newsletter")), null);
});

test("a one-time code: as the page declares it, as a short numeric field labelled so, or in boxes of one digit", () => {
  const boxes = Array.from({ length: 6 }, (_, index) => `<input id="box${index}" maxlength="1">`).join("");
  const { document, K } = page(`
    <input id="declared" autocomplete="one-time-code">
    <label for="labelled">Verification code</label><input id="labelled" inputmode="numeric" maxlength="6">
    <input id="search" inputmode="numeric" maxlength="6" name="zip">
    <div id="boxes">${boxes}</div>
    <div><input maxlength="1"><input maxlength="1"><input maxlength="1"></div>`);
  assert.equal(K.kindOf(document.getElementById("declared")), "otp");
  assert.equal(K.kindOf(document.getElementById("labelled")), "otp");
  assert.equal(K.kindOf(document.getElementById("search")), null);
  assert.equal(K.kindOf(document.getElementById("box3")), "otp");
  assert.equal(K.codeBoxes(document.getElementById("box0")).length, 6);
  // Three boxes are not a code.
  assert.equal(K.codeBoxes(document.querySelector("div:last-child input")), null);
});

test("a disabled or read-only field, or one that is not text, is never filled", () => {
  const { document, K } = page(`
    <form><input id="disabled" type="password" disabled><input id="readonly" type="password" readonly>
    <input id="box" type="checkbox" autocomplete="one-time-code"></form>`);
  for (const id of ["disabled", "readonly", "box"]) assert.equal(K.kindOf(document.getElementById(id)), null, id);
});

test("fillable: what the person can see — not hidden, faded, tiny or outside the viewport", () => {
  const { document, K } = page(`
    <input id="plain"><input id="hidden" data-hidden>
    <div style="opacity: 0.4"><input id="faded"></div>
    <input id="tiny" data-box="10,10,3,3"><input id="away" data-box="2000,10,100,20">`);
  assert.equal(K.fillable(document.getElementById("plain")), true);
  for (const id of ["hidden", "faded", "tiny", "away"]) assert.equal(K.fillable(document.getElementById(id)), false, id);
});

test("the user name of a password is the last visible text field before it in its form; the password near a field, the first visible one", () => {
  const { document, K } = page(`
    <form><input id="first"><input id="second" type="email"><input id="hidden" data-hidden>
    <input id="decoy" type="password" data-hidden><input id="password" type="password"><input id="after"></form>`);
  const password = document.getElementById("password");
  assert.equal(K.userFieldFor(password).id, "second");
  assert.equal(K.passwordNear(document.getElementById("first")).id, "password");
});

test("an element the page names as the parts' namespace was once named stands in for nothing", () => {
  const { window, K } = page(`<form id="keyportAutoFill"><input name="started"></form>`);
  assert.equal(typeof K.kindOf, "function");
  assert.equal(Object.getPrototypeOf(K), null);
  assert.equal(K.started, undefined);
  assert.equal(window.keyportAutoFill.kindOf, undefined);
});

test("concealment names what hides the menu: its own style or an ancestor's, across a shadow tree's host", () => {
  const { document, K } = page(`
    <div id="plain"><span id="target"></span></div>
    <div style="transform: rotate(1deg)"><span id="turned"></span></div>
    <div style="display: none"><span id="undisplayed"></span></div>
    <div style="visibility: hidden"><span id="invisible"></span></div>
    <div id="host" style="filter: blur(1px)"></div>`);
  assert.equal(K.concealment(document.getElementById("target")), null);
  assert.equal(K.concealment(document.getElementById("turned")), "a part of the page is transformed");
  assert.equal(K.concealment(document.getElementById("undisplayed")), "a part of the page is not displayed");
  assert.equal(K.concealment(document.getElementById("invisible")), "a part of the page is hidden");
  const shadow = document.getElementById("host").attachShadow({ mode: "closed" });
  const inner = document.createElement("div");
  shadow.append(inner);
  assert.equal(K.concealment(inner), "a part of the page is filtered");
  document.body.style.opacity = "0.99";
  assert.equal(K.concealment(document.getElementById("target")), "the page's body is transparent (opacity 0.99)");
});

/// A menu checked on frames `step` ms apart from `start` to `end`, with `problemAt(time)` the
/// check's finding on each frame.
function frames(K, { start = 0, end, step = 16, problemAt = () => null, menu = { steadySince: null, lastFrame: null, lastProblem: null } }) {
  for (let now = start; now <= end; now += step) K.checkFrame(menu, now, problemAt(now));
  return menu;
}

test("a choice counts once the menu was steady for STEADY_MS, and a pointer moved in it since", () => {
  const { K } = page("");
  const menu = frames(K, { end: K.STEADY_MS + 100 });
  const clickedAt = K.STEADY_MS + 100;
  assert.equal(K.timingProblem(menu, { clickedAt, keyboard: false, movedAt: clickedAt - 10 }), null);
  assert.equal(K.timingProblem(menu, { clickedAt, keyboard: true }), null);
  assert.equal(
    K.timingProblem(menu, { clickedAt, keyboard: false, movedAt: undefined }),
    "the pointer did not move in the menu before the click",
  );
  assert.match(K.timingProblem(menu, { clickedAt: K.STEADY_MS - 1, keyboard: true }), /not steadily visible/);
});

test("a page that stops drawing frames, or covers the menu for one frame, restarts the steady time", () => {
  const { K } = page("");
  // Frames stop for longer than FRAME_GAP_MS (a blocked main thread) shortly before the click.
  const stalled = frames(K, { end: 400 });
  frames(K, { start: 400 + K.FRAME_GAP_MS + 50, end: 900, menu: stalled });
  assert.match(K.timingProblem(stalled, { clickedAt: 900, keyboard: true }), /the page drew no frame for 1[0-9]{2} ms/);
  // Steady again for long enough after the gap: it counts.
  frames(K, { start: 916, end: 916 + K.STEADY_MS + 50, menu: stalled });
  assert.equal(K.timingProblem(stalled, { clickedAt: 916 + K.STEADY_MS + 50, keyboard: true }), null);
  // One covered frame, a moment before the click.
  const covered = frames(K, { end: 1000, problemAt: (now) => (now === 800 ? "something of the page covers the menu" : null) });
  assert.match(K.timingProblem(covered, { clickedAt: 1000, keyboard: true }), /covers the menu/);
});
