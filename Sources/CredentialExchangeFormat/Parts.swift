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

extension CXF.Part where Value: SchemaObject {
    /// An object read and written by its ``SchemaObject/members(_:_:)``: an account, an item, a credential's payload (its
    /// `type` may be there or not, and every member must read as its type)…
    package static var object: Self {
        let schema = Value.schema
        return Self(
            name: schema.name,
            read: { d throws(ScanFailure) in
                guard schema.inCredential else { return try d.object() }
                d.inCredential = true
                defer { d.inCredential = false }
                return try d.object()
            },
            write: { $0.object($1) },
            discriminator: schema.discriminator.map { $0.key.description }
        )
    }
}

extension CXF.Part where Value == CXF.Document {
    /// A whole document, either shape.
    package static var document: Self {
        Self(
            name: "a document",
            read: { d throws(ScanFailure) in try d.document() },
            write: { w, document in
                switch document {
                case .header(let header): w.object(header)
                case .account(let account): w.object(account)
                }
            }
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
            write: { $0.object($1.members) }
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
