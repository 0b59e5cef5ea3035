import CredentialExchangeFormat
import Crypto
import Foundation
import Testing

@Suite("PKCS#8 keys")
struct PrivateKeyInfoTests {
    @Test("a P-256 key without its public key gets it derived")
    func derivesP256() throws {
        let info = try PrivateKeyInfo(derEncoded: try Fixture.key("p256_nopub"))
        #expect(info.algorithm == .p256)
        #expect(info.publicKeyWasDerived)
        #expect(Data(info.publicKey) == (try Fixture.key("p256_pub")))
    }

    @Test("swift-crypto's own P-256 keys parse, with their embedded public key")
    func swiftCryptoKeys() throws {
        let key = P256.Signing.PrivateKey()
        let info = try PrivateKeyInfo(derEncoded: key.derRepresentation, verifyPublicKey: true)
        #expect(info.publicKey == Array(key.publicKey.x963Representation))
        #expect(!info.publicKeyWasDerived)
        let p384 = P384.Signing.PrivateKey()
        #expect(
            try PrivateKeyInfo(derEncoded: p384.derRepresentation).publicKey == Array(p384.publicKey.x963Representation)
        )
        let p521 = P521.Signing.PrivateKey()
        #expect(try PrivateKeyInfo(derEncoded: p521.derRepresentation).algorithm == .p521)
    }

    @Test("Ed25519 public keys are derived; RSA keys report their size")
    func ed25519AndRSA() throws {
        let ed = try PrivateKeyInfo(derEncoded: try Fixture.key("ed25519"))
        #expect(ed.algorithm == .ed25519)
        #expect(Data(ed.publicKey) == (try Fixture.key("ed25519_pub")))
        let rsa = try PrivateKeyInfo(derEncoded: try Fixture.key("rsa"))
        #expect(rsa.algorithm == .rsa(modulusBits: 2048))
        #expect(rsa.algorithm.sshKeyTypes.contains("ssh-rsa"))
    }

    @Test("a public key that belongs to another private key is caught when asked")
    func mismatchedPublicKey() throws {
        let a = P256.Signing.PrivateKey()
        let b = P256.Signing.PrivateKey()
        var der = a.derRepresentation
        let range = try #require(der.range(of: a.publicKey.x963Representation))
        der.replaceSubrange(range, with: b.publicKey.x963Representation)
        #expect(throws: PrivateKeyInfo.Error.self) { try PrivateKeyInfo(derEncoded: der, verifyPublicKey: true) }
        #expect(try PrivateKeyInfo(derEncoded: der).publicKey == Array(b.publicKey.x963Representation))
    }

    @Test(
        "bad input says what is wrong",
        arguments: [
            (Data("-----BEGIN PRIVATE KEY-----".utf8), "PEM"),
            (Data([0x30, 0x03, 0x02, 0x01]), "not PKCS#8 DER"),
            (Data(), "not PKCS#8 DER"),
        ]
    )
    func errors(der: Data, expected: String) {
        do {
            _ = try PrivateKeyInfo(derEncoded: der)
            Issue.record("expected an error")
        } catch {
            #expect(error.description.contains(expected))
        }
    }

    @Test("the description never shows key material")
    func description() throws {
        let info = try PrivateKeyInfo(derEncoded: try Fixture.key("p256"))
        #expect(info.description == "PrivateKeyInfo(ECDSA P-256, public key 65 bytes)")
    }
}
