import struct Foundation.Data

extension CXF {
    /// One credential of an item. The 17 types of CXF 1.0 are typed; a credential of a type this
    /// library does not know, or one too malformed to type, is kept whole as ``UnrecognizedCredential``
    /// and written back unchanged.
    ///
    /// `indirect`: the payloads range from one string to twelve fields; boxed, a credential is one
    /// pointer wide, so arrays of them stay small and cheap to move.
    public indirect enum Credential: Hashable, Sendable {
        case basicAuth(BasicAuth)
        case passkey(Passkey)
        case totp(TOTP)
        case note(Note)
        case file(File)
        case creditCard(CreditCard)
        case address(Address)
        case apiKey(APIKey)
        case driversLicense(DriversLicense)
        case identityDocument(IdentityDocument)
        case passport(Passport)
        case personName(PersonName)
        case generatedPassword(GeneratedPassword)
        case sshKey(SSHKey)
        case wifi(WiFi)
        case customFields(CustomFields)
        case itemReference(ItemReference)
        case unrecognized(UnrecognizedCredential)

        /// The wire `type` (for an unrecognized credential, what it said, or `""`).
        public var type: String {
            switch self {
            case .basicAuth: "basic-auth"
            case .passkey: "passkey"
            case .totp: "totp"
            case .note: "note"
            case .file: "file"
            case .creditCard: "credit-card"
            case .address: "address"
            case .apiKey: "api-key"
            case .driversLicense: "drivers-license"
            case .identityDocument: "identity-document"
            case .passport: "passport"
            case .personName: "person-name"
            case .generatedPassword: "generated-password"
            case .sshKey: "ssh-key"
            case .wifi: "wifi"
            case .customFields: "custom-fields"
            case .itemReference: "item-reference"
            case .unrecognized(let c): c.type ?? ""
            }
        }

        /// The wire names of the 17 credential types of CXF 1.0.
        public static let knownTypes: [String] = [
            "basic-auth", "passkey", "totp", "note", "file", "credit-card", "address", "api-key", "drivers-license",
            "identity-document", "passport", "person-name", "generated-password", "ssh-key", "wifi",
            "custom-fields", "item-reference",
        ]
    }

    /// A credential kept verbatim: its type is unknown here, or it could not be typed.
    public struct UnrecognizedCredential: Hashable, Sendable {
        /// The credential's `type`, when it had a string one.
        public var type: String? { object["type"]?.stringValue }
        /// The whole credential object as it came.
        public var object: JSONValue
        /// Why it is not typed.
        public var reason: String

        public init(object: JSONValue, reason: String) {
            self.object = object
            self.reason = reason
        }
    }

    /// `basic-auth`: a username and password.
    public struct BasicAuth: Hashable, Sendable {
        public var username: EditableField?
        public var password: EditableField?
        public var unknownMembers: [JSONMember]

        public init(username: EditableField? = nil, password: EditableField? = nil, unknownMembers: [JSONMember] = []) {
            self.username = username
            self.password = password
            self.unknownMembers = unknownMembers
        }
    }

    /// `passkey`: a WebAuthn credential with its private key.
    public struct Passkey: Hashable, Sendable {
        public var credentialId: Data
        public var rpId: String
        public var username: String
        public var userDisplayName: String
        public var userHandle: Data
        /// The private key, PKCS#8 DER. See ``PrivateKeyInfo``.
        public var key: Data
        public var fido2Extensions: FIDO2Extensions?
        public var unknownMembers: [JSONMember]

        public init(
            credentialId: Data, rpId: String, username: String, userDisplayName: String, userHandle: Data, key: Data,
            fido2Extensions: FIDO2Extensions? = nil, unknownMembers: [JSONMember] = []
        ) {
            self.credentialId = credentialId
            self.rpId = rpId
            self.username = username
            self.userDisplayName = userDisplayName
            self.userHandle = userHandle
            self.key = key
            self.fido2Extensions = fido2Extensions
            self.unknownMembers = unknownMembers
        }
    }

    /// `fido2Extensions` of a passkey.
    public struct FIDO2Extensions: Hashable, Sendable {
        public var hmacCredentials: HMACCredentials?
        public var credBlob: Data?
        public var largeBlob: LargeBlob?
        public var payments: Bool?
        public var unknownMembers: [JSONMember]

