// Keyport's passkeys in the page's own world (the manifest injects this file there, before the
// page's scripts run): navigator.credentials.create() and get() with `publicKey` options, and the
// capability queries of PublicKeyCredential, answered through the extension.
//
// This world is the page's: whatever runs here, the page could do itself, so nothing here is
// trusted. A request goes, as JSON, to the extension's content script of this document (an event
// on the document: a script of a same-origin frame could send one too, as it could call this
// document's navigator.credentials), then to its background, which knows the page's origin from
// the browser, never from here; the person answers in the extension's own
// prompt or in a username field's menu. Every other request — another kind of credential, or one
// the person hands to "a security key or another device" — goes to the browser's own
// implementation, as it would without Keyport. When no provider of passkeys is enabled, or Keyport
// cannot be reached, everything is the browser's.
"use strict";

(() => {
  if (!window.isSecureContext || self.origin === "null" || typeof PublicKeyCredential !== "function") return;
  const container = CredentialsContainer.prototype;
  if (container.create === undefined || container.get === undefined) return;
  const REQUEST = "keyport:webauthn-request";
  const REPLY = "keyport:webauthn-reply";
  const native = {
    create: container.create,
    get: container.get,
    userVerifying: PublicKeyCredential.isUserVerifyingPlatformAuthenticatorAvailable,
    conditional: PublicKeyCredential.isConditionalMediationAvailable,
    capabilities: PublicKeyCredential.getClientCapabilities,
  };

  // --- Bytes ------------------------------------------------------------------------------------

  /// Whether `value` is an ArrayBuffer, of this realm or another's (a frame's).
  function isBuffer(value) {
    return Object.prototype.toString.call(value) === "[object ArrayBuffer]";
  }

  function isBytes(value) {
    return isBuffer(value) || ArrayBuffer.isView(value);
  }

  function base64url(value) {
    const bytes = isBuffer(value) ? new Uint8Array(value) : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    let text = "";
    for (const byte of bytes) text += String.fromCharCode(byte);
    return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function buffer(text) {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = new Uint8Array(binary.length);
    for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
    return bytes.buffer;
  }

  /// `value` as WebAuthn's JSON writes it: every BufferSource as base64url, recursively.
  function json(value) {
    if (isBytes(value)) return base64url(value);
    if (Array.isArray(value)) return value.map(json);
    if (value && typeof value === "object") {
      const out = {};
      for (const [key, member] of Object.entries(value)) if (member !== undefined) out[key] = json(member);
      return out;
    }
    return value;
  }

  /// The members of `object` named in `names` that it has, as JSON.
  function pick(object, names) {
    const out = {};
    for (const name of names) if (object[name] !== undefined) out[name] = json(object[name]);
    return out;
  }

  /// PublicKeyCredentialCreationOptionsJSON of the page's options: the members WebAuthn defines
  /// (a browser ignores others, and so does this).
  function creationOptions(options) {
    const out = pick(options, ["rp", "challenge", "pubKeyCredParams", "timeout", "excludeCredentials", "authenticatorSelection", "hints", "attestation", "attestationFormats", "extensions"]);
    if (options.user) out.user = pick(options.user, ["id", "name", "displayName"]);
    if (out.rp) out.rp = pick(options.rp, ["id", "name"]);
    return out;
  }

  function requestOptions(options) {
    return pick(options, ["challenge", "timeout", "rpId", "allowCredentials", "userVerification", "hints", "extensions"]);
  }

  // --- The answers, shaped as the browser's --------------------------------------------------------

  /// Extension outputs as a page gets them: PRF's results as ArrayBuffers.
  function extensionResults(outputs) {
    const out = {};
    if (outputs.credProps) out.credProps = { ...outputs.credProps };
    if (outputs.prf) {
      out.prf = {};
      if (outputs.prf.enabled !== undefined) out.prf.enabled = outputs.prf.enabled;
      if (outputs.prf.results) {
        out.prf.results = { first: buffer(outputs.prf.results.first) };
        if (outputs.prf.results.second) out.prf.results.second = buffer(outputs.prf.results.second);
      }
    }
    return out;
  }

  function define(prototype, members) {
    const object = Object.create(prototype);
    for (const [name, value] of Object.entries(members)) {
      Object.defineProperty(object, name, { value, enumerable: typeof value !== "function", configurable: true });
    }
    return object;
  }

  /// A PublicKeyCredential the page's libraries use as the browser's: `instanceof` holds, binary
  /// members are ArrayBuffers, and toJSON() gives back the JSON keyportd answered.
  function credential(answer, op) {
    const response = answer.response;
    const results = extensionResults(answer.clientExtensionResults || {});
    const made =
      op === "create"
        ? define(AuthenticatorAttestationResponse.prototype, {
            clientDataJSON: buffer(response.clientDataJSON),
            attestationObject: buffer(response.attestationObject),
            getAuthenticatorData: () => buffer(response.authenticatorData),
            getPublicKey: () => (response.publicKey ? buffer(response.publicKey) : null),
            getPublicKeyAlgorithm: () => response.publicKeyAlgorithm,
            getTransports: () => [...response.transports],
          })
        : define(AuthenticatorAssertionResponse.prototype, {
            clientDataJSON: buffer(response.clientDataJSON),
            authenticatorData: buffer(response.authenticatorData),
            signature: buffer(response.signature),
            userHandle: response.userHandle ? buffer(response.userHandle) : null,
          });
    return define(PublicKeyCredential.prototype, {
      id: answer.id,
      rawId: buffer(answer.rawId),
      type: "public-key",
      authenticatorAttachment: answer.authenticatorAttachment ?? null,
      response: made,
      getClientExtensionResults: () => results,
      toJSON: () => JSON.parse(JSON.stringify(answer)),
    });
  }

  // --- The extension ----------------------------------------------------------------------------

  let nextRequest = 1;
  const waiting = new Map(); // id → resolve

  document.addEventListener(REPLY, (event) => {
    let reply;
    try {
      reply = JSON.parse(event.detail);
    } catch {
      return;
    }
    const resolve = waiting.get(reply.id);
    if (!resolve) return;
    waiting.delete(reply.id);
    resolve(reply);
  });

  /// Sends `request` to the content script: whether it took it (it cancels each event it takes; one
  /// nobody took means the extension's script is gone from this document).
  function send(request) {
    return !document.dispatchEvent(new CustomEvent(REQUEST, { detail: JSON.stringify(request), cancelable: true }));
  }

  /// Asks the extension; `signal` (an AbortSignal) withdraws the request; after `patience`
  /// milliseconds without an answer, `fallback` is the answer, as it is at once when the content
  /// script is not there to take the request, or is gone while the request waits (asked every
  /// two seconds: a browser may remove an extension's scripts without a word).
  function ask(request, signal, patience = null, fallback = null) {
    const id = nextRequest++;
    return new Promise((resolve, reject) => {
      const unanswered = () => {
        if (!waiting.delete(id)) return;
        available = null;
        resolve(fallback);
      };
      if (patience !== null) setTimeout(unanswered, patience);
      if (signal) {
        if (signal.aborted) return reject(signal.reason ?? new DOMException("The request was aborted.", "AbortError"));
        signal.addEventListener(
          "abort",
          () => {
            if (!waiting.delete(id)) return;
            send({ id, op: "cancel" });
            reject(signal.reason ?? new DOMException("The request was aborted.", "AbortError"));
          },
          { once: true },
        );
      }
      waiting.set(id, (reply) => {
        clearInterval(alive);
        resolve(reply);
      });
      const alive = setInterval(() => {
        if (!waiting.has(id)) clearInterval(alive);
        else if (!send({ id, op: "alive" })) unanswered();
      }, 2000);
      if (!send({ ...request, id })) unanswered();
    });
  }

  /// Whether a provider of passkeys is enabled for this page, asked once a document. The extension
  /// answers even when Keyport cannot be reached; if it does not within five seconds (it is gone),
  /// the answer is no, and the next request asks again.
  let available = null;
  function passkeysAvailable() {
    available ??= ask({ op: "capabilities" }, null, 5000, { passkeys: false });
    return available.then((reply) => reply.passkeys === true);
  }

  /// The browser's own answer to `op` with the page's `options`, or Keyport's.
  async function request(op, options, credentials) {
    const own = () => native[op].call(credentials, options);
    if (!options || typeof options !== "object" || !options.publicKey) return own();
    const mediation = options.mediation;
    if (op === "create" && mediation === "conditional") return own(); // conditional create is the browser's
    let publicKey;
    try {
      publicKey = op === "create" ? creationOptions(options.publicKey) : requestOptions(options.publicKey);
    } catch {
      return own(); // options the browser will refuse with its own words
    }
    if (!(await passkeysAvailable())) return own();
    const reply = await ask({ op, options: publicKey, mediation: mediation ?? null }, options.signal, null, { fallback: true });
    if (reply.fallback) return own();
    if (reply.error) throw new DOMException(reply.message || reply.error, reply.error);
    return credential(reply.credential, op);
  }

  function replace(owner, name, implementation) {
    const original = Object.getOwnPropertyDescriptor(owner, name);
    Object.defineProperty(owner, name, {
      value: implementation,
      writable: original ? original.writable : true,
      enumerable: original ? original.enumerable : false,
      configurable: true,
    });
  }

  replace(container, "create", {
    create(options) {
      return request("create", options, this);
    },
  }.create);
  replace(container, "get", {
    get(options) {
      return request("get", options, this);
    },
  }.get);
  replace(PublicKeyCredential, "isUserVerifyingPlatformAuthenticatorAvailable", {
    async isUserVerifyingPlatformAuthenticatorAvailable() {
      return (await passkeysAvailable()) || (native.userVerifying ? native.userVerifying.call(PublicKeyCredential) : false);
    },
  }.isUserVerifyingPlatformAuthenticatorAvailable);
  replace(PublicKeyCredential, "isConditionalMediationAvailable", {
    async isConditionalMediationAvailable() {
      return (await passkeysAvailable()) || (native.conditional ? native.conditional.call(PublicKeyCredential) : false);
    },
  }.isConditionalMediationAvailable);
  replace(PublicKeyCredential, "getClientCapabilities", {
    async getClientCapabilities() {
      const browser = native.capabilities ? await native.capabilities.call(PublicKeyCredential) : {};
      if (!(await passkeysAvailable())) return browser;
      // What Keyport does for the requests it answers: conditional sign-in, a passkey provider
      // that can verify the person, related origins, PRF and credProps; not conditional create.
      return {
        ...browser,
        conditionalGet: true,
        conditionalCreate: false,
        passkeyPlatformAuthenticator: true,
        userVerifyingPlatformAuthenticator: true,
        relatedOrigins: true,
        "extension:credProps": true,
        "extension:prf": true,
      };
    },
  }.getClientCapabilities);
})();
