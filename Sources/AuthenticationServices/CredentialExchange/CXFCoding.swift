import CredentialExchangeFormat
import Foundation

// `Codable` for Apple's types goes through the CXF codec: `init(from:)` takes the JSON the decoder
// holds, reads it as the matching part of a CXF document with `CXF.Decoder`'s rules (the defaults for
// missing members, the spellings it accepts, what a credential must hold) and converts the result as
// an import does (`CXFImporter`); `encode(to:)` converts to the CXF model and writes what
// `CXF.Encoder` writes. So a `JSONDecoder` and `ASCredentialImportManager` read a document the same
// way, and no second reader restates the codec's rules.
//
// Consequences worth knowing: dates are CXF's Unix seconds whatever the coder's date strategy; bytes
// are unpadded base64url whatever its data strategy; what Apple's types cannot hold is left out as
// `ASExportedCredentialData.init(cxf:omissions:)` reports it, silently here; a value that is not the
// part at all (not an object, a credential without a usable required member, a TOTP secret that is
// not Base32, another major version) throws `DecodingError.dataCorrupted`. What the coder itself
// decides stays its own: a coder that keeps one value per key (`JSONDecoder`) hides a repeated
// member that `CXF.Decoder` reading the bytes keeps as an error, and numbers come through as the
// coder's `Int64`, `UInt64` or `Double`.

enum CXFCoding {
    /// Reads `part` from `decoder` and converts it with `convert`, which returns `nil` (having
    /// recorded why) when Apple's type cannot hold the value at all.
    static func decode<Value, T>(
        _ part: CXF.Part<Value>,
        from decoder: any Decoder,
        _ convert: (inout CXFImporter, Value) throws -> T?
    ) throws -> T {
        let json = appleSpellings(try JSONValue(from: decoder))
        let value: Value
        do {
            value = try CXF.Decoder().decode(part, from: json)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.message, underlyingError: error)
            )
        }
        var importer = CXFImporter()
        let converted: T?
        do {
            converted = try convert(&importer, value)
        } catch DecodingError.dataCorrupted(let context) {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath + context.codingPath, debugDescription: context.debugDescription)
            )
        }
        guard let converted else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: importer.omissions.last?.reason ?? "the value cannot be imported"
                )
            )
        }
        return converted
    }

    /// `json` with Apple's spelling of a collection's `subCollections`, `subcollections` (what
    /// Apple's decoder is reported to read), renamed to CXF's in every object that lacks CXF's:
    /// `Codable` reads JSON written for Apple's types too. Only here, by presence and never by
    /// order (a coder may keep none): the CXF codec itself reads the specification's name only,
    /// so what it checks is what a reader of the specification reads.
    static func appleSpellings(_ json: JSONValue) -> JSONValue {
        switch json {
        case .array(let elements):
            return .array(elements.map(appleSpellings))
        case .object(let members):
            let hasCXFName = members.contains { $0.key == "subCollections" }
            return .object(
                members.map { member in
                    JSONMember(
                        key: member.key == "subcollections" && !hasCXFName ? "subCollections" : member.key,
                        value: appleSpellings(member.value),
                        unreadable: member.unreadable
                    )
                }
            )
        default:
            return json
        }
    }

    /// Writes `value` as `part`.
    static func encode<Value>(_ part: CXF.Part<Value>, _ value: Value, to encoder: any Encoder) throws {
        try part.encodeJSON(value).encode(to: encoder)
    }
}

// MARK: - Apple's types

/// One of Apple's CXF types: `Codable` as the part of a CXF document it converts to and from.
protocol CXFCodable: Codable {
    associatedtype CXFValue
    /// The part of a CXF document the type is read and written as.
    static var cxfPart: CXF.Part<CXFValue> { get }
    /// The value in the CXF model.
    var cxfValue: CXFValue { get }
    /// The CXF value converted as an import converts it; `nil` (with the reason in `importer`) when
    /// the type cannot hold it at all.
    static func imported(_ value: CXFValue, by importer: inout CXFImporter) throws -> Self?
}

