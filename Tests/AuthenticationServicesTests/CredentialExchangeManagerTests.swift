import Foundation
import KeyportInterfaces
import KeyportTestSupport
import Testing
import Varlink

@testable import AuthenticationServices

/// The import and export managers without keyportd: how keyportd's answers become Apple's error
/// codes, the export options, and what happens when keyportd is not running.
/// (The exchange itself, with a real keyportd, is tested beside keyportd.)
@Suite("Credential import and export managers")
struct CredentialExchangeManagerTests {
    // MARK: Mapping keyportd's answers

    /// Every error of org.keyport.Exchange, the side it arrives on, and the code the app sees.
    static let mappings: [(String, KeyportdExchange.Side, ASAuthorizationError.Code)] = [
        (Exchange.Declined.name, .exporting, .canceled),
        (Exchange.NoAgent.name, .exporting, .notInteractive),
        (Exchange.NotAllowed.name, .exporting, .credentialExport),
        (Exchange.NoImporter.name, .exporting, .credentialExport),
        (Exchange.UnknownExport.name, .exporting, .credentialExport),
        (Exchange.InvalidData.name, .exporting, .credentialExport),
        (Exchange.ImporterFailed.name, .exporting, .credentialExport),
        (Exchange.ShuttingDown.name, .exporting, .credentialExport),
        (Exchange.InvalidToken.name, .importing, .credentialImport),
        (Exchange.ImporterFailed.name, .importing, .credentialImport),
        (Exchange.ShuttingDown.name, .importing, .credentialImport),
        // A keyportd of another version: the exchange failed, on whichever side.
        ("org.varlink.service.MethodNotFound", .exporting, .credentialExport),
        ("org.varlink.service.InterfaceNotFound", .importing, .credentialImport),
    ]

    @Test("each of keyportd's errors becomes Apple's code, with keyportd's message as the reason", arguments: mappings)
    func mapping(name: String, side: KeyportdExchange.Side, code: ASAuthorizationError.Code) {
        let message = "what keyportd says about \(name)"
        let error = KeyportdExchange.mapped(VarlinkError(name: name, ["message": message]), side: side)
        #expect(error.code == code)
        #expect(error.failureReason?.contains(message) == true, "reason: \(error.failureReason ?? "nil")")
        #expect(error.failureReason?.contains(name) == true)
    }

