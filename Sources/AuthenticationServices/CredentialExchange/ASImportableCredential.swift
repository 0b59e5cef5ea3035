import CredentialExchangeFormat
import Foundation
import KeyportEncoding

/// One credential of an ``ASImportableItem``: a password, a passkey, a one-time-code secret, a card…
///
/// In CXF JSON a credential is an object whose `type` member says which case it is (`basic-auth`,
/// `passkey`, `totp`, …); the payload's members sit beside it. CXF 1.0 also defines a `file`
/// credential, which Apple's enum has no case for. Treat the enum as non-frozen, as on Apple platforms
/// (`@unknown default`).
public enum ASImportableCredential: Codable, Hashable, Sendable {
    /// A postal address (`address`).
    case address(ASImportableCredential.Address)
    /// An API key (`api-key`).
    case apiKey(ASImportableCredential.APIKey)
    /// A user name and password (`basic-auth`).
    case basicAuthentication(ASImportableCredential.BasicAuthentication)
    /// A payment card (`credit-card`).
    case creditCard(ASImportableCredential.CreditCard)
    /// A labelled group of fields of any type (`custom-fields`).
    case customFields(ASImportableCredential.CustomFields)
    /// A driver's license (`drivers-license`).
    case driversLicense(ASImportableCredential.DriversLicense)
    /// A password the exporter generated, not yet tied to a login (`generated-password`).
    case generatedPassword(ASImportableCredential.GeneratedPassword)
    /// An identity document (`identity-document`).
    case identityDocument(ASImportableCredential.IdentityDocument)
    /// A link to another item (`item-reference`).
    case itemReference(ASImportableCredential.ItemReference)
    /// Free text (`note`).
    case note(ASImportableCredential.Note)
    /// A WebAuthn credential with its private key (`passkey`).
    case passkey(ASImportableCredential.Passkey)
    /// A passport (`passport`).
    case passport(ASImportableCredential.Passport)
    /// The parts of a person's name (`person-name`).
    case personName(ASImportableCredential.PersonName)
    /// An SSH private key (`ssh-key`).
    case sshKey(ASImportableCredential.SSHKey)
    /// A time-based one-time-code secret (`totp`).
    case totp(ASImportableCredential.TOTP)
    /// A Wi-Fi network and its passphrase (`wifi`).
    case wifi(ASImportableCredential.WiFi)

    /// The CXF `type` of the credential.
    var cxfType: String {
        switch self {
        case .address: "address"
        case .apiKey: "api-key"
        case .basicAuthentication: "basic-auth"
        case .creditCard: "credit-card"
        case .customFields: "custom-fields"
        case .driversLicense: "drivers-license"
        case .generatedPassword: "generated-password"
        case .identityDocument: "identity-document"
        case .itemReference: "item-reference"
        case .note: "note"
        case .passkey: "passkey"
        case .passport: "passport"
        case .personName: "person-name"
        case .sshKey: "ssh-key"
        case .totp: "totp"
        case .wifi: "wifi"
        }
    }

    private enum TypeKey: String, CodingKey {
        case type
    }

