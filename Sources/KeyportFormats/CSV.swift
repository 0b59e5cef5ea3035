/// Comma-separated values as RFC 4180 writes them, and as password managers export them: quoted
/// fields with doubled quotes, line breaks inside quotes, CRLF or LF, a UTF-8 byte-order mark.
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
        func endField() {
            fields.append(String(decoding: field, as: UTF8.self))
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
        return rows
    }
}
