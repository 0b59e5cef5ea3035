import Foundation
import KeyportInterfaces
import Varlink

/// The calls the import and export managers make to keyportd (`org.keyport.Exchange`,
/// Interfaces/org.keyport.Exchange.varlink in KeyportInterfaces), and how their failures become
/// ``ASAuthorizationError``s. One connection per call: the interface names an export by the id
/// `RequestExport` returns, not by the connection.
struct KeyportdExchange: Sendable {
    /// Where keyportd is found (`KEYPORT_SOCKET`, `XDG_RUNTIME_DIR`, …).
    var environment: [String: String]

    /// Which side of the exchange a call is on: it decides the code of the exchange's own failures.
    enum Side: Sendable {
        case exporting, importing

        var code: ASAuthorizationError.Code {
            switch self {
            case .exporting: .credentialExport
            case .importing: .credentialImport
            }
        }
    }

    static let requestExport = Exchange.RequestExport.name
    static let exportCredentials = Exchange.ExportCredentials.name
    static let importCredentials = Exchange.ImportCredentials.name
    static let reportImport = Exchange.ReportImport.name

    /// `RequestExport` with the versions of the exporter's manifest (`formatVersions` left out: the
    /// manifest is where an app declares them, as Info.plist is on Apple platforms).
    func requestExport() async throws(ASAuthorizationError) -> Exchange.RequestExport.Reply {
        let reply = try await call(
            Self.requestExport,
            RawJSON(encoding: Exchange.RequestExport.Parameters()),
            .exporting
        )
        do {
            return try reply.decode(Exchange.RequestExport.Reply.self)
        } catch {
            throw Self.invalidReply(Self.requestExport, "it has no string \"export\" and \"formatVersion\"")
        }
    }

    /// `ExportCredentials` with `document`, the CXF JSON of the export, called with `more`:
    /// `progress` hears each step before the last reply, which is returned.
    func exportCredentials(
        export: String,
        document: Data,
        progress: @Sendable (Exchange.ExportCredentials.Reply) -> Void
    ) async throws(ASAuthorizationError) -> Exchange.ExportCredentials.Reply {
        // keyportd closes a connection whose message is over the limit without a word; saying so
        // here tells the app why (before the document is looked at, or copied into a message).
        let size = Self.messageSize(Self.exportCredentials, export: export, document: document.count)
        guard size <= DaemonClient.maximumMessageSize else {
            throw ASAuthorizationError(
                .credentialExport,
                reason:
                    "the export is \(size) bytes as a message to keyportd, which takes at most \(DaemonClient.maximumMessageSize); export fewer credentials at a time"
            )
        }
        let parameters: RawJSON
        do {
            parameters = try Exchange.exportCredentialsParameters(export: export, document: Array(document))
        } catch {
            throw ASAuthorizationError(
                .credentialExport,
                reason: "the data is not a CXF document (one JSON object): \(error)"
            )
        }
        let last: RawJSON
        do {
            last = try await DaemonClient.withConnection(environment: environment) { connection in
                try await connection.send(
                    VarlinkCall(method: Self.exportCredentials, parameters: parameters, more: true)
                )
                while true {
                    let (reply, continues) = try await connection.nextReply()
                    guard continues else { return reply }
                    if let step = try? reply.decode(Exchange.ExportCredentials.Reply.self) { progress(step) }
                }
            }
        } catch {
            throw Self.mapped(error, side: .exporting, cancelled: Task.isCancelled)
        }
        do {
            return try last.decode(Exchange.ExportCredentials.Reply.self)
        } catch {
            throw Self.invalidReply(Self.exportCredentials, "it has no \"state\" and \"importer\"")
        }
    }

    /// `ReportImport`: what came of the import of `token`.
    func reportImport(token: UUID, imported: Int, declined: Bool, message: String?) async throws(ASAuthorizationError) {
        let report = Exchange.ReportImport.Parameters(
            token: token.uuidString.lowercased(),
            imported: imported,
            declined: declined,
            message: message
        )
        _ = try await call(Self.reportImport, RawJSON(encoding: report), .importing)
    }

