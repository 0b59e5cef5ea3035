import Crypto
import SwiftASN1

import struct Foundation.Data

/// A PKCS#8 private key (RFC 5208 / RFC 5958) as CXF carries it in passkeys and SSH keys: parsed,
/// checked, and with its public key, taken from the key or derived where the key leaves it out.
///
/// The private scalar never leaves this type and is not part of its description.
public struct PrivateKeyInfo: Sendable, CustomStringConvertible {
    /// The key algorithms this type reads.
    public enum Algorithm: Hashable, Sendable, CustomStringConvertible {
        /// ECDSA on NIST P-256.
        case p256
        /// ECDSA on NIST P-384.
        case p384
        /// ECDSA on NIST P-521.
        case p521
        /// Ed25519.
        case ed25519
        /// RSA, with the modulus's size in bits.
        case rsa(modulusBits: Int)

        /// The algorithm's usual name, such as `ECDSA P-256` or `RSA-2048`.
        public var description: String {
            switch self {
            case .p256: "ECDSA P-256"
            case .p384: "ECDSA P-384"
            case .p521: "ECDSA P-521"
            case .ed25519: "Ed25519"
            case .rsa(let bits): "RSA-\(bits)"
            }
        }

        /// The OpenSSH key type names this algorithm goes with.
        public var sshKeyTypes: [String] {
            switch self {
            case .p256: ["ecdsa-sha2-nistp256"]
            case .p384: ["ecdsa-sha2-nistp384"]
            case .p521: ["ecdsa-sha2-nistp521"]
            case .ed25519: ["ssh-ed25519"]
            case .rsa: ["ssh-rsa", "rsa-sha2-256", "rsa-sha2-512"]
            }
        }
    }

    /// Why bytes are not a usable PKCS#8 private key.
    public struct Error: Swift.Error, Hashable, Sendable, CustomStringConvertible {
        /// What is wrong with the bytes, without quoting them.
        public var description: String
    }

    /// The key's algorithm.
    public let algorithm: Algorithm
    /// The public key: uncompressed X9.63 point for ECDSA, 32 raw bytes for Ed25519, DER
    /// `RSAPublicKey` for RSA.
    public let publicKey: [UInt8]
    /// True when the key did not include its public key and it was computed from the private key.
    public let publicKeyWasDerived: Bool

    /// The algorithm and the public key's size; never the private key.
    public var description: String { "PrivateKeyInfo(\(algorithm), public key \(publicKey.count) bytes)" }

    /// Parses `der`. When the key carries its public key, the point is checked to be on the curve
    /// and, if `verifyPublicKey` is set, to belong to the private key; when it carries none, the
    /// public key is derived (which also proves the private key is usable).
    public init(derEncoded der: Data, verifyPublicKey: Bool = false) throws(Error) {
        if der.starts(with: Array("-----BEGIN".utf8)) {
            throw Error(description: "the key is PEM text; CXF requires the DER bytes (base64url of the binary PKCS#8)")
        }
        do {
            let parsed = try Self.parse(Array(der), verifyPublicKey: verifyPublicKey, derive: true)
            (algorithm, publicKey, publicKeyWasDerived) = parsed
        } catch let error as Error {
            throw error
        } catch {
            throw Error(description: "the key is not PKCS#8 DER (\(Self.describe(error)))")
        }
    }

    /// Checks `der` as ``init(derEncoded:verifyPublicKey:)`` does, without deriving a public key
    /// where no check needs one (an Ed25519 seed is valid whatever its bytes), and returns the algorithm.
    static func check(_ der: Data, verifyPublicKey: Bool) throws(Error) -> Algorithm {
        if der.starts(with: Array("-----BEGIN".utf8)) {
            throw Error(description: "the key is PEM text; CXF requires the DER bytes (base64url of the binary PKCS#8)")
        }
        do {
            return try parse(Array(der), verifyPublicKey: verifyPublicKey, derive: false).0
        } catch let error as Error {
            throw error
        } catch {
            throw Error(description: "the key is not PKCS#8 DER (\(describe(error)))")
        }
    }

