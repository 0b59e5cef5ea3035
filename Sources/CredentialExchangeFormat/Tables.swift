import struct Foundation.Data

// The members of CXF 1.0's objects, in the order the specification lists them. The field-only
// credential types' lists are generated from Schema/FieldCredentials.cxftypes.

// MARK: - The document

extension CXF.Header: SchemaObject {
    package static let schema = ObjectSchema("a header", of: Self.self)
    package static var blank: Self {
        Self(version: .unknown, exporterRpId: "", exporterDisplayName: "", timestamp: 0, accounts: [])
    }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        // The version is never assumed: a document that does not say which major version it is
        // keeps major 0, which no reader accepts.
        try v.required("version", &version, .object(standIn: { $0 == .unknown }), CXF.Version.unknownMissing, &c)
        try v.required("exporterRpId", &exporterRpId, .string, .empty, &c)
        try v.required("exporterDisplayName", &exporterDisplayName, .string, .empty, &c)
        try v.required("timestamp", &timestamp, .int64, .assumed("it is read as 0"), &c)
        try v.required("accounts", &accounts, .objects(), .emptyList, &c)
    }
}

extension CXF.Version: SchemaObject {
    package static let schema = ObjectSchema("a version", of: Self.self)
    package static var blank: Self { .unknown }
    static let unknownMissing = ObjectSchema.Missing.reported(
        .error,
        "the document's version is unknown, so it cannot be read as CXF 1.x"
    )

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("major", &major, .unsigned(), Self.unknownMissing, &c)
        try v.required("minor", &minor, .unsigned(), .assumed("0 is assumed"), &c)
    }
}

extension CXF.Account: SchemaObject {
    package static let schema = ObjectSchema("an account", of: Self.self)
    package static var blank: Self { Self(id: Data()) }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("id", &id, .id, .empty, &c)
        try v.required("username", &username, .string, .empty, &c)
        try v.required("email", &email, .string, .empty, &c)
        try v.optional("fullName", &fullName, .string, &c)
        try v.required("collections", &collections, .objects(), .emptyList, &c)
        try v.required("items", &items, .objects(), .emptyList, &c)
        try v.optional("extensions", &extensions, .extensions, &c)
    }
}

extension CXF.Collection: SchemaObject {
    package static let schema = ObjectSchema("a collection", of: Self.self)
    package static var blank: Self { Self(id: Data(), title: "") }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("id", &id, .id, .empty, &c)
        try v.optional("creationAt", &creationAt, .int64, &c)
        try v.optional("modifiedAt", &modifiedAt, .int64, &c)
        try v.required("title", &title, .string, .empty, &c)
        try v.optional("subtitle", &subtitle, .string, &c)
        try v.required("items", &items, .objects(), .emptyList, &c)
        try v.optional("subCollections", &subCollections, .objects(), &c)
        try v.optional("extensions", &extensions, .extensions, &c)
    }
}

extension CXF.LinkedItem: SchemaObject {
    package static let schema = ObjectSchema("a linked item", of: Self.self)
    package static var blank: Self { Self(item: Data()) }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("item", &item, .id, .empty, &c)
        try v.optional("account", &account, .id, &c)
    }
}

extension CXF.Item: SchemaObject {
    package static let schema = ObjectSchema("an item", of: Self.self)
    package static var blank: Self { Self(id: Data(), title: "") }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("id", &id, .id, .empty, &c)
        try v.optional("creationAt", &creationAt, .int64, &c)
        try v.optional("modifiedAt", &modifiedAt, .int64, &c)
        try v.required("title", &title, .string, .empty, &c)
        try v.optional("subtitle", &subtitle, .string, &c)
        try v.optional("favorite", &favorite, .bool, &c)
        try v.optional("scope", &scope, .object(), &c)
        try v.required("credentials", &credentials, .credentials, .emptyList, &c)
        try v.optional("tags", &tags, .strings, &c)
        try v.optional("extensions", &extensions, .extensions, &c)
    }
}

extension CXF.CredentialScope: SchemaObject {
    package static let schema = ObjectSchema("a credential scope", of: Self.self)
    package static var blank: Self { Self() }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("urls", &urls, .strings, .emptyList, &c)
        try v.required("androidApps", &androidApps, .objects(), .emptyList, &c)
    }
}

