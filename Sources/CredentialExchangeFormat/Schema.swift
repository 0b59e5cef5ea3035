import struct Foundation.Data

/// A CXF object whose members a table describes. The decoder, the encoder, ``CXF/Part`` and the
/// validator's field checks all walk the table, so they cannot disagree about an object: what each
/// member is called, what it holds, in which order it is written, and what a reader does without it.
/// `package`: `AuthenticationServices` derives the wire names and field types of Apple's types from
/// these tables too.
package protocol SchemaObject: Sendable {
    static var schema: ObjectSchema<Self> { get }
    /// Members this library does not know, written back after the table's.
    var unknownMembers: [JSONMember] { get set }
}

/// The table of a ``SchemaObject``: its members in the order CXF lists them (the encoder's order; a
/// reader accepts any), and what the object is called. A class, so that reaching a type's table
/// for each object read or written costs one reference, not a copy of every member.
package final class ObjectSchema<Object: Sendable>: Sendable {
    /// The member that names the object's type and is written first with a fixed value (`"type":
    /// "passkey"`, `"name": "shared"`); a reader skips it, since it was read to choose the table.
    package struct Discriminator: Sendable {
        package let key: StaticString
        package let value: StaticString
    }

    /// "an item", "a passkey credential": the start of an error's sentence.
    let name: String
    package let discriminator: Discriminator?
    /// Part of a credential: every member must read as its type, or the credential is kept whole
    /// (``DocumentDecoder/inCredential``), and a part read alone follows that rule.
    let inCredential: Bool
    /// Makes a value with stand-ins in its required members, where a reader starts: made afresh
    /// each time, which costs less than copying a stored one (a copy retains every member).
    let makeBlank: @Sendable () -> Object
    /// A value with stand-ins in its required members, where a reader starts.
    package var blank: Object { makeBlank() }
    package let members: [MemberSchema<Object>]
    /// Bits of the members a reader reports or refuses when absent.
    let requiredMask: UInt64

    init(
        _ name: String,
        inCredential: Bool = false,
        discriminator: Discriminator? = nil,
        blank: @escaping @Sendable () -> Object,
        _ members: [MemberSchema<Object>]
    ) {
        precondition(members.count < DocumentDecoder.discriminatorBit, "\(name) has too many members")
        self.name = name
        self.inCredential = inCredential
        self.discriminator = discriminator
        makeBlank = blank
        self.members = members
        requiredMask = members.indices.reduce(0) { $0 | (members[$1].missing == nil ? 0 : 1 << $1) }
    }

    /// A credential type's table: its `type` is the discriminator.
    convenience init(
        credential type: StaticString,
        blank: @escaping @Sendable () -> Object,
        _ members: [MemberSchema<Object>]
    ) {
        let article = "aeiou".contains(type.description.first!) ? "an" : "a"
        self.init(
            "\(article) \(type) credential",
            inCredential: true,
            discriminator: Discriminator(key: "type", value: type),
            blank: blank,
            members
        )
    }

    /// The credential type a credential's table names.
    package var type: StaticString { discriminator?.value ?? "" }
}

/// One member of an ``ObjectSchema``: how it is read into the object and written from it.
package struct MemberSchema<Object>: Sendable {
    /// What a reader does when a required member is absent.
    enum Missing: Sendable {
        /// The stand-in in ``ObjectSchema/blank`` serves; the finding says what it means.
        case reported(Diagnostic.Severity, String)
        /// The object cannot be read without it: a credential lacking a usable value is kept whole,
        /// verbatim.
        case refused
    }

    /// The member's name on the wire.
    package let key: StaticString
    /// `nil` for an optional member.
    let missing: Missing?
    /// The editable field the member holds, for the validator and ``CXF/Credential/editableFields``.
    package let field: FieldMember<Object>?
    /// Reads the member's value at the cursor into the object; false when it gave nothing usable
    /// (null, or kept verbatim as unreadable).
    let read: @Sendable (inout DocumentDecoder, inout Object) throws(ScanFailure) -> Bool
    /// Writes the member (its key and value), or nothing when it is absent or an unreadable value
    /// kept among the unknown members stands in its place.
    let write: @Sendable (inout JSONWriter, Object, [JSONMember]) -> Void
}

