import CredentialExchangeFormat
import Foundation

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
}

// MARK: - CXF → AS (each case in its credential's file)

extension CXFImporter {
    mutating func credential(_ credential: CXF.Credential) -> ASImportableCredential? {
        switch credential {
        case .basicAuth(let c): return .basicAuthentication(fields(c))
        case .creditCard(let c): return .creditCard(fields(c))
        case .address(let c): return .address(fields(c))
        case .apiKey(let c): return .apiKey(fields(c))
        case .driversLicense(let c): return .driversLicense(fields(c))
        case .identityDocument(let c): return .identityDocument(fields(c))
        case .passport(let c): return .passport(fields(c))
        case .personName(let c): return .personName(fields(c))
        case .wifi(let c): return .wifi(fields(c))
        // Written out: note, generated-password and ssh-key have CXF tables too, but their required
        // members leave Apple's types no empty value for a walk to start from, and Apple's initialisers
        // take those members; the others have no CXF table or no case in Apple's enum.
        case .passkey(let c):
            return passkey(c).map(ASImportableCredential.passkey)
        case .totp(let c):
            return totp(c).map(ASImportableCredential.totp)
        case .note(let c): return .note(note(c))
        case .file:
            omit("ASImportableCredential has no case for a file credential; it is left out")
            return nil
        case .generatedPassword(let c): return .generatedPassword(generatedPassword(c))
        case .sshKey(let c): return .sshKey(sshKey(c))
        case .customFields(let c): return .customFields(customFields(c))
        case .itemReference(let c): return .itemReference(itemReference(c))
        case .unrecognized(let c):
            let type = c.type.map { "'\($0)'" } ?? "no"
            omit("this credential, of \(type) type, could not be read (\(c.reason)); it is left out")
            return nil
        }
    }
}

// MARK: - AS → CXF (each case in its credential's file)

extension CXF.Credential {
    /// The CXF form of a credential. (Linux addition.)
    ///
    /// A TOTP secret becomes uppercase Base32 without padding. A large blob's negative
    /// `uncompressedSize`, which no authenticator writes, becomes 0.
    public init(_ credential: ASImportableCredential) {
        switch credential {
        case .address(let c): self = .address(c.cxfCredential)
        case .apiKey(let c): self = .apiKey(c.cxfCredential)
        case .basicAuthentication(let c): self = .basicAuth(c.cxfCredential)
        case .creditCard(let c): self = .creditCard(c.cxfCredential)
        case .customFields(let c): self = .customFields(CXF.CustomFields(c))
        case .driversLicense(let c): self = .driversLicense(c.cxfCredential)
        case .generatedPassword(let c): self = .generatedPassword(CXF.GeneratedPassword(c))
        case .identityDocument(let c): self = .identityDocument(c.cxfCredential)
        case .itemReference(let c): self = .itemReference(CXF.ItemReference(c))
        case .note(let c): self = .note(CXF.Note(c))
        case .passkey(let c): self = .passkey(CXF.Passkey(c))
        case .passport(let c): self = .passport(c.cxfCredential)
        case .personName(let c): self = .personName(c.cxfCredential)
        case .sshKey(let c): self = .sshKey(CXF.SSHKey(c))
        case .totp(let c): self = .totp(CXF.TOTP(c))
        case .wifi(let c): self = .wifi(c.cxfCredential)
        }
    }
}
