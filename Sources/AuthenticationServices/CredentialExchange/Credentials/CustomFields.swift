import CredentialExchangeFormat
import Foundation

extension ASImportableCredential {
    /// A labelled group of fields of any type.
    public struct CustomFields: Codable, Hashable, Sendable {
        /// The group's identifier.
        public var id: Data?
        /// The group's label.
        public var label: String?
        /// The fields.
        public var fields: [ASImportableEditableField]

        /// Creates a group of fields.
        public init(id: Data? = nil, label: String? = nil, fields: [ASImportableEditableField]) {
            self.id = id
            self.label = label
            self.fields = fields
        }

        /// Reads CXF JSON through the CXF codec, as an import reads it (see `CXFCoding`).
        public init(from decoder: any Decoder) throws {
            self = try CXFCoding.decode(CXF.Part<CXF.CustomFields>.customFields, from: decoder) { $0.customFields($1) }
        }

        /// Writes CXF JSON as `CXF.Encoder` writes it.
        public func encode(to encoder: any Encoder) throws {
            try CXFCoding.encode(CXF.Part<CXF.CustomFields>.customFields, CXF.CustomFields(self), to: encoder)
        }
    }
}

// MARK: - CXF → AS, AS → CXF

extension CXFImporter {
    mutating func customFields(_ c: CXF.CustomFields) -> ASImportableCredential.CustomFields {
        extensions(c.extensions, on: "ASImportableCredential.CustomFields")
        unknown(c.unknownMembers, in: "ASImportableCredential.CustomFields")
        return .init(id: c.id, label: c.label, fields: each("fields", c.fields) { $0.field($1) })
    }
}

extension CXF.CustomFields {
    init(_ c: ASImportableCredential.CustomFields) {
        self.init(id: c.id, label: c.label, fields: c.fields.map { CXF.EditableField($0) })
    }
}
