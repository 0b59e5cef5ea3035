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
