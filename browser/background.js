// Keyport AutoFill's background: the only part that talks to keyport-browser (the native
// messaging host, which relays org.keyport.AutoFill and org.keyport.WebAuthn calls to keyportd),
// and the only part that decides which frame a credential goes to. Passkeys have their part in
// background/passkeys.js.
//
// Trust: a page's site is what the browser reports for the content script's port
// (`port.sender.url`, `port.sender.frameId`), never what the page or the content script says. A
// credential is asked for only after a trusted gesture in the extension's own UI (the menu frame,
// the toolbar popup, the keyboard command), and goes only to the document whose port asked: the
// port dies with the document, so a frame that navigated away gets nothing.
"use strict";

const HOST = "org.keyport.browser";
const AUTOFILL = "org.keyport.AutoFill.";

// --- The host ---------------------------------------------------------------------------------

let host = null;
let nextCall = 1;
const calls = new Map(); // id → {each, resolve, reject}
const CANCEL = "org.keyport.Browser.Cancel";

function hostPort() {
  if (host) return host;
  host = chrome.runtime.connectNative(HOST);
  host.onMessage.addListener((message) => {
    const call = calls.get(message.id);
    if (!call) return;
    if (message.error) {
      calls.delete(message.id);
      call.reject({ error: message.error, message: (message.parameters || {}).message || message.error });
    } else if (message.continues) {
      call.each(message.parameters || {});
    } else {
      calls.delete(message.id);
      call.resolve(message.parameters || {});
    }
  });
  host.onDisconnect.addListener(() => {
    const why = (chrome.runtime.lastError && chrome.runtime.lastError.message) || "keyport-browser ended";
    host = null;
    for (const call of calls.values()) {
      call.reject({ error: "org.keyport.Browser.HostUnavailable", message: `Keyport is not reachable: ${why}. Run: keyport browser install` });
    }
    calls.clear();
  });
  return host;
}

/// Calls `method` of org.keyport.AutoFill through the host.
function call(method, parameters, each = () => {}, session = null) {
  return relay(AUTOFILL + method, parameters, each, session);
}

/// Calls `method` (its full name) through the host; `each` hears interim replies. A session's
/// call is remembered, so closing the session stops it (and withdraws the question it may have on
/// the agent's screen).
function relay(method, parameters, each, session) {
  return new Promise((resolve, reject) => {
    const id = nextCall++;
    if (session) session.call = id;
    calls.set(id, { each, resolve, reject });
    try {
      hostPort().postMessage({ id, method, parameters });
    } catch (error) {
      calls.delete(id);
      reject({ error: "org.keyport.Browser.HostUnavailable", message: String(error) });
    }
  });
}

// --- Pages ------------------------------------------------------------------------------------

