import Crypto
import CryptoExtras
import Foundation
import KeyportEncoding

/// A COSE algorithm identifier (IANA's COSE Algorithms registry) as WebAuthn's
/// `pubKeyCredParams` and `publicKeyAlgorithm` carry it.
package struct COSEAlgorithm: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The registry's number.
    package let rawValue: Int64

    /// The algorithm numbered `rawValue`.
    package init(rawValue: Int64) { self.rawValue = rawValue }

    /// ECDSA on P-256 with SHA-256: every relying party accepts it.
    package static let es256 = COSEAlgorithm(rawValue: -7)
    /// EdDSA; with WebAuthn's keys, Ed25519.
    package static let edDSA = COSEAlgorithm(rawValue: -8)
    /// ECDSA on P-384 with SHA-384.
    package static let es384 = COSEAlgorithm(rawValue: -35)
    /// ECDSA on P-521 with SHA-512.
    package static let es512 = COSEAlgorithm(rawValue: -36)
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    package static let rs256 = COSEAlgorithm(rawValue: -257)

    /// The algorithms whose keys Keyport reads and whose signatures it checks and makes (a passkey
    /// another manager exported may use any of them); it makes new keys with ES256 and EdDSA only.
    package static let known: [COSEAlgorithm] = [.es256, .edDSA, .es384, .es512, .rs256]

    /// `ES256 (-7)`, or the number alone.
    package var description: String {
        let name: String? =
            switch self {
            case .es256: "ES256"
            case .edDSA: "EdDSA"
            case .es384: "ES384"
            case .es512: "ES512"
            case .rs256: "RS256"
            default: nil
            }
        return name.map { "\($0) (\(rawValue))" } ?? String(rawValue)
    }
}

