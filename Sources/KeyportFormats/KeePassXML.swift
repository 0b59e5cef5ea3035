import CredentialExchangeFormat
import Foundation
import KeyportEncoding

#if canImport(FoundationXML)
import FoundationXML
#endif

/// KeePass 2's XML export (KeePass "KeePass XML (2.x)", `keepassxc-cli export --format xml`):
/// every entry of every group, with its standard strings, the others as fields, its tags, times,
/// group path, and its one-time-code secret in any of the three ways KeePass and KeePassXC keep
/// one. Earlier versions of an entry (its History) are not imported.
enum KeePassXML {
    static func read(_ text: [UInt8]) throws(ImportError) -> Imported {
        do {
            try XMLNode.checkMarkup(text)
        } catch {
            throw ImportError(.malformed, "the file is not KeePass XML Keyport reads: \(error)")
        }
        // KeePass and KeePassXC end every export with its root's end tag: a file without it was
        // cut short (a truncated copy or download), whatever else the parser makes of it.
        let content = text.lastIndex { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }.map { text[...$0] } ?? []
        guard content.reversed().starts(with: "</KeePassFile>".utf8.reversed()) else {
            throw ImportError(
                .malformed,
                "the file ends before </KeePassFile>, as no KeePass export does: it was cut short; export it again"
            )
        }
        var imported = Imported(format: .keepassXML, items: [], problems: [])
        /// Each entry is made an item as it ends and not kept (`true`): the whole tree of a large
        /// export took several times the file's size. KeePass and KeePassXC write a group's name
        /// before its entries, and its entries before its subgroups, so the path and the order are
        /// those of a walk of the whole tree.
        func take(_ node: XMLNode, _ ancestors: [XMLNode]) -> Bool {
            guard node.name == "Entry", ancestors.count >= 3, ancestors[0].name == "KeePassFile",
                ancestors[1].name == "Root", ancestors.dropFirst(2).allSatisfy({ $0.name == "Group" })
            else { return false }
            // The top group is the database itself: its name is no tag.
            let path = ancestors.dropFirst(3).map { $0.child("Name")?.text ?? "" }
            let place = "entry \(imported.items.count + imported.problems.count + 1)"
            do throws(ImportProblem) {
                imported.items.append(try item(node, path: path, place: place))
            } catch {
                imported.problems.append(error)
            }
            return true
        }
        let root: XMLNode
        do {
            // The parser reads the file's own bytes, not a copy (a 260 MB export was held twice).
            root = try text.withUnsafeBufferPointer { buffer throws(XMLNode.MarkupError) in
                guard let base = buffer.baseAddress else {
                    throw XMLNode.MarkupError(line: 1, message: "the file is empty")
                }
                let bytes = Data(
                    bytesNoCopy: UnsafeMutableRawPointer(mutating: base),
                    count: buffer.count,
                    deallocator: .none
                )
                return try XMLNode.parse(bytes, taking: take)
            }
        } catch {
            throw ImportError(.malformed, "the file is not KeePass XML: \(error)")
        }
        guard root.name == "KeePassFile", root.child("Root")?.child("Group") != nil else {
            throw ImportError(.malformed, "the file is XML but not a KeePass export (no KeePassFile/Root/Group)")
        }
        return imported
    }

    private static let standard: Set<String> = ["Title", "UserName", "Password", "URL", "Notes"]
    private static let otpKeys: Set<String> = [
        "otp", "TOTP Seed", "TOTP Settings", "TimeOtp-Secret-Base32", "TimeOtp-Length", "TimeOtp-Period",
        "TimeOtp-Algorithm", "HmacOtp-Secret-Base32", "HmacOtp-Counter",
    ]

