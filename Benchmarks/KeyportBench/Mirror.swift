import Foundation

// A plain Codable mirror of a CXF document, the way an app would write one with Foundation: every
// credential type folded into one struct of optional members. It is the baseline the codec is
// measured against.

struct MirrorHeader: Codable {
    struct Version: Codable {
        var major: Int
        var minor: Int
    }
    var version: Version
    var exporterRpId: String
    var exporterDisplayName: String
    var timestamp: Int64
    var accounts: [MirrorAccount]
}

struct MirrorAccount: Codable {
    var id: String
    var username: String
    var email: String
    var fullName: String?
    var collections: [MirrorCollection]
    var items: [MirrorItem]
}

struct MirrorCollection: Codable {
    var id: String
    var creationAt: Int64?
    var modifiedAt: Int64?
    var title: String
    var subtitle: String?
    var items: [MirrorLinkedItem]
    var subCollections: [MirrorCollection]?
}

struct MirrorLinkedItem: Codable {
    var item: String
    var account: String?
}

struct MirrorItem: Codable {
    var id: String
    var creationAt: Int64?
    var modifiedAt: Int64?
    var title: String
    var subtitle: String?
    var favorite: Bool?
    var scope: MirrorScope?
    var credentials: [MirrorCredential]
    var tags: [String]?
}

struct MirrorScope: Codable {
    var urls: [String]
    var androidApps: [MirrorAndroidApp]
}

struct MirrorAndroidApp: Codable {
    struct Certificate: Codable {
        var fingerprint: String
        var hashAlg: String
    }
    var bundleId: String
    var certificate: Certificate?
    var name: String?
}

struct MirrorField: Codable {
    var id: String?
    var fieldType: String
    var value: String
    var label: String?
}

/// Credentials the way a Foundation user writes them: read `type`, then the matching struct.
enum MirrorCredential: Codable {
    typealias F = MirrorField
    struct BasicAuth: Codable { var username, password: F? }
    struct Passkey: Codable { var credentialId, rpId, username, userDisplayName, userHandle, key: String }
    struct TOTP: Codable {
        var secret: String
        var period, digits: Int
        var username: String?
        var algorithm: String
        var issuer: String?
    }
    struct Note: Codable { var content: F }
    struct File: Codable {
        var id, name: String
        var decryptedSize: Int64
        var integrityHash: String
    }
    struct CreditCard: Codable { var number, fullName, cardType, verificationNumber, pin, expiryDate, validFrom: F? }
    struct Address: Codable { var streetAddress, postalCode, city, territory, country, tel: F? }
    struct APIKey: Codable { var key, username, keyType, url, validFrom, expiryDate: F? }
    struct DriversLicense: Codable {
        var fullName, birthDate, issueDate, expiryDate, issuingAuthority, territory, country, licenseNumber,
            licenseClass: F?
    }
    struct IdentityDocument: Codable {
        var issuingCountry, documentNumber, identificationNumber, nationality, fullName, birthDate, birthPlace, sex,
            issueDate, expiryDate, issuingAuthority: F?
    }
    struct Passport: Codable {
        var issuingCountry, passportType, passportNumber, nationalIdentificationNumber, nationality, fullName,
            birthDate,
            birthPlace, sex, issueDate, expiryDate, issuingAuthority: F?
    }
    struct PersonName: Codable {
        var title, given, givenInformal, given2, surnamePrefix, surname, surname2, credentials, generation: F?
    }
    struct GeneratedPassword: Codable { var password: String }
    struct SSHKey: Codable {
        var keyType, privateKey: String
        var keyComment: String?
        var creationDate, expiryDate, keyGenerationSource: F?
    }
    struct WiFi: Codable { var ssid, networkSecurityType, passphrase, hidden: F? }
    struct CustomFields: Codable {
        var id, label: String?
        var fields: [F]
    }
    struct ItemReference: Codable { var reference: MirrorLinkedItem }

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

    private enum TypeKey: String, CodingKey { case type }

    init(from decoder: any Decoder) throws {
        let type = try decoder.container(keyedBy: TypeKey.self).decode(String.self, forKey: .type)
        switch type {
        case "basic-auth": self = .basicAuth(try BasicAuth(from: decoder))
        case "passkey": self = .passkey(try Passkey(from: decoder))
        case "totp": self = .totp(try TOTP(from: decoder))
        case "note": self = .note(try Note(from: decoder))
        case "file": self = .file(try File(from: decoder))
        case "credit-card": self = .creditCard(try CreditCard(from: decoder))
        case "address": self = .address(try Address(from: decoder))
        case "api-key": self = .apiKey(try APIKey(from: decoder))
        case "drivers-license": self = .driversLicense(try DriversLicense(from: decoder))
        case "identity-document": self = .identityDocument(try IdentityDocument(from: decoder))
        case "passport": self = .passport(try Passport(from: decoder))
        case "person-name": self = .personName(try PersonName(from: decoder))
        case "generated-password": self = .generatedPassword(try GeneratedPassword(from: decoder))
        case "ssh-key": self = .sshKey(try SSHKey(from: decoder))
        case "wifi": self = .wifi(try WiFi(from: decoder))
        case "custom-fields": self = .customFields(try CustomFields(from: decoder))
        case "item-reference": self = .itemReference(try ItemReference(from: decoder))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type,
                in: try decoder.container(keyedBy: TypeKey.self),
                debugDescription: type
            )
        }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: TypeKey.self)
        let (type, body): (String, any Encodable) =
            switch self {
            case .basicAuth(let v): ("basic-auth", v)
            case .passkey(let v): ("passkey", v)
            case .totp(let v): ("totp", v)
            case .note(let v): ("note", v)
            case .file(let v): ("file", v)
            case .creditCard(let v): ("credit-card", v)
            case .address(let v): ("address", v)
            case .apiKey(let v): ("api-key", v)
            case .driversLicense(let v): ("drivers-license", v)
            case .identityDocument(let v): ("identity-document", v)
            case .passport(let v): ("passport", v)
            case .personName(let v): ("person-name", v)
            case .generatedPassword(let v): ("generated-password", v)
            case .sshKey(let v): ("ssh-key", v)
            case .wifi(let v): ("wifi", v)
            case .customFields(let v): ("custom-fields", v)
            case .itemReference(let v): ("item-reference", v)
            }
        try c.encode(type, forKey: .type)
        try body.encode(to: encoder)
    }
}
