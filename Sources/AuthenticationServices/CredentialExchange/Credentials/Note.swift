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

        private enum CodingKeys: String, CodingKey {
            case content
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard let content = try container.decodeFieldIfPresent(forKey: .content, expected: .string) else {
                throw DecodingError.keyNotFound(
                    CodingKeys.content,
                    DecodingError.Context(codingPath: container.codingPath, debugDescription: "A note has no 'content'")
                )
            }
            self.content = content
        }

        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(content, forKey: .content)
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
