"""A passkey as another password manager exports it, and what its relying party kept at registration.

    exported_passkey.py RPID EXPORT.json REGISTERED.json

Writes a CXF document (EXPORT.json) holding one passkey for RPID whose key pyca/cryptography made
(P-256, PKCS#8), and REGISTERED.json: the credential id and what a relying party stores when it
registers that passkey (its COSE public key, as python-fido2 writes it, and the attested credential
data), so that a sign-in with the imported passkey can be verified without Keyport's help.
"""

import base64
import json
import os
import sys

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from fido2 import cbor, cose

rp_id, export_path, registered_path = sys.argv[1:4]


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


key = ec.generate_private_key(ec.SECP256R1())
pkcs8 = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
credential_id = os.urandom(16)
public = cbor.encode(cose.ES256.from_cryptography_key(key.public_key()))
document = {
    "version": {"major": 1, "minor": 0},
    "exporterRpId": "another-manager.example",
    "exporterDisplayName": "Another Manager",
    "timestamp": 1764700000,
    "accounts": [
        {
            "id": b64(b"account-1"),
            "username": "alice",
            "email": "alice@example.com",
            "collections": [],
            "items": [
                {
                    "id": b64(b"item-passkey-1"),
                    "title": rp_id,
                    "credentials": [
                        {
                            "type": "passkey",
                            "credentialId": b64(credential_id),
                            "rpId": rp_id,
                            "username": "alice@example.com",
                            "userDisplayName": "Alice",
                            "userHandle": b64(b"user-0001"),
                            "key": b64(pkcs8),
                        }
                    ],
                }
            ],
        }
    ],
}
with open(export_path, "w") as f:
    json.dump(document, f)
attested = bytes(16) + len(credential_id).to_bytes(2, "big") + credential_id + public
with open(registered_path, "w") as f:
    json.dump(
        {
            "credentialId": b64(credential_id),
            "registered": {"publicKey": b64(public), "signCount": 0, "attestedCredentialData": b64(attested)},
        },
        f,
    )
