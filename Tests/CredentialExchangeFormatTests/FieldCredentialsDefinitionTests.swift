import Foundation
import KeyportTestSupport
import Testing

/// The generator of the field-only credential types (CXFTypesGenerate, the CXFTypes plugin's tool)
/// run on definitions of its own: what it writes, and the definitions it refuses.
@Suite("The field-only credentials' definition")
struct FieldCredentialsDefinitionTests {
    private static func generate(_ definition: String, mode: String = "cxf") async throws -> Program.Ran {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cxftypes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("Types.cxftypes")
        try Data(definition.utf8).write(to: input)
        let output = directory.appendingPathComponent("Out.swift")
        var ran = try await Program.run(builtProgram("CXFTypesGenerate"), [mode, output.path, input.path])
        ran.standardOutput = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return ran
    }

    @Test("indentation with tabs or spaces reads alike; Apple's renames and defaults reach Apple's type")
    func reads() async throws {
        let definition =
            "credential wifi WiFi WiFi defaults:hidden\n\ta Wi-Fi network.\n"
            + "\tmember ssid:networkName string\n\t\tthe network's name.\n"
            + "    member hidden boolean\n        whether it hides its name.\n"
        let cxf = try await Self.generate(definition)
        #expect(cxf.status == 0, "\(cxf.standardError)")
        #expect(cxf.standardOutput.contains(#"try v.optional("ssid", &ssid, .field(.string), &c)"#))
        #expect(cxf.standardOutput.contains(#"try v.optional("hidden", &hidden, .field(.boolean), &c)"#))
        let apple = try await Self.generate(definition, mode: "apple")
        #expect(apple.status == 0, "\(apple.standardError)")
        #expect(apple.standardOutput.contains("In CXF JSON `networkName` is the member `ssid`."))
        #expect(apple.standardOutput.contains("networkName: ASImportableEditableField?,\n"))
        #expect(apple.standardOutput.contains("hidden: ASImportableEditableField? = nil\n"))
        #expect(apple.standardOutput.contains(#"("ssid", \.networkName, \.ssid)"#))
    }

    @Test(
        "a definition that would lose or mistype a member fails the build, naming the line",
        arguments: [
            (
                "credential wifi WiFi WiFi\n    a network.\n    member pass concealed-sting\n        the passphrase.\n",
                ":3:"
            ),
            (
                "credential wifi WiFi WiFi\n    a network.\n    Member pass concealed-string\n        the passphrase.\n",
                ":3:"
            ),
            ("credential wifi WiFi WiFi\n    a network.\n    member pass\n", ":3:"),
            ("    a network.\n", ":1:"),
            ("credential wifi WiFi WiFi\n    member pass string\n", "needs its description"),
            (
                "credential wifi WiFi WiFi defaults:hiden\n    a network.\n    member hidden boolean\n        hidden.\n",
                "hiden"
            ),
        ]
    )
    func refuses(definition: String, said: String) async throws {
        let ran = try await Self.generate(definition)
        #expect(ran.status == 1)
        #expect(ran.standardError.contains(said), "\(ran.standardError)")
    }
}
