import CredentialExchangeFormat
import Dispatch
import Foundation
import GRDB
import KeyportDomains

/// What an import did with each item it was given.
package struct ImportReport: Hashable, Sendable {
    /// Added as new items.
    package var imported = 0
    /// The vault had this item — the same id, or the same logins on the same site — and it
    /// lacked some of this one's credentials, URLs or tags: it has them now.
    package var merged = 0
    /// The vault had this item already, with everything it holds (or this import had it
    /// earlier): nothing changed.
    package var unchanged = 0

    package init() {}

    /// How many items were given.
    package var total: Int { imported + merged + unchanged }
}

extension Vault {
    /// Takes `items` into the vault in one transaction: all of them or, when any fails, none.
    ///
    /// An item is the vault's already when it has the same id, or when every login it holds
    /// (user name and password) is a login the vault has on the same site — the same scheme,
    /// host and port, as AutoFill matches — so the same entries exported twice by a manager, as
    /// its XML and as its CSV, come in once. Such an item is merged into the vault's: what it
    /// lacked (a TOTP secret, a URL, a tag) is added, nothing is taken away, and when it lacked
    /// nothing the item is unchanged. Everything else is new. The vault's logins are read once
    /// per site the import touches, through the site's tag, so the work grows with the items
    /// given and the items of their sites, never with their product. `progress` hears the counts
    /// so far every 1 000 items (and once at the end), before they are committed. `cancelled` is
    /// asked before each 1 000 items and once more just before the commit: when it says so, the
    /// transaction is rolled back and nothing was imported (`cancelled`).
    package func importItems(
        _ items: some Sequence<CXF.Item>,
        progress: ((ImportReport) -> Void)? = nil,
        cancelled: () -> Bool = { false }
    ) throws(VaultError) -> ImportReport {
        /// Throws when the caller has given up, which rolls the whole transaction back.
        func checkCancelled(_ report: ImportReport) throws(VaultError) {
            guard cancelled() else { return }
            throw VaultError(
                .cancelled,
                "the import was cancelled after \(report.total) of its items; nothing was imported"
            )
        }
        return try write { db, state in
            var report = ImportReport()
            var logins = LoginIndex(before: try Int64.fetchOne(db, sql: "SELECT max(rowid) FROM items") ?? 0)
            var batch: [CXF.Item] = []
            /// Merges `item` into the vault's item `id` (written before, or earlier in this import).
            func merge(_ item: CXF.Item, into existing: Row) throws {
                let old = try decrypt(existing)
                let merged = Self.merge(old, item)
                if merged.json == old.json {
                    report.unchanged += 1
                } else {
                    let revision: Int64 = existing["revision"]
                    try store(seal(merged, revision: revision + 1), replacing: revision, in: db, state: &state)
                    report.merged += 1
                }
            }
            func flush() throws {
                try checkCancelled(report)
                // Sealing, tagging and finding sites take most of an import and need no database:
                // done for a batch on every core, then written in order. One query tells which ids
                // the vault has; an id seen earlier in this batch is looked up again, since its row
                // was written meanwhile.
                let known = try rows(ids: batch.map(\.id), in: db)
                var seen: Set<Data> = []
                for (item, prepared) in zip(batch, prepare(batch)) {
                    let again = !seen.insert(item.id).inserted
                    if let existing = try known[item.id] != nil || again ? row(id: item.id, in: db) : nil {
                        try merge(item, into: existing)
                        logins.add(item, id: item.id, origins: prepared.origins)
                    } else if let same = try knownLogins(item, origins: prepared.origins, index: &logins, in: db),
                        let existing = try row(id: same, in: db)
                    {
                        try merge(item, into: existing)
                    } else {
                        try store(prepared.sealed, replacing: nil, in: db, state: &state)
                        report.imported += 1
                        logins.add(item, id: item.id, origins: prepared.origins)
                    }
                }
                batch.removeAll(keepingCapacity: true)
                progress?(report)
            }
            for item in items {
                try Self.checkID(item)
                batch.append(item)
                if batch.count == 1000 { try flush() }
            }
            try flush()
            // The last chance before the commit: a caller gone by now is not left with an import
            // it no longer waits for.
            try checkCancelled(report)
            return report
        }
    }

