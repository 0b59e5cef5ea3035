import Crypto
import Foundation
import KeyportDomains
import KeyportEncoding
import KeyportPasskeys
import Testing

@Suite("WebAuthn's formats")
struct FormatTests {
    @Test("an ES256 COSE key is WebAuthn's 77 bytes, labels 1, 3, -1, -2, -3 in order; it reads back and verifies")
    func es256Key() throws {
        let privateKey = P256.Signing.PrivateKey()
        let key = COSEKey(p256: privateKey.publicKey)
        let bytes = key.encoded
        #expect(bytes.count == 77)
        #expect(Array(bytes.prefix(10)) == [0xA5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20])
        let read = try COSEKey(try CBORReader.read(bytes))
        #expect(read == key)
        #expect(read.subjectPublicKeyInfo == Array(privateKey.publicKey.derRepresentation))
        let message = Array("signed".utf8)
        #expect(read.isValidSignature(Array(try privateKey.signature(for: message).derRepresentation), for: message))
        #expect(!read.isValidSignature(Array(try privateKey.signature(for: message).rawRepresentation), for: message))
    }

    @Test("an Ed25519 key's SubjectPublicKeyInfo is RFC 8410's, as OpenSSL writes it")
    func ed25519Key() throws {
        let key = COSEKey(ed25519: Curve25519.Signing.PrivateKey().publicKey)
        #expect(key.encoded.count == 42)
        #expect(
            Array(key.subjectPublicKeyInfo.prefix(12)) == [
                0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00,
            ]
        )
        #expect(try COSEKey(try CBORReader.read(key.encoded)) == key)
    }

    @Test(
        "COSE keys that do not hold together are refused, saying what is wrong",
        arguments: [
            (CBOR.text("key"), "the credential public key is text, not a map"),
            (.map([.init(.int(1), .int(2))]), "the credential public key has no algorithm (label 3)"),
            (
                .map([.init(.int(1), .int(4)), .init(.int(3), .int(-7))]),
                "the credential public key's key type 4 is none of EC2, OKP and RSA"
            ),
            (
                .map([.init(.int(1), .int(1)), .init(.int(3), .int(-8)), .init(.int(-1), .int(4))]),
                "the credential public key's OKP curve 4 is not Ed25519 (6)"
            ),
            (
                .map([
                    .init(.int(1), .int(2)), .init(.int(3), .int(-8)), .init(.int(-1), .int(1)),
                    .init(.int(-2), .bytes([1])), .init(.int(-3), .bytes([2])),
                ]),
                "the credential public key's algorithm EdDSA (-8) does not fit its key type, curve and coordinate sizes"
            ),
            (
                .map([
                    .init(.int(1), .int(2)), .init(.int(3), .int(-7)), .init(.int(-1), .int(1)),
                    .init(.int(-2), .text("x")),
                ]),
                "the credential public key has x (label -2) as text"
            ),
        ]
    )
    func badKeys(item: CBOR, message: String) {
        #expect(throws: PasskeyDataError.self) { try COSEKey(item) }
        do {
            _ = try COSEKey(item)
        } catch {
            #expect(error.message == message)
        }
    }

    @Test("a point that is not on P-256 is not a key, nor one whose coordinates are 31 and 33 bytes")
    func offCurve() throws {
        let point = Array(P256.Signing.PrivateKey().publicKey.x963Representation)
        let shifted = COSEKey.Material.ellipticCurve(curve: 1, x: Array(point[1..<32]), y: Array(point[32...]))
        #expect(throws: PasskeyDataError(.unsupported, "")) { try COSEKey(algorithm: .es256, material: shifted) }
        let material = COSEKey.Material.ellipticCurve(
            curve: 1,
            x: [UInt8](repeating: 1, count: 32),
            y: [UInt8](repeating: 2, count: 32)
        )
        #expect(throws: PasskeyDataError(.malformed, "")) { try COSEKey(algorithm: .es256, material: material) }
    }

    @Test("authenticator data writes rpIdHash, flags, counter, credential and extensions, and reads back the same")
    func authenticatorData() throws {
        let key = COSEKey(p256: P256.Signing.PrivateKey().publicKey)
        let credential = AuthenticatorData.AttestedCredential(
            aaguid: SoftwareAuthenticator.testAAGUID,
            credentialID: [1, 2, 3],
            publicKey: key
        )
        let data = AuthenticatorData(
            rpID: "example.com",
            flags: [.userPresent, .backupEligible, .backedUp],
            signCount: 0x0102_0304,
            attestedCredential: credential,
            extensions: .map([.init(.text("credProtect"), .unsigned(2))])
        )
        let bytes = data.bytes
        #expect(Array(bytes[0..<32]) == Array(SHA256.hash(data: Array("example.com".utf8))))
        #expect(bytes[32] == 0x01 | 0x08 | 0x10 | 0x40 | 0x80)
        #expect(Array(bytes[33..<37]) == [1, 2, 3, 4])
        #expect(Array(bytes[37..<53]) == SoftwareAuthenticator.testAAGUID)
        #expect(Array(bytes[53..<58]) == [0, 3, 1, 2, 3])
        #expect(data.flags == [.userPresent, .backupEligible, .backedUp, .attestedCredentialData, .extensionData])
        #expect(try AuthenticatorData(bytes) == data)
        #expect(data.isFor(rpID: "example.com"))
        #expect(!data.isFor(rpID: "login.example.com"))
    }

    @Test(
        "authenticator data that breaks WebAuthn's rules is refused",
        arguments: [
            ([UInt8](repeating: 0, count: 36), "the authenticator data is 36 bytes, fewer than the 37 it always has"),
            (
                [UInt8](repeating: 0, count: 32) + [0x10, 0, 0, 0, 0],
                "the authenticator data says backed up (BS) but not backup eligible (BE)"
            ),
            (
                [UInt8](repeating: 0, count: 32) + [0x41, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 10),
                "the authenticator data ends inside its attested credential data (AT is set)"
            ),
            (
                [UInt8](repeating: 0, count: 32) + [0x01, 0, 0, 0, 0, 0xA0],
                "the authenticator data has 1 bytes after its last part (are AT and ED set right?)"
            ),
            (
                [UInt8](repeating: 0, count: 32) + [0x81, 0, 0, 0, 0, 0x01],
                "the authenticator data has extensions that are an integer, not a map"
            ),
            (
                [UInt8](repeating: 0, count: 32) + [0x81, 0, 0, 0, 0, 0xA1],
                "the authenticator data has extensions that are not CBOR: a map of 1 pairs where 0 bytes are left (at byte 37)"
            ),
            (
                [UInt8](repeating: 0, count: 32) + [0x41, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 16) + [0, 0],
                "the authenticator data has a credential id of 0 bytes; 1 to 1023 are allowed"
            ),
        ]
    )
    func badAuthenticatorData(bytes: [UInt8], message: String) {
        do {
            _ = try AuthenticatorData(bytes)
            Issue.record("read")
        } catch {
            #expect(error.message == message)
        }
    }

    @Test(
        "a none attestation object is {fmt, attStmt, authData} in that order, and reads back; others' formats read, a none with a statement does not"
    )
    func attestationObject() throws {
        let registration = try SoftwareAuthenticator(aaguid: SoftwareAuthenticator.testAAGUID).register(
            rpID: "example.com",
            algorithms: [.es256],
            userVerified: false
        )
        let bytes = registration.attestationObject.bytes
        #expect(
            Array(bytes.prefix(18)) == [0xA3, 0x63] + Array("fmt".utf8) + [0x64] + Array("none".utf8) + [0x67]
                + Array("attStmt".utf8)
        )
        let read = try AttestationObject(bytes)
        #expect(read == registration.attestationObject)
        #expect(read.authenticatorData.attestedCredential?.credentialID == registration.credentialID)
        #expect(read.authenticatorData.flags == [.userPresent, .backupEligible, .backedUp, .attestedCredentialData])

        let packed = CBOR.map([
            .init(.text("fmt"), .text("packed")), .init(.text("attStmt"), .map([.init(.text("alg"), .int(-7))])),
            .init(.text("authData"), .bytes(read.authenticatorDataBytes)),
        ])
        #expect(try AttestationObject(packed.encoded).format == "packed")
        let noneWithStatement = CBOR.map([
            .init(.text("fmt"), .text("none")), .init(.text("attStmt"), .map([.init(.text("x"), .null)])),
            .init(.text("authData"), .bytes(read.authenticatorDataBytes)),
        ])
        #expect(throws: PasskeyDataError.self) { try AttestationObject(noneWithStatement.encoded) }
        let assertionData = CBOR.map([
            .init(.text("fmt"), .text("none")), .init(.text("attStmt"), .map([])),
            .init(.text("authData"), .bytes(AuthenticatorData(rpID: "example.com", flags: .userPresent).bytes)),
        ])
        do {
            _ = try AttestationObject(assertionData.encoded)
            Issue.record("read")
        } catch {
            #expect(
                error.message
                    == "the attestation object has authenticator data without the new credential (AT is not set)"
            )
        }
        #expect(throws: PasskeyDataError.self) { try AttestationObject([0x01]) }
    }

    @Test("clientDataJSON is written as browsers write it, escaping what JSON must, with topOrigin only across origins")
    func clientData() throws {
        let data = CollectedClientData(.get, challenge: [0xFB, 0xFF], origin: "https://login.example.com")
        #expect(
            String(decoding: data.json, as: UTF8.self)
                == #"{"type":"webauthn.get","challenge":"-_8","origin":"https://login.example.com","crossOrigin":false}"#
        )
        #expect(data.hash == Array(SHA256.hash(data: data.json)))
        let framed = CollectedClientData(
            .create,
            challenge: [1],
            origin: "https://a.example",
            topOrigin: "https://b\"c.example"
        )
        #expect(
            String(decoding: framed.json, as: UTF8.self)
                == #"{"type":"webauthn.create","challenge":"AQ","origin":"https://a.example","crossOrigin":true,"topOrigin":"https://b\"c.example"}"#
        )
        let parsed = try JSONSerialization.jsonObject(with: Data(framed.json)) as? [String: Any]
        #expect(parsed?["topOrigin"] as? String == "https://b\"c.example")
    }

    @Test(
        "an origin is a secure web origin written as a browser writes it",
        arguments: [
            (
                "http://example.com",
                "http://example.com is not a secure origin: passkeys are for https (and localhost) only"
            ),
            ("https://192.0.2.1", "https://192.0.2.1 is an IP address, which has no domain for a passkey"),
            (
                "https://Example.com",
                "\"https://Example.com\" is not a web origin as a browser writes one (https://host[:port])"
            ),
            (
                "https://example.com/",
                "\"https://example.com/\" is not a web origin as a browser writes one (https://host[:port])"
            ),
            (
                "https://example.com:443",
                "\"https://example.com:443\" is not a web origin as a browser writes one (https://host[:port])"
            ),
            ("example.com", "\"example.com\" is not a web origin as a browser writes one (https://host[:port])"),
            (
                "ftp://example.com",
                "ftp://example.com is not a secure origin: passkeys are for https (and localhost) only"
            ),
        ]
    )
    func badOrigins(text: String, message: String) {
        #expect(throws: WebAuthnError(.security, "")) { try RelyingPartyID.origin(text) }
        do {
            _ = try RelyingPartyID.origin(text)
        } catch {
            #expect(error.message == message)
        }
    }

    @Test("https origins, with a port, and http on localhost are origins")
    func goodOrigins() throws {
        #expect(try RelyingPartyID.origin("https://login.example.com:8443").port == 8443)
        #expect(try RelyingPartyID.origin("http://localhost:3000").host.isLocalhost)
        #expect(
            try RelyingPartyID.origin("https://xn--bcher-kva.example").description == "https://xn--bcher-kva.example"
        )
    }

    @Test(
        "an rp id is the origin's host or a registrable suffix of it, never a public suffix or another site",
        arguments: [
            ("https://login.example.com", "login.example.com", true),
            ("https://login.example.com", "example.com", true),
            ("https://a.b.example.co.uk", "example.co.uk", true), ("https://login.example.com", "com", false),
            ("https://example.co.uk", "co.uk", false), ("https://alice.github.io", "github.io", false),
            ("https://alice.github.io", "alice.github.io", true), ("https://login.example.com", "ample.com", false),
            ("https://login.example.com", "example.net", false), ("https://example.com", "login.example.com", false),
            ("https://login.example.com", "Example.com", false), ("https://login.example.com", "", false),
            ("http://localhost:8080", "localhost", true), ("https://login.example.com", "example.com.", false),
        ]
    )
    func rpIDs(origin: String, rpID: String, valid: Bool) throws {
        #expect(RelyingPartyID.isValid(rpID, for: try RelyingPartyID.origin(origin), in: .current) == valid)
    }

    @Test("related origins: a listed origin is admitted; five registrable labels at most; not JSON is a SecurityError")
    func relatedOrigins() throws {
        let shop = try RelyingPartyID.origin("https://shop.example.co.uk")
        let listed = Array(#"{"origins":["https://example.com","https://shop.example.co.uk"],"other":{}}"#.utf8)
        #expect(try RelyingPartyID.relatedOriginsAdmit(shop, document: listed, in: .current))
        #expect(
            try !RelyingPartyID.relatedOriginsAdmit(
                try RelyingPartyID.origin("https://example.co.uk"),
                document: listed,
                in: .current
            )
        )
        let sixLabels = Array(
            #"{"origins":["https://a.com","https://b.com","https://c.com","https://d.com","https://e.com","https://shop.example.co.uk","https://x.a.com"]}"#
                .utf8
        )
        #expect(try !RelyingPartyID.relatedOriginsAdmit(shop, document: sixLabels, in: .current))
        #expect(
            try RelyingPartyID.relatedOriginsAdmit(
                try RelyingPartyID.origin("https://x.a.com"),
                document: sixLabels,
                in: .current
            )
        )
        let sameLabelAgain = Array(
            #"{"origins":["https://a.com","https://b.com","https://c.com","https://d.com","https://example.com","https://example.co.uk"]}"#
                .utf8
        )
        #expect(
            try RelyingPartyID.relatedOriginsAdmit(
                try RelyingPartyID.origin("https://example.co.uk"),
                document: sameLabelAgain,
                in: .current
            )
        )
        for bad in [
            #"{"origins":"https://a.com"}"#, #"["https://a.com"]"#, #"{"origins":[1]}"#, #"{"origins":[]} x"#, "{",
        ] {
            #expect(throws: WebAuthnError(.security, "")) {
                try RelyingPartyID.relatedOriginsAdmit(shop, document: Array(bad.utf8), in: .current)
            }
        }
    }

    @Test("the software authenticator refuses algorithms it cannot make, with NotSupportedError")
    func unsupportedAlgorithms() {
        #expect(throws: WebAuthnError(.notSupported, "")) {
            try SoftwareAuthenticator(aaguid: SoftwareAuthenticator.testAAGUID).register(
                rpID: "example.com",
                algorithms: [.rs256, .es384],
                userVerified: false
            )
        }
        #expect(throws: PasskeyDataError(.unsupported, "")) { try PasskeyPrivateKey(pkcs8: [0x30, 0x00]) }
        #expect(PasskeyPrivateKey(newFor: [.es256])?.description == "PasskeyPrivateKey(ES256 (-7))")
    }
}

extension SoftwareAuthenticator {
    /// The tests' authenticator model, `721f7147-1b56-4e08-9f31-bb8d28eb1f09` (Keyport Vault's).
    static let testAAGUID: [UInt8] = [
        0x72, 0x1F, 0x71, 0x47, 0x1B, 0x56, 0x4E, 0x08, 0x9F, 0x31, 0xBB, 0x8D, 0x28, 0xEB, 0x1F, 0x09,
    ]
}