extension CXFCodable {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws { self = try Self.decodedAsCXF(from: decoder) }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws { try encodeAsCXF(to: encoder) }

    static func decodedAsCXF(from decoder: any Decoder) throws -> Self {
        try CXFCoding.decode(cxfPart, from: decoder) { try imported($1, by: &$0) }
    }

    func encodeAsCXF(to encoder: any Encoder) throws {
        try CXFCoding.encode(Self.cxfPart, cxfValue, to: encoder)
    }
}

extension CXFCodable where CXFValue: SchemaObject {
    static var cxfPart: CXF.Part<CXFValue> { .object }
}

extension ASExportedCredentialData: CXFCodable {
    static var cxfPart: CXF.Part<CXF.Document> { .document }
    var cxfValue: CXF.Document { CXF.Document(self) }
    static func imported(_ value: CXF.Document, by importer: inout CXFImporter) throws -> Self? {
        try importer.document(value)
    }
}

extension ASExportedCredentialData.FormatVersion: CXFCodable {
    // A `String` enum has the standard library's `Codable` of its raw value, which would be chosen
    // over ``CXFCodable``'s: these say which.

    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws { self = try Self.decodedAsCXF(from: decoder) }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws { try encodeAsCXF(to: encoder) }

    var cxfValue: CXF.Version { CXF.Version(self) }
    static func imported(_ value: CXF.Version, by importer: inout CXFImporter) throws -> Self? {
        try importer.version(value)
    }
}

extension ASImportableAccount: CXFCodable {
    var cxfValue: CXF.Account { CXF.Account(self) }
    static func imported(_ value: CXF.Account, by importer: inout CXFImporter) -> Self? {
        importer.account(value)
    }
}

extension ASImportableCollection: CXFCodable {
    var cxfValue: CXF.Collection { CXF.Collection(self) }
    static func imported(_ value: CXF.Collection, by importer: inout CXFImporter) -> Self? {
        importer.collection(value)
    }
}

extension ASImportableCredential: CXFCodable {
    static var cxfPart: CXF.Part<CXF.Credential> { .credential }
    var cxfValue: CXF.Credential { CXF.Credential(self) }
    static func imported(_ value: CXF.Credential, by importer: inout CXFImporter) -> Self? {
        importer.credential(value)
    }
}

extension ASImportableCredential.CustomFields: CXFCodable {
    var cxfValue: CXF.CustomFields { CXF.CustomFields(self) }
    static func imported(_ value: CXF.CustomFields, by importer: inout CXFImporter) -> Self? {
        importer.customFields(value)
    }
}

extension ASImportableCredential.GeneratedPassword: CXFCodable {
    var cxfValue: CXF.GeneratedPassword { CXF.GeneratedPassword(self) }
    static func imported(_ value: CXF.GeneratedPassword, by importer: inout CXFImporter) -> Self? {
        importer.generatedPassword(value)
    }
}

extension ASImportableCredential.ItemReference: CXFCodable {
    var cxfValue: CXF.ItemReference { CXF.ItemReference(self) }
    static func imported(_ value: CXF.ItemReference, by importer: inout CXFImporter) -> Self? {
        importer.itemReference(value)
    }
}

extension ASImportableCredential.Note: CXFCodable {
    var cxfValue: CXF.Note { CXF.Note(self) }
    static func imported(_ value: CXF.Note, by importer: inout CXFImporter) -> Self? {
        importer.note(value)
    }
}

extension ASImportableCredential.Passkey: CXFCodable {
    var cxfValue: CXF.Passkey { CXF.Passkey(self) }
    static func imported(_ value: CXF.Passkey, by importer: inout CXFImporter) -> Self? {
        importer.passkey(value)
    }
}

extension ASImportableCredential.SSHKey: CXFCodable {
    var cxfValue: CXF.SSHKey { CXF.SSHKey(self) }
    static func imported(_ value: CXF.SSHKey, by importer: inout CXFImporter) -> Self? {
        importer.sshKey(value)
    }
}

extension ASImportableCredential.TOTP: CXFCodable {
    var cxfValue: CXF.TOTP { CXF.TOTP(self) }
    static func imported(_ value: CXF.TOTP, by importer: inout CXFImporter) -> Self? {
        importer.totp(value)
    }
}

