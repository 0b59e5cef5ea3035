import struct Foundation.Data

extension CXF {
    /// One part of a document — an account, an item, an editable field, a credential of one type… —
    /// read and written on its own by the same code, with the same tolerance, as inside a document.
    ///
    /// For the modules that give the CXF objects another shape (AuthenticationServices' `Codable`
    /// types, a store that keeps items one by one): they read and write through the codec, so no
    /// second reader restates its rules (defaults for missing members, spellings it accepts, what a
    /// credential must hold). A part decoded alone keeps no findings; what cannot be read as the part
    /// at all (not an object, a credential without a usable required member) throws.
    package struct Part<Value>: Sendable {
        /// "an item", "a TOTP credential": the start of an error's sentence.
        let name: String
        let read: @Sendable (inout DocumentDecoder) throws(ScanFailure) -> Value
        let write: @Sendable (inout JSONWriter, Value) -> Void
        /// The member that tells an enum's cases apart (`type` of a credential, `name` of an
        /// extension): a payload written on its own leaves it out, as Apple's payload types do.
        var discriminator: String? = nil
    }
}

extension CXF.Decoder {
    /// `bytes`, one JSON object, read as `part` within ``options``.
    ///
    /// - Throws: ``CXFDecodingError`` when the bytes are not one JSON object, exceed the limits, or
    ///   cannot be read as the part (a credential lacking a usable required member, for example).
    package func decode<Value>(_ part: CXF.Part<Value>, from bytes: [UInt8]) throws(CXFDecodingError) -> Value {
        var result: Result<Value, CXFDecodingError>!
        bytes.withUnsafeBytes { buffer in
            result = Result { () throws(CXFDecodingError) in
                try read(buffer) { decoder throws(ScanFailure) in
                    decoder.s.skipWhitespace()
                    guard decoder.s.kind == .object else {
                        throw decoder.s.syntax("\(part.name) must be a JSON object")
                    }
                    let value: Value
                    do throws(ScanFailure) {
                        value = try part.read(&decoder)
                    } catch {
                        switch error {
                        case .fatal: throw error
                        case .malformed(let why), .unsupported(let why): throw .malformed("\(part.name) \(why)")
                        }
                    }
                    decoder.s.skipWhitespace()
                    guard decoder.s.pos == decoder.s.count else {
                        throw decoder.s.syntax("unexpected \(decoder.s.describeCurrent()) after \(part.name)")
                    }
                    return value
                }
            }
        }
        return try result.get()
    }

    /// `json` read as `part`, as ``decode(_:from:)-(_,[UInt8])`` reads its text.
    package func decode<Value>(_ part: CXF.Part<Value>, from json: JSONValue) throws(CXFDecodingError) -> Value {
        try decode(part, from: CXF.Encoder().encodeJSON(json))
    }
}

extension CXF.Part {
    /// `value` written as the part, as a JSON tree (members in the encoder's order); a payload's
    /// discriminator left out.
    package func encodeJSON(_ value: Value) -> JSONValue {
        var w = JSONWriter(pretty: false, capacity: 256)
        write(&w, value)
        // The writer's output is JSON by construction: reading it back cannot fail.
        guard case .object(let members) = try! CXF.Decoder().decodeJSON(w.out) else {
            preconditionFailure("\(name) is written as a JSON object")
        }
        guard let discriminator else { return .object(members) }
        return .object(members.filter { $0.key != discriminator })
    }
}

// MARK: - The parts

extension CXF.Part where Value == CXF.Document {
    /// A whole document, either shape.
    package static var document: Self {
        Self(
            name: "a document",
            read: { d throws(ScanFailure) in try d.document() },
            write: { w, document in
                switch document {
                case .header(let header): w.header(header)
                case .account(let account): w.account(account)
                }
            }
        )
    }
}

extension CXF.Part where Value == CXF.Version {
    /// The `version` object.
    package static var version: Self {
        Self(
            name: "a version",
            read: { d throws(ScanFailure) in try d.version() },
            write: { $0.version($1) }
        )
    }
}

extension CXF.Part where Value == CXF.Account {
    /// An account.
    package static var account: Self {
        Self(
            name: "an account",
            read: { d throws(ScanFailure) in try d.account() },
            write: { $0.account($1) }
        )
    }
}

extension CXF.Part where Value == CXF.Collection {
    /// A collection.
    package static var collection: Self {
        Self(
            name: "a collection",
            read: { d throws(ScanFailure) in try d.collection() },
            write: { $0.collection($1) }
        )
    }
}

extension CXF.Part where Value == CXF.LinkedItem {
    /// A collection's reference to an item.
    package static var linkedItem: Self {
        Self(
            name: "a linked item",
            read: { d throws(ScanFailure) in try d.linkedItem() },
            write: { $0.linkedItem($1) }
        )
    }
}

extension CXF.Part where Value == CXF.Item {
    /// An item, as ``CXF/Item/json`` writes it.
    package static var item: Self {
        Self(
            name: "an item",
            read: { d throws(ScanFailure) in try d.item() },
            write: { $0.item($1) }
        )
    }
}

extension CXF.Part where Value == CXF.CredentialScope {
    /// An item's `scope`.
    package static var scope: Self {
        Self(
            name: "a scope",
            read: { d throws(ScanFailure) in try d.scope() },
            write: { $0.scope($1) }
        )
    }
}

