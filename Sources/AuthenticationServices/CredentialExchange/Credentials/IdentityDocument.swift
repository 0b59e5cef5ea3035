import CredentialExchangeFormat
import Foundation

extension ASImportableCredential {
    /// An identity document, such as a national identity card.
    public struct IdentityDocument: Codable, Hashable, Sendable {
        /// The country that issued the document (an ISO 3166-1 alpha-2 code).
        public var issuingCountry: ASImportableEditableField?
        /// The document's number.
        public var documentNumber: ASImportableEditableField?
        /// The holder's national identification number.
        public var identificationNumber: ASImportableEditableField?
        /// The holder's nationality.
        public var nationality: ASImportableEditableField?
        /// The holder's full name.
        public var fullName: ASImportableEditableField?
        /// The holder's date of birth, `YYYY-MM-DD`.
        public var birthDate: ASImportableEditableField?
        /// The holder's place of birth.
        public var birthPlace: ASImportableEditableField?
        /// The holder's sex, as written on the document.
        public var sex: ASImportableEditableField?
        /// The day the document was issued, `YYYY-MM-DD`.
        public var issueDate: ASImportableEditableField?
        /// The day the document expires, `YYYY-MM-DD`.
        public var expiryDate: ASImportableEditableField?
        /// The authority that issued the document.
        public var issuingAuthority: ASImportableEditableField?

        /// Creates an identity document credential.
        public init(
            issuingCountry: ASImportableEditableField?,
            documentNumber: ASImportableEditableField?,
            identificationNumber: ASImportableEditableField?,
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
            self.documentNumber = documentNumber
            self.identificationNumber = identificationNumber
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

extension ASImportableCredential.IdentityDocument: CXFFieldCredential {
    init() {}
    static let cxfFields = CXFFieldTable<Self, CXF.IdentityDocument>([
        (\.issuingCountry, \.issuingCountry),
        (\.documentNumber, \.documentNumber),
        (\.identificationNumber, \.identificationNumber),
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
