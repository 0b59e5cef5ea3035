import ArgumentParser
import CredentialExchangeFormat
import Foundation
import KeyportCommandLine

struct CXFCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cxf",
        abstract: "Read, check and rewrite FIDO Credential Exchange Format (CXF 1.0) documents.",
        subcommands: [Validate.self, Format.self, Stats.self]
    )
}

/// Input options every `cxf` command shares.
struct CXFInput: ParsableArguments {
    @Argument(help: "The CXF JSON document to read, or - for standard input.")
    var file: String

    @Option(help: "The largest document to read, in bytes.")
    var maxSize: Int = CXF.DecodingOptions().maxDocumentSize

    @Option(
        help: "The deepest nesting of JSON objects and arrays to accept (at most \(CXF.DecodingOptions.maxDepthLimit))."
    )
    var maxDepth: Int = CXF.DecodingOptions().maxDepth

    @Option(help: "How many findings of one kind to list before only counting them.")
    var maxFindings: Int = CXF.DecodingOptions().maxDiagnosticsPerCode

    var name: String { file == "-" ? "standard input" : file }

    func validate() throws {
        guard (1...CXF.DecodingOptions.maxDepthLimit).contains(maxDepth) else {
            throw ValidationError("--max-depth must be between 1 and \(CXF.DecodingOptions.maxDepthLimit)")
        }
        guard maxSize >= 0 else { throw ValidationError("--max-size must not be negative") }
        guard maxFindings >= 1 else { throw ValidationError("--max-findings must be at least 1") }
    }

    /// Reads and decodes the document. A document that cannot be read as CXF at all is a
    /// `CommandError.invalid`, a file that cannot be read a `CommandError.io`; each carries its code.
    func decode() throws(CommandError) -> CXF.DecodedDocument {
        try decode(try read())
    }

    /// The input's bytes, up to `--max-size`.
    func read() throws(CommandError) -> [UInt8] {
        try readInput(file, limit: maxSize, limitOption: "--max-size")
    }

    /// Decodes `bytes`, read from the input, as ``decode()`` does.
    func decode(_ bytes: [UInt8]) throws(CommandError) -> CXF.DecodedDocument {
        let options = CXF.DecodingOptions(
            maxDocumentSize: maxSize,
            maxDepth: maxDepth,
            maxDiagnosticsPerCode: maxFindings
        )
        do {
            return try CXF.Decoder(options: options).decode(bytes)
        } catch {
            throw .invalid("\(name) cannot be read as CXF: \(error)", code: CommandError.Code(error.code))
        }
    }
}

extension CXFCommand {
    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a document against CXF 1.0 and list every problem with its JSON pointer.",
            discussion:
                "Exit status: 0 when the document has no error (warnings allowed), 1 when it is invalid, 2 for a usage or I/O error."
        )

        @OptionGroup var input: CXFInput

        @Flag(help: "Print the report as JSON.")
        var json = false

        @Flag(help: "Also prove each key's embedded public key belongs to its private key (slower).")
        var verifyKeyPairs = false

        func run() throws {
            let report = try makeReport()
            FileHandle.write(json ? report.json() : report.text(name: input.name))
            if !report.valid { throw ExitCode(1) }
        }

        /// The report on the document, or on why it could not be read as CXF at all; an I/O
        /// failure (exit 2) is thrown instead: it says nothing about the document, so it is no
        /// finding, and goes to standard error with its code.
        func makeReport() throws(CommandError) -> ValidationReport {
            let decoded: CXF.DecodedDocument
            do {
                decoded = try input.decode()
            } catch {
                guard error.exitCode == 1, let code = error.code else { throw error }
                return ValidationReport(fatal: error.message, code: code)
            }
            let validator = CXF.Validator(verifyKeyPairs: verifyKeyPairs, maxDiagnosticsPerCode: input.maxFindings)
            let report = ValidationReport(
                document: decoded.document,
                diagnostics: decoded.diagnostics + validator.validate(decoded.document)
            )
            keepUntilExit(decoded)
            return report
        }
    }

    struct Format: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fmt",
            abstract: "Write a document in the canonical CXF encoding on standard output.",
            discussion: """
                Members in the specification's order, unknown members kept after them, binary values as \
                unpadded base64url, absent optionals left out. Nothing is dropped: a value that cannot be \
                read is written back as it came (and reported as an error). Diagnostics go to standard \
                error. Exit status: 0, or 1 when the document has an error, 2 for a usage or I/O error.
                """
        )

        @OptionGroup var input: CXFInput

        @Flag(help: "Indent the output.")
        var pretty = false

        @Option(
            name: .shortAndLong,
            help: "Write to this file, replacing it only once the whole document is written (new files are made 0600)."
        )
        var output: String?

        func run() throws {
            let decoded = try input.decode()
            let validator = CXF.Validator(maxDiagnosticsPerCode: input.maxFindings)
            let diagnostics = decoded.diagnostics + validator.validate(decoded.document)
            var bytes = CXF.Encoder(options: .init(prettyPrinted: pretty)).encode(decoded.document)
            keepUntilExit(decoded)
            if !pretty { bytes.append(0x0A) }  // the pretty form ends with one already
            if let output {
                try writeAtomically(bytes, to: output)
            } else {
                FileHandle.write(Data(bytes))
            }
            for diagnostic in diagnostics {
                FileHandle.write("\(input.name): \(diagnostic)\n", to: .standardError)
            }
            if diagnostics.contains(where: { $0.severity == .error }) { throw ExitCode(1) }
        }
    }

    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Count a document's accounts, items, credentials by type and fields by field type."
        )

        @OptionGroup var input: CXFInput

        @Flag(help: "Print the counts as JSON.")
        var json = false

        func run() throws {
            let stats = DocumentStats(try input.decode().document)
            FileHandle.write(json ? stats.json() : stats.text())
        }
    }
}
