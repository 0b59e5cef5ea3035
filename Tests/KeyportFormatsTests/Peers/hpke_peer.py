"""Keyport's encrypted CXF export, written from docs/protocol.md ("Encrypted CXF export file")
with pyhpke, an HPKE implementation nobody here wrote, for the tests to check Keyport against.

  hpke_peer.py open KEYFILE REQUEST EXPORT   prints the CXF document EXPORT holds
                                             (KEYFILE: a key file without a passphrase)
  hpke_peer.py seal REQUEST < DOCUMENT       prints an export of DOCUMENT sealed to REQUEST's key
"""
import base64
import hashlib
import json
import sys

from pyhpke import AEADId, CipherSuite, KDFId, KEMId, KEMKey

SUITE = CipherSuite.new(KEMId.DHKEM_X25519_HKDF_SHA256, KDFId.HKDF_SHA256, AEADId.AES256_GCM)
LABEL = b"keyport-cxf-hpke-v1"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def info(request: bytes) -> bytes:
    return LABEL + hashlib.sha256(request).digest()


def aad(response: dict) -> bytes:
    # RFC 8785 (JCS) of every member but the payload: for these members (ASCII names, small
    # integers, strings) Python's sorted, compact, non-ASCII-keeping dump is the same text.
    header = {name: value for name, value in response.items() if name != "payload"}
    return json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def open_export(key_path: str, request_path: str, export_path: str) -> None:
    with open(key_path, "rb") as f:
        key_file = json.load(f)
    with open(request_path, "rb") as f:
        request = f.read()
    with open(export_path, "rb") as f:
        response = json.load(f)
    assert key_file["request"] == b64url(hashlib.sha256(request).digest()), "the key file names its request"
    hpke = response["hpke"]
    assert (hpke["mode"], hpke["kem"], hpke["kdf"], hpke["aead"]) == ("base", 32, 1, 2)
    private = KEMKey.from_jwk(key_file["key"])
    context = SUITE.create_recipient_context(unb64url(hpke["key"]["x"]), private, info=info(request))
    sys.stdout.buffer.write(context.open(unb64url(response["payload"]), aad=aad(response)))


def seal(request_path: str) -> None:
    with open(request_path, "rb") as f:
        request = f.read()
    document = sys.stdin.buffer.read()
    chosen = next(
        suite for suite in json.loads(request)["hpke"]
        if (suite["mode"], suite["kem"], suite["kdf"], suite["aead"]) == ("base", 32, 1, 2)
    )
    enc, context = SUITE.create_sender_context(KEMKey.from_jwk(chosen["key"]), info=info(request))
    response = {
        "version": 0,
        "hpke": {"mode": "base", "kem": 32, "kdf": 1, "aead": 2,
                 "key": {"kty": "OKP", "crv": "X25519", "x": b64url(enc)}},
        "exporter": "pyhpke.example",
    }
    response["payload"] = b64url(context.seal(document, aad=aad(response)))
    sys.stdout.write(json.dumps(response, indent=2) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "open":
        open_export(*sys.argv[2:5])
    else:
        seal(sys.argv[2])
