import CredentialExchangeFormat
import Foundation
import GRDB
import KeyportCrypto
import KeyportSystem
import KeyportTestSupport
import Testing

@testable import KeyportVault

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The cheapest parameters Keyport accepts: the tests are about the vault, not scrypt's cost.
private let fast = ScryptParameters(logN: 10)
private let passphrase = SecretBytes("correct horse battery staple")

/// A fresh private directory and a vault path in it.
private struct Scratch {
    let directory: TemporaryDirectory
    var path: String { directory.url.appendingPathComponent("vault.keyport").path }

    init() throws { directory = try TemporaryDirectory("kp-vault") }

    func create() throws -> Vault { try Vault.create(at: path, passphrase: passphrase, kdf: fast) }

    /// Runs SQL on the file behind the vault's back, as an attacker with the file would.
    func tamper(_ sql: String, _ arguments: StatementArguments = []) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { try $0.execute(sql: sql, arguments: arguments) }
        try queue.close()
    }

    /// Rewrites the file as Keyport 0.1.0 wrote it (format 2, or 1): the sealed state of those
    /// formats — the generation and the XOR of the items' index shares, 40 bytes.
    func downgrade(_ vault: Vault, to format: Int) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            var shares: [[UInt8]] = []
            for row in try Row.fetchAll(db, sql: "SELECT id, revision FROM items") {
                shares.append(vault.keys.indexShare(id: Array(row["id"] as Data), revision: row["revision"], tag: nil))
            }
            let state = withUnsafeBytes(of: UInt64(7).bigEndian, Array.init) + VaultState.Format2.digest(of: shares)
            try db.execute(
                sql: "UPDATE vault SET state = ?",
                arguments: [Data(VaultKeys.seal(state, with: vault.keys.state, record: VaultKeys.stateRecord))]
            )
            try db.execute(sql: "PRAGMA user_version = \(format)")
        }
        try queue.close()
    }
}

private func item(_ id: String, title: String, urls: [String] = [], password: String = "pw") -> CXF.Item {
    CXF.Item(
        id: Data(id.utf8),
        title: title,
        scope: urls.isEmpty ? nil : CXF.CredentialScope(urls: urls),
        credentials: [
            .basicAuth(
                CXF.BasicAuth(
                    username: CXF.EditableField(fieldType: .string, value: "alice"),
                    password: CXF.EditableField(fieldType: .concealedString, value: password)
                )
            )
        ]
    )
}

