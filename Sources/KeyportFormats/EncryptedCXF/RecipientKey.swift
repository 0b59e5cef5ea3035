import CredentialExchangeFormat
import Crypto
import Foundation
import KeyportCrypto
import KeyportEncoding
import KeyportSystem

extension EncryptedCXF {
    /// The importer's side: the X25519 private key an export is sealed to, and the SHA-256 of
    /// the request it was made with (HPKE's `info` binds it, so the key opens only answers to
    /// that request).
    package struct RecipientKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
        /// swift-crypto keeps the scalar in storage it zeroes when released, and never prints it.
        package let privateKey: Curve25519.KeyAgreement.PrivateKey
        package let requestDigest: [UInt8]

        package init(privateKey: Curve25519.KeyAgreement.PrivateKey, requestDigest: [UInt8]) {
            self.privateKey = privateKey
            self.requestDigest = requestDigest
        }

        /// Only the public key's fingerprint: the private key is never printed.
        package var description: String {
            "<X25519 private key of \(EncryptedCXF.fingerprint(publicKey)), hidden>"
        }
        package var debugDescription: String { description }

        /// The public key, as the request carries it.
        package var publicKey: [UInt8] { Array(privateKey.publicKey.rawRepresentation) }

        /// A new key pair and the export request for it (``Request/make(publicKey:importer:credentialTypes:knownExtensions:)``).
        package static func generate(importer: String) -> (key: RecipientKey, request: [UInt8]) {
            let privateKey = Curve25519.KeyAgreement.PrivateKey()
            let request = Request.make(publicKey: Array(privateKey.publicKey.rawRepresentation), importer: importer)
            return (RecipientKey(privateKey: privateKey, requestDigest: Array(SHA256.hash(data: request))), request)
        }

        /// The private scalar, in storage that is wiped.
        ///
        /// swift-crypto's `rawRepresentation` is not a copy: it shares the key's own storage
        /// (which swift-crypto zeroes when the key goes), so it is copied out and left alone —
        /// zeroing it would zero the key itself.
        fileprivate var secret: SecretBytes {
            var bytes = privateKey.rawRepresentation.withUnsafeBytes { [UInt8]($0) }
            return SecretBytes(taking: &bytes)
        }
    }
}

