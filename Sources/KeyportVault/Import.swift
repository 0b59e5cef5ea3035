import CredentialExchangeFormat
import Dispatch
import Foundation
import GRDB
import KeyportDomains

/// What an import did with each item it was given.
package struct ImportReport: Hashable, Sendable {
    /// Added as new items.
    package var imported = 0
    /// The vault had an item with the same id, which lacked some of this one's credentials, URLs
    /// or tags: the two are one item now (the vault's, with what it lacked).
    package var merged = 0
    /// Nothing new: the same item (by id), or a login for the same site and user with the same
    /// password, is in the vault or earlier in the import.
    package var skipped = 0

    package init() {}

    /// How many items were given.
    package var total: Int { imported + merged + skipped }
}

extension Vault {
    /// Takes `items` into the vault in one transaction: all of them or, when any fails, none.
    ///
    /// Duplicates go by id first (nothing new: skipped; more: merged), then by site and
    /// user: an item that is only a login whose site, user name and password the vault (or this
    /// import) has already is skipped; with another password, or anything besides the login (a
    /// TOTP secret, a note), it is a new item beside the old one, so nothing is lost. `progress`
    /// hears the counts so far every 1 000 items (and once at the end), before they are
    /// committed.
    package func importItems(
        _ items: some Sequence<CXF.Item>,
        progress: ((ImportReport) -> Void)? = nil
    ) throws(VaultError) -> ImportReport {
        try write { db, state in
            var report = ImportReport()
            // The vault's own logins are read once per site, and only those from before the
            // import: what the import adds is in the index already. Each item then costs its own
            // sealing and tags, however many share its site.
            var logins = LoginIndex(before: try Int64.fetchOne(db, sql: "SELECT max(rowid) FROM items") ?? 0)
            var batch: [CXF.Item] = []
            func flush() throws {
                // Sealing, tagging and finding sites take most of an import and need no database:
                // done for a batch on every core, then written in order.
                // One query tells which ids the vault has; an id seen earlier in this batch is
                // looked up again, since its row was written meanwhile.
                let known = try rows(ids: batch.map(\.id), in: db)
                var seen: Set<Data> = []
                for (item, prepared) in zip(batch, prepare(batch)) {
                    let again = !seen.insert(item.id).inserted
                    if let existing = try known[item.id] != nil || again ? row(id: item.id, in: db) : nil {
                        let old = try decrypt(existing)
                        let merged = Self.merge(old, item)
                        if merged.json == old.json {
                            report.skipped += 1  // nothing the vault's item lacks
                        } else {
                            let revision: Int64 = existing["revision"]
                            try store(
                                seal(merged, revision: revision + 1),
                                replacing: revision,
                                in: db,
                                state: &state
                            )
                            report.merged += 1
                        }
                    } else if try isKnownLogin(item, sites: prepared.sites, index: &logins, in: db) {
                        report.skipped += 1
                    } else {
                        try store(prepared.sealed, replacing: nil, in: db, state: &state)
                        report.imported += 1
                    }
                    logins.add(item, sites: prepared.sites)
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
            return report
        }
    }

    /// Each item's sites and its sealing as a new item (revision 1), made on every core.
    private func prepare(_ items: [CXF.Item]) -> [(sites: [String], sealed: SealedItem)] {
        let results = UnsafeMutableBufferPointer<(sites: [String], sealed: SealedItem)?>.allocate(capacity: items.count)
        results.initialize(repeating: nil)
        defer {
            results.deinitialize()
            results.deallocate()
        }
        nonisolated(unsafe) let slots = results
        DispatchQueue.concurrentPerform(iterations: items.count) { index in
            let sites = sites(of: items[index])
            slots[index] = (sites, seal(items[index], revision: 1, sites: sites))
        }
        return results.map { $0! }
    }

    /// Whether `item` holds nothing but logins (basic-auth credentials with a user name and
    /// password) that the vault, or this import, has already on one of its sites. An item with
    /// anything more (a TOTP secret, a note) is never skipped for its login: it comes in whole.
    private func isKnownLogin(
        _ item: CXF.Item,
        sites: [String],
        index: inout LoginIndex,
        in db: Database
    ) throws -> Bool {
        let logins = Self.logins(of: item)
        let onlyLogins = item.credentials.allSatisfy {
            if case .basicAuth = $0 { return true }
            return false
        }
        guard !logins.isEmpty, onlyLogins, logins.count == item.credentials.count else { return false }
        for site in sites {
            if index.before > 0, index.loaded.insert(site).inserted {
                for row in try rows(taggedWith: site, in: db)
                where (try? row.decode(Int64.self, forColumn: "rowid")) ?? .max <= index.before {
                    // Only an item whose own (sealed) URLs are on the site: tag rows are not sealed.
                    let other = try decrypt(row)
                    if self.sites(of: other).contains(site) { index.add(other, sites: [site]) }
                }
            }
            if logins.allSatisfy({ index.contains(site: site, $0) }) { return true }
        }
        return false
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

/// The logins seen so far in an import (and those read from the vault), by site.
struct LoginIndex {
    private var bySite: [String: Set<Login>] = [:]
    /// The last row of the vault before the import.
    let before: Int64
    /// The sites whose logins from before the import have been read.
    var loaded: Set<String> = []

    init(before: Int64) { self.before = before }

    mutating func add(_ item: CXF.Item, sites: [String]) {
        let logins = Vault.logins(of: item)
        guard !logins.isEmpty else { return }
        for site in sites { bySite[site, default: []].formUnion(logins) }
    }

    func contains(site: String, _ login: Login) -> Bool { bySite[site]?.contains(login) ?? false }
}
