/// Comma-separated values as RFC 4180 writes them, and as password managers export them: quoted
/// fields with doubled quotes, line breaks inside quotes, CRLF or LF, a UTF-8 byte-order mark.
/// The text must be UTF-8: a field that is not (a spreadsheet's Latin-1 `p\xE4ss`) is an error
/// naming its line, never a password silently changed to `p\u{FFFD}ss`.
struct CSV {
    /// A row and the line it starts on (from 1), for messages.
    struct Row {
        var line: Int
        var fields: [String]
    }

    /// Why the text is not CSV, and where.
    struct SyntaxError: Error, CustomStringConvertible {
        var line: Int
        var message: String
        var description: String { "line \(line): \(message)" }
    }

    /// Every row of `text`; blank lines are skipped.
    static func rows(_ text: [UInt8]) throws(SyntaxError) -> [Row] {
        var rows: [Row] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var line = 1
        var rowLine = 1
        var index = text.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var quoted = false
        var wasQuoted = false
        var invalid: (line: Int, byte: UInt8)?
        func endField() {
            if let text = String(validating: field, as: UTF8.self) {
                fields.append(text)
            } else {
                // Where: the first byte that is not UTF-8 (a Latin-1 or Windows-1252 letter).
                let bad = field.first { $0 >= 0x80 } ?? 0
                invalid = invalid ?? (line, bad)
                fields.append("")
            }
            field.removeAll(keepingCapacity: true)
            wasQuoted = false
        }
        func endRow() {
            endField()
            if !(fields.count == 1 && fields[0].isEmpty) { rows.append(Row(line: rowLine, fields: fields)) }
            fields.removeAll(keepingCapacity: true)
        }
        while index < text.count {
            let byte = text[index]
            index += 1
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if index < text.count, text[index] == UInt8(ascii: "\"") {
                        field.append(byte)
                        index += 1
                    } else {
                        quoted = false
                        wasQuoted = true
                    }
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1 }
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: ","):
                endField()
            case UInt8(ascii: "\r") where index < text.count && text[index] == UInt8(ascii: "\n"):
                continue
            case UInt8(ascii: "\n"):
                endRow()
                line += 1
                rowLine = line
            case UInt8(ascii: "\"") where field.isEmpty && !wasQuoted:
                quoted = true
            default:
                if wasQuoted {
                    throw SyntaxError(line: line, message: "text after a quoted field's closing quote")
                }
                field.append(byte)
            }
        }
        if quoted { throw SyntaxError(line: rowLine, message: "a quoted field is not closed by the end of the file") }
        if !field.isEmpty || !fields.isEmpty || wasQuoted { endRow() }
        if let invalid {
            let byte = String(invalid.byte, radix: 16, uppercase: true)
            throw SyntaxError(
                line: invalid.line,
                message:
                    "the text is not UTF-8 (a byte 0x\(byte), as Latin-1 or Windows-1252 write letters such as ä); save the file as UTF-8 (\"CSV UTF-8\") and import it again"
            )
        }
        return rows
    }
}
