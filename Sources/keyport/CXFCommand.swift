import ArgumentParser
import CredentialExchangeFormat
import Foundation

struct CXFCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cxf",
        abstract: "Read, check and rewrite FIDO Credential Exchange Format (CXF 1.0) documents.",
        subcommands: [Validate.self, Format.self, Stats.self])
}

/// Input options every `cxf` command shares.
struct CXFInput: ParsableArguments {
    @Argument(help: "The CXF JSON document to read, or - for standard input.")
    var file: String

    @Option(help: "The largest document to read, in bytes.")
    var maxSize: Int = CXF.DecodingOptions().maxDocumentSize

    @Option(help: "The deepest nesting of JSON objects and arrays to accept.")
    var maxDepth: Int = CXF.DecodingOptions().maxDepth

    var name: String { file == "-" ? "standard input" : file }

    /// Reads and decodes the document; a document that is not CXF at all is a `Failure.invalid`.
    func decode() throws(Failure) -> CXF.DecodedDocument {
        let bytes = try readInput(file, limit: maxSize)
        do {
            return try CXF.Decoder(options: .init(maxDocumentSize: maxSize, maxDepth: maxDepth)).decode(bytes)
        } catch {
            throw .invalid("\(name) is not a CXF document: \(error)")
        }
    }
}

extension CXFCommand {
    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a document against CXF 1.0 and list every problem with its JSON pointer.",
            discussion: "Exit status: 0 when the document has no error (warnings allowed), 1 when it is invalid, 2 for a usage or I/O error.")

        @OptionGroup var input: CXFInput

        @Flag(help: "Print the report as JSON.")
        var json = false

        @Flag(help: "Also prove each key's embedded public key belongs to its private key (slower).")
        var verifyKeyPairs = false

        func run() throws {
            let report: ValidationReport
            do {
                let decoded = try input.decode()
                let diagnostics = decoded.diagnostics + CXF.Validator(verifyKeyPairs: verifyKeyPairs).validate(decoded.document)
                report = ValidationReport(document: decoded.document, diagnostics: diagnostics)
            } catch let failure where failure.exitCode == 1 {
                report = ValidationReport(fatal: failure.message)
            }
            FileHandle.write(json ? report.json() : report.text(name: input.name))
            if !report.valid { throw ExitCode(1) }
        }
    }

    struct Format: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fmt",
            abstract: "Write a document in the canonical CXF encoding on standard output.",
            discussion: """
                Members in the specification's order, unknown members kept after them, binary values as \
                unpadded base64url, absent optionals left out. Diagnostics go to standard error. \
                Exit status: 0, or 1 when the document has an error, 2 for a usage or I/O error.
                """)

        @OptionGroup var input: CXFInput

        @Flag(help: "Indent the output.")
        var pretty = false

        func run() throws {
            let decoded = try input.decode()
            let diagnostics = decoded.diagnostics + CXF.Validator().validate(decoded.document)
            var bytes = CXF.Encoder(options: .init(prettyPrinted: pretty)).encode(decoded.document)
            if !pretty { bytes.append(0x0A) }  // the pretty form ends with one already
            FileHandle.standardOutput.write(Data(bytes))
            for diagnostic in diagnostics {
                FileHandle.write("\(input.name): \(diagnostic)\n", to: .standardError)
            }
            if diagnostics.contains(where: { $0.severity == .error }) { throw ExitCode(1) }
        }
    }

    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Count a document's accounts, items, credentials by type and fields by field type.")

        @OptionGroup var input: CXFInput

        @Flag(help: "Print the counts as JSON.")
        var json = false

        func run() throws {
            let stats = DocumentStats(try input.decode().document)
            FileHandle.write(json ? stats.json() : stats.text())
        }
    }
}
