import Foundation
import OneTimeCodes
import Testing

/// RFC 6238's seeds: "1234567890" repeated to the hash's block-relevant length.
func rfcSecret(_ algorithm: OTPAlgorithm) -> OTPSecret {
    let length =
        switch algorithm {
        case .sha1: 20
        case .sha256: 32
        case .sha512: 64
        }
    return OTPSecret(bytes: Array(String(repeating: "1234567890", count: 7).utf8.prefix(length)))
}

@Suite("HOTP and TOTP")
struct EngineTests {
    // RFC 4226, Appendix D.
    @Test(
        "RFC 4226 Appendix D",
        arguments: zip(
            0..<10,
            [
                "755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489",
            ]
        )
    )
    func hotp(counter: Int, expected: String) throws {
        let generator = try OTPGenerator(secret: rfcSecret(.sha1))
        #expect(generator.code(counter: UInt64(counter)) == expected)
    }

    // RFC 6238, Appendix B (8 digits), with the seed lengths the table really uses.
    @Test(
        "RFC 6238 Appendix B",
        arguments: [
            (Int64(59), "94287082", "46119246", "90693936"),
            (1_111_111_109, "07081804", "68084774", "25091201"),
            (1_111_111_111, "14050471", "67062674", "99943326"),
            (1_234_567_890, "89005924", "91819424", "93441116"),
            (2_000_000_000, "69279037", "90698825", "38618901"),
            (20_000_000_000, "65353130", "77737706", "47863826"),
        ]
    )
    func totp(time: Int64, sha1: String, sha256: String, sha512: String) throws {
        for (algorithm, expected) in [(OTPAlgorithm.sha1, sha1), (.sha256, sha256), (.sha512, sha512)] {
            let totp = try TOTP(secret: rfcSecret(algorithm), algorithm: algorithm, format: .decimal(digits: 8))
            #expect(try totp.code(at: time) == expected, "\(algorithm) at \(time)")
        }
    }

    @Test("time 0, far future, other periods and T0")
    func times() throws {
        let totp = try TOTP(secret: rfcSecret(.sha1), format: .decimal(digits: 8))
        #expect(try totp.counter(at: 0) == 0)
        #expect(try totp.code(at: 0) == totp.generator.code(counter: 0))
        #expect(try totp.counter(at: Int64.max) == UInt64(Int64.max / 30))
        let shifted = try TOTP(secret: rfcSecret(.sha1), format: .decimal(digits: 8), period: 60, t0: 1000)
        #expect(try shifted.counter(at: 1059) == 0)
        #expect(try shifted.counter(at: 1060) == 1)
        #expect(throws: OTPError.self) { try shifted.counter(at: 999) }
        #expect(totp.secondsRemaining(at: 59) == 1)
        #expect(totp.secondsRemaining(at: 60) == 30)
    }

    @Test("digits 6 to 10 are zero-padded; others are refused")
    func digits() throws {
        for digits in 6...10 {
            let code = try OTPGenerator(secret: rfcSecret(.sha1), format: .decimal(digits: digits)).code(counter: 1)
            #expect(code.count == digits)
            #expect(code.allSatisfy { $0.isNumber })
        }
        // HOTP counter 1 of the RFC secret truncates to 1094287082: ten digits are the whole value.
        #expect(
            try OTPGenerator(secret: rfcSecret(.sha1), format: .decimal(digits: 10)).code(counter: 1) == "1094287082"
        )
        #expect(throws: OTPError.self) { try OTPGenerator(secret: rfcSecret(.sha1), format: .decimal(digits: 5)) }
        #expect(throws: OTPError.self) { try OTPGenerator(secret: rfcSecret(.sha1), format: .decimal(digits: 11)) }
        #expect(throws: OTPError.self) { try TOTP(secret: rfcSecret(.sha1), period: 0) }
    }

    @Test("Steam Guard codes: five characters of Steam's alphabet from the 31-bit value")
    func steam() throws {
        let secret = rfcSecret(.sha1)
        let steam = TOTP.steam(secret: secret)
        // The reference value: HOTP counter 1 of the RFC secret is 1094287082.
        var value: UInt32 = 1_094_287_082
        let alphabet = Array("23456789BCDFGHJKMNPQRTVWXY")
        var expected = ""
        for _ in 0..<5 {
            expected.append(alphabet[Int(value % 26)])
            value /= 26
        }
        #expect(try steam.code(at: 30) == expected)
        #expect(steam.generator.format.length == 5)
    }
}

