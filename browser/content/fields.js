// Keyport AutoFill in the page, 1 of 6 (the manifest loads them in order; each adds its part to
// one namespace of this extension's own: content scripts run in a world the page cannot reach):
// which fields are filled, and whether the person can see one.
"use strict";

// The parts' one namespace, keyed by a symbol: the window names the page's elements by their ids
// and names, never by a symbol, so nothing of the page's can stand in for it.
globalThis[Symbol.for("org.keyport.AutoFill")] ??= Object.create(null);

((K) => {
  // Defined once: a second injection into the document (main.js) finds it running.
  if (K.started) return;

  const OTP_WORDS = /(^|[^a-z])(otp|totp|2fa|mfa|one.?time|passcode|verification|security.?code|auth.?code|code)([^a-z]|$)/i;

  /// What the page says of `input`: its name, id, placeholder, ARIA label and labels' text.
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

  /// Whether `input` is where a site offers passkeys (`autocomplete="username webauthn"`): its
  /// menu lists them beside the passwords while the page waits for a conditional sign-in.
  function forPasskeys(input) {
    return (input.getAttribute("autocomplete") || "").toLowerCase().split(/\s+/).includes("webauthn");
  }

  /// The password field of `input`'s form (or page): the first the person can see, else the
  /// first enabled one (which makes a form a sign-in form, though it is not filled).
  function passwordNear(input) {
    const scope = input.form || input.closest("form") || document;
    const passwords = Array.from(scope.querySelectorAll('input[type="password"]')).filter((field) => !field.disabled);
    return passwords.find(fillable) || passwords[0];
  }

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

  Object.assign(K, { codeBoxes, kindOf, forPasskeys, passwordNear, fillable, userFieldFor });
})(globalThis[Symbol.for("org.keyport.AutoFill")]);
