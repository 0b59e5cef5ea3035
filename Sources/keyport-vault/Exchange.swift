import AuthenticationServices
import CredentialExchangeFormat
import Foundation
import KeyportEncoding
import KeyportFormats
import KeyportInterfaces
import KeyportVaultKeeper
import Varlink

/// Keyport Vault's side of credential exchange, with Apple's managers: it exports through
/// `ASCredentialExportManager` and imports through `ASCredentialImportManager` when keyportd
/// launches it with the import's activity. Items travel as CXF JSON, whole: what Apple's types
/// have no room for (unknown members, extensions, credential types) passes from vault to vault.
enum VaultExchange {
    /// Exports every item of `vault`, or those whose ids are in `only`, to the app the person
    /// chooses; the exit status.
    static func export(_ vault: VaultInstance, only: [String]) async -> Int32 {
        do {
            try await vault.unlock(because: "to export its credentials")
            let items = try VaultSelection.items(try await VaultKeeperClient.items(vault.locations), only: only)
            let manager = ASCredentialExportManager(presentationAnchor: ASPresentationAnchor())
            _ = try await manager.requestExport()
            let outcome = try await manager.exportCredentials(cxfJSON: Data(Exporter.cxf(items))) { step in
                switch step {
                case .importerStarted(let importer):
                    report("started \(DisplayText.escaping(importer)); waiting for it to take the credentials")
                case .importerHasCredentials(let importer):
                    report("\(DisplayText.escaping(importer)) has the credentials; waiting for it to say what it kept")
                }
            }
            report(Self.told(outcome, count: items.count, from: vault.path))
            return outcome.declined ? 1 : 0
        } catch {
            report("nothing was exported: \(reason(error))")
            return 1
        }
    }

    /// What the exporter says of an export, as its importer reported it (or not).
    /// The importer's name and words are another app's: escaped before they reach the terminal.
    static func told(_ outcome: ASCredentialExportManager.ImportOutcome, count: Int, from vault: String) -> String {
        let importer = DisplayText.escaping(outcome.importer)
        guard outcome.reported else {
            return "handed \(count) items of \(vault) to \(importer); \(importer) did not say what it kept"
        }
        let said = outcome.message.map { ": \(DisplayText.escaping($0))" } ?? ""
        if outcome.declined { return "\(importer) took nothing of \(vault): the import was declined there\(said)" }
        return "\(importer) kept \(outcome.importedCount ?? 0) of the \(count) items of \(vault)\(said)"
    }

    /// Imports what keyportd hands over for `token` into `vault`, in one transaction, tells the
    /// person what came in, and reports it to the exporter; the exit status.
    static func importCredentials(token: UUID, into vault: VaultInstance) async -> Int32 {
        let outcome: String
        let status: Int32
        var kept = 0
        var declined = false
        do {
            // The token is redeemed first: it expires soon, and unlocking may take the person a while.
            let data = try await ASCredentialImportManager().importCredentialsCXFJSON(token: token)
            try await vault.unlock(because: "to import the credentials you exported to it")
            // Passed on as keyportd handed it over: the keeper reads the document once.
            let counts = try await VaultKeeperClient.importDocument(Array(data), vault.locations)
            outcome =
                "\(vault.nameFirst) imported the credentials: \(counts.imported) new, \(counts.merged) merged into items it had, \(counts.unchanged) it had already"
            kept = counts.imported + counts.merged + counts.unchanged
            status = 0
        } catch {
            outcome = "\(vault.nameFirst) imported nothing: \(reason(error))"
            declined = ASExtensionError(bridging: error)?.code == .userCanceled
            status = 1
        }
        report(outcome)
        // The exporter waits to hear what this vault kept (a token never redeemed has no export
        // waiting: that refusal is not worth a word).
        try? await ASCredentialImportManager().reportImport(
            token: token,
            imported: kept,
            declined: declined,
            message: outcome
        )
        // The person chose this app in keyportd's agent, which is where they learn how it went.
        try? await ASCredentialProviderPrompt.notify(outcome)
        return status
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case let error as ASAuthorizationError:
            (error.userInfo[NSLocalizedFailureReasonErrorKey] as? String) ?? "\(error)"
        case let error as ASExtensionError where error.code == .userCanceled:
            "the vault stayed locked"
        case let error as VaultSelection.UnknownItems: error.description
        case let error as VarlinkError: error.sentence
        default: "\(error)"
        }
    }

    private static func report(_ message: String) {
        FileHandle.standardError.write(Data("keyport-vault: \(message)\n".utf8))
    }
}
