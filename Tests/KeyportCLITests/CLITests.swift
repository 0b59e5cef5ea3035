import Foundation
import KeyportTestSupport
import Testing

/// Runs the real `keyport` executable, built beside this test bundle.
struct CLI {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String

        func json() throws -> [String: Any] {
            try #require(JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
        }
    }

    static var executable: URL { URL(fileURLWithPath: builtProgram("keyport")) }

    static func fixture(_ name: String) throws -> String {
        try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures")).path
    }

    /// Runs keyport with `arguments` and `stdin` in this process's environment (see
    /// `runProgram(_:_:environment:input:)`).
    static func run(_ arguments: [String], stdin: Data? = nil) async throws -> Result {
        // Always a pipe, at its end at once when there is nothing to send.
        try await runProgram(
            executable.path,
            arguments,
            environment: ProcessInfo.processInfo.environment,
            input: stdin ?? Data()
        )
    }
}

/// Runs a program to its end with exactly `environment` and `input` on its standard input
/// (`/dev/null` when `nil`); killed, and the test failed quoting its output, after `timeout`.
func runProgram(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String],
    input: Data? = nil,
    timeout: Duration = .seconds(120)
) async throws -> CLI.Result {
    let ran = try await Program.run(executable, arguments, environment: environment, input: input, timeout: timeout)
    return CLI.Result(status: ran.status, stdout: ran.standardOutput, stderr: ran.standardError)
}

@Suite("keyport cxf")
struct CLITests {
    @Test("validate: a valid document exits 0 with a one-line summary")
    func validateValid() async throws {
        let result = try await CLI.run(["cxf", "validate", try CLI.fixture("valid.json")])
        #expect(result.status == 0)
        #expect(result.stdout.contains("valid CXF 1.0 document: 1 account, 15 items, 19 credentials"))
        #expect(result.stdout.hasSuffix("0 errors, 0 warnings\n"))
    }

    @Test("validate --json: the documented shape")
    func validateJSON() async throws {
        let result = try await CLI.run(["cxf", "validate", "--json", try CLI.fixture("valid.json")])
        #expect(result.status == 0)
        let json = try result.json()
        #expect(json["valid"] as? Bool == true)
        #expect(json["version"] as? [String: Int] == ["major": 1, "minor": 0])
        #expect(json["accounts"] as? Int == 1)
        #expect(json["items"] as? Int == 15)
        let credentials = try #require(json["credentials"] as? [String: Int])
        #expect(credentials.count == 17)
        #expect(credentials["ssh-key"] == 3)
        #expect(credentials["basic-auth"] == 1)
        #expect((json["diagnostics"] as? [Any])?.isEmpty == true)
    }

    @Test("validate: an invalid document exits 1 and lists findings with paths")
    func validateInvalid() async throws {
        let result = try await CLI.run(["cxf", "validate", "--json", try CLI.fixture("quirks.json")])
        #expect(result.status == 1)
        let json = try result.json()
        #expect(json["valid"] as? Bool == false)
        #expect(json["version"] is NSNull)
        let diagnostics = try #require(json["diagnostics"] as? [[String: String]])
        #expect(
            diagnostics.contains {
                $0["code"] == "invalid-totp-secret" && $0["path"] == "/items/0/credentials/2/secret"
                    && $0["severity"] == "error"
            }
        )
        #expect(diagnostics.allSatisfy { $0.keys.sorted() == ["code", "message", "path", "severity"] })
        let text = try await CLI.run(["cxf", "validate", try CLI.fixture("quirks.json")])
        #expect(text.status == 1)
        #expect(text.stdout.contains("INVALID account-only CXF document"))
        #expect(text.stdout.contains("error: /items/0/credentials/2/secret: the secret is empty [invalid-totp-secret]"))
    }

    @Test("validate: input that is not JSON is invalid (1), with where it broke")
    func validateNotJSON() async throws {
        let result = try await CLI.run(["cxf", "validate", "--json", "-"], stdin: Data("{\"items\": [1 2]}".utf8))
        #expect(result.status == 1)
        let diagnostics = try #require(try result.json()["diagnostics"] as? [[String: String]])
        #expect(diagnostics.first?["code"] == "syntax")  // the decoding error's own code
        #expect(diagnostics.first?["message"]?.contains("line 1, column 14") == true)
    }

    @Test(
        "usage and I/O errors exit 2",
        arguments: [
            ["cxf", "validate", "/nonexistent/file.json"],
            ["cxf", "validate"],
            ["cxf", "validate", "--no-such-option", "x"],
            ["cxf", "fmt", "/nonexistent/file.json"],
            ["nonsense"],
        ]
    )
    func usageErrors(arguments: [String]) async throws {
        let result = try await CLI.run(arguments)
        #expect(result.status == 2)
        #expect(!result.stderr.isEmpty)
        #expect(result.stdout.isEmpty)
    }

    @Test("--max-size refuses a larger document with exit 1 and says how to read it")
    func maxSize() async throws {
        let result = try await CLI.run(["cxf", "validate", "--max-size", "100", try CLI.fixture("valid.json")])
        #expect(result.status == 1)
        #expect(result.stdout.contains("--max-size"))
    }

    @Test("fmt: the canonical encoding, stable when run on its own output")
    func format() async throws {
        let first = try await CLI.run(["cxf", "fmt", try CLI.fixture("valid.json")])
        #expect(first.status == 0)
        #expect(first.stdout.hasPrefix(#"{"version":{"major":1,"minor":0},"exporterRpId":"exporter.example""#))
        #expect(first.stdout.hasSuffix("}\n"))
        let second = try await CLI.run(["cxf", "fmt", "-"], stdin: Data(first.stdout.utf8))
        #expect(second.stdout == first.stdout)
        let pretty = try await CLI.run(["cxf", "fmt", "--pretty", try CLI.fixture("valid.json")])
        #expect(pretty.stdout.contains("\n  \"exporterRpId\": \"exporter.example\",\n"))
    }

    @Test("fmt keeps what it cannot type and reports on stderr, exiting 1 for errors")
    func formatInvalid() async throws {
        let result = try await CLI.run(["cxf", "fmt", try CLI.fixture("quirks.json")])
        #expect(result.status == 1)
        #expect(result.stdout.contains(#""type":"future-credential""#))
        #expect(result.stdout.contains(#""futureAccountMember""#))
        #expect(result.stderr.contains("[malformed-credential]"))
    }

    @Test("stats: counts by account, credential type and field type")
    func stats() async throws {
        let result = try await CLI.run(["cxf", "stats", "--json", try CLI.fixture("valid.json")])
        #expect(result.status == 0)
        let json = try result.json()
        #expect(json["items"] as? Int == 15)
        #expect(json["collections"] as? Int == 3)
        let accounts = try #require(json["accounts"] as? [[String: Any]])
        #expect(accounts.first?["username"] as? String == "alice")
        #expect(accounts.first?["credentials"] as? Int == 19)
        let fields = try #require(json["fieldTypes"] as? [String: Int])
        #expect(fields["country-code"] == 5)
        #expect(fields["boolean"] == 2)
        let text = try await CLI.run(["cxf", "stats", try CLI.fixture("valid.json")])
        #expect(text.stdout.hasPrefix("1 account, 15 items, 3 collections\n"))
    }

    @Test("help lists the cxf commands")
    func help() async throws {
        let result = try await CLI.run(["cxf", "--help"])
        #expect(result.status == 0)
        for command in ["validate", "fmt", "stats"] { #expect(result.stdout.contains(command)) }
    }
}
