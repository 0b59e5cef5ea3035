// The menu the content script draws under a field: a page of the extension's own, in a frame the
// page cannot script or style. A choice counts only on a trusted event in it; on Chromium the
// frame must also have been seen visible (IntersectionObserver v2) for a while before the click.
"use strict";

const token = location.hash.slice(1);
history.replaceState(null, "", location.pathname);
const port = chrome.runtime.connect({ name: "menu:" + token });
const list = document.getElementById("list");
const status = document.getElementById("status");
const title = document.getElementById("title");

/// IntersectionObserver v2, where the browser has it (Chromium): when the frame became visible,
/// unoccluded and undistorted; null while it is not.
const STEADY_MS = 500;
const tracksVisibility = "isVisible" in IntersectionObserverEntry.prototype;
let visibleSince = null;
if (tracksVisibility) {
  new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isVisible || entry.intersectionRatio < 0.99) visibleSince = null;
        else if (visibleSince === null) visibleSince = entry.time;
      }
    },
    { trackVisibility: true, delay: 100, threshold: [0, 1.0] },
  ).observe(document.body);
}

/// When the pointer last moved in the menu (a person's move): sent with a click, which counts only
/// after a move while the menu was steady.
let movedAt = null;
document.addEventListener("pointermove", (event) => {
  if (event.isTrusted) movedAt = performance.timeOrigin + event.timeStamp;
});

/// Whether Keyport moved the focus into this menu (the person's ↓ in the field, or the keyboard
/// command) and it stayed here since: a choice from the keyboard counts only then. Focus that
/// leaves the menu takes it away; focus that comes back by a Tab does not bring it back.
let keyboardGranted = false;
let grantWaiting = null;
window.addEventListener("blur", () => {
  keyboardGranted = false;
});

function grantKeyboard() {
  const granted = () => {
    keyboardGranted = true;
    const first = list.querySelector("button");
    if (first) first.focus();
  };
  if (document.hasFocus()) return granted();
  // The focus the content script gave the frame may reach this document a moment after the
  // message does.
  if (grantWaiting) return;
  const onFocus = () => {
    clearTimeout(grantWaiting.timer);
    grantWaiting = null;
    granted();
  };
  window.addEventListener("focus", onFocus, { once: true });
  grantWaiting = {
    timer: setTimeout(() => {
      window.removeEventListener("focus", onFocus);
      grantWaiting = null;
    }, 1000),
  };
}

/// Up and down move between the choices, once the focus is in the menu.
document.addEventListener("keydown", (event) => {
  if (!event.isTrusted || (event.key !== "ArrowDown" && event.key !== "ArrowUp")) return;
  const buttons = Array.from(list.querySelectorAll("button"));
  const at = buttons.indexOf(document.activeElement);
  if (at < 0) return;
  event.preventDefault();
  buttons[Math.max(0, Math.min(buttons.length - 1, at + (event.key === "ArrowDown" ? 1 : -1)))].focus();
});

/// The site, on lines of its own under the title, never cut: false (and a line saying so) when
/// it does not fit whole, so that nothing is offered for a site the person cannot read.
function showSite(text) {
  const site = document.createElement("div");
  site.id = "origin";
  site.textContent = text;
  title.after(site);
  if (site.scrollHeight > site.clientHeight + 1 || site.scrollWidth > site.clientWidth + 1) {
    status.textContent = "Not offered: the site's address is too long to show whole.";
    return false;
  }
  return true;
}

/// The prompt of a page's navigator.credentials request: sign in with one of the passkeys
/// listed, or make one with a provider; or leave it to the browser's own WebAuthn ("a security
/// key or another device"), or cancel.
function showPasskeyPrompt(message) {
  const creating = message.passkey.op === "create";
  title.textContent = creating ? "Save a passkey in Keyport?" : "Sign in with a passkey?";
  const whole = showSite(`${creating ? "for" : "on"} ${message.site}`);
  // In bold: the account a new passkey is for, or the relying party whose passkeys are listed.
  const user = document.createElement("div");
  user.id = "user";
  user.textContent = creating ? message.passkey.user || "(no user name)" : message.passkey.rpId;
  title.after(user);
  if (whole) {
    if (creating) {
      message.authenticators.forEach((name, index) => {
        button(`Save in ${name}`, null, (gesture) => port.postMessage({ type: "keep", index, ...gesture }));
      });
    } else {
      message.passkeys.forEach((passkey, index) => {
        button(passkey.user || "(no user name)", `Passkey · ${passkey.provider}`, (gesture) => port.postMessage({ type: "passkey", index, ...gesture }));
      });
      if (message.passkeys.length === 0) status.textContent = "Keyport has no passkey for this site.";
    }
  }
  button("Use a security key or another device", "your browser asks", () => port.postMessage({ type: "elsewhere" }));
  button("Cancel", null, () => port.postMessage({ type: "dismiss" }));
}

