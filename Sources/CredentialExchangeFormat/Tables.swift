import struct Foundation.Data

// The tables of CXF 1.0's objects, in the order the specification lists their members. The
// field-only credential types' tables are generated from Schema/FieldCredentials.cxftypes.

// MARK: - The document

extension CXF.Header: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        "a header",
        // The version is never assumed: a document that does not say which major version it is
        // keeps major 0, which no reader accepts.
        blank: { Self(version: .unknown, exporterRpId: "", exporterDisplayName: "", timestamp: 0, accounts: []) },
        [
            .required(
                "version",
                { $0.version },
                { $0.version = $1 },
                .object,
                .reported(.error, "the document's version is unknown, so it cannot be read as CXF 1.x"),
                standIn: { $0 == .unknown }
            ),
            .required(
                "exporterRpId",
                { $0.exporterRpId },
                { $0.exporterRpId = $1 },
                .string,
                .assumed("it is read as empty"),
                standIn: { $0.isEmpty }
            ),
            .required(
                "exporterDisplayName",
                { $0.exporterDisplayName },
                { $0.exporterDisplayName = $1 },
                .string,
                .assumed("it is read as empty"),
                standIn: { $0.isEmpty }
            ),
            .required(
                "timestamp",
                { $0.timestamp },
                { $0.timestamp = $1 },
                .int64,
                .assumed("it is read as 0"),
                standIn: { $0 == 0 }
            ),
            .required(
                "accounts",
                { $0.accounts },
                { $0.accounts = $1 },
                .objects(),
                .assumed("it is read as an empty list"),
                standIn: { $0.isEmpty }
            ),
        ]
    )
}

extension CXF.Version: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        "a version",
        blank: { .unknown },
        [
            .required(
                "major",
                { $0.major },
                { $0.major = $1 },
                .unsigned,
                .reported(.error, "the document's version is unknown, so it cannot be read as CXF 1.x"),
                standIn: { $0 == 0 }
            ),
            .required(
                "minor",
                { $0.minor },
                { $0.minor = $1 },
                .unsigned,
                .assumed("0 is assumed"),
                standIn: { $0 == 0 }
            ),
        ]
    )
}

extension CXF.Account: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        "an account",
        blank: { Self(id: Data()) },
        [
            .required("id", { $0.id }, { $0.id = $1 }, .id, .assumed("it is read as empty"), standIn: { $0.isEmpty }),
            .required(
                "username",
                { $0.username },
                { $0.username = $1 },
                .string,
                .assumed("it is read as empty"),
                standIn: { $0.isEmpty }
            ),
            .required(
                "email",
                { $0.email },
                { $0.email = $1 },
                .string,
                .assumed("it is read as empty"),
                standIn: { $0.isEmpty }
            ),
            .optional("fullName", { $0.fullName }, { $0.fullName = $1 }, .string),
            .required(
                "collections",
                { $0.collections },
                { $0.collections = $1 },
                .objects(),
                .assumed("it is read as an empty list"),
                standIn: { $0.isEmpty }
            ),
            .required(
                "items",
                { $0.items },
                { $0.items = $1 },
                .objects(),
                .assumed("it is read as an empty list"),
                standIn: { $0.isEmpty }
            ),
            .optional("extensions", { $0.extensions }, { $0.extensions = $1 }, .extensions),
        ]
    )
}

extension CXF.Collection: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        "a collection",
        blank: { Self(id: Data(), title: "") },
        [
            .required("id", { $0.id }, { $0.id = $1 }, .id, .assumed("it is read as empty"), standIn: { $0.isEmpty }),
            .optional("creationAt", { $0.creationAt }, { $0.creationAt = $1 }, .int64),
            .optional("modifiedAt", { $0.modifiedAt }, { $0.modifiedAt = $1 }, .int64),
            .required(
                "title",
                { $0.title },
                { $0.title = $1 },
                .string,
                .assumed("it is read as empty"),
                standIn: { $0.isEmpty }
            ),
            .optional("subtitle", { $0.subtitle }, { $0.subtitle = $1 }, .string),
            .required(
                "items",
                { $0.items },
                { $0.items = $1 },
                .objects(),
                .assumed("it is read as an empty list"),
                standIn: { $0.isEmpty }
            ),
            .optional("subCollections", { $0.subCollections }, { $0.subCollections = $1 }, .objects()),
            .optional("extensions", { $0.extensions }, { $0.extensions = $1 }, .extensions),
        ]
    )
}

