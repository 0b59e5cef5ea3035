// The toolbar popup: what fits the active tab's page, filled into its focused field (or its first
// fitting one) on a click. The popup is the browser's own surface: a page cannot cover it.
"use strict";

const list = document.getElementById("list");
const status = document.getElementById("status");
const title = document.getElementById("title");

function entry(fit, credentialType) {
  const item = document.createElement("li");
  const choice = document.createElement("button");
  choice.textContent = `${credentialType === "oneTimeCode" ? "Code" : "Password"}: ${fit.identity.user || "(no user name)"}`;
  const site = document.createElement("div");
  site.className = "site";
  site.textContent = fit.fit === "exact" ? fit.providerName : `${fit.origin} · ${fit.providerName} · asks you first`;
  choice.append(site);
  choice.addEventListener("click", async (event) => {
    if (!event.isTrusted) return;
    status.textContent = "";
    const done = await chrome.runtime.sendMessage({ type: "fill", fit, credentialType });
    if (done && done.error) status.textContent = done.error;
    else if (done && done.done) window.close();
  });
  item.append(choice);
  list.append(item);
}

chrome.runtime.onMessage.addListener((message) => {
  if (message.popup && (message.type === "asking" || message.type === "refused")) status.textContent = message.message;
});

chrome.runtime.sendMessage({ type: "list" }).then((reply) => {
  if (reply.error) {
    status.textContent = reply.error;
    return;
  }
  title.textContent = `Keyport for ${reply.site}`;
  reply.codes.forEach((fit) => entry(fit, "oneTimeCode"));
  reply.passwords.forEach((fit) => entry(fit, "password"));
  if (reply.codes.length + reply.passwords.length === 0) status.textContent = "Nothing saved fits this site.";
});
