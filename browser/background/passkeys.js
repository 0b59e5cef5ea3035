// Keyport AutoFill's background, passkeys: answers a page's navigator.credentials requests
// (page/webauthn.js, relayed by content/webauthn.js on the document's port) through
// org.keyport.WebAuthn. Loaded after background.js, whose host, pages and menu sessions it uses.
//
// Trust, as for passwords: the origin is the one the browser reports for the document's port,
// never the page's word. A passkey is used, or made, only on the person's click in the
// extension's own prompt (or in a username field's menu, for a conditional request), checked as
// the AutoFill menu's clicks are; that click names the passkey or the provider to keyportd, which
// takes it as the person's presence. The answer goes back on the port of the document that asked.
"use strict";

const WEBAUTHN = "org.keyport.WebAuthn.";
/// The errors a page may hear, as WebAuthn names them; anything else is NotAllowedError.
const WEBAUTHN_ERRORS = new Set(["NotAllowedError", "SecurityError", "TypeError", "InvalidStateError", "NotSupportedError", "UnknownError", "AbortError"]);

/// The conditional sign-in each document waits for, by its port: answered from the menu of a
/// field marked `autocomplete="… webauthn"`.
const conditionals = new Map();

/// Calls `method` of org.keyport.WebAuthn through the host.
function webauthn(method, parameters, each = () => {}, session = null) {
  return relay(WEBAUTHN + method, parameters, each, session);
}

/// Answers the page's request `id` on `port` (a document that went hears nothing).
function answerPage(port, id, reply) {
  try {
    port.postMessage({ type: "webauthn-reply", id, ...reply });
  } catch {}
}

/// Settles `request` once: with a credential, an error, or a hand-over to the browser's own.
function settle(request, reply) {
  if (request.settled) return;
  request.settled = true;
  if (conditionals.get(request.port) === request) conditionals.delete(request.port);
  answerPage(request.port, request.id, reply);
}

/// What the page hears for a failed call: WebAuthn's error names pass; a parameter keyportd
/// refused is the page's TypeError; anything else is NotAllowedError. A SecurityError is said in
/// the browser's own words, not keyportd's: its reason may say what another host answered when
/// keyportd read its related origins, which a page must not learn.
function pageError(failure) {
  const name = String(failure.error || "").split(".").pop();
  if (name === "SecurityError") return { error: name, message: "The relying party ID is not a registrable domain suffix of, nor equal to the current domain, nor does it list this origin among its related origins." };
  if (WEBAUTHN_ERRORS.has(name)) return { error: name, message: failure.message };
  if (name === "InvalidParameter") return { error: "TypeError", message: failure.message };
  return { error: "NotAllowedError", message: failure.message };
}

/// Where the request of `port`'s document is made: its origin, and the top document's when it is
/// not of the same origin as all its ancestors (WebAuthn's crossOrigin; a frame of A inside B
/// inside A is cross-origin too). A document whose permissions policy forbids WebAuthn is refused
/// (Chromium says; the top document's own policy counts). A frame is answered only where the
/// browser tells the policy and the frame's ancestors (Chromium's `location.ancestorOrigins`);
/// where it does not (Firefox), it is the browser's own. A cross-origin frame creates a passkey
/// only with the person's activation, as WebAuthn asks.
async function passkeyPlace(port, site, message) {
  const origin = new URL(site).origin;
  if (message.policy === false) return { refused: "the page's permissions policy does not let this document use passkeys" };
  if (port.sender.frameId === 0) return { origin };
  const top = await topPage(port.sender.tab.id);
  const topSite = top ? siteOf(top) : null;
  const ancestors = message.ancestors;
  if (message.policy !== true || !topSite || !Array.isArray(ancestors) || ancestors.length === 0) return { browser: true };
  const topOrigin = new URL(topSite).origin;
  // The renderer's list, held to what the browser says of the top document.
  if (ancestors[ancestors.length - 1] !== topOrigin) return { browser: true };
  if (ancestors.every((ancestor) => ancestor === origin)) return { origin };
  if (message.op === "create" && message.activated !== true) {
    return { refused: "a frame of another site creates a passkey only right after the person's click in it" };
  }
  return { origin, topOrigin };
}

