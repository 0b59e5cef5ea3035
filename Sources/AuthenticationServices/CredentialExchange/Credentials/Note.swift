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

        /// Reads CXF JSON through the CXF codec, as an import reads it (see `CXFCoding`).
        public init(from decoder: any Decoder) throws {
            self = try CXFCoding.decode(CXF.Part<CXF.Note>.schemaCredential, from: decoder) { $0.note($1) }
        }

        /// Writes CXF JSON as `CXF.Encoder` writes it.
        public func encode(to encoder: any Encoder) throws {
            try CXFCoding.encode(CXF.Part<CXF.Note>.schemaCredential, CXF.Note(self), to: encoder)
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