        public init(
            hmacCredentials: HMACCredentials? = nil, credBlob: Data? = nil, largeBlob: LargeBlob? = nil,
            payments: Bool? = nil, unknownMembers: [JSONMember] = []
        ) {
            self.hmacCredentials = hmacCredentials
            self.credBlob = credBlob
            self.largeBlob = largeBlob
            self.payments = payments
            self.unknownMembers = unknownMembers
        }

        /// The `hmac-secret` / PRF keys of a passkey.
        public struct HMACCredentials: Hashable, Sendable {
            public var algorithm: String
            public var credWithUV: Data
            public var credWithoutUV: Data
            public var unknownMembers: [JSONMember]

            public init(algorithm: String, credWithUV: Data, credWithoutUV: Data, unknownMembers: [JSONMember] = []) {
                self.algorithm = algorithm
                self.credWithUV = credWithUV
                self.credWithoutUV = credWithoutUV
                self.unknownMembers = unknownMembers
            }
        }

        /// The `largeBlob` extension's data, DEFLATE-compressed.
        public struct LargeBlob: Hashable, Sendable {
            public var uncompressedSize: UInt64
            public var data: Data
            public var unknownMembers: [JSONMember]

            public init(uncompressedSize: UInt64, data: Data, unknownMembers: [JSONMember] = []) {
                self.uncompressedSize = uncompressedSize
                self.data = data
                self.unknownMembers = unknownMembers
            }
        }
    }

    /// `totp`: a time-based one-time-code secret.
    public struct TOTP: Hashable, Sendable {
        /// The secret as Base32 text, as on the wire.
        public var secret: String
        public var period: UInt32
        public var digits: UInt32
        public var username: String?
        public var algorithm: Algorithm
        public var issuer: String?
        public var unknownMembers: [JSONMember]

        public enum Algorithm: String, Hashable, Sendable, CaseIterable {
            case sha1, sha256, sha512
        }

        public init(
            secret: String, period: UInt32 = 30, digits: UInt32 = 6, username: String? = nil,
            algorithm: Algorithm = .sha1, issuer: String? = nil, unknownMembers: [JSONMember] = []
        ) {
            self.secret = secret
            self.period = period
            self.digits = digits
            self.username = username
            self.algorithm = algorithm
            self.issuer = issuer
            self.unknownMembers = unknownMembers
        }
    }

    /// `note`: free text.
    public struct Note: Hashable, Sendable {
        public var content: EditableField
        public var unknownMembers: [JSONMember]

        public init(content: EditableField, unknownMembers: [JSONMember] = []) {
            self.content = content
            self.unknownMembers = unknownMembers
        }
    }

    /// `file`: metadata of an attached file (its bytes travel separately).
    public struct File: Hashable, Sendable {
        public var id: Data
        public var name: String
        public var decryptedSize: UInt64
        /// SHA-256 of the decrypted file.
        public var integrityHash: Data
        public var unknownMembers: [JSONMember]

        public init(id: Data, name: String, decryptedSize: UInt64, integrityHash: Data, unknownMembers: [JSONMember] = []) {
            self.id = id
            self.name = name
            self.decryptedSize = decryptedSize
            self.integrityHash = integrityHash
            self.unknownMembers = unknownMembers
        }
    }

    /// `credit-card`.
    public struct CreditCard: Hashable, Sendable {
        public var number: EditableField?
        public var fullName: EditableField?
        public var cardType: EditableField?
        public var verificationNumber: EditableField?
        public var pin: EditableField?
        public var expiryDate: EditableField?
        public var validFrom: EditableField?
        public var unknownMembers: [JSONMember]

        public init(
            number: EditableField? = nil, fullName: EditableField? = nil, cardType: EditableField? = nil,
            verificationNumber: EditableField? = nil, pin: EditableField? = nil, expiryDate: EditableField? = nil,
            validFrom: EditableField? = nil, unknownMembers: [JSONMember] = []
        ) {
            self.number = number
            self.fullName = fullName
            self.cardType = cardType
            self.verificationNumber = verificationNumber
            self.pin = pin
            self.expiryDate = expiryDate
            self.validFrom = validFrom
            self.unknownMembers = unknownMembers
        }
    }

    /// `address`.
    public struct Address: Hashable, Sendable {
        public var streetAddress: EditableField?
        public var postalCode: EditableField?
        public var city: EditableField?
        public var territory: EditableField?
        public var country: EditableField?
        public var tel: EditableField?
        public var unknownMembers: [JSONMember]

