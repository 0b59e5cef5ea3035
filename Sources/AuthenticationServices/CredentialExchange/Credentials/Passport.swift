import CredentialExchangeFormat
import Foundation

extension ASImportableCredential {
    /// A passport.
    public struct Passport: Codable, Hashable, Sendable {
        /// The country that issued the passport (an ISO 3166-1 alpha-2 code).
        public var issuingCountry: ASImportableEditableField?
        /// The kind of passport.
        public var passportType: ASImportableEditableField?
        /// The passport's number.
        public var passportNumber: ASImportableEditableField?
        /// The holder's national identification number.
        public var nationalIdentificationNumber: ASImportableEditableField?
        /// The holder's nationality.
        public var nationality: ASImportableEditableField?
        /// The holder's full name.
        public var fullName: ASImportableEditableField?
        /// The holder's date of birth, `YYYY-MM-DD`.
        public var birthDate: ASImportableEditableField?
        /// The holder's place of birth.
        public var birthPlace: ASImportableEditableField?
        /// The holder's sex, as written in the passport.
        public var sex: ASImportableEditableField?
        /// The day the passport was issued, `YYYY-MM-DD`.
        public var issueDate: ASImportableEditableField?
        /// The day the passport expires, `YYYY-MM-DD`.
        public var expiryDate: ASImportableEditableField?
        /// The authority that issued the passport.
        public var issuingAuthority: ASImportableEditableField?

        /// Creates a passport credential.
        public init(
            issuingCountry: ASImportableEditableField?,
            passportType: ASImportableEditableField?,
            passportNumber: ASImportableEditableField?,
            nationalIdentificationNumber: ASImportableEditableField?,
            nationality: ASImportableEditableField?,
            fullName: ASImportableEditableField?,
            birthDate: ASImportableEditableField?,
            birthPlace: ASImportableEditableField?,
            sex: ASImportableEditableField?,
            issueDate: ASImportableEditableField?,
            expiryDate: ASImportableEditableField?,
            issuingAuthority: ASImportableEditableField?
        ) {
            self.issuingCountry = issuingCountry
            self.passportType = passportType
            self.passportNumber = passportNumber
            self.nationalIdentificationNumber = nationalIdentificationNumber
            self.nationality = nationality
            self.fullName = fullName
            self.birthDate = birthDate
            self.birthPlace = birthPlace
            self.sex = sex
            self.issueDate = issueDate
            self.expiryDate = expiryDate
            self.issuingAuthority = issuingAuthority
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws { self = try Self.decodeFields(from: decoder) }
        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws { try encodeFields(to: encoder) }
    }
}

extension ASImportableCredential.Passport: CXFFieldCredential {
    init() {}
    static let cxfFields = CXFFieldTable<Self, CXF.Passport>([
        (\.issuingCountry, \.issuingCountry),
        (\.passportType, \.passportType),
        (\.passportNumber, \.passportNumber),
        (\.nationalIdentificationNumber, \.nationalIdentificationNumber),
        (\.nationality, \.nationality),
        (\.fullName, \.fullName),
        (\.birthDate, \.birthDate),
        (\.birthPlace, \.birthPlace),
        (\.sex, \.sex),
        (\.issueDate, \.issueDate),
        (\.expiryDate, \.expiryDate),
        (\.issuingAuthority, \.issuingAuthority),
    ])
}
