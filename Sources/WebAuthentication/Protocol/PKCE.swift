import Crypto
import Foundation
import KeyportEncoding

/// A value that must stay secret until it is sent (a PKCE verifier, a state, a nonce, a code, a
/// token): it never prints itself, compares in constant time, and is held in swift-crypto's
/// `SymmetricKey` storage, which is zeroed when the last copy is released. ``rawValue`` makes a
/// plain `String` for the moment the value goes on the wire; such transient copies are not wiped.
public struct OAuthSecretValue: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    private let storage: SymmetricKey

    /// The text as it is sent on the wire.
    public var rawValue: String {
        storage.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// Wraps a value received or to be sent; it is kept in wiped memory from here on.
    public init(rawValue: String) {
        storage = SymmetricKey(data: Array(rawValue.utf8))
    }

    /// 32 random bytes from the system's generator, base64url without padding (43 characters).
    public static func random() -> OAuthSecretValue {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        return OAuthSecretValue(rawValue: Base64URL.encode(bytes))
    }

    /// Constant time for values of equal length; a length difference is not a secret.
    public static func == (lhs: OAuthSecretValue, rhs: OAuthSecretValue) -> Bool {
        lhs.storage.withUnsafeBytes { a in rhs.storage.withUnsafeBytes { b in ConstantTime.equal(a, b) } }
    }

    /// The first characters only, as AppAuth's logs show tokens.
    public var description: String { redacted(rawValue) }
    /// The same redacted text as ``description``: debugging output shows no secret either.
    public var debugDescription: String { description }
}

/// `"abcdef…[redacted]"`: enough to tell values apart in a log, not enough to use one.
func redacted(_ value: String) -> String {
    value.count <= 6 ? "[redacted]" : "\(value.prefix(6))…[redacted]"
}

/// Proof Key for Code Exchange (RFC 7636), S256 only: the plain method protects nothing.
public struct PKCE: Sendable {
    /// Sent with the token request; kept secret until then.
    public let verifier: OAuthSecretValue
    /// base64url(SHA-256(verifier)), sent with the authorization request.
    public let challenge: String
    /// The challenge method sent with the challenge (`code_challenge_method`): always `S256`.
    public static let method = "S256"

    /// A new verifier from 32 random bytes (43 characters).
    public init() {
        self.init(verifier: .random())
    }

    /// A given verifier (43 to 128 characters of `A–Z a–z 0–9 - . _ ~`, as RFC 7636 requires).
    public init(verifier: OAuthSecretValue) {
        self.verifier = verifier
        challenge = Base64URL.encode(SHA256.hash(data: Array(verifier.rawValue.utf8)))
    }

    /// Whether `verifier` has the length and characters RFC 7636 allows.
    public static func isValidVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.utf8.count)
            && verifier.utf8.allSatisfy { c in
                (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39)
                    || c == UInt8(ascii: "-") || c == UInt8(ascii: ".") || c == UInt8(ascii: "_")
                    || c == UInt8(ascii: "~")
            }
    }
}
