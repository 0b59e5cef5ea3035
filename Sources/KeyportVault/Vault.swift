import CredentialExchangeFormat
import Crypto
import Foundation
import GRDB
import KeyportCrypto
import KeyportDomains
import KeyportEncoding
import KeyportSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An unlocked Keyport Vault: CXF items, each sealed on its own, in one SQLite file.
///
/// The file (docs/architecture.md, "Keyport Vault"): a `vault` row with the key-derivation
/// parameters, the vault key wrapped by the passphrase's key, and the sealed state; an `items`
/// table of (id, revision, sealed item); a `sites` table of (keyed tag of a site or of an origin,
/// item id) for look-ups. Every change is one transaction. A vault that fails a check says which record and
/// changes nothing; the unlocked key lives in this object only, never on disk.
package final class Vault: Sendable {
    /// The file.
    package let path: String
    private let database: DatabaseQueue
    let keys: VaultKeys
    private let list: PublicSuffixList
    /// `PRAGMA data_version` when the file was last checked: a change made by another connection
    /// (anyone who opened the file behind this one) makes the next read or write check it again.
    private let checkedVersion = Mutex<Int64?>(nil)

    /// SQLite's `application_id` for a Keyport vault: "KPVT".
    static let applicationID: Int32 = 0x4B50_5654
    /// The file format this Keyport writes and reads. Format 1 filed items by site only; format 2
    /// kept the XOR of the items' index shares, in which a row written twice cancels out. A vault
    /// of an older format is checked as that format says when it is first unlocked, then filed by
    /// origin (format 1) and given format 3's sealed state, in one transaction.
    static let format = 3

    /// The tables, as every format has had them. ``checkSchema(_:path:)`` compares the file's
    /// with these, so that a table rebuilt without its primary key (where an old row could be
    /// put beside the current one), a trigger or a view is refused rather than read.
    static let schema = """
        CREATE TABLE vault (
          id INTEGER PRIMARY KEY CHECK (id = 1),
          kdf TEXT NOT NULL,
          wrapped BLOB NOT NULL,
          state BLOB NOT NULL
        );
        CREATE TABLE items (id BLOB PRIMARY KEY NOT NULL, revision INTEGER NOT NULL, sealed BLOB NOT NULL);
        CREATE TABLE sites (
          tag BLOB NOT NULL,
          item BLOB NOT NULL REFERENCES items(id) ON DELETE CASCADE,
          PRIMARY KEY (tag, item)
        ) WITHOUT ROWID;
        CREATE INDEX sites_by_item ON sites(item);
        """

    private init(path: String, database: DatabaseQueue, keys: VaultKeys, list: PublicSuffixList) {
        self.path = path
        self.database = database
        self.keys = keys
        self.list = list
    }

    // MARK: - Creating and unlocking

    /// Creates a vault at `path` (which must not exist), mode 0600, with a new random key wrapped
    /// by `passphrase` through `kdf`.
    package static func create(
        at path: String,
        passphrase: SecretBytes,
        kdf: ScryptParameters,
        list: PublicSuffixList = .current
    ) throws(VaultError) -> Vault {
        try VaultError.unsafe { () throws(KDFError) in try kdf.check() }
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            if code == EEXIST { throw VaultError(.exists, "\(path) exists already; Keyport will not overwrite it") }
            throw VaultError(.io, "cannot create \(path): \(String(cString: strerror(code)))")
        }
        close(descriptor)
        do {
            let keys = VaultKeys.random()
            let wrapped = try wrap(keys.vault, passphrase: passphrase, kdf: kdf)
            let database = try openDatabase(path)
            let vault = Vault(path: path, database: database, keys: keys, list: list)
            try mapping(path) {
                try database.write { db in
                    try db.execute(
                        sql: schema + "PRAGMA application_id = \(applicationID); PRAGMA user_version = \(format);"
                    )
                    try db.execute(
                        sql: "INSERT INTO vault (id, kdf, wrapped, state) VALUES (1, ?, ?, ?)",
                        arguments: [kdf.text, Data(wrapped), Data(seal(.empty, keys))]
                    )
                    try vault.markChecked(db)
                }
            }
            return vault
        } catch {
            for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
            throw error
        }
    }

    /// Opens the vault at `path` with `passphrase`, and checks that its tables are the format's
    /// and that no item row was removed, added back, duplicated or replayed since its last change.
    package static func unlock(
        at path: String,
        passphrase: SecretBytes,
        list: PublicSuffixList = .current
    ) throws(VaultError) -> Vault {
        guard access(path, F_OK) == 0 else {
            throw VaultError(.io, "there is no vault at \(path) (create one with `keyport vault init`)")
        }
        let database = try openDatabase(path)
        let header = try header(of: database, at: path)
        guard var vaultKey = try unwrappedKey(header, passphrase: passphrase, path: path) else {
            throw VaultError(
                .wrongPassphrase,
                "the passphrase does not open \(path) (or its key record was changed); nothing was read"
            )
        }
        // Wiped where it is: a copy would share the buffer, and wiping the copy would leave it.
        let vault = Vault(
            path: path,
            database: database,
            keys: VaultKeys(vault: SymmetricKey(data: vaultKey)),
            list: list
        )
        Wipe.bytes(&vaultKey)
        if header.format == Self.format {
            try vault.reading { _ in }
        } else {
            try vault.upgrade(from: header.format)
        }
        return vault
    }

    /// What tells this vault apart from every other without giving its key away: an HMAC of a
    /// fixed text under the vault key (which is random: nothing can be learnt of it from this).
    /// The same for every file that holds this vault, whatever its passphrase; compare in
    /// constant time.
    package var fingerprint: [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array("Keyport vault fingerprint".utf8), using: keys.vault))
    }

    /// Whether `passphrase` unwraps this vault's own key, read through this vault's own
    /// connection — never the path again, which may name another file by now.
    package func opens(with passphrase: SecretBytes) throws(VaultError) -> Bool {
        let header = try Self.header(of: database, at: path)
        guard var opened = try Self.unwrappedKey(header, passphrase: passphrase, path: path) else { return false }
        defer { Wipe.bytes(&opened) }
        return SymmetricKey(data: opened) == keys.vault
    }

    /// The vault key `header` holds wrapped, unwrapped with `passphrase` through the header's own
    /// key-derivation parameters; `nil` when the passphrase does not open it (or the key record
    /// was changed). The caller wipes it.
    private static func unwrappedKey(
        _ header: (kdf: String, wrapped: [UInt8], format: Int),
        passphrase: SecretBytes,
        path: String
    ) throws(VaultError) -> [UInt8]? {
        let kdf: ScryptParameters
        do {
            kdf = try ScryptParameters(text: header.kdf)
        } catch {
            throw VaultError(.corrupt, "\(path): \(error.message)")
        }
        let key = try VaultError.unsafe { () throws(KDFError) in try kdf.deriveKey(from: passphrase) }
        return VaultKeys.open(header.wrapped, with: key, record: VaultKeys.keyRecord(kdf: header.kdf))
    }

    /// Wraps the vault key again with `passphrase` through `kdf` (a new salt): the items are not
    /// touched, since their key does not change.
    package func changePassphrase(to passphrase: SecretBytes, kdf: ScryptParameters) throws(VaultError) {
        let wrapped = try Self.wrap(keys.vault, passphrase: passphrase, kdf: kdf)
        try write { db, _ in
            try db.execute(
                sql: "UPDATE vault SET kdf = ?, wrapped = ? WHERE id = 1",
                arguments: [kdf.text, Data(wrapped)]
            )
        }
    }

    private static func wrap(
        _ vaultKey: SymmetricKey,
        passphrase: SecretBytes,
        kdf: ScryptParameters
    ) throws(VaultError) -> [UInt8] {
        let key = try VaultError.unsafe { () throws(KDFError) in try kdf.deriveKey(from: passphrase) }
        return vaultKey.withUnsafeBytes { bytes in
            var plain = Array(bytes)
            defer { Wipe.bytes(&plain) }
            return VaultKeys.seal(plain, with: key, record: VaultKeys.keyRecord(kdf: kdf.text))
        }
    }

    private static func openDatabase(_ path: String) throws(VaultError) -> DatabaseQueue {
        var configuration = Configuration()
        configuration.journalMode = .wal
        // A second writer waits this long for the first, then is told the vault is busy.
        configuration.busyMode = .timeout(3)
        configuration.label = "keyport-vault"
        // An import writes each item's tags at random places in two B-trees; with SQLite's 2 MB
        // page cache most of those pages were read again for every few items (the import of
        // 100 000 items spent 1.7 s there). 32 MB keeps them while a vault's keeper runs.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = -32768") }
        return try mapping(path) { try DatabaseQueue(path: path, configuration: configuration) }
    }

    private static func header(
        of database: DatabaseQueue,
        at path: String
    ) throws(VaultError) -> (kdf: String, wrapped: [UInt8], format: Int) {
        try mapping(path) {
            try database.read { db in
                let application = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                guard application == applicationID else {
                    throw VaultError(.notAVault, "\(path) is an SQLite database, but not a Keyport vault")
                }
                let format = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                guard (1...Self.format).contains(format) else {
                    throw VaultError(
                        .unsupportedFormat,
                        "\(path) is a Keyport vault of format \(format); this Keyport reads formats 1 to \(Self.format)"
                    )
                }
                guard let row = try Row.fetchOne(db, sql: "SELECT kdf, wrapped FROM vault WHERE id = 1"),
                    let kdf = row["kdf"] as String?, let wrapped = row["wrapped"] as Data?
                else {
                    throw VaultError(.corrupt, "\(path) has no key record: the vault is damaged")
                }
                return (kdf, Array(wrapped), format)
            }
        }
    }

    /// Brings a vault of format 1 or 2 to format 3 in one transaction: checks its tables and its
    /// XOR index digest as that format wrote it (with the schema's primary key, no row can be
    /// there twice to cancel out), files a format-1 vault's items under their origins too, seals
    /// format 3's state (the sum of the shares and their count) and marks the file format 3.
    private func upgrade(from format: Int) throws(VaultError) {
        let keys = keys
        let path = path
        try Self.mapping(path) {
            try database.write { db in
                try Self.checkSchema(db, path: path)
                guard let sealed = try Data.fetchOne(db, sql: "SELECT state FROM vault WHERE id = 1") else {
                    throw VaultError(.corrupt, "\(path) has no state record: the vault is damaged")
                }
                guard let bytes = VaultKeys.open(Array(sealed), with: keys.state, record: VaultKeys.stateRecord),
                    let old = VaultState.Format2(bytes: bytes)
                else {
                    throw VaultError(
                        .tampered,
                        "the state record of \(path) does not open: it was changed behind the vault's back"
                    )
                }
                var state = VaultState(generation: old.generation + 1, count: 0, digest: VaultState.empty.digest)
                var shares: [[UInt8]] = []
                try Self.forEachIndexRow(in: db, path: path) { id, revision, tag in
                    shares.append(keys.indexShare(id: id, revision: revision, tag: nil))
                    state.add(keys.indexShare(id: id, revision: revision, tag: tag))
                }
                guard ConstantTime.equal(VaultState.Format2.digest(of: shares), old.digest) else {
                    throw Self.tamperedIndex(path)
                }
                if format == 1 { try fileByOrigins(db) }
                try db.execute(
                    sql: "UPDATE vault SET state = ? WHERE id = 1",
                    arguments: [Data(Self.seal(state, keys))]
                )
                try db.execute(sql: "PRAGMA user_version = \(Self.format)")
                try markChecked(db)
            }
        }
    }

    /// Files every item of a format-1 vault again, under its sites as this Keyport reads them and
    /// under its origins; the items are not touched.
    private func fileByOrigins(_ db: Database) throws {
        let rows = try Row.fetchAll(db, sql: "SELECT id, revision, sealed FROM items")
        let remove = try db.cachedStatement(sql: "DELETE FROM sites WHERE item = ?")
        let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO sites (tag, item) VALUES (?, ?)")
        for row in rows {
            let item = try decrypt(row)
            try remove.execute(arguments: [item.id])
            for tag in sites(of: item) + Self.origins(of: item).map(Self.originTag) {
                try insert.execute(arguments: [Data(keys.tag(site: tag)), item.id])
            }
        }
    }

    // MARK: - Changes

    /// Adds `item`, which must have an id no item of the vault has. Returns its revision (1).
    @discardableResult
    package func add(_ item: CXF.Item) throws(VaultError) -> Int64 {
        try Self.checkID(item)
        return try write { db, state in
            guard try Int64.fetchOne(db, sql: "SELECT revision FROM items WHERE id = ?", arguments: [item.id]) == nil
            else { throw VaultError(.exists, "the vault has an item with id \(Self.show(item.id)) already") }
            try store(seal(item, revision: 1), replacing: nil, in: db, state: &state)
            return 1
        }
    }

    /// Replaces the item with `item`'s id by `item`. Returns its new revision.
    @discardableResult
    package func update(_ item: CXF.Item) throws(VaultError) -> Int64 {
        try Self.checkID(item)
        return try write { db, state in
            guard
                let old = try Int64.fetchOne(db, sql: "SELECT revision FROM items WHERE id = ?", arguments: [item.id])
            else { throw VaultError(.notFound, "the vault has no item with id \(Self.show(item.id))") }
            try store(seal(item, revision: old + 1), replacing: old, in: db, state: &state)
            return old + 1
        }
    }

    /// Removes the item with `id`.
    package func remove(id: Data) throws(VaultError) {
        try write { db, state in
            guard let old = try Self.indexEntry(id: id, in: db)
            else { throw VaultError(.notFound, "the vault has no item with id \(Self.show(id))") }
            try db.execute(sql: "DELETE FROM items WHERE id = ?", arguments: [id])
            state.remove(keys.indexShare(id: Array(id), revision: old.revision, tag: old.tag))
        }
    }

    /// An item made ready to be written: sealed at a revision, with its sites' tags and its
    /// share of the index digest. Made apart from the write so that an import makes many at once.
    struct SealedItem: Sendable {
        var id: Data
        var revision: Int64
        var sealed: Data
        var tags: Set<Data>
        var share: [UInt8]
    }

    /// `item` sealed at `revision`, filed under its sites and origins (``filing(of:)``, unless
    /// given: an import works them out once per item).
    func seal(_ item: CXF.Item, revision: Int64, filing: Filing? = nil) -> SealedItem {
        let id = Array(item.id)
        let filing = filing ?? self.filing(of: item)
        let sealed = VaultKeys.seal(
            item.json,
            with: keys.items,
            record: VaultKeys.itemRecord(id: id, revision: revision)
        )
        return SealedItem(
            id: item.id,
            revision: revision,
            sealed: Data(sealed),
            tags: Set((filing.sites + filing.origins).map { Data(keys.tag(site: $0)) }),
            share: keys.indexShare(id: id, revision: revision, tag: VaultKeys.sealTag(sealed))
        )
    }

    /// What an item is filed under: the sites of its URLs, and their origins' tags
    /// (``originTag(_:)``), each URL read once.
    struct Filing {
        var sites: [String]
        var origins: [String]
    }

    func filing(of item: CXF.Item) -> Filing {
        let origins = Self.origins(of: item)
        return Filing(sites: origins.map { $0.site(in: list) }, origins: origins.map(Self.originTag))
    }

    /// Writes `item`, in place of its revision `old` when there is one.
    func store(_ item: SealedItem, replacing old: Int64?, in db: Database, state: inout VaultState) throws {
        // Cached statements: an import runs these 100 000 times.
        if let old {
            // The share of the row being replaced: its revision and its tag, as they are.
            guard let entry = try Self.indexEntry(id: item.id, in: db), entry.revision == old else {
                throw VaultError(.notFound, "the vault's item \(Self.show(item.id)) changed while it was being written")
            }
            try db.cachedStatement(sql: "UPDATE items SET revision = ?, sealed = ? WHERE id = ?")
                .execute(arguments: [item.revision, item.sealed, item.id])
            try db.cachedStatement(sql: "DELETE FROM sites WHERE item = ?").execute(arguments: [item.id])
            state.remove(keys.indexShare(id: Array(item.id), revision: old, tag: entry.tag))
        } else {
            try db.cachedStatement(sql: "INSERT INTO items (id, revision, sealed) VALUES (?, ?, ?)")
                .execute(arguments: [item.id, item.revision, item.sealed])
        }
        state.add(item.share)
        let insertSite = try db.cachedStatement(sql: "INSERT INTO sites (tag, item) VALUES (?, ?)")
        for tag in item.tags { try insertSite.execute(arguments: [tag, item.id]) }
    }

    /// Runs `body` in one transaction with the vault's state, then seals the state counted one up.
    /// A file changed behind the vault since it was last checked is checked first.
    func write<T>(_ body: (Database, inout VaultState) throws -> T) throws(VaultError) -> T {
        let keys = keys
        return try Self.mapping(path) {
            try database.write { db in
                try checkIfChanged(db)
                var state = try Self.state(in: db, keys: keys, path: path)
                let result = try body(db, &state)
                state.generation += 1
                try db.execute(
                    sql: "UPDATE vault SET state = ? WHERE id = 1",
                    arguments: [Data(Self.seal(state, keys))]
                )
                return result
            }
        }
    }

    // MARK: - Reading

    /// How many items.
    package var count: Int {
        get throws(VaultError) {
            try reading { try Int.fetchOne($0, sql: "SELECT count(*) FROM items") ?? 0 }
        }
    }

    /// The item with `id`, or `nil`.
    package func item(id: Data) throws(VaultError) -> CXF.Item? {
        let row = try reading { db in try self.row(id: id, in: db) }
        return try row.map { row throws(VaultError) in try decrypt(row) }
    }

    /// The items that have a URL on the site of `service` (a URL, or a domain): its registrable
    /// domain, or the host itself when it has none; with `exact`, only those with a URL of the
    /// same scheme, host and port (AutoFill's exact fit). Only they are read and opened, so
    /// finding one login among 100 000 of one domain opens one item.
    package func items(forService service: String, exact: Bool = false) throws(VaultError) -> [CXF.Item] {
        guard let origin = ServiceOrigin(service) else { return [] }
        let tag = exact ? Self.originTag(origin) : origin.site(in: list)
        let rows = try reading { db in try self.rows(taggedWith: tag, in: db) }
        var items: [CXF.Item] = []
        // The tags are not sealed: an item counts only if its own (sealed) URLs are on the site
        // (or the origin), so a tag row added to the file cannot file an item under another.
        for row in rows {
            let item = try decrypt(row)
            let belongs = exact ? Self.origins(of: item).contains(origin) : sites(of: item).contains(tag)
            if belongs { items.append(item) }
        }
        return items
    }

    /// Calls `body` with every item, one at a time, in the order they were added.
    package func forEachItem(_ body: (CXF.Item) throws -> Void) throws {
        try reading { db in
            let rows = try Row.fetchCursor(db, sql: "SELECT id, revision, sealed FROM items ORDER BY rowid")
            while let row = try rows.next() { try body(try decrypt(row)) }
        }
    }

    /// Runs `body` in a read transaction, after checking the file again when it was changed behind
    /// the vault since it was last checked.
    func reading<T>(_ body: (Database) throws -> T) throws(VaultError) -> T {
        try Self.mapping(path) {
            try database.read { db in
                try checkIfChanged(db)
                return try body(db)
            }
        }
    }

    func decrypt(_ row: Row) throws(VaultError) -> CXF.Item {
        // Decoded with errors, not GRDB's trapping subscripts: a crafted file's NULL or text must
        // be a damaged vault, not a crash.
        let id: Data
        let revision: Int64
        let sealed: Data
        do {
            id = try row.decode(Data.self, forColumn: "id")
            revision = try row.decode(Int64.self, forColumn: "revision")
            sealed = try row.decode(Data.self, forColumn: "sealed")
        } catch {
            throw VaultError(.corrupt, "an item row of \(path) is not what the format says: \(error)")
        }
        guard
            let json = VaultKeys.open(
                Array(sealed),
                with: keys.items,
                record: VaultKeys.itemRecord(id: Array(id), revision: revision)
            )
        else {
            throw VaultError(
                .tampered,
                "the item \(Self.show(id)) (revision \(revision)) in \(path) does not open: its row was edited, or swapped with another; nothing was changed"
            )
        }
        do {
            return try CXF.Decoder().decode(CXF.Part<CXF.Item>.object, from: json)
        } catch {
            throw VaultError(.corrupt, "the item \(Self.show(id)) in \(path) is sealed but not CXF: \(error)")
        }
    }

    /// The row of the item with `id`, or `nil`.
    func row(id: Data, in db: Database) throws -> Row? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT id, revision, sealed FROM items WHERE id = ?"),
            arguments: [id]
        )
    }

    /// The rows of the items among `ids` that the vault has, by id: one query for a batch.
    func rows(ids: [Data], in db: Database) throws -> [Data: Row] {
        guard !ids.isEmpty else { return [:] }
        let marks = Array(repeating: "?", count: ids.count).joined(separator: ",")
        let rows = try Row.fetchAll(
            db,
            sql: "SELECT id, revision, sealed FROM items WHERE id IN (\(marks))",
            arguments: StatementArguments(ids)
        )
        return Dictionary(rows.map { ($0["id"] as Data, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The rows of the items filed under `site`.
    func rows(taggedWith site: String, in db: Database) throws -> [Row] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT items.rowid, items.id, items.revision, items.sealed FROM sites JOIN items ON items.id = sites.item
                    WHERE sites.tag = ? ORDER BY items.rowid
                    """
            ),
            arguments: [Data(keys.tag(site: site))]
        )
    }

    // MARK: - Checks

    /// Checks the file when another connection has changed it since this vault last did (SQLite's
    /// `data_version` tells; this connection's own writes do not change it): the keeper holds a
    /// vault open for hours, and a row put back behind it must not be served either.
    private func checkIfChanged(_ db: Database) throws {
        let version = try Int64.fetchOne(db, sql: "PRAGMA data_version")
        guard version == nil || checkedVersion.withLock({ $0 }) != version else { return }
        try Self.checkSchema(db, path: path)
        try Self.checkIndex(db, keys: keys, path: path)
        checkedVersion.withLock { $0 = version }
    }

    /// Notes the file as checked as it is now (after this connection's own changes).
    private func markChecked(_ db: Database) throws {
        let version = try Int64.fetchOne(db, sql: "PRAGMA data_version")
        checkedVersion.withLock { $0 = version }
    }

    /// Compares the file's tables, indexes, triggers and views with ``schema``: anything else —
    /// `items` without its primary key, a trigger that rewrites rows, a view in a table's place —
    /// is refused before any row is believed.
    static func checkSchema(_ db: Database, path: String) throws {
        let query = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
        let expected = try DatabaseQueue().write { fresh in
            try fresh.execute(sql: schema)
            return try Row.fetchAll(fresh, sql: query)
        }
        let found = try Row.fetchAll(db, sql: query)
        guard found == expected else {
            let names = Set(expected.map { $0["name"] as String? })
            let odd = found.first { !expected.contains($0) }.map { row -> String in
                let name = (row["name"] as String?) ?? "?"
                return names.contains(name) ? "\(name) was changed" : "\(name) was added"
            }
            throw VaultError(
                .tampered,
                "the tables of \(path) are not a Keyport vault's (\(odd ?? "one is missing")): it was changed behind the vault's back; nothing was read"
            )
        }
    }

    /// Recomputes the index digest and the count from the items' ids and revisions and compares
    /// them with the sealed state's: a row removed, added back, duplicated or replayed at an older
    /// revision does not fit.
    static func checkIndex(_ db: Database, keys: VaultKeys, path: String) throws {
        let state = try state(in: db, keys: keys, path: path)
        var digest = VaultState.empty
        try forEachIndexRow(in: db, path: path) { id, revision, tag in
            digest.add(keys.indexShare(id: id, revision: revision, tag: tag))
        }
        guard digest.count == state.count, ConstantTime.equal(digest.digest, state.digest) else {
            throw tamperedIndex(path)
        }
    }

    /// Calls `body` with every row's id, revision and sealed tag. A row whose id is not a blob
    /// or whose revision is not an integer is refused: SQLite would read them back as the same
    /// values (the text "a" as the blob "a"), which the primary key does not keep apart.
    private static func forEachIndexRow(
        in db: Database,
        path: String,
        _ body: ([UInt8], Int64, [UInt8]) throws -> Void
    ) throws {
        let rows = try Row.fetchCursor(
            db,
            sql:
                "SELECT id, revision, substr(sealed, -16) AS tag, typeof(id) = 'blob' AND typeof(revision) = 'integer' AND typeof(sealed) = 'blob' AS typed FROM items"
        )
        while let row = try rows.next() {
            guard (try? row.decode(Bool.self, forColumn: "typed")) == true,
                let id = try? row.decode(Data.self, forColumn: "id"),
                let revision = try? row.decode(Int64.self, forColumn: "revision"),
                let tag = try? row.decode(Data.self, forColumn: "tag")
            else { throw VaultError(.corrupt, "an item row of \(path) is not what the format says") }
            try body(Array(id), revision, Array(tag))
        }
    }

    /// The revision and sealed tag of the item `id`'s row, or `nil` when there is none.
    private static func indexEntry(id: Data, in db: Database) throws -> (revision: Int64, tag: [UInt8])? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT revision, substr(sealed, -16) AS tag FROM items WHERE id = ?"),
                arguments: [id]
            )
        else { return nil }
        return (row["revision"], Array(row["tag"] as Data))
    }

    private static func tamperedIndex(_ path: String) -> VaultError {
        VaultError(
            .tampered,
            "the items of \(path) are not those of its last change: rows were removed, added back, duplicated or replayed behind the vault's back"
        )
    }

    private static func state(in db: Database, keys: VaultKeys, path: String) throws -> VaultState {
        guard let sealed = try Data.fetchOne(db, sql: "SELECT state FROM vault WHERE id = 1") else {
            throw VaultError(.corrupt, "\(path) has no state record: the vault is damaged")
        }
        guard let bytes = VaultKeys.open(Array(sealed), with: keys.state, record: VaultKeys.stateRecord),
            let state = VaultState(bytes: bytes)
        else {
            throw VaultError(
                .tampered,
                "the state record of \(path) does not open: it was changed behind the vault's back"
            )
        }
        return state
    }

    private static func seal(_ state: VaultState, _ keys: VaultKeys) -> [UInt8] {
        VaultKeys.seal(state.bytes, with: keys.state, record: VaultKeys.stateRecord)
    }

    // MARK: - Helpers

    /// The sites an item is filed under: those of its scope's URLs.
    func sites(of item: CXF.Item) -> [String] {
        (item.scope?.urls ?? []).compactMap { ServiceOrigin($0)?.site(in: list) }
    }

    /// The origins of an item's URLs (scheme, host, port), which it is filed under as well.
    static func origins(of item: CXF.Item) -> [ServiceOrigin] {
        (item.scope?.urls ?? []).compactMap { ServiceOrigin($0) }
    }

    /// What an origin is filed under, apart from any site (a site has no space in it).
    static func originTag(_ origin: ServiceOrigin) -> String { "origin \(origin)" }

    static func checkID(_ item: CXF.Item) throws(VaultError) {
        guard !item.id.isEmpty else {
            throw VaultError(.invalidItem, "the item \"\(item.title)\" has no id; the vault keeps items by id")
        }
    }

    /// An item id as CXF writes it (base64url).
    static func show(_ id: Data) -> String { Base64URL.encode(id) }

    /// Runs `body`, turning SQLite's failures into ``VaultError``s that name `path`.
    private static func mapping<T>(_ path: String, _ body: () throws -> T) throws(VaultError) -> T {
        do {
            return try body()
        } catch let error as VaultError {
            throw error
        } catch let error as DatabaseError {
            switch error.resultCode {
            case .SQLITE_BUSY, .SQLITE_LOCKED:
                throw VaultError(.busy, "another process is writing to \(path); try again when it is done")
            case .SQLITE_NOTADB:
                throw VaultError(.notAVault, "\(path) is not a Keyport vault (not an SQLite database)")
            case .SQLITE_CORRUPT:
                throw VaultError(.corrupt, "\(path) is damaged: \(error.message ?? "SQLite says it is corrupt")")
            default:
                throw VaultError(.io, "\(path): \(error.message ?? "\(error.resultCode)")")
            }
        } catch {
            throw VaultError(.io, "\(path): \(error)")
        }
    }
}