function button(text, detail, onChoose) {
  const item = document.createElement("li");
  const choice = document.createElement("button");
  choice.append(document.createTextNode(text));
  if (detail) {
    const site = document.createElement("div");
    site.className = "site";
    site.textContent = detail;
    choice.append(site);
  }
  choice.addEventListener("click", (event) => {
    if (!event.isTrusted) return;
    if (tracksVisibility && (visibleSince === null || event.timeStamp - visibleSince < STEADY_MS)) {
      status.textContent = "Not filled: the menu was not visibly on top of the page.";
      return;
    }
    // A click from the keyboard (Enter, Space: no pointer, detail 0) counts only when Keyport moved
    // the focus into the menu on the person's key (the background checks it too).
    const keyboard = event.detail === 0;
    if (keyboard && !keyboardGranted) {
      status.textContent = "Not filled: to choose with the keyboard, press ↓ in the field first (or Keyport's shortcut, Ctrl+Shift+L).";
      return;
    }
    onChoose({
      point: { x: event.clientX, y: event.clientY },
      clickedAt: performance.timeOrigin + event.timeStamp,
      movedAt,
      keyboard,
      granted: keyboardGranted,
    });
  });
  item.append(choice);
  list.append(item);
}

port.onMessage.addListener((message) => {
  switch (message.type) {
    case "show":
      if (message.keyboard) grantKeyboard();
      if (message.mode === "save") {
        // The site on a line of its own, never cut: a long user name is cut (with an ellipsis)
        // instead, and a site too long for its lines is not offered at all.
        title.textContent = message.save.update ? "Change the saved password in Keyport?" : "Save the password in Keyport?";
        const user = document.createElement("div");
        user.id = "user";
        user.textContent = message.save.user || "(no user name)";
        const whole = showSite(`for ${message.save.origin}`);
        title.after(user);
        if (whole) {
          button(message.save.update ? "Change" : "Save", null, (gesture) => port.postMessage({ type: "save", ...gesture }));
        }
        button("Not now", null, () => port.postMessage({ type: "dismiss" }));
        return;
      }
      if (message.mode === "passkey") return showPasskeyPrompt(message);
      title.textContent = message.kind === "otp" ? `One-time codes for ${message.site}` : `Passwords for ${message.site}`;
      // The passkeys of the conditional sign-in the page waits for, first.
      message.passkeys.forEach((passkey, index) => {
        button(passkey.user || "(no user name)", `Passkey · ${passkey.provider}`, (gesture) => port.postMessage({ type: "passkey", index, ...gesture }));
      });
      message.identities.forEach((fit, index) => {
        // A wider fit names the site it was saved for: Keyport asks you in the agent before it gives it.
        const where = fit.fit === "exact" ? fit.provider : `${fit.origin} · ${fit.provider} · asks you first`;
        button(fit.user || "(no user name)", where, (gesture) => port.postMessage({ type: "choose", index, ...gesture }));
      });
      if (message.all) {
        button(message.kind === "otp" ? "All one-time codes…" : "All passwords…", "choose in Keyport", (gesture) =>
          port.postMessage({ type: "all", ...gesture }),
        );
      }
      if (message.passkeys.length === 0 && message.identities.length === 0) status.textContent = "Keyport has nothing saved for this site.";
      return;
    case "keyboard":
      grantKeyboard();
      return;
    case "asking":
      status.textContent = message.message;
      return;
    case "refused":
      status.textContent = message.message;
      return;
    case "saved":
      status.textContent = "Saved.";
      return;
  }
});