        public init(
            streetAddress: EditableField? = nil, postalCode: EditableField? = nil, city: EditableField? = nil,
            territory: EditableField? = nil, country: EditableField? = nil, tel: EditableField? = nil,
            unknownMembers: [JSONMember] = []
        ) {
            self.streetAddress = streetAddress
            self.postalCode = postalCode
            self.city = city
            self.territory = territory
            self.country = country
            self.tel = tel
            self.unknownMembers = unknownMembers
        }
    }

    /// `api-key`.
    public struct APIKey: Hashable, Sendable {
        public var key: EditableField?
        public var username: EditableField?
        public var keyType: EditableField?
        public var url: EditableField?
        public var validFrom: EditableField?
        public var expiryDate: EditableField?
        public var unknownMembers: [JSONMember]

        public init(
            key: EditableField? = nil, username: EditableField? = nil, keyType: EditableField? = nil,
            url: EditableField? = nil, validFrom: EditableField? = nil, expiryDate: EditableField? = nil,
            unknownMembers: [JSONMember] = []
        ) {
            self.key = key
            self.username = username
            self.keyType = keyType
            self.url = url
            self.validFrom = validFrom
            self.expiryDate = expiryDate
            self.unknownMembers = unknownMembers
        }
    }

    /// `drivers-license`.
    public struct DriversLicense: Hashable, Sendable {
        public var fullName: EditableField?
        public var birthDate: EditableField?
        public var issueDate: EditableField?
        public var expiryDate: EditableField?
        public var issuingAuthority: EditableField?
        public var territory: EditableField?
        public var country: EditableField?
        public var licenseNumber: EditableField?
        public var licenseClass: EditableField?
        public var unknownMembers: [JSONMember]

        public init(
            fullName: EditableField? = nil, birthDate: EditableField? = nil, issueDate: EditableField? = nil,
            expiryDate: EditableField? = nil, issuingAuthority: EditableField? = nil, territory: EditableField? = nil,
            country: EditableField? = nil, licenseNumber: EditableField? = nil, licenseClass: EditableField? = nil,
            unknownMembers: [JSONMember] = []
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
            self.unknownMembers = unknownMembers
        }
    }

    /// `identity-document`.
    public struct IdentityDocument: Hashable, Sendable {
        public var issuingCountry: EditableField?
        public var documentNumber: EditableField?
        public var identificationNumber: EditableField?
        public var nationality: EditableField?
        public var fullName: EditableField?
        public var birthDate: EditableField?
        public var birthPlace: EditableField?
        public var sex: EditableField?
        public var issueDate: EditableField?
        public var expiryDate: EditableField?
        public var issuingAuthority: EditableField?
        public var unknownMembers: [JSONMember]

        public init(
            issuingCountry: EditableField? = nil, documentNumber: EditableField? = nil,
            identificationNumber: EditableField? = nil, nationality: EditableField? = nil,
            fullName: EditableField? = nil, birthDate: EditableField? = nil, birthPlace: EditableField? = nil,
            sex: EditableField? = nil, issueDate: EditableField? = nil, expiryDate: EditableField? = nil,
            issuingAuthority: EditableField? = nil, unknownMembers: [JSONMember] = []
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
            self.unknownMembers = unknownMembers
        }
    }

    /// `passport`.
    public struct Passport: Hashable, Sendable {
        public var issuingCountry: EditableField?
        public var passportType: EditableField?
        public var passportNumber: EditableField?
        public var nationalIdentificationNumber: EditableField?
        public var nationality: EditableField?
        public var fullName: EditableField?
        public var birthDate: EditableField?
        public var birthPlace: EditableField?
        public var sex: EditableField?
        public var issueDate: EditableField?
        public var expiryDate: EditableField?
        public var issuingAuthority: EditableField?
        public var unknownMembers: [JSONMember]

        public init(
            issuingCountry: EditableField? = nil, passportType: EditableField? = nil,
            passportNumber: EditableField? = nil, nationalIdentificationNumber: EditableField? = nil,
            nationality: EditableField? = nil, fullName: EditableField? = nil, birthDate: EditableField? = nil,
            birthPlace: EditableField? = nil, sex: EditableField? = nil, issueDate: EditableField? = nil,
            expiryDate: EditableField? = nil, issuingAuthority: EditableField? = nil, unknownMembers: [JSONMember] = []
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
            self.unknownMembers = unknownMembers
        }
    }

