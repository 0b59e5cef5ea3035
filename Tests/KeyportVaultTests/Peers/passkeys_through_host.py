"""Passkeys from Keyport Vault through keyport-browser and keyportd, verified by a real relying party.

    passkeys_through_host.py HOST RELYING_PARTY_SCRIPT LIB ORIGIN RPID

Plays the browser extension's part: sends org.keyport.WebAuthn calls to keyport-browser (HOST) in native
messaging frames, as the extension does, and hands what comes back to the relying party (py_webauthn or
python-fido2, through RELYING_PARTY_SCRIPT, Tests/KeyportPasskeysTests/Peers/relying_party.py) to verify.
Prints one JSON object: each step's reply or the relying party's verdict.
"""

import json
import struct
import subprocess
import sys

host_path, rp_script, lib, origin, rp_id = sys.argv[1:6]
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


out = {}
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
        begun = relying_party("begin-authentication", [rp_id], {"credentialIds": [credential["id"]]})
        got = call("org.keyport.WebAuthn.Get", {"origin": origin, "options": begun["options"]})
        out["get_" + round] = got[-1]
        assertion = got[-1].get("parameters", {}).get("credential")
        if assertion:
            out["signed_in_" + round] = relying_party(
                "finish-authentication",
                [rp_id, origin],
                {"state": begun["state"], "credential": assertion, "registered": out["registered"]},
            )
# The same options from another site's page: keyportd refuses the relying party id.
begun = relying_party("begin-authentication", [rp_id], {})
out["other_site"] = call("org.keyport.WebAuthn.Get", {"origin": "https://example.net", "options": begun["options"]})[-1]
host.stdin.close()
host.wait(timeout=30)
print(json.dumps(out))