private func expectError(
    _ code: VaultError.Code,
    _ body: () throws -> Void,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        try body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as VaultError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

@Suite("Keyport Vault: the store")
struct VaultStoreTests {
    @Test("create, then unlock with the passphrase; a wrong one opens nothing; the files are 0600; no overwrite")
    func createAndUnlock() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        try vault.add(item("a", title: "A"))
        for suffix in ["", "-wal", "-shm"] {
            var info = stat()
            if lstat(scratch.path + suffix, &info) == 0 {
                #expect(info.st_mode & 0o777 == 0o600, "\(suffix)")
            }
        }
        let again = try Vault.unlock(at: scratch.path, passphrase: passphrase)
        #expect(try again.item(id: Data("a".utf8))?.title == "A")
        expectError(.wrongPassphrase) { _ = try Vault.unlock(at: scratch.path, passphrase: SecretBytes("wrong")) }
        expectError(.exists) { _ = try scratch.create() }
        expectError(.io) { _ = try Vault.unlock(at: scratch.path + ".none", passphrase: passphrase) }
    }

    @Test("every credential type and unknown members come back as they went in, byte for byte")
    func everyType() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        let json = try Data(
            contentsOf: URL(fileURLWithPath: Peers.file("Tests/CredentialExchangeFormatTests/Fixtures/full.json"))
        )
        guard case .header(let header) = try CXF.Decoder().decode(json).document else {
            Issue.record("full.json is a header")
            return
        }
        let items = header.accounts.flatMap(\.items)
        #expect(Set(items.flatMap(\.credentials).map(\.type)).count >= 17)
        for item in items { try vault.add(item) }
        let reopened = try Vault.unlock(at: scratch.path, passphrase: passphrase)
        var read: [CXF.Item] = []
        try reopened.forEachItem { read.append($0) }
        #expect(read == items)
        #expect(read.map(\.json) == items.map(\.json))
        #expect(try reopened.count == items.count)
    }

    @Test("items are found by site through keyed tags; no site is written in the clear")
    func lookup() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        try vault.add(item("1", title: "Example", urls: ["https://login.example.com/"]))
        try vault.add(item("2", title: "Alice's pages", urls: ["https://alice.github.io/"]))
        try vault.add(item("3", title: "Router", urls: ["http://192.168.1.1:8080/"]))
        try vault.add(item("4", title: "No site"))
        #expect(try vault.items(forService: "https://www.example.com/x").map(\.title) == ["Example"])
        #expect(try vault.items(forService: "example.com").map(\.title) == ["Example"])
        #expect(try vault.items(forService: "bob.github.io").isEmpty)
        #expect(try vault.items(forService: "alice.github.io").map(\.title) == ["Alice's pages"])
        #expect(try vault.items(forService: "192.168.1.1").map(\.title) == ["Router"])
        #expect(try vault.items(forService: "not a site").isEmpty)
        // An update files the item under its new sites only.
        try vault.update(item("1", title: "Example", urls: ["https://example.org/"]))
        #expect(try vault.items(forService: "example.com").isEmpty)
        #expect(try vault.items(forService: "example.org").map(\.title) == ["Example"])
        try vault.remove(id: Data("1".utf8))
        #expect(try vault.items(forService: "example.org").isEmpty)

        let file =
            try Data(contentsOf: URL(fileURLWithPath: scratch.path))
            + ((try? Data(contentsOf: URL(fileURLWithPath: scratch.path + "-wal"))) ?? Data())
        for clear in ["example", "github", "192.168", "alice", "Router", "correct horse"] {
            #expect(file.range(of: Data(clear.utf8)) == nil, "\(clear) is in the file")
        }
    }

    @Test(
        "exact look-ups open only the items of that scheme, host and port; a format-1 vault is filed by origin when unlocked"
    )
    func exactLookup() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        try vault.add(item("1", title: "Login", urls: ["https://login.example.com/"]))
        try vault.add(item("2", title: "Shop", urls: ["https://shop.example.com/"]))
        try vault.add(item("3", title: "Router", urls: ["http://192.168.1.1:8080/"]))
        #expect(try vault.items(forService: "https://login.example.com/x", exact: true).map(\.title) == ["Login"])
        #expect(try vault.items(forService: "login.example.com:8443", exact: true).isEmpty)
        #expect(try vault.items(forService: "http://login.example.com", exact: true).isEmpty)
        #expect(try vault.items(forService: "http://3232235777:8080", exact: true).map(\.title) == ["Router"])
        // A tag row copied onto another item does not file it there: its sealed URLs decide.
        try scratch.tamper("INSERT OR IGNORE INTO sites (tag, item) SELECT tag, X'32' FROM sites WHERE item = X'31'")
        #expect(try vault.items(forService: "https://login.example.com", exact: true).map(\.title) == ["Login"])

        // A vault written before origins were filed (format 1; here its items' rows of tags are
        // gone): unlocking files them, once, and gives it format 3's state.
        try scratch.tamper("DELETE FROM sites WHERE item = X'31' OR item = X'32'")
        try scratch.downgrade(vault, to: 1)
        let reopened = try Vault.unlock(at: scratch.path, passphrase: passphrase)
        #expect(try reopened.items(forService: "https://shop.example.com", exact: true).map(\.title) == ["Shop"])
        #expect(try DatabaseQueue(path: scratch.path).read { try Int.fetchOne($0, sql: "PRAGMA user_version") } == 3)
        // A format this Keyport does not know is refused, not read.
        try scratch.tamper("PRAGMA user_version = 4")
        expectError(.unsupportedFormat) { _ = try Vault.unlock(at: scratch.path, passphrase: passphrase) }
    }

    @Test("add, update and remove keep revisions; a missing or repeated id is refused, naming it")
    func changes() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        #expect(try vault.add(item("x", title: "one")) == 1)
        #expect(try vault.update(item("x", title: "two")) == 2)
        #expect(try vault.item(id: Data("x".utf8))?.title == "two")
        expectError(.exists) { try vault.add(item("x", title: "again")) }
        expectError(.notFound) { try vault.update(item("y", title: "none")) }
        expectError(.notFound) { try vault.remove(id: Data("y".utf8)) }
        expectError(.invalidItem) { try vault.add(item("", title: "no id")) }
        try vault.remove(id: Data("x".utf8))
        #expect(try vault.item(id: Data("x".utf8)) == nil)
        _ = try Vault.unlock(at: scratch.path, passphrase: passphrase)
    }

    @Test("a new passphrase re-wraps the key: the old one no longer opens, the items are as they were")
    func changePassphrase() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        try vault.add(item("a", title: "A"))
        let sealed = try DatabaseQueue(path: scratch.path).read {
            try Data.fetchOne($0, sql: "SELECT sealed FROM items")
        }
        let newer = SecretBytes("a new passphrase")
        try vault.changePassphrase(to: newer, kdf: fast.withNewSalt())
        expectError(.wrongPassphrase) { _ = try Vault.unlock(at: scratch.path, passphrase: passphrase) }
        let reopened = try Vault.unlock(at: scratch.path, passphrase: newer)
        #expect(try reopened.item(id: Data("a".utf8))?.title == "A")
        let after = try DatabaseQueue(path: scratch.path).read {
            try Data.fetchOne($0, sql: "SELECT sealed FROM items")
        }
        #expect(after == sealed, "the items were not sealed again")
    }
}