    /// Reads a CXF credential by its `type`.
    ///
    /// A `type` with no case here (CXF's `file`, or one from a later version) throws
    /// `DecodingError.dataCorrupted`; ``ASImportableItem`` catches that and skips the credential.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: TypeKey.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "address": self = .address(try Address(from: decoder))
        case "api-key": self = .apiKey(try APIKey(from: decoder))
        case "basic-auth": self = .basicAuthentication(try BasicAuthentication(from: decoder))
        case "credit-card": self = .creditCard(try CreditCard(from: decoder))
        case "custom-fields": self = .customFields(try CustomFields(from: decoder))
        case "drivers-license": self = .driversLicense(try DriversLicense(from: decoder))
        case "generated-password": self = .generatedPassword(try GeneratedPassword(from: decoder))
        case "identity-document": self = .identityDocument(try IdentityDocument(from: decoder))
        case "item-reference": self = .itemReference(try ItemReference(from: decoder))
        case "note": self = .note(try Note(from: decoder))
        case "passkey": self = .passkey(try Passkey(from: decoder))
        case "passport": self = .passport(try Passport(from: decoder))
        case "person-name": self = .personName(try PersonName(from: decoder))
        case "ssh-key": self = .sshKey(try SSHKey(from: decoder))
        case "totp": self = .totp(try TOTP(from: decoder))
        case "wifi": self = .wifi(try WiFi(from: decoder))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type,
                in: container,
                debugDescription:
                    "The credential type '\(type)' has no ASImportableCredential case; "
                    + "the credential cannot be imported"
            )
        }
    }

    /// Writes the credential's `type` and then its members, into one JSON object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: TypeKey.self)
        try container.encode(cxfType, forKey: .type)
        switch self {
        case .address(let c): try c.encode(to: encoder)
        case .apiKey(let c): try c.encode(to: encoder)
        case .basicAuthentication(let c): try c.encode(to: encoder)
        case .creditCard(let c): try c.encode(to: encoder)
        case .customFields(let c): try c.encode(to: encoder)
        case .driversLicense(let c): try c.encode(to: encoder)
        case .generatedPassword(let c): try c.encode(to: encoder)
        case .identityDocument(let c): try c.encode(to: encoder)
        case .itemReference(let c): try c.encode(to: encoder)
        case .note(let c): try c.encode(to: encoder)
        case .passkey(let c): try c.encode(to: encoder)
        case .passport(let c): try c.encode(to: encoder)
        case .personName(let c): try c.encode(to: encoder)
        case .sshKey(let c): try c.encode(to: encoder)
        case .totp(let c): try c.encode(to: encoder)
        case .wifi(let c): try c.encode(to: encoder)
        }
    }
}

// MARK: - Credentials made of editable fields

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

    /// A Wi-Fi network and its passphrase.
    public struct WiFi: Codable, Hashable, Sendable {
        /// The network's name.
        public var ssid: ASImportableEditableField?
        /// The network's security (a `wifi-network-security-type` field).
        public var networkSecurityType: ASImportableEditableField?
        /// The passphrase (a concealed string).
        public var passphrase: ASImportableEditableField?
        /// Whether the network hides its name (a boolean field).
        public var hidden: ASImportableEditableField?

        /// Creates a Wi-Fi credential.
        public init(
            ssid: ASImportableEditableField?,
            networkSecurityType: ASImportableEditableField?,
            passphrase: ASImportableEditableField?,
            hidden: ASImportableEditableField? = nil
        ) {
            self.ssid = ssid
            self.networkSecurityType = networkSecurityType
            self.passphrase = passphrase
            self.hidden = hidden
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws { self = try Self.decodeFields(from: decoder) }
        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws { try encodeFields(to: encoder) }
    }
}

// MARK: - The other credentials

extension ASImportableCredential {
    /// Free text.
    public struct Note: Codable, Hashable, Sendable {
        /// The text.
        public var content: ASImportableEditableField

        /// Creates a note.
        public init(content: ASImportableEditableField) {
            self.content = content
        }

