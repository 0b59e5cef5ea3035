import struct Foundation.Data

/// A CXF object whose members one function lists: ``members(_:_:)`` hands each stored member to a
/// visitor, with its name on the wire, how its value is coded and what a reader does without it.
/// The decoder, the encoder, ``CXF/Part``, the validator's field checks and ``schema`` are all
/// visitors, so they cannot disagree about an object: what each member is called, what it holds, in
/// which order it is written, and what a reader does without it.
///
/// Why a function and not a table of values: a visitor's methods are generic, so each visitor gets
/// its own copy of ``members(_:_:)`` in which every member's access and coding are direct calls —
/// the same code a reader written by hand for the object compiles to. A table of closures or key
/// paths costs an indirect call per member and was 15–25 % slower on a 100 000-item exchange.
///
/// `package`: `AuthenticationServices` derives the wire names and field types of Apple's types from
/// ``schema`` too.
package protocol SchemaObject: Sendable {
    /// What the object is called and what its members are, gathered once from ``members(_:_:)``.
    static var schema: ObjectSchema { get }
    /// A value with stand-ins in its required members, where a reader starts.
    static var blank: Self { get }
    /// Hands every member to `visitor`, in the order CXF lists them (the encoder's order; a reader
    /// accepts any). A visitor that only reads them leaves them as they were.
    mutating func members<V: MemberVisitor>(_ visitor: inout V, _ context: inout V.Context) throws(V.VisitError)
    /// Members this library does not know, written back after the listed ones.
    var unknownMembers: [JSONMember] { get set }
}

/// What walks an object's members: one call per member, in ``SchemaObject/members(_:_:)``'s order.
package protocol MemberVisitor {
    /// What the walk works on besides the object: the decoder, the writer, the validator.
    associatedtype Context
    associatedtype VisitError: Error
    /// A member the object must have; `missing` says what a reader does when it is absent.
    mutating func required<C: ValueCoder>(
        _ key: StaticString,
        _ value: inout C.Value,
        _ coder: C,
        _ missing: ObjectSchema.Missing,
        _ context: inout Context
    ) throws(VisitError)
    /// A member the object may lack.
    mutating func optional<C: ValueCoder>(
        _ key: StaticString,
        _ value: inout C.Value?,
        _ coder: C,
        _ context: inout Context
    ) throws(VisitError)
}

/// How one JSON value is read as a Swift value and written back.
package protocol ValueCoder {
    associatedtype Value
    /// `nil` when null, or when the value cannot be read (then kept verbatim or, in a credential,
    /// thrown); the key is the member's, for a nested object's path.
    func read(_ d: inout DocumentDecoder, _ key: StaticString) throws(ScanFailure) -> Value?
    func write(_ w: inout JSONWriter, _ value: Value)
    /// Whether `value` is the stand-in a reader leaves in a required member it could not read: the
    /// encoder then writes the unreadable value kept among the unknown members in its place.
    func isStandIn(_ value: Value) -> Bool
    /// The field type an editable field member calls for; `nil` for any other member.
    var fieldType: CXF.FieldType? { get }
}

extension ValueCoder {
    package func isStandIn(_ value: Value) -> Bool { false }
    package var fieldType: CXF.FieldType? { nil }
}

/// What a ``SchemaObject`` is called and its members' names and rules, for what does not read or
/// write a value: the decoder's findings for absent members, ``CXF/Part``, `AuthenticationServices`.
/// A class, so that reaching a type's schema costs one reference, not a copy of every member.
package final class ObjectSchema: Sendable {
    /// The member that names the object's type and is written first with a fixed value (`"type":
    /// "passkey"`, `"name": "shared"`). A reader skips its value, which was read to choose the type,
    /// but a repeat of it is a repeat like any member's.
    package struct Discriminator: Sendable {
        package let key: StaticString
        package let value: StaticString
    }

    /// What a reader does when a required member is absent.
    package enum Missing: Sendable {
        /// The stand-in in ``SchemaObject/blank`` serves; the finding says what it means.
        case reported(Diagnostic.Severity, String)
        /// The object cannot be read without it: a credential lacking a usable value is kept whole,
        /// verbatim.
        case refused

        /// A required member whose stand-in serves, with a warning saying what it means.
        static func assumed(_ consequence: String) -> Self { .reported(.warning, consequence) }
        /// A string or an identifier read as empty.
        static let empty = assumed("it is read as empty")
        /// A list read as empty.
        static let emptyList = assumed("it is read as an empty list")
    }

    /// One member, as ``SchemaObject/members(_:_:)`` lists it.
    package struct Member: Sendable {
        /// The member's name on the wire.
        package let key: StaticString
        /// `nil` for an optional member.
        package let missing: Missing?
        /// The field type the member calls for when it is an editable field.
        package let fieldType: CXF.FieldType?
    }

    /// "an item", "a passkey credential": the start of an error's sentence.
    let name: String
    package let discriminator: Discriminator?
    /// Part of a credential: every member must read as its type, or the credential is kept whole
    /// (``DocumentDecoder/inCredential``), and a part read alone follows that rule.
    let inCredential: Bool
    package let members: [Member]
    /// Bits of the members a reader reports or refuses when absent.
    let requiredMask: UInt64

    init<Object: SchemaObject>(
        _ name: String,
        of _: Object.Type,
        inCredential: Bool = false,
        discriminator: Discriminator? = nil
    ) {
        var list = MemberList()
        var object = Object.blank
        var none: Void = ()
        object.members(&list, &none)
        precondition(list.members.count < DocumentDecoder.discriminatorBit, "\(name) has too many members")
        self.name = name
        self.inCredential = inCredential
        self.discriminator = discriminator
        let members = list.members
        self.members = members
        requiredMask = members.indices.reduce(0) { $0 | (members[$1].missing == nil ? 0 : 1 << $1) }
    }

    /// A credential type's schema: its `type` is the discriminator.
    convenience init<Object: SchemaObject>(credential type: StaticString, of object: Object.Type) {
        let article = "aeiou".contains(type.description.first!) ? "an" : "a"
        self.init(
            "\(article) \(type) credential",
            of: object,
            inCredential: true,
            discriminator: Discriminator(key: "type", value: type)
        )
    }

    /// The credential type a credential's schema names.
    package var type: StaticString { discriminator?.value ?? "" }
}

