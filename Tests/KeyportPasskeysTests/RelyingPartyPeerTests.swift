import Crypto
import Foundation
import KeyportEncoding
import KeyportPasskeys
import KeyportTestSupport
import Testing

/// Keyport's formats and software authenticator against relying parties nobody here wrote: Duo's
/// py_webauthn and Yubico's python-fido2 (PyPI, `scripts/test` installs both) make the options and
/// verify what comes back, as a site does. The test plays the client's part (keyportd's, later)
/// with KeyportPasskeys' own client data.
@Suite("Passkeys against py_webauthn and python-fido2")
struct RelyingPartyPeerTests {
    static let origin = "https://login.example.com"
    static let rpID = "example.com"

    /// Runs the relying party's `command` with `given` on its standard input; its JSON answer.
    static func relyingParty(
        _ library: String,
        _ command: String,
        _ arguments: [String],
        _ given: [String: Any] = [:]
    )
        async throws -> [String: Any]
    {
        let python = try await Peers.python(importing: ["webauthn", "fido2"])
        let script = Peers.file("Tests/KeyportPasskeysTests/Peers/relying_party.py")
        let input = try JSONSerialization.data(withJSONObject: given)
        let ran = try await Program.run(
            python,
            [script, library, command] + arguments,
            input: input,
            timeout: .seconds(60)
        )
        guard ran.status == 0 else { throw Refused(message: ran.standardError) }
        return try #require(try JSONSerialization.jsonObject(with: Data(ran.standardOutput.utf8)) as? [String: Any])
    }