        private enum CodingKeys: String, CodingKey {
            case content
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard let content = try container.decodeFieldIfPresent(forKey: .content, expected: .string) else {
                throw DecodingError.keyNotFound(
                    CodingKeys.content,
                    DecodingError.Context(codingPath: container.codingPath, debugDescription: "A note has no 'content'")
                )
            }
            self.content = content
        }

        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(content, forKey: .content)
        }
    }

    /// A password the exporter generated, not yet tied to a login. Its description hides the password.
    public struct GeneratedPassword: Codable, Hashable, Sendable {
        /// The password.
        public var password: String

        /// Creates a generated password credential.
        public init(password: String) {
            self.password = password
        }

        private enum CodingKeys: String, CodingKey {
            case password
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            password = try container.decode(String.self, forKey: .password)
        }

        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(password, forKey: .password)
        }
    }

    /// A WebAuthn credential (passkey) with its private key.
    ///
    /// In CXF JSON `credentialID` is `credentialId`, `relyingPartyIdentifier` is `rpId` and `userName`
    /// is `username`. Exporters leave out passkeys whose signature counter is not zero; an importer
    /// starts the counter at zero.
    public struct Passkey: Codable, Hashable, Sendable {
        /// The WebAuthn credential ID.
        public var credentialID: Data
        /// The relying party's identifier, usually its domain.
        public var relyingPartyIdentifier: String
        /// The user name the relying party knows the account by.
        public var userName: String
        /// The user's name as the relying party shows it.
        public var userDisplayName: String
        /// The relying party's identifier for the user (the WebAuthn user handle).
        public var userHandle: Data
        /// The private key, PKCS#8 DER.
        public var key: Data
        /// The passkey's FIDO2 extension data. (Apple: 26.4.)
        public var fido2Extensions: ASImportableFIDO2Extensions?

        /// Creates a passkey (the initialiser of iOS and macOS 26.0).
        public init(
            credentialID: Data,
            relyingPartyIdentifier: String,
            userName: String,
            userDisplayName: String,
            userHandle: Data,
            key: Data
        ) {
            self.init(
                credentialID: credentialID,
                relyingPartyIdentifier: relyingPartyIdentifier,
                userName: userName,
                userDisplayName: userDisplayName,
                userHandle: userHandle,
                key: key,
                fido2Extensions: nil
            )
        }

        /// Creates a passkey with FIDO2 extension data (the initialiser of iOS and macOS 26.4).
        public init(
            credentialID: Data,
            relyingPartyIdentifier: String,
            userName: String,
            userDisplayName: String,
            userHandle: Data,
            key: Data,
            fido2Extensions: ASImportableFIDO2Extensions?
        ) {
            self.credentialID = credentialID
            self.relyingPartyIdentifier = relyingPartyIdentifier
            self.userName = userName
            self.userDisplayName = userDisplayName
            self.userHandle = userHandle
            self.key = key
            self.fido2Extensions = fido2Extensions
        }

        private enum CodingKeys: String, CodingKey {
            case credentialID = "credentialId"
            case relyingPartyIdentifier = "rpId"
            case userName = "username"
            case userDisplayName, userHandle, key, fido2Extensions
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            credentialID = try container.decodeBase64URL(forKey: .credentialID)
            relyingPartyIdentifier = try container.decode(String.self, forKey: .relyingPartyIdentifier)
            userName = try container.decode(String.self, forKey: .userName)
            userDisplayName = try container.decode(String.self, forKey: .userDisplayName)
            userHandle = try container.decodeBase64URL(forKey: .userHandle)
            key = try container.decodeBase64URL(forKey: .key)
            fido2Extensions = try container.decodeIfPresent(ASImportableFIDO2Extensions.self, forKey: .fido2Extensions)
        }

        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeBase64URL(credentialID, forKey: .credentialID)
            try container.encode(relyingPartyIdentifier, forKey: .relyingPartyIdentifier)
            try container.encode(userName, forKey: .userName)
            try container.encode(userDisplayName, forKey: .userDisplayName)
            try container.encodeBase64URL(userHandle, forKey: .userHandle)
            try container.encodeBase64URL(key, forKey: .key)
            try container.encodeIfPresent(fido2Extensions, forKey: .fido2Extensions)
        }
    }

    /// A time-based one-time-code (TOTP, RFC 6238) secret with its parameters.
    ///
    /// The secret is the raw key bytes; in CXF JSON it is Base32 text (read leniently: lowercase,
    /// spaces, hyphens and padding are accepted). In JSON `userName` is the member `username`.
    public struct TOTP: Codable, Hashable, Sendable {
        /// The shared secret, as bytes.
        public var secret: Data
        /// How long a code is valid, in seconds (usually 30).
        public var period: UInt16
        /// How many digits a code has (usually 6).
        public var digits: UInt16
        /// The account the codes are for.
        public var userName: String?
        /// The hash function of the HMAC.
        public var algorithm: ASImportableCredential.TOTP.Algorithm
        /// The service that issued the secret.
        public var issuer: String?

        /// Creates a TOTP credential.
        public init(
            secret: Data,
            period: UInt16,
            digits: UInt16,
            userName: String?,
            algorithm: ASImportableCredential.TOTP.Algorithm,
            issuer: String? = nil
        ) {
            self.secret = secret
            self.period = period
            self.digits = digits
            self.userName = userName
            self.algorithm = algorithm
            self.issuer = issuer
        }

        /// The hash function of a TOTP's HMAC.
        public enum Algorithm: String, Codable, Hashable, Sendable {
            /// HMAC-SHA-1, the usual one.
            case sha1
            /// HMAC-SHA-256.
            case sha256
            /// HMAC-SHA-512.
            case sha512
        }

        private enum CodingKeys: String, CodingKey {
            case secret, period, digits
            case userName = "username"
            case algorithm, issuer
        }

        /// Reads a CXF TOTP credential.
        ///
        /// A secret that is not Base32, or an algorithm other than `sha1`, `sha256` and `sha512` (in any
        /// letter case), throws `DecodingError.dataCorrupted`. A missing `period`, `digits` or
        /// `algorithm` reads as 30, 6 and `sha1`, as `CXF.Decoder` does.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let text = try container.decode(String.self, forKey: .secret)
            guard let bytes = try? Base32.decode(text) else {
                // The error says nothing about the characters: they are the secret.
                throw DecodingError.dataCorruptedError(
                    forKey: .secret,
                    in: container,
                    debugDescription: "The TOTP secret is not Base32 text"
                )
            }
            secret = Data(bytes)
            period = try container.decodeIfPresent(UInt16.self, forKey: .period) ?? 30
            digits = try container.decodeIfPresent(UInt16.self, forKey: .digits) ?? 6
            userName = try container.decodeIfPresent(String.self, forKey: .userName)
            if let name = try container.decodeIfPresent(String.self, forKey: .algorithm) {
                guard let algorithm = Algorithm(rawValue: name.lowercased()) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .algorithm,
                        in: container,
                        debugDescription: "The TOTP algorithm '\(name)' is not sha1, sha256 or sha512"
                    )
                }
                self.algorithm = algorithm
            } else {
                algorithm = .sha1
            }
            issuer = try container.decodeIfPresent(String.self, forKey: .issuer)
        }

        /// Writes the secret as uppercase Base32 without padding.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(Base32.encode(secret), forKey: .secret)
            try container.encode(period, forKey: .period)
            try container.encode(digits, forKey: .digits)
            try container.encodeIfPresent(userName, forKey: .userName)
            try container.encode(algorithm, forKey: .algorithm)
            try container.encodeIfPresent(issuer, forKey: .issuer)
        }
    }

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

        private enum CodingKeys: String, CodingKey {
            case keyType, privateKey, keyComment, creationDate, expiryDate, keyGenerationSource
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            keyType = try container.decode(String.self, forKey: .keyType)
            privateKey = try container.decodeBase64URL(forKey: .privateKey)
            keyComment = try container.decodeIfPresent(String.self, forKey: .keyComment)
            creationDate = try container.decodeFieldIfPresent(forKey: .creationDate, expected: .date)
            expiryDate = try container.decodeFieldIfPresent(forKey: .expiryDate, expected: .date)
            keyGenerationSource = try container.decodeFieldIfPresent(forKey: .keyGenerationSource, expected: .string)
        }

        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(keyType, forKey: .keyType)
            try container.encodeBase64URL(privateKey, forKey: .privateKey)
            try container.encodeIfPresent(keyComment, forKey: .keyComment)
            try container.encodeIfPresent(creationDate, forKey: .creationDate)
            try container.encodeIfPresent(expiryDate, forKey: .expiryDate)
            try container.encodeIfPresent(keyGenerationSource, forKey: .keyGenerationSource)
        }
    }

    /// A labelled group of fields of any type.
    public struct CustomFields: Codable, Hashable, Sendable {
        /// The group's identifier.
        public var id: Data?
        /// The group's label.
        public var label: String?
        /// The fields.
        public var fields: [ASImportableEditableField]

        /// Creates a group of fields.
        public init(id: Data? = nil, label: String? = nil, fields: [ASImportableEditableField]) {
            self.id = id
            self.label = label
            self.fields = fields
        }

        private enum CodingKeys: String, CodingKey {
            case id, label, fields
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decodeIDIfPresent(forKey: .id)
            label = try container.decodeIfPresent(String.self, forKey: .label)
            fields = try container.decode([ASImportableEditableField].self, forKey: .fields)
        }

        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeBase64URLIfPresent(id, forKey: .id)
            try container.encodeIfPresent(label, forKey: .label)
            try container.encode(fields, forKey: .fields)
        }
    }

    /// A link to another item, whose credentials this item shares.
    public struct ItemReference: Codable, Hashable, Sendable {
        /// The item linked to.
        public var reference: ASImportableLinkedItem

        /// Creates an item reference.
        public init(reference: ASImportableLinkedItem) {
            self.reference = reference
        }

        private enum CodingKeys: String, CodingKey {
            case reference
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            reference = try container.decode(ASImportableLinkedItem.self, forKey: .reference)
        }

        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(reference, forKey: .reference)
        }
    }
}

