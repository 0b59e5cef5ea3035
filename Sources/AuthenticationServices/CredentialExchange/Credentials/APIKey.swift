import CredentialExchangeFormat
import Foundation

extension ASImportableCredential {
    /// An API key. In CXF JSON `userName` is the member `username`.
    public struct APIKey: Codable, Hashable, Sendable {
        /// The key (a concealed string).
        public var key: ASImportableEditableField?
        /// The user name the key belongs to.
        public var userName: ASImportableEditableField?
        /// The kind of key.
        public var keyType: ASImportableEditableField?
        /// The service the key is for.
        public var url: ASImportableEditableField?
        /// The day the key became valid, `YYYY-MM-DD`.
        public var validFrom: ASImportableEditableField?
        /// The day the key expires, `YYYY-MM-DD`.
        public var expiryDate: ASImportableEditableField?

        /// Creates an API key credential.
        public init(
            key: ASImportableEditableField?,
            userName: ASImportableEditableField?,
            keyType: ASImportableEditableField?,
            url: ASImportableEditableField?,
            validFrom: ASImportableEditableField?,
            expiryDate: ASImportableEditableField?
        ) {
            self.key = key
            self.userName = userName
            self.keyType = keyType
            self.url = url
            self.validFrom = validFrom
            self.expiryDate = expiryDate
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws { self = try Self.decodeFields(from: decoder) }
        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws { try encodeFields(to: encoder) }
    }
}

extension ASImportableCredential.APIKey: CXFFieldCredential {
    init() {}
    static let cxfFields = CXFFieldTable<Self, CXF.APIKey>([
        (\.key, \.key),
        (\.userName, \.username),
        (\.keyType, \.keyType),
        (\.url, \.url),
        (\.validFrom, \.validFrom),
        (\.expiryDate, \.expiryDate),
    ])
}