extension ASImportableCredentialScope: CXFCodable {
    var cxfValue: CXF.CredentialScope { CXF.CredentialScope(self) }
    static func imported(_ value: CXF.CredentialScope, by importer: inout CXFImporter) -> Self? {
        importer.scope(value)
    }
}

extension ASImportableCredentialScope.AndroidAppCertificationFingerprint: CXFCodable {
    var cxfValue: CXF.AndroidAppCertificateFingerprint { CXF.AndroidAppCertificateFingerprint(self) }
    static func imported(_ value: CXF.AndroidAppCertificateFingerprint, by importer: inout CXFImporter) -> Self? {
        importer.certificate(value)
    }
}

extension ASImportableCredentialScope.AndroidAppID: CXFCodable {
    var cxfValue: CXF.AndroidAppIdentifier { CXF.AndroidAppIdentifier(self) }
    static func imported(_ value: CXF.AndroidAppIdentifier, by importer: inout CXFImporter) -> Self? {
        importer.androidApp(value)
    }
}

extension ASImportableEditableField: CXFCodable {
    static var cxfPart: CXF.Part<CXF.EditableField> { .field(expected: .string) }
    var cxfValue: CXF.EditableField { CXF.EditableField(self) }
    static func imported(_ value: CXF.EditableField, by importer: inout CXFImporter) -> Self? {
        importer.field(value)
    }
}

extension ASImportableExtension: CXFCodable {
    static var cxfPart: CXF.Part<CXF.Extension> { .extension }
    var cxfValue: CXF.Extension { CXF.Extension(self) }
    static func imported(_ value: CXF.Extension, by importer: inout CXFImporter) -> Self? {
        importer.itemExtension(value)
    }
}

extension ASImportableExtension.Shared: CXFCodable {
    var cxfValue: CXF.SharedExtension { CXF.SharedExtension(self) }
    static func imported(_ value: CXF.SharedExtension, by importer: inout CXFImporter) -> Self? {
        importer.sharedExtension(value)
    }
}

extension ASImportableExtension.Shared.SharingAccessor: CXFCodable {
    var cxfValue: CXF.SharedExtension.Accessor { CXF.SharedExtension.Accessor(self) }
    static func imported(_ value: CXF.SharedExtension.Accessor, by importer: inout CXFImporter) -> Self? {
        importer.accessor(value)
    }
}

extension ASImportableFIDO2Extensions: CXFCodable {
    var cxfValue: CXF.FIDO2Extensions { CXF.FIDO2Extensions(self) }
    static func imported(_ value: CXF.FIDO2Extensions, by importer: inout CXFImporter) -> Self? {
        importer.fido2Extensions(value)
    }
}

extension ASImportableFIDO2HMACCredential: CXFCodable {
    var cxfValue: CXF.FIDO2Extensions.HMACCredentials { CXF.FIDO2Extensions.HMACCredentials(self) }
    static func imported(_ value: CXF.FIDO2Extensions.HMACCredentials, by importer: inout CXFImporter) -> Self? {
        importer.hmacCredentials(value)
    }
}

extension ASImportableFIDO2LargeBlob: CXFCodable {
    var cxfValue: CXF.FIDO2Extensions.LargeBlob { CXF.FIDO2Extensions.LargeBlob(self) }
    static func imported(_ value: CXF.FIDO2Extensions.LargeBlob, by importer: inout CXFImporter) -> Self? {
        importer.largeBlob(value)
    }
}

extension ASImportableItem: CXFCodable {
    var cxfValue: CXF.Item { CXF.Item(self) }
    static func imported(_ value: CXF.Item, by importer: inout CXFImporter) -> Self? {
        importer.item(value)
    }
}

extension ASImportableLinkedItem: CXFCodable {
    var cxfValue: CXF.LinkedItem { CXF.LinkedItem(self) }
    static func imported(_ value: CXF.LinkedItem, by importer: inout CXFImporter) -> Self? {
        importer.linkedItem(value)
    }
}