    /// `ImportCredentials` with `token`; returns the CXF document's bytes.
    func importCredentials(token: UUID) async throws(ASAuthorizationError) -> [UInt8] {
        // RFC 9562 writes UUIDs in lowercase; keyportd reads them either way.
        let reply = try await call(
            Self.importCredentials,
            RawJSON(encoding: Exchange.ImportCredentials.Parameters(token: token.uuidString.lowercased())),
            .importing
        )
        guard let data = try? reply.member("data") else {
            throw Self.invalidReply(Self.importCredentials, "it has no \"data\"")
        }
        return data.bytes
    }

    /// Connects to keyportd, calls `method`, and returns its reply, every failure mapped.
    private func call(
        _ method: String,
        _ parameters: @autoclosure () throws -> RawJSON,
        _ side: Side
    ) async throws(ASAuthorizationError) -> RawJSON {
        do {
            let parameters = try parameters()
            return try await DaemonClient.withConnection(environment: environment) { connection in
                try await connection.call(method, parameters)
            }
        } catch {
            throw Self.mapped(error, side: side, cancelled: Task.isCancelled)
        }
    }

    /// What a failure of a call on `side` is to the app. `cancelled`: the awaiting task was
    /// cancelled (the connection then ends with whatever error that made).
    static func mapped(_ error: any Error, side: Side, cancelled: Bool) -> ASAuthorizationError {
        if cancelled {
            return ASAuthorizationError(.canceled, reason: "the task waiting for keyportd was cancelled")
        }
        switch error {
        case let error as VarlinkError:
            return mapped(error, side: side)
        case let error as DaemonError:
            return ASAuthorizationError(.failed, reason: error.description)
        case let error as VarlinkConnectionError:
            return ASAuthorizationError(
                .failed,
                reason: "the connection to keyportd broke (\(error.description)); check that keyportd is still running"
            )
        default:
            return ASAuthorizationError(.failed, reason: "keyportd could not be asked: \(error)")
        }
    }

    /// What keyportd's error reply is to the app; keyportd's message is the reason, with the
    /// problems `InvalidData` lists.
    static func mapped(_ error: VarlinkError, side: Side) -> ASAuthorizationError {
        var reason = error.message.map { "\($0) (\(error.name))" } ?? error.description
        let problems = Self.problems(of: error)
        if !problems.isEmpty {
            let shown = problems.prefix(Self.problemsShown).joined(separator: "; ")
            let more = problems.count > Self.problemsShown ? "; and \(problems.count - Self.problemsShown) more" : ""
            reason += ": \(shown)\(more)"
        }
        switch error.name {
        case Exchange.Declined.name:
            return ASAuthorizationError(.canceled, reason: reason)
        case Exchange.NoAgent.name:
            return ASAuthorizationError(.notInteractive, reason: reason)
        default:
            // NotAllowed, NoImporter, UnknownExport, InvalidData, ImporterFailed, InvalidToken,
            // ShuttingDown, and what a keyportd of another version may answer
            // (org.varlink.service.MethodNotFound, …): the exchange failed.
            return ASAuthorizationError(side.code, reason: reason)
        }
    }

    /// How many of `InvalidData`'s problems a reason lists: enough to act on, short enough to read.
    static let problemsShown = 10

    /// The strings of the error's `problems` parameter; none when it has no such array.
    private static func problems(of error: VarlinkError) -> [String] {
        error.parameters(as: Exchange.InvalidData.self)?.problems ?? []
    }

    private static func invalidReply(_ method: String, _ problem: String) -> ASAuthorizationError {
        ASAuthorizationError(
            .invalidResponse,
            reason: "keyportd's reply to \(method) is not what org.keyport.Exchange defines: \(problem)"
        )
    }

    /// The length of the call's message without its NUL: `{"method":…,"parameters":…}`.
    /// The length of `method`'s message carrying `export` and a document of `document` bytes: the
    /// envelope's around one-byte placeholders, so the document is not copied to measure it.
    private static func messageSize(_ method: String, export: String, document: Int) -> Int {
        let placeholder = try? Exchange.exportCredentialsParameters(export: export, document: Array("{}".utf8))
        let envelope = VarlinkCall(method: method, parameters: placeholder ?? .emptyObject).message.count
        return envelope - 2 + document
    }
}
