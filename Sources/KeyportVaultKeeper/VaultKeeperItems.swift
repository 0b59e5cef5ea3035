import CredentialExchangeFormat
import KeyportEncoding
import KeyportInterfaces
import Synchronization
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the vault's clients (`keyport vault`, its exporter and importer) ask of its keeper in
/// items rather than in messages.
extension VaultKeeperClient {
    /// Every item of the unlocked vault (`List`, one reply each); `progress` hears how many have
    /// come.
    ///
    /// - Throws: as ``VaultKeeperClient/call(_:_:_:more:each:)``; a `CXFDecodingError` when the
    ///   keeper sent an item that is not one.
    package static func items(
        _ locations: VaultLocations,
        progress: ((Int) -> Void)? = nil
    ) async throws -> [CXF.Item] {
        var items: [CXF.Item] = []
        func add(_ reply: RawJSON) throws {
            guard let item = try reply.decode(VaultKeeper.List.Reply.self).item else { return }
            items.append(try CXF.Decoder().decode(CXF.Part<CXF.Item>.object, from: item.bytes))
            progress?(items.count)
        }
        try add(try await call(locations, VaultKeeper.List.name, more: true, each: add))
        return items
    }

    /// The items of the unlocked vault filed under `service`'s site (`Lookup`: its registrable
    /// domain, or the host itself), for the caller to fit more closely; with `exact`, only those
    /// saved for its very scheme, host and port.
    ///
    /// - Throws: as ``VaultKeeperClient/call(_:_:_:more:each:)``; a `CXFDecodingError` when the
    ///   keeper sent an item that is not one.
    package static func items(
        _ locations: VaultLocations,
        forService service: String,
        exact: Bool = false
    ) async throws -> [CXF.Item] {
        let reply = try await call(locations, VaultKeeper.Lookup.self, .init(service: service, exact: exact))
        return try reply.items.map { try CXF.Decoder().decode(CXF.Part<CXF.Item>.object, from: $0.bytes) }
    }

    /// Takes `items` into the unlocked vault in one transaction (`Import`): what was imported,
    /// merged into items the vault had, and skipped. `progress`, when given, hears the counts so
    /// far as the keeper goes (every 1 000 items).
    ///
    /// - Throws: ``ImportTooLarge`` when the items are more than the keeper takes in one message
    ///   (`limit`), before anything is sent.
    package static func importItems(
        _ items: [CXF.Item],
        _ locations: VaultLocations,
        limit: Int = VaultKeeper.maximumMessageSize,
        progress: ((VaultKeeper.Import.Reply) -> Void)? = nil
    ) async throws -> VaultKeeper.Import.Reply {
        let message = try importMessage(items, limit: limit)
        return try await call(locations, VaultKeeper.Import.name, RawJSON(bytes: message), more: progress != nil) {
            progress?(try $0.decode(VaultKeeper.Import.Reply.self))
        }
        .decode(VaultKeeper.Import.Reply.self)
    }
}

