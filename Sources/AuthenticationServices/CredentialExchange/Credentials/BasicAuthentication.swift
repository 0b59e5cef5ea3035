import CredentialExchangeFormat
import Foundation

extension ASImportableCredential {
    /// A user name and password. In CXF JSON `userName` is the member `username`.
    public struct BasicAuthentication: Codable, Hashable, Sendable {
        /// The user name. When instantiating from JSON, this property is populated from the `username` field.
        public var userName: ASImportableEditableField?
        /// The password (a concealed string).
        public var password: ASImportableEditableField?

        /// Creates a user name and password credential.
        public init(userName: ASImportableEditableField? = nil, password: ASImportableEditableField? = nil) {
            self.userName = userName
            self.password = password
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws { self = try Self.decodeFields(from: decoder) }
        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws { try encodeFields(to: encoder) }
    }
}

extension ASImportableCredential.BasicAuthentication: CXFFieldCredential {
    init() {}
    static let cxfFields = CXFFieldTable<Self, CXF.BasicAuth>([
        (\.userName, \.username),
        (\.password, \.password),
    ])
}
