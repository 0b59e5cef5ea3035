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

extension ASExportedCredentialData {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.Document>.document, from: decoder) { try $0.document($1) }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.Document>.document, CXF.Document(self), to: encoder)
    }
}

extension ASExportedCredentialData.FormatVersion {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.Version>.object, from: decoder) { try $0.version($1) }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.Version>.object, CXF.Version(self), to: encoder)
    }
}

extension ASImportableAccount {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.Account>.object, from: decoder) { $0.account($1) }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.Account>.object, CXF.Account(self), to: encoder)
    }
}

extension ASImportableCollection {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.Collection>.object, from: decoder) { $0.collection($1) }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.Collection>.object, CXF.Collection(self), to: encoder)
    }
}

extension ASImportableCredential {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.Credential>.credential, from: decoder) { $0.credential($1) }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.Credential>.credential, CXF.Credential(self), to: encoder)
    }
}

extension ASImportableCredential.CustomFields {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.CustomFields>.object, from: decoder) { $0.customFields($1) }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.CustomFields>.object, CXF.CustomFields(self), to: encoder)
    }
}

extension ASImportableCredential.GeneratedPassword {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.GeneratedPassword>.object, from: decoder) {
            $0.generatedPassword($1)
        }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(
            CXF.Part<CXF.GeneratedPassword>.object,
            CXF.GeneratedPassword(self),
            to: encoder
        )
    }
}

extension ASImportableCredential.ItemReference {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.ItemReference>.object, from: decoder) {
            $0.itemReference($1)
        }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.ItemReference>.object, CXF.ItemReference(self), to: encoder)
    }
}

extension ASImportableCredential.Note {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.Note>.object, from: decoder) { $0.note($1) }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.Note>.object, CXF.Note(self), to: encoder)
    }
}

extension ASImportableCredential.Passkey {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.Passkey>.object, from: decoder) { $0.passkey($1) }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.Passkey>.object, CXF.Passkey(self), to: encoder)
    }
}

extension ASImportableCredential.SSHKey {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.SSHKey>.object, from: decoder) { $0.sshKey($1) }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.SSHKey>.object, CXF.SSHKey(self), to: encoder)
    }
}

extension ASImportableCredential.TOTP {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.TOTP>.object, from: decoder) { $0.totp($1) }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.TOTP>.object, CXF.TOTP(self), to: encoder)
    }
}

extension ASImportableCredentialScope {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.CredentialScope>.object, from: decoder) { $0.scope($1) }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.CredentialScope>.object, CXF.CredentialScope(self), to: encoder)
    }
}

extension ASImportableCredentialScope.AndroidAppCertificationFingerprint {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.AndroidAppCertificateFingerprint>.object, from: decoder) {
            $0.certificate($1)
        }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(
            CXF.Part<CXF.AndroidAppCertificateFingerprint>.object,
            CXF.AndroidAppCertificateFingerprint(self),
            to: encoder
        )
    }
}

extension ASImportableCredentialScope.AndroidAppID {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.AndroidAppIdentifier>.object, from: decoder) {
            $0.androidApp($1)
        }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(
            CXF.Part<CXF.AndroidAppIdentifier>.object,
            CXF.AndroidAppIdentifier(self),
            to: encoder
        )
    }
}

extension ASImportableEditableField {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.EditableField>.field(expected: .string), from: decoder) {
            $0.field($1)
        }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.EditableField>.field(expected: .string), CXF.EditableField(self), to: encoder)
    }
}

extension ASImportableExtension {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.Extension>.extension, from: decoder) { $0.itemExtension($1) }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.Extension>.extension, CXF.Extension(self), to: encoder)
    }
}

extension ASImportableExtension.Shared {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.SharedExtension>.object, from: decoder) {
            $0.sharedExtension($1)
        }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.SharedExtension>.object, CXF.SharedExtension(self), to: encoder)
    }
}

extension ASImportableExtension.Shared.SharingAccessor {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.SharedExtension.Accessor>.object, from: decoder) {
            $0.accessor($1)
        }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(
            CXF.Part<CXF.SharedExtension.Accessor>.object,
            CXF.SharedExtension.Accessor(self),
            to: encoder
        )
    }
}

extension ASImportableFIDO2Extensions {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.FIDO2Extensions>.object, from: decoder) {
            $0.fido2Extensions($1)
        }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.FIDO2Extensions>.object, CXF.FIDO2Extensions(self), to: encoder)
    }
}

extension ASImportableFIDO2HMACCredential {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.FIDO2Extensions.HMACCredentials>.object, from: decoder) {
            $0.hmacCredentials($1)
        }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(
            CXF.Part<CXF.FIDO2Extensions.HMACCredentials>.object,
            CXF.FIDO2Extensions.HMACCredentials(self),
            to: encoder
        )
    }
}

extension ASImportableFIDO2LargeBlob {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.FIDO2Extensions.LargeBlob>.object, from: decoder) {
            $0.largeBlob($1)
        }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(
            CXF.Part<CXF.FIDO2Extensions.LargeBlob>.object,
            CXF.FIDO2Extensions.LargeBlob(self),
            to: encoder
        )
    }
}

extension ASImportableItem {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.Item>.object, from: decoder) { $0.item($1) }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.Item>.object, CXF.Item(self), to: encoder)
    }
}

extension ASImportableLinkedItem {
    /// Reads CXF JSON through the CXF codec, as an import reads it.
    public init(from decoder: any Decoder) throws {
        self = try CXFCoding.decode(CXF.Part<CXF.LinkedItem>.object, from: decoder) { $0.linkedItem($1) }
    }

    /// Writes CXF JSON as `CXF.Encoder` writes it.
    public func encode(to encoder: any Encoder) throws {
        try CXFCoding.encode(CXF.Part<CXF.LinkedItem>.object, CXF.LinkedItem(self), to: encoder)
    }
}
