import Foundation
import KeyportInterfaces
import Synchronization

/// Exports credentials to another app the person chooses, with Apple's API, through keyportd.
///
/// ```swift
/// let manager = ASCredentialExportManager(presentationAnchor: ASPresentationAnchor())
/// let options = try await manager.requestExport()
/// let data = ASExportedCredentialData(
///     accounts: accounts, formatVersion: options.formatVersion,
///     exporterRelyingPartyIdentifier: "example.org", exporterDisplayName: "Example", timestamp: Date())
/// try await manager.exportCredentials(data)
/// ```
///
/// As on Apple platforms, ``requestExport(for:)`` has the system ask the person which app to
/// export to, and ``exportCredentials(_:)`` hands that app the data: keyportd starts it with an
/// `NSUserActivity` of type ``ASCredentialExchangeActivity`` (``NSUserActivity/launchActivity``)
/// and gives it the data when it calls ``ASCredentialImportManager/importCredentials(token:)``.
/// Nothing is written to a file: keyportd holds the data in memory until the importer has it.
///
/// On Linux, the "system" is keyportd, Keyport's per-user service, and the person is asked by
/// an agent (`keyport agent`, or a desktop's). The app must be registered with keyportd by a
/// manifest, Linux's counterpart of the Info.plist keys Apple asks for
/// (`SupportsCredentialExchange`, `SupportedCredentialExchangeVersions`); keyportd recognises the
/// app by its executable, whose absolute path the manifest names.
///
/// Errors are ``ASAuthorizationError``s; ``ASAuthorizationError`` lists which of keyportd's
/// answers becomes which code, and why.
public final class ASCredentialExportManager: Sendable {
    /// The options of one export, which keyportd chose with the person's answer.
    public struct ExportOptions: Codable, Hashable, Sendable {
        /// The CXF version to export in: the newest both apps support. Build the
        /// ``ASExportedCredentialData`` with it.
        public let formatVersion: ASExportedCredentialData.FormatVersion

        /// The options for keyportd's `formatVersion`, `"MAJOR.MINOR"`.
        ///
        /// Any 1.x is ``ASExportedCredentialData/FormatVersion/v1``: CXF minor versions only add
        /// members, which importers ignore.
        init(formatVersion text: String) throws(ASAuthorizationError) {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 2, let major = UInt32(parts[0]), UInt32(parts[1]) != nil else {
                throw ASAuthorizationError(
                    .invalidResponse,
                    reason: "keyportd chose the format version '\(text)', which is not MAJOR.MINOR"
                )
            }
            guard let version = ASExportedCredentialData.FormatVersion(major: major) else {
                throw ASAuthorizationError(
                    .credentialExport,
                    reason:
                        "keyportd chose CXF \(text), which this version of AuthenticationServices cannot write; list only versions 1.x in the app's manifest (SupportedCredentialExchangeVersions)"
                )
            }
            formatVersion = version
        }
    }

    private let exchange: KeyportdExchange
    /// The export ``requestExport(for:)`` began, named by keyportd's id, until
    /// ``exportCredentials(_:)`` takes it.
    private let requested = Mutex<String?>(nil)

    /// Creates an export manager.
    ///
    /// - Parameter presentationAnchor: The window Apple platforms anchor the system's sheet to. On
    ///   Linux the agent shows it in a window of its own, so the anchor is not used.
    public convenience init(presentationAnchor: ASPresentationAnchor) {
        self.init(environment: ProcessInfo.processInfo.environment)
    }

    /// A manager that finds keyportd with `environment` (`KEYPORT_SOCKET`, `XDG_RUNTIME_DIR`).
    init(environment: [String: String]) {
        exchange = KeyportdExchange(environment: environment)
    }