    @Test("InvalidData's problems follow its message in the reason, the first ten of them")
    func invalidDataProblems() throws {
        let error = KeyportdExchange.mapped(
            VarlinkError(
                Exchange.InvalidData(
                    message: "the data is not CXF",
                    problems: (1...12).map { "/accounts/0/items/\($0): a problem" }
                )
            ),
            side: .exporting
        )
        #expect(error.code == .credentialExport)
        let reason = try #require(error.failureReason)
        #expect(
            reason.hasPrefix("the data is not CXF (org.keyport.Exchange.InvalidData): /accounts/0/items/1: a problem; ")
        )
        #expect(reason.contains("/accounts/0/items/10: a problem; and 2 more"))
        #expect(!reason.contains("/accounts/0/items/11"))
    }

    @Test("an error without a message still carries its name and parameters")
    func mappingWithoutMessage() {
        let error = KeyportdExchange.mapped(
            VarlinkError(name: Exchange.UnknownExport.name, parameters: RawJSON(bytes: #"{"export":"e"}"#.utf8)),
            side: .exporting
        )
        #expect(error.code == .credentialExport)
        #expect(error.failureReason == #"org.keyport.Exchange.UnknownExport {"export":"e"}"#)
    }

    @Test("keyportd out of reach is .failed; a cancelled task is .canceled, whatever the connection said")
    func mappingOutsideTheExchange() {
        let notRunning = KeyportdExchange.mapped(
            DaemonError(.notRunning, "keyportd is not running"),
            side: .importing,
            cancelled: false
        )
        #expect(notRunning.code == .failed)
        #expect(notRunning.failureReason == "keyportd is not running")
        let broken = KeyportdExchange.mapped(
            VarlinkConnectionError(.connectionBroken, "the service closed the connection before it replied"),
            side: .exporting,
            cancelled: false
        )
        #expect(broken.code == .failed)
        #expect(broken.failureReason?.contains("closed the connection") == true)
        let cancelled = KeyportdExchange.mapped(
            VarlinkConnectionError(.connectionBroken, "the connection failed: CancellationError()"),
            side: .exporting,
            cancelled: true
        )
        #expect(cancelled.code == .canceled)
        let declinedButCancelled = KeyportdExchange.mapped(
            VarlinkError(name: Exchange.NoImporter.name, ["message": "no importer"]),
            side: .exporting,
            cancelled: true
        )
        #expect(declinedButCancelled.code == .canceled)
    }

    // MARK: Export options

    @Test("ExportOptions from keyportd's formatVersion: any 1.x is v1", arguments: ["1.0", "1.3"])
    func formatVersion(text: String) throws {
        #expect(try ASCredentialExportManager.ExportOptions(formatVersion: text).formatVersion == .v1)
    }

    @Test("a version this module cannot write is a failed export that says which")
    func unwritableVersion() {
        #expect {
            try ASCredentialExportManager.ExportOptions(formatVersion: "2.0")
        } throws: { error in
            let error = error as? ASAuthorizationError
            return error?.code == .credentialExport && error?.failureReason?.contains("CXF 2.0") == true
        }
    }

    @Test(
        "a formatVersion that is not MAJOR.MINOR is an invalid response",
        arguments: ["", "1", "1.", "x.0", "1.0.0", "v1.0"]
    )
    func malformedVersion(text: String) {
        #expect {
            try ASCredentialExportManager.ExportOptions(formatVersion: text)
        } throws: { error in
            (error as? ASAuthorizationError)?.code == .invalidResponse
        }
    }

    // MARK: Without keyportd

    /// An environment whose keyportd socket would be in a private directory of the test's own,
    /// where nothing listens.
    static func withoutKeyportd(_ body: ([String: String]) async throws -> Void) async throws {
        let directory = try TemporaryDirectory("kp-asx")
        defer { directory.remove() }
        try await body(["KEYPORT_SOCKET": directory.url.appendingPathComponent("d.sock").path])
    }

    /// `error` is `.failed` and its reason says keyportd is not running and how to start it.
    static func saysNotRunning(_ error: any Error) -> Bool {
        guard let error = error as? ASAuthorizationError, error.code == .failed,
            let reason = error.failureReason
        else { return false }
        return reason.contains("keyportd is not running") && reason.contains("start it")
    }

    @Test("exportCredentials before requestExport is a failed export (1008) that says to request first")
    func exportWithoutRequest() async throws {
        try await Self.withoutKeyportd { environment in
            let manager = ASCredentialExportManager(environment: environment)
            await #expect {
                try await manager.exportCredentials(Sample.export)
            } throws: { error in
                let error = error as NSError
                return error.code == 1008 && error.domain == ASAuthorizationErrorDomain
                    && error.localizedFailureReason?.contains("call requestExport(for:) first") == true
            }
        }
    }

    @Test("requestExport without keyportd is .failed, saying keyportd is not running")
    func requestWithoutKeyportd() async throws {
        try await Self.withoutKeyportd { environment in
            await #expect {
                try await ASCredentialExportManager(environment: environment).requestExport()
            } throws: { Self.saysNotRunning($0) }
        }
    }

    @Test("importCredentials without keyportd is .failed, saying keyportd is not running")
    func importWithoutKeyportd() async throws {
        try await Self.withoutKeyportd { environment in
            await #expect {
                try await ASCredentialImportManager(environment: environment).importCredentials(token: UUID())
            } throws: { Self.saysNotRunning($0) }
        }
    }
}
