import CredentialExchangeFormat
import Foundation

extension ASImportableCredential {
    /// A payment card.
    public struct CreditCard: Codable, Hashable, Sendable {
        /// The card number (a concealed string).
        public var number: ASImportableEditableField?
        /// The name on the card.
        public var fullName: ASImportableEditableField?
        /// The card's brand or kind, for example `Visa`.
        public var cardType: ASImportableEditableField?
        /// The card verification number (a concealed string).
        public var verificationNumber: ASImportableEditableField?
        /// The card's PIN (a concealed string).
        public var pin: ASImportableEditableField?
        /// The month the card expires, `YYYY-MM`.
        public var expiryDate: ASImportableEditableField?
        /// The month the card became valid, `YYYY-MM`.
        public var validFrom: ASImportableEditableField?

        /// Creates a payment card credential.
        public init(
            number: ASImportableEditableField?,
            fullName: ASImportableEditableField?,
            cardType: ASImportableEditableField?,
            verificationNumber: ASImportableEditableField?,
            pin: ASImportableEditableField?,
            expiryDate: ASImportableEditableField?,
            validFrom: ASImportableEditableField?
        ) {
            self.number = number
            self.fullName = fullName
            self.cardType = cardType
            self.verificationNumber = verificationNumber
            self.pin = pin
            self.expiryDate = expiryDate
            self.validFrom = validFrom
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws { self = try Self.decodeFields(from: decoder) }
        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws { try encodeFields(to: encoder) }
    }
}

extension ASImportableCredential.CreditCard: CXFFieldCredential {
    init() {}
    static let cxfFields = CXFFieldTable<Self, CXF.CreditCard>([
        (\.number, \.number),
        (\.fullName, \.fullName),
        (\.cardType, \.cardType),
        (\.verificationNumber, \.verificationNumber),
        (\.pin, \.pin),
        (\.expiryDate, \.expiryDate),
        (\.validFrom, \.validFrom),
    ])
}
