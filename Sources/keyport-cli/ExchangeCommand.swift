import ArgumentParser
import AuthenticationServices
import CredentialExchangeFormat
import Foundation
import KeyportCommandLine
import KeyportEncoding

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
            // Read once: checked here, then handed over as it is, so the importer gets the
            // document as written.
            let bytes = try input.read()
            guard case .header = try input.decode(bytes).document else {
                throw CommandError.invalid(
                    "\(input.name) is a single account without the document's header; an export needs a whole CXF document"
                )
            }
            // As every other exporter does: Apple's API, whose Linux addition takes CXF as written.
            let manager = ASCredentialExportManager(presentationAnchor: ASPresentationAnchor())
            let outcome: ASCredentialExportManager.ImportOutcome
            do {
                _ = try await manager.requestExport()
                outcome = try await manager.exportCredentials(cxfJSON: Data(bytes)) { step in
                    let said =
                        switch step {
                        case .importerStarted(let importer):
                            "started \(DisplayText.escaping(importer)); waiting for it to take the credentials"
                        case .importerHasCredentials(let importer):
                            "\(DisplayText.escaping(importer)) has the credentials; waiting for it to say what it kept"
                        }
                    FileHandle.write("keyport: \(said)\n", to: .standardError)
                }
            } catch let error as ASAuthorizationError {
                let reason = "the export did not happen: \(error.failureReason ?? "\(error.code)")"
                // keyportd not running, gone, or answering what this keyport does not understand:
                // exit 2; refused (declined, no importer, …): 1.
                throw [.failed, .invalidResponse].contains(error.code)
                    ? CommandError.io(reason) : CommandError.invalid(reason)
            }
            FileHandle.write(Self.told(outcome) + "\n", to: .standardOutput)
        }

        /// What came of the export, as the importer reported it (or not).
        static func told(_ outcome: ASCredentialExportManager.ImportOutcome) -> String {
            let importer = DisplayText.escaping(outcome.importer)
            guard outcome.reported else {
                return "\(importer) has the credentials; it did not say what it kept."
            }
            let said = outcome.message.map { " \(importer) says: \(DisplayText.escaping($0))" } ?? ""
            if outcome.declined { return "\(importer) took nothing: the import was declined there.\(said)" }
            return "\(importer) kept \(outcome.importedCount ?? 0) items.\(said)"
        }
    }
}