extension CXF.LinkedItem: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        "a linked item",
        blank: { Self(item: Data()) },
        [
            .required(
                "item",
                { $0.item },
                { $0.item = $1 },
                .id,
                .assumed("it is read as empty"),
                standIn: { $0.isEmpty }
            ),
            .optional("account", { $0.account }, { $0.account = $1 }, .id),
        ]
    )
}

extension CXF.Item: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        "an item",
        blank: { Self(id: Data(), title: "") },
        [
            .required("id", { $0.id }, { $0.id = $1 }, .id, .assumed("it is read as empty"), standIn: { $0.isEmpty }),
            .optional("creationAt", { $0.creationAt }, { $0.creationAt = $1 }, .int64),
            .optional("modifiedAt", { $0.modifiedAt }, { $0.modifiedAt = $1 }, .int64),
            .required(
                "title",
                { $0.title },
                { $0.title = $1 },
                .string,
                .assumed("it is read as empty"),
                standIn: { $0.isEmpty }
            ),
            .optional("subtitle", { $0.subtitle }, { $0.subtitle = $1 }, .string),
            .optional("favorite", { $0.favorite }, { $0.favorite = $1 }, .bool),
            .optional("scope", { $0.scope }, { $0.scope = $1 }, .object),
            .required(
                "credentials",
                { $0.credentials },
                { $0.credentials = $1 },
                .credentials,
                .assumed("it is read as an empty list"),
                standIn: { $0.isEmpty }
            ),
            .optional("tags", { $0.tags }, { $0.tags = $1 }, .strings),
            .optional("extensions", { $0.extensions }, { $0.extensions = $1 }, .extensions),
        ]
    )
}

extension CXF.CredentialScope: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        "a credential scope",
        blank: { Self() },
        [
            .required(
                "urls",
                { $0.urls },
                { $0.urls = $1 },
                .strings,
                .assumed("it is read as an empty list"),
                standIn: { $0.isEmpty }
            ),
            .required(
                "androidApps",
                { $0.androidApps },
                { $0.androidApps = $1 },
                .objects(),
                .assumed("it is read as an empty list"),
                standIn: { $0.isEmpty }
            ),
        ]
    )
}

extension CXF.AndroidAppIdentifier: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        "an Android app identifier",
        blank: { Self(bundleId: "") },
        [
            .required(
                "bundleId",
                { $0.bundleId },
                { $0.bundleId = $1 },
                .string,
                .assumed("it is read as empty"),
                standIn: { $0.isEmpty }
            ),
            .optional("certificate", { $0.certificate }, { $0.certificate = $1 }, .object),
            .optional("name", { $0.name }, { $0.name = $1 }, .string),
        ]
    )
}

extension CXF.AndroidAppCertificateFingerprint: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        "an Android app certificate fingerprint",
        blank: { Self(fingerprint: Data(), hashAlgorithm: .sha256) },
        [
            .required(
                "fingerprint",
                { $0.fingerprint },
                { $0.fingerprint = $1 },
                .bytes,
                .assumed("it is read as empty"),
                standIn: { $0.isEmpty }
            ),
            .required(
                "hashAlg",
                { $0.hashAlgorithm },
                { $0.hashAlgorithm = $1 },
                .text(HashAlgorithm.init(rawValue:), { $0.rawValue }),
                .assumed("sha256 is assumed"),
                standIn: { $0 == .sha256 }
            ),
        ]
    )
}

extension CXF.EditableField: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        "an editable field",
        blank: { Self(value: "") },
        [
            .optional("id", { $0.id }, { $0.id = $1 }, .id),
            .required(
                "fieldType",
                { $0.fieldType },
                { $0.fieldType = $1 },
                ValueCoding(
                    read: { d, _ throws(ScanFailure) in try d.fieldType() },
                    write: { $0.string($1.rawValue) }
                ),
                .assumed("the type the member calls for is assumed")
            ),
            .required(
                "value",
                { $0.value },
                { $0.value = $1 },
                ValueCoding(read: { d, _ throws(ScanFailure) in try d.fieldValue() }, write: { $0.string($1) }),
                .assumed("it is read as empty")
            ),
            .optional("label", { $0.label }, { $0.label = $1 }, .string),
            .optional("extensions", { $0.extensions }, { $0.extensions = $1 }, .extensions),
        ]
    )
}

extension CXF.SharedExtension: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        "a shared extension",
        discriminator: .init(key: "name", value: "shared"),
        blank: { Self(accessors: []) },
        [
            .required(
                "accessors",
                { $0.accessors },
                { $0.accessors = $1 },
                .objects(),
                .assumed("it is read as an empty list"),
                standIn: { $0.isEmpty }
            )
        ]
    )
}

