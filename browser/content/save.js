// Keyport AutoFill in the page, 5 of 6: a form submitted with a password is offered for saving
// (the background asks the person; nothing is saved without their click on "Save").
"use strict";

((K) => {
  // Defined once: a second injection into the document (main.js) finds it running.
  if (K.started) return;

  function submitted(event) {
    const form = event.target;
    const passwords = Array.from(form.querySelectorAll('input[type="password"]')).filter((input) => input.value);
    if (passwords.length === 0) return;
    // A change-password form has several: the last is the new one.
    const password = passwords[passwords.length - 1];
    const named = form.querySelector('input[autocomplete~="username"]');
    const user = named || K.userFieldFor(passwords[0]);
    K.post({ type: "submitted", user: user ? user.value : "", password: password.value });
    // Once the event has been through the page: a submit the page did not cancel leaves this
    // document for the next, where the offer is made; one it canceled (a sign-in by script) stays.
    setTimeout(() => {
      if (event.defaultPrevented) K.post({ type: "stays" });
    }, 0);
  }

  Object.assign(K, { submitted });
})(globalThis[Symbol.for("org.keyport.AutoFill")]);
