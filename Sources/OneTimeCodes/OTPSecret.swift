import Crypto
import Foundation
import KeyportEncoding

/// The shared secret of a one-time-code account.
///
/// The bytes live in a swift-crypto `SymmetricKey`, which wipes its memory when released; the secret
/// never prints itself (its description shows only its length) and compares in constant time.
public struct OTPSecret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    let key: SymmetricKey

    /// A secret made of these bytes.
    public init(bytes: some ContiguousBytes) {
        key = SymmetricKey(data: bytes)
    }

    /// A secret given as Base32 text, read leniently: lowercase, spaces, hyphens and missing
    /// padding are all accepted.
    public init(base32 text: String) throws(OTPError) {
        var bytes: [UInt8]
        do {
            bytes = try Base32.decode(text)
        } catch {
            throw OTPError(.invalidSecret, "the secret is not Base32: \(error.redactedDescription)")
        }
        defer { _ = bytes.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        guard !bytes.isEmpty else { throw OTPError(.invalidSecret, "the secret is empty") }
        self.init(bytes: bytes)
    }

    /// The number of bytes of the secret.
    public var byteCount: Int { key.bitCount / 8 }

    /// The secret as canonical Base32 (uppercase, no padding). This reveals the secret: use it only
    /// to hand the secret to something that must store or show it.
    public func base32EncodedSecret() -> String {
        key.withUnsafeBytes { Base32.encode($0) }
    }

    /// Calls `body` with the secret's bytes. They must not escape the closure.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try key.withUnsafeBytes(body)
    }

    /// Constant-time comparison.
    public static func == (lhs: OTPSecret, rhs: OTPSecret) -> Bool { lhs.key == rhs.key }

    /// `OTPSecret(N bytes)`: the length, never the secret.
    public var description: String { "OTPSecret(\(byteCount) bytes)" }
    /// The same as ``description``.
    public var debugDescription: String { description }
}

/// The hash function of an HMAC-based one-time code.
public enum OTPAlgorithm: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// HMAC-SHA-1, what most accounts use.
    case sha1
    /// HMAC-SHA-256.
    case sha256
    /// HMAC-SHA-512.
    case sha512

    /// Reads the names people and apps write: `SHA1`, `sha1`, `SHA-256`, `HmacSHA512`, ….
    public init?(name: String) {
        var normalized = name.lowercased().replacingOccurrences(of: "-", with: "")
        if normalized.hasPrefix("hmac") { normalized.removeFirst(4) }
        self.init(rawValue: normalized)
    }

    /// The name in `otpauth://` URIs: `SHA1`, `SHA256`, `SHA512`.
    public var uriName: String { rawValue.uppercased() }

    /// The `otpauth://` name, such as `SHA1`.
    public var description: String { uriName }
}