extension ASImportableCredential.GeneratedPassword: CustomStringConvertible, CustomDebugStringConvertible {
    /// The credential without the password.
    public var description: String { "GeneratedPassword(‹redacted, \(password.count) characters›)" }
    /// The same text as `description`: debugging output shows no secret either.
    public var debugDescription: String { description }
}

// MARK: - The field-only credentials, derived from the CXF schema

/// One of Apple's credential types made only of optional editable fields, each the counterpart of a
/// member of a CXF credential type. Only the pairing is written here: the member's wire name and the
/// field type it calls for come from the CXF type's `MemberSchema` table, which the CXF decoder,
/// encoder and validator walk too. Codable and the conversions both ways walk ``cxfFields``.
protocol CXFFieldCredential: Sendable {
    associatedtype CXFCredential: SchemaCredential
    /// The credential with no fields, where decoding and conversion from CXF start.
    init()
    static var cxfFields: CXFFieldTable<Self, CXFCredential> { get }
}

/// The members of a CXF credential type in its schema's order, each with the property of Apple's type
/// that holds it.
struct CXFFieldTable<Credential, CXFCredential: SchemaCredential>: Sendable {
    typealias ApplePath = WritableKeyPath<Credential, ASImportableEditableField?> & Sendable
    typealias CXFPath = WritableKeyPath<CXFCredential, CXF.EditableField?> & Sendable