/// The site of a content script's port: its document's origin as the browser reports it, http or
/// https only (never its path or query, which may hold a token: they count for nothing in
/// matching). Where the browser reports the document's origin too (Chromium), it must be the
/// URL's: a sandboxed document's is opaque, and it is of no site.
function siteOf(port) {
  let url;
  try {
    url = new URL(port.sender.url);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  if (port.sender.origin !== undefined && port.sender.origin !== url.origin) return null;
  return url.origin + "/";
}

const pages = new Map(); // "tab:frame" → port, one per document
const sessions = new Map(); // token → menu session
const pendingSaves = new Map(); // tab → {origin, user, password, until, from (the port that sent it)}
const filledLogins = new Map(); // tab → {origin, user, digest}: the last login Keyport filled there

function pageKey(tabId, frameId) {
  return `${tabId}:${frameId}`;
}

function randomToken() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

function service(site) {
  return [{ identifier: site, type: "URL" }];
}

chrome.runtime.onConnect.addListener((port) => {
  if (port.name === "page") return connectPage(port);
  if (port.name.startsWith("menu:")) return connectMenu(port, port.name.slice(5));
  port.disconnect();
});

function connectPage(port) {
  const tab = port.sender.tab;
  const site = siteOf(port);
  if (!tab || site === null) return port.disconnect();
  const key = pageKey(tab.id, port.sender.frameId);
  pages.set(key, port);
  port.onDisconnect.addListener(() => {
    if (pages.get(key) === port) pages.delete(key);
    forgetPasskeyRequests(port);
    for (const [token, session] of sessions) {
      if (session.page !== port) continue;
      // An offer the person did not answer before its page went (a page that signs in by script
      // and navigates later) is made again on the next page.
      if (session.mode === "save" && session.save && Date.now() < session.save.until) {
        pendingSaves.set(tab.id, { ...session.save, from: port });
      }
      closeSession(token);
    }
  });
  port.onMessage.addListener((message) => pageMessage(port, site, message));
  // A new top document of the tab: where an offer from the one before it is made.
  if (port.sender.frameId === 0) offerPendingSave(tab.id, port);
}

async function pageMessage(port, site, message) {
  switch (message.type) {
    case "focus": {
      // The person put a fillable field in focus: list what fits, without waking a provider; in a
      // field marked for passkeys, those of the conditional request the page waits for too.
      const type = message.kind === "otp" ? "oneTimeCode" : "password";
      let listed;
      let conditional;
      try {
        [listed, conditional] = await Promise.all([
          call("ListIdentities", { type, serviceIdentifiers: service(site) }),
          message.webauthn === true ? conditionalPasskeys(port) : { request: null, passkeys: [] },
        ]);
      } catch (failure) {
        port.postMessage({ type: "unavailable", message: failure.message });
        return;
      }
      // The person's press opens the menu whatever fits, at one size (openSession): the page sees
      // the menu's host, and must not learn from it whether, or how many, passwords or passkeys
      // the person has there (content/main.js keeps its own focus() from opening one, but a page
      // can steer a press or a Tab into a field the person did not mean).
      openSession(port, site, {
        mode: "fill",
        kind: message.kind,
        type,
        field: message.field,
        identities: listed.identities,
        passkeys: conditional.passkeys,
        conditional: conditional.request,
        // Opened by Keyport's keyboard command: the menu takes the focus, and keys.
        keyboard: message.command === true,
      });
      return;
    }
    case "submitted":
      // A sign-in form of the tab's top document was sent: offer to save what was typed on the
      // next page, once it is up (a frame of another site cannot plant or replace the offer);
      // never on this one, which is leaving, unless the page canceled the submit ("stays").
      if (port.sender.frameId !== 0) return;
      if (typeof message.user !== "string" || typeof message.password !== "string" || message.password === "") return;
      pendingSaves.set(port.sender.tab.id, {
        origin: new URL(site).origin,
        user: message.user,
        password: message.password,
        until: Date.now() + 60_000,
        from: port,
      });
      return;
    case "stays": {
      // The page canceled the submit (it signs in by script): the offer comes on this page, after
      // a moment, if it is still the tab's top document then.
      const tabId = port.sender.tab.id;
      const pending = pendingSaves.get(tabId);
      if (port.sender.frameId !== 0 || !pending || pending.from !== port) return;
      setTimeout(() => {
        if (pendingSaves.get(tabId) === pending && pages.get(pageKey(tabId, 0)) === port) offerPendingSave(tabId, port, true);
      }, 1000);
      return;
    }
    case "keyboard": {
      // The content script moved the focus into the menu on the person's key (↓ in the field, or
      // the keyboard command): only now does the menu take a choice from the keyboard.
      const session = sessions.get(message.token);
      if (!session || session.page !== port) return;
      session.keyboard = true;
      if (session.menu) session.menu.postMessage({ type: "keyboard" });
      return;
    }
    case "check-result": {
      const session = sessions.get(message.token);
      if (session && session.page === port && session.checking) {
        const resolve = session.checking;
        session.checking = null;
        resolve(message);
      }
      return;
    }
    case "closed":
      closeSession(message.token);
      return;
    case "webauthn":
      return passkeyRequest(port, site, message);
  }
}

/// The most rows the menu shows before they scroll (content/menu.js sizes the frame for them).
const MOST_ROWS = 4;

/// Opens the menu on `port`'s document: the content script draws the frame; the token binds the
/// frame to this session, and only the first frame that shows it.
function openSession(port, site, details) {
  for (const [token, session] of sessions) if (session.page === port) closeSession(token);
  const token = randomToken();
  sessions.set(token, { ...details, token, page: port, site, menu: null, checking: null, busy: false });
  // "Save" and "Not now"; anything else is of the largest size whatever it holds (its rows
  // scroll): the page sees the menu's size, and must not learn from it how many passkeys or
  // passwords the person has.
  const rows = details.mode === "save" ? 2 : MOST_ROWS;
  port.postMessage({ type: "open", token, mode: details.mode, field: details.field, rows, keyboard: details.keyboard === true });
}

function closeSession(token) {
  const session = sessions.get(token);
  if (!session) return;
  sessions.delete(token);
  cancelCall(session);
  promptClosed(session);
  try {
    session.page.postMessage({ type: "close", token });
  } catch {}
  if (session.menu) {
    try {
      session.menu.disconnect();
    } catch {}
  }
}

/// Offers to save what was submitted: on `port`'s document, a new top document of the tab (or,
/// `same`, the one that submitted, when it stays), of the same origin. A login Keyport has for
/// that user is offered as an update, unless what was sent is what Keyport filled there; the
/// provider then asks the person before it changes a password (Keyport Vault keeps the old one in
/// the item's history) and changes nothing when it is the one it has.
async function offerPendingSave(tabId, port, same = false) {
  const pending = pendingSaves.get(tabId);
  if (!pending || !port) return;
  if (Date.now() > pending.until) return pendingSaves.delete(tabId);
  if ((pending.from === port) !== same) return;
  const site = siteOf(port);
  if (!site || new URL(site).origin !== pending.origin) return;
  let update = false;
  try {
    const listed = await call("ListIdentities", { type: "password", serviceIdentifiers: service(pending.origin) });
    update = listed.identities.some((fit) => fit.fit === "exact" && fit.identity.user === pending.user);
    if (update && (await isFilledLogin(tabId, pending))) return pendingSaves.delete(tabId);
  } catch {
    return;
  }
  // The port may have gone, or another offer been made, meanwhile.
  if (pendingSaves.get(tabId) !== pending || pages.get(pageKey(tabId, 0)) !== port) return;
  pendingSaves.delete(tabId);
  openSession(port, site, { mode: "save", save: { ...pending, from: null, update }, identities: [] });
}

/// A digest of a login, so that what Keyport filled can be recognised without being kept.
async function loginDigest(origin, user, password) {
  const bytes = new TextEncoder().encode(JSON.stringify([origin, user, password]));
  return Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/// Whether `pending` is the login Keyport last filled in the tab.
async function isFilledLogin(tabId, pending) {
  const filled = filledLogins.get(tabId);
  if (!filled || filled.origin !== pending.origin || filled.user !== pending.user) return false;
  return filled.digest === (await loginDigest(pending.origin, pending.user, pending.password));
}

// --- The menu frame ---------------------------------------------------------------------------

function connectMenu(port, token) {
  const session = sessions.get(token);
  // The frame must be the extension's own page, in the tab of the document it serves, and the
  // first to claim the session.
  // (Its address is the extension's dynamic one where the browser has it: a random id per session,
  // so a page cannot find out at a fixed address that Keyport is installed.)
  const ownPage = isMenuPage(port.sender);
  if (!session || session.menu || !ownPage || !port.sender.tab || port.sender.tab.id !== session.page.sender.tab.id) {
    return port.disconnect();
  }
  session.menu = port;
  port.onDisconnect.addListener(() => {
    if (sessions.get(token) === session) closeSession(token);
  });
  port.onMessage.addListener((message) => menuMessage(session, message));
  port.postMessage({
    type: "show",
    mode: session.mode,
    kind: session.kind,
    site: new URL(session.site).origin,
    identities: session.identities.map((fit) => ({
      user: fit.identity.user,
      provider: fit.providerName,
      origin: fit.origin,
      fit: fit.fit,
    })),
    save: session.save ? { user: session.save.user, origin: session.save.origin, update: session.save.update } : null,
    // The content script moved the focus into the menu before it was up (the keyboard command).
    keyboard: session.keyboard === true,
    // A provider's own list sends what the person picks without keyportd's matching: https only.
    all: new URL(session.site).protocol === "https:",
    ...passkeyShown(session),
  });
}

/// Whether `sender` is the extension's own menu page (at its fixed or its dynamic address).
function isMenuPage(sender) {
  let url;
  try {
    url = new URL(sender.url);
  } catch {
    return false;
  }
  return sender.id === chrome.runtime.id && url.protocol === new URL(chrome.runtime.getURL("")).protocol && url.pathname === "/menu.html";
}

/// Asks the page's content script whether the menu was visible and on top where the person
/// clicked, and had been for a while.
function checkVisible(session, gesture) {
  const point = gesture.point || { x: -1, y: -1 };
  return new Promise((resolve) => {
    session.checking = resolve;
    session.page.postMessage({
      type: "check",
      token: session.token,
      x: point.x,
      y: point.y,
      movedAt: gesture.movedAt,
      clickedAt: gesture.clickedAt,
      keyboard: gesture.keyboard === true,
    });
    setTimeout(() => {
      if (session.checking === resolve) {
        session.checking = null;
        resolve({ ok: false, reason: "the page did not answer" });
      }
    }, 5000);
  });
}

async function menuMessage(session, message) {
  if (message.type === "dismiss") return closeSession(session.token);
  if (message.type === "elsewhere") return passkeyElsewhere(session);
  if (session.busy || !["choose", "all", "save", "passkey", "keep"].includes(message.type)) return;
  session.busy = true;
  try {
    if (message.type === "all" && new URL(session.site).protocol !== "https:") return;
    const fit = message.type === "choose" ? session.identities[message.index] : null;
    if (message.type === "choose" && !fit) return;
    // A choice from the keyboard counts only in a menu Keyport moved the focus into, on the
    // person's key, and that kept it since: focus that got there by a Tab the page ordered (every
    // other element of the page taken out of the order) would have "name, Tab, Enter" fill.
    if (message.keyboard === true && !(session.keyboard && message.granted === true)) {
      session.menu.postMessage({
        type: "refused",
        message: "Not filled: to choose with the keyboard, press ↓ in the field first (or Keyport's shortcut, Ctrl+Shift+L).",
      });
      return;
    }
    // An exact fit is asked for while the page is asked whether the menu was seen, so the check
    // costs no time; the credential stays here until it passed, and is dropped (its call
    // canceled) if it did not. Anything that may ask the person waits for the check.
    const early = fit && fit.fit === "exact" ? request(session, fit) : null;
    if (early) early.catch(() => {});
    const seen = await checkVisible(session, message);
    if (!seen.ok) {
      cancelCall(session);
      session.menu.postMessage({ type: "refused", message: `Not filled: ${seen.reason}.` });
      return;
    }
    if (message.type === "save") return await save(session);
    if (message.type === "passkey" || message.type === "keep") return await passkeyChosen(session, message);
    await fill(session, early || request(session, fit), message.clickedAt);
  } finally {
    session.busy = false;
  }
}

function asking(session) {
  return (interim) => {
    if (interim.asking && session.menu) session.menu.postMessage({ type: "asking", message: interim.asking });
  };
}

/// Asks for the credential (the one chosen, or from a provider's own list) and fills it into the
/// document that asked.
/// The credential of `fit` (the identity the person chose), or, without one, the one they pick
/// from a provider's own list.
function request(session, fit) {
  return fit
    ? call(
        "RequestCredential",
        { type: session.type, serviceIdentifiers: service(session.site), identity: fit.identity },
        asking(session),
        session,
      )
    : call("RequestFromList", { type: session.type, serviceIdentifiers: service(session.site) }, asking(session), session);
}

/// Stops the session's call, if it is still running.
function cancelCall(session) {
  if (session.call && calls.has(session.call) && host) {
    host.postMessage({ id: nextCall++, method: CANCEL, parameters: { call: session.call } });
  }
}

/// Fills what `requested` brings into the document that asked.
async function fill(session, requested, clickedAt) {
  let reply;
  try {
    reply = await requested;
  } catch (failure) {
    if (sessions.get(session.token) === session) session.menu.postMessage({ type: "refused", message: failure.message });
    return;
  }
  if (sessions.get(session.token) !== session) return; // the document or the menu went meanwhile
  session.page.postMessage({ type: "fill", token: session.token, kind: session.kind, credential: reply.credential, clickedAt });
  const credential = reply.credential || {};
  if (session.kind === "login" && typeof credential.password === "string" && session.page.sender.frameId === 0) {
    // Remembered as a digest: a sign-in with what was filled is not offered as a change.
    const origin = new URL(session.site).origin;
    const tabId = session.page.sender.tab.id;
    loginDigest(origin, credential.user || "", credential.password).then((digest) => {
      filledLogins.set(tabId, { origin, user: credential.user || "", digest });
    });
  }
  closeSession(session.token);
}

async function save(session) {
  const pending = session.save;
  try {
    await call(
      "SavePassword",
      {
        serviceIdentifier: { identifier: pending.origin, type: "URL" },
        user: pending.user,
        password: pending.password,
        event: "userInitiated",
      },
      asking(session),
    );
  } catch (failure) {
    if (session.menu) session.menu.postMessage({ type: "refused", message: failure.message });
    return;
  }
  session.save = null;
  if (session.menu) session.menu.postMessage({ type: "saved" });
  setTimeout(() => closeSession(session.token), 1500);
}

// --- The toolbar popup and the keyboard command -----------------------------------------------

/// The document the toolbar popup last listed for.
let popupPage = null;

/// The top document of the active tab, as its content script's port.
async function activePage() {
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  return tab ? pages.get(pageKey(tab.id, 0)) : undefined;
}

chrome.runtime.onMessage.addListener((message, sender, reply) => {
  // Only the extension's own popup.
  if (sender.url !== chrome.runtime.getURL("popup.html") || sender.tab) return false;
  (async () => {
    const page = await activePage();
    if (!page) return reply({ error: "Keyport fills http and https pages only." });
    const site = siteOf(page);
    if (!site) return reply({ error: "Keyport fills http and https pages only." });
    if (message.type === "list") {
      // The document listed for is the one the popup may fill: a tab that navigated since gets nothing.
      popupPage = page;
      try {
        const [passwords, codes] = await Promise.all(
          ["password", "oneTimeCode"].map((type) => call("ListIdentities", { type, serviceIdentifiers: service(site) })),
        );
        reply({ site: new URL(site).origin, passwords: passwords.identities, codes: codes.identities });
      } catch (failure) {
        reply({ error: failure.message });
      }
    } else if (message.type === "fill") {
      if (page !== popupPage) return reply({ error: "The page changed since the list was made: open the popup again." });
      const kind = message.credentialType === "oneTimeCode" ? "otp" : "login";
      const session = { token: randomToken(), page, site, kind, type: message.credentialType, menu: null };
      sessions.set(session.token, session);
      session.menu = { postMessage: (update) => chrome.runtime.sendMessage({ ...update, popup: true }).catch(() => {}), disconnect() {} };
      page.postMessage({ type: "adopt", token: session.token, kind });
      try {
        await fill(session, request(session, message.fit), Date.now());
      } finally {
        closeSession(session.token);
      }
      reply({ done: true });
    }
  })();
  return true;
});

chrome.commands.onCommand.addListener(async (command) => {
  if (command !== "fill") return;
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  if (!tab) return;
  // The frame whose document has a fillable field in focus opens its menu.
  for (const [key, port] of pages) if (key.startsWith(`${tab.id}:`)) port.postMessage({ type: "command" });
});

// The passkeys' part (background/passkeys.js): Firefox loads it after this file (the manifest's
// background scripts), Chromium's service worker here.
if (typeof importScripts === "function") importScripts("background/passkeys.js");
