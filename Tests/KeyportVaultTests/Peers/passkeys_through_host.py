"""Passkeys from Keyport Vault through keyport-browser and keyportd, verified by a real relying party.

    passkeys_through_host.py HOST RELYING_PARTY_SCRIPT LIB ORIGIN RPID [REGISTERED]

With REGISTERED (a JSON file: what the relying party kept of a passkey registered elsewhere, and its
credential id), only signs in with that passkey; else registers one, signs in with it, and tries what
keyportd must refuse.

Plays the browser extension's part: sends org.keyport.WebAuthn calls to keyport-browser (HOST) in native
messaging frames, as the extension does, and hands what comes back to the relying party (py_webauthn or
python-fido2, through RELYING_PARTY_SCRIPT, Tests/KeyportPasskeysTests/Peers/relying_party.py) to verify.
Prints one JSON object: each step's reply or the relying party's verdict.
"""

import base64
import json
import struct
import time
import subprocess
import sys

host_path, rp_script, lib, origin, rp_id = sys.argv[1:6]
registered_file = sys.argv[6] if len(sys.argv) > 6 and sys.argv[6] != "--bench" else None
bench_runs = int(sys.argv[7]) if len(sys.argv) > 7 and sys.argv[6] == "--bench" else 0
host = subprocess.Popen([host_path], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
next_id = [0]


def call(method, parameters):
    """One call, with `more`; every reply until the last (the interim ones say who asks the person)."""
    next_id[0] += 1
    message = json.dumps({"id": next_id[0], "method": method, "parameters": parameters, "more": True}).encode()
    host.stdin.write(struct.pack("=I", len(message)) + message)
    host.stdin.flush()
    replies = []
    while True:
        length = struct.unpack("=I", host.stdout.read(4))[0]
        reply = json.loads(host.stdout.read(length))
        replies.append(reply)
        if not reply.get("continues"):
            return replies


def relying_party(command, args, given=None):
    ran = subprocess.run(
        [sys.executable, rp_script, lib, command, *args],
        input=json.dumps(given or {}).encode(),
        capture_output=True,
    )
    if ran.returncode != 0:
        return {"refused": ran.stderr.decode()}
    return json.loads(ran.stdout)


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def sign_in(credential_id, registered, extensions=None, chosen=False):
    """Options from the relying party naming the passkey, Get through the host (`chosen`: naming
    the passkey, as the extension does once the person clicked it in its prompt), the verdict."""
    begun = relying_party("begin-authentication", [rp_id], {"credentialIds": [credential_id]})
    options = dict(begun["options"])
    if extensions:
        options["extensions"] = extensions
    parameters = {"origin": origin, "options": options}
    if chosen:
        parameters["passkey"] = credential_id
    got = call("org.keyport.WebAuthn.Get", parameters)[-1]
    assertion = got.get("parameters", {}).get("credential")
    verdict = None
    if assertion:
        verdict = relying_party(
            "finish-authentication",
            [rp_id, origin],
            {"state": begun["state"], "credential": assertion, "registered": registered},
        )
    return got, verdict


def error_of(method, parameters):
    reply = call(method, parameters)[-1]
    return {"error": reply.get("error"), "message": reply.get("parameters", {}).get("message")}


def timed(method, parameters):
    start = time.perf_counter()
    replies = call(method, parameters)
    return (time.perf_counter() - start) * 1000, replies[-1]


out = {}
if bench_runs:
    creates, gets, lists = [], [], []
    credential = None
    for _ in range(bench_runs + 1):
        begun = relying_party("begin-registration", [rp_id])
        # As the extension calls once the person clicked: the provider (and below, the passkey)
        # named, so keyportd asks nobody else.
        ms, reply = timed("org.keyport.WebAuthn.Create",
                          {"origin": origin, "options": begun["options"], "provider": "org.keyport.vault"})
        credential = credential or reply["parameters"]["credential"]
        creates.append(ms)
    for _ in range(bench_runs + 1):
        begun = relying_party("begin-authentication", [rp_id], {"credentialIds": [credential["id"]]})
        ms, reply = timed("org.keyport.WebAuthn.Get",
                          {"origin": origin, "options": begun["options"], "passkey": credential["id"]})
        assert reply["parameters"]["credential"]["id"] == credential["id"], reply
        gets.append(ms)
    for _ in range(bench_runs):
        ms, reply = timed("org.keyport.WebAuthn.ListPasskeys", {"origin": origin, "rpId": rp_id})
        lists.append(ms)
    out = {"create": creates, "get": gets, "list": lists}
elif registered_file:
    with open(registered_file) as f:
        given = json.load(f)
    out["get"], out["signed_in"] = sign_in(given["credentialId"], given["registered"])
else:
    begun = relying_party("begin-registration", [rp_id])
    created = call("org.keyport.WebAuthn.Create", {"origin": origin, "options": begun["options"]})
    out["create"] = created[-1]
    credential = created[-1].get("parameters", {}).get("credential")
    if credential:
        out["registered"] = relying_party(
            "finish-registration", [rp_id, origin], {"state": begun["state"], "credential": credential}
        )
        listed = call("org.keyport.WebAuthn.ListPasskeys", {"origin": origin, "rpId": rp_id})
        out["listed"] = listed[-1]
        for round in ("first", "second"):
            out["get_" + round], out["signed_in_" + round] = sign_in(credential["id"], out["registered"])
        # PRF: the same input gives the same output each time; another input another.
        prf = {}
        for name, first in (("a", b"first salt"), ("again", b"first salt"), ("b", b"other salt")):
            got, verdict = sign_in(credential["id"], out["registered"], {"prf": {"eval": {"first": b64(first)}}})
            results = got.get("parameters", {}).get("credential", {}).get("clientExtensionResults", {})
            prf[name] = results.get("prf", {}).get("results", {}).get("first")
            prf[name + "_verified"] = verdict is not None and "refused" not in verdict
        out["prf"] = prf
        # The passkey the person chose in the extension's prompt: no question in the agent.
        out["get_chosen"], out["signed_in_chosen"] = sign_in(credential["id"], out["registered"], chosen=True)
        # Registering again with this passkey excluded: InvalidStateError.
        again = relying_party("begin-registration", [rp_id])
        options = dict(again["options"])
        options["excludeCredentials"] = [{"type": "public-key", "id": credential["id"]}]
        out["excluded"] = error_of("org.keyport.WebAuthn.Create", {"origin": origin, "options": options})
        # A passkey that is not here, and one of another relying party: said alike.
        begun = relying_party("begin-authentication", [rp_id], {"credentialIds": [b64(b"not-a-passkey-id")]})
        out["unknown_passkey"] = error_of("org.keyport.WebAuthn.Get", {"origin": origin, "options": begun["options"]})
        out["other_relying_party"] = error_of(
            "org.keyport.WebAuthn.Get",
            {"origin": "https://login.example.org", "options": {"challenge": begun["options"]["challenge"]}},
        )
        again = relying_party("begin-registration", [rp_id])
        options = dict(again["options"], extensions={"prf": {"evalByCredential": {credential["id"]: {"first": b64(b"x")}}}})
        out["prf_by_credential_create"] = error_of("org.keyport.WebAuthn.Create", {"origin": origin, "options": options})
    # What keyportd refuses, whatever a provider would say.
    begun = relying_party("begin-registration", [rp_id])
    options = dict(begun["options"])
    out["other_site"] = error_of("org.keyport.WebAuthn.Get", {"origin": "https://example.net", "options": {"challenge": options["challenge"], "rpId": rp_id}})
    out["http"] = error_of("org.keyport.WebAuthn.Get", {"origin": "http://login.example.com", "options": {"challenge": options["challenge"], "rpId": rp_id}})
    out["public_suffix"] = error_of(
        "org.keyport.WebAuthn.Create",
        {"origin": origin, "options": dict(options, rp={"id": "com", "name": "com"})},
    )
    out["long_user_id"] = error_of(
        "org.keyport.WebAuthn.Create",
        {"origin": origin, "options": dict(options, user=dict(options["user"], id=b64(bytes(65))))},
    )
    out["no_algorithm"] = error_of(
        "org.keyport.WebAuthn.Create",
        {"origin": origin, "options": dict(options, pubKeyCredParams=[{"type": "public-key", "alg": -65535}])},
    )
host.stdin.close()
host.wait(timeout=30)
print(json.dumps(out))
