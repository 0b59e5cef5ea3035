import CredentialExchangeFormat
import Foundation
import KeyportSystem

/// Reads what other managers export into CXF items: the format is told, or recognised from the
/// file's content (its name is only a hint for the message).
package enum Importer {
    /// The format `text` is in, from its content; `nil` when none fits.
    package static func detect(_ text: [UInt8]) -> ImportFormat? {
        let start = text.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        guard let first = text[start...].first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { return nil }
        if first == UInt8(ascii: "{") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(text[start...])) as? [String: Any] else {
                return nil
            }
            if object["items"] is [Any], object["encrypted"] as? Bool == false { return .bitwarden }
            if object["db"] != nil, object["header"] is [String: Any] { return .aegis }
            if object["services"] is [Any], object["schemaVersion"] != nil { return .twoFAS }
            // Before CXF, which also has a version: the sealed file (and, so that the reader can
            // say what they are instead, its request and key file).
            if object["hpke"] != nil || object["keyport"] as? String == EncryptedCXF.KeyFile.kind {
                return .encryptedCXF
            }
            if object["version"] != nil || object["items"] != nil { return .cxf }
            return nil
        }
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
        // so, where (a truncated export is no unknown format).
        let jsonFormats: Set<ImportFormat> = [.bitwarden, .aegis, .twoFAS]
        if format.map(jsonFormats.contains) ?? looksLikeJSON(text) {
            do {
                _ = try CXF.Decoder().decodeJSON(text)
            } catch {
                throw ImportError("the file is not valid JSON: \(error)")
            }
        }
        guard let format = format ?? detect(text) else {
            if let object = try? JSONSerialization.jsonObject(with: Data(text)) as? [String: Any],
                object["encrypted"] as? Bool == true, object["encKeyValidation_DO_NOT_EDIT"] != nil
            {
                throw ImportError(
                    "the file is an encrypted Bitwarden export, which only Bitwarden can open; export the vault again as \"JSON\" (not \"JSON (Encrypted)\"), import it, and delete that file"
                )
            }
            if text.first(where: { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }) == UInt8(ascii: "<") {
                throw ImportError(
                    "the file is XML, but no KeePass export (it has no <KeePassFile> element near its start); is it cut short?"
                )
            }
            throw ImportError(
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
            throw ImportError(error.description)
        }
        guard let key else {
            throw ImportError(
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
            throw ImportError(error.description)
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
        } catch {
            throw ImportError("the file is not CXF: \(error)")
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