    private static func item(_ node: XMLNode, path: [String], place: String) throws(ImportProblem) -> CXF.Item {
        var strings: [(key: String, value: String, protected: Bool)] = []
        for string in node.children where string.name == "String" {
            guard let key = string.child("Key")?.text else { continue }
            let value = string.child("Value")
            if value?.attributes["Protected"] == "True" {
                throw ImportProblem(
                    place: place,
                    message:
                        "its \(key) is encrypted with the database's stream key (a KDBX file's inner XML); export the database as XML from KeePass or KeePassXC"
                )
            }
            strings.append((key, value?.text ?? "", value?.attributes["ProtectInMemory"] == "True"))
        }
        func string(_ key: String) -> String? { strings.first { $0.key == key }?.value }
        var entry = Entry(place: place)
        entry.sourceID = node.child("UUID").flatMap { Data(base64Encoded: $0.text) }.map(Array.init)
        entry.title = string("Title") ?? ""
        entry.urls = [string("URL") ?? ""]
        entry.username = string("UserName")
        entry.password = string("Password")
        entry.notes = string("Notes")
        entry.otp = otp(string)
        entry.created = node.child("Times")?.child("CreationTime").flatMap { date($0.text) }
        entry.modified = node.child("Times")?.child("LastModificationTime").flatMap { date($0.text) }
        let groupPath = path.joined(separator: "/")
        let tags = (node.child("Tags")?.text ?? "").split(whereSeparator: { $0 == ";" || $0 == "," }).map {
            $0.trimmingWhitespace(newlines: false)
        }
        entry.tags = (groupPath.isEmpty ? [] : [groupPath]) + tags.filter { !$0.isEmpty }
        entry.fields = strings.filter { !standard.contains($0.key) && !otpKeys.contains($0.key) }.map {
            ($0.key, $0.value, $0.protected)
        }
        return try entry.item(format: .keepassXML)
    }

    /// The entry's one-time-code secret as an `otpauth://` URI: KeePassXC's `otp` (a URI, or
    /// KeeOtp's `key=…&size=…&step=…`), the older `TOTP Seed` with `TOTP Settings`
    /// (`period;digits`, `S` for Steam), or KeePass 2.47's `TimeOtp-*` and `HmacOtp-*` fields.
    private static func otp(_ string: (String) -> String?) -> String? {
        if let otp = string("otp"), !otp.isEmpty {
            guard !otp.lowercased().hasPrefix("otpauth://") else { return otp }
            var parameters: [String: String] = [:]
            for pair in otp.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                if parts.count == 2 { parameters[parts[0]] = PercentEncoding.unescape(parts[1]) ?? parts[1] }
            }
            guard let key = parameters["key"] else { return otp }
            return uri(
                secret: key,
                digits: parameters["size"],
                period: parameters["step"],
                algorithm: parameters["otpHashMode"]
            )
        }
        if let seed = string("TOTP Seed"), !seed.isEmpty {
            let settings = (string("TOTP Settings") ?? "30;6").split(separator: ";").map(String.init)
            let period = settings.first ?? "30"
            if settings.count > 1, settings[1] == "S" { return uri(secret: seed, period: period, steam: true) }
            return uri(secret: seed, digits: settings.count > 1 ? settings[1] : nil, period: period)
        }
        if let secret = string("TimeOtp-Secret-Base32"), !secret.isEmpty {
            return uri(
                secret: secret,
                digits: string("TimeOtp-Length"),
                period: string("TimeOtp-Period"),
                algorithm: string("TimeOtp-Algorithm")?.replacingOccurrences(of: "HMAC-", with: "")
            )
        }
        if let secret = string("HmacOtp-Secret-Base32"), !secret.isEmpty {
            let compact = secret.replacingOccurrences(of: " ", with: "")
            return "otpauth://hotp/KeePass?secret=\(compact)&counter=\(string("HmacOtp-Counter") ?? "0")"
        }
        return nil
    }

    private static func uri(
        secret: String,
        digits: String? = nil,
        period: String? = nil,
        algorithm: String? = nil,
        steam: Bool = false
    ) -> String {
        var text = "otpauth://totp/KeePass?secret=\(secret.replacingOccurrences(of: " ", with: ""))"
        if let digits, !steam { text += "&digits=\(digits)" }
        if let period { text += "&period=\(period)" }
        if let algorithm { text += "&algorithm=\(algorithm.replacingOccurrences(of: "-", with: ""))" }
        if steam { text += "&encoder=steam" }
        return text
    }

    /// KeePass's times: ISO 8601, or (KDBX 4) Base64 of little-endian seconds since year 1.
    private static func date(_ text: String) -> Int64? {
        if let seconds = Dates.iso8601(text) { return seconds }
        guard let bytes = Data(base64Encoded: text), bytes.count == 8 else { return nil }
        let sinceYearOne = bytes.reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }
        let (seconds, overflow) = sinceYearOne.subtractingReportingOverflow(62_135_596_800)
        return overflow ? nil : seconds
    }
}

/// A small element tree read with Foundation's XMLParser: no DTD, no entity but XML's own
/// (``checkMarkup(_:)``), elements nested 256 deep at most.
final class XMLNode {
    let name: String
    let attributes: [String: String]
    var children: [XMLNode] = []
    var text = ""

