// Keyport's passkeys, the content script's part: relays the page world's requests
// (page/webauthn.js) to the background on this document's port, and the answers back. It runs
// from the document's start, before the other parts, so that no request the page makes early is
// lost: what comes before main.js connects waits for it.
//
// A request is the page's own, whatever sends it on the document (a script of a frame of the
// same origin can too: it could as well call navigator.credentials itself); what this adds is
// what the page's world cannot make up: whether the browser's permissions policy lets this
// document use WebAuthn, the origins of the documents it is inside, and whether the person just
// activated it (Chromium says all three; Firefox says the last, and the background then leaves a
// frame's requests to the browser's own WebAuthn).
//
// Every request is answered: if the background cannot be reached, or goes before it answers (an
// extension reload, a restart), the page hears "the browser's own" (or, asking what Keyport
// can do, "nothing"), never silence.
"use strict";

globalThis[Symbol.for("org.keyport.AutoFill")] ??= Object.create(null);

((K) => {
  if (K.webauthnStarted) return;
  K.webauthnStarted = true;
  const REQUEST = "keyport:webauthn-request";
  const REPLY = "keyport:webauthn-reply";
  /// Messages for the background before main.js connected the port.
  const early = [];
  const OPS = ["create", "get", "capabilities", "cancel"];

  /// Whether the browser's permissions policy allows `op` in this document; null if the browser
  /// does not say.
  function policyAllows(op) {
    const policy = document.featurePolicy;
    if (!policy || typeof policy.allowsFeature !== "function") return null;
    return policy.allowsFeature(op === "create" ? "publickey-credentials-create" : "publickey-credentials-get");
  }

  /// The requests sent and not yet answered, by id: their op.
  const pending = new Map();

  function toPage(reply) {
    document.dispatchEvent(new CustomEvent(REPLY, { detail: JSON.stringify(reply) }));
  }

  /// The answer to a request the background will not answer: the browser's own.
  function unanswered(id, op) {
    pending.delete(id);
    toPage(op === "capabilities" ? { id, passkeys: false } : { id, fallback: true });
  }

  function post(message) {
    try {
      K.post(message);
    } catch (error) {
      // The extension was reloaded or removed under this document.
      console.info(`keyport: a passkey request goes to the browser's own: ${error}`);
      if (pending.has(message.id)) unanswered(message.id, message.op);
    }
  }

  function send(message) {
    if (message.op !== "cancel") pending.set(message.id, message.op);
    if (K.post) post(message);
    else early.push(message);
  }

  /// main.js connected: what waited goes.
  K.webauthnConnected = () => {
    for (const message of early.splice(0)) post(message);
  };

  /// The background went: what it had not answered, it will not.
  K.webauthnDisconnected = () => {
    if (pending.size > 0) console.info(`keyport: the extension's background went; ${pending.size} passkey request(s) go to the browser's own`);
    for (const [id, op] of [...pending]) unanswered(id, op);
  };

  /// An answer from the background, to the page world.
  K.webauthnReply = (message) => {
    if (!pending.delete(message.id)) return;
    const reply = { id: message.id };
    for (const key of ["credential", "error", "message", "fallback", "passkeys"]) if (key in message) reply[key] = message[key];
    toPage(reply);
    if (message.credential && message.clickedAt) {
      const elapsed = performance.timeOrigin + performance.now() - message.clickedAt;
      console.info(`keyport: passkey answered ${elapsed.toFixed(1)} ms after the gesture`);
    }
  };

  // The page world learns that this script took a request from the event being canceled; a
  // request nobody took (this script gone with its extension) it gives to the browser's own.
  document.addEventListener(REQUEST, (event) => {
    if (typeof event.detail !== "string") return;
    let request;
    try {
      request = JSON.parse(event.detail);
    } catch {
      return;
    }
    if (!request || !Number.isSafeInteger(request.id)) return;
    // The page world asks, while it waits, whether this script still has its request.
    if (request.op === "alive") {
      if (pending.has(request.id)) event.preventDefault();
      return;
    }
    if (!OPS.includes(request.op)) return;
    event.preventDefault();
    if (request.op === "cancel") pending.delete(request.id);
    else if (pending.has(request.id)) return;
    const message = { type: "webauthn", id: request.id, op: request.op };
    if (request.op !== "cancel") {
      message.policy = policyAllows(request.op);
      if (location.ancestorOrigins) message.ancestors = Array.from(location.ancestorOrigins);
      message.activated = navigator.userActivation ? navigator.userActivation.isActive : null;
    }
    if (request.op === "create" || request.op === "get") Object.assign(message, { options: request.options, mediation: request.mediation ?? null });
    send(message);
  });
})(globalThis[Symbol.for("org.keyport.AutoFill")]);
