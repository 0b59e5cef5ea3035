import Foundation
import KeyportTestSupport
import Testing

/// The command line against hostile input and hostile surroundings: bounded reads, checked
/// writes, nothing lost by `fmt`, nothing sent raw to the terminal.
@Suite("keyport against hostile input and surroundings")
struct CLIRobustnessTests {
    func temporaryDirectory() throws -> URL {
        try TemporaryDirectory("keyport-cli").url
    }

    /// Runs keyport through the shell, so redirections (`> /dev/full`, pipes) are the real thing.
    func shell(_ script: String) async throws -> CLI.Result {
        try await runProgram(
            "/bin/sh",
            ["-c", script],
            environment: ["KEYPORT": CLI.executable.path, "PATH": "/usr/bin:/bin"]
        )
    }

    static let brokenLogin =
        #"{"id":"YQ","username":"","email":"","collections":[],"items":[{"id":"aQ","title":"t","credentials":{"0":{"type":"basic-auth","password":{"fieldType":"concealed-string","value":"hunter2-kept"}}}}]}"#

    @Test("fmt never drops a credential it cannot read: it is written back, with an error and exit 1")
    func fmtKeepsWrongTypedCredentials() async throws {
        let result = try await CLI.run(["cxf", "fmt", "-"], stdin: Data(Self.brokenLogin.utf8))
        #expect(result.status == 1)
        #expect(result.stdout.contains("hunter2-kept"))
        #expect(!result.stdout.contains(#""credentials":[]"#))
        #expect(result.stderr.contains("error: /items/0/credentials:"))
        #expect(!result.stderr.contains("hunter2-kept"))
        let validate = try await CLI.run(["cxf", "validate", "-"], stdin: Data(Self.brokenLogin.utf8))
        #expect(validate.status == 1)
        #expect(validate.stdout.contains("INVALID"))
    }

    @Test("a full disk: fmt exits 2 and says so, instead of crashing")
    func fullDisk() async throws {
        let result = try await shell(#""$KEYPORT" cxf fmt "\#(try CLI.fixture("valid.json"))" > /dev/full"#)
        #expect(result.status == 2)
        #expect(result.stderr.contains("cannot write to standard output"))
        let validate = try await shell(#""$KEYPORT" cxf validate "\#(try CLI.fixture("valid.json"))" > /dev/full"#)
        #expect(validate.status == 2)
    }

    @Test("fmt --output replaces a file only with a whole document; a new file is 0600")
    func atomicOutput() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let target = dir.appendingPathComponent("clean.json")
        var result = try await CLI.run(["cxf", "fmt", try CLI.fixture("valid.json"), "--output", target.path])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty)
        let written = try Data(contentsOf: target)
        #expect(try JSONSerialization.jsonObject(with: written) is [String: Any])
        #expect(try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? Int == 0o600)

        // An existing file keeps its mode.
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: target.path)
        result = try await CLI.run(["cxf", "fmt", try CLI.fixture("valid.json"), "-o", target.path, "--pretty"])
        #expect(result.status == 0)
        #expect(try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? Int == 0o640)

