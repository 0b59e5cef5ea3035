import Foundation
import KeyportTestSupport
import OneTimeCodes
import Testing

/// Property tests against the real implementations people use: oathtool (Debian's OATH Toolkit)
/// and pyotp (PyPI). `scripts/test` installs both; without them these tests fail, naming what is
/// missing and that command.
@Suite("Cross-checks with oathtool and pyotp")
struct PeerTests {
    struct Case: Encodable {
        var secret: String
        var time: Int64
        var algorithm: String
        var digits: Int
        var period: Int64
    }

    /// 1 000 cases from a fixed seed: secrets of 16 to 64 bytes (pyotp refuses under 112 bits),
    /// times from 0 to 2^35, every algorithm, 6 to 10 digits, periods of 1 to 120 seconds (pyotp
    /// accepts no longer period).
    static let cases: [Case] = {
        var state: UInt64 = 0x4B65_7970_6F72_7421
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        return (0..<1000).map { i in
            let length = 16 + Int(next() % 49)
            let secret = (0..<length).map { _ in UInt8(truncatingIfNeeded: next()) }
            let time: Int64 = i < 3 ? [0, 59, 1 << 35][i] : Int64(next() % (1 << 35 + 1))
            return Case(
                secret: OTPSecret(bytes: secret).base32EncodedSecret(),
                time: time,
                algorithm: OTPAlgorithm.allCases[Int(next() % 3)].rawValue,
                digits: 6 + Int(next() % 5),
                period: 1 + Int64(next() % 120)
            )
        }
    }()

    static func ours(_ c: Case) throws -> String {
        let totp = try TOTP(
            secret: try OTPSecret(base32: c.secret),
            algorithm: OTPAlgorithm(rawValue: c.algorithm)!,
            format: .decimal(digits: c.digits),
            period: c.period
        )
        return try totp.code(at: c.time)
    }

    /// Runs a peer to its end and returns what it printed; throws, quoting its standard error,
    /// when it fails.
    static func run(_ executable: String, _ arguments: [String], stdin: Data? = nil) async throws -> String {
        let ran = try await Program.run(executable, arguments, input: stdin, timeout: .seconds(60))
        guard ran.status == 0 else {
            throw SupportFailure(
                description:
                    "\(executable) \(arguments.joined(separator: " ")) \(ran.termination): \(ran.standardError)"
            )
        }
        return ran.standardOutput
    }

    @Test("every code equals oathtool's (digits 6 to 8, which is what oathtool makes)")
    func oathtool() async throws {
        let oathtool = "/usr/bin/oathtool"
        try #require(
            FileManager.default.isExecutableFile(atPath: oathtool),
            "oathtool is missing: run scripts/test, which installs it"
        )
        var compared = 0
        for c in Self.cases where c.digits <= 8 {
            let theirs = try await Self.run(
                oathtool,
                [
                    "--totp=\(c.algorithm)", "-d", "\(c.digits)", "-s", "\(c.period)", "-N", "@\(c.time)", "-b",
                    c.secret,
                ]
            ).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try Self.ours(c) == theirs, "\(c.algorithm) \(c.digits) digits, period \(c.period), time \(c.time)")
            compared += 1
        }
        #expect(compared > 500)
    }

    @Test("every code equals pyotp's (all 1 000 cases)")
    func pyotp() async throws {
        let python = try await Peers.python(importing: ["pyotp"])
        let script = Peers.file("Tests/OneTimeCodesTests/Peers/pyotp_codes.py")
        let theirs = try await Self.run(python, [script], stdin: try JSONEncoder().encode(Self.cases))
            .split(separator: "\n").map(String.init)
        try #require(theirs.count == Self.cases.count)
        for (c, code) in zip(Self.cases, theirs) {
            #expect(try Self.ours(c) == code, "\(c.algorithm) \(c.digits) digits, period \(c.period), time \(c.time)")
        }
    }

    @Test("Steam Guard: the 31-bit value oathtool shows at ten digits… through Steam's alphabet")
    func steam() async throws {
        // oathtool cannot print 10 digits; pyotp can, and at 10 digits the code is the whole
        // truncated value, which Steam encodes in base 26.
        let python = try await Peers.python(importing: ["pyotp"])
        let script = Peers.file("Tests/OneTimeCodesTests/Peers/pyotp_codes.py")
        let cases = Self.cases.prefix(100).map {
            Case(secret: $0.secret, time: $0.time, algorithm: "sha1", digits: 10, period: 30)
        }
        let values = try await Self.run(python, [script], stdin: try JSONEncoder().encode(Array(cases))).split(
            separator: "\n"
        )
        let alphabet = Array("23456789BCDFGHJKMNPQRTVWXY")
        for (c, text) in zip(cases, values) {
            var value = try #require(UInt32(text))
            var expected = ""
            for _ in 0..<5 {
                expected.append(alphabet[Int(value % 26)])
                value /= 26
            }
            #expect(try TOTP.steam(secret: try OTPSecret(base32: c.secret)).code(at: c.time) == expected)
        }
    }
}
