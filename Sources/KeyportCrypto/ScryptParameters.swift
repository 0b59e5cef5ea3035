import Crypto
import Foundation
import KeyportEncoding
import KeyportSystemCore
import _CryptoExtras

/// Why a key was not derived: parameters outside the caps (they come from a file, so an attacker
/// may have chosen them), or a record that is not parameters at all.
package struct KDFError: Error, Hashable, Sendable, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// scrypt's parameters for turning a passphrase into a key — the one that wraps a password store's
/// key, or an encrypted export's (Aegis) —, in the form such a file stores them (JSON text: `{"kdf":"scrypt","logN":17,"r":8,"p":1,"salt":"…"}`).
///
/// They are read from a file, so an attacker may have written them: ``check()`` refuses any
/// outside the caps below before a single byte is derived (a huge N would take the machine's
/// memory; a tiny one would make a guessed passphrase cheap to test, though that only hurts a file
/// the attacker made).
package struct ScryptParameters: Hashable, Sendable {
    /// log2 of N, the cost (rounds).
    package var logN: Int
    /// The block size.
    package var r: Int
    /// The parallelism.
    package var p: Int
    /// 32 random bytes, new for every wrapping.
    package var salt: [UInt8]

    /// The most Keyport derives with: N up to 2^20, memory (128·r·N) up to 1 GiB, work (N·r·p) up
    /// to 2^26 — about eight times what calibration picks on a fast machine.
    package static let maximumLogN = 20
    package static let maximumMemory = 1 << 30
    package static let maximumWork = 1 << 26

    package init(logN: Int, r: Int = 8, p: Int = 1, salt: [UInt8]? = nil) {
        self.logN = logN
        self.r = r
        self.p = p
        self.salt = salt ?? Array(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
    }

    /// The same cost with a new salt.
    package func withNewSalt() -> ScryptParameters { ScryptParameters(logN: logN, r: r, p: p) }

    /// Refuses parameters outside the caps, saying which.
    package func check() throws(KDFError) {
        guard (10...Self.maximumLogN).contains(logN) else {
            throw KDFError("scrypt's N is 2^\(logN); Keyport takes 2^10 to 2^\(Self.maximumLogN)")
        }
        guard (1...32).contains(r), (1...16).contains(p) else {
            throw KDFError("scrypt's r is \(r) and p \(p); Keyport takes r 1–32 and p 1–16")
        }
        let memory = 128 * r << logN
        guard memory <= Self.maximumMemory else {
            throw KDFError(
                "scrypt would need \(memory >> 20) MiB of memory; Keyport allows \(Self.maximumMemory >> 20) MiB"
            )
        }
        guard (r * p) << logN <= Self.maximumWork else {
            throw KDFError("scrypt's work N·r·p is 2^\(logN)·\(r)·\(p), more than Keyport allows")
        }
        guard salt.count >= 16 else {
            throw KDFError("scrypt's salt is \(salt.count) bytes; Keyport takes 16 or more")
        }
    }

    /// The 256-bit key for `passphrase`, after ``check()``.
    package func deriveKey(from passphrase: SecretBytes) throws(KDFError) -> SymmetricKey {
        try check()
        do {
            return try passphrase.withUnsafeBytes { bytes in
                try KDF.Scrypt.deriveKey(
                    from: bytes,
                    salt: salt,
                    outputByteCount: 32,
                    rounds: 1 << logN,
                    blockSize: r,
                    parallelism: p,
                    maxMemory: 128 * r << logN + (1 << 20)
                )
            }
        } catch {
            throw KDFError("scrypt failed: \(error)")
        }
    }

    /// Parameters that take about `target` to derive with here (r 8, p 1, N a power of two,
    /// 2^14 at least), measured now.
    package static func calibrated(target: Duration = .milliseconds(500)) -> ScryptParameters {
        var parameters = ScryptParameters(logN: 14)
        let passphrase = SecretBytes("calibration")
        while parameters.logN < maximumLogN {
            let start = ContinuousClock.now
            _ = try? parameters.deriveKey(from: passphrase)
            let took = ContinuousClock.now - start
            // Each step doubles the time: go on while the next is nearer the target than this one
            // (2t − target < target − t, that is t < 2/3 of the target).
            guard took * 3 < target * 2 else { break }
            parameters.logN += 1
        }
        return parameters.withNewSalt()
    }

    // MARK: The stored form

    /// The JSON text stored in the file.
    package var text: String {
        #"{"kdf":"scrypt","logN":\#(logN),"r":\#(r),"p":\#(p),"salt":"\#(Base64URL.encode(salt))"}"#
    }

    /// Reads the stored form.
    package init(text: String) throws(KDFError) {
        struct Stored: Decodable {
            var kdf: String
            var logN: Int
            var r: Int
            var p: Int
            var salt: String
        }
        guard let stored = try? JSONDecoder().decode(Stored.self, from: Data(text.utf8)), stored.kdf == "scrypt",
            let salt = try? Base64URL.decode(stored.salt)
        else {
            throw KDFError("the key-derivation record is not what Keyport writes: \(text.prefix(120))")
        }
        self.init(logN: stored.logN, r: stored.r, p: stored.p, salt: salt)
    }
}

/// PBKDF2-HMAC-SHA256, as exports that use it (2FAS) ask, its rounds capped: a file's count is
/// the attacker's to choose.
package enum PBKDF2SHA256 {
    /// The most rounds Keyport runs: ten times what the exports Keyport reads use.
    package static let maximumRounds = 10_000_000

    /// The `outputByteCount`-byte key for `passphrase`.
    package static func deriveKey(
        from passphrase: SecretBytes,
        salt: [UInt8],
        rounds: Int,
        outputByteCount: Int = 32
    ) throws(KDFError) -> SymmetricKey {
        guard (1...maximumRounds).contains(rounds) else {
            throw KDFError("PBKDF2's round count is \(rounds); Keyport runs 1 to \(maximumRounds)")
        }
        do {
            return try passphrase.withUnsafeBytes { bytes in
                try KDF.Insecure.PBKDF2.deriveKey(
                    from: bytes,
                    salt: salt,
                    using: .sha256,
                    outputByteCount: outputByteCount,
                    unsafeUncheckedRounds: rounds
                )
            }
        } catch {
            throw KDFError("PBKDF2 failed: \(error)")
        }
    }
}