        // A directory that is not there: exit 2, nothing written anywhere.
        result = try await CLI.run([
            "cxf", "fmt", try CLI.fixture("valid.json"), "-o", dir.appendingPathComponent("no/such/file").path,
        ])
        #expect(result.status == 2)
        #expect(result.stderr.contains("cannot write"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["clean.json"])
    }

    @Test("a regular file over --max-size is refused by its size, before it is read")
    func sizeCheckedFirst() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A sparse terabyte: reading it would never finish.
        let huge = dir.appendingPathComponent("huge.json")
        #expect(FileManager.default.createFile(atPath: huge.path, contents: nil))
        let handle = try FileHandle(forWritingTo: huge)
        try handle.truncate(atOffset: 1 << 40)
        try handle.close()
        let result = try await CLI.run(["cxf", "validate", "--json", huge.path])
        #expect(result.status == 1)
        let diagnostics = try #require(try result.json()["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.first?["code"] as? String == "too-large")
    }

    @Test("standard input stops at the limit: no waiting for the rest, no reading past it")
    func boundedPipe() async throws {
        // The writer sends one byte more than the limit and then keeps the pipe open for a
        // minute: keyport must decide from the bytes up to the limit and exit at once.
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try await shell(
            #"""
            cd "\#(dir.path)" && mkfifo input
            (head -c 1001 /dev/zero; exec sleep 60) > input 2>/dev/null &
            "$KEYPORT" cxf validate --max-size 1000 - < input; echo "status $?"
            kill $! 2>/dev/null
            """#
        )
        #expect(result.stdout.contains("status 1"))
        #expect(result.stdout.contains("larger than 1000 bytes"))
        // A device without end.
        let device = try await CLI.run(["cxf", "validate", "--json", "--max-size", "4096", "/dev/zero"])
        #expect(device.status == 1)
        #expect(device.stdout.contains("too-large"))
    }

    @Test("--max-depth has an upper bound; deep nesting is refused, never a crash")
    func depthBound() async throws {
        let usage = try await CLI.run(["cxf", "validate", "--max-depth", "1000000", "-"], stdin: Data("{}".utf8))
        #expect(usage.status == 2)
        #expect(usage.stderr.contains("--max-depth must be between 1 and 512"))
        let deep = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)
        let result = try await CLI.run(
            ["cxf", "validate", "--json", "--max-depth", "512", "-"],
            stdin: Data(#"{"id":"YQ","items":[],"x":\#(deep)}"#.utf8)
        )
        #expect(result.status == 1)
        #expect(try (result.json()["diagnostics"] as? [[String: Any]])?.first?["code"] as? String == "too-deep")
    }

    /// Control and bidi characters, as JSON escapes, that try to erase "INVALID" and print a forged verdict.
    static let forgery = #"\u001b[2K\r\u001b[1Avalid \u202e\u0085"#

    @Test("values reach the terminal escaped: validate, fmt's findings, stats and otp parse")
    func terminalEscapes() async throws {
        let document =
            #"{"id":"YQ","username":"eve\#(Self.forgery)","email":"","collections":[],"items":[{"id":"aQ","title":"t","credentials":[{"type":"x-\#(Self.forgery)"},{"type":"custom-fields","fields":[{"fieldType":"x\#(Self.forgery)","value":"v"}]}]}]}"#
        let raw: [Character] = ["\u{1B}", "\r", "\u{202E}", "\u{85}"]
        for arguments in [["cxf", "validate", "-"], ["cxf", "stats", "-"], ["cxf", "fmt", "-"]] {
            let result = try await CLI.run(arguments, stdin: Data(document.utf8))
            let shown = arguments[1] == "fmt" ? result.stderr : result.stdout
            #expect(!shown.contains { raw.contains($0) }, "\(arguments[1]) printed a raw control character")
            #expect(shown.contains(#"\u{1B}"#))
            #expect(shown.contains(#"\u{202E}"#))
        }
        let otp = try await CLI.run([
            "otp", "parse", "otpauth://totp/Acme%1B%5B2K:bob%E2%80%AE?secret=JBSWY3DPEHPK3PXP&issuer=Acme%1B%5B2K",
        ])
        #expect(otp.status == 0)
        #expect(!otp.stdout.contains { raw.contains($0) })
        #expect(otp.stdout.contains(#"issuer: Acme\u{1B}[2K"#))
        #expect(otp.stdout.contains(#"account: bob\u{202E}"#))
    }

    @Test("the report of an unreadable document carries the reason's code, not always not-cxf")
    func fatalCodes() async throws {
        let syntax = try await CLI.run(["cxf", "validate", "--json", "-"], stdin: Data("{".utf8))
        #expect(try (syntax.json()["diagnostics"] as? [[String: Any]])?.first?["code"] as? String == "syntax")
        let notCXF = try await CLI.run(["cxf", "validate", "--json", "-"], stdin: Data("[]".utf8))
        #expect(try (notCXF.json()["diagnostics"] as? [[String: Any]])?.first?["code"] as? String == "not-cxf")
    }

    @Test(
        "a document over --max-size is too-large in every command, in JSON and text",
        arguments: ["validate", "stats", "fmt"]
    )
    func tooLargeCode(command: String) async throws {
        let fixture = try CLI.fixture("valid.json")
        let text = try await CLI.run(["cxf", command, "--max-size", "10", fixture])
        #expect(text.status == 1)
        if command == "validate" {
            #expect(text.stdout.contains("larger than 10 bytes (raise --max-size to read it) [too-large]"))
            let json = try await CLI.run(["cxf", command, "--json", "--max-size", "10", fixture])
            #expect(json.status == 1)
            #expect(try (json.json()["diagnostics"] as? [[String: Any]])?.first?["code"] as? String == "too-large")
        } else {
            #expect(text.stdout.isEmpty)
            #expect(
                text.stderr == "keyport: \(fixture) is larger than 10 bytes (raise --max-size to read it) [too-large]\n"
            )
        }
        if command == "stats" {
            let json = try await CLI.run(["cxf", "stats", "--json", "--max-size", "10", fixture])
            #expect(json.status == 1)
            #expect(json.stdout.isEmpty)
            #expect(json.stderr.hasSuffix(" [too-large]\n"))
        }
    }

    @Test(
        "a file that cannot be read is unreadable-input (exit 2, nothing on standard output)",
        arguments: ["validate", "stats", "fmt"]
    )
    func unreadableCode(command: String) async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = dir.appendingPathComponent("missing.json").path
        for arguments in [["cxf", command, missing], ["cxf", command, dir.path]]
            + (command == "fmt" ? [] : [["cxf", command, "--json", missing]])
        {
            let result = try await CLI.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stdout.isEmpty, "\(arguments)")
            #expect(result.stderr.hasPrefix("keyport: cannot "), "\(arguments)")
            #expect(result.stderr.hasSuffix(" [unreadable-input]\n"), "\(arguments)")
        }
    }

    @Test("stats and fmt name why a document cannot be read; fmt names an output it cannot write")
    func statsAndFormatCodes() async throws {
        let stats = try await CLI.run(["cxf", "stats", "-"], stdin: Data("{".utf8))
        #expect(stats.status == 1)
        #expect(stats.stderr.hasPrefix("keyport: standard input cannot be read as CXF: line 1"))
        #expect(stats.stderr.hasSuffix(" [syntax]\n"))
        let format = try await CLI.run(["cxf", "fmt", "-"], stdin: Data("[]".utf8))
        #expect(format.status == 1)
        #expect(format.stderr.hasSuffix(" [not-cxf]\n"))
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let unwritable = try await CLI.run([
            "cxf", "fmt", try CLI.fixture("valid.json"), "-o", dir.appendingPathComponent("no/such/file").path,
        ])
        #expect(unwritable.status == 2)
        #expect(unwritable.stderr.hasSuffix(" [unwritable-output]\n"))
    }
}
