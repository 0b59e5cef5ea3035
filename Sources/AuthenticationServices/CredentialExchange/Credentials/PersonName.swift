import CredentialExchangeFormat
import Foundation

extension ASImportableCredential {
    /// The parts of a person's name.
    public struct PersonName: Codable, Hashable, Sendable {
        /// A title such as `Dr.`.
        public var title: ASImportableEditableField?
        /// The given name.
        public var given: ASImportableEditableField?
        /// The name the person goes by.
        public var givenInformal: ASImportableEditableField?
        /// A second given name.
        public var given2: ASImportableEditableField?
        /// A surname prefix such as `van`.
        public var surnamePrefix: ASImportableEditableField?
        /// The surname.
        public var surname: ASImportableEditableField?
        /// A second surname.
        public var surname2: ASImportableEditableField?
        /// Letters after the name, such as `PhD`.
        public var credentials: ASImportableEditableField?
        /// A generation marker such as `Jr.`.
        public var generation: ASImportableEditableField?

        /// Creates a person name credential.
        public init(
            title: ASImportableEditableField?,
            given: ASImportableEditableField?,
            givenInformal: ASImportableEditableField?,
            given2: ASImportableEditableField?,
            surnamePrefix: ASImportableEditableField?,
            surname: ASImportableEditableField?,
            surname2: ASImportableEditableField?,
            credentials: ASImportableEditableField?,
            generation: ASImportableEditableField?
        ) {
            self.title = title
            self.given = given
            self.givenInformal = givenInformal
            self.given2 = given2
            self.surnamePrefix = surnamePrefix
            self.surname = surname
            self.surname2 = surname2
            self.credentials = credentials
            self.generation = generation
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws { self = try Self.decodeFields(from: decoder) }
        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws { try encodeFields(to: encoder) }
    }
}

extension ASImportableCredential.PersonName: CXFFieldCredential {
    init() {}
    static let cxfFields = CXFFieldTable<Self, CXF.PersonName>([
        (\.title, \.title),
        (\.given, \.given),
        (\.givenInformal, \.givenInformal),
        (\.given2, \.given2),
        (\.surnamePrefix, \.surnamePrefix),
        (\.surname, \.surname),
        (\.surname2, \.surname2),
        (\.credentials, \.credentials),
        (\.generation, \.generation),
    ])
}
