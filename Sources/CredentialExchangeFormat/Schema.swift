import struct Foundation.Data

/// How the codec reads and writes a credential type made only of named members. One table per type
/// drives the decoder, the encoder and the validator, so the three cannot disagree about a type.
/// `package`: `AuthenticationServices` derives the wire names and field types of Apple's types from
/// these tables too.
package struct MemberSchema<Credential>: Sendable {
    package enum Kind: Sendable {
        /// An optional editable field that should have this field type.
        case field(WritableKeyPath<Credential, CXF.EditableField?> & Sendable, CXF.FieldType)
        case requiredField(WritableKeyPath<Credential, CXF.EditableField> & Sendable, CXF.FieldType)
        /// An optional bare string.
        case string(WritableKeyPath<Credential, String?> & Sendable)
        case requiredString(WritableKeyPath<Credential, String> & Sendable)
        /// Required bytes, base64url on the wire.
        case requiredBytes(WritableKeyPath<Credential, Data> & Sendable)

        var isRequired: Bool {
            switch self {
            case .field, .string: false
            case .requiredField, .requiredString, .requiredBytes: true
            }
        }
    }

    /// The member's name on the wire.
    package let key: StaticString
    package let kind: Kind

    init(_ key: StaticString, _ kind: Kind) {
        self.key = key
        self.kind = kind
    }
}

/// A CXF credential type described by a ``MemberSchema`` table.
package protocol SchemaCredential: Sendable {
    /// The credential's `type` on the wire.
    static var type: StaticString { get }
    static var members: [MemberSchema<Self>] { get }
    /// A value with placeholders in its required members, filled in by the decoder.
    static var blank: Self { get }
    var unknownMembers: [JSONMember] { get set }
}

extension CXF.Note: SchemaCredential {
    package static let type: StaticString = "note"
    package static let blank = Self(content: CXF.EditableField(value: ""))
    package static let members: [MemberSchema<Self>] = [.init("content", .requiredField(\.content, .string))]
}

extension CXF.GeneratedPassword: SchemaCredential {
    package static let type: StaticString = "generated-password"
    package static let blank = Self(password: "")
    package static let members: [MemberSchema<Self>] = [.init("password", .requiredString(\.password))]
}

extension CXF.SSHKey: SchemaCredential {
    package static let type: StaticString = "ssh-key"
    package static let blank = Self(keyType: "", privateKey: Data())
    package static let members: [MemberSchema<Self>] = [
        .init("keyType", .requiredString(\.keyType)),
        .init("privateKey", .requiredBytes(\.privateKey)),
        .init("keyComment", .string(\.keyComment)),
        .init("creationDate", .field(\.creationDate, .date)),
        .init("expiryDate", .field(\.expiryDate, .date)),
        .init("keyGenerationSource", .field(\.keyGenerationSource, .string)),
    ]
}

extension CXF.Credential {
    /// Every editable field the credential holds, with the member it sits in and the field type
    /// that member calls for (`nil` for a custom field, which calls for none), in member order
    /// (`custom-fields` lists its fields under "fields").
    public var editableFields: [(member: String, field: CXF.EditableField, expected: CXF.FieldType?)] {
        func collect<C: SchemaCredential>(
            _ c: C
        ) -> [(member: String, field: CXF.EditableField, expected: CXF.FieldType?)] {
            C.members.compactMap { member in
                switch member.kind {
                case .field(let keyPath, let expected):
                    c[keyPath: keyPath].map { (member.key.description, $0, expected) }
                case .requiredField(let keyPath, let expected): (member.key.description, c[keyPath: keyPath], expected)
                case .string, .requiredString, .requiredBytes: nil
                }
            }
        }
        switch self {
        case .basicAuth(let c): return collect(c)
        case .note(let c): return collect(c)
        case .creditCard(let c): return collect(c)
        case .address(let c): return collect(c)
        case .apiKey(let c): return collect(c)
        case .driversLicense(let c): return collect(c)
        case .identityDocument(let c): return collect(c)
        case .passport(let c): return collect(c)
        case .personName(let c): return collect(c)
        case .generatedPassword(let c): return collect(c)
        case .sshKey(let c): return collect(c)
        case .wifi(let c): return collect(c)
        case .customFields(let c): return c.fields.map { ("fields", $0, nil) }
        case .passkey, .totp, .file, .itemReference, .unrecognized: return []
        }
    }

    /// The editable fields whose values may be secrets, decided by what the member calls for and
    /// never by the type the field declares: members that call for `concealed-string`, and every
    /// custom field (it calls for no type, and a PIN can be labelled anything). Show these
    /// redacted; the validator never quotes them.
    public var secretFields: [CXF.EditableField] {
        editableFields.compactMap {
            Self.maySecret(expected: $0.expected, declared: $0.field.fieldType) ? $0.field : nil
        }
    }

    /// The one rule for ``secretFields`` and the validator's quoting.
    static func maySecret(expected: CXF.FieldType?, declared: CXF.FieldType) -> Bool {
        expected == nil || expected == .concealedString || declared == .concealedString
    }
}
