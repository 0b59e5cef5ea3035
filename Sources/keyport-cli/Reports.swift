import CredentialExchangeFormat
import Foundation
import KeyportCommandLine
import KeyportEncoding

/// What `keyport cxf validate` reports.
struct ValidationReport: Encodable {
    var valid: Bool
    var version: Version?
    var accounts: Int
    var items: Int
    var credentials: [String: Int]
    var diagnostics: [Entry]

    struct Version: Encodable {
        var major: UInt32
        var minor: UInt32
    }

    struct Entry: Encodable {
        var severity: String
        var code: String
        var path: String
        var message: String
    }

    init(document: CXF.Document, diagnostics: [Diagnostic]) {
        valid = !diagnostics.contains { $0.severity == .error }
        version = document.version.map { Version(major: $0.major, minor: $0.minor) }
        accounts = document.accounts.count
        items = document.accounts.reduce(0) { $0 + $1.items.count }
        credentials = credentialCounts(document)
        self.diagnostics = diagnostics.map {
            Entry(severity: $0.severity.rawValue, code: $0.code.rawValue, path: $0.path, message: $0.message)
        }
    }

    /// A document that could not be decoded at all; `code` says why (`syntax`, `too-large`, …).
    init(fatal message: String, code: CommandError.Code) {
        valid = false
        version = nil
        accounts = 0
        items = 0
        credentials = [:]
        diagnostics = [Entry(severity: "error", code: code.rawValue, path: "", message: message)]
    }

    func encode(to encoder: any Encoder) throws {
        enum Key: String, CodingKey { case valid, version, accounts, items, credentials, diagnostics }
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(valid, forKey: .valid)
        try c.encode(version, forKey: .version)  // null for an account-only document
        try c.encode(accounts, forKey: .accounts)
        try c.encode(items, forKey: .items)
        try c.encode(credentials, forKey: .credentials)
        try c.encode(diagnostics, forKey: .diagnostics)
    }

    func json() -> String { encodeJSON(self) }

    func text(name: String) -> String {
        var out = ""
        let errors = diagnostics.filter { $0.severity == "error" }.count
        let warnings = diagnostics.count - errors
        if accounts > 0 || version != nil {
            let shape = version.map { "CXF \($0.major).\($0.minor) document" } ?? "account-only CXF document"
            let total = credentials.values.reduce(0, +)
            out +=
                "\(name): \(valid ? "valid" : "INVALID") \(shape): \(plural(accounts, "account")), \(plural(items, "item")), \(plural(total, "credential"))\n"
        } else {
            out += "\(name): INVALID\n"
        }
        // Paths and messages carry the document's keys and values: escaped, so none can rewrite the terminal.
        for d in diagnostics {
            out +=
                "  \(d.severity): \(DisplayText.escaping(d.path.isEmpty ? "/" : d.path)): \(DisplayText.escaping(d.message)) [\(d.code)]\n"
        }
        out += "\(plural(errors, "error")), \(plural(warnings, "warning"))\n"
        return out
    }
}

/// What `keyport cxf stats` reports.
struct DocumentStats: Encodable {
    var accounts: [AccountStats]
    var items: Int
    var collections: Int
    var credentials: [String: Int]
    var fieldTypes: [String: Int]

    struct AccountStats: Encodable {
        var id: String
        var username: String
        var items: Int
        var collections: Int
        var credentials: Int
    }

    init(_ document: CXF.Document) {
        func countCollections(_ c: [CXF.Collection]) -> Int {
            c.reduce(0) { $0 + 1 + countCollections($1.subCollections ?? []) }
        }
        accounts = document.accounts.map { a in
            AccountStats(
                id: Base64URL.encode(a.id),
                username: a.username,
                items: a.items.count,
                collections: countCollections(a.collections),
                credentials: a.items.reduce(0) { $0 + $1.credentials.count }
            )
        }
        items = accounts.reduce(0) { $0 + $1.items }
        collections = accounts.reduce(0) { $0 + $1.collections }
        credentials = credentialCounts(document)
        var fields: [String: Int] = [:]
        for account in document.accounts {
            for item in account.items {
                for credential in item.credentials {
                    for entry in credential.editableFields { fields[entry.field.fieldType.rawValue, default: 0] += 1 }
                }
            }
        }
        fieldTypes = fields
    }

    func json() -> String { encodeJSON(self) }

    func text() -> String {
        var out =
            "\(plural(accounts.count, "account")), \(plural(items, "item")), \(plural(collections, "collection"))\n"
        for a in accounts {
            let name = DisplayText.escaping(a.username.isEmpty ? a.id : "\(a.username) (\(a.id))")
            out +=
                "  account \(name): \(plural(a.items, "item")), \(plural(a.collections, "collection")), \(plural(a.credentials, "credential"))\n"
        }
        out += "credentials by type:\n"
        for (type, count) in credentials.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) {
            out += "  \(DisplayText.escaping(type).padding(toLength: 20, withPad: " ", startingAt: 0)) \(count)\n"
        }
        out += "fields by type:\n"
        for (type, count) in fieldTypes.sorted(by: { ($1.value, $0.key) < ($0.value, $1.key) }) {
            out += "  \(DisplayText.escaping(type).padding(toLength: 28, withPad: " ", startingAt: 0)) \(count)\n"
        }
        return out
    }
}

/// Credentials counted by wire type; one without a type counts as "(no type)".
func credentialCounts(_ document: CXF.Document) -> [String: Int] {
    var counts: [String: Int] = [:]
    // Indexed, not iterated: `for item in items` would copy (retain every member of) each of
    // 100 000 items only to read its credentials' types.
    let accounts = document.accounts
    for account in accounts.indices {
        let items = accounts[account].items
        for item in items.indices {
            for credential in items[item].credentials.indices {
                let type = items[item].credentials[credential].type
                counts[type.isEmpty ? "(no type)" : type, default: 0] += 1
            }
        }
    }
    return counts
}

func plural(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

/// Stable JSON (sorted keys) followed by a newline.
func encodeJSON(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    // Encoding these plain structs cannot fail.
    return String(decoding: try! encoder.encode(value), as: UTF8.self) + "\n"
}
