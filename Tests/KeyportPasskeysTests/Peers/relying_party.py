"""A relying party nobody here wrote: Duo's py_webauthn or Yubico's python-fido2, as a site runs them.

    relying_party.py LIB begin-registration RPID        -> {"options": ..., "state": ...}
    relying_party.py LIB finish-registration RPID ORIGIN   stdin {"state", "credential"[, "requireUV"]}
    relying_party.py LIB begin-authentication RPID      stdin {"credentialIds": [...]} -> {"options", "state"}
    relying_party.py LIB finish-authentication RPID ORIGIN stdin {"state", "credential", "registered"[, "requireUV"]}
    relying_party.py prf SECRET INPUT                   -> the PRF output WebAuthn defines, computed here
    relying_party.py keygen ALGORITHM                   -> a PKCS#8 private key made by pyca/cryptography

LIB is "webauthn" (py_webauthn) or "fido2" (python-fido2). Options are PublicKeyCredentialCreationOptionsJSON
or RequestOptionsJSON as each library writes them; credentials are PublicKeyCredential.toJSON(). A refusal
exits 1 with the library's own message on standard error.
"""

import base64
import hashlib
import hmac
import json
import sys


def b64(data):
    return base64.urlsafe_b64encode(bytes(data)).rstrip(b"=").decode()


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def name(value):
    """An enum's value, or the string py_webauthn gave instead."""
    return getattr(value, "value", value)


def webauthn_lib(command, args, given):
    import webauthn
    from webauthn.helpers import options_to_json
    from webauthn.helpers.structs import PublicKeyCredentialDescriptor, UserVerificationRequirement

    if command == "begin-registration":
        options = webauthn.generate_registration_options(
            rp_id=args[0], rp_name="Keyport's test site", user_name="alice@example.com", user_display_name="Alice"
        )
        return {"options": json.loads(options_to_json(options)), "state": {"challenge": b64(options.challenge)}}
    if command == "finish-registration":
        verified = webauthn.verify_registration_response(
            credential=given["credential"],
            expected_challenge=unb64(given["state"]["challenge"]),
            expected_rp_id=args[0],
            expected_origin=args[1],
            require_user_verification=given.get("requireUV", False),
        )
        return {
            "credentialId": b64(verified.credential_id),
            "publicKey": b64(verified.credential_public_key),
            "signCount": verified.sign_count,
            "aaguid": name(verified.aaguid),
            "fmt": name(verified.fmt),
            "userVerified": verified.user_verified,
            "backupEligible": name(verified.credential_device_type) == "multi_device",
            "backedUp": verified.credential_backed_up,
        }
    if command == "begin-authentication":
        options = webauthn.generate_authentication_options(
            rp_id=args[0],
            allow_credentials=[PublicKeyCredentialDescriptor(id=unb64(i)) for i in given.get("credentialIds", [])],
            user_verification=UserVerificationRequirement.PREFERRED,
        )
        return {"options": json.loads(options_to_json(options)), "state": {"challenge": b64(options.challenge)}}
    if command == "finish-authentication":
        registered = given["registered"]
        verified = webauthn.verify_authentication_response(
            credential=given["credential"],
            expected_challenge=unb64(given["state"]["challenge"]),
            expected_rp_id=args[0],
            expected_origin=args[1],
            credential_public_key=unb64(registered["publicKey"]),
            credential_current_sign_count=registered["signCount"],
            require_user_verification=given.get("requireUV", False),
        )
        return {
            "credentialId": b64(verified.credential_id),
            "newSignCount": verified.new_sign_count,
            "userVerified": verified.user_verified,
            "backedUp": verified.credential_backed_up,
        }
    raise SystemExit(f"unknown command {command}")


def fido2_lib(command, args, given):
    from fido2.server import Fido2Server
    from fido2.webauthn import (
        AttestedCredentialData,
        PublicKeyCredentialDescriptor,
        PublicKeyCredentialRpEntity,
        PublicKeyCredentialType,
        PublicKeyCredentialUserEntity,
    )

    server = Fido2Server(PublicKeyCredentialRpEntity(name="Keyport's test site", id=args[0]))
    if command == "begin-registration":
        user = PublicKeyCredentialUserEntity(id=b"user-0001", name="alice@example.com", display_name="Alice")
        options, state = server.register_begin(user, user_verification="preferred")
        return {"options": dict(options)["publicKey"], "state": state}
    if command == "finish-registration":
        if given.get("requireUV"):
            given["state"]["user_verification"] = "required"
        data = server.register_complete(given["state"], given["credential"])
        credential = data.credential_data
        return {
            "credentialId": b64(credential.credential_id),
            "attestedCredentialData": b64(bytes(credential)),
            "signCount": data.counter,
            "aaguid": str(credential.aaguid),
            "userVerified": data.is_user_verified(),
            "backupEligible": data.is_backup_eligible(),
            "backedUp": data.is_backed_up(),
        }
    if command == "begin-authentication":
        credentials = [
            PublicKeyCredentialDescriptor(type=PublicKeyCredentialType.PUBLIC_KEY, id=unb64(i))
            for i in given.get("credentialIds", [])
        ]
        options, state = server.authenticate_begin(credentials or None, user_verification="preferred")
        return {"options": dict(options)["publicKey"], "state": state}
    if command == "finish-authentication":
        if given.get("requireUV"):
            given["state"]["user_verification"] = "required"
        credential = AttestedCredentialData(unb64(given["registered"]["attestedCredentialData"]))
        used = server.authenticate_complete(given["state"], [credential], given["credential"])
        return {"credentialId": b64(used.credential_id)}
    raise SystemExit(f"unknown command {command}")


def main():
    if sys.argv[1] == "prf":
        # WebAuthn §10.1.4: salt = SHA-256("WebAuthn PRF" || 0x00 || input); output = HMAC-SHA-256(secret, salt).
        salt = hashlib.sha256(b"WebAuthn PRF\x00" + unb64(sys.argv[3])).digest()
        print(json.dumps({"output": b64(hmac.new(unb64(sys.argv[2]), salt, hashlib.sha256).digest())}))
        return
    if sys.argv[1] == "keygen":
        # Keys as another password manager exports them: PKCS#8, made by pyca/cryptography (OpenSSL).
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

        make = {
            "P-256": lambda: ec.generate_private_key(ec.SECP256R1()),
            "P-384": lambda: ec.generate_private_key(ec.SECP384R1()),
            "P-521": lambda: ec.generate_private_key(ec.SECP521R1()),
            "Ed25519": ed25519.Ed25519PrivateKey.generate,
            "RSA": lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048),
        }[sys.argv[2]]
        der = make().private_bytes(
            serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        print(json.dumps({"pkcs8": b64(der)}))
        return
    lib, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    given = json.load(sys.stdin) if command != "begin-registration" else {}
    try:
        result = (webauthn_lib if lib == "webauthn" else fido2_lib)(command, args, given)
    except Exception as error:  # the library's refusal, said as it said it
        print(f"{type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps(result))


main()
