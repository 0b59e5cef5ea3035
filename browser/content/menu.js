// Keyport AutoFill in the page, 3 of 6: the menu — a frame of the extension's own page, in the
// top layer, inside a closed shadow tree of a host element the page sees.
"use strict";

((K) => {
  // Defined once: a second injection into the document (main.js) finds it running.
  if (K.started) return;

  function openMenu(message) {
    closeMenu();
    const field = message.field ? K.fields.get(message.field)?.deref() : null;
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
    const height = 2 + 12 + 24 + (message.mode === "save" || message.mode === "passkey" ? 72 : 0) + 44 * Math.min(message.rows || 1, 4) + 28;
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
    const menu = {
      token: message.token, host, layer, shadow, frame, field, mode: message.mode, width, height,
      steadySince: null, lastFrame: null, lastProblem: null, monitor: 0, tampered: false,
    };
    K.menu = menu;
    // Nothing but this script touches the host: a page that does is refused from then on.
    new MutationObserver(() => {
      menu.tampered = true;
    }).observe(host, { attributes: true });
    // Opened by Keyport's keyboard command: the person chooses with the keyboard, in the menu.
    if (message.keyboard) focusMenu();
    menu.monitor = requestAnimationFrame(K.monitor);
  }

  /// Moves the focus into the menu, for the person's keyboard; the background then lets the menu
  /// take a choice from the keyboard (focus that reached the menu any other way, as by a Tab the
  /// page can order, does not).
  function focusMenu() {
    K.menu.frame.focus();
    K.post({ type: "keyboard", token: K.menu.token });
  }

  function closeMenu(token) {
    const menu = K.menu;
    if (!menu || (token && menu.token !== token)) return;
    cancelAnimationFrame(menu.monitor);
    menu.host.remove();
    K.menu = null;
  }

  /// The person's keys while the menu is open: Escape closes it; Down from its field goes into it,
  /// as into a browser's own list of suggestions.
  function keydown(event) {
    const menu = K.menu;
    if (!event.isTrusted || !menu) return;
    if (event.key === "Escape") {
      K.post({ type: "closed", token: menu.token });
      closeMenu();
    } else if (
      event.key === "ArrowDown" && !event.altKey && !event.ctrlKey && !event.metaKey && !event.shiftKey &&
      menu.field && menu.field.matches(":focus")
    ) {
      // The person's key, into the menu (once the key's own handling is over: Firefox keeps the
      // focus where the key was pressed otherwise).
      event.preventDefault();
      setTimeout(() => {
        if (K.menu === menu) focusMenu();
      }, 0);
    }
  }

  Object.assign(K, { openMenu, closeMenu, keydown });
})(globalThis[Symbol.for("org.keyport.AutoFill")]);
