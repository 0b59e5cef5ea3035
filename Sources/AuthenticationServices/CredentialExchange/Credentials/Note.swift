import CredentialExchangeFormat
import Foundation

extension ASImportableCredential {
    /// Free text.
    public struct Note: Codable, Hashable, Sendable {
        /// The text.
        public var content: ASImportableEditableField

        /// Creates a note.
        public init(content: ASImportableEditableField) {
            self.content = content
        }
    }
}

// MARK: - CXF → AS, AS → CXF

extension CXFImporter {
    mutating func note(_ c: CXF.Note) -> ASImportableCredential.Note {
        unknown(c.unknownMembers, in: "ASImportableCredential.Note")
        return .init(content: at("content") { $0.field(c.content) })
    }
}

extension CXF.Note {
    init(_ c: ASImportableCredential.Note) {
        self.init(content: CXF.EditableField(c.content))
    }
}
