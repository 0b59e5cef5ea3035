import ArgumentParser
import CredentialExchangeFormat
import Foundation
import KeyportInterfaces
import Varlink

/// `keyport exchange`: hand credentials to another app through keyportd.
struct ExchangeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exchange",
        abstract: "Hand credentials to another app through keyportd, with your consent.",
        subcommands: [Export.self]
    )

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export a CXF file you have to an app you choose.",
            discussion: """
                keyportd asks you (through `keyport agent`) which registered app may import the \
                credentials, starts it and hands the data over in memory. Exit status: 0 once the \
                app has the data; 1 with the reason otherwise (declined, no app can import, the app \
                failed); 2 when the file cannot be read or keyportd is not running.
                """
        )

        @OptionGroup var input: CXFInput

        func run() async throws {
            let decoded = try input.decode()
            guard case .header = decoded.document else {
                throw Failure.invalid(
                    "\(input.name) is a single account without the document's header; an export needs a whole CXF document"
                )
            }
            // The bytes go to keyportd as they are: the importer gets the document as written.
            let bytes = try readInput(input.file, limit: input.maxSize, limitOption: "--max-size")
            try await withKeyportd(refusal: "the export did not happen: ") { connection in
                let requested = try await connection.call(
                    "org.keyport.Exchange.RequestExport",
                    RawJSON(encoding: Exchange.RequestExportIn(formatVersions: ["1.0"]))
                )
                let options = try requested.decode(Exchange.RequestExportOut.self)
                _ = try await connection.call(
                    "org.keyport.Exchange.ExportCredentials",
                    Exchange.exportCredentialsParameters(export: options.export, document: bytes)
                )
            }
            FileHandle.write("The chosen app has the credentials.\n", to: .standardOutput)
        }
    }
}