    /// `person-name`.
    public struct PersonName: Hashable, Sendable {
        public var title: EditableField?
        public var given: EditableField?
        public var givenInformal: EditableField?
        public var given2: EditableField?
        public var surnamePrefix: EditableField?
        public var surname: EditableField?
        public var surname2: EditableField?
        public var credentials: EditableField?
        public var generation: EditableField?
        public var unknownMembers: [JSONMember]

        public init(
            title: EditableField? = nil, given: EditableField? = nil, givenInformal: EditableField? = nil,
            given2: EditableField? = nil, surnamePrefix: EditableField? = nil, surname: EditableField? = nil,
            surname2: EditableField? = nil, credentials: EditableField? = nil, generation: EditableField? = nil,
            unknownMembers: [JSONMember] = []
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
            self.unknownMembers = unknownMembers
        }
    }

    /// `generated-password`: a password the exporter generated, not yet tied to a login.
    public struct GeneratedPassword: Hashable, Sendable {
        public var password: String
        public var unknownMembers: [JSONMember]

        public init(password: String, unknownMembers: [JSONMember] = []) {
            self.password = password
            self.unknownMembers = unknownMembers
        }
    }

    /// `ssh-key`.
    public struct SSHKey: Hashable, Sendable {
        /// For example `ssh-ed25519`, `ssh-rsa`, `ecdsa-sha2-nistp256`.
        public var keyType: String
        /// PKCS#8 DER. See ``PrivateKeyInfo``.
        public var privateKey: Data
        public var keyComment: String?
        public var creationDate: EditableField?
        public var expiryDate: EditableField?
        public var keyGenerationSource: EditableField?
        public var unknownMembers: [JSONMember]

        public init(
            keyType: String, privateKey: Data, keyComment: String? = nil, creationDate: EditableField? = nil,
            expiryDate: EditableField? = nil, keyGenerationSource: EditableField? = nil,
            unknownMembers: [JSONMember] = []
        ) {
            self.keyType = keyType
            self.privateKey = privateKey
            self.keyComment = keyComment
            self.creationDate = creationDate
            self.expiryDate = expiryDate
            self.keyGenerationSource = keyGenerationSource
            self.unknownMembers = unknownMembers
        }
    }

    /// `wifi`.
    public struct WiFi: Hashable, Sendable {
        public var ssid: EditableField?
        public var networkSecurityType: EditableField?
        public var passphrase: EditableField?
        public var hidden: EditableField?
        public var unknownMembers: [JSONMember]

        public init(
            ssid: EditableField? = nil, networkSecurityType: EditableField? = nil, passphrase: EditableField? = nil,
            hidden: EditableField? = nil, unknownMembers: [JSONMember] = []
        ) {
            self.ssid = ssid
            self.networkSecurityType = networkSecurityType
            self.passphrase = passphrase
            self.hidden = hidden
            self.unknownMembers = unknownMembers
        }
    }

    /// `custom-fields`: a labelled group of fields of any type.
    public struct CustomFields: Hashable, Sendable {
        public var id: Data?
        public var label: String?
        public var fields: [EditableField]
        public var extensions: [Extension]?
        public var unknownMembers: [JSONMember]

        public init(
            id: Data? = nil, label: String? = nil, fields: [EditableField], extensions: [Extension]? = nil,
            unknownMembers: [JSONMember] = []
        ) {
            self.id = id
            self.label = label
            self.fields = fields
            self.extensions = extensions
            self.unknownMembers = unknownMembers
        }
    }

    /// `item-reference`: a link to another item.
    public struct ItemReference: Hashable, Sendable {
        public var reference: LinkedItem
        public var unknownMembers: [JSONMember]

        public init(reference: LinkedItem, unknownMembers: [JSONMember] = []) {
            self.reference = reference
            self.unknownMembers = unknownMembers
        }
    }
}

extension CXF.TOTP: CustomStringConvertible, CustomDebugStringConvertible {
    /// The parameters without the secret.
    public var description: String {
        "TOTP(\(algorithm.rawValue), \(digits) digits, \(period) s, issuer: \(issuer ?? "none"), secret: ‹redacted›)"
    }

    public var debugDescription: String { description }
}

extension CXF.GeneratedPassword: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "GeneratedPassword(‹redacted, \(password.count) characters›)" }
    public var debugDescription: String { description }
}

extension CXF.UnrecognizedCredential: CustomStringConvertible, CustomDebugStringConvertible {
    /// The type and why it is kept verbatim; never its members, which may be secrets.
    public var description: String { "UnrecognizedCredential(type: \(type ?? "none"), \(reason))" }
    public var debugDescription: String { description }
}
