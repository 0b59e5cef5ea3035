import CredentialExchangeFormat
import KeyportEncoding
import KeyportInterfaces
import Varlink

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
            items.append(try CXF.Decoder().decode(.item, from: item.bytes))
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
        return try reply.items.map { try CXF.Decoder().decode(.item, from: $0.bytes) }
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
        // The message is written at once, each item into it.
        var message = Array(#"{"items":["#.utf8)
        for (index, item) in items.enumerated() {
            if index > 0 { message.append(UInt8(ascii: ",")) }
            item.appendJSON(to: &message)
        }
        message += Array("]}".utf8)
        guard message.count <= limit else {
            throw ImportTooLarge(items: items.count, bytes: message.count, limit: limit)
        }
        return try await call(locations, VaultKeeper.Import.name, RawJSON(bytes: message), more: progress != nil) {
            progress?(try $0.decode(VaultKeeper.Import.Reply.self))
        }
        .decode(VaultKeeper.Import.Reply.self)
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