/// An editable field member's place in its object and the field type it calls for.
package struct FieldMember<Object>: Sendable {
    /// The member's key path, for `AuthenticationServices` to pair Apple's properties with.
    package enum Place: Sendable {
        case optional(WritableKeyPath<Object, CXF.EditableField?> & Sendable)
        case required(WritableKeyPath<Object, CXF.EditableField> & Sendable)
    }

    package let place: Place
    package let expected: CXF.FieldType
    /// The field, read without the key path's run-time projection (the validator reads every field).
    let value: @Sendable (Object) -> CXF.EditableField?

    var isRequired: Bool {
        if case .required = place { return true }
        return false
    }
}

/// How one JSON value is read as a Swift value and written back.
struct ValueCoding<Value>: Sendable {
    /// `nil` when null, or when the value cannot be read (then kept verbatim or, in a credential,
    /// thrown); the key is the member's, for a nested object's path.
    let read: @Sendable (inout DocumentDecoder, StaticString) throws(ScanFailure) -> Value?
    let write: @Sendable (inout JSONWriter, Value) -> Void
}

// The tables give each member's value as a closure pair, `{ $0.title }` and `{ $0.title = $1 }`,
// not a key path: a key path is projected at run time (`swift_getAtKeyPath`), which made the decoder
// and encoder two to three times slower; the closures compile to direct access.
extension MemberSchema {
    /// A member the object must have. `standIn` tells the encoder that the value is the blank's
    /// stand-in, so an unreadable value kept among the unknown members is written in its place.
    static func required<Value>(
        _ key: StaticString,
        _ get: @escaping @Sendable (Object) -> Value,
        _ set: @escaping @Sendable (inout Object, consuming Value) -> Void,
        _ coding: ValueCoding<Value>,
        _ missing: Missing,
        standIn: (@Sendable (Value) -> Bool)? = nil,
        field: FieldMember<Object>? = nil
    ) -> Self {
        Self(
            key: key,
            missing: missing,
            field: field,
            read: { d, object throws(ScanFailure) in
                guard let value = try coding.read(&d, key) else { return false }
                set(&object, value)
                return true
            },
            write: { w, object, unknown in
                let value = get(object)
                if !unknown.isEmpty, let standIn, w.replaces(key, standIn: standIn(value), in: unknown) { return }
                w.key(key)
                coding.write(&w, value)
            }
        )
    }

    /// A member the object may lack.
    static func optional<Value>(
        _ key: StaticString,
        _ get: @escaping @Sendable (Object) -> Value?,
        _ set: @escaping @Sendable (inout Object, consuming Value?) -> Void,
        _ coding: ValueCoding<Value>,
        field: FieldMember<Object>? = nil
    ) -> Self {
        Self(
            key: key,
            missing: nil,
            field: field,
            read: { d, object throws(ScanFailure) in
                let value = try coding.read(&d, key)
                let got = value != nil
                set(&object, value)
                return got
            },
            write: { w, object, unknown in w.optional(key, get(object), unknown: unknown, coding.write) }
        )
    }

    /// An optional editable field that calls for `expected`.
    static func field(
        _ key: StaticString,
        _ path: WritableKeyPath<Object, CXF.EditableField?> & Sendable,
        _ get: @escaping @Sendable (Object) -> CXF.EditableField?,
        _ set: @escaping @Sendable (inout Object, consuming CXF.EditableField?) -> Void,
        _ expected: CXF.FieldType
    ) -> Self {
        let field = FieldMember(place: .optional(path), expected: expected, value: get)
        return optional(key, get, set, .field(expected), field: field)
    }

    /// An editable field the credential must have, calling for `expected`.
    static func requiredField(
        _ key: StaticString,
        _ path: WritableKeyPath<Object, CXF.EditableField> & Sendable,
        _ get: @escaping @Sendable (Object) -> CXF.EditableField,
        _ set: @escaping @Sendable (inout Object, consuming CXF.EditableField) -> Void,
        _ expected: CXF.FieldType
    ) -> Self {
        let field = FieldMember(place: .required(path), expected: expected, value: { get($0) })
        return required(key, get, set, .field(expected), .refused, field: field)
    }
}