/// Gathers an object's members (``ObjectSchema/members``) and the editable fields it holds, each
/// with the member it sits in and the field type that member calls for.
private struct MemberList: MemberVisitor {
    typealias Context = Void
    typealias VisitError = Never
    var members: [ObjectSchema.Member] = []
    var fields: [(member: String, field: CXF.EditableField, expected: CXF.FieldType?)] = []

    mutating func required<C: ValueCoder>(
        _ key: StaticString,
        _ value: inout C.Value,
        _ coder: C,
        _ missing: ObjectSchema.Missing,
        _ context: inout Void
    ) {
        add(key, missing, value as? CXF.EditableField, coder.fieldType)
    }

    mutating func optional<C: ValueCoder>(
        _ key: StaticString,
        _ value: inout C.Value?,
        _ coder: C,
        _ context: inout Void
    ) {
        add(key, nil, value as? CXF.EditableField, coder.fieldType)
    }

    private mutating func add(
        _ key: StaticString,
        _ missing: ObjectSchema.Missing?,
        _ field: CXF.EditableField?,
        _ fieldType: CXF.FieldType?
    ) {
        members.append(ObjectSchema.Member(key: key, missing: missing, fieldType: fieldType))
        if let fieldType, let field { fields.append((key.description, field, fieldType)) }
    }
}

// MARK: - Values

/// A string.
package struct StringCoder: ValueCoder {
    package func read(_ d: inout DocumentDecoder, _ key: StaticString) throws(ScanFailure) -> String? {
        try d.stringValue()
    }
    package func write(_ w: inout JSONWriter, _ value: String) { w.string(value) }
    package func isStandIn(_ value: String) -> Bool { value.isEmpty }
}

/// An array of strings.
package struct StringsCoder: ValueCoder {
    package func read(_ d: inout DocumentDecoder, _ key: StaticString) throws(ScanFailure) -> [String]? {
        try d.stringArray()
    }
    package func write(_ w: inout JSONWriter, _ value: [String]) { w.array(value) { $0.string($1) } }
    package func isStandIn(_ value: [String]) -> Bool { value.isEmpty }
}

/// Binary data, base64url on the wire; an identifier's empty value is read as a stand-in.
package struct BytesCoder: ValueCoder {
    let isID: Bool
    package func read(_ d: inout DocumentDecoder, _ key: StaticString) throws(ScanFailure) -> Data? {
        try d.bytesValue(isID: isID)
    }
    package func write(_ w: inout JSONWriter, _ value: Data) { w.bytes(value) }
    package func isStandIn(_ value: Data) -> Bool { value.isEmpty }
}

package struct Int64Coder: ValueCoder {
    package func read(_ d: inout DocumentDecoder, _ key: StaticString) throws(ScanFailure) -> Int64? {
        try d.int64Value()
    }
    package func write(_ w: inout JSONWriter, _ value: Int64) { w.int(value) }
    package func isStandIn(_ value: Int64) -> Bool { value == 0 }
}

package struct UnsignedCoder<Value: FixedWidthInteger & UnsignedInteger & Sendable>: ValueCoder {
    package func read(_ d: inout DocumentDecoder, _ key: StaticString) throws(ScanFailure) -> Value? {
        try d.unsignedValue(Value.self)
    }
    package func write(_ w: inout JSONWriter, _ value: Value) { w.uint(UInt64(value)) }
    package func isStandIn(_ value: Value) -> Bool { value == 0 }
}

