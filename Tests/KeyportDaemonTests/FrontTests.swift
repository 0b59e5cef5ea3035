import Foundation
import KeyportInterfaces
import KeyportTestSupport
import Testing
import Varlink

@Suite("the AutoFill request without Foundation")
struct AutoFillClientJSONTests {
    @Test("requests are written as JSONEncoder writes them, keys sorted; replies read as JSONDecoder reads them")
    func sameAsCodable() throws {
        let identifiers = [
            IdentityStore.ServiceIdentifier(identifier: "https://login.example.com/a?b=\"c\"\\d", type: .URL),
            IdentityStore.ServiceIdentifier(identifier: "bücher.example\n\u{1}", type: .domain),
        ]
        let requests = [
            AutoFill.RequestIn(type: .oneTimeCode, serviceIdentifiers: identifiers),
            AutoFill.RequestIn(type: .password, serviceIdentifiers: [], user: "alice\t\"a\"", interactive: false),
            AutoFill.RequestIn(type: .password, serviceIdentifiers: identifiers, user: "", interactive: true),
        ]
        for request in requests {
            #expect(
                try JSONDecoder().decode(AutoFill.RequestIn.self, from: Data(request.json.bytes)) == request,
                "\(request.json)"
            )
            #expect(try request.json.bytes == RawJSON(encoding: request).bytes, "\(request.json)")
        }
        let list = CredentialProvider.ListIn(type: .oneTimeCode, serviceIdentifiers: identifiers)
        #expect(try list.json.bytes == RawJSON(encoding: list).bytes)

        let replies = [
            AutoFill.RequestOut(credential: .init(code: "123456"), provider: "org.example.quiet"),
            AutoFill.RequestOut(credential: .init(user: "alice", password: "p\"w\\\n😀"), provider: "p"),
            AutoFill.RequestOut(credential: .init(), provider: ""),
            AutoFill.RequestOut(credential: .init(user: "a", password: "b"), provider: "p", site: "https://x.example"),
        ]
        for reply in replies {
            #expect(try AutoFill.RequestOut(json: RawJSON(encoding: reply)) == reply)
        }
        // Members a later keyportd adds are passed over; nulls are absent values.
        let later = RawJSON(
            bytes: Array(
                #"{"new":[1,{"x":null}],"credential":{"code":null,"password":"pw","extra":{}},"provider":"p"}"#.utf8
            )
        )
        #expect(try AutoFill.RequestOut(json: later) == .init(credential: .init(password: "pw"), provider: "p"))
        for broken in [#"{"credential":{}}"#, #"{"credential":{"code":1},"provider":"p"}"#, #"{"provider":"p""#] {
            #expect(throws: (any Error).self, "\(broken)") {
                try AutoFill.RequestOut(json: RawJSON(bytes: Array(broken.utf8)))
            }
        }
        let answer = AutoFill.RequestOut(
            credential: .init(user: "a\"b", password: "p/w"),
            provider: "org.example.p",
            site: "https://x.example:8443"
        )
        #expect(
            AutoFillClient.passwordJSON(answer, password: "p/w")
                == String(
                    decoding: try JSONEncoder.sorted.encode([
                        "user": "a\"b", "password": "p/w", "provider": "org.example.p",
                        "site": "https://x.example:8443",
                    ]),
                    as: UTF8.self
                )
        )
        #expect(
            AutoFillClient.passwordJSON(.init(credential: .init(password: "pw"), provider: "p"), password: "pw")
                == #"{"password":"pw","provider":"p"}"#
        )
    }
}

extension JSONEncoder {
    fileprivate static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

@Suite("the keyport front program", .serialized)
struct FrontTests {
    @Test("answers otp and password itself, hands the rest to keyport-cli; both say the same")
    func answersAndHandsOver() async throws {
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let cli = builtProgram("keyport-cli")
        // keyport alone in a directory: what it answers needs nothing else; the rest says what is missing.
        let alone = try sandbox.directory.subdirectory("alone").appendingPathComponent("keyport").path
        try FileManager.default.copyItem(atPath: keyport, toPath: alone)

        // Failures read the same from either program: keyportd is not running yet.
        for arguments in [["otp", "example.com"], ["password", "https://example.com/", "--user=alice"]] {
            let front = try await Program.run(alone, arguments, environment: sandbox.environment, timeout: .seconds(60))
            let full = try await Program.run(cli, arguments, environment: sandbox.environment, timeout: .seconds(60))
            #expect(
                front.status == 2 && front.standardError.contains("keyportd is not running"),
                "\(front.standardError)"
            )
            #expect(front.status == full.status && front.standardError == full.standardError, "\(arguments)")
        }

        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(order: ["quiet"], services: ["quiet": "example.com"])
        let cases: [[String]] = [
            ["password", "example.com"],
            ["password", "--json", "https://example.com/login", "--user", "alice"],
            ["password", "example.com", "--user=bob"],  // nobody: exit 1
            ["otp", "example.org"],  // no code there: exit 1
        ]
        for arguments in cases {
            let front = try await Program.run(alone, arguments, environment: sandbox.environment, timeout: .seconds(60))
            let full = try await Program.run(cli, arguments, environment: sandbox.environment, timeout: .seconds(60))
            #expect(front.status == full.status, "\(arguments): \(front.standardError)")
            #expect(front.standardOutput == full.standardOutput, "\(arguments)")
            #expect(front.standardError == full.standardError, "\(arguments)")
        }
        let code = try await Program.run(
            alone,
            ["otp", "example.com:443"],
            environment: sandbox.environment,
            timeout: .seconds(60)
        )
        #expect(code.status == 0 && code.standardOutput.utf8.count == 7, "\(code.standardError)")

        // Anything else (an option, help, another command) goes to keyport-cli, which is not there.
        for arguments in [
            ["otp", "example.com", "--copy"], ["--help"], ["otp", "code", "-"], ["password", "example.com", "--user"],
            ["password", "example.com", "--user="],
        ] {
            let handed = try await Program.run(
                alone,
                arguments,
                environment: sandbox.environment,
                timeout: .seconds(60)
            )
            #expect(handed.status == 2, "\(arguments)")
            #expect(handed.standardError.contains("cannot run \(alone)-cli"), "\(arguments): \(handed.standardError)")
        }
        // Beside keyport-cli the same command line works, with the same arguments.
        let help = try await Program.run(
            keyport,
            ["otp", "--help"],
            environment: sandbox.environment,
            timeout: .seconds(60)
        )
        #expect(help.status == 0 && help.standardOutput.contains("USAGE: keyport otp"), "\(help.standardError)")
    }
}

@Suite("programs that run installed")
struct InstalledProgramsTests {
    @Test("no program looks for a resource bundle of Keyport's: the definitions and the suffix list are in its code")
    func noResourceBundles() throws {
        let marker = Array("Keyport_".utf8)
        let suffix = Array(".resources".utf8)
        for name in ["keyport", "keyport-cli", "keyportd", "keyport-vault"] {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: builtProgram(name))))
            // A bundle's name as SwiftPM's accessor writes it: Keyport_MODULE.resources.
            var found: [String] = []
            var index = 0
            while let start = bytes[index...].firstRange(of: marker)?.lowerBound {
                let window = bytes[start..<min(start + 80, bytes.count)]
                if let end = window.firstRange(of: suffix)?.upperBound {
                    found.append(String(decoding: bytes[start..<end], as: UTF8.self))
                }
                index = start + marker.count
            }
            #expect(found.isEmpty, "\(name) names \(found)")
        }
    }
}