extension CXF.Part where Value == CXF.AndroidAppIdentifier {
    /// An Android app of a scope.
    package static var androidApp: Self {
        Self(
            name: "an Android app",
            read: { d throws(ScanFailure) in try d.androidApp() },
            write: { $0.androidApp($1) }
        )
    }
}

extension CXF.Part where Value == CXF.AndroidAppCertificateFingerprint {
    /// An Android app's certificate fingerprint.
    package static var certificate: Self {
        Self(
            name: "a certificate fingerprint",
            read: { d throws(ScanFailure) in try d.certificate() },
            write: { $0.certificate($1) }
        )
    }
}

extension CXF.Part where Value == CXF.EditableField {
    /// An editable field object; `expected` stands in for a missing `fieldType`, as the member
    /// holding the field calls for.
    package static func field(expected: CXF.FieldType) -> Self {
        Self(
            name: "an editable field",
            read: { d throws(ScanFailure) in try d.fieldObject(expected: expected) },
            write: { $0.field($1) }
        )
    }
}

extension CXF.Part where Value == CXF.Extension {
    /// An extension of any name; one with an unknown name is kept verbatim.
    package static var `extension`: Self {
        Self(
            name: "an extension",
            read: { d throws(ScanFailure) in try d.extensionObject() },
            write: { $0.extensionObject($1) }
        )
    }
}

extension CXF.Part where Value == CXF.SharedExtension {
    /// The members of a `shared` extension.
    package static var sharedExtension: Self {
        Self(
            name: "a shared extension",
            read: { d throws(ScanFailure) in try d.sharedExtension() },
            write: { $0.sharedExtension($1) },
            discriminator: "name"
        )
    }
}

extension CXF.Part where Value == CXF.SharedExtension.Accessor {
    /// One accessor of a `shared` extension.
    package static var accessor: Self {
        Self(
            name: "an accessor",
            read: { d throws(ScanFailure) in try d.accessor() },
            write: { $0.accessor($1) }
        )
    }
}

extension CXF.Part where Value == CXF.Credential {
    /// A credential of any type; one of an unknown type, or that cannot be typed, is kept verbatim.
    package static var credential: Self {
        Self(
            name: "a credential",
            read: { d throws(ScanFailure) in try d.credential() },
            write: { $0.credential($1) }
        )
    }
}

extension CXF.Part {
    /// A credential's payload (or a part of one) read as one type, with a credential's rule that
    /// every member must read as its type; the `type` member may be there or not.
    fileprivate static func payload(
        _ name: String,
        discriminator: String? = "type",
        read: @escaping @Sendable (inout DocumentDecoder) throws(ScanFailure) -> Value,
        write: @escaping @Sendable (inout JSONWriter, Value) -> Void
    ) -> Self {
        Self(
            name: name,
            read: { d throws(ScanFailure) in
                d.inCredential = true
                defer { d.inCredential = false }
                return try read(&d)
            },
            write: write,
            discriminator: discriminator
        )
    }
}

extension CXF.Part where Value: SchemaCredential {
    /// A credential type described by its ``MemberSchema`` table.
    package static var schemaCredential: Self {
        payload(
            "a \(Value.type) credential",
            read: { d throws(ScanFailure) in try d.schemaCredential() },
            write: { $0.schemaCredential($1) }
        )
    }
}

extension CXF.Part where Value == CXF.Passkey {
    /// A `passkey` credential.
    package static var passkey: Self {
        payload(
            "a passkey credential",
            read: { d throws(ScanFailure) in try d.passkey() },
            write: { $0.passkey($1) }
        )
    }
}

extension CXF.Part where Value == CXF.FIDO2Extensions {
    /// A passkey's `fido2Extensions`.
    package static var fido2Extensions: Self {
        payload(
            "a passkey's fido2Extensions",
            discriminator: nil,
            read: { d throws(ScanFailure) in try d.fido2Extensions() },
            write: { $0.fido2Extensions($1) }
        )
    }
}

extension CXF.Part where Value == CXF.FIDO2Extensions.HMACCredentials {
    /// A passkey's `hmacCredentials`.
    package static var hmacCredentials: Self {
        payload(
            "a passkey's hmacCredentials",
            discriminator: nil,
            read: { d throws(ScanFailure) in try d.hmacCredentials() },
            write: { $0.hmacCredentials($1) }
        )
    }
}

extension CXF.Part where Value == CXF.FIDO2Extensions.LargeBlob {
    /// A passkey's `largeBlob`.
    package static var largeBlob: Self {
        payload(
            "a passkey's largeBlob",
            discriminator: nil,
            read: { d throws(ScanFailure) in try d.largeBlob() },
            write: { $0.largeBlob($1) }
        )
    }
}

extension CXF.Part where Value == CXF.TOTP {
    /// A `totp` credential.
    package static var totp: Self {
        payload(
            "a totp credential",
            read: { d throws(ScanFailure) in try d.totp() },
            write: { $0.totp($1) }
        )
    }
}

extension CXF.Part where Value == CXF.CustomFields {
    /// A `custom-fields` credential.
    package static var customFields: Self {
        payload(
            "a custom-fields credential",
            read: { d throws(ScanFailure) in try d.customFields() },
            write: { $0.customFields($1) }
        )
    }
}

extension CXF.Part where Value == CXF.ItemReference {
    /// An `item-reference` credential.
    package static var itemReference: Self {
        payload(
            "an item-reference credential",
            read: { d throws(ScanFailure) in try d.itemReference() },
            write: { $0.itemReference($1) }
        )
    }
}
