// Keyport AutoFill in the page, 4 of 6: filling what the background sends for this document, into
// the field the menu was for (or the one the toolbar popup adopted), when the person can see it.
"use strict";

((K) => {
  // Defined once: a second injection into the document (main.js) finds it running.
  if (K.started) return;

  const valueSetter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
  /// The fields the toolbar popup chose to fill, by the token of its request.
  const adopted = new Map();

  function put(input, value) {
    input.focus();
    valueSetter.call(input, value);
    input.dispatchEvent(new Event("input", { bubbles: true }));
    input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function fill(message) {
    const field = K.menu && K.menu.token === message.token ? K.menu.field : adopted.get(message.token);
    adopted.delete(message.token);
    K.closeMenu(message.token);
    const credential = message.credential || {};
    let filled = 0;
    if (message.kind === "otp") {
      const code = credential.code || "";
      const boxes = field && K.codeBoxes(field);
      if (boxes && boxes.length === code.length && boxes.every(K.fillable)) {
        boxes.forEach((box, index) => put(box, code[index]));
        filled = boxes.length;
      } else if (K.fillable(field)) {
        put(field, code);
        filled = 1;
      }
    } else if (field) {
      const password = field.type === "password" ? field : K.passwordNear(field);
      const user = field.type === "password" ? K.userFieldFor(field) : field;
      if (user && K.fillable(user) && typeof credential.user === "string") {
        put(user, credential.user);
        filled++;
      }
      if (password && K.fillable(password) && typeof credential.password === "string") {
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

  /// The toolbar popup fills the focused field of the top document, or its first fitting one.
  function adopt(message) {
    const focused = document.activeElement instanceof HTMLInputElement ? document.activeElement : null;
    let field = focused && K.kindOf(focused) === message.kind ? focused : null;
    if (!field) {
      field = Array.from(document.querySelectorAll("input")).find((input) => K.kindOf(input) === message.kind && K.fillable(input));
    }
    if (field) adopted.set(message.token, field);
  }

  Object.assign(K, { fill, adopt });
})(globalThis[Symbol.for("org.keyport.AutoFill")]);
