import CredentialExchangeFormat
import Foundation

extension ASImportableCredential {
    /// A link to another item, whose credentials this item shares.
    public struct ItemReference: Codable, Hashable, Sendable {
        /// The item linked to.
        public var reference: ASImportableLinkedItem

        /// Creates an item reference.
        public init(reference: ASImportableLinkedItem) {
            self.reference = reference
        }

        private enum CodingKeys: String, CodingKey {
            case reference
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            reference = try container.decode(ASImportableLinkedItem.self, forKey: .reference)
        }

        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(reference, forKey: .reference)
        }
    }
}

// MARK: - CXF → AS, AS → CXF

extension CXFImporter {
    mutating func itemReference(_ c: CXF.ItemReference) -> ASImportableCredential.ItemReference {
        unknown(c.unknownMembers, in: "ASImportableCredential.ItemReference")
        return .init(reference: at("reference") { $0.linkedItem(c.reference) })
    }
}

extension CXF.ItemReference {
    init(_ c: ASImportableCredential.ItemReference) {
        self.init(reference: CXF.LinkedItem(c.reference))
    }
}