extension VaultKeeperClient {
    /// `Import`'s parameters for `items`, written at once, each item into the message.
    ///
    /// - Throws: ``ImportTooLarge`` when they are more than `limit` bytes.
    static func importMessage(_ items: [CXF.Item], limit: Int) throws(ImportTooLarge) -> [UInt8] {
        var message = Array(#"{"items":["#.utf8)
        for (index, item) in items.enumerated() {
            if index > 0 { message.append(UInt8(ascii: ",")) }
            item.appendJSON(to: &message)
        }
        message += Array("]}".utf8)
        guard message.count <= limit else {
            throw ImportTooLarge(items: items.count, bytes: message.count, limit: limit)
        }
        return message
    }
}

extension VaultKeeperClient {
    /// Takes every item of the CXF document `document` (its JSON as it came: an exchange's
    /// importer passes on what keyportd handed it, unread) into the unlocked vault in one
    /// transaction (`ImportDocument`), which reads it once.
    ///
    /// - Throws: ``ImportTooLarge`` when it is more than the keeper takes in one message, before
    ///   anything is sent; as ``call(_:_:_:more:each:)``.
    package static func importDocument(
        _ document: [UInt8],
        _ locations: VaultLocations,
        limit: Int = VaultKeeper.maximumMessageSize
    ) async throws -> VaultKeeper.ImportDocument.Reply {
        guard document.count + 16 <= limit else {
            throw ImportTooLarge(items: nil, bytes: document.count + 16, limit: limit)
        }
        let message = try JSONText.wrapping("document", object: document)
        return try await call(locations, VaultKeeper.ImportDocument.name, message)
            .decode(VaultKeeper.ImportDocument.Reply.self)
    }
}

/// What `keyport vault import` hands the keeper: the items it read from another manager's
/// export, or a CXF document as the file holds it, which the keeper reads itself (the command
/// then never builds the document's items).
package enum ImportPayload: Sendable {
    /// Items (`Import`).
    case items([CXF.Item])
    /// A CXF document's JSON, as read (`ImportDocument`).
    case document([UInt8])
}

/// Ctrl-C's way into an import that is under way: ``cancel()``, from any thread (the signals'),
/// closes the sending side of the import's connection (`shutdown` SHUT_WR). The keeper's server
/// then cancels the call, whose transaction rolls back, and its reply still comes: how the import
/// ended, which the command says.
package final class ImportCancellation: Sendable {
    private struct State {
        /// The socket of the call under way; `nil` before it is sent and after its reply.
        var socket: Int32?
        var cancelled = false
        /// The keeper answered with the import's report: a later ``cancel()`` changes nothing.
        var answered = false
    }
    private let state = Mutex(State())
    private let whenIdle: @Sendable () -> Void

    /// `whenIdle` is what ``cancel()`` does when no call is under way yet: it may end the
    /// program (nothing was imported), and runs while no call can start.
    package init(whenIdle: @escaping @Sendable () -> Void = {}) {
        self.whenIdle = whenIdle
    }

    /// Whether ``cancel()`` was called.
    package var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Gives the import up: closes the sending side of the call under way, which then ends by
    /// itself (its reply says how); does nothing once the keeper has answered; before any call,
    /// runs `whenIdle`, and none will be sent.
    package func cancel() {
        let idle = state.withLock { state -> Bool in
            guard !state.answered else { return false }
            state.cancelled = true
            guard let socket = state.socket else { return true }
            shutdown(socket, Int32(SHUT_WR))
            return false
        }
        // No call starts once `cancelled` is set: ``sending(on:_:)`` checks it first.
        if idle { whenIdle() }
    }

    /// Runs `body` with `socket` as the call's, which ``cancel()`` may close for sending.
    ///
    /// - Throws: ``ImportCancelled`` when the import was given up before.
    fileprivate func sending<T>(on socket: Int32, _ body: () throws -> T) throws -> T {
        let given = state.withLock { state -> Bool in
            if !state.cancelled { state.socket = socket }
            return state.cancelled
        }
        if given { throw ImportCancelled() }
        // Cleared before the connection (and so its descriptor number) is let go.
        do {
            let result = try body()
            state.withLock { state in
                state.socket = nil
                state.answered = true
            }
            return result
        } catch {
            state.withLock { $0.socket = nil }
            throw error
        }
    }
}

/// The import was given up before the keeper committed it: nothing was imported.
package struct ImportCancelled: Error, CustomStringConvertible {
    package init() {}
    package var description: String { "the import was cancelled; nothing was imported" }
}

extension VaultKeeperClient {
    /// Takes `payload` into the unlocked vault in one transaction (`Import` or `ImportDocument`)
    /// on a blocking connection, on this thread: the message is written from the pieces it is
    /// made of (a document from the bytes read), never copied whole again, and `cancellation`
    /// can give the import up while it runs. `progress` hears the counts so far (every 1 000
    /// items).
    ///
    /// - Throws: ``ImportCancelled`` when it was given up before the keeper committed it (the
    ///   keeper rolled it back, or never had the whole call); ``ImportTooLarge`` before anything
    ///   is sent; `JSONSyntaxError` when a document is not one JSON object; as
    ///   ``call(_:_:_:more:each:)``.
    package static func importBlocking(
        _ payload: ImportPayload,
        _ locations: VaultLocations,
        limit: Int = VaultKeeper.maximumMessageSize,
        cancellation: ImportCancellation = ImportCancellation(),
        progress: ((VaultKeeper.Import.Reply) -> Void)? = nil
    ) throws -> VaultKeeper.Import.Reply {
        let method: String
        let pieces: [[UInt8]]
        switch payload {
        case .items(let items):
            (method, pieces) = (VaultKeeper.Import.name, [try importMessage(items, limit: limit)])
        case .document(let document):
            guard document.count + 16 <= limit else {
                throw ImportTooLarge(items: nil, bytes: document.count + 16, limit: limit)
            }
            (method, pieces) = (
                VaultKeeper.ImportDocument.name, try JSONText.wrappingInPieces("document", object: document)
            )
        }
        let connection = try blockingConnection(locations)
        return try cancellation.sending(on: connection.socket) {
            do {
                try connection.send(
                    VarlinkCall(method: method, parameters: .emptyObject, more: true),
                    parameterPieces: pieces
                )
                while true {
                    let reply = try connection.nextReply().reply
                    let counts = try reply.parameters.decode(VaultKeeper.Import.Reply.self)
                    guard reply.continues else { return counts }
                    progress?(counts)
                }
            } catch let error as VarlinkError {
                if error.name == VaultKeeper.Failed.name,
                    error.parameters(as: VaultKeeper.Failed.self)?.code == "cancelled"
                {
                    throw ImportCancelled()
                }
                if error.name == VaultKeeper.Locked.name { throw locked(locations) }
                throw error
            } catch let error as VarlinkConnectionError where cancellation.isCancelled {
                // Given up while the call was still being written, or before the keeper took it
                // from the socket: the keeper never ran it. (A committed import is always answered
                // before the keeper lets the connection go, and this side still reads.)
                _ = error
                throw ImportCancelled()
            }
        }
    }
}

/// An import larger than the keeper takes in one message (and so in one transaction).
package struct ImportTooLarge: Error, CustomStringConvertible {
    /// How many items, when they were counted (not for a document passed on unread).
    package var items: Int?
    package var bytes: Int
    package var limit: Int
    package var description: String {
        "\(items.map { "the \($0) items are" } ?? "the document is") \((bytes + (1 << 20) - 1) >> 20) MB as CXF, more than the vault's keeper takes in one import (\(limit >> 20) MB): import the file in parts; nothing was imported"
    }
}

/// The items an export takes: all, or those named by id.
package enum VaultSelection {
    /// Ids that name no item of the vault.
    package struct UnknownItems: Error, CustomStringConvertible {
        package var ids: [String]
        package var description: String {
            "the vault has no item \(ids.joined(separator: ", ")) (`keyport vault list` shows the ids)"
        }
    }

    /// `items` when `only` is empty, else the items whose ids (base64url) it lists, in the vault's
    /// order.
    ///
    /// - Throws: ``UnknownItems`` when an id names none: an export never quietly leaves out what
    ///   was asked for.
    package static func items(_ items: [CXF.Item], only: [String]) throws(UnknownItems) -> [CXF.Item] {
        guard !only.isEmpty else { return items }
        let wanted = Set(only)
        let chosen = items.filter { wanted.contains(Base64URL.encode($0.id)) }
        let found = Set(chosen.map { Base64URL.encode($0.id) })
        let missing = only.filter { !found.contains($0) }
        guard missing.isEmpty else { throw UnknownItems(ids: missing) }
        return chosen
    }
}