    private static func describe(_ error: any Swift.Error) -> String {
        if let asn1 = error as? ASN1Error { return "\(asn1.code)" }
        return "\(error)"
    }

    private static let ecPublicKey: ASN1ObjectIdentifier = [1, 2, 840, 10045, 2, 1]
    private static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 1, 1]
    private static let ed25519: ASN1ObjectIdentifier = [1, 3, 101, 112]
    private static let secp256r1: ASN1ObjectIdentifier = [1, 2, 840, 10045, 3, 1, 7]
    private static let secp384r1: ASN1ObjectIdentifier = [1, 3, 132, 0, 34]
    private static let secp521r1: ASN1ObjectIdentifier = [1, 3, 132, 0, 35]

    private static func parse(_ der: [UInt8], verifyPublicKey: Bool, derive: Bool) throws -> (Algorithm, [UInt8], Bool)
    {
        let root = try DER.parse(der)
        return try DER.sequence(root, identifier: .sequence) { nodes in
            let version = try Int(derEncoded: &nodes)
            guard version == 0 || version == 1 else {
                throw Error(description: "PKCS#8 version \(version) is unknown (0 or 1 expected)")
            }
            let (oid, curve) = try DER.sequence(try next(&nodes), identifier: .sequence) { alg in
                let oid = try ASN1ObjectIdentifier(derEncoded: &alg)
                var curve: ASN1ObjectIdentifier? = nil
                if let parameters = alg.next(), parameters.identifier == .objectIdentifier {
                    curve = try ASN1ObjectIdentifier(derEncoded: parameters)
                }
                return (oid, curve)
            }
            let privateKey = try ASN1OctetString(derEncoded: &nodes).bytes
            // attributes [0], then publicKey [1] (version 1 only)
            _ = DER.optionalImplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { $0 }
            let outerPublicKey = try DER.optionalImplicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) {
                try ASN1BitString(derEncoded: $0, withIdentifier: $0.identifier).bytes
            }
            switch oid {
            case ecPublicKey:
                let algorithm: Algorithm
                switch curve {
                case secp256r1: algorithm = .p256
                case secp384r1: algorithm = .p384
                case secp521r1: algorithm = .p521
                case nil: throw Error(description: "the EC key names no curve")
                case let other?:
                    throw Error(description: "the EC curve \(other) is not supported (P-256, P-384, P-521)")
                }
                return try ecKey(
                    privateKey,
                    algorithm: algorithm,
                    outerPublicKey: outerPublicKey,
                    verify: verifyPublicKey
                )
            case ed25519:
                let seed = try ASN1OctetString(derEncoded: try DER.parse(privateKey)).bytes
                guard seed.count == 32 else {
                    throw Error(description: "the Ed25519 key is \(seed.count) bytes, not 32")
                }
                if let outerPublicKey, !verifyPublicKey {
                    guard outerPublicKey.count == 32 else {
                        throw Error(description: "the Ed25519 public key is not 32 bytes")
                    }
                    return (.ed25519, Array(outerPublicKey), false)
                }
                if outerPublicKey == nil && !derive { return (.ed25519, [], false) }
                let derived = try Curve25519.Signing.PrivateKey(rawRepresentation: seed).publicKey.rawRepresentation
                if let outerPublicKey, !outerPublicKey.elementsEqual(derived) {
                    throw Error(description: "the Ed25519 public key does not belong to the private key")
                }
                return (.ed25519, Array(derived), outerPublicKey == nil)
            case rsaEncryption:
                return try rsaKey(privateKey)
            default:
                throw Error(description: "the key algorithm \(oid) is not supported (EC, Ed25519 or RSA)")
            }
        }
    }

    private static func next(_ nodes: inout ASN1NodeCollection.Iterator) throws -> ASN1Node {
        guard let node = nodes.next() else { throw Error(description: "the PKCS#8 structure ends early") }
        return node
    }

    /// RFC 5915 ECPrivateKey inside the PKCS#8 octet string.
    private static func ecKey(
        _ bytes: ArraySlice<UInt8>,
        algorithm: Algorithm,
        outerPublicKey: ArraySlice<UInt8>?,
        verify: Bool
    ) throws -> (Algorithm, [UInt8], Bool) {
        let (scalar, innerPublicKey) = try DER.sequence(try DER.parse(bytes), identifier: .sequence) { nodes in
            let version = try Int(derEncoded: &nodes)
            guard version == 1 else { throw Error(description: "ECPrivateKey version \(version) is not 1") }
            let scalar = try ASN1OctetString(derEncoded: &nodes).bytes
            _ = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { $0 }
            let publicKey = try DER.optionalExplicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) {
                try ASN1BitString(derEncoded: $0).bytes
            }
            return (scalar, publicKey)
        }
        let given = innerPublicKey ?? outerPublicKey
        do {
            switch algorithm {
            case .p256:
                return try ecResult(
                    algorithm,
                    given: given,
                    verify: verify,
                    check: { _ = try P256.Signing.PublicKey(x963Representation: $0) },
                    derive: { try P256.Signing.PrivateKey(rawRepresentation: scalar).publicKey.x963Representation }
                )
            case .p384:
                return try ecResult(
                    algorithm,
                    given: given,
                    verify: verify,
                    check: { _ = try P384.Signing.PublicKey(x963Representation: $0) },
                    derive: { try P384.Signing.PrivateKey(rawRepresentation: scalar).publicKey.x963Representation }
                )
            case .p521:
                return try ecResult(
                    algorithm,
                    given: given,
                    verify: verify,
                    check: { _ = try P521.Signing.PublicKey(x963Representation: $0) },
                    derive: { try P521.Signing.PrivateKey(rawRepresentation: scalar).publicKey.x963Representation }
                )
            case .ed25519, .rsa:
                preconditionFailure("not an EC algorithm")
            }
        } catch let error as Error {
            throw error
        } catch {
            throw Error(description: "the \(algorithm) key is not a valid key (\(error))")
        }
    }

    private static func ecResult(
        _ algorithm: Algorithm,
        given: ArraySlice<UInt8>?,
        verify: Bool,
        check: (ArraySlice<UInt8>) throws -> Void,
        derive: () throws -> Data
    ) throws -> (Algorithm, [UInt8], Bool) {
        if let given {
            do { try check(given) } catch {
                throw Error(description: "the \(algorithm) public key is not a point on the curve")
            }
            if verify {
                guard try derive().elementsEqual(given) else {
                    throw Error(description: "the \(algorithm) public key does not belong to the private key")
                }
            }
            return (algorithm, Array(given), false)
        }
        return (algorithm, Array(try derive()), true)
    }

    /// RFC 8017 RSAPrivateKey: the public key (n, e) is part of it.
    private static func rsaKey(_ bytes: ArraySlice<UInt8>) throws -> (Algorithm, [UInt8], Bool) {
        try DER.sequence(try DER.parse(bytes), identifier: .sequence) { nodes in
            let version = try Int(derEncoded: &nodes)
            guard version == 0 || version == 1 else {
                throw Error(description: "RSAPrivateKey version \(version) is unknown")
            }
            let modulus = try ArraySlice<UInt8>(derEncoded: &nodes)
            let exponent = try ArraySlice<UInt8>(derEncoded: &nodes)
            for _ in 0..<6 { _ = try ArraySlice<UInt8>(derEncoded: &nodes) }  // d, p, q, dP, dQ, qInv
            while nodes.next() != nil {}  // otherPrimeInfos (version 1)
            let significant = modulus.drop(while: { $0 == 0 })
            guard let top = significant.first, exponent.contains(where: { $0 != 0 }) else {
                throw Error(description: "the RSA key has an empty modulus or exponent")
            }
            let bits = significant.count * 8 - top.leadingZeroBitCount
            var serializer = DER.Serializer()
            try serializer.appendConstructedNode(identifier: .sequence) { s in
                try s.serialize(modulus)
                try s.serialize(exponent)
            }
            return (.rsa(modulusBits: bits), serializer.serializedBytes, false)
        }
    }
}