    /// Each item's origins and its sealing as a new item (revision 1), made on every core.
    private func prepare(_ items: [CXF.Item]) -> [(origins: [String], sealed: SealedItem)] {
        let results = UnsafeMutableBufferPointer<(origins: [String], sealed: SealedItem)?>.allocate(
            capacity: items.count
        )
        results.initialize(repeating: nil)
        defer {
            results.deinitialize()
            results.deallocate()
        }
        nonisolated(unsafe) let slots = results
        DispatchQueue.concurrentPerform(iterations: items.count) { index in
            let filing = filing(of: items[index])
            slots[index] = (filing.origins, seal(items[index], revision: 1, filing: filing))
        }
        return results.map { $0! }
    }

    /// The id of the item that holds every login of `item` (user name and password) on one of
    /// its origins, in the vault or earlier in this import; `nil` when there is none, or `item`
    /// has no login. The vault's logins of an origin are read the first time it is needed.
    private func knownLogins(
        _ item: CXF.Item,
        origins: [String],
        index: inout LoginIndex,
        in db: Database
    ) throws -> Data? {
        let logins = Self.logins(of: item)
        guard !logins.isEmpty else { return nil }
        for origin in origins {
            if index.before > 0, index.loaded.insert(origin).inserted {
                for row in try rows(taggedWith: origin, in: db)
                where (try? row.decode(Int64.self, forColumn: "rowid")) ?? .max <= index.before {
                    // Only an item whose own (sealed) URLs have the origin: tag rows are not sealed.
                    let other = try decrypt(row)
                    if Self.origins(of: other).map(Self.originTag).contains(origin) {
                        index.add(other, id: other.id, origins: [origin])
                    }
                }
            }
            if let id = index.item(at: origin, holding: logins) { return id }
        }
        return nil
    }

    /// The (user name, password) pairs of an item's basic-auth credentials that have both.
    static func logins(of item: CXF.Item) -> [Login] {
        item.credentials.compactMap { credential in
            guard case .basicAuth(let auth) = credential, let user = auth.username?.value,
                let password = auth.password?.value
            else { return nil }
            return Login(user: user, password: password)
        }
    }

    /// `old` with what `new` has that it lacks: credentials, URLs, tags.
    static func merge(_ old: CXF.Item, _ new: CXF.Item) -> CXF.Item {
        var merged = old
        for credential in new.credentials where !merged.credentials.contains(credential) {
            merged.credentials.append(credential)
        }
        if let scope = new.scope {
            var mergedScope = merged.scope ?? CXF.CredentialScope()
            for url in scope.urls where !mergedScope.urls.contains(url) { mergedScope.urls.append(url) }
            for app in scope.androidApps where !mergedScope.androidApps.contains(app) {
                mergedScope.androidApps.append(app)
            }
            merged.scope = mergedScope
        }
        if let tags = new.tags {
            merged.tags = (merged.tags ?? []) + tags.filter { !(merged.tags ?? []).contains($0) }
        }
        merged.modifiedAt = [old.modifiedAt, new.modifiedAt].compactMap { $0 }.max()
        return merged
    }
}

/// A user name and password.
struct Login: Hashable {
    var user: String
    var password: String
}

/// The logins seen so far in an import (and those read from the vault), by origin tag, with
/// the item that holds each.
struct LoginIndex {
    private var byOrigin: [String: [Login: Data]] = [:]
    /// The last row of the vault before the import.
    let before: Int64
    /// The origins whose logins from before the import have been read.
    var loaded: Set<String> = []

    init(before: Int64) { self.before = before }

    mutating func add(_ item: CXF.Item, id: Data, origins: [String]) {
        let logins = Vault.logins(of: item)
        guard !logins.isEmpty else { return }
        for origin in origins {
            for login in logins where byOrigin[origin]?[login] == nil { byOrigin[origin, default: [:]][login] = id }
        }
    }

    /// The item holding the first of `logins` at `origin`, when it holds them all there.
    func item(at origin: String, holding logins: [Login]) -> Data? {
        guard let known = byOrigin[origin], let first = logins.first, let id = known[first],
            logins.allSatisfy({ known[$0] == id })
        else { return nil }
        return id
    }
}
