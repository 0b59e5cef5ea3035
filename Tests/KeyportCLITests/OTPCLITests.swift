import Foundation
import Testing

@Suite("keyport otp")
struct OTPCLITests {
    let rfcSecret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"  // "12345678901234567890"

    @Test("code prints the code alone; options override the URI")
    func code() async throws {
        let totp = try await CLI.run(["otp", "code", rfcSecret, "--at", "59", "--digits", "8"])
        #expect(totp.status == 0)
        #expect(totp.stdout == "94287082\n")
        let hotp = try await CLI.run(["otp", "code", "otpauth://hotp/x?secret=\(rfcSecret)&counter=3"])
        #expect(hotp.stdout == "969429\n")
        let overridden = try await CLI.run([
            "otp", "code", "otpauth://hotp/x?secret=\(rfcSecret)&counter=3", "--counter", "0",
        ])
        #expect(overridden.stdout == "755224\n")
        let fromStdin = try await CLI.run(
            ["otp", "code", "-", "--at", "59", "--digits", "8"],
            stdin: Data(rfcSecret.utf8)
        )
        #expect(fromStdin.stdout == "94287082\n")
        let steam = try await CLI.run(["otp", "code", rfcSecret, "--steam", "--at", "30"])
        #expect(steam.stdout.count == 6)
    }

    @Test("a secret on standard input over the 1 MiB the command reads is too-large, with no option to raise")
    func oversizedStandardInput() async throws {
        let result = try await CLI.run(
            ["otp", "code", "-"],
            stdin: Data(repeating: UInt8(ascii: "A"), count: (1 << 20) + 1)
        )
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr
                == "keyport: standard input is larger than 1048576 bytes (the most this command reads) [too-large]\n"
        )
    }

    @Test(
        "bad secrets and URIs exit 1 with the reason on stderr",
        arguments: [
            ["otp", "code", "BAD1"],
            ["otp", "code", "otpauth://totp/x?secret=JBSWY3DP&digits=5"],
            ["otp", "code", "JBSWY3DP", "--algorithm", "md5"],
            ["otp", "code", "JBSWY3DP", "--hotp"],
            ["otp", "parse", "https://example.com"],
        ]
    )
    func errors(arguments: [String]) async throws {
        let result = try await CLI.run(arguments)
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("keyport: "))
    }

    @Test("parse --json gives the normalised parameters")
    func parse() async throws {
        let result = try await CLI.run([
            "otp", "parse", "--json",
            "otpauth://totp/ACME%3Aalice?secret=jbsw%20y3dp%20ehpk%203pxp&algorithm=sha256&period=60",
        ])
        #expect(result.status == 0)
        let json = try result.json()
        #expect(json["type"] as? String == "totp")
        #expect(json["issuer"] as? String == "ACME")
        #expect(json["account"] as? String == "alice")
        #expect(json["algorithm"] as? String == "sha256")
        #expect(json["digits"] as? Int == 6)
        #expect(json["period"] as? Int == 60)
        #expect(json["secret"] as? String == "JBSWY3DPEHPK3PXP")
    }

    @Test("migration encode then decode gives the accounts back")
    func migration() async throws {
        let uris = (1...12).map {
            "otpauth://totp/Issuer\($0):user\($0)?secret=JBSWY3DPEHPK3PXP&issuer=Issuer\($0)&algorithm=SHA1&digits=6&period=30"
        }
        let encoded = try await CLI.run(
            ["otp", "migration", "encode", "--per-batch", "5"],
            stdin: Data(uris.joined(separator: "\n").utf8)
        )
        #expect(encoded.status == 0)
        let lines = encoded.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.hasPrefix("otpauth-migration://offline?data=") })
        let decoded = try await CLI.run(["otp", "migration", "decode"] + lines)
        #expect(decoded.status == 0)
        #expect(decoded.stdout.split(separator: "\n").map(String.init) == uris)
        let partial = try await CLI.run(["otp", "migration", "decode", lines[0], lines[2]])
        #expect(partial.status == 1)
        #expect(partial.stderr.contains("batch 2"))
        #expect(partial.stdout.split(separator: "\n").count == 7)
    }
}
