import Foundation
import OneTimeCodes
import Testing

/// Builds migration payload bytes by hand from the protobuf wire format, independent of the encoder.
enum Wire {
    static func varint(_ v: UInt64) -> [UInt8] {
        var v = v
        var out: [UInt8] = []
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        return out + [UInt8(v)]
    }
    static func field(_ n: UInt64, _ value: UInt64) -> [UInt8] { varint(n << 3) + varint(value) }
    static func field(_ n: UInt64, _ bytes: [UInt8]) -> [UInt8] {
        varint(n << 3 | 2) + varint(UInt64(bytes.count)) + bytes
    }

    static func entry(
        secret: [UInt8],
        name: String,
        issuer: String,
        algorithm: UInt64,
        digits: UInt64,
        type: UInt64,
        counter: UInt64? = nil
    ) -> [UInt8] {
        var e = field(1, secret) + field(2, Array(name.utf8)) + field(3, Array(issuer.utf8))
        e += field(4, algorithm) + field(5, digits) + field(6, type)
        if let counter { e += field(7, counter) }
        return e
    }

    static func uri(entries: [[UInt8]], size: UInt64 = 1, index: UInt64 = 0, id: UInt64 = 7) -> String {
        var payload: [UInt8] = []
        for e in entries { payload += field(1, e) }
        payload += field(2, 1) + field(3, size) + field(4, index) + field(5, id)
        let b64 = Data(payload).base64EncodedString()
        return "otpauth-migration://offline?data=" + b64.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }
}

@Suite("Google Authenticator migration")
struct MigrationTests {
    let hello: [UInt8] = Array("Hello!".utf8) + [0xDE, 0xAD, 0xBE, 0xEF]

    @Test("a one-batch export decodes to otpauth URIs")
    func decodeOne() throws {
        let uri = Wire.uri(entries: [
            Wire.entry(
                secret: hello,
                name: "Example:alice@example.com",
                issuer: "Example",
                algorithm: 1,
                digits: 1,
                type: 2
            ),
            Wire.entry(secret: hello, name: "counter", issuer: "", algorithm: 2, digits: 2, type: 1, counter: 42),
        ])
        let decoded = try GoogleAuthenticatorMigration.decode([uri])
        #expect(decoded.problems == [])
        #expect(decoded.accounts.count == 2)
        #expect(decoded.accounts[0].secret.base32EncodedSecret() == "JBSWY3DPEHPK3PXP")
        #expect(decoded.accounts[0].issuer == "Example")
        #expect(decoded.accounts[0].account == "alice@example.com")
        #expect(decoded.accounts[0].kind == .totp(period: 30))
        #expect(decoded.accounts[1].kind == .hotp(counter: 42))
        #expect(decoded.accounts[1].algorithm == .sha256)
        #expect(decoded.accounts[1].format == .decimal(digits: 8))
    }

    @Test("MD5 and unspecified values are reported, not guessed")
    func reported() throws {
        let uri = Wire.uri(entries: [
            Wire.entry(secret: hello, name: "md5", issuer: "", algorithm: 4, digits: 1, type: 2),
            Wire.entry(secret: hello, name: "unspecified", issuer: "", algorithm: 0, digits: 1, type: 2),
            Wire.entry(secret: hello, name: "no digits", issuer: "", algorithm: 1, digits: 0, type: 2),
            Wire.entry(secret: hello, name: "fine", issuer: "", algorithm: 1, digits: 1, type: 2),
        ])
        let decoded = try GoogleAuthenticatorMigration.decode([uri])
        #expect(decoded.accounts.map(\.account) == ["fine"])
        #expect(decoded.problems.map(\.entry) == [0, 1, 2])
        #expect(decoded.problems[0].message.contains("MD5"))
        #expect(decoded.problems[1].message.contains("not guessed"))
        #expect(decoded.problems[0].description.hasPrefix("batch 1, entry 1:"))
    }