extension CXF.SharedExtension.Accessor: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        "a shared extension's accessor",
        // The type's stand-in is no type at all: an accessor is never granted by default.
        blank: { Self(type: .unknown(""), accountId: Data(), name: "", permissions: []) },
        [
            .required(
                "type",
                { $0.type },
                { $0.type = $1 },
                .text(CXF.SharedExtension.AccessorType.init(rawValue:), { $0.rawValue }),
                .assumed("the accessor is ignored"),
                standIn: { $0.rawValue.isEmpty }
            ),
            .required(
                "accountId",
                { $0.accountId },
                { $0.accountId = $1 },
                .id,
                .assumed("it is read as empty"),
                standIn: { $0.isEmpty }
            ),
            .required(
                "name",
                { $0.name },
                { $0.name = $1 },
                .string,
                .assumed("it is read as empty"),
                standIn: { $0.isEmpty }
            ),
            .required(
                "permissions",
                { $0.permissions },
                { $0.permissions = $1 },
                ValueCoding(
                    read: { d, _ throws(ScanFailure) in
                        try d.stringArray().map { $0.map(CXF.SharedExtension.Permission.init(rawValue:)) }
                    },
                    write: { w, permissions in w.array(permissions) { $0.string($1.rawValue) } }
                ),
                .assumed("the accessor is ignored"),
                standIn: { $0.isEmpty }
            ),
        ]
    )
}

// MARK: - Credentials

extension CXF.Passkey: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        credential: "passkey",
        blank: {
            Self(credentialId: Data(), rpId: "", username: "", userDisplayName: "", userHandle: Data(), key: Data())
        },
        [
            .required("credentialId", { $0.credentialId }, { $0.credentialId = $1 }, .bytes, .refused),
            .required("rpId", { $0.rpId }, { $0.rpId = $1 }, .string, .refused),
            .required("username", { $0.username }, { $0.username = $1 }, .string, .refused),
            .required("userDisplayName", { $0.userDisplayName }, { $0.userDisplayName = $1 }, .string, .refused),
            .required("userHandle", { $0.userHandle }, { $0.userHandle = $1 }, .bytes, .refused),
            .required("key", { $0.key }, { $0.key = $1 }, .bytes, .refused),
            .optional("fido2Extensions", { $0.fido2Extensions }, { $0.fido2Extensions = $1 }, .object),
        ]
    )
}

extension CXF.FIDO2Extensions: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        "a passkey's fido2Extensions",
        inCredential: true,
        blank: { Self() },
        [
            .optional("hmacCredentials", { $0.hmacCredentials }, { $0.hmacCredentials = $1 }, .object),
            .optional("credBlob", { $0.credBlob }, { $0.credBlob = $1 }, .bytes),
            .optional("largeBlob", { $0.largeBlob }, { $0.largeBlob = $1 }, .object),
            .optional("payments", { $0.payments }, { $0.payments = $1 }, .bool),
        ]
    )
}

extension CXF.FIDO2Extensions.HMACCredentials: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        "a passkey's hmacCredentials",
        inCredential: true,
        blank: { Self(algorithm: "", credWithUV: Data(), credWithoutUV: Data()) },
        [
            .required("algorithm", { $0.algorithm }, { $0.algorithm = $1 }, .string, .refused),
            .required("credWithUV", { $0.credWithUV }, { $0.credWithUV = $1 }, .bytes, .refused),
            .required("credWithoutUV", { $0.credWithoutUV }, { $0.credWithoutUV = $1 }, .bytes, .refused),
        ]
    )
}

extension CXF.FIDO2Extensions.LargeBlob: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        "a passkey's largeBlob",
        inCredential: true,
        blank: { Self(uncompressedSize: 0, data: Data()) },
        [
            .required("uncompressedSize", { $0.uncompressedSize }, { $0.uncompressedSize = $1 }, .unsigned, .refused),
            .required("data", { $0.data }, { $0.data = $1 }, .bytes, .refused),
        ]
    )
}

