import CredentialExchangeFormat
import Foundation

extension ASImportableCredential {
    /// An SSH private key.
    public struct SSHKey: Codable, Hashable, Sendable {
        /// The key's type as SSH names it, for example `ssh-ed25519`.
        public var keyType: String
        /// The private key, PKCS#8 DER.
        public var privateKey: Data
        /// The key's comment.
        public var keyComment: String?
        /// The day the key was made, `YYYY-MM-DD`.
        public var creationDate: ASImportableEditableField?
        /// The day the key expires, `YYYY-MM-DD`.
        public var expiryDate: ASImportableEditableField?
        /// What made the key.
        public var keyGenerationSource: ASImportableEditableField?

        /// Creates an SSH key credential.
        public init(
            keyType: String,
            privateKey: Data,
            keyComment: String?,
            creationDate: ASImportableEditableField?,
            expiryDate: ASImportableEditableField?,
            keyGenerationSource: ASImportableEditableField?
        ) {
            self.keyType = keyType
            self.privateKey = privateKey
            self.keyComment = keyComment
            self.creationDate = creationDate
            self.expiryDate = expiryDate
            self.keyGenerationSource = keyGenerationSource
        }
    }
}

// MARK: - CXF → AS, AS → CXF

extension CXFImporter {
    mutating func sshKey(_ c: CXF.SSHKey) -> ASImportableCredential.SSHKey {
        unknown(c.unknownMembers, in: "ASImportableCredential.SSHKey")
        return .init(
            keyType: c.keyType,
            privateKey: c.privateKey,
            keyComment: c.keyComment,
            creationDate: field(c.creationDate, "creationDate"),
            expiryDate: field(c.expiryDate, "expiryDate"),
            keyGenerationSource: field(c.keyGenerationSource, "keyGenerationSource")
        )
    }
}

extension CXF.SSHKey {
    init(_ c: ASImportableCredential.SSHKey) {
        func f(_ field: ASImportableEditableField?) -> CXF.EditableField? { field.map { CXF.EditableField($0) } }
        self.init(
            keyType: c.keyType,
            privateKey: c.privateKey,
            keyComment: c.keyComment,
            creationDate: f(c.creationDate),
            expiryDate: f(c.expiryDate),
            keyGenerationSource: f(c.keyGenerationSource)
        )
    }
}
