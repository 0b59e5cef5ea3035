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

        /// Reads CXF JSON through the CXF codec, as an import reads it (see `CXFCoding`).
        public init(from decoder: any Decoder) throws {
            self = try CXFCoding.decode(CXF.Part<CXF.ItemReference>.itemReference, from: decoder) {
                $0.itemReference($1)
            }
        }

        /// Writes CXF JSON as `CXF.Encoder` writes it.
        public func encode(to encoder: any Encoder) throws {
            try CXFCoding.encode(CXF.Part<CXF.ItemReference>.itemReference, CXF.ItemReference(self), to: encoder)
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