    /// Has the person choose the app to export to, and returns the options to export with.
    ///
    /// keyportd asks the person through its agent, so this returns once they have chosen (or
    /// throws once they have declined). Then call ``exportCredentials(_:)``. Calling this again
    /// before that begins a new export in place of the first.
    ///
    /// - Parameter extensionBundleIdentifier: On Apple platforms, which of the app's credential
    ///   provider extensions exports. On Linux an app is one manifest, which keyportd finds by the
    ///   calling executable (an app cannot vouch for itself), so this is not used.
    /// - Throws: ``ASAuthorizationError``: ``ASAuthorizationError/Code-swift.enum/canceled`` when
    ///   the person declined or the task was cancelled, ``ASAuthorizationError/Code-swift.enum/notInteractive``
    ///   when no agent runs to ask them, ``ASAuthorizationError/Code-swift.enum/credentialExport`` when
    ///   the app may not export or no app can import, ``ASAuthorizationError/Code-swift.enum/failed``
    ///   when keyportd is not running; the reason in `userInfo`.
    public func requestExport(for extensionBundleIdentifier: String? = nil) async throws -> ExportOptions {
        let reply = try await exchange.requestExport()
        let options = try ExportOptions(formatVersion: reply.formatVersion)
        requested.withLock { $0 = reply.export }
        return options
    }

    /// Hands `credentialData` to the app the person chose in ``requestExport(for:)``.
    ///
    /// Returns once keyportd has started the importer, the importer has the data, and it has said
    /// what it kept or ended (``exportCredentials(cxfJSON:progress:)`` returns what it said). The export
    /// ``requestExport(for:)`` began ends here, whatever the outcome: to try again, request again.
    ///
    /// - Throws: ``ASAuthorizationError``: ``ASAuthorizationError/Code-swift.enum/credentialExport``
    ///   when no export was requested, the data is not a CXF document an importer could use, or the
    ///   importer could not be started or did not take the data;
    ///   ``ASAuthorizationError/Code-swift.enum/failed`` when keyportd is not running; the reason
    ///   in `userInfo`.
    public func exportCredentials(_ credentialData: ASExportedCredentialData) async throws {
        _ = try await exchange.exportCredentials(export: takeExport(), document: credentialData.cxfJSON()) { _ in }
    }

    /// Hands a CXF document the app encoded itself (its header object's JSON) to the app the
    /// person chose in ``requestExport(for:)``. (Linux addition.)
    ///
    /// For an app whose credentials hold more than Apple's types have room for (members and
    /// extensions of its own, credential types Apple has no class for): the importer receives
    /// `cxfJSON` exactly as written. Otherwise as ``exportCredentials(_:)``, and it tells more:
    /// `progress` hears each step as it happens (the importer started, then holding the data), and
    /// the importer's own report comes back (``ImportOutcome``), or that it gave none.
    ///
    /// - Throws: as ``exportCredentials(_:)``.
    @discardableResult
    public func exportCredentials(
        cxfJSON: Data,
        progress: @escaping @Sendable (ExportProgress) -> Void = { _ in }
    ) async throws -> ImportOutcome {
        let last = try await exchange.exportCredentials(export: takeExport(), document: cxfJSON) { step in
            switch Exchange.State(rawValue: step.state) {
            case .started?: progress(.importerStarted(importer: step.importer))
            case .handed?: progress(.importerHasCredentials(importer: step.importer))
            default: break
            }
        }
        return ImportOutcome(
            importer: last.importer,
            reported: last.state == Exchange.State.reported.rawValue,
            importedCount: last.imported,
            declined: last.declined ?? false,
            message: last.message
        )
    }

    /// A step of an export on its way to the importer. (Linux addition.)
    public enum ExportProgress: Sendable, Hashable {
        /// keyportd started the importer, named as the person knows it; it has not taken the
        /// credentials yet.
        case importerStarted(importer: String)
        /// The importer has the credentials; what it keeps is up to it.
        case importerHasCredentials(importer: String)
    }

    /// What the importer said it did with an export. (Linux addition.)
    public struct ImportOutcome: Sendable, Hashable {
        /// The importer, named as the person knows it.
        public let importer: String
        /// Whether it said anything; when not, the other members are empty.
        public let reported: Bool
        /// How many items it says it kept.
        public let importedCount: Int?
        /// Whether the person declined the import in the importer (a passphrase not given).
        public let declined: Bool
        /// What the importer says, for the person.
        public let message: String?
    }

    /// The export ``requestExport(for:)`` began, which the export about to happen ends.
    private func takeExport() throws(ASAuthorizationError) -> String {
        guard let export = requested.withLock({ $0.take() }) else {
            throw ASAuthorizationError(
                .credentialExport,
                reason:
                    "no export was requested: call requestExport(for:) first, and exportCredentials once for each requestExport"
            )
        }
        return export
    }
}
