// Keyport AutoFill in the page: finds the fields to fill, draws the menu frame under the focused
// one, says whether that frame was visible and on top where the person clicked, and fills what
// the background sends for this document. It never reads the site from the page: the background
// knows it from this script's port, as the browser reports it.
"use strict";

(() => {
  // A content script may be injected twice into one document (an extension reload): once is enough.
  if (globalThis.__keyportAutoFill) return;
  globalThis.__keyportAutoFill = true;
  // A sandboxed document (an iframe's sandbox, CSP's) is of no site, whatever its address says:
  // nothing is listed or filled there.
  if (self.origin === "null") return;

  /// How long the menu must have been wholly visible and on top before a click in it counts.
  const STEADY_MS = 500;
  /// The longest time between two frames of the page's that still counts as steady: a page that
  /// stops drawing (its main thread blocked) may meanwhile show anything the compositor can draw
  /// without it (an animation it started before), and the checks, which run on its frames, see
  /// none of it. A click counts only when the page drew frames no further apart than this, all
  /// checked, for the whole steady time up to the click.
  const FRAME_GAP_MS = 100;
  const OTP_WORDS = /(^|[^a-z])(otp|totp|2fa|mfa|one.?time|passcode|verification|security.?code|auth.?code|code)([^a-z]|$)/i;

  let port = null;
  const fields = new Map(); // id → WeakRef(element)
  let nextField = 1;
  let menu = null; // {token, host, layer, shadow, frame, field, monitor, …}

  function connect() {
    port = chrome.runtime.connect({ name: "page" });
    port.onMessage.addListener(onMessage);
    // The background may restart (a service worker ends when idle): connect again when needed.
    port.onDisconnect.addListener(() => {
      port = null;
      closeMenu();
    });
  }

  function post(message) {
    if (!port) connect();
    port.postMessage(message);
  }

  // --- Which fields -----------------------------------------------------------------------------

  function labelText(input) {
    const parts = [input.name, input.id, input.placeholder, input.getAttribute("aria-label") || ""];
    for (const label of input.labels || []) parts.push(label.textContent || "");
    return parts.join(" ");
  }

  function isTextual(input) {
    return input instanceof HTMLInputElement && ["text", "tel", "number", "email", "password", ""].includes(input.type);
  }

  /// The boxes of a code typed one character a box: 4 to 8 `maxlength=1` inputs side by side.
  function codeBoxes(input) {
    if (input.maxLength !== 1 || !input.parentElement) return null;
    let group = input.parentElement;
    for (let depth = 0; depth < 3 && group; depth++, group = group.parentElement) {
      const boxes = Array.from(group.querySelectorAll("input")).filter((box) => isTextual(box) && box.maxLength === 1);
      if (boxes.length >= 4 && boxes.length <= 8 && boxes.includes(input)) return boxes;
    }
    return null;
  }

  /// "otp", "login" (a user name or a current password) or null.
  function kindOf(input) {
    if (!isTextual(input) || input.disabled || input.readOnly) return null;
    const autocomplete = (input.getAttribute("autocomplete") || "").toLowerCase().split(/\s+/);
    if (autocomplete.includes("one-time-code")) return "otp";
    if (input.type === "password") return autocomplete.includes("new-password") ? null : "login";
    if (autocomplete.includes("username")) return "login";
    if (codeBoxes(input)) return "otp";
    const numeric = ["number", "tel"].includes(input.type) || input.inputMode === "numeric" || /\[0-9\]|\\d/.test(input.pattern);
    if ((numeric || (input.maxLength > 0 && input.maxLength <= 8)) && OTP_WORDS.test(labelText(input))) return "otp";
    if (input.type === "email" || autocomplete.includes("email")) return passwordNear(input) ? "login" : null;
    return input.type === "text" && passwordNear(input) && /user|login|email|account|name/i.test(labelText(input))
      ? "login"
      : null;
  }

  /// The password field of `input`'s form (or page): the first the person can see, else the
  /// first enabled one (which makes a form a sign-in form, though it is not filled).
  function passwordNear(input) {
    const scope = input.form || input.closest("form") || document;
    const passwords = Array.from(scope.querySelectorAll('input[type="password"]')).filter((field) => !field.disabled);
    return passwords.find(fillable) || passwords[0];
  }

  function remember(element) {
    for (const [id, reference] of fields) if (reference.deref() === element) return id;
    const id = nextField++;
    fields.set(id, new WeakRef(element));
    return id;
  }

  document.addEventListener(
    "focusin",
    (event) => {
      const input = event.target;
      if (!(input instanceof HTMLInputElement)) return;
      const kind = kindOf(input);
      if (!kind || (menu && menu.field === input)) return;
      post({ type: "focus", kind, field: remember(input) });
    },
    true,
  );

  // --- Visible, steady, on top -------------------------------------------------------------------

  /// The element `node` is drawn in: its parent, or the host of the shadow tree it is the top of.
  function drawnIn(node) {
    if (node.parentElement) return node.parentElement;
    const root = node.parentNode;
    return root instanceof ShadowRoot ? root.host : null;
  }

  /// Why `element` or an ancestor hides, fades, clips, moves or masks what is drawn; null if none.
  function concealment(element) {
    for (let node = element; node; node = drawnIn(node)) {
      const style = getComputedStyle(node);
      if (style.display === "none") return `${describe(node)} is not displayed`;
      if (style.visibility !== "visible") return `${describe(node)} is hidden`;
      if (parseFloat(style.opacity) < 1) return `${describe(node)} is transparent (opacity ${style.opacity})`;
      if (style.clipPath && style.clipPath !== "none") return `${describe(node)} is clipped`;
      if (style.transform && style.transform !== "none") return `${describe(node)} is transformed`;
      if (style.filter && style.filter !== "none") return `${describe(node)} is filtered`;
      for (const property of ["scale", "rotate", "translate", "perspective"]) {
        const value = style.getPropertyValue(property);
        if (value && value !== "none") return `${describe(node)} is transformed`;
      }
      if (style.zoom && style.zoom !== "1" && style.zoom !== "normal") return `${describe(node)} is zoomed`;
      if (style.mixBlendMode && style.mixBlendMode !== "normal") return `${describe(node)} is blended`;
      const mask = style.maskImage || style.webkitMaskImage;
      if (mask && mask !== "none") return `${describe(node)} is masked`;
    }
    return null;
  }

  function describe(node) {
    if (menu && (node === menu.host || node === menu.layer)) return "the menu";
    return node === document.documentElement ? "the page" : node === document.body ? "the page's body" : "a part of the page";
  }

  /// The menu must be what is hit at `point` (coordinates of this document's viewport): asked of
  /// the menu's own shadow tree, so that the host's place (where the page may draw its
  /// pseudo-elements, under the top layer) does not count as the menu.
  function onTopAt(x, y) {
    const hit = menu.shadow.elementFromPoint(x, y);
    return hit === menu.layer || hit === menu.frame;
  }

  function menuProblem() {
    if (!menu || !menu.host.isConnected) return "the menu is gone";
    if (menu.tampered) return "the page changed the menu";
    if (!menu.layer.matches(":popover-open")) return "the menu was taken out of the top layer";
    const hidden = concealment(menu.layer);
    if (hidden) return hidden;
    const drawn = { contentVisibilityAuto: true, opacityProperty: true, visibilityProperty: true, checkOpacity: true, checkVisibilityCSS: true };
    if (!menu.layer.checkVisibility(drawn)) return "the menu is not drawn";
    if ("currentCSSZoom" in menu.layer && menu.layer.currentCSSZoom !== 1) return "the menu is zoomed";
    const box = menu.layer.getBoundingClientRect();
    if (Math.abs(box.width - menu.width) > 1 || Math.abs(box.height - menu.height) > 1) {
      return "the menu is not the size it was drawn";
    }
    const inset = 4;
    // The menu is in the top layer: only what the page put there after it can be drawn over it,
    // and what such an element draws (a backdrop, an overflowing child) may reach anywhere.
    for (const other of document.querySelectorAll(":popover-open, dialog:modal, :fullscreen")) {
      if (other !== menu.layer) return "something of the page is in the top layer with the menu";
    }
    for (const [x, y] of [
      [box.left + box.width / 2, box.top + box.height / 2],
      [box.left + inset, box.top + inset],
      [box.right - inset, box.top + inset],
      [box.left + inset, box.bottom - inset],
      [box.right - inset, box.bottom - inset],
    ]) {
      if (!onTopAt(x, y)) return "something of the page covers the menu";
    }
    return null;
  }

  /// Checks the menu on every frame the browser draws while it is open: a page that hides or
  /// covers it even for one frame, or that draws no frame for longer than FRAME_GAP_MS (what was
  /// on the screen meanwhile went unchecked), restarts the time it must have been steady.
  function monitor() {
    if (!menu) return;
    try {
      const now = performance.timeOrigin + performance.now();
      const gap = menu.lastFrame === null ? 0 : now - menu.lastFrame;
      menu.lastFrame = now;
      const problem = safeProblem() || (gap > FRAME_GAP_MS ? `the page drew no frame for ${Math.round(gap)} ms` : null);
      if (problem) {
        menu.lastProblem = problem;
        menu.steadySince = null;
      } else if (menu.steadySince === null) {
        menu.steadySince = now;
      }
    } finally {
      if (menu) menu.monitor = requestAnimationFrame(monitor);
    }
  }

  /// menuProblem, where a page that breaks the checks (clobbering the document's methods with
  /// named elements) is itself the problem.
  function safeProblem() {
    try {
      return menuProblem();
    } catch {
      return "the page interfered with the checks";
    }
  }

  /// Answers whether the menu was seen where and when the person chose in it. The answer waits
  /// for the page's next frame, whose check runs first: the time up to the click is judged only
  /// once the frames around it were checked (a page that stopped drawing over the click is then
  /// known to have).
  function check(message) {
    const answer = (ok, reason) => {
      if (!ok) console.info(`keyport: not filled: ${reason}`);
      post({ type: "check-result", token: message.token, ok, reason });
    };
    if (!menu || menu.token !== message.token) return answer(false, "the menu is not open here");
    requestAnimationFrame(() => {
      if (!menu || menu.token !== message.token) return answer(false, "the menu is not open here");
      const problem = safeProblem();
      if (problem) return answer(false, problem);
      // The person's moment, as the menu's own page saw it (the page cannot touch it).
      const clickedAt = typeof message.clickedAt === "number" ? message.clickedAt : performance.timeOrigin + performance.now();
      if (menu.steadySince === null || clickedAt - menu.steadySince < STEADY_MS) {
        return answer(false, `the menu was not steadily visible before the click${menu.lastProblem ? ` (${menu.lastProblem})` : ""}`);
      }
      // A pointer click counts only when the pointer moved in the menu while it was steady: a menu
      // the page summoned under a still pointer is not chosen by a click meant for the page.
      if (!message.keyboard && !(message.movedAt >= menu.steadySince)) {
        return answer(false, "the pointer did not move in the menu before the click");
      }
      if (message.keyboard) return answer(true, null);
      const box = menu.frame.getBoundingClientRect();
      if (!(message.x >= 0 && message.y >= 0 && message.x < box.width && message.y < box.height)) {
        return answer(false, "the click was not in the menu");
      }
      if (!onTopAt(box.left + message.x, box.top + message.y)) return answer(false, "something of the page covers the menu");
      answer(true, null);
    });
  }

  // --- The menu frame ---------------------------------------------------------------------------

  function openMenu(message) {
    closeMenu();
    const field = message.field ? fields.get(message.field)?.deref() : null;
    if (message.mode === "fill" && (!field || !field.isConnected)) return;
    // The page sees the host, and its style sheets reach it and its pseudo-elements, which may be
    // drawn anywhere (`::before` with `position:absolute; inset:0`). The menu itself is an element
    // of the host's closed shadow tree, which no selector of the page's matches: no style of the
    // page's applies to it, and no pseudo-element of the page's is drawn with it in the top layer.
    // The host's own are drawn in the page's stacking, under the menu.
    const host = document.createElement("div");
    // Closed: the page can reach neither the menu, nor the frame, its address or its token.
    const shadow = host.attachShadow({ mode: "closed" });
    const layer = document.createElement("div");
    const frame = document.createElement("iframe");
    frame.src = chrome.runtime.getURL("menu.html") + "#" + message.token;
    frame.setAttribute("style", "border:0;width:100%;height:100%;display:block;background:Canvas;color-scheme:light dark");
    frame.setAttribute("allow", "");
    layer.append(frame);
    shadow.append(layer);
    // Rows as menu.css lays them out: a 24-pixel title (and, to save, the user and the site on
    // lines of their own), 44 pixels a choice, a line for what happens.
    const width = 340;
    const height = 2 + 12 + 24 + (message.mode === "save" ? 72 : 0) + 44 * Math.min(message.rows || 1, 4) + 28;
    let left = 16;
    let top = 16;
    if (field) {
      const box = field.getBoundingClientRect();
      left = Math.max(0, Math.min(box.left, innerWidth - width));
      top = box.bottom + 4 + height > innerHeight ? Math.max(0, box.top - height - 4) : box.bottom + 4;
    } else {
      left = Math.max(0, innerWidth - width - 16);
    }
    const important = (declarations) => declarations.split(";").map((declaration) => `${declaration} !important`).join(";");
    const place = `position:fixed;left:${left}px;top:${top}px;width:${width}px;height:${height}px;`;
    layer.setAttribute(
      "style",
      important(
        `all:initial;${place}` +
          "box-sizing:border-box;margin:0;padding:0;border:1px solid #888;border-radius:6px;box-shadow:0 2px 8px #0004;" +
          "overflow:hidden;z-index:2147483647;opacity:1;display:block;visibility:visible",
      ),
    );
    // The host has the menu's place too (what the page's own scripts find), and no style of the
    // page's: whatever it inherits would reach the menu.
    host.setAttribute("style", important(`all:initial;${place}display:block;visibility:visible;opacity:1;margin:0;padding:0`));
    // In the top layer, above the page's stacking contexts.
    layer.setAttribute("popover", "manual");
    document.documentElement.append(host);
    try {
      layer.showPopover();
    } catch {}
    menu = {
      token: message.token, host, layer, shadow, frame, field, mode: message.mode, width, height,
      steadySince: null, lastFrame: null, lastProblem: null, monitor: 0, tampered: false,
    };
    // Nothing but this script touches the host: a page that does is refused from then on.
    const opened = menu;
    new MutationObserver(() => {
      opened.tampered = true;
    }).observe(host, { attributes: true });
    // Opened by Keyport's keyboard command: the person chooses with the keyboard, in the menu.
    if (message.keyboard) focusMenu();
    menu.monitor = requestAnimationFrame(monitor);
  }

  /// Moves the focus into the menu, for the person's keyboard; the background then lets the menu
  /// take a choice from the keyboard (focus that reached the menu any other way, as by a Tab the
  /// page can order, does not).
  function focusMenu() {
    menu.frame.focus();
    post({ type: "keyboard", token: menu.token });
  }

  function closeMenu(token) {
    if (!menu || (token && menu.token !== token)) return;
    cancelAnimationFrame(menu.monitor);
    menu.host.remove();
    menu = null;
  }

  document.addEventListener(
    "keydown",
    (event) => {
      if (!event.isTrusted || !menu) return;
      if (event.key === "Escape") {
        post({ type: "closed", token: menu.token });
        closeMenu();
      } else if (
        event.key === "ArrowDown" && !event.altKey && !event.ctrlKey && !event.metaKey && !event.shiftKey &&
        menu.field && menu.field.matches(":focus")
      ) {
        // Down from the field the menu is for, as into a browser's own list of suggestions: the
        // person's key, into the menu (once the key's own handling is over: Firefox keeps the
        // focus where the key was pressed otherwise).
        event.preventDefault();
        const opened = menu;
        setTimeout(() => {
          if (menu === opened) focusMenu();
        }, 0);
      }
    },
    true,
  );

  // --- Filling ----------------------------------------------------------------------------------

  /// A field the person can see: displayed, opaque enough, not hidden, large enough and at least
  /// partly inside the viewport.
  function fillable(input) {
    if (!input || !input.isConnected || input.disabled || input.readOnly) return false;
    if (!input.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) return false;
    for (let node = input; node; node = node.parentElement) {
      if (parseFloat(getComputedStyle(node).opacity) < 0.5) return false;
    }
    const box = input.getBoundingClientRect();
    if (box.width < 4 || box.height < 4) return false;
    return box.right > 0 && box.bottom > 0 && box.left < innerWidth && box.top < innerHeight;
  }

  const valueSetter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;

  function put(input, value) {
    input.focus();
    valueSetter.call(input, value);
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  /// The user name field that goes with `password`: the last visible textual field before it in
  /// its form.
  function userFieldFor(password) {
    const scope = password.form || password.closest("form") || document;
    const before = Array.from(scope.querySelectorAll("input")).filter(
      (input) =>
        input !== password &&
        ["text", "email", ""].includes(input.type) &&
        password.compareDocumentPosition(input) & Node.DOCUMENT_POSITION_PRECEDING,
    );
    return before.reverse().find(fillable) || null;
  }

  function fill(message) {
    const field = menu && menu.token === message.token ? menu.field : adopted.get(message.token);
    adopted.delete(message.token);
    closeMenu(message.token);
    const credential = message.credential || {};
    let filled = 0;
    if (message.kind === "otp") {
      const code = credential.code || "";
      const boxes = field && codeBoxes(field);
      if (boxes && boxes.length === code.length && boxes.every(fillable)) {
        boxes.forEach((box, index) => put(box, code[index]));
        filled = boxes.length;
      } else if (fillable(field)) {
        put(field, code);
        filled = 1;
      }
    } else if (field) {
      const password = field.type === "password" ? field : passwordNear(field);
      const user = field.type === "password" ? userFieldFor(field) : field;
      if (user && fillable(user) && typeof credential.user === "string") {
        put(user, credential.user);
        filled++;
      }
      if (password && fillable(password) && typeof credential.password === "string") {
        put(password, credential.password);
        filled++;
      }
    }
    if (filled > 0 && message.clickedAt) {
      const elapsed = performance.timeOrigin + performance.now() - message.clickedAt;
      console.info(`keyport: filled ${filled} field(s) ${elapsed.toFixed(1)} ms after the gesture`);
    } else if (filled === 0) {
      console.info("keyport: nothing filled: the field is gone, hidden or not fillable");
    }
  }

  // The toolbar popup fills the focused field of the top document, or its first fitting one.
  const adopted = new Map();

  function adopt(message) {
    const focused = document.activeElement instanceof HTMLInputElement ? document.activeElement : null;
    let field = focused && kindOf(focused) === message.kind ? focused : null;
    if (!field) field = Array.from(document.querySelectorAll("input")).find((input) => kindOf(input) === message.kind && fillable(input));
    if (field) adopted.set(message.token, field);
  }

  // --- Saving on submit ---------------------------------------------------------------------------

  function submitted(event) {
    const form = event.target;
    const passwords = Array.from(form.querySelectorAll('input[type="password"]')).filter((input) => input.value);
    if (passwords.length === 0) return;
    // A change-password form has several: the last is the new one.
    const password = passwords[passwords.length - 1];
    const named = form.querySelector('input[autocomplete~="username"]');
    const user = named || userFieldFor(passwords[0]);
    post({ type: "submitted", user: user ? user.value : "", password: password.value });
    // Once the event has been through the page: a submit the page did not cancel leaves this
    // document for the next, where the offer is made; one it canceled (a sign-in by script) stays.
    setTimeout(() => {
      if (event.defaultPrevented) post({ type: "stays" });
    }, 0);
  }

  document.addEventListener(
    "submit",
    (event) => {
      // A page can make a trusted-looking submit (requestSubmit()): it only offers; saving takes
      // the person's click on "Save".
      if (event.isTrusted && event.target instanceof HTMLFormElement) submitted(event);
    },
    true,
  );

  // --- From the background ------------------------------------------------------------------------

  function onMessage(message) {
    switch (message.type) {
      case "open":
        return openMenu(message);
      case "close":
        return closeMenu(message.token);
      case "check":
        return check(message);
      case "fill":
        return fill(message);
      case "adopt":
        return adopt(message);
      case "command": {
        const focused = document.activeElement;
        if (document.hasFocus() && focused instanceof HTMLInputElement && kindOf(focused)) {
          post({ type: "focus", kind: kindOf(focused), field: remember(focused), command: true });
        }
        return;
      }
      case "unavailable":
        console.info(`keyport: ${message.message}`);
        return;
    }
  }

  connect();
})();