    struct Entry: Sendable {
        /// The member's name on the wire.
        let key: String
        /// The field type that stands in when a field omits `fieldType`.
        let expected: ASImportableEditableField.FieldType
        let cxf: CXFPath
        /// `nil` when Apple's type has no place for the member: decoding skips it, conversion from CXF
        /// reports it left out.
        let apple: ApplePath?
    }

    let entries: [Entry]

    /// Pairs each of Apple's properties with its CXF member. Every member of the CXF type must be an
    /// optional editable field; one no pair names is one Apple's type lacks.
    init(_ pairs: [(apple: ApplePath, cxf: CXFPath)]) {
        var unpaired = pairs
        entries = CXFCredential.members.map { member in
            guard case .field(let cxf, let expected) = member.kind else {
                preconditionFailure("'\(member.key)' of \(CXFCredential.type) is not an optional editable field")
            }
            let apple = unpaired.firstIndex { $0.cxf == cxf }.map { unpaired.remove(at: $0).apple }
            return Entry(key: member.key.description, expected: .init(expected), cxf: cxf, apple: apple)
        }
        precondition(unpaired.isEmpty, "a pair names a member \(CXFCredential.type) does not have, or one twice")
    }
}

extension CXFFieldCredential {
    static func decodeFields(from decoder: any Decoder) throws -> Self {
        let container = try decoder.container(keyedBy: WireKey.self)
        var value = Self()
        for entry in cxfFields.entries {
            guard let apple = entry.apple else { continue }
            value[keyPath: apple] = try container.decodeFieldIfPresent(
                forKey: WireKey(entry.key),
                expected: entry.expected
            )
        }
        return value
    }

    func encodeFields(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: WireKey.self)
        for entry in Self.cxfFields.entries {
            guard let apple = entry.apple else { continue }
            try container.encodeIfPresent(self[keyPath: apple], forKey: WireKey(entry.key))
        }
    }

    /// The CXF form of the credential.
    var cxfCredential: CXFCredential {
        var credential = CXFCredential.blank
        for entry in Self.cxfFields.entries {
            guard let apple = entry.apple else { continue }
            credential[keyPath: entry.cxf] = self[keyPath: apple].map { CXF.EditableField($0) }
        }
        return credential
    }
}

// The pairs: where Apple's name differs from CXF's (`userName`/`username`, `telephone`/`tel`) the
// table is the only place that says so.

extension ASImportableCredential.BasicAuthentication: CXFFieldCredential {
    init() {}
    static let cxfFields = CXFFieldTable<Self, CXF.BasicAuth>([
        (\.userName, \.username),
        (\.password, \.password),
    ])
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

extension ASImportableCredential.WiFi: CXFFieldCredential {
    init() {}
    static let cxfFields = CXFFieldTable<Self, CXF.WiFi>([
        (\.ssid, \.ssid),
        (\.networkSecurityType, \.networkSecurityType),
        (\.passphrase, \.passphrase),
        (\.hidden, \.hidden),
    ])
}