extension CXF.AndroidAppIdentifier: SchemaObject {
    package static let schema = ObjectSchema("an Android app identifier", of: Self.self)
    package static var blank: Self { Self(bundleId: "") }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("bundleId", &bundleId, .string, .empty, &c)
        try v.optional("certificate", &certificate, .object(), &c)
        try v.optional("name", &name, .string, &c)
    }
}

extension CXF.AndroidAppCertificateFingerprint: SchemaObject {
    package static let schema = ObjectSchema("an Android app certificate fingerprint", of: Self.self)
    package static var blank: Self { Self(fingerprint: Data(), hashAlgorithm: .sha256) }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("fingerprint", &fingerprint, .bytes, .empty, &c)
        try v.required(
            "hashAlg",
            &hashAlgorithm,
            .text(HashAlgorithm.init(rawValue:), { $0.rawValue }, standIn: { $0 == .sha256 }),
            .assumed("sha256 is assumed"),
            &c
        )
    }
}

// CXF.EditableField's members are listed in Model.swift, beside the storage that holds them.

extension CXF.SharedExtension: SchemaObject {
    package static let schema = ObjectSchema(
        "a shared extension",
        of: Self.self,
        discriminator: .init(key: "name", value: "shared")
    )
    package static var blank: Self { Self(accessors: []) }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("accessors", &accessors, .objects(), .emptyList, &c)
    }
}

extension CXF.SharedExtension.Accessor: SchemaObject {
    package static let schema = ObjectSchema("a shared extension's accessor", of: Self.self)
    /// The type's stand-in is no type at all: an accessor is never granted by default.
    package static var blank: Self { Self(type: .unknown(""), accountId: Data(), name: "", permissions: []) }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required(
            "type",
            &type,
            .text(CXF.SharedExtension.AccessorType.init(rawValue:), { $0.rawValue }, standIn: { $0.rawValue.isEmpty }),
            .assumed("the accessor is ignored"),
            &c
        )
        try v.required("accountId", &accountId, .id, .empty, &c)
        try v.required("name", &name, .string, .empty, &c)
        try v.required(
            "permissions",
            &permissions,
            .custom(
                read: { d, _ throws(ScanFailure) in
                    try d.stringArray().map { $0.map(CXF.SharedExtension.Permission.init(rawValue:)) }
                },
                write: { w, permissions in w.array(permissions) { $0.string($1.rawValue) } },
                standIn: { $0.isEmpty }
            ),
            .assumed("the accessor is ignored"),
            &c
        )
    }
}

// MARK: - Credentials

extension CXF.Passkey: SchemaObject {
    package static let schema = ObjectSchema(credential: "passkey", of: Self.self)
    package static var blank: Self {
        Self(credentialId: Data(), rpId: "", username: "", userDisplayName: "", userHandle: Data(), key: Data())
    }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("credentialId", &credentialId, .bytes, .refused, &c)
        try v.required("rpId", &rpId, .string, .refused, &c)
        try v.required("username", &username, .string, .refused, &c)
        try v.required("userDisplayName", &userDisplayName, .string, .refused, &c)
        try v.required("userHandle", &userHandle, .bytes, .refused, &c)
        try v.required("key", &key, .bytes, .refused, &c)
        try v.optional("fido2Extensions", &fido2Extensions, .object(), &c)
    }
}

extension CXF.FIDO2Extensions: SchemaObject {
    package static let schema = ObjectSchema("a passkey's fido2Extensions", of: Self.self, inCredential: true)
    package static var blank: Self { Self() }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.optional("hmacCredentials", &hmacCredentials, .object(), &c)
        try v.optional("credBlob", &credBlob, .bytes, &c)
        try v.optional("largeBlob", &largeBlob, .object(), &c)
        try v.optional("payments", &payments, .bool, &c)
    }
}

extension CXF.FIDO2Extensions.HMACCredentials: SchemaObject {
    package static let schema = ObjectSchema("a passkey's hmacCredentials", of: Self.self, inCredential: true)
    package static var blank: Self { Self(algorithm: "", credWithUV: Data(), credWithoutUV: Data()) }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("algorithm", &algorithm, .string, .refused, &c)
        try v.required("credWithUV", &credWithUV, .bytes, .refused, &c)
        try v.required("credWithoutUV", &credWithoutUV, .bytes, .refused, &c)
    }
}