@Suite("Secrets")
struct SecretTests {
    @Test("Base32 in, canonical Base32 out; never printed")
    func base32() throws {
        let secret = try OTPSecret(base32: "jbsw y3dp-ehpk 3pxp")
        #expect(secret.base32EncodedSecret() == "JBSWY3DPEHPK3PXP")
        #expect(secret.byteCount == 10)
        #expect(secret.description == "OTPSecret(10 bytes)")
        #expect("\(secret)" == "OTPSecret(10 bytes)")
        #expect(String(reflecting: secret) == "OTPSecret(10 bytes)")
        #expect(secret == (try OTPSecret(base32: "JBSWY3DPEHPK3PXP")))
        #expect(secret != (try OTPSecret(base32: "JBSWY3DPEHPK3PXQ")))
    }

    @Test("bad secrets say where, not what", arguments: ["JBSW1Y3DP", "", "MY=A"])
    func errors(text: String) {
        do {
            _ = try OTPSecret(base32: text)
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidSecret)
            #expect(!error.message.contains("JBSW"))
        }
    }

    @Test("algorithm names as people write them")
    func algorithmNames() {
        #expect(OTPAlgorithm(name: "SHA1") == .sha1)
        #expect(OTPAlgorithm(name: "sha-256") == .sha256)
        #expect(OTPAlgorithm(name: "HmacSHA512") == .sha512)
        #expect(OTPAlgorithm(name: "MD5") == nil)
    }
}

@Suite("Verification")
struct VerifierTests {
    @Test("within the window, in both directions; not outside it")
    func window() throws {
        let totp = try TOTP(secret: rfcSecret(.sha1))
        let verifier = try OTPVerifier(totp: totp, window: 1)
        let now: Int64 = 1_700_000_000
        let step = try totp.counter(at: now)
        #expect(verifier.verify(totp.generator.code(counter: step), at: now) == step)
        #expect(verifier.verify(totp.generator.code(counter: step - 1), at: now) == step - 1)
        #expect(verifier.verify(totp.generator.code(counter: step + 1), at: now) == step + 1)
        #expect(verifier.verify(totp.generator.code(counter: step + 2), at: now) == nil)
        #expect(verifier.verify("12345", at: now) == nil)
        #expect(verifier.verify("", at: now) == nil)
    }

    @Test("a used step is refused, so a code works once")
    func replay() throws {
        let totp = try TOTP(secret: rfcSecret(.sha1))
        let verifier = try OTPVerifier(totp: totp, window: 1)
        let now: Int64 = 1_700_000_000
        let code = try totp.code(at: now)
        let used = try #require(verifier.verify(code, at: now))
        #expect(verifier.verify(code, at: now, lastUsedStep: used) == nil)
        #expect(verifier.verify(try totp.code(at: now + 30), at: now + 30, lastUsedStep: used) == used + 1)
    }

    @Test("HOTP look-ahead returns the matched counter")
    func hotp() throws {
        let generator = try OTPGenerator(secret: rfcSecret(.sha1))
        #expect(OTPVerifier.verifyHOTP("969429", generator: generator, counter: 0, lookAhead: 5) == 3)
        #expect(OTPVerifier.verifyHOTP("969429", generator: generator, counter: 4, lookAhead: 5) == nil)
        #expect(OTPVerifier.verifyHOTP("969429", generator: generator, counter: 0) == nil)
    }
}

@Suite("Errors")
struct ErrorTests {
    @Test("errors are equal when their codes are, whatever the sentence, and say where they were made")
    func equalByCode() throws {
        let refused = #expect(throws: OTPError.self) { try OTPSecret(base32: "not base32!") }
        let error = try #require(refused)
        #expect(error == OTPError(.invalidSecret, "another sentence"))
        #expect(error != OTPError(.invalidURI, error.message))
        #expect(Set([error, OTPError(.invalidSecret, "again")]).count == 1)
        // Made in the library, at a line of its own; an error made here says so.
        #expect(error.location.hasPrefix("OneTimeCodes/OTPSecret.swift:"), "\(error.location)")
        #expect(OTPError(.unsupported, "x").location.hasPrefix("OneTimeCodesTests/EngineTests.swift:"))
    }
}
