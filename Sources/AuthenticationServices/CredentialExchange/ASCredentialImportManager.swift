import Foundation

/// Receives the credentials another app exports to this one, with Apple's API, through keyportd.
///
/// When a person exports from another app (``ASCredentialExportManager``) and chooses this one,
/// keyportd starts this app with the import's activity; the app redeems its token:
///
/// ```swift
/// if let activity = NSUserActivity.launchActivity,
///     activity.activityType == ASCredentialExchangeActivityType,
///     let token = activity.userInfo?[ASCredentialImportToken] as? UUID
/// {
///     let credentialData = try await ASCredentialImportManager().importCredentials(token: token)
///     // Store the credentials.
/// }
/// ```
///
/// On Apple platforms SwiftUI's `onContinueUserActivity(ASCredentialExchangeActivityType)` hands
/// the activity to the app; Linux has no SwiftUI, so ``NSUserActivity/launchActivity`` (a Linux
/// addition) reads it from the environment keyportd started the app with. The app must be
/// registered with keyportd by a manifest that says it supports credential exchange (see
/// ``ASCredentialExportManager``).
public final class ASCredentialImportManager: Sendable {
    private let exchange: KeyportdExchange

    /// Creates an import manager.
    public convenience init() {
        self.init(environment: ProcessInfo.processInfo.environment)
    }

    /// A manager that finds keyportd with `environment` (`KEYPORT_SOCKET`, `XDG_RUNTIME_DIR`).
    init(environment: [String: String]) {
        exchange = KeyportdExchange(environment: environment)
    }

    /// Receives the exported credentials.
    ///
    /// A token works once, soon after keyportd started the app, and only for the process keyportd
    /// started with it (or one that process started).
    ///
    /// The document is read as ``ASExportedCredentialData/init(cxfJSON:)`` reads it: what Apple's
    /// types have no place for is left out, as on Apple platforms.
    ///
    /// - Parameter token: The `UUID` under ``ASCredentialImportToken`` in the launch activity's
    ///   `userInfo`.
    /// - Throws: ``ASAuthorizationError``: ``ASAuthorizationError/Code-swift.enum/credentialImport``
    ///   when the token is unknown, expired, already used or not this process's, or the data is
    ///   not a CXF document this module reads; ``ASAuthorizationError/Code-swift.enum/failed``
    ///   when keyportd is not running; the reason in `userInfo`.
    public func importCredentials(token: UUID) async throws -> ASExportedCredentialData {
        let document = try await exchange.importCredentials(token: token)
        do {
            return try ASExportedCredentialData(cxfJSON: document)
        } catch DecodingError.dataCorrupted(let context) {
            // A major version this module does not read; the context says which, and what to do.
            throw Self.unreadable(context.debugDescription)
        } catch {
            throw Self.unreadable("\(error)")
        }
    }

    /// Receives the exported credentials as the exporter wrote them: the CXF document's JSON
    /// (its header object). (Linux addition.)
    ///
    /// For an app that keeps what Apple's types leave out (members and extensions of the
    /// exporter's own, credential types Apple has no class for); read it with the
    /// `CredentialExchangeFormat` module's tolerant `CXF.Decoder`. The token is redeemed as in
    /// ``importCredentials(token:)``: once.
    ///
    /// - Throws: ``ASAuthorizationError`` as ``importCredentials(token:)`` does, except that the
    ///   data is not read here.
    public func importCredentialsCXFJSON(token: UUID) async throws -> Data {
        try await exchange.importCredentials(token: token)
    }

    /// Tells the exporter what came of the import of `token`: how many items were kept, whether
    /// the person declined (a passphrase not given), and a sentence for them. (Linux addition.)
    ///
    /// The exporter's ``ASCredentialExportManager/exportCredentials(cxfJSON:progress:)`` returns
    /// it; without a report it says only that this app has the credentials. Once, from the process
    /// that redeemed the token (or one it started), while the exporter waits.
    ///
    /// - Throws: ``ASAuthorizationError``: ``ASAuthorizationError/Code-swift.enum/credentialImport``
    ///   when no exporter waits for a report of this token; ``ASAuthorizationError/Code-swift.enum/failed``
    ///   when keyportd is not running.
    public func reportImport(token: UUID, imported: Int, declined: Bool, message: String?) async throws {
        try await exchange.reportImport(token: token, imported: imported, declined: declined, message: message)
    }

    private static func unreadable(_ why: String) -> ASAuthorizationError {
        ASAuthorizationError(
            .credentialImport,
            reason: "the exported data is not a CXF document this app reads: \(why)"
        )
    }
}
