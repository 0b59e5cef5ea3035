import CredentialExchangeFormat
import Foundation

extension ASImportableCredential {
    /// A postal address. In CXF JSON `telephone` is the member `tel`.
    public struct Address: Codable, Hashable, Sendable {
        /// The street address; may have several lines.
        public var streetAddress: ASImportableEditableField?
        /// The postal code.
        public var postalCode: ASImportableEditableField?
        /// The city.
        public var city: ASImportableEditableField?
        /// The state, province or other subdivision (an ISO 3166-2 code).
        public var territory: ASImportableEditableField?
        /// The country (an ISO 3166-1 alpha-2 code).
        public var country: ASImportableEditableField?
        /// A telephone number.
        public var telephone: ASImportableEditableField?

        /// Creates an address credential.
        public init(
            streetAddress: ASImportableEditableField?,
            postalCode: ASImportableEditableField?,
            city: ASImportableEditableField?,
            territory: ASImportableEditableField?,
            country: ASImportableEditableField?,
            telephone: ASImportableEditableField?
        ) {
            self.streetAddress = streetAddress
            self.postalCode = postalCode
            self.city = city
            self.territory = territory
            self.country = country
            self.telephone = telephone
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws { self = try Self.decodeFields(from: decoder) }
        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws { try encodeFields(to: encoder) }
    }
}

extension ASImportableCredential.Address: CXFFieldCredential {
    init() {}
    static let cxfFields = CXFFieldTable<Self, CXF.Address>([
        (\.streetAddress, \.streetAddress),
        (\.postalCode, \.postalCode),
        (\.city, \.city),
        (\.territory, \.territory),
        (\.country, \.country),
        (\.telephone, \.tel),
    ])
}