@Suite("Keyport Vault: what an attacker with the file can do is noticed")
struct VaultTamperTests {
    @Test(
        "old rows put twice into an items table rebuilt without its primary key: refused, the old password and the removed item never served"
    )
    func duplicatedRows() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        try vault.add(item("a", title: "A", urls: ["https://a.example/"], password: "old password"))
        try vault.add(item("b", title: "B", urls: ["https://b.example/"]))
        let snapshot = try DatabaseQueue(path: scratch.path).read {
            try Row.fetchAll($0, sql: "SELECT id, revision, sealed FROM items")
        }
        try vault.update(item("a", title: "A", urls: ["https://a.example/"], password: "new password"))
        try vault.remove(id: Data("b".utf8))
        // Each old row twice: in format 2's XOR digest the pair cancelled out, and unlocking
        // succeeded with the old password and the removed item served.
        var sql = """
            CREATE TABLE rebuilt (id BLOB NOT NULL, revision INTEGER NOT NULL, sealed BLOB NOT NULL);
            INSERT INTO rebuilt SELECT id, revision, sealed FROM items;
            """
        var arguments: [(any DatabaseValueConvertible)?] = []
        for row in snapshot {
            sql += "INSERT INTO rebuilt VALUES (?, ?, ?); INSERT INTO rebuilt VALUES (?, ?, ?);"
            for _ in 0..<2 {
                arguments += [row["id"] as Data, row["revision"] as Int64, row["sealed"] as Data]
            }
        }
        sql += "DROP TABLE items; ALTER TABLE rebuilt RENAME TO items;"
        try scratch.tamper(sql, StatementArguments(arguments))
        expectError(.tampered) { _ = try Vault.unlock(at: scratch.path, passphrase: passphrase) }
        // The vault that stayed open behind the edit notices it too, at its next read.
        expectError(.tampered) { _ = try vault.item(id: Data("a".utf8)) }
        expectError(.tampered) { _ = try vault.items(forService: "https://b.example/") }
    }

    @Test(
        "an item removed and imported again has the revision its old row had: the old row put back does not fit (each share covers its sealed row's tag)"
    )
    func sameRevisionReplayed() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        try vault.add(item("m", title: "Mail", urls: ["https://mail.example/"], password: "old-pass"))
        let old = try #require(
            try DatabaseQueue(path: scratch.path).read {
                try Data.fetchOne($0, sql: "SELECT sealed FROM items WHERE id = X'6D'")
            }
        )
        try vault.remove(id: Data("m".utf8))
        _ = try vault.importItems([item("m", title: "Mail", urls: ["https://mail.example/"], password: "new-pass")])
        try scratch.tamper("UPDATE items SET sealed = ? WHERE id = X'6D'", [old])
        expectError(.tampered) { _ = try vault.items(forService: "https://mail.example/") }
        expectError(.tampered) { _ = try Vault.unlock(at: scratch.path, passphrase: passphrase) }
    }

    @Test("a format-2 vault whose removed row came back twice (once with its id as text) is refused at the upgrade")
    func upgradeWithTextDuplicate() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        try vault.add(item("a", title: "A", urls: ["https://a.example/"]))
        try vault.add(item("o", title: "Old", urls: ["https://old.example/"], password: "removed-secret"))
        let old = try #require(
            try DatabaseQueue(path: scratch.path).read {
                try Row.fetchOne($0, sql: "SELECT revision, sealed FROM items WHERE id = X'6F'")
            }
        )
        try vault.remove(id: Data("o".utf8))
        try scratch.downgrade(vault, to: 2)
        // In format 2's XOR the two copies cancel out; the primary key keeps text and blob apart.
        try scratch.tamper(
            "INSERT INTO items VALUES (X'6F', ?, ?); INSERT INTO items VALUES ('o', ?, ?)",
            [old["revision"] as Int64, old["sealed"] as Data, old["revision"] as Int64, old["sealed"] as Data]
        )
        expectError(.corrupt) { _ = try Vault.unlock(at: scratch.path, passphrase: passphrase) }
    }

    @Test("the digest is a sum that cannot cancel: a share counted twice is not a share left out")
    func digestCannotCancel() {
        let one = Array(repeating: UInt8(0xA5), count: 32)
        let other = (0..<32).map { UInt8($0) }
        var twice = VaultState.empty
        twice.add(one)
        twice.add(one)
        #expect(twice != VaultState.empty && twice.digest != VaultState.empty.digest)
        var state = VaultState.empty
        state.add(other)
        state.add(one)
        state.remove(one)
        var alone = VaultState.empty
        alone.add(other)
        #expect(state == alone, "adding then removing a share leaves the rest as it was")
        // A carry across every byte: 0xFF…FF + 1 is 0 modulo 2²⁵⁶.
        var sum = Array(repeating: UInt8(0xFF), count: 32)
        VaultState.add(Array(repeating: 0, count: 31) + [1], to: &sum)
        #expect(sum == Array(repeating: 0, count: 32))
        #expect(VaultState(bytes: twice.bytes) == twice)
    }

    @Test(
        "every row-level edit behind the vault's back is refused at unlock and by the open vault, or changes nothing it serves"
    )
    func rowLevelEdits() throws {
        // Each edit on a vault of three items, one updated and one removed before (their old rows
        // kept, as a copy of an earlier file would): what the vault serves afterwards is either
        // a refusal or exactly what it served before.
        let edits: [(String, String)] = [
            ("a row removed", "DELETE FROM items WHERE id = X'61'"),
            ("a revision counted up", "UPDATE items SET revision = revision + 1 WHERE id = X'61'"),
            (
                "an old row put back",
                "UPDATE items SET revision = (SELECT revision FROM old WHERE id = X'61'), sealed = (SELECT sealed FROM old WHERE id = X'61') WHERE id = X'61'"
            ),
            ("a removed row put back", "INSERT INTO items SELECT * FROM old WHERE id = X'63'"),
            (
                "a row copied under another id",
                "INSERT INTO items SELECT X'7A', revision, sealed FROM items WHERE id = X'62'"
            ),
            (
                "two rows' contents swapped",
                "UPDATE items SET sealed = CASE id WHEN X'61' THEN (SELECT sealed FROM items WHERE id = X'62') ELSE (SELECT sealed FROM items WHERE id = X'61') END WHERE id IN (X'61', X'62')"
            ),
            ("a trigger", "CREATE TRIGGER t AFTER UPDATE ON items BEGIN DELETE FROM sites; END"),
            (
                "a view in the table's place",
                "CREATE TABLE copied AS SELECT * FROM old; ALTER TABLE items RENAME TO real; CREATE VIEW items AS SELECT * FROM real UNION ALL SELECT * FROM copied"
            ),
            (
                "the primary key dropped",
                "CREATE TABLE r (id BLOB NOT NULL, revision INTEGER NOT NULL, sealed BLOB NOT NULL); INSERT INTO r SELECT * FROM items; DROP TABLE items; ALTER TABLE r RENAME TO items"
            ),
            ("an old state record", "UPDATE vault SET state = (SELECT state FROM oldvault)"),
            ("tag rows removed", "DELETE FROM sites"),
            (
                "a removed row put back with its id as text",
                "INSERT INTO items SELECT CAST(id AS TEXT), revision, sealed FROM old WHERE id = X'63'"
            ),
            ("a revision as text", "UPDATE items SET revision = CAST(revision AS TEXT) WHERE id = X'62'"),
        ]
        for (what, sql) in edits {
            let scratch = try Scratch()
            defer { scratch.directory.remove() }
            let vault = try scratch.create()
            for id in ["a", "b", "c"] {
                try vault.add(item(id, title: id.uppercased(), urls: ["https://\(id).example/"], password: "old \(id)"))
            }
            // Copies of the earlier rows, kept in another file as an attacker keeps them.
            let copies = scratch.directory.url.appendingPathComponent("old.sqlite").path
            let copying = try DatabaseQueue(path: scratch.path)
            try copying.inDatabase { db in
                try db.execute(sql: "ATTACH ? AS o", arguments: [copies])
                try db.execute(
                    sql: "CREATE TABLE o.old AS SELECT * FROM items; CREATE TABLE o.oldvault AS SELECT * FROM vault"
                )
            }
            try copying.close()
            try vault.update(item("a", title: "A", urls: ["https://a.example/"], password: "new a"))
            try vault.remove(id: Data("c".utf8))
            func served(_ vault: Vault) throws -> [String] {
                try ["a", "b", "c"].flatMap { id in
                    try vault.items(forService: "https://\(id).example/").map { "\($0.title) \($0.credentials)" }
                } + ["a", "b", "c"].map { try vault.item(id: Data($0.utf8)).map { "\($0.credentials)" } ?? "none" }
            }
            let before = try served(vault)
            let queue = try DatabaseQueue(path: scratch.path)
            try queue.inDatabase { db in
                try db.execute(sql: "ATTACH ? AS o", arguments: [copies])
                try db.execute(
                    sql:
                        "CREATE TEMP VIEW old AS SELECT * FROM o.old; CREATE TEMP VIEW oldvault AS SELECT * FROM o.oldvault"
                )
                try db.execute(sql: sql)
            }
            try queue.close()
            for (who, open) in [
                ("the open vault", { vault }),
                ("a new unlock", { try Vault.unlock(at: scratch.path, passphrase: passphrase) }),
            ] as [(String, () throws -> Vault)] {
                do {
                    let after = try served(try open())
                    if what == "tag rows removed" {
                        // Tags only find candidates: removed, they hide items from site look-ups, never change one.
                        #expect(after.allSatisfy { before.contains($0) }, "\(what), \(who): \(after)")
                    } else {
                        // Not refused: then nothing served changed (SQLite's type affinity turns a
                        // revision written as text back into the integer it was).
                        #expect(after == before, "\(what): \(who) served \(after) instead of refusing")
                    }
                } catch let error as VaultError {
                    #expect(error.code == .tampered || error.code == .corrupt, "\(what), \(who): \(error)")
                }
            }
        }
    }

    @Test("a flipped byte in an item, two items' rows swapped: the item does not open, named")
    func editedAndSwapped() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        try vault.add(item("a", title: "A", password: "secret a"))
        try vault.add(item("b", title: "B", password: "secret b"))
        try scratch.tamper(
            "UPDATE items SET sealed = (SELECT sealed FROM items WHERE id = ?) WHERE id = ?",
            [Data("b".utf8), Data("a".utf8)]
        )
        // The row that does not open, and (its share covering its tag) the whole vault.
        expectError(.tampered) { _ = try vault.item(id: Data("a".utf8)) }
        expectError(.tampered) { _ = try Vault.unlock(at: scratch.path, passphrase: passphrase) }

        let sealed = try #require(
            try DatabaseQueue(path: scratch.path).read {
                try Data.fetchOne($0, sql: "SELECT sealed FROM items WHERE id = ?", arguments: [Data("b".utf8)])
            }
        )
        var flipped = sealed
        flipped[flipped.count / 2] ^= 0x01
        try scratch.tamper("UPDATE items SET sealed = ? WHERE id = ?", [flipped, Data("b".utf8)])
        expectError(.tampered) { _ = try vault.item(id: Data("b".utf8)) }
    }

    @Test("a row put back at an older revision, a removed row: unlocking says so")
    func replayedRemovedAdded() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        try vault.add(item("a", title: "old password"))
        try vault.add(item("b", title: "B"))
        let old = try #require(
            try DatabaseQueue(path: scratch.path).read {
                try Row.fetchOne(
                    $0,
                    sql: "SELECT revision, sealed FROM items WHERE id = ?",
                    arguments: [Data("a".utf8)]
                )
            }
        )
        try vault.update(item("a", title: "new password"))
        let new = try #require(
            try DatabaseQueue(path: scratch.path).read {
                try Row.fetchOne(
                    $0,
                    sql: "SELECT revision, sealed FROM items WHERE id = ?",
                    arguments: [Data("a".utf8)]
                )
            }
        )
        // The old row opens on its own (its revision is in it), so only the index can tell.
        try scratch.tamper(
            "UPDATE items SET revision = ?, sealed = ? WHERE id = ?",
            [old["revision"] as Int64, old["sealed"] as Data, Data("a".utf8)]
        )
        expectError(.tampered) { _ = try Vault.unlock(at: scratch.path, passphrase: passphrase) }
        // Nor does the vault that stayed open read it, or write over it.
        expectError(.tampered) { _ = try vault.item(id: Data("a".utf8)) }
        expectError(.tampered) { try vault.update(item("a", title: "newest")) }
        // Back to a consistent state: the current row put back.
        try scratch.tamper(
            "UPDATE items SET revision = ?, sealed = ? WHERE id = ?",
            [new["revision"] as Int64, new["sealed"] as Data, Data("a".utf8)]
        )
        #expect(
            try Vault.unlock(at: scratch.path, passphrase: passphrase).item(id: Data("a".utf8))?.title == "new password"
        )

        try scratch.tamper("DELETE FROM items WHERE id = ?", [Data("b".utf8)])
        expectError(.tampered) { _ = try Vault.unlock(at: scratch.path, passphrase: passphrase) }
    }

    @Test(
        "a tag row copied onto another item files nothing under the wrong site; a crafted row is a damaged vault, not a crash"
    )
    func forgedRows() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        try vault.add(item("a", title: "A", urls: ["https://a.example/"]))
        try vault.add(item("b", title: "B", urls: ["https://b.example/"]))
        try scratch.tamper(
            "INSERT INTO sites (tag, item) SELECT tag, ? FROM sites WHERE item = ?",
            [Data("a".utf8), Data("b".utf8)]
        )
        #expect(try vault.items(forService: "b.example").map(\.title) == ["B"])
        try scratch.tamper("UPDATE items SET revision = 'two' WHERE id = ?", [Data("a".utf8)])
        // A revision that is not an integer: the open vault checks the file it sees changed
        // before it reads the row, as unlocking does, and finds it damaged.
        expectError(.corrupt) { _ = try vault.item(id: Data("a".utf8)) }
        expectError(.corrupt) { _ = try Vault.unlock(at: scratch.path, passphrase: passphrase) }
    }

    @Test(
        "the key record's parameters are bound to it: a weaker N does not open; an absurd one is refused before deriving"
    )
    func keyRecord() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        _ = try Vault.create(at: scratch.path, passphrase: passphrase, kdf: ScryptParameters(logN: 11))
        let kdf = try #require(
            try DatabaseQueue(path: scratch.path).read {
                try String.fetchOne($0, sql: "SELECT kdf FROM vault")
            }
        )
        try scratch.tamper(
            "UPDATE vault SET kdf = ?",
            [kdf.replacingOccurrences(of: #""logN":11"#, with: #""logN":10"#)]
        )
        expectError(.wrongPassphrase) { _ = try Vault.unlock(at: scratch.path, passphrase: passphrase) }
        for (absurd, why) in [(#""logN":40,"r":8"#, "N"), (#""logN":20,"r":32"#, "memory")] {
            try scratch.tamper(
                "UPDATE vault SET kdf = ?",
                [kdf.replacingOccurrences(of: #""logN":11,"r":8"#, with: absurd)]
            )
            let start = ContinuousClock.now
            expectError(.unsafeParameters) { _ = try Vault.unlock(at: scratch.path, passphrase: passphrase) }
            #expect(ContinuousClock.now - start < .seconds(5), "refused before deriving (\(why))")
        }
        // Not JSON, or a member said twice (which of the two would count is for no reader to guess).
        for broken in ["not json", kdf.replacingOccurrences(of: #""r":8"#, with: #""r":8,"r":32"#)] {
            try scratch.tamper("UPDATE vault SET kdf = ?", [broken])
            expectError(.corrupt) { _ = try Vault.unlock(at: scratch.path, passphrase: passphrase) }
        }
    }

    @Test("not a vault, not SQLite, truncated: a clear error, the file left as it is")
    func notAVault() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let other = scratch.directory.url.appendingPathComponent("other.sqlite").path
        let queue = try DatabaseQueue(path: other)
        try queue.write { try $0.execute(sql: "CREATE TABLE t (x)") }
        try queue.close()
        expectError(.notAVault) { _ = try Vault.unlock(at: other, passphrase: passphrase) }

        let text = scratch.directory.url.appendingPathComponent("notes.txt").path
        try String(repeating: "not a database\n", count: 100).write(toFile: text, atomically: true, encoding: .utf8)
        expectError(.notAVault) { _ = try Vault.unlock(at: text, passphrase: passphrase) }
        #expect(try String(contentsOfFile: text, encoding: .utf8).hasPrefix("not a database"))

        let vault = try scratch.create()
        for index in 0..<50 { try vault.add(item("\(index)", title: String(repeating: "t", count: 500))) }
        let queueToCheckpoint = try DatabaseQueue(path: scratch.path)
        _ = try queueToCheckpoint.writeWithoutTransaction { try $0.checkpoint(.truncate) }
        try queueToCheckpoint.close()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: scratch.path)[.size] as? Int)
        let handle = try #require(FileHandle(forUpdatingAtPath: scratch.path))
        try handle.truncate(atOffset: UInt64(size / 3))
        try handle.close()
        do {
            let opened = try Vault.unlock(at: scratch.path, passphrase: passphrase)
            try opened.forEachItem { _ in }
            Issue.record("a truncated vault opened and read")
        } catch let error as VaultError {
            #expect([.corrupt, .tampered, .notAVault].contains(error.code), "\(error)")
        }
    }

    @Test("a second writer waits, then is told the vault is busy; nothing is lost")
    func secondWriter() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        try vault.add(item("a", title: "A"))
        let other = try DatabaseQueue(path: scratch.path)
        try other.inDatabase { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            expectError(.busy) { try vault.add(item("b", title: "B")) }
            try db.execute(sql: "ROLLBACK")
        }
        try other.close()
        try vault.add(item("b", title: "B"))
        #expect(try Vault.unlock(at: scratch.path, passphrase: passphrase).count == 2)
    }
}

