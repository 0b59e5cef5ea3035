import Foundation
import KeyportAutoFillTestSupport
import KeyportInterfaces
import KeyportTestSupport
import Testing
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite("the AutoFill request without Foundation")
struct AutoFillClientJSONTests {
    @Test("the generated types write JSON that Foundation reads as the same values, and read it back")
    func generatedCoding() throws {
        let identifiers = [
            AutoFill.ServiceIdentifier(identifier: "https://login.example.com/a?b=\"c\"\\d", type: .URL),
            AutoFill.ServiceIdentifier(identifier: "bücher.example\n\u{1}", type: .domain),
        ]
        let requests = [
            AutoFill.RequestCredential.Parameters(type: .oneTimeCode, serviceIdentifiers: identifiers),
            AutoFill.RequestCredential.Parameters(
                type: .password,
                serviceIdentifiers: [],
                user: "alice\t\"a\"",
                interactive: false
            ),
            AutoFill.RequestCredential.Parameters(
                type: .password,
                serviceIdentifiers: identifiers,
                user: "",
                interactive: true
            ),
        ]
        for request in requests {
            let json = RawJSON(encoding: request)
            #expect(try json.decode(AutoFill.RequestCredential.Parameters.self) == request, "\(json)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.bytes)) as? [String: Any])
            #expect(object["type"] as? String == request.type.rawValue)
            let read = try #require(object["serviceIdentifiers"] as? [[String: String]])
            #expect(read.map { $0["identifier"] } == request.serviceIdentifiers.map(\.identifier))
            #expect(read.map { $0["type"] } == request.serviceIdentifiers.map(\.type.rawValue))
            // An absent value is left out, not written as null.
            #expect(object["user"] as? String == request.user && (object["user"] == nil) == (request.user == nil))
            #expect(object["interactive"] as? Bool == request.interactive)
        }

        let replies = [
            AutoFill.RequestCredential.Reply(credential: .init(code: "123456"), provider: "org.example.quiet"),
            AutoFill.RequestCredential.Reply(credential: .init(user: "alice", password: "p\"w\\\n😀"), provider: "p"),
            AutoFill.RequestCredential.Reply(credential: .init(), provider: ""),
            AutoFill.RequestCredential.Reply(provider: "p", asking: "Keyport is asking you"),
            AutoFill.RequestCredential.Reply(
                credential: .init(user: "a", password: "b"),
                provider: "p",
                site: "https://x.example"
            ),
        ]
        for reply in replies {
            #expect(try RawJSON(encoding: reply).decode(AutoFill.RequestCredential.Reply.self) == reply)
        }
        // Members a later keyportd adds are passed over; nulls are absent values.
        let later = RawJSON(
            bytes: Array(
                #"{"new":[1,{"x":null}],"credential":{"code":null,"password":"pw","extra":{}},"provider":"p"}"#.utf8
            )
        )
        #expect(
            try later.decode(AutoFill.RequestCredential.Reply.self)
                == .init(credential: .init(password: "pw"), provider: "p")
        )
        // What is wrong is named by where it is.
        for (broken, problem) in [
            (#"{"credential":{}}"#, "provider: missing"),
            (#"{"credential":{"code":1},"provider":"p"}"#, "credential.code: a string was expected, not number"),
            (#"{"provider":"p""#, "the object is not closed"),
            (#"{"provider":"p","credential":[]}"#, "credential: an object was expected, not array"),
        ] {
            let error = #expect(throws: VarlinkDecodingError.self, "\(broken)") {
                try RawJSON(bytes: Array(broken.utf8)).decode(AutoFill.RequestCredential.Reply.self)
            }
            #expect(error?.description.hasPrefix(problem) == true, "\(error.map { "\($0)" } ?? "")")
        }
        let answer = AutoFillClient.Answer(
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
            AutoFillClient.passwordJSON(
                .init(credential: .init(password: "pw"), provider: "p", site: nil),
                password: "pw"
            )
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
        // Copied by cp, not by this process: a program it starts meanwhile (tests run in parallel)
        // would inherit the copy's descriptor open for writing, and running the copy would then
        // fail with ETXTBSY for as long as that program lives.
        let copied = try await Program.run("/bin/cp", [keyport, alone], timeout: .seconds(60))
        try #require(copied.status == 0, "\(copied.standardError)")

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
            let program = try Data(contentsOf: URL(fileURLWithPath: builtProgram(name)), options: .alwaysMapped)
            // A bundle's name as SwiftPM's accessor writes it: Keyport_MODULE.resources. Searched
            // with memchr and memcmp: a debug build's programs are hundreds of megabytes, and a
            // test that holds one of the few cooperative threads for a minute starves the others.
            let found = program.withUnsafeBytes { bytes -> [String] in
                guard let base = bytes.baseAddress else { return [] }
                var found: [String] = []
                var offset = 0
                while offset + marker.count <= bytes.count,
                    let hit = memchr(base + offset, Int32(marker[0]), bytes.count - offset - marker.count + 1)
                {
                    let start = base.distance(to: UnsafeRawPointer(hit))
                    offset = start + 1
                    guard memcmp(hit, marker, marker.count) == 0 else { continue }
                    let window = UnsafeRawBufferPointer(rebasing: bytes[start..<min(start + 80, bytes.count)])
                    if let end = window.firstRange(of: suffix)?.upperBound {
                        found.append(String(decoding: window[..<end], as: UTF8.self))
                    }
                }
                return found
            }
            #expect(found.isEmpty, "\(name) names \(found)")
        }
    }
}
