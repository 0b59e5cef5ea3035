import Crypto
import KeyportEncoding
import KeyportErrors
import KeyportSystemCore
import _CryptoExtras

/// Why a key was not derived: parameters outside the caps (they come from a file, so an attacker
/// may have chosen them), or a record that is not parameters at all.
package struct KDFError: RecordedError {
    /// A stable name for why.
    package typealias Code = ErrorCodeOf<KDFError>

    package var record: ErrorRecord<Code>

    package init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
    }
}

extension ErrorCodeOf<KDFError> {
    /// Parameters outside Keyport's caps (too costly, or too cheap to protect anything).
    package static let outsideCaps = Self(rawValue: "outside-caps")
    /// A stored record that is not the parameters Keyport writes.
    package static let notParameters = Self(rawValue: "not-parameters")
    /// The derivation itself failed.
    package static let derivationFailed = Self(rawValue: "derivation-failed")
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
            throw KDFError(.outsideCaps, "scrypt's N is 2^\(logN); Keyport takes 2^10 to 2^\(Self.maximumLogN)")
        }
        guard (1...32).contains(r), (1...16).contains(p) else {
            throw KDFError(.outsideCaps, "scrypt's r is \(r) and p \(p); Keyport takes r 1–32 and p 1–16")
        }
        let memory = 128 * r << logN
        guard memory <= Self.maximumMemory else {
            throw KDFError(
                .outsideCaps,
                "scrypt would need \(memory >> 20) MiB of memory; Keyport allows \(Self.maximumMemory >> 20) MiB"
            )
        }
        guard (r * p) << logN <= Self.maximumWork else {
            throw KDFError(.outsideCaps, "scrypt's work N·r·p is 2^\(logN)·\(r)·\(p), more than Keyport allows")
        }
        guard salt.count >= 16 else {
            throw KDFError(.outsideCaps, "scrypt's salt is \(salt.count) bytes; Keyport takes 16 or more")
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
            throw KDFError(.derivationFailed, "scrypt failed: \(error)")
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

    /// Reads the stored form: an object with exactly the members ``text`` writes, in any order.
    package init(text: String) throws(KDFError) {
        let bytes = Array(text.utf8)
        let stored = bytes.withUnsafeBufferPointer { buffer -> Stored? in
            guard let base = buffer.baseAddress else { return nil }
            var reader = JSONReader(base: base, count: buffer.count, maxDepth: 2)
            return try? Stored(&reader)
        }
        guard let stored, stored.kdf == "scrypt", let logN = stored.logN, let r = stored.r, let p = stored.p,
            let salt = stored.salt.flatMap({ try? Base64URL.decode($0) })
        else {
            throw KDFError(.notParameters, "the key-derivation record is not what Keyport writes: \(text.prefix(120))")
        }
        self.init(logN: logN, r: r, p: p, salt: salt)
    }

    /// The members of the stored form, as read; a repeated member, or anything but one object, is
    /// a syntax failure.
    private struct Stored {
        var kdf: String?
        var logN: Int?
        var r: Int?
        var p: Int?
        var salt: String?

        init(_ reader: inout JSONReader) throws(JSONReadFailure) {
            reader.skipWhitespace()
            try reader.enterObject()
            var first = true
            while try reader.nextKey(&first) {
                if reader.keyIs("kdf") {
                    try Self.once(&kdf, reader.kind == .string ? Self.string(&reader) : nil, reader)
                } else if reader.keyIs("salt") {
                    try Self.once(&salt, reader.kind == .string ? Self.string(&reader) : nil, reader)
                } else if reader.keyIs("logN") {
                    try Self.once(&logN, Self.integer(&reader), reader)
                } else if reader.keyIs("r") {
                    try Self.once(&r, Self.integer(&reader), reader)
                } else if reader.keyIs("p") {
                    try Self.once(&p, Self.integer(&reader), reader)
                } else {
                    throw reader.syntax("unknown member")
                }
            }
            reader.skipWhitespace()
            guard reader.pos == reader.count else { throw reader.syntax("text after the record") }
        }

        /// Stores a member's value, unless it repeats one or is of the wrong kind (`nil`).
        private static func once<Value>(
            _ slot: inout Value?,
            _ value: Value?,
            _ reader: JSONReader
        ) throws(JSONReadFailure) {
            guard slot == nil, let value else { throw reader.syntax("a repeated or ill-typed member") }
            slot = value
        }

        private static func string(_ reader: inout JSONReader) throws(JSONReadFailure) -> String {
            var invalidUTF8 = false
            return try reader.string(try reader.scanString(), invalidUTF8: &invalidUTF8)
        }

        private static func integer(_ reader: inout JSONReader) throws(JSONReadFailure) -> Int? {
            guard reader.kind == .number else { return nil }
            let number = try reader.scanNumber()
            return number.isInteger ? reader.int64(number).flatMap { Int(exactly: $0) } : nil
        }
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
            throw KDFError(.outsideCaps, "PBKDF2's round count is \(rounds); Keyport runs 1 to \(maximumRounds)")
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
            throw KDFError(.derivationFailed, "PBKDF2 failed: \(error)")
        }
    }
}
