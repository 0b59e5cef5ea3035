import Foundation
import KeyportInterfaces
import KeyportSystem
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
    ///
    /// The document goes as a memory file sealed against change, its descriptor passed on
    /// keyportd's descriptor socket: it is copied once, into the file, and keyportd hands the
    /// same file to the importer (nothing bounds its size but the CXF decoder's limit).
    func exportCredentials(
        export: String,
        document: Data,
        progress: @Sendable (Exchange.ExportCredentials.Reply) -> Void
    ) async throws(ASAuthorizationError) -> Exchange.ExportCredentials.Reply {
        let file: MemoryFile
        do {
            file = try document.withUnsafeBytes { bytes throws(MemoryFileError) in
                try MemoryFile(name: "keyport-export", contents: bytes)
            }
        } catch {
            throw ASAuthorizationError(.failed, reason: "the export could not be put in memory to pass on: \(error)")
        }
        let call = VarlinkCall(
            method: Self.exportCredentials,
            parameters: RawJSON(
                encoding: Exchange.ExportCredentials.Parameters(export: export, data: nil, dataDescriptor: 0)
            ),
            more: true
        )
        // Open until keyportd has its copy (the send); closing it after is safe.
        defer { withExtendedLifetime(file) {} }
        let last: RawJSON
        do {
            last = try await DaemonClient.withDescriptorConnection(
                environment: environment,
                sending: call,
                descriptors: [file.descriptor]
            ) { connection in
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

    /// `ImportCredentials` with `token`, on keyportd's descriptor socket; returns the CXF
    /// document's bytes: the exporter's sealed memory file, mapped (no copy is made).
    func importCredentials(token: UUID) async throws(ASAuthorizationError) -> Data {
        // RFC 9562 writes UUIDs in lowercase; keyportd reads them either way.
        let parameters = Exchange.ImportCredentials.Parameters(token: token.uuidString.lowercased())
        let reply: Exchange.ImportCredentials.Reply
        let descriptors: ReceivedDescriptors
        do {
            // One small call that keyportd answers at once: the blocking connection suits it (it
            // holds this thread for that long, and is not cancelled with the task).
            let connection = try DaemonClient.connectForDescriptors(environment: environment)
            try connection.send(VarlinkCall(method: Self.importCredentials, parameters: RawJSON(encoding: parameters)))
            let received = try connection.nextReply()
            descriptors = received.descriptors
            guard let decoded = try? received.reply.parameters.decode(Exchange.ImportCredentials.Reply.self) else {
                throw Self.invalidReply(Self.importCredentials, "it is not the method's reply")
            }
            reply = decoded
        } catch let error as ASAuthorizationError {
            throw error
        } catch {
            throw Self.mapped(error, side: .importing, cancelled: Task.isCancelled)
        }
        if let data = reply.data { return Data(data.bytes) }
        guard let index = reply.dataDescriptor, let descriptor = descriptors.take(index) else {
            throw Self.invalidReply(Self.importCredentials, "it has neither \"data\" nor a descriptor it names")
        }
        do {
            // Checked as keyportd checked it: a file its writer could still change is refused.
            return try MemoryFile(checking: descriptor).mappedData()
        } catch {
            throw ASAuthorizationError(
                .credentialImport,
                reason: "the data keyportd passed cannot be read: \(error.description)"
            )
        }
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
}