/// The port of tab `tabId`'s top document: a frame's content script may connect before its top
/// document's does, so it is waited for a moment.
async function topPage(tabId) {
  for (let waited = 0; waited < 3000; waited += 50) {
    const top = pages.get(pageKey(tabId, 0));
    if (top) return top;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return null;
}

/// The parameters of a call for `request`, `more` naming the passkey or provider chosen.
function parametersFor(request, more) {
  const parameters = { origin: request.origin, options: request.options, ...more };
  if (request.topOrigin) parameters.topOrigin = request.topOrigin;
  if (request.mediation) parameters.mediation = request.mediation;
  return parameters;
}

/// A request from a document's page world: `capabilities`, `create`, `get`, or `cancel`. Whatever
/// goes wrong here, the page is answered (the browser's own WebAuthn), never left waiting.
async function passkeyRequest(port, site, message) {
  const reply = (answer) => answerPage(port, message.id, answer);
  try {
    await answerPasskeyRequest(port, site, message, reply);
  } catch (error) {
    console.error("keyport: a passkey request failed:", error);
    reply(message.op === "capabilities" ? { passkeys: false } : { fallback: true });
  }
}

async function answerPasskeyRequest(port, site, message, reply) {
  if (message.op === "cancel") return cancelPasskeyRequest(port, message.id);
  const place = await passkeyPlace(port, site, message);
  if (takeWithdrawn(port, message.id)) return;
  if (place.refused) return reply(message.op === "capabilities" ? { passkeys: false } : { error: "NotAllowedError", message: `The request was not allowed: ${place.refused}.` });
  if (place.browser) return reply(message.op === "capabilities" ? { passkeys: false } : { fallback: true });
  // No provider of passkeys, or no Keyport: the browser's own, as without the extension.
  const authenticators = await authenticatorsFor(place.origin);
  if (takeWithdrawn(port, message.id)) return;
  if (message.op === "capabilities") return reply({ passkeys: authenticators.length > 0 });
  if (authenticators.length === 0) return reply({ fallback: true });
  const options = message.options && typeof message.options === "object" ? message.options : {};
  const request = { port, id: message.id, op: message.op, options, mediation: message.mediation, settled: false, ...place };
  if (message.op === "get" && message.mediation === "conditional") {
    // One conditional request a document, as browsers keep: a new one ends the one before.
    const before = conditionals.get(port);
    if (before) settle(before, { error: "AbortError", message: "A newer conditional request replaced this one." });
    conditionals.set(port, request);
    return;
  }
  // One modal request a document, from its listing to its answer: a page cannot have keyportd
  // list (and read relying parties' files) for request after request at once.
  if (listing.has(port) && !listing.get(port).settled) {
    return reply({ error: "NotAllowedError", message: "A request for a passkey is already pending on this page." });
  }
  for (const session of sessions.values()) {
    if (session.page === port && session.passkeyRequest && !session.passkeyRequest.settled) {
      return reply({ error: "NotAllowedError", message: "A request for a passkey is already pending on this page." });
    }
  }
  const details = { mode: "passkey", passkeyRequest: request, identities: [], passkeys: [], authenticators: [] };
  if (message.op === "get") {
    listing.set(port, request);
    try {
      details.passkeys = await listPasskeys(request);
    } catch (failure) {
      return settle(request, pageError(failure));
    } finally {
      if (listing.get(port) === request) listing.delete(port);
    }
  } else {
    details.authenticators = authenticators;
  }
  // The page withdrew it meanwhile, or the document went.
  if (request.settled || port !== pages.get(pageKey(port.sender.tab.id, port.sender.frameId))) return;
  openSession(port, site, details);
}

/// The modal request of each document whose passkeys are being listed.
const listing = new Map(); // port → request

/// The ids each document withdrew before its request was known here (it waited for its place or
/// its providers): the request is dropped when it gets there.
const withdrawnEarly = new WeakMap(); // port → Set(id)

function takeWithdrawn(port, id) {
  const withdrawn = withdrawnEarly.get(port);
  return withdrawn ? withdrawn.delete(id) : false;
}

/// What keyportd said of the enabled providers of passkeys, by origin, for a few seconds.
const authenticatorsKept = new Map(); // origin → {until, list (a promise)}

/// The enabled providers of passkeys for `origin` (none if Keyport cannot be reached), asked of
/// keyportd at most once every five seconds: a page's every request asks, and a page that floods
/// its capability queries costs keyportd nothing more.
function authenticatorsFor(origin) {
  const now = Date.now();
  const kept = authenticatorsKept.get(origin);
  if (kept && kept.until > now) return kept.list;
  for (const [key, entry] of authenticatorsKept) if (entry.until <= now) authenticatorsKept.delete(key);
  const list = webauthn("ListAuthenticators", { origin }).then(
    (reply) => reply.authenticators,
    () => [],
  );
  authenticatorsKept.set(origin, { until: now + 5000, list });
  return list;
}

/// The passkeys keyportd lists for `request` (its rpId and allowCredentials).
async function listPasskeys(request) {
  const parameters = { origin: request.origin };
  if (request.topOrigin) parameters.topOrigin = request.topOrigin;
  if (typeof request.options.rpId === "string") parameters.rpId = request.options.rpId;
  if (Array.isArray(request.options.allowCredentials)) {
    parameters.allowCredentials = request.options.allowCredentials.map((descriptor) => descriptor && descriptor.id).filter((id) => typeof id === "string");
  }
  return (await webauthn("ListPasskeys", parameters)).passkeys;
}

/// The conditional request `port`'s document waits for, and its passkeys, to offer in the menu of
/// a `webauthn` field; the menu answers that request, not one that replaced it meanwhile.
async function conditionalPasskeys(port) {
  const request = conditionals.get(port);
  if (!request) return { request: null, passkeys: [] };
  try {
    return { request, passkeys: await listPasskeys(request) };
  } catch {
    return { request, passkeys: [] };
  }
}

/// The page withdrew request `id` (its AbortSignal): a prompt for it closes, a call for it stops.
function cancelPasskeyRequest(port, id) {
  let found = false;
  const listed = listing.get(port);
  if (listed && listed.id === id) {
    listed.settled = true;
    found = true;
  }
  const conditional = conditionals.get(port);
  if (conditional && conditional.id === id) {
    conditional.settled = true;
    conditionals.delete(port);
    found = true;
  }
  for (const [token, session] of sessions) {
    const request = session.passkeyRequest;
    if (session.page === port && request && request.id === id) {
      request.settled = true;
      closeSession(token);
      found = true;
    }
  }
  // Not known yet: still on its way here (a few at most, kept with the document).
  if (!found) {
    const withdrawn = withdrawnEarly.get(port) || new Set();
    if (withdrawn.size < 64) withdrawn.add(id);
    withdrawnEarly.set(port, withdrawn);
  }
}

/// A document went: what it waited for goes with it.
function forgetPasskeyRequests(port) {
  conditionals.delete(port);
}

/// A prompt closed without an answer: the page hears NotAllowedError, as when a person closes the
/// browser's own.
function promptClosed(session) {
  if (session.passkeyRequest) settle(session.passkeyRequest, { error: "NotAllowedError", message: "The request was not allowed: Keyport's prompt was closed." });
}

/// What the prompt, or a menu with passkeys, shows of the session.
function passkeyShown(session) {
  const request = session.passkeyRequest;
  return {
    passkeys: (session.passkeys || []).map((passkey) => ({ user: passkey.userName, provider: passkey.providerName })),
    authenticators: (session.authenticators || []).map((authenticator) => authenticator.name),
    passkey: request ? { op: request.op, user: request.op === "create" && request.options.user ? String(request.options.user.name || "") : null, rpId: relyingPartyOf(request) } : null,
  };
}

/// The relying party id `request` names, or its origin's host (what keyportd checks it against).
function relyingPartyOf(request) {
  const named = request.op === "create" ? request.options.rp && request.options.rp.id : request.options.rpId;
  return typeof named === "string" ? named : new URL(request.origin).hostname;
}

/// The person chose "a security key or another device": the request is the browser's own.
function passkeyElsewhere(session) {
  if (session.passkeyRequest) settle(session.passkeyRequest, { fallback: true });
  closeSession(session.token);
}

/// The person's checked click chose a passkey (`passkey`) or a provider to keep a new one (`keep`).
async function passkeyChosen(session, message) {
  const request = session.passkeyRequest || session.conditional;
  if (!request || request.settled) {
    session.menu.postMessage({ type: "refused", message: "The page no longer waits for a passkey." });
    return;
  }
  let reply;
  try {
    if (message.type === "keep") {
      const authenticator = session.authenticators[message.index];
      if (!authenticator) return;
      reply = await webauthn("Create", parametersFor(request, { provider: authenticator.id }), asking(session), session);
    } else {
      const passkey = session.passkeys[message.index];
      if (!passkey) return;
      reply = await webauthn("Get", parametersFor(request, { passkey: passkey.credentialID }), asking(session), session);
    }
  } catch (failure) {
    if (sessions.get(session.token) !== session) return; // closed meanwhile: canceled
    settle(request, pageError(failure));
    closeSession(session.token);
    return;
  }
  settle(request, { credential: reply.credential, clickedAt: message.clickedAt });
  closeSession(session.token);
}
