import CredentialExchangeFormat
import Foundation
import Testing

/// Replays the inputs kept from fuzzing (Fixtures/fuzz/, see scripts/fuzz) and checks what the
/// libFuzzer harness checks: decoding may throw `CXFDecodingError`, but must not crash, and a
/// document it accepts must have a canonical encoding that decodes without error to the same
/// model (nothing lost) and is a fixed point.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    static func inputNames() throws -> [String] {
        let fixtures = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        let directory = fixtures.appendingPathComponent("fuzz", isDirectory: true)
        return try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { !$0.hasPrefix(".") }
            .sorted()
    }

    static func input(_ name: String) throws -> Data {
        let fixtures = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        return try Data(contentsOf: fixtures.appendingPathComponent("fuzz").appendingPathComponent(name))
    }

    @Test("the fuzz inputs are there")
    func inputsPresent() throws {
        #expect(try Self.inputNames().count >= 1)
    }

    @Test("a fuzz input decodes or throws, and its canonical encoding is a fixed point", arguments: try inputNames())
    func canonicalProperty(_ name: String) throws {
        let bytes = try Self.input(name)
        // The depth error path, as the fuzzer drives it.
        _ = try? CXF.Decoder(options: CXF.DecodingOptions(maxDocumentSize: 1 << 20, maxDepth: 4)).decode(bytes)

        let decoder = CXF.Decoder(options: CXF.DecodingOptions(maxDocumentSize: 1 << 20))
        let decoded: CXF.DecodedDocument
        do {
            decoded = try decoder.decode(bytes)
        } catch {
            // Rejecting the input is allowed; the error must still describe itself.
            #expect(!error.description.isEmpty)
            return
        }
        _ = CXF.Validator().validate(decoded.document)

        let encoder = CXF.Encoder()
        let e1 = encoder.encode(decoded.document)
        let d1 = try decoder.decode(e1)
        #expect(
            d1.document == decoded.document,
            "fmt lost or changed something:\n\(String(decoding: e1, as: UTF8.self))"
        )
        let e2 = encoder.encode(d1.document)
        #expect(
            e1 == e2,
            "encode(decode(e1)) differs from e1:\n\(String(decoding: e1, as: UTF8.self))\n\(String(decoding: e2, as: UTF8.self))"
        )
    }
}