@Suite("Keyport Vault: imports")
struct VaultImportTests {
    @Test(
        "new items are imported; the same again unchanged; same id merged; the same login on the same origin is the same item"
    )
    func duplicates() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        let first = [
            item("a", title: "A", urls: ["https://example.com/"], password: "one"),
            item("b", title: "B", urls: ["https://example.org/"]),
        ]
        var counted: [Int] = []
        let report = try vault.importItems(first) { counted.append($0.total) }
        #expect(report.imported == 2 && report.merged == 0 && report.unchanged == 0)
        #expect(counted.last == 2)
        #expect(try vault.importItems(first).unchanged == 2)

        var richer = item("b", title: "B", urls: ["https://example.org/", "https://example.net/"])
        richer.credentials.append(.note(CXF.Note(content: CXF.EditableField(fieldType: .string, value: "a note"))))
        let again = try vault.importItems([
            richer,
            item("c", title: "same login, another id", urls: ["https://example.com/login"], password: "one"),
            item("d", title: "same user, another password", urls: ["https://example.com/"], password: "two"),
            item("e", title: "new", urls: ["https://example.edu/"], password: "x"),
            item("f", title: "e again, within the import", urls: ["https://example.edu/"], password: "x"),
            item(
                "g",
                title: "same login, another host of the site",
                urls: ["https://www.example.com/"],
                password: "one"
            ),
        ])
        #expect(again.imported == 3 && again.merged == 2 && again.unchanged == 1, "\(again)")
        let merged = try #require(try vault.item(id: Data("b".utf8)))
        #expect(merged.credentials.count == 2)
        #expect(merged.scope?.urls == ["https://example.org/", "https://example.net/"])
        #expect(try vault.items(forService: "example.net").map(\.title) == ["B"])
        #expect(
            try vault.items(forService: "example.com").map(\.title)
                == ["A", "same user, another password", "same login, another host of the site"]
        )
        // c was A's login on A's origin: A has c's URL now, and c is no item of its own.
        #expect(
            try vault.item(id: Data("a".utf8))?.scope?.urls == ["https://example.com/", "https://example.com/login"]
        )
        #expect(try vault.item(id: Data("c".utf8)) == nil)
        _ = try Vault.unlock(at: scratch.path, passphrase: passphrase)
    }

    @Test("a known login with more (a TOTP secret) is merged into the vault's item; the same again changes nothing")
    func loginWithMore() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        try vault.add(item("chrome", title: "Example", urls: ["https://example.com/"], password: "pw"))
        var richer = item("bitwarden", title: "Example", urls: ["https://example.com"], password: "pw")
        richer.credentials.append(.totp(CXF.TOTP(secret: "JBSWY3DPEHPK3PXP", period: 30, digits: 6, algorithm: .sha1)))
        #expect(try vault.importItems([richer]).merged == 1)
        let items = try vault.items(forService: "example.com")
        #expect(items.count == 1 && items[0].credentials.count == 2, "\(items)")
        #expect(try vault.importItems([richer]).unchanged == 1)
    }

    @Test("an import that fails part way imports nothing")
    func allOrNothing() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        expectError(.invalidItem) {
            _ = try vault.importItems([item("1", title: "one"), item("", title: "no id"), item("3", title: "three")])
        }
        #expect(try vault.count == 0)
        _ = try Vault.unlock(at: scratch.path, passphrase: passphrase)
    }
}

