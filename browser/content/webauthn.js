// Keyport's passkeys, the content script's part: relays the page world's requests
// (page/webauthn.js) to the background on this document's port, and the answers back. It runs
// from the document's start, before the other parts, so that no request the page makes early is
// lost: what comes before main.js connects waits for it.
//
// A request is the page's own, whatever sends it on the document; what this adds is what only an
// isolated world can say truthfully: whether the browser's permissions policy lets this document
// use WebAuthn (Chromium says; Firefox does not, and then the background leaves a frame's
// requests to the browser's own WebAuthn).
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

  function send(message) {
    if (K.post) K.post(message);
    else early.push(message);
  }

  /// main.js connected: what waited goes.
  K.webauthnConnected = () => {
    for (const message of early.splice(0)) K.post(message);
  };

  /// An answer from the background, to the page world.
  K.webauthnReply = (message) => {
    const reply = { id: message.id };
    for (const key of ["credential", "error", "message", "fallback", "passkeys"]) if (key in message) reply[key] = message[key];
    document.dispatchEvent(new CustomEvent(REPLY, { detail: JSON.stringify(reply) }));
    if (message.credential && message.clickedAt) {
      const elapsed = performance.timeOrigin + performance.now() - message.clickedAt;
      console.info(`keyport: passkey answered ${elapsed.toFixed(1)} ms after the gesture`);
    }
  };

  document.addEventListener(REQUEST, (event) => {
    if (typeof event.detail !== "string") return;
    let request;
    try {
      request = JSON.parse(event.detail);
    } catch {
      return;
    }
    if (!request || !Number.isSafeInteger(request.id) || !OPS.includes(request.op)) return;
    const message = { type: "webauthn", id: request.id, op: request.op };
    if (request.op !== "cancel") message.policy = policyAllows(request.op);
    if (request.op === "create" || request.op === "get") Object.assign(message, { options: request.options, mediation: request.mediation ?? null });
    send(message);
  });
})(globalThis[Symbol.for("org.keyport.AutoFill")]);
