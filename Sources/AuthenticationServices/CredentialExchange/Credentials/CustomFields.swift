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
