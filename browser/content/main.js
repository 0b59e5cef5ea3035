// Keyport AutoFill in the page, 6 of 6 (after webauthn.js, which runs from the document's start): finds the fields to fill, draws the menu frame under the
// focused one, says whether that frame was visible and on top where the person clicked, and
// fills what the background sends for this document. It never reads the site from the page: the
// background knows it from this script's port, as the browser reports it. The parts before this
// one only define; this one connects them to the page, once.
"use strict";

((K) => {
  // A content script may be injected twice into one document (an extension reload): once is enough.
  if (K.started) return;
  K.started = true;
  // A sandboxed document (an iframe's sandbox, CSP's) is of no site, whatever its address says:
  // nothing is listed or filled there.
  if (self.origin === "null") return;

  let port = null;
  /// The fields the background was told of, by the number it was given: id → WeakRef(element).
  K.fields = new Map();
  let nextField = 1;

  function connect() {
    port = chrome.runtime.connect({ name: "page" });
    port.onMessage.addListener(onMessage);
    // The background may restart (a service worker ends when idle): connect again when needed.
    port.onDisconnect.addListener(() => {
      port = null;
      K.closeMenu();
      K.webauthnDisconnected();
    });
  }

  K.post = (message) => {
    if (!port) connect();
    port.postMessage(message);
  };

  function remember(element) {
    for (const [id, reference] of K.fields) if (reference.deref() === element) return id;
    const id = nextField++;
    K.fields.set(id, new WeakRef(element));
    return id;
  }

  /// The person's last press — a trusted pointerdown (its target, and whether that had the focus
  /// already), or Tab (its keydown event) — until the next focus change uses it up.
  let press = null;
  document.addEventListener(
    "pointerdown",
    (event) => {
      if (event.isTrusted) press = { target: event.target, at: event.timeStamp, focused: event.target === document.activeElement, tab: null };
    },
    true,
  );
  document.addEventListener(
    "keydown",
    (event) => {
      if (event.isTrusted && event.key === "Tab") press = { target: null, at: event.timeStamp, focused: false, tab: event };
    },
    true,
  );

  /// Whether `input` got the focus from the person, just now: their press on it, or their Tab's
  /// own move (after the key's handlers ran, and not prevented by them). A page's own focus() —
  /// at load, in a key's handler, at any moment it likes — opens nothing: a menu that appeared
  /// then would tell the page, which sees the menu's host, whether Keyport has something for the
  /// site, and put the menu where the page wants it. Each press is used up by the focus change
  /// it made (or by the page's, which then opens nothing).
  function fromPerson(input, event) {
    const given = press;
    press = null;
    if (!given || event.timeStamp - given.at > 1000) return false;
    if (given.tab) return given.tab.eventPhase === Event.NONE && !given.tab.defaultPrevented;
    return given.target === input;
  }

  /// Offers the menu of `input`, a field the person can see.
  function offer(input) {
    const kind = K.kindOf(input);
    if (!kind || !K.fillable(input) || (K.menu && K.menu.field === input)) return;
    K.post({ type: "focus", kind, field: remember(input), webauthn: K.forPasskeys(input) });
  }

  document.addEventListener(
    "focusin",
    (event) => {
      const input = event.target;
      if (fromPerson(input, event) && input instanceof HTMLInputElement) offer(input);
    },
    true,
  );

  // A click into a field that had the focus already (a page's autofocus) opens its menu: the
  // press made no focus change, so it is still there.
  document.addEventListener(
    "click",
    (event) => {
      const input = event.target;
      const given = press;
      if (!event.isTrusted || !given || given.target !== input || !given.focused || event.timeStamp - given.at > 1000) return;
      press = null;
      if (input instanceof HTMLInputElement) offer(input);
    },
    true,
  );

  document.addEventListener("keydown", K.keydown, true);

  document.addEventListener(
    "submit",
    (event) => {
      // A page can make a trusted-looking submit (requestSubmit()): it only offers; saving takes
      // the person's click on "Save".
      if (event.isTrusted && event.target instanceof HTMLFormElement) K.submitted(event);
    },
    true,
  );

  function onMessage(message) {
    switch (message.type) {
      case "open":
        return K.openMenu(message);
      case "close":
        return K.closeMenu(message.token);
      case "check":
        return K.check(message);
      case "fill":
        return K.fill(message);
      case "webauthn-reply":
        return K.webauthnReply(message);
      case "adopt":
        return K.adopt(message);
      case "command": {
        const focused = document.activeElement;
        if (document.hasFocus() && focused instanceof HTMLInputElement && K.kindOf(focused)) {
          K.post({ type: "focus", kind: K.kindOf(focused), field: remember(focused), command: true, webauthn: K.forPasskeys(focused) });
        }
        return;
      }
      case "unavailable":
        console.info(`keyport: ${message.message}`);
        return;
    }
  }

  connect();
  K.webauthnConnected();
})(globalThis[Symbol.for("org.keyport.AutoFill")]);