extension MemberSchema.Missing {
    /// A required member whose stand-in serves, with a warning saying what it means.
    static func assumed(_ consequence: String) -> Self { .reported(.warning, consequence) }
}

// MARK: - Values

extension ValueCoding where Value == String {
    static let string = Self(read: { d, _ throws(ScanFailure) in try d.stringValue() }, write: { $0.string($1) })
}

extension ValueCoding where Value == [String] {
    static let strings = Self(
        read: { d, _ throws(ScanFailure) in try d.stringArray() },
        write: { w, strings in w.array(strings) { $0.string($1) } }
    )
}

extension ValueCoding where Value == Data {
    /// Binary data, base64url on the wire.
    static let bytes = Self(
        read: { d, _ throws(ScanFailure) in try d.bytesValue(isID: false) },
        write: { $0.bytes($1) }
    )
    /// An identifier: binary data whose empty value is read as a stand-in.
    static let id = Self(read: { d, _ throws(ScanFailure) in try d.bytesValue(isID: true) }, write: { $0.bytes($1) })
}

extension ValueCoding where Value == Int64 {
    static let int64 = Self(read: { d, _ throws(ScanFailure) in try d.int64Value() }, write: { $0.int($1) })
}

extension ValueCoding where Value: FixedWidthInteger & UnsignedInteger & Sendable {
    static var unsigned: Self {
        Self(
            read: { d, _ throws(ScanFailure) in try d.unsignedValue(Value.self) },
            write: { $0.uint(UInt64($1)) }
        )
    }
}

extension ValueCoding where Value == Bool {
    static let bool = Self(read: { d, _ throws(ScanFailure) in try d.boolValue() }, write: { $0.bool($1) })
}

extension ValueCoding where Value == CXF.EditableField {
    /// An editable field that calls for `expected`.
    static func field(_ expected: CXF.FieldType) -> Self {
        Self(read: { d, key throws(ScanFailure) in try d.field(key, expected: expected) }, write: { $0.object($1) })
    }
}

extension ValueCoding where Value == [CXF.Extension] {
    static let extensions = Self(
        read: { d, _ throws(ScanFailure) in try d.extensions() },
        write: { $0.extensionArray($1) }
    )
}

extension ValueCoding where Value: SchemaObject {
    /// A nested object read by its own table.
    static var object: Self {
        Self(
            read: { d, key throws(ScanFailure) in try d.object(key, { d throws(ScanFailure) in try d.object() }) },
            write: { $0.object($1) }
        )
    }
}

extension ValueCoding {
    /// An array of objects read by their table.
    static func objects<Element: SchemaObject>() -> Self where Value == [Element] {
        Self(
            read: { d, key throws(ScanFailure) in
                try d.objectArray(key, { d throws(ScanFailure) in try d.object() as Element })
            },
            write: { w, elements in w.array(elements) { $0.object($1) } }
        )
    }

    /// A string read as `Value` by `make`, written as `text`.
    static func text(
        _ make: @escaping @Sendable (String) -> Value,
        _ text: @escaping @Sendable (Value) -> String
    ) -> Self {
        Self(
            read: { d, _ throws(ScanFailure) in try d.stringValue().map(make) },
            write: { $0.string(text($1)) }
        )
    }
}

// MARK: - Editable fields

extension CXF.Credential {
    /// Every editable field the credential holds, with the member it sits in and the field type
    /// that member calls for (`nil` for a custom field, which calls for none), in member order
    /// (`custom-fields` lists its fields under "fields").
    public var editableFields: [(member: String, field: CXF.EditableField, expected: CXF.FieldType?)] {
        func collect<C: SchemaObject>(
            _ c: C
        ) -> [(member: String, field: CXF.EditableField, expected: CXF.FieldType?)] {
            C.schema.members.compactMap { member in
                guard let field = member.field, let value = field.value(c) else { return nil }
                return (member.key.description, value, field.expected)
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