extension CXF.TOTP: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        credential: "totp",
        blank: { Self(secret: "") },
        [
            .required("secret", { $0.secret }, { $0.secret = $1 }, .string, .refused),
            .required("period", { $0.period }, { $0.period = $1 }, .unsigned, .assumed("30 seconds is assumed")),
            .required("digits", { $0.digits }, { $0.digits = $1 }, .unsigned, .assumed("6 digits are assumed")),
            .optional("username", { $0.username }, { $0.username = $1 }, .string),
            .required(
                "algorithm",
                { $0.algorithm },
                { $0.algorithm = $1 },
                ValueCoding(
                    read: { d, _ throws(ScanFailure) in
                        guard let name = try d.stringValue() else { return nil }
                        // Exporters write the names in either case.
                        guard let algorithm = Algorithm(rawValue: name.lowercased()) else {
                            throw .unsupported("uses the algorithm '\(name)', which CXF 1.0 does not define")
                        }
                        return algorithm
                    },
                    write: { $0.string($1.rawValue) }
                ),
                .assumed("sha1 is assumed")
            ),
            .optional("issuer", { $0.issuer }, { $0.issuer = $1 }, .string),
        ]
    )
}

extension CXF.File: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        credential: "file",
        blank: { Self(id: Data(), name: "", decryptedSize: 0, integrityHash: Data()) },
        [
            .required("id", { $0.id }, { $0.id = $1 }, .id, .refused),
            .required("name", { $0.name }, { $0.name = $1 }, .string, .refused),
            .required("decryptedSize", { $0.decryptedSize }, { $0.decryptedSize = $1 }, .unsigned, .refused),
            .required("integrityHash", { $0.integrityHash }, { $0.integrityHash = $1 }, .bytes, .refused),
        ]
    )
}

extension CXF.CustomFields: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        credential: "custom-fields",
        blank: { Self(fields: []) },
        [
            .optional("id", { $0.id }, { $0.id = $1 }, .id),
            .optional("label", { $0.label }, { $0.label = $1 }, .string),
            .required(
                "fields",
                { $0.fields },
                { $0.fields = $1 },
                // A custom field calls for no type; one without a `fieldType` is a string.
                ValueCoding(
                    read: { d, key throws(ScanFailure) in
                        try d.objectArray(key, { d throws(ScanFailure) in try d.fieldObject(expected: .string) })
                    },
                    write: { w, fields in w.array(fields) { $0.object($1) } }
                ),
                .refused
            ),
            .optional("extensions", { $0.extensions }, { $0.extensions = $1 }, .extensions),
        ]
    )
}

extension CXF.ItemReference: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        credential: "item-reference",
        blank: { Self(reference: CXF.LinkedItem(item: Data())) },
        [.required("reference", { $0.reference }, { $0.reference = $1 }, .object, .refused)]
    )
}

extension CXF.Note: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        credential: "note",
        blank: { Self(content: CXF.EditableField(value: "")) },
        [.requiredField("content", \.content, { $0.content }, { $0.content = $1 }, .string)]
    )
}

extension CXF.GeneratedPassword: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        credential: "generated-password",
        blank: { Self(password: "") },
        [.required("password", { $0.password }, { $0.password = $1 }, .string, .refused)]
    )
}

extension CXF.SSHKey: SchemaObject {
    package static let schema = ObjectSchema<Self>(
        credential: "ssh-key",
        blank: { Self(keyType: "", privateKey: Data()) },
        [
            .required("keyType", { $0.keyType }, { $0.keyType = $1 }, .string, .refused),
            .required("privateKey", { $0.privateKey }, { $0.privateKey = $1 }, .bytes, .refused),
            .optional("keyComment", { $0.keyComment }, { $0.keyComment = $1 }, .string),
            .field("creationDate", \.creationDate, { $0.creationDate }, { $0.creationDate = $1 }, .date),
            .field("expiryDate", \.expiryDate, { $0.expiryDate }, { $0.expiryDate = $1 }, .date),
            .field(
                "keyGenerationSource",
                \.keyGenerationSource,
                { $0.keyGenerationSource },
                { $0.keyGenerationSource = $1 },
                .string
            ),
        ]
    )
}

extension ValueCoding where Value == [CXF.Credential] {
    /// An item's credentials: an element that is not an object is kept verbatim as an unrecognized
    /// credential.
    static let credentials = Self(
        read: { d, key throws(ScanFailure) in
            try d.objectArray(
                key,
                { d throws(ScanFailure) in try d.credential() },
                keep: { d, value in
                    d.report(
                        .error,
                        .malformedCredential,
                        "a credential must be an object but is \(value.kindDescription); it is kept as it was"
                    )
                    return .unrecognized(CXF.UnrecognizedCredential(object: value, reason: "not an object"))
                }
            )
        },
        write: { w, credentials in w.array(credentials) { $0.credential($1) } }
    )
}