    @Test("a split export: every batch is read and a missing one is named")
    func batches() throws {
        let a = Wire.uri(
            entries: [Wire.entry(secret: hello, name: "a", issuer: "", algorithm: 1, digits: 1, type: 2)],
            size: 3,
            index: 0
        )
        let c = Wire.uri(
            entries: [Wire.entry(secret: hello, name: "c", issuer: "", algorithm: 1, digits: 1, type: 2)],
            size: 3,
            index: 2
        )
        let decoded = try GoogleAuthenticatorMigration.decode([c, a])
        #expect(decoded.accounts.map(\.account) == ["c", "a"])
        #expect(decoded.problems.count == 1)
        #expect(decoded.problems.first?.batch == 1)
        #expect(decoded.problems.first?.message.contains("not given") == true)
    }

    @Test("encode splits into batches that decode back to the same accounts")
    func roundTrip() throws {
        let accounts = try (0..<23).map { i in
            try OTPAuthURI(
                parsing:
                    "otpauth://totp/Issuer\(i):user\(i)?secret=JBSWY3DPEHPK3PX\(["P", "Q"][i % 2])&issuer=Issuer\(i)&digits=\(i % 2 == 0 ? 6 : 8)"
            )
        }
        let uris = try GoogleAuthenticatorMigration.encode(accounts, perBatch: 10, batchID: -5)
        #expect(uris.count == 3)
        let decoded = try GoogleAuthenticatorMigration.decode(uris)
        #expect(decoded.problems == [])
        #expect(decoded.accounts == accounts)
    }

    @Test("accounts the format cannot express are refused by name")
    func unencodable() throws {
        let steam = try OTPAuthURI(parsing: "steam://JBSWY3DPEHPK3PXP")
        #expect(throws: OTPError.self) { try GoogleAuthenticatorMigration.encode([steam]) }
        let sixty = try OTPAuthURI(parsing: "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&period=60")
        do {
            _ = try GoogleAuthenticatorMigration.encode([sixty])
            Issue.record("expected an error")
        } catch {
            #expect(error.message.contains("60 s"))
        }
    }

    @Test(
        "broken input names the URI and the problem",
        arguments: [
            ("otpauth://totp/x?secret=A", "does not start with"),
            ("otpauth-migration://offline?foo=bar", "no data"),
            ("otpauth-migration://offline?data=%%%", "percent"),
            ("otpauth-migration://offline?data=!!!!", "not base64"),
            ("otpauth-migration://offline?data=CgU", "longer than the data"),
            ("otpauth-migration://offline?data=CP%2F%2F%2F%2F%2F%2F%2F%2F%2F%2F%2F8B", "longer than 64 bits"),
        ]
    )
    func errors(uri: String, expected: String) {
        do {
            _ = try GoogleAuthenticatorMigration.decode([uri])
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidMigration)
            #expect(error.message.contains(expected), "\(error.message)")
            #expect(error.message.hasPrefix("URI 1"))
        }
    }

    // Found by scripts/fuzz migration: an issuer with a colon of its own was written into the
    // label, which then split at that colon on reading.
    @Test(
        "labels read back: an issuer or account with a colon, or spaces, survives both formats",
        arguments: [
            ("E:ample", "alice"), ("Bank", "a:b"), (nil, "x:y"), ("Acme", " padded "), (nil, "plain"),
        ] as [(String?, String)]
    )
    func labelsReadBack(issuer: String?, account: String) throws {
        let uri = OTPAuthURI(secret: try OTPSecret(base32: "JBSWY3DPEHPK3PXP"), issuer: issuer, account: account)
        #expect(
            try GoogleAuthenticatorMigration.decode(try GoogleAuthenticatorMigration.encode([uri])).accounts == [uri]
        )
        #expect(try OTPAuthURI(parsing: uri.uriString) == uri, "\(uri.uriString)")
    }
}
