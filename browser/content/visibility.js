// Keyport AutoFill in the page, 2 of 6: whether the menu was visible, steady and on top where
// the person chose in it. What the person saw at the moment of the click is what counts: a check
// that did not run close to the click, or could not see a layer the page draws, refuses.
"use strict";

((K) => {
  // Defined once: a second injection into the document (main.js) finds it running.
  if (K.started) return;

  /// How long the menu must have been wholly visible and on top before a click in it counts.
  const STEADY_MS = 500;
  /// The longest time between two frames of the page's that still counts as steady: a page that
  /// stops drawing (its main thread blocked) may meanwhile show anything the compositor can draw
  /// without it (an animation it started before), and the checks, which run on its frames, see
  /// none of it. A click counts only when the page drew frames no further apart than this, all
  /// checked, for the whole steady time up to the click.
  const FRAME_GAP_MS = 100;

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
    if (K.menu && (node === K.menu.host || node === K.menu.layer)) return "the menu";
    return node === document.documentElement ? "the page" : node === document.body ? "the page's body" : "a part of the page";
  }

  /// The menu must be what is hit at `point` (coordinates of this document's viewport): asked of
  /// the menu's own shadow tree, so that the host's place (where the page may draw its
  /// pseudo-elements, under the top layer) does not count as the menu.
  function onTopAt(x, y) {
    const hit = K.menu.shadow.elementFromPoint(x, y);
    return hit === K.menu.layer || hit === K.menu.frame;
  }

  function menuProblem() {
    const menu = K.menu;
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

  /// menuProblem, where a page that breaks the checks (clobbering the document's methods with
  /// named elements) is itself the problem.
  function safeProblem() {
    try {
      return menuProblem();
    } catch {
      return "the page interfered with the checks";
    }
  }

  /// One frame's check of the open menu, at `now`: a page that hides or covers it even for one
  /// frame, or that drew no frame for longer than FRAME_GAP_MS before this one (what was on the
  /// screen meanwhile went unchecked), restarts the time it must have been steady.
  function checkFrame(menu, now, problem) {
    const gap = menu.lastFrame === null ? 0 : now - menu.lastFrame;
    menu.lastFrame = now;
    const reason = problem || (gap > FRAME_GAP_MS ? `the page drew no frame for ${Math.round(gap)} ms` : null);
    if (reason) {
      menu.lastProblem = reason;
      menu.steadySince = null;
    } else if (menu.steadySince === null) {
      menu.steadySince = now;
    }
  }

  /// Checks the menu on every frame the browser draws while it is open.
  function monitor() {
    if (!K.menu) return;
    try {
      checkFrame(K.menu, performance.timeOrigin + performance.now(), safeProblem());
    } finally {
      if (K.menu) K.menu.monitor = requestAnimationFrame(monitor);
    }
  }

  /// Why a choice made at `clickedAt` (by the keyboard, or by a pointer that last moved in the
  /// menu at `movedAt`) does not count by time, or null when it does: the menu must have been
  /// steady for STEADY_MS before it, and a pointer must have moved in the menu since then (a menu
  /// the page summoned under a still pointer is not chosen by a click meant for the page).
  function timingProblem(menu, { clickedAt, keyboard, movedAt }) {
    if (menu.steadySince === null || clickedAt - menu.steadySince < STEADY_MS) {
      return `the menu was not steadily visible before the click${menu.lastProblem ? ` (${menu.lastProblem})` : ""}`;
    }
    if (!keyboard && !(movedAt >= menu.steadySince)) return "the pointer did not move in the menu before the click";
    return null;
  }

  /// Answers whether the menu was seen where and when the person chose in it. The answer waits
  /// for the page's next frame, whose check runs first: the time up to the click is judged only
  /// once the frames around it were checked (a page that stopped drawing over the click is then
  /// known to have).
  function check(message) {
    const answer = (ok, reason) => {
      if (!ok) console.info(`keyport: not filled: ${reason}`);
      K.post({ type: "check-result", token: message.token, ok, reason });
    };
    if (!K.menu || K.menu.token !== message.token) return answer(false, "the menu is not open here");
    requestAnimationFrame(() => {
      const menu = K.menu;
      if (!menu || menu.token !== message.token) return answer(false, "the menu is not open here");
      const problem = safeProblem();
      if (problem) return answer(false, problem);
      // The person's moment, as the menu's own page saw it (the page cannot touch it).
      const clickedAt = typeof message.clickedAt === "number" ? message.clickedAt : performance.timeOrigin + performance.now();
      const late = timingProblem(menu, { clickedAt, keyboard: message.keyboard, movedAt: message.movedAt });
      if (late) return answer(false, late);
      if (message.keyboard) return answer(true, null);
      const box = menu.frame.getBoundingClientRect();
      if (!(message.x >= 0 && message.y >= 0 && message.x < box.width && message.y < box.height)) {
        return answer(false, "the click was not in the menu");
      }
      if (!onTopAt(box.left + message.x, box.top + message.y)) return answer(false, "something of the page covers the menu");
      answer(true, null);
    });
  }

  Object.assign(K, { STEADY_MS, FRAME_GAP_MS, concealment, checkFrame, timingProblem, monitor, check });
})(globalThis[Symbol.for("org.keyport.AutoFill")]);