    struct Refused: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    static func b64(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes) }

    static func unb64(_ any: Any?) throws -> [UInt8] {
        try Base64URL.decode(try #require(any as? String))
    }

    /// A passkey registered with the relying party: what the site keeps, and what the authenticator does.
    struct Registered {
        var site: [String: Any]
        var key: PasskeyPrivateKey
        var credentialID: [UInt8]
    }

    /// Registration as a browser would carry it out: options from the site, client data made for
    /// `origin`, the authenticator's attestation, `PublicKeyCredential.toJSON()` back to the site.
    static func register(
        _ library: String,
        userVerified: Bool = false,
        requireUV: Bool = false
    ) async throws -> Registered {
        let begun = try await relyingParty(library, "begin-registration", [rpID])
        let options = try #require(begun["options"] as? [String: Any])
        let challenge = try unb64(options["challenge"])
        let params = try #require(options["pubKeyCredParams"] as? [[String: Any]])
        let algorithms = params.compactMap { ($0["alg"] as? Int).map { COSEAlgorithm(rawValue: Int64($0)) } }
        let clientData = CollectedClientData(.create, challenge: challenge, origin: origin)
        let registration = try SoftwareAuthenticator(aaguid: SoftwareAuthenticator.testAAGUID).register(
            rpID: rpID,
            algorithms: algorithms,
            userVerified: userVerified
        )
        let publicKey = try registration.privateKey.publicKey
        let credential: [String: Any] = [
            "id": b64(registration.credentialID), "rawId": b64(registration.credentialID), "type": "public-key",
            "authenticatorAttachment": "platform", "clientExtensionResults": [String: Any](),
            "response": [
                "clientDataJSON": b64(clientData.json), "attestationObject": b64(registration.attestationObject.bytes),
                "authenticatorData": b64(registration.attestationObject.authenticatorDataBytes),
                "transports": ["internal", "hybrid"], "publicKey": b64(publicKey.subjectPublicKeyInfo),
                "publicKeyAlgorithm": Int(publicKey.algorithm.rawValue),
            ],
        ]
        let site = try await relyingParty(
            library,
            "finish-registration",
            [rpID, origin],
            ["state": begun["state"]!, "credential": credential, "requireUV": requireUV]
        )
        return Registered(site: site, key: registration.privateKey, credentialID: registration.credentialID)
    }

    /// Signs in with `passkey`: options from the site, naming the credential; the assertion back.
    static func signIn(
        _ library: String,
        _ passkey: Registered,
        userVerified: Bool = false,
        requireUV: Bool = false,
        origin: String = origin,
        tamper: (inout [UInt8]) -> Void = { _ in }
    ) async throws -> [String: Any] {
        let begun = try await relyingParty(
            library,
            "begin-authentication",
            [rpID],
            ["credentialIds": [b64(passkey.credentialID)]]
        )
        let options = try #require(begun["options"] as? [String: Any])
        #expect(options["rpId"] as? String == rpID)
        let clientData = CollectedClientData(.get, challenge: try unb64(options["challenge"]), origin: origin)
        let assertion = try SoftwareAuthenticator(aaguid: SoftwareAuthenticator.testAAGUID).assert(
            with: passkey.key,
            rpID: rpID,
            clientDataHash: clientData.hash,
            userVerified: userVerified
        )
        var signature = assertion.signature
        tamper(&signature)
        let credential: [String: Any] = [
            "id": b64(passkey.credentialID), "rawId": b64(passkey.credentialID), "type": "public-key",
            "authenticatorAttachment": "platform", "clientExtensionResults": [String: Any](),
            "response": [
                "clientDataJSON": b64(clientData.json), "authenticatorData": b64(assertion.authenticatorData),
                "signature": b64(signature), "userHandle": b64(Array("user-0001".utf8)),
            ],
        ]
        return try await relyingParty(
            library,
            "finish-authentication",
            [rpID, Self.origin],
            ["state": begun["state"]!, "credential": credential, "registered": passkey.site, "requireUV": requireUV]
        )
    }

    @Test(
        "py_webauthn registers an EdDSA passkey (its first choice): none attestation, Keyport's AAGUID, BE and BS, counter 0; it signs in"
    )
    func pyWebAuthn() async throws {
        let passkey = try await Self.register("webauthn")
        #expect(passkey.key.algorithm == .edDSA)
        #expect(passkey.site["fmt"] as? String == "none")
        #expect(passkey.site["aaguid"] as? String == "721f7147-1b56-4e08-9f31-bb8d28eb1f09")
        #expect(passkey.site["backupEligible"] as? Bool == true)
        #expect(passkey.site["backedUp"] as? Bool == true)
        #expect(passkey.site["signCount"] as? Int == 0)
        #expect(passkey.site["userVerified"] as? Bool == false)
        let signedIn = try await Self.signIn("webauthn", passkey)
        #expect(signedIn["credentialId"] as? String == Self.b64(passkey.credentialID))
        #expect(signedIn["newSignCount"] as? Int == 0)
        #expect(signedIn["backedUp"] as? Bool == true)
        // A second sign-in with the counter still 0 is accepted: a synced passkey's counter never moves.
        _ = try await Self.signIn("webauthn", passkey)
    }

    @Test("python-fido2 registers an ES256 passkey (its first choice) and signs in with it, twice")
    func pythonFIDO2() async throws {
        let passkey = try await Self.register("fido2")
        #expect(passkey.key.algorithm == .es256)
        #expect(passkey.site["aaguid"] as? String == "721f7147-1b56-4e08-9f31-bb8d28eb1f09")
        #expect(passkey.site["backupEligible"] as? Bool == true)
        #expect(passkey.site["backedUp"] as? Bool == true)
        for _ in 0..<2 {
            let signedIn = try await Self.signIn("fido2", passkey)
            #expect(signedIn["credentialId"] as? String == Self.b64(passkey.credentialID))
        }
    }

    @Test("user verification: UV is set only when the person was verified, and a site that requires it refuses without")
    func userVerification() async throws {
        await #expect(throws: Refused.self) {
            _ = try await Self.register("webauthn", userVerified: false, requireUV: true)
        }
        let passkey = try await Self.register("webauthn", userVerified: true, requireUV: true)
        #expect(passkey.site["userVerified"] as? Bool == true)
        let verified = try await Self.signIn("webauthn", passkey, userVerified: true, requireUV: true)
        #expect(verified["userVerified"] as? Bool == true)
        await #expect(throws: Refused.self) {
            _ = try await Self.signIn("webauthn", passkey, userVerified: false, requireUV: true)
        }
        await #expect(throws: Refused.self) {
            _ = try await Self.signIn("fido2", try await Self.register("fido2"), requireUV: true)
        }
    }

    @Test("both sites refuse a signature changed by a bit, and client data for another origin")
    func refusals() async throws {
        for library in ["webauthn", "fido2"] {
            let passkey = try await Self.register(library)
            await #expect(throws: Refused.self) {
                _ = try await Self.signIn(library, passkey) { $0[$0.count / 2] ^= 0x01 }
            }
            await #expect(throws: Refused.self) {
                _ = try await Self.signIn(library, passkey, origin: "https://login.example.net")
            }
        }
    }

    @Test(
        "passkeys another manager made (PKCS#8 from pyca/cryptography: P-256, P-384, P-521, Ed25519, RSA) sign assertions both sites accept"
    )
    func importedKeys() async throws {
        // py_webauthn verifies no ES384 or ES512; python-fido2 verifies every one.
        for (name, libraries) in [
            ("P-256", ["webauthn", "fido2"]), ("P-384", ["fido2"]), ("P-521", ["fido2"]),
            ("Ed25519", ["webauthn", "fido2"]),
            ("RSA", ["webauthn", "fido2"]),
        ] {
            let python = try await Peers.python(importing: ["webauthn", "fido2"])
            let made = try await Program.run(
                python,
                [Peers.file("Tests/KeyportPasskeysTests/Peers/relying_party.py"), "keygen", name]
            )
            let der = try Self.unb64(
                (try JSONSerialization.jsonObject(with: Data(made.standardOutput.utf8)) as? [String: String])?["pkcs8"]
            )
            let key = try PasskeyPrivateKey(pkcs8: der)
            #expect(Array(key.pkcs8) == der || name != "Ed25519", "\(name): an Ed25519 key writes back as it was read")
            // The site learned the public key at registration: its COSE form, and the attested
            // credential data python-fido2 keeps (a zero AAGUID, the id's length, the id, the key).
            let credentialID = Array(SHA256.hash(data: der).prefix(16))
            let cose = try key.publicKey.encoded
            let attested = [UInt8](repeating: 0, count: 16) + [0, UInt8(credentialID.count)] + credentialID + cose
            let passkey = Registered(
                site: ["publicKey": Self.b64(cose), "signCount": 0, "attestedCredentialData": Self.b64(attested)],
                key: key,
                credentialID: credentialID
            )
            for library in libraries {
                let signedIn = try await Self.signIn(library, passkey)
                #expect(signedIn["credentialId"] as? String == Self.b64(credentialID), "\(name) with \(library)")
            }
        }
    }

    @Test("PRF outputs are WebAuthn's: HMAC-SHA-256 of the salted input under the passkey's secret, the same each time")
    func prf() async throws {
        let secret = PRF.newSecret()
        let secretBytes = secret.withUnsafeBytes { Array($0) }
        for input in [Array("first".utf8), [], [UInt8](repeating: 0xA5, count: 100)] {
            let ours = PRF.output(secret: secret, salt: PRF.salt(for: input)).withUnsafeBytes { Array($0) }
            let again = PRF.output(secret: secret, salt: PRF.salt(for: input)).withUnsafeBytes { Array($0) }
            #expect(ours == again)
            let python = try await Peers.python(importing: ["webauthn", "fido2"])
            let ran = try await Program.run(
                python,
                [
                    Peers.file("Tests/KeyportPasskeysTests/Peers/relying_party.py"), "prf", Self.b64(secretBytes),
                    Self.b64(input),
                ]
            )
            let theirs = try JSONSerialization.jsonObject(with: Data(ran.standardOutput.utf8)) as? [String: String]
            #expect(theirs?["output"] == Self.b64(ours))
        }
    }
}