package struct BoolCoder: ValueCoder {
    package func read(_ d: inout DocumentDecoder, _ key: StaticString) throws(ScanFailure) -> Bool? {
        try d.boolValue()
    }
    package func write(_ w: inout JSONWriter, _ value: Bool) { w.bool(value) }
}

/// An editable field that calls for a field type.
package struct FieldCoder: ValueCoder {
    let expected: CXF.FieldType
    package var fieldType: CXF.FieldType? { expected }
    package func read(_ d: inout DocumentDecoder, _ key: StaticString) throws(ScanFailure) -> CXF.EditableField? {
        try d.field(key, expected: expected)
    }
    package func write(_ w: inout JSONWriter, _ value: CXF.EditableField) { w.object(value.members) }
}

package struct ExtensionsCoder: ValueCoder {
    package func read(_ d: inout DocumentDecoder, _ key: StaticString) throws(ScanFailure) -> [CXF.Extension]? {
        try d.extensions()
    }
    package func write(_ w: inout JSONWriter, _ value: [CXF.Extension]) { w.extensionArray(value) }
}

/// A nested object, read and written by its own ``SchemaObject/members(_:_:)``.
package struct ObjectCoder<Value: SchemaObject>: ValueCoder {
    let standIn: ((Value) -> Bool)?
    package func read(_ d: inout DocumentDecoder, _ key: StaticString) throws(ScanFailure) -> Value? {
        try d.object(key) { d throws(ScanFailure) in try d.object() }
    }
    package func write(_ w: inout JSONWriter, _ value: Value) { w.object(value) }
    package func isStandIn(_ value: Value) -> Bool { standIn?(value) ?? false }
}

/// An array of objects, each read and written by its ``SchemaObject/members(_:_:)``.
package struct ObjectsCoder<Element: SchemaObject>: ValueCoder {
    package func read(_ d: inout DocumentDecoder, _ key: StaticString) throws(ScanFailure) -> [Element]? {
        try d.objectArray(key) { d throws(ScanFailure) in try d.object() as Element }
    }
    package func write(_ w: inout JSONWriter, _ value: [Element]) { w.array(value) { $0.object($1) } }
    package func isStandIn(_ value: [Element]) -> Bool { value.isEmpty }
}

/// A value with a coding of its own, given as closures: a string read as `Value`, a list with a
/// rule for its elements.
package struct CustomCoder<Value>: ValueCoder {
    let reader: (inout DocumentDecoder, StaticString) throws(ScanFailure) -> Value?
    let writer: (inout JSONWriter, Value) -> Void
    let standIn: ((Value) -> Bool)?

    package func read(_ d: inout DocumentDecoder, _ key: StaticString) throws(ScanFailure) -> Value? {
        try reader(&d, key)
    }
    package func write(_ w: inout JSONWriter, _ value: Value) { writer(&w, value) }
    package func isStandIn(_ value: Value) -> Bool { standIn?(value) ?? false }
}

extension ValueCoder where Self == StringCoder { static var string: Self { Self() } }
extension ValueCoder where Self == StringsCoder { static var strings: Self { Self() } }
extension ValueCoder where Self == BytesCoder {
    /// Binary data.
    static var bytes: Self { Self(isID: false) }
    /// An identifier: binary data whose empty value is read as a stand-in.
    static var id: Self { Self(isID: true) }
}
extension ValueCoder where Self == Int64Coder { static var int64: Self { Self() } }
extension ValueCoder where Self == BoolCoder { static var bool: Self { Self() } }
extension ValueCoder where Self == ExtensionsCoder { static var extensions: Self { Self() } }
extension ValueCoder where Self == FieldCoder {
    /// An editable field that calls for `expected`.
    static func field(_ expected: CXF.FieldType) -> Self { Self(expected: expected) }
}

extension ValueCoder {
    static func unsigned<Value>() -> Self where Self == UnsignedCoder<Value> { Self() }
    static func object<Value>(standIn: ((Value) -> Bool)? = nil) -> Self where Self == ObjectCoder<Value> {
        Self(standIn: standIn)
    }
    static func objects<Element>() -> Self where Self == ObjectsCoder<Element> { Self() }
    /// A string read as `Value` by `make`, written as `text`.
    static func text<Value>(
        _ make: @escaping (String) -> Value,
        _ text: @escaping (Value) -> String,
        standIn: ((Value) -> Bool)? = nil
    ) -> Self where Self == CustomCoder<Value> {
        Self(
            reader: { d, _ throws(ScanFailure) in try d.stringValue().map(make) },
            writer: { $0.string(text($1)) },
            standIn: standIn
        )
    }
    static func custom<Value>(
        read: @escaping (inout DocumentDecoder, StaticString) throws(ScanFailure) -> Value?,
        write: @escaping (inout JSONWriter, Value) -> Void,
        standIn: ((Value) -> Bool)? = nil
    ) -> Self where Self == CustomCoder<Value> {
        Self(reader: read, writer: write, standIn: standIn)
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
            var list = MemberList()
            var c = c
            var none: Void = ()
            c.members(&list, &none)
            return list.fields
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
