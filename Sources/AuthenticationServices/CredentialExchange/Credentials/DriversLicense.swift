import CredentialExchangeFormat
import Foundation

extension ASImportableCredential {
    /// A driver's license.
    public struct DriversLicense: Codable, Hashable, Sendable {
        /// The holder's full name.
        public var fullName: ASImportableEditableField?
        /// The holder's date of birth, `YYYY-MM-DD`.
        public var birthDate: ASImportableEditableField?
        /// The day the license was issued, `YYYY-MM-DD`.
        public var issueDate: ASImportableEditableField?
        /// The day the license expires, `YYYY-MM-DD`.
        public var expiryDate: ASImportableEditableField?
        /// The authority that issued the license.
        public var issuingAuthority: ASImportableEditableField?
        /// The state or province of issue (an ISO 3166-2 code).
        public var territory: ASImportableEditableField?
        /// The country of issue (an ISO 3166-1 alpha-2 code).
        public var country: ASImportableEditableField?
        /// The license number.
        public var licenseNumber: ASImportableEditableField?
        /// The classes of vehicle the license covers.
        public var licenseClass: ASImportableEditableField?

        /// Creates a driver's license credential.
        public init(
            fullName: ASImportableEditableField?,
            birthDate: ASImportableEditableField?,
            issueDate: ASImportableEditableField?,
            expiryDate: ASImportableEditableField?,
            issuingAuthority: ASImportableEditableField?,
            territory: ASImportableEditableField?,
            country: ASImportableEditableField?,
            licenseNumber: ASImportableEditableField?,
            licenseClass: ASImportableEditableField?
        ) {
            self.fullName = fullName
            self.birthDate = birthDate
            self.issueDate = issueDate
            self.expiryDate = expiryDate
            self.issuingAuthority = issuingAuthority
            self.territory = territory
            self.country = country
            self.licenseNumber = licenseNumber
            self.licenseClass = licenseClass
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws { self = try Self.decodeFields(from: decoder) }
        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws { try encodeFields(to: encoder) }
    }
}

extension ASImportableCredential.DriversLicense: CXFFieldCredential {
    init() {}
    static let cxfFields = CXFFieldTable<Self, CXF.DriversLicense>([
        (\.fullName, \.fullName),
        (\.birthDate, \.birthDate),
        (\.issueDate, \.issueDate),
        (\.expiryDate, \.expiryDate),
        (\.issuingAuthority, \.issuingAuthority),
        (\.territory, \.territory),
        (\.country, \.country),
        (\.licenseNumber, \.licenseNumber),
        (\.licenseClass, \.licenseClass),
    ])
}
