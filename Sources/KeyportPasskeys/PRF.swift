import Crypto

/// WebAuthn's `prf` extension (§10.1.4) over CTAP2's `hmac-secret`: a relying party's inputs
/// become salts at the client, and the authenticator answers each with an HMAC under a secret of
/// the credential's own — one for requests where the person was verified, one for the others —
/// which CXF carries as `fido2Extensions.hmacCredentials`.
package enum PRF {
    /// The salt the client sends for the relying party's `input`: SHA-256 of
    /// `"WebAuthn PRF" ‖ 0x00 ‖ input`, so that a PRF output can never be an `hmac-secret` output
    /// another client asked for with the same bytes.
    package static func salt(for input: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: Array("WebAuthn PRF".utf8) + [0] + input))
    }

    /// The authenticator's output for `salt`: HMAC-SHA-256 under `secret`, 32 bytes.
    package static func output(secret: SymmetricKey, salt: [UInt8]) -> SymmetricKey {
        SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: salt, using: secret))
    }

    /// A new per-credential secret (32 random bytes), as made with each passkey.
    package static func newSecret() -> SymmetricKey { SymmetricKey(size: .bits256) }
}
