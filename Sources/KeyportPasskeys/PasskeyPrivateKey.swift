import Crypto
import CryptoExtras
import Foundation

/// A passkey's private key, as a software authenticator holds it: made new for ES256 or EdDSA, or
/// read from PKCS#8 (a CXF passkey's `key`, another manager's export) for any algorithm Keyport
/// signs with. It never prints its key, and swift-crypto's key types wipe what they hold.
package struct PasskeyPrivateKey: Sendable, CustomStringConvertible {
    private enum Key: Sendable {
        case p256(P256.Signing.PrivateKey)
        case p384(P384.Signing.PrivateKey)
        case p521(P521.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)
    }

    private let key: Key

    /// The algorithm the key signs with.
    package var algorithm: COSEAlgorithm {
        switch key {
        case .p256: .es256
        case .p384: .es384
        case .p521: .es512
        case .ed25519: .edDSA
        case .rsa: .rs256
        }
    }

    /// A new key for the first of `algorithms` (the relying party's order of preference) that
    /// Keyport makes keys for: ES256 or EdDSA. `nil` when it offers neither.
    package init?(newFor algorithms: [COSEAlgorithm]) {
        guard let algorithm = algorithms.first(where: { $0 == .es256 || $0 == .edDSA }) else { return nil }
        key = algorithm == .es256 ? .p256(P256.Signing.PrivateKey()) : .ed25519(Curve25519.Signing.PrivateKey())
    }

    /// Reads a PKCS#8 private key (RFC 5208 / 5958): P-256, P-384, P-521, Ed25519 or RSA.
    package init(pkcs8 der: some DataProtocol) throws(PasskeyDataError) {
        let bytes = Array(der)
        if let key = try? P256.Signing.PrivateKey(derRepresentation: bytes) {
            self.key = .p256(key)
        } else if let key = try? P384.Signing.PrivateKey(derRepresentation: bytes) {
            self.key = .p384(key)
        } else if let key = try? P521.Signing.PrivateKey(derRepresentation: bytes) {
            self.key = .p521(key)
        } else if bytes.count == Self.ed25519PKCS8Prefix.count + 32, bytes.starts(with: Self.ed25519PKCS8Prefix),
            let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: bytes[Self.ed25519PKCS8Prefix.count...])
        {
            self.key = .ed25519(key)
        } else if let key = try? _RSA.Signing.PrivateKey(derRepresentation: bytes) {
            self.key = .rsa(key)
        } else {
            throw PasskeyDataError(
                .unsupported,
                "the passkey's private key is not a PKCS#8 key of P-256, P-384, P-521, Ed25519 or RSA (2048 bits or more)"
            )
        }
    }

    /// The key as PKCS#8 DER, as CXF's passkey `key` holds it. A secret.
    package var pkcs8: Data {
        switch key {
        case .p256(let key): key.derRepresentation
        case .p384(let key): key.derRepresentation
        case .p521(let key): key.derRepresentation
        case .ed25519(let key): Data(Self.ed25519PKCS8Prefix) + key.rawRepresentation
        case .rsa(let key): key.pkcs8DERRepresentation
        }
    }

    /// The public key, as the authenticator data carries it.
    package var publicKey: COSEKey {
        get throws(PasskeyDataError) {
            switch key {
            case .p256(let key): return COSEKey(p256: key.publicKey)
            case .ed25519(let key): return COSEKey(ed25519: key.publicKey)
            case .p384(let key):
                let point = Array(key.publicKey.x963Representation)
                return try COSEKey(
                    algorithm: .es384,
                    material: .ellipticCurve(curve: 2, x: Array(point[1...48]), y: Array(point[49...]))
                )
            case .p521(let key):
                let point = Array(key.publicKey.x963Representation)
                return try COSEKey(
                    algorithm: .es512,
                    material: .ellipticCurve(curve: 3, x: Array(point[1...66]), y: Array(point[67...]))
                )
            case .rsa(let key):
                guard let primitives = try? key.publicKey.getKeyPrimitives() else {
                    throw PasskeyDataError(.malformed, "the passkey's RSA key has no readable modulus and exponent")
                }
                return try COSEKey(
                    algorithm: .rs256,
                    material: .rsa(n: Array(primitives.modulus), e: Array(primitives.publicExponent))
                )
            }
        }
    }

    /// The key's signature of `message`: ECDSA in ASN.1 DER with the curve's hash, Ed25519, or
    /// RSASSA-PKCS1-v1_5 with SHA-256, as WebAuthn's algorithms define them.
    package func signature(for message: [UInt8]) throws(PasskeyDataError) -> [UInt8] {
        do {
            switch key {
            case .p256(let key): return Array(try key.signature(for: message).derRepresentation)
            case .p384(let key): return Array(try key.signature(for: message).derRepresentation)
            case .p521(let key): return Array(try key.signature(for: message).derRepresentation)
            case .ed25519(let key): return Array(try key.signature(for: message))
            case .rsa(let key):
                return Array(try key.signature(for: message, padding: .insecurePKCS1v1_5).rawRepresentation)
            }
        } catch {
            throw PasskeyDataError(.malformed, "the passkey's \(algorithm) key could not sign: \(error)")
        }
    }

    /// The algorithm only; never the key.
    package var description: String { "PasskeyPrivateKey(\(algorithm))" }

    /// PKCS#8 for Ed25519 (RFC 8410) before the 32-byte seed: version 0, the OID 1.3.101.112,
    /// the seed as an OCTET STRING inside the privateKey OCTET STRING.
    private static let ed25519PKCS8Prefix: [UInt8] = [
        0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
    ]
}