extension EncryptedCXF {
    /// The private key file `keyport vault keygen` writes (Keyport's own format, version 1): the
    /// key pair as an RFC 8037 JWK and the SHA-256 of its request; the private part `d` sealed
    /// under a passphrase, or, when the person asks for none, in the JWK itself.
    ///
    /// Sealed, `d` is AES-256-GCM under scrypt's key of the passphrase, with the scrypt record,
    /// the public key and the request's digest as associated data (a changed parameter, key or
    /// digest fails as a wrong passphrase does). The scrypt parameters are read from the file, so
    /// they are capped (``ScryptParameters/check()``) before a byte is derived.
    package enum KeyFile {
        /// The value of the file's `keyport` member, which says what the file is.
        package static let kind = "cxf-hpke-private-key"
        package static let version = 1

        private static let members = ["keyport", "version", "request", "key", "passphrase", "sealedKey"]

        /// The file's bytes, wiped when released (without a passphrase they hold the key).
        ///
        /// - Parameters:
        ///   - sealing: the passphrase `d` is sealed under, with the scrypt parameters that make
        ///     its key; `nil` writes `d` plainly.
        package static func encode(
            _ key: RecipientKey,
            sealing: (passphrase: SecretBytes, kdf: ScryptParameters)?
        ) throws(EncryptedCXFError) -> SecretBytes {
            let secret = key.secret
            var jwk: [JSONMember] = [
                JSONMember(key: "kty", value: .string("OKP")),
                JSONMember(key: "crv", value: .string("X25519")),
                JSONMember(key: "x", value: .string(Base64URL.encode(key.publicKey))),
            ]
            var members: [JSONMember] = [
                JSONMember(key: "keyport", value: .string(kind)),
                JSONMember(key: "version", value: .number("\(version)")),
                JSONMember(key: "request", value: .string(Base64URL.encode(key.requestDigest))),
            ]
            // `d` in the clear is spliced in as bytes, never made a `String` that cannot be wiped.
            let marker = "\u{1}d\u{1}"
            if let (passphrase, kdf) = sealing {
                let sealed: [UInt8]
                do {
                    let wrapping = try kdf.deriveKey(from: passphrase)
                    sealed = try secret.withUnsafeBytes { bytes in
                        Array(
                            try AES.GCM.seal(
                                bytes,
                                using: wrapping,
                                authenticating: associatedData(kdf, key.publicKey, key.requestDigest)
                            ).combined!
                        )
                    }
                } catch let error as KDFError {
                    throw EncryptedCXFError(.unsafeParameters, error.message)
                } catch {
                    throw EncryptedCXFError(.malformed, "the key could not be sealed: \(error)")
                }
                members.append(JSONMember(key: "key", value: .object(jwk)))
                members.append(
                    JSONMember(
                        key: "passphrase",
                        value: .object([
                            JSONMember(key: "kdf", value: .string("scrypt")),
                            JSONMember(key: "logN", value: .number("\(kdf.logN)")),
                            JSONMember(key: "r", value: .number("\(kdf.r)")),
                            JSONMember(key: "p", value: .number("\(kdf.p)")),
                            JSONMember(key: "salt", value: .string(Base64URL.encode(kdf.salt))),
                        ])
                    )
                )
                members.append(JSONMember(key: "sealedKey", value: .string(Base64URL.encode(sealed))))
            } else {
                jwk.append(JSONMember(key: "d", value: .string(marker)))
                members.append(JSONMember(key: "key", value: .object(jwk)))
            }
            var text = CXF.Encoder(options: CXF.EncodingOptions(prettyPrinted: true)).encodeJSON(.object(members))
            guard sealing == nil else { return SecretBytes(taking: &text) }
            let quoted = CXF.Encoder().encodeJSON(.string(marker))
            let at = text.firstRange(of: quoted)!
            var out: [UInt8] = []
            out.reserveCapacity(text.count + Base64URL.encodedLength(secret.count))
            out += text[..<at.lowerBound]
            out.append(UInt8(ascii: "\""))
            secret.withUnsafeBytes { Base64URL.append(contentsOf: $0, to: &out) }
            out.append(UInt8(ascii: "\""))
            out += text[at.upperBound...]
            return SecretBytes(taking: &out)
        }

        /// A key file read and checked, its private part not yet opened.
        package struct Parsed: Sendable {
            fileprivate var publicKey: [UInt8]
            fileprivate var requestDigest: [UInt8]
            fileprivate var plain: SecretBytes?
            fileprivate var sealed: (kdf: ScryptParameters, box: [UInt8])?

            /// Whether ``open(passphrase:)`` needs a passphrase.
            package var needsPassphrase: Bool { sealed != nil }

            /// The key, its private part unsealed with `passphrase` when it is sealed.
            package func open(passphrase: SecretBytes?) throws(EncryptedCXFError) -> RecipientKey {
                let secret: SecretBytes
                if let sealed {
                    guard let passphrase else {
                        throw EncryptedCXFError(.wrongPassphrase, "the key file is sealed: its passphrase is needed")
                    }
                    let wrapping: SymmetricKey
                    do {
                        wrapping = try sealed.kdf.deriveKey(from: passphrase)
                    } catch {
                        throw EncryptedCXFError(
                            .unsafeParameters,
                            "/passphrase: \(error.message); the key file was not written by Keyport, or was changed"
                        )
                    }
                    do {
                        var opened = try AES.GCM.open(
                            AES.GCM.SealedBox(combined: sealed.box),
                            using: wrapping,
                            authenticating: KeyFile.associatedData(sealed.kdf, publicKey, requestDigest)
                        )
                        var bytes = [UInt8](opened)
                        Wipe.data(&opened)
                        secret = SecretBytes(taking: &bytes)
                    } catch {
                        throw EncryptedCXFError(
                            .wrongPassphrase,
                            "the passphrase does not open the key file (or the file was changed)"
                        )
                    }
                } else {
                    secret = plain!
                }
                let privateKey: Curve25519.KeyAgreement.PrivateKey
                do {
                    privateKey = try secret.withUnsafeBytes { bytes in
                        try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bytes)
                    }
                } catch {
                    throw EncryptedCXFError(.malformed, "/key/d is not an X25519 private key (32 bytes)")
                }
                // The public key is what the request carried: a file whose two halves disagree
                // was changed (and would open nothing).
                guard Array(privateKey.publicKey.rawRepresentation) == publicKey else {
                    throw EncryptedCXFError(
                        .malformed,
                        "/key/x is not the public key of the file's private key: the key file was changed"
                    )
                }
                return RecipientKey(privateKey: privateKey, requestDigest: requestDigest)
            }
        }