extension CXF.FIDO2Extensions.LargeBlob: SchemaObject {
    package static let schema = ObjectSchema("a passkey's largeBlob", of: Self.self, inCredential: true)
    package static var blank: Self { Self(uncompressedSize: 0, data: Data()) }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("uncompressedSize", &uncompressedSize, .unsigned(), .refused, &c)
        try v.required("data", &data, .bytes, .refused, &c)
    }
}

extension CXF.TOTP: SchemaObject {
    package static let schema = ObjectSchema(credential: "totp", of: Self.self)
    package static var blank: Self { Self(secret: "") }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("secret", &secret, .string, .refused, &c)
        try v.required("period", &period, .unsigned(), .assumed("30 seconds is assumed"), &c)
        try v.required("digits", &digits, .unsigned(), .assumed("6 digits are assumed"), &c)
        try v.optional("username", &username, .string, &c)
        try v.required(
            "algorithm",
            &algorithm,
            .custom(
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
            .assumed("sha1 is assumed"),
            &c
        )
        try v.optional("issuer", &issuer, .string, &c)
    }
}

extension CXF.File: SchemaObject {
    package static let schema = ObjectSchema(credential: "file", of: Self.self)
    package static var blank: Self { Self(id: Data(), name: "", decryptedSize: 0, integrityHash: Data()) }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("id", &id, .id, .refused, &c)
        try v.required("name", &name, .string, .refused, &c)
        try v.required("decryptedSize", &decryptedSize, .unsigned(), .refused, &c)
        try v.required("integrityHash", &integrityHash, .bytes, .refused, &c)
    }
}

extension CXF.CustomFields: SchemaObject {
    package static let schema = ObjectSchema(credential: "custom-fields", of: Self.self)
    package static var blank: Self { Self(fields: []) }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.optional("id", &id, .id, &c)
        try v.optional("label", &label, .string, &c)
        try v.required(
            "fields",
            &fields,
            // A custom field calls for no type; one without a `fieldType` is a string.
            .custom(
                read: { d, key throws(ScanFailure) in
                    try d.objectArray(key) { d throws(ScanFailure) in try d.fieldObject(expected: .string) }
                },
                write: { w, fields in w.array(fields) { $0.object($1.members) } }
            ),
            .refused,
            &c
        )
        try v.optional("extensions", &extensions, .extensions, &c)
    }
}

extension CXF.ItemReference: SchemaObject {
    package static let schema = ObjectSchema(credential: "item-reference", of: Self.self)
    package static var blank: Self { Self(reference: CXF.LinkedItem(item: Data())) }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("reference", &reference, .object(), .refused, &c)
    }
}

extension CXF.Note: SchemaObject {
    package static let schema = ObjectSchema(credential: "note", of: Self.self)
    package static var blank: Self { Self(content: CXF.EditableField(value: "")) }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("content", &content, .field(.string), .refused, &c)
    }
}

extension CXF.GeneratedPassword: SchemaObject {
    package static let schema = ObjectSchema(credential: "generated-password", of: Self.self)
    package static var blank: Self { Self(password: "") }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("password", &password, .string, .refused, &c)
    }
}

extension CXF.SSHKey: SchemaObject {
    package static let schema = ObjectSchema(credential: "ssh-key", of: Self.self)
    package static var blank: Self { Self(keyType: "", privateKey: Data()) }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.required("keyType", &keyType, .string, .refused, &c)
        try v.required("privateKey", &privateKey, .bytes, .refused, &c)
        try v.optional("keyComment", &keyComment, .string, &c)
        try v.optional("creationDate", &creationDate, .field(.date), &c)
        try v.optional("expiryDate", &expiryDate, .field(.date), &c)
        try v.optional("keyGenerationSource", &keyGenerationSource, .field(.string), &c)
    }
}

extension ValueCoder where Self == CustomCoder<[CXF.Credential]> {
    /// An item's credentials: an element that is not an object is kept verbatim as an unrecognized
    /// credential.
    static var credentials: Self {
        .custom(
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
            write: { w, credentials in w.array(credentials) { $0.credential($1) } },
            standIn: { $0.isEmpty }
        )
    }
}
