import CredentialExchangeFormat
import Foundation
import KeyportEncoding
import KeyportSystem

/// Reads what other managers export into CXF items: the format is told, or recognised from the
/// file's content (its name is only a hint for the message).
package enum Importer {
    /// The format `text` is in, from its content; `nil` when none fits.
    ///
    /// JSON is recognised by its top-level member names and the kinds of their values, read by
    /// KeyportEncoding's `JSONReader` without building anything: a CXF document is known at its
    /// `accounts` (after its `version`), a Bitwarden export at its `items` (after `encrypted`),
    /// and other members are skipped in place. A file cut short or broken further on is
    /// recognised from what came before; its reader then says where it breaks.
    package static func detect(_ text: [UInt8]) -> ImportFormat? {
        let start = text.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        guard let first = text[start...].first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { return nil }
        if first == UInt8(ascii: "{") { return JSONPeek(text, from: start).format }
        let head = String(decoding: text[start...].prefix(4096), as: UTF8.self)
        if head.lowercased().hasPrefix("otpauth") { return .otpauth }
        if first == UInt8(ascii: "<") { return head.contains("<KeePassFile") ? .keepassXML : nil }
        var firstLine = Array(head.utf8.prefix { $0 != UInt8(ascii: "\n") })
        if firstLine.last == UInt8(ascii: "\r") { firstLine.removeLast() }
        guard let header = try? CSV.rows(firstLine).first else { return nil }
        return CSVFormats.detect(header: header.fields)
    }

    /// Reads `text` as `format` (recognised when `nil`).
    ///
    /// - Throws: ``ImportError`` when the file is not that format at all (not JSON, not XML, not
    ///   UTF-8, …), naming where; entries that cannot be read are ``Imported/problems``.
    /// `passphrase` is asked for only when the file is encrypted (Aegis); an encrypted CXF
    /// export opens with `recipientKey`, the private key it was sealed to.
    package static func read(
        _ text: [UInt8],
        format: ImportFormat? = nil,
        passphrase: (() -> SecretBytes?)? = nil,
        recipientKey: EncryptedCXF.RecipientKey? = nil
    ) throws(ImportError) -> Imported {
        // JSON is read by the formats' own decoders; a file that is not JSON at all is said to be
        // so, where (a truncated export is no unknown format). CXF's decoder says so itself, in
        // the one pass that reads the document.
        let jsonFormats: Set<ImportFormat> = [.bitwarden, .aegis, .twoFAS]
        let recognised = format ?? detect(text)
        if recognised.map(jsonFormats.contains) ?? looksLikeJSON(text) {
            do {
                _ = try CXF.Decoder().decodeJSON(text)
            } catch {
                throw ImportError(.malformed, "the file is not valid JSON: \(error)")
            }
        }
        guard let format = recognised else {
            if looksLikeJSON(text),
                JSONPeek(text, from: text.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0).isEncryptedBitwarden
            {
                throw ImportError(
                    .encrypted,
                    "the file is an encrypted Bitwarden export, which only Bitwarden can open; export the vault again as \"JSON\" (not \"JSON (Encrypted)\"), import it, and delete that file"
                )
            }
            if text.first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }) == UInt8(ascii: "<") {
                throw ImportError(
                    .malformed,
                    "the file is XML, but no KeePass export (it has no <KeePassFile> element near its start); is it cut short?"
                )
            }
            throw ImportError(
                .unrecognised,
                "the file's format is not one Keyport recognises; name it with --format (\(ImportFormat.allCases.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        switch format {
        case .cxf: return try readCXF(text)
        case .encryptedCXF: return try readEncryptedCXF(text, key: recipientKey)
        case .bitwarden: return try Bitwarden.read(text)
        case .keepassxcCSV, .chromeCSV, .firefoxCSV, .safariCSV: return try CSVFormats.read(text, as: format)
        case .keepassXML: return try KeePassXML.read(text)
        case .aegis: return try Aegis.read(text, passphrase: passphrase)
        case .twoFAS: return try TwoFAS.read(text)
        case .otpauth: return try OTPAuthList.read(text)
        }
    }

    /// Whether the text starts, after a byte-order mark and white space, with `{` or `[`.
    private static func looksLikeJSON(_ text: [UInt8]) -> Bool {
        let start = text.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let first = text[start...].first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }

    /// Reads `text` as an encrypted CXF export (checked before the key is asked for, so that a
    /// request or a key file given by mistake is named as such) and opens it with `key`.
    private static func readEncryptedCXF(
        _ text: [UInt8],
        key: EncryptedCXF.RecipientKey?
    ) throws(ImportError) -> Imported {
        let response: EncryptedCXF.Response
        do {
            response = try EncryptedCXF.Response(parsing: text)
        } catch {
            throw ImportError(.malformed, error.description)
        }
        guard let key else {
            throw ImportError(
                .encrypted,
                "the file is an encrypted CXF export: name the private key it was sealed to with --key KEYFILE "
                    + "(what keyport vault keygen wrote beside the request)"
            )
        }
        return try read(response, key: key)
    }

    /// The items of an encrypted CXF export read already (``EncryptedCXF/Response/init(parsing:)``),
    /// opened with `key`: all of them, or none when any byte of the file was changed.
    package static func read(
        _ response: EncryptedCXF.Response,
        key: EncryptedCXF.RecipientKey
    ) throws(ImportError) -> Imported {
        var document: [UInt8]
        do {
            document = try EncryptedCXF.open(response, with: key)
        } catch {
            throw ImportError(.cannotOpen, error.description)
        }
        defer { Wipe.bytes(&document) }
        var imported = try readCXF(document)
        imported.format = .encryptedCXF
        return imported
    }

    private static func readCXF(_ text: [UInt8]) throws(ImportError) -> Imported {
        let decoded: CXF.DecodedDocument
        do {
            decoded = try CXF.Decoder().decode(text)
        } catch  where error.code == .syntax {
            throw ImportError(.malformed, "the file is not valid JSON: \(error)")
        } catch {
            throw ImportError(.malformed, "the file is not CXF: \(error)")
        }
        let items: [CXF.Item] =
            switch decoded.document {
            case .header(let header): header.accounts.flatMap(\.items)
            case .account(let account): account.items
            }
        // The codec keeps what it cannot read verbatim; its findings are the document's, not lost.
        return Imported(format: .cxf, items: items, problems: [])
    }
}