        /// Reads a key file (not yet asking for its passphrase).
        package static func read(_ bytes: [UInt8]) throws(EncryptedCXFError) -> Parsed {
            let value = try EncryptedCXF.json(bytes, what: "a private key file")
            let root = try StrictObject(value, at: "", what: "a private key file", known: nil)
            guard try root.string("keyport", required: false) == kind else {
                throw EncryptedCXFError(
                    .wrongFile,
                    "this is not a private key file of Keyport's (keyport vault keygen writes them: its "
                        + #""keyport" member is "\#(kind)")"#
                )
            }
            let checked = try StrictObject(value, at: "", what: "a private key file", known: members)
            let version = try checked.integer("version", in: 0...Int(Int32.max))!
            guard version == Self.version else {
                throw EncryptedCXFError(
                    .unsupportedVersion,
                    "/version is \(version); Keyport reads key files of version \(Self.version)"
                )
            }
            guard let digest = StrictBase64URL.decode(try checked.string("request")!), digest.count == 32 else {
                throw EncryptedCXFError(.malformed, "/request is not a SHA-256 digest in unpadded base64url")
            }
            let (x, d) = try EncryptedCXF.x25519(
                try checked.required("key"),
                at: "/key",
                code: .malformed,
                known: ["kty", "crv", "x", "d"],
                allowPrivate: true
            )
            var parsed = Parsed(publicKey: x, requestDigest: digest)
            switch (d, checked.has("passphrase") || checked.has("sealedKey")) {
            case (let d?, false):
                guard var bytes = StrictBase64URL.decode(d), bytes.count == 32 else {
                    throw EncryptedCXFError(.malformed, "/key/d is not 32 bytes in unpadded base64url")
                }
                parsed.plain = SecretBytes(taking: &bytes)
            case (nil, true):
                let record = try StrictObject(
                    try checked.required("passphrase"),
                    at: "/passphrase",
                    what: "a key-derivation record",
                    known: ["kdf", "logN", "r", "p", "salt"]
                )
                guard try record.string("kdf") == "scrypt" else {
                    throw EncryptedCXFError(.malformed, #"/passphrase/kdf is not "scrypt", the one Keyport uses"#)
                }
                guard let salt = StrictBase64URL.decode(try record.string("salt")!) else {
                    throw EncryptedCXFError(.malformed, "/passphrase/salt is not unpadded base64url")
                }
                // Read as integers here; ScryptParameters caps them before deriving.
                let kdf = ScryptParameters(
                    logN: try record.integer("logN", in: 0...64)!,
                    r: try record.integer("r", in: 0...Int(Int32.max))!,
                    p: try record.integer("p", in: 0...Int(Int32.max))!,
                    salt: salt
                )
                guard let box = StrictBase64URL.decode(try checked.string("sealedKey")!), box.count == 12 + 32 + 16
                else {
                    throw EncryptedCXFError(
                        .malformed,
                        "/sealedKey is not a sealed X25519 key (60 bytes in unpadded base64url)"
                    )
                }
                parsed.sealed = (kdf, box)
            case (nil, false):
                throw EncryptedCXFError(.malformed, "/key has no private part d, and the file no sealedKey")
            case (_?, true):
                throw EncryptedCXFError(.malformed, "/key/d is there beside a sealedKey: the file was changed")
            }
            return parsed
        }

        /// What sealing `d` authenticates: the scrypt record's text, the public key, the request's
        /// digest (the last two 32 bytes each, so the concatenation is unambiguous).
        fileprivate static func associatedData(
            _ kdf: ScryptParameters,
            _ publicKey: [UInt8],
            _ requestDigest: [UInt8]
        ) -> [UInt8] {
            Array(kdf.text.utf8) + publicKey + requestDigest
        }
    }
}

extension EncryptedCXF.KeyFile.Parsed {
    fileprivate init(publicKey: [UInt8], requestDigest: [UInt8]) {
        self.publicKey = publicKey
        self.requestDigest = requestDigest
        self.plain = nil
        self.sealed = nil
    }
}