    init(name: String, attributes: [String: String]) {
        self.name = name
        self.attributes = attributes
    }

    func child(_ name: String) -> XMLNode? { children.first { $0.name == name } }

    struct MarkupError: Error, CustomStringConvertible {
        var line: Int
        var message: String
        var description: String { "line \(line): \(message)" }
    }

    /// How deep elements may nest: KeePass nests groups in groups, and a person's folders do not
    /// go 250 deep; a file that does is refused before its tree outgrows the stack.
    static let maximumDepth = 256

    /// Refuses what a KeePass export never holds and Keyport never reads, before anything is
    /// parsed, so nothing is resolved or fetched and no value is cut short at an entity the
    /// parser cannot expand: a document type declaration (with any entity declaration in it),
    /// and entity references other than XML's five (`&amp;` `&lt;` `&gt;` `&quot;` `&apos;`)
    /// and character references. Comments, processing instructions and CDATA are passed over.
    static func checkMarkup(_ text: [UInt8]) throws(MarkupError) {
        // The check reads bytes as UTF-8, so the parser must too: another encoding (UTF-16, or
        // UTF-7, where `<!` and `&` are written in other bytes) would hide what it refuses.
        if text.starts(with: [0xFE, 0xFF]) || text.starts(with: [0xFF, 0xFE]) || text.starts(with: [0, 0, 0xFE, 0xFF]) {
            throw MarkupError(line: 1, message: "the file is UTF-16 or UTF-32; KeePass exports are UTF-8")
        }
        // Checked where the bytes lie: a String made to check them was another copy of the file.
        do {
            _ = try UTF8Span(validating: text.span)
        } catch {
            let line = text[..<error.byteOffsets.lowerBound].reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            throw MarkupError(line: line, message: "the text is not UTF-8")
        }
        if let declaration = String(decoding: text.prefix(200), as: UTF8.self).split(separator: "?>").first,
            declaration.contains("<?xml"), let range = declaration.range(of: "encoding=")
        {
            let value = declaration[range.upperBound...].dropFirst().prefix { $0 != "\"" && $0 != "'" }.lowercased()
            guard value == "utf-8" || value == "utf8" else {
                throw MarkupError(
                    line: 1,
                    message: "the file declares the encoding \(value); KeePass exports are UTF-8"
                )
            }
        }
        // Over the bytes where they lie, comparing markup with memcmp: the generic `starts(with:)`
        // of a slice against a String's UTF-8 was a tenth of importing a KeePassXC export.
        try text.withUnsafeBufferPointer { buffer throws(MarkupError) in
            guard let base = buffer.baseAddress else { return }
            let count = buffer.count
            var line = 1
            var index = 0
            func starts(_ prefix: StaticString) -> Bool {
                let length = prefix.utf8CodeUnitCount
                return count - index >= length && memcmp(base + index, prefix.utf8Start, length) == 0
            }
            func skip(past end: StaticString) {
                while index < count, !starts(end) {
                    if base[index] == UInt8(ascii: "\n") { line += 1 }
                    index += 1
                }
                index = min(index + end.utf8CodeUnitCount, count)
            }
            while index < count {
                let byte = base[index]
                if byte == UInt8(ascii: "\n") {
                    line += 1
                } else if byte == UInt8(ascii: "<") {
                    if starts("<!--") {
                        skip(past: "-->")
                        continue
                    } else if starts("<![CDATA[") {
                        skip(past: "]]>")
                        continue
                    } else if starts("<?") {
                        skip(past: "?>")
                        continue
                    } else if starts("<!") {
                        throw MarkupError(
                            line: line,
                            message:
                                "a document type or entity declaration (<!…>): KeePass exports have none, and Keyport reads no DTD or entity"
                        )
                    }
                } else if byte == UInt8(ascii: "&") {
                    let name = UnsafeBufferPointer(rebasing: buffer[(index + 1)...])
                        .prefix { $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: "<") }.prefix(40)
                    let ended = index + 1 + name.count < count && base[index + 1 + name.count] == UInt8(ascii: ";")
                    let predefined = ["amp", "lt", "gt", "quot", "apos"].contains { name.elementsEqual($0.utf8) }
                    if !(ended && predefined) {
                        let reference = String(decoding: name, as: UTF8.self)
                        let isCharacter =
                            reference.hasPrefix("#x")
                            ? reference.count > 2 && reference.dropFirst(2).allSatisfy(\.isHexDigit)
                            : reference.hasPrefix("#") && reference.count > 1
                                && reference.dropFirst().allSatisfy(\.isNumber)
                        guard ended, isCharacter else {
                            throw MarkupError(
                                line: line,
                                message:
                                    "'&\(reference.prefix(20))\(ended ? ";" : "")' is not one of XML's five entities (&amp; &lt; &gt; &quot; &apos;) or a character reference; Keyport resolves no other"
                            )
                        }
                    }
                }
                index += 1
            }
        }
    }

    /// The document's tree, less the elements `take` took: it is given each element as it ends,
    /// whole, with its ancestors (outermost first), and an element it returns true for is not
    /// kept in its parent.
    static func parse(
        _ data: Data,
        taking take: (_ element: XMLNode, _ ancestors: [XMLNode]) -> Bool
    ) throws(MarkupError) -> XMLNode {
        // From a stream, which the parser reads in pieces: given the data whole, Foundation hands
        // libxml2 one chunk, which it refuses past 10 MB ("huge input lookup"), and KeePass
        // exports of a few thousand entries are larger.
        let parser = XMLParser(stream: InputStream(data: data))
        parser.shouldResolveExternalEntities = false
        var tooDeep = false
        var declared = false
        var builderIncomplete = false
        let root = withoutActuallyEscaping(take) { take in
            let builder = Builder(take: take)
            parser.delegate = builder
            let parsed = parser.parse()
            tooDeep = builder.tooDeep
            declared = builder.declared
            builderIncomplete = parsed && !builder.isComplete
            // A document that ends before its root element does is no document (a truncated
            // export), whatever the parser says.
            return parsed && builder.isComplete ? builder.root : nil
        }
        guard let root else {
            throw MarkupError(
                line: parser.lineNumber,
                message: declared
                    ? "a document type or entity declaration: Keyport reads no DTD or entity"
                    : tooDeep
                        ? "elements are nested deeper than \(maximumDepth) (groups within groups)"
                        : builderIncomplete
                            ? "the document ends before its elements do (is the file cut short?)"
                            : describe(parser.parserError, column: parser.columnNumber)
            )
        }
        return root
    }

    /// What the parser's error means, in words (Foundation's own are libxml2's numbers).
    private static func describe(_ error: (any Error)?, column: Int) -> String {
        let code = (error as NSError?)?.code.description ?? "unknown"
        return "column \(column): it is not well-formed XML (libxml2 error \(code))"
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: XMLNode?
        private var stack: [XMLNode] = []
        private let take: (XMLNode, [XMLNode]) -> Bool
        /// Whether elements nested past ``XMLNode/maximumDepth`` (parsing was stopped there).
        var tooDeep = false
        /// Whether the document declared an entity, an element, an attribute or a notation (a
        /// DTD; parsing was stopped there). ``XMLNode/checkMarkup(_:)`` refuses any before, so this
        /// is the second lock on the same door.
        var declared = false

        private func refuse(_ parser: XMLParser) {
            declared = true
            parser.abortParsing()
        }

        func parser(_ parser: XMLParser, foundInternalEntityDeclarationWithName name: String, value: String?) {
            refuse(parser)
        }

        func parser(
            _ parser: XMLParser,
            foundExternalEntityDeclarationWithName name: String,
            publicID: String?,
            systemID: String?
        ) {
            refuse(parser)
        }

        func parser(_ parser: XMLParser, foundElementDeclarationWithName elementName: String, model: String) {
            refuse(parser)
        }

        func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? {
            refuse(parser)
            return nil
        }
        /// Whether the root element ended.
        var isComplete: Bool { root != nil && stack.isEmpty }

        init(take: @escaping (XMLNode, [XMLNode]) -> Bool) {
            self.take = take
        }

        func parser(
            _ parser: XMLParser,
            didStartElement name: String,
            namespaceURI: String?,
            qualifiedName: String?,
            attributes: [String: String]
        ) {
            guard stack.count < XMLNode.maximumDepth else {
                tooDeep = true
                parser.abortParsing()
                return
            }
            let node = XMLNode(name: name, attributes: attributes)
            stack.last?.children.append(node)
            if root == nil { root = node }
            stack.append(node)
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            stack.last?.text += string
        }

        /// A CDATA section's text is text like any other (without this, the parser drops it).
        func parser(_ parser: XMLParser, foundCDATA block: Data) {
            stack.last?.text += String(decoding: block, as: UTF8.self)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            guard let node = stack.popLast() else { return }
            if take(node, stack) { stack.last?.children.removeLast() }
        }
    }
}