@Suite("Keyport Vault: large imports")
struct VaultLargeImportTests {
    @Test(
        "2 500 items in batches: repeats within a batch and across batches merge or skip; an empty vault's import checks no old logins"
    )
    func batches() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        var items = (0..<2500).map {
            item("\($0)", title: "T\($0)", urls: ["https://s\($0 % 700).example/"], password: "p\($0)")
        }
        items.append(item("5", title: "T5", urls: ["https://s5.example/"], password: "p5"))  // the same again
        items.append(item("7", title: "T7", urls: ["https://other.example/"], password: "p7"))  // same id, more
        var progress: [Int] = []
        let report = try vault.importItems(items) { progress.append($0.total) }
        #expect(report.imported == 2500 && report.unchanged == 1 && report.merged == 1, "\(report)")
        #expect(progress == [1000, 2000, 2502])
        #expect(try vault.item(id: Data("7".utf8))?.scope?.urls == ["https://s7.example/", "https://other.example/"])
        #expect(try vault.items(forService: "s5.example").count == 4)  // 5, 705, 1405, 2105
        let again = try vault.importItems(items.prefix(1200))
        #expect(again.unchanged == 1200, "\(again)")
        _ = try Vault.unlock(at: scratch.path, passphrase: passphrase)
    }

    @Test(
        "an import cancelled part way, or after its last batch but before the commit, imports nothing and says so; the vault opens as before"
    )
    func cancelled() throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let vault = try scratch.create()
        _ = try vault.add(item("kept", title: "kept"))
        let items = (0..<2500).map { item("\($0)", title: "T\($0)", urls: ["https://s\($0).example/"]) }
        // Asked before each batch and once before the commit: giving up at the second batch, and
        // at the very last question, leaves the vault as it was.
        for giveUpAt in [2, 4] {
            var asked = 0
            var heard: [Int] = []
            expectError(.cancelled) {
                _ = try vault.importItems(items, progress: { heard.append($0.total) }) {
                    asked += 1
                    return asked >= giveUpAt
                }
            }
            #expect(asked == giveUpAt)
            #expect(heard == Array([1000, 2000, 2500].prefix(giveUpAt - 1)))
            #expect(try vault.count == 1)
            #expect(try vault.item(id: Data("0".utf8)) == nil)
        }
        _ = try Vault.unlock(at: scratch.path, passphrase: passphrase)
        #expect(try vault.importItems(items, cancelled: { false }).imported == 2500)
    }
}
