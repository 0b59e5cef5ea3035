import CredentialExchangeFormat
import Foundation
import KeyportEncoding

/// The CSV exports: each known by its header row, read by column name (never by position).
enum CSVFormats {
    /// The columns that identify each format (lowercased), and how a row becomes an entry.
    private static let formats:
        [(format: ImportFormat, columns: Set<String>, entry: @Sendable (Columns, inout Entry) -> Void)] = [
            (
                .keepassxcCSV, ["group", "title", "username", "password", "url", "notes", "totp"],
                { row, entry in
                    entry.title = row["title"]
                    entry.urls = [row["url"]]
                    entry.username = row["username"]
                    entry.password = row["password"]
                    entry.notes = row["notes"]
                    entry.otp = row["totp"]
                    entry.modified = Dates.iso8601(row["last modified"])
                    entry.created = Dates.iso8601(row["created"])
                    // KeePassXC writes the group's path from the root group ("Passwords/Work"); the
                    // root itself is no tag.
                    let path = row["group"].split(separator: "/").dropFirst().joined(separator: "/")
                    if !path.isEmpty { entry.tags = [path] }
                }
            ),
            (
                .firefoxCSV, ["url", "username", "password", "httprealm", "formactionorigin", "guid"],
                { row, entry in
                    entry.urls = [row["url"]]
                    entry.username = row["username"]
                    entry.password = row["password"]
                    entry.sourceID = UUIDBytes.parse(row["guid"])
                    entry.created = Dates.milliseconds(row["timecreated"])
                    entry.modified = Dates.milliseconds(row["timepasswordchanged"])
                }
            ),
            (
                // Safari 15 wrote no Notes column, and `Url`: names are compared without case.
                .safariCSV, ["title", "url", "username", "password", "otpauth"],
                { row, entry in
                    entry.title = row["title"]
                    entry.urls = [row["url"]]
                    entry.username = row["username"]
                    entry.password = row["password"]
                    entry.notes = row["notes"]
                    entry.otp = row["otpauth"]
                }
            ),
            (
                .chromeCSV, ["name", "url", "username", "password"],
                { row, entry in
                    entry.title = row["name"]
                    entry.urls = [row["url"]]
                    entry.username = row["username"]
                    entry.password = row["password"]
                    entry.notes = row["note"]
                }
            ),
        ]

    /// The format whose columns the header row has (the most specific first).
    static func detect(header: [String]) -> ImportFormat? {
        let names = Set(header.map { $0.trimmingWhitespace(newlines: false).lowercased() })
        return formats.first { names.isSuperset(of: $0.columns) }?.format
    }

    static func read(_ text: [UInt8], as format: ImportFormat) throws(ImportError) -> Imported {
        let rows: [CSV.Row]
        do {
            rows = try CSV.rows(text)
        } catch {
            throw ImportError("the file cannot be read as \(format.name): \(error)")
        }
        guard let header = rows.first, let known = formats.first(where: { $0.format == format }) else {
            throw ImportError("the file is empty: \(format.name) starts with a header row")
        }
        let names = header.fields.map { $0.trimmingWhitespace(newlines: false).lowercased() }
        let missing = known.columns.subtracting(names)
        guard missing.isEmpty else {
            throw ImportError(
                "line \(header.line): the header has no column \(missing.sorted().joined(separator: ", ")); this is not \(format.name)"
            )
        }
        var imported = Imported(format: format, items: [], problems: [])
        for row in rows.dropFirst() {
            let place = "line \(row.line)"
            guard row.fields.count == names.count else {
                imported.problems.append(
                    ImportProblem(
                        place: place,
                        message: "it has \(row.fields.count) fields where the header has \(names.count)"
                    )
                )
                continue
            }
            var entry = Entry(place: place)
            known.entry(Columns(names: names, fields: row.fields), &entry)
            do {
                imported.items.append(try entry.item(format: format))
            } catch {
                imported.problems.append(error)
            }
        }
        return imported
    }
}

/// A row's values by column name (lowercased); a column the row lacks is empty.
struct Columns {
    var names: [String]
    var fields: [String]

    subscript(_ name: String) -> String {
        guard let index = names.firstIndex(of: name), index < fields.count else { return "" }
        return fields[index]
    }
}

/// Times as exports write them, as CXF's seconds since 1970.
enum Dates {
    /// `2026-11-23T18:54:20Z` (fractions and offsets allowed); `nil` when empty or unreadable.
    static func iso8601(_ text: String) -> Int64? {
        guard !text.isEmpty else { return nil }
        let withFractions = ISO8601DateFormatter()
        withFractions.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = ISO8601DateFormatter().date(from: text) ?? withFractions.date(from: text) else { return nil }
        return Int64(date.timeIntervalSince1970)
    }

    /// Milliseconds since 1970, as Firefox writes them.
    static func milliseconds(_ text: String) -> Int64? { Int64(text).map { $0 / 1000 } }
}

/// A UUID's 16 bytes from its text (`{…}` and hyphens allowed), or `nil`.
enum UUIDBytes {
    static func parse(_ text: String) -> [UInt8]? {
        let trimmed = text.trimmingCharacters(in: CharacterSet(charactersIn: "{} "))
        return UUID(uuidString: trimmed).map { withUnsafeBytes(of: $0.uuid, Array.init) }
    }
}