/// What the top level of a JSON export says about its format, read in place with `JSONReader`:
/// the members' names and their values' kinds (and the few small values that decide), every
/// other value skipped without being built. Replaces a whole parse into Foundation's objects,
/// which took half of a 100 000-item import's time and most of its memory.
struct JSONPeek {
    private var items: JSONReader.Kind?
    private var encrypted: Bool?
    private var hasDB = false
    private var header: JSONReader.Kind?
    private var services: JSONReader.Kind?
    private var hasSchemaVersion = false
    private var hasHPKE = false
    private var keyportKind: String?
    private var hasVersion = false
    private var hasEncKeyValidation = false
    /// Decided before the object's end (its large member reached).
    private var decided: ImportFormat?

    /// Reads the object at `start` (after a byte-order mark) of `text`, as far as it needs to.
    init(_ text: [UInt8], from start: Int) {
        text.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var reader = JSONReader(base: base, count: buffer.count, position: start, maxDepth: 512)
            // A file that breaks further on keeps what was read before the break.
            try? read(&reader)
        }
    }

    private mutating func read(_ reader: inout JSONReader) throws(JSONReadFailure) {
        reader.skipWhitespace()
        try reader.enterObject()
        var first = true
        while try reader.nextKey(&first) {
            let kind = reader.kind
            if reader.keyIs("items") {
                items = kind
                // Bitwarden writes `encrypted` first, CXF writes `version` first; their `items`
                // and `accounts` are the rest of the file.
                if kind == .array, encrypted == false {
                    decided = .bitwarden
                    return
                }
            } else if reader.keyIs("accounts") {
                if kind == .array, hasVersion, encrypted == nil, !hasHPKE, !hasDB, services == nil {
                    decided = .cxf
                    return
                }
            } else if reader.keyIs("encrypted") {
                if kind == .bool {
                    encrypted = try reader.scanBool()
                    continue
                }
            } else if reader.keyIs("db") {
                hasDB = true
            } else if reader.keyIs("header") {
                header = kind
            } else if reader.keyIs("services") {
                services = kind
            } else if reader.keyIs("schemaVersion") {
                hasSchemaVersion = true
            } else if reader.keyIs("hpke") {
                hasHPKE = true
            } else if reader.keyIs("version") {
                hasVersion = true
            } else if reader.keyIs("encKeyValidation_DO_NOT_EDIT") {
                hasEncKeyValidation = true
            } else if reader.keyIs("keyport"), kind == .string {
                var invalidUTF8 = false
                keyportKind = try reader.string(try reader.scanString(), invalidUTF8: &invalidUTF8)
                continue
            }
            try reader.skipValue()
        }
    }

    /// The format, by the rules in the order they are tried.
    var format: ImportFormat? {
        if let decided { return decided }
        if items == .array, encrypted == false { return .bitwarden }
        if hasDB, header == .object { return .aegis }
        if services == .array, hasSchemaVersion { return .twoFAS }
        // Before CXF, which also has a version: the sealed file (and, so that the reader can
        // say what they are instead, its request and key file).
        if hasHPKE || keyportKind == EncryptedCXF.KeyFile.kind { return .encryptedCXF }
        if hasVersion || items != nil { return .cxf }
        return nil
    }

    /// Bitwarden's encrypted export, which only Bitwarden opens.
    var isEncryptedBitwarden: Bool { encrypted == true && hasEncKeyValidation }
}