/// A credential public key as WebAuthn carries it: a COSE_Key (RFC 9052) in the authenticator
/// data, and, for `getPublicKey()`, its SubjectPublicKeyInfo.
package struct COSEKey: Hashable, Sendable {
    /// The key's material, by key type.
    package enum Material: Hashable, Sendable {
        /// kty 2: a point on a NIST curve, as X9.63 coordinates.
        case ellipticCurve(curve: Int64, x: [UInt8], y: [UInt8])
        /// kty 1, crv 6: an Ed25519 public key.
        case ed25519(x: [UInt8])
        /// kty 3: an RSA modulus and exponent, big-endian.
        case rsa(n: [UInt8], e: [UInt8])
    }

    /// The algorithm the key is for (label 3).
    package let algorithm: COSEAlgorithm
    /// The key.
    package let material: Material

    /// The key for `algorithm` with `material`, checked to be a key that algorithm uses.
    package init(algorithm: COSEAlgorithm, material: Material) throws(PasskeyDataError) {
        self.algorithm = algorithm
        self.material = material
        _ = try verifier()
    }

    /// A P-256 public key for ES256.
    package init(p256 key: P256.Signing.PublicKey) {
        let point = Array(key.x963Representation)
        algorithm = .es256
        material = .ellipticCurve(curve: 1, x: Array(point[1...32]), y: Array(point[33...64]))
    }

    /// An Ed25519 public key for EdDSA.
    package init(ed25519 key: Curve25519.Signing.PublicKey) {
        algorithm = .edDSA
        material = .ed25519(x: Array(key.rawRepresentation))
    }

    /// Reads a COSE_Key map, checking that its type, curve and algorithm agree and that the key
    /// is a valid one (a point on its curve).
    package init(_ item: CBOR) throws(PasskeyDataError) {
        guard item.entries != nil else { throw Self.malformed("is \(item.kindDescription), not a map") }
        func integer(_ label: Int64, _ name: String) throws(PasskeyDataError) -> Int64 {
            guard let value = item[label] else { throw Self.malformed("has no \(name) (label \(label))") }
            guard let int = value.int else {
                throw Self.malformed("has \(name) (label \(label)) as \(value.kindDescription)")
            }
            return int
        }
        func bytes(_ label: Int64, _ name: String) throws(PasskeyDataError) -> [UInt8] {
            guard let value = item[label] else { throw Self.malformed("has no \(name) (label \(label))") }
            guard let bytes = value.bytes else {
                throw Self.malformed("has \(name) (label \(label)) as \(value.kindDescription)")
            }
            return bytes
        }
        let keyType = try integer(1, "key type")
        let algorithm = COSEAlgorithm(rawValue: try integer(3, "algorithm"))
        let material: Material
        switch keyType {
        case 2: material = .ellipticCurve(curve: try integer(-1, "curve"), x: try bytes(-2, "x"), y: try bytes(-3, "y"))
        case 1:
            let curve = try integer(-1, "curve")
            guard curve == 6 else {
                throw PasskeyDataError(
                    .unsupported,
                    "the credential public key's OKP curve \(curve) is not Ed25519 (6)"
                )
            }
            material = .ed25519(x: try bytes(-2, "x"))
        case 3: material = .rsa(n: try bytes(-1, "modulus n"), e: try bytes(-2, "exponent e"))
        default:
            throw PasskeyDataError(
                .unsupported,
                "the credential public key's key type \(keyType) is none of EC2, OKP and RSA"
            )
        }
        try self.init(algorithm: algorithm, material: material)
    }

    private static func malformed(_ what: String) -> PasskeyDataError {
        PasskeyDataError(.malformed, "the credential public key \(what)")
    }

    /// The COSE_Key map, labels in CTAP2's order when encoded.
    package var cbor: CBOR {
        var entries: [CBOR.Entry] = [.init(.int(3), .int(algorithm.rawValue))]
        switch material {
        case .ellipticCurve(let curve, let x, let y):
            entries += [
                .init(.int(1), .int(2)), .init(.int(-1), .int(curve)), .init(.int(-2), .bytes(x)),
                .init(.int(-3), .bytes(y)),
            ]
        case .ed25519(let x):
            entries += [.init(.int(1), .int(1)), .init(.int(-1), .int(6)), .init(.int(-2), .bytes(x))]
        case .rsa(let n, let e):
            entries += [.init(.int(1), .int(3)), .init(.int(-1), .bytes(n)), .init(.int(-2), .bytes(e))]
        }
        return .map(entries)
    }

    /// The COSE_Key's canonical bytes, as the authenticator data holds them.
    package var encoded: [UInt8] { cbor.encoded }

    /// The key as DER SubjectPublicKeyInfo, what WebAuthn's `getPublicKey()` returns.
    package var subjectPublicKeyInfo: [UInt8] {
        // `verifier()` succeeded when the key was made, so this cannot fail.
        (try? verifier())?.subjectPublicKeyInfo ?? []
    }

    /// Whether `signature` is the key's signature of `message`, by the key's algorithm (ECDSA
    /// signatures in ASN.1 DER, as WebAuthn has them).
    package func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        (try? verifier())?.verify(signature, message) ?? false
    }

    private struct Verifier {
        var subjectPublicKeyInfo: [UInt8]
        var verify: ([UInt8], [UInt8]) -> Bool
    }

    private func verifier() throws(PasskeyDataError) -> Verifier {
        do {
            switch (algorithm, material) {
            case (.es256, .ellipticCurve(1, let x, let y)) where x.count == 32 && y.count == 32:
                let key = try P256.Signing.PublicKey(x963Representation: [4] + x + y)
                return Verifier(subjectPublicKeyInfo: Array(key.derRepresentation)) { signature, message in
                    guard let signature = try? P256.Signing.ECDSASignature(derRepresentation: signature) else {
                        return false
                    }
                    return key.isValidSignature(signature, for: message)
                }
            case (.es384, .ellipticCurve(2, let x, let y)) where x.count == 48 && y.count == 48:
                let key = try P384.Signing.PublicKey(x963Representation: [4] + x + y)
                return Verifier(subjectPublicKeyInfo: Array(key.derRepresentation)) { signature, message in
                    guard let signature = try? P384.Signing.ECDSASignature(derRepresentation: signature) else {
                        return false
                    }
                    return key.isValidSignature(signature, for: message)
                }
            case (.es512, .ellipticCurve(3, let x, let y)) where x.count == 66 && y.count == 66:
                let key = try P521.Signing.PublicKey(x963Representation: [4] + x + y)
                return Verifier(subjectPublicKeyInfo: Array(key.derRepresentation)) { signature, message in
                    guard let signature = try? P521.Signing.ECDSASignature(derRepresentation: signature) else {
                        return false
                    }
                    return key.isValidSignature(signature, for: message)
                }
            case (.edDSA, .ed25519(let x)):
                let key = try Curve25519.Signing.PublicKey(rawRepresentation: x)
                return Verifier(subjectPublicKeyInfo: Self.ed25519SPKIPrefix + x) { signature, message in
                    key.isValidSignature(signature, for: message)
                }
            case (.rs256, .rsa(let n, let e)):
                let key = try _RSA.Signing.PublicKey(n: n, e: e)
                return Verifier(subjectPublicKeyInfo: Array(key.derRepresentation)) { signature, message in
                    key.isValidSignature(
                        _RSA.Signing.RSASignature(rawRepresentation: signature),
                        for: message,
                        padding: .insecurePKCS1v1_5
                    )
                }
            default:
                break
            }
        } catch {
            throw PasskeyDataError(
                .malformed,
                "the credential public key for \(algorithm) is not a valid key: \(error)"
            )
        }
        throw PasskeyDataError(
            .unsupported,
            "the credential public key's algorithm \(algorithm) does not fit its key type, curve and coordinate sizes"
        )
    }

    /// SubjectPublicKeyInfo for Ed25519 (RFC 8410) before the key's 32 bytes: SEQUENCE,
    /// AlgorithmIdentifier with the OID 1.3.101.112, BIT STRING.
    private static let ed25519SPKIPrefix: [UInt8] = [
        0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00,
    ]
}
