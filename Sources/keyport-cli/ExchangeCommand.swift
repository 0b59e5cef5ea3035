import ArgumentParser
import CredentialExchangeFormat
import Foundation
import KeyportEncoding
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
                credentials, starts it and hands the data over in memory, then says what the app \
                reported it kept (or that it did not say). Exit status: 0 once the app has the data; \
                1 with the reason otherwise (declined, no app can import, the app failed or did not \
                take it in time); 2 when the file cannot be read or keyportd is not running.
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
            let outcome = try await withKeyportd(refusal: "the export did not happen: ") { connection in
                let requested = try await connection.call(
                    Exchange.RequestExport.name,
                    RawJSON(encoding: Exchange.RequestExport.Parameters(formatVersions: ["1.0"]))
                )
                let options = try requested.decode(Exchange.RequestExport.Reply.self)
                try await connection.send(
                    VarlinkCall(
                        method: Exchange.ExportCredentials.name,
                        parameters: Exchange.exportCredentialsParameters(export: options.export, document: bytes),
                        more: true
                    )
                )
                while true {
                    let (reply, continues) = try await connection.nextReply()
                    let step = try reply.decode(Exchange.ExportCredentials.Reply.self)
                    guard continues else { return step }
                    let importer = DisplayText.escaping(step.importer)
                    let said =
                        step.state == Exchange.State.started.rawValue
                        ? "started \(importer); waiting for it to take the credentials"
                        : "\(importer) has the credentials; waiting for it to say what it kept"
                    FileHandle.write("keyport: \(said)\n", to: .standardError)
                }
            }
            FileHandle.write(Self.told(outcome) + "\n", to: .standardOutput)
        }

        /// What came of the export, as the importer reported it (or not).
        static func told(_ outcome: Exchange.ExportCredentials.Reply) -> String {
            let importer = DisplayText.escaping(outcome.importer)
            guard outcome.state == Exchange.State.reported.rawValue else {
                return "\(importer) has the credentials; it did not say what it kept."
            }
            let said = outcome.message.map { " \(importer) says: \(DisplayText.escaping($0))" } ?? ""
            if outcome.declined == true { return "\(importer) took nothing: the import was declined there.\(said)" }
            return "\(importer) kept \(outcome.imported ?? 0) items.\(said)"
        }
    }
}
