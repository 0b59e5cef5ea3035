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
            throw ImportError(.malformed, "the file cannot be read as \(format.name): \(error)")
        }
        guard let header = rows.first, let known = formats.first(where: { $0.format == format }) else {
            throw ImportError(.malformed, "the file is empty: \(format.name) starts with a header row")
        }
        let names = header.fields.map { $0.trimmingWhitespace(newlines: false).lowercased() }
        let missing = known.columns.subtracting(names)
        guard missing.isEmpty else {
            throw ImportError(
                .malformed,
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
    /// `2026-11-23T18:54:20Z` (fractions and offsets allowed: `.123`, `+01:00`), seconds since
    /// 1970 (a fraction dropped toward zero, as `Int64(date.timeIntervalSince1970)` drops it);
    /// `nil` when empty or unreadable.
    ///
    /// Read by hand, strictly — the internet date-time of RFC 3339 that `ISO8601DateFormatter`
    /// reads with `.withInternetDateTime` (and `.withFractionalSeconds`), checked against it for
    /// every field's edges from 1583 on: the formatter was made and run for every time of every
    /// entry, 73 % of a KeePassXC export's import (each entry has three times, its history as
    /// many again). Earlier dates are ISO 8601's proleptic Gregorian calendar, as KeePass counts
    /// (KDBX 4's seconds from year 1), where Foundation's calendar turns Julian.
    static func iso8601(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { iso8601(UnsafeRawBufferPointer($0)) }
    }

    static func iso8601(_ t: UnsafeRawBufferPointer) -> Int64? {
        var i = 0
        /// `count` decimal digits at `i`, moved past.
        func digits(_ count: Int) -> Int? {
            guard i + count <= t.count else { return nil }
            var value = 0
            for _ in 0..<count {
                let d = t[i] &- UInt8(ascii: "0")
                guard d < 10 else { return nil }
                value = value * 10 + Int(d)
                i += 1
            }
            return value
        }
        func expect(_ byte: UInt8) -> Bool {
            guard i < t.count, t[i] == byte else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), year >= 1, expect(UInt8(ascii: "-")), let month = digits(2),
            (1...12).contains(month),
            expect(UInt8(ascii: "-")), let day = digits(2), day >= 1, day <= daysIn(month, of: year),
            i < t.count, t[i] == UInt8(ascii: "T") || t[i] == UInt8(ascii: "t")
        else { return nil }
        i += 1
        guard let hour = digits(2), hour < 24, expect(UInt8(ascii: ":")), let minute = digits(2), minute < 60,
            expect(UInt8(ascii: ":")), let second = digits(2), second < 60
        else { return nil }
        var fraction = false
        if expect(UInt8(ascii: ".")) {
            let start = i
            while i < t.count, t[i] &- UInt8(ascii: "0") < 10 {
                if t[i] != UInt8(ascii: "0") { fraction = true }
                i += 1
            }
            guard i > start else { return nil }
        }
        var offset = 0
        guard i < t.count else { return nil }
        switch t[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            i += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = t[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let hours = digits(2), hours < 24, expect(UInt8(ascii: ":")), let minutes = digits(2), minutes < 60
            else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        default:
            return nil
        }
        guard i == t.count else { return nil }
        var seconds = Int64(daysSince1970(year: year, month: month, day: day)) * 86_400
        seconds += Int64(hour * 3600 + minute * 60 + second - offset)
        // Toward zero, as the conversion from a Double did.
        if fraction, seconds < 0 { seconds += 1 }
        return seconds
    }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (the days-from-civil
    /// arithmetic: years counted from March, so the leap day ends a year).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
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
