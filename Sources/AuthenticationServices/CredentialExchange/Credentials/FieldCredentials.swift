import CredentialExchangeFormat
import Foundation

// MARK: - The field-only credentials, derived from the CXF schema

/// One of Apple's credential types made only of optional editable fields, each the counterpart of a
/// member of a CXF credential type. Only the pairing is written here: the member's wire name and the
/// field type it calls for come from the CXF type's `ObjectSchema`, gathered from the list of
/// members the CXF decoder, encoder and validator walk too. Codable (``CXFCodable``) and the
/// conversions both ways walk ``cxfFields``.
protocol CXFFieldCredential: CXFCodable, Sendable {
    associatedtype CXFCredential: SchemaObject
    /// The credential with no fields, where decoding and conversion from CXF start.
    init()
    static var cxfFields: CXFFieldTable<Self, CXFCredential> { get }
}

/// The members of a CXF credential type in its schema's order, each with the property of Apple's type
/// that holds it.
struct CXFFieldTable<Credential, CXFCredential: SchemaObject>: Sendable {
    typealias ApplePath = WritableKeyPath<Credential, ASImportableEditableField?> & Sendable
    typealias CXFPath = WritableKeyPath<CXFCredential, CXF.EditableField?> & Sendable

    struct Entry: Sendable {
        /// The member's name on the wire.
        let key: String
        /// The field type that stands in when a field omits `fieldType`.
        let expected: ASImportableEditableField.FieldType
        let cxf: CXFPath
        /// `nil` when Apple's type has no place for the member: decoding skips it, conversion from CXF
        /// reports it left out.
        let apple: ApplePath?
    }

    let entries: [Entry]

    /// Pairs each CXF member, by its wire name, with the property of Apple's type that holds it;
    /// `lacking` names the members Apple's type has no place for. Every member of the CXF type
    /// must be an optional editable field, and named once.
    init(_ pairs: [(key: String, apple: ApplePath, cxf: CXFPath)], lacking: [(key: String, cxf: CXFPath)] = []) {
        var unpaired =
            pairs.map { (key: $0.key, apple: Optional($0.apple), cxf: $0.cxf) }
            + lacking.map { (key: $0.key, apple: nil, cxf: $0.cxf) }
        let type = CXFCredential.schema.type
        entries = CXFCredential.schema.members.map { member in
            guard member.missing == nil, let expected = member.fieldType else {
                preconditionFailure("'\(member.key)' of \(type) is not an optional editable field")
            }
            let key = member.key.description
            guard let index = unpaired.firstIndex(where: { $0.key == key }) else {
                preconditionFailure("no pair names '\(key)' of \(type)")
            }
            let pair = unpaired.remove(at: index)
            return Entry(key: key, expected: .init(expected), cxf: pair.cxf, apple: pair.apple)
        }
        precondition(unpaired.isEmpty, "a pair names a member \(type) does not have, or names one twice")
    }
}

extension CXFFieldCredential {
    var cxfValue: CXFCredential { cxfCredential }

    static func imported(_ value: CXFCredential, by importer: inout CXFImporter) -> Self? {
        importer.fields(value)
    }

    /// The CXF form of the credential.
    var cxfCredential: CXFCredential {
        var credential = CXFCredential.blank
        for entry in Self.cxfFields.entries {
            guard let apple = entry.apple else { continue }
            credential[keyPath: entry.cxf] = self[keyPath: apple].map { CXF.EditableField($0) }
        }
        return credential
    }
}

extension CXFImporter {
    /// One of Apple's field-only credentials, walked from its table: each member with a value is
    /// converted into the property paired with it, or reported left out where Apple's type has none.
    mutating func fields<Credential: CXFFieldCredential>(_ c: Credential.CXFCredential) -> Credential {
        // Every field-only type is one of the enum's payloads.
        let typeName = "ASImportableCredential.\(Credential.self)"
        unknown(c.unknownMembers, in: typeName)
        var out = Credential()
        for entry in Credential.cxfFields.entries {
            guard let field = c[keyPath: entry.cxf] else { continue }
            guard let apple = entry.apple else {
                at(entry.key) { $0.omit("the member '\(entry.key)' is left out: \(typeName) has no place for it") }
                continue
            }
            out[keyPath: apple] = at(entry.key) { $0.field(field) }
        }
        return out
    }
}

// The types themselves and their tables of pairs are generated from their one definition,
// CredentialExchangeFormat's Schema/FieldCredentials.cxftypes (the CXFTypes plugin), with the CXF
// structs they pair with: where Apple's name differs from CXF's (`userName`/`username`,
// `telephone`/`tel`) that file is the only place that says so.
