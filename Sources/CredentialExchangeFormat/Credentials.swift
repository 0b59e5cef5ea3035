import struct Foundation.Data

extension CXF {
    /// One credential of an item. The 17 types of CXF 1.0 are typed; a credential of a type this
    /// library does not know, or one too malformed to type, is kept whole as ``UnrecognizedCredential``
    /// and written back unchanged.
    ///
    /// `indirect`: the payloads range from one string to twelve fields; boxed, a credential is one
    /// pointer wide, so arrays of them stay small and cheap to move.
    public indirect enum Credential: Hashable, Sendable {
        /// `basic-auth`: a username and password.
        case basicAuth(BasicAuth)
        /// `passkey`: a WebAuthn credential with its private key.
        case passkey(Passkey)
        /// `totp`: a time-based one-time-code secret.
        case totp(TOTP)
        /// `note`: free text.
        case note(Note)
        /// `file`: an attached file's metadata.
        case file(File)
        /// `credit-card`: a payment card.
        case creditCard(CreditCard)
        /// `address`: a postal address and telephone number.
        case address(Address)
        /// `api-key`: a key for a web API.
        case apiKey(APIKey)
        /// `drivers-license`: a driver's license.
        case driversLicense(DriversLicense)
        /// `identity-document`: an identity card or a similar document.
        case identityDocument(IdentityDocument)
        /// `passport`: a passport.
        case passport(Passport)
        /// `person-name`: a person's name, in its parts.
        case personName(PersonName)
        /// `generated-password`: a password an app generated, not tied to a login.
        case generatedPassword(GeneratedPassword)
        /// `ssh-key`: an SSH private key.
        case sshKey(SSHKey)
        /// `wifi`: a Wi-Fi network and its passphrase.
        case wifi(WiFi)
        /// `custom-fields`: a labelled group of fields of any type.
        case customFields(CustomFields)
        /// `item-reference`: a link to another item.
        case itemReference(ItemReference)
        /// A credential kept verbatim: its `type` is unknown here, or it could not be typed (see
        /// ``UnrecognizedCredential/reason``).
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

        /// A credential kept as `object`, with why it is not typed.
        public init(object: JSONValue, reason: String) {
            self.object = object
            self.reason = reason
        }
    }

    /// `passkey`: a WebAuthn credential with its private key.
    public struct Passkey: Hashable, Sendable {
        /// `credentialId`: the WebAuthn credential ID, raw bytes (base64url in JSON).
        public var credentialId: Data
        /// `rpId`: the WebAuthn relying party ID the passkey is for, a domain such as `example.com`.
        public var rpId: String
        /// `username`: the account's user name at the relying party (WebAuthn `user.name`).
        public var username: String
        /// `userDisplayName`: the account's name for display (WebAuthn `user.displayName`).
        public var userDisplayName: String
        /// `userHandle`: the relying party's identifier of the user (WebAuthn `user.id`), 1 to 64 raw bytes
        /// (base64url in JSON).
        public var userHandle: Data
        /// `key`: the private key, PKCS#8 DER bytes (base64url in JSON). A secret. See ``PrivateKeyInfo``.
        public var key: Data
        /// `fido2Extensions`: state of WebAuthn extensions the passkey carries.
        public var fido2Extensions: FIDO2Extensions?
        /// Members this library does not know, in the order they were read. ``CXF/Encoder`` writes them back
        /// after the known ones.
        public var unknownMembers: [JSONMember]

        /// A passkey; `key` is the PKCS#8 DER private key.
        public init(
            credentialId: Data,
            rpId: String,
            username: String,
            userDisplayName: String,
            userHandle: Data,
            key: Data,
            fido2Extensions: FIDO2Extensions? = nil,
            unknownMembers: [JSONMember] = []
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
        /// `hmacCredentials`: the keys of the `hmac-secret` (PRF) extension. Secrets.
        public var hmacCredentials: HMACCredentials?
        /// `credBlob`: the small blob the relying party stored with the credential (the CTAP `credBlob`
        /// extension), raw bytes (base64url in JSON).
        public var credBlob: Data?
        /// `largeBlob`: the credential's large blob (the WebAuthn `largeBlob` extension).
        public var largeBlob: LargeBlob?
        /// `payments`: whether the passkey may be used to confirm payments (the WebAuthn `payment`
        /// extension).
        public var payments: Bool?
        /// Members this library does not know, in the order they were read. ``CXF/Encoder`` writes them back.
        public var unknownMembers: [JSONMember]

        /// Passkey extensions; each is optional.
        public init(
            hmacCredentials: HMACCredentials? = nil,
            credBlob: Data? = nil,
            largeBlob: LargeBlob? = nil,
            payments: Bool? = nil,
            unknownMembers: [JSONMember] = []
        ) {
            self.hmacCredentials = hmacCredentials
            self.credBlob = credBlob
            self.largeBlob = largeBlob
            self.payments = payments
            self.unknownMembers = unknownMembers
        }

        /// The `hmac-secret` / PRF keys of a passkey.
        public struct HMACCredentials: Hashable, Sendable {
            /// `algorithm`: how the keys are used; CXF 1.0 defines `hmac-sha256`.
            public var algorithm: String
            /// `credWithUV`: the key used when the user was verified, raw bytes (base64url in JSON). A
            /// secret.
            public var credWithUV: Data
            /// `credWithoutUV`: the key used without user verification, raw bytes (base64url in JSON). A
            /// secret.
            public var credWithoutUV: Data
            /// Members this library does not know, in the order they were read. ``CXF/Encoder`` writes them
            /// back.
            public var unknownMembers: [JSONMember]

            /// The two keys of a passkey's `hmac-secret` extension.
            public init(algorithm: String, credWithUV: Data, credWithoutUV: Data, unknownMembers: [JSONMember] = []) {
                self.algorithm = algorithm
                self.credWithUV = credWithUV
                self.credWithoutUV = credWithoutUV
                self.unknownMembers = unknownMembers
            }
        }

        /// The `largeBlob` extension's data, DEFLATE-compressed.
        public struct LargeBlob: Hashable, Sendable {
            /// `uncompressedSize`: the blob's size in bytes once decompressed.
            public var uncompressedSize: UInt64
            /// `data`: the compressed blob, raw bytes (base64url in JSON).
            public var data: Data
            /// Members this library does not know, in the order they were read. ``CXF/Encoder`` writes them
            /// back.
            public var unknownMembers: [JSONMember]

            /// A large blob: the compressed `data` and its size uncompressed.
            public init(uncompressedSize: UInt64, data: Data, unknownMembers: [JSONMember] = []) {
                self.uncompressedSize = uncompressedSize
                self.data = data
                self.unknownMembers = unknownMembers
            }
        }
    }

    /// `totp`: a time-based one-time-code secret.
    public struct TOTP: Hashable, Sendable {
        /// `secret`: the shared secret as Base32 text, as on the wire. A secret.
        public var secret: String
        /// `period`: seconds per code (usually 30).
        public var period: UInt32
        /// `digits`: digits per code (usually 6).
        public var digits: UInt32
        /// `username`: the account the codes are for.
        public var username: String?
        /// `algorithm`: the hash function of the HMAC.
        public var algorithm: Algorithm
        /// `issuer`: who issued the account, such as the site's name.
        public var issuer: String?
        /// Members this library does not know, in the order they were read. ``CXF/Encoder`` writes them back
        /// after the known ones.
        public var unknownMembers: [JSONMember]

        /// The hash functions CXF 1.0 defines for `algorithm`. The decoder keeps a credential naming another
        /// as ``UnrecognizedCredential``.
        public enum Algorithm: String, Hashable, Sendable, CaseIterable {
            /// `sha1`: HMAC with SHA-1, the usual choice.
            case sha1
            /// `sha256`: HMAC with SHA-256.
            case sha256
            /// `sha512`: HMAC with SHA-512.
            case sha512
        }

        /// A `totp` credential with Base32 `secret`; the defaults are those of most authenticator apps (30
        /// seconds, 6 digits, SHA-1).
        public init(
            secret: String,
            period: UInt32 = 30,
            digits: UInt32 = 6,
            username: String? = nil,
            algorithm: Algorithm = .sha1,
            issuer: String? = nil,
            unknownMembers: [JSONMember] = []
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
        /// `content`: the text (a `string` field).
        public var content: EditableField
        /// Members this library does not know, in the order they were read. ``CXF/Encoder`` writes them back
        /// after the known ones.
        public var unknownMembers: [JSONMember]

        /// A note holding `content`.
        public init(content: EditableField, unknownMembers: [JSONMember] = []) {
            self.content = content
            self.unknownMembers = unknownMembers
        }
    }

    /// `file`: metadata of an attached file (its bytes travel separately).
    public struct File: Hashable, Sendable {
        /// `id`: the identifier the file's bytes are stored under, outside this document (base64url in JSON).
        public var id: Data
        /// `name`: the file's name.
        public var name: String
        /// `decryptedSize`: the file's size in bytes, decrypted.
        public var decryptedSize: UInt64
        /// `integrityHash`: the SHA-256 hash of the decrypted file, 32 raw bytes (base64url in JSON).
        public var integrityHash: Data
        /// Members this library does not know, in the order they were read. ``CXF/Encoder`` writes them back
        /// after the known ones.
        public var unknownMembers: [JSONMember]

        /// A file's metadata; `integrityHash` is the SHA-256 hash of its decrypted bytes.
        public init(
            id: Data,
            name: String,
            decryptedSize: UInt64,
            integrityHash: Data,
            unknownMembers: [JSONMember] = []
        ) {
            self.id = id
            self.name = name
            self.decryptedSize = decryptedSize
            self.integrityHash = integrityHash
            self.unknownMembers = unknownMembers
        }
    }

    /// `generated-password`: a password the exporter generated, not yet tied to a login.
    public struct GeneratedPassword: Hashable, Sendable {
        /// `password`: the password, a plain string in JSON. A secret.
        public var password: String
        /// Members this library does not know, in the order they were read. ``CXF/Encoder`` writes them back
        /// after the known ones.
        public var unknownMembers: [JSONMember]

        /// A `generated-password` credential.
        public init(password: String, unknownMembers: [JSONMember] = []) {
            self.password = password
            self.unknownMembers = unknownMembers
        }
    }

    /// `ssh-key`.
    public struct SSHKey: Hashable, Sendable {
        /// For example `ssh-ed25519`, `ssh-rsa`, `ecdsa-sha2-nistp256`.
        public var keyType: String
        /// `privateKey`: the private key, PKCS#8 DER bytes (base64url in JSON). A secret. See ``PrivateKeyInfo``.
        public var privateKey: Data
        /// `keyComment`: the key's comment, often `user@host`.
        public var keyComment: String?
        /// `creationDate`: the day the key was made (a `date` field, `YYYY-MM-DD`).
        public var creationDate: EditableField?
        /// `expiryDate`: the day the key expires (a `date` field, `YYYY-MM-DD`).
        public var expiryDate: EditableField?
        /// `keyGenerationSource`: what generated the key, such as an app's name.
        public var keyGenerationSource: EditableField?
        /// Members this library does not know, in the order they were read. ``CXF/Encoder`` writes them back
        /// after the known ones.
        public var unknownMembers: [JSONMember]

        /// An `ssh-key` credential; `privateKey` is the PKCS#8 DER private key.
        public init(
            keyType: String,
            privateKey: Data,
            keyComment: String? = nil,
            creationDate: EditableField? = nil,
            expiryDate: EditableField? = nil,
            keyGenerationSource: EditableField? = nil,
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

    /// `custom-fields`: a labelled group of fields of any type.
    public struct CustomFields: Hashable, Sendable {
        /// `id`: an identifier of the group, opaque bytes (base64url in JSON).
        public var id: Data?
        /// `label`: the group's label.
        public var label: String?
        /// `fields`: the fields, of any type. Any of them may be a secret, whatever its type: see
        /// ``Credential/secretFields``.
        public var fields: [EditableField]
        /// `extensions`: extensions of the group.
        public var extensions: [Extension]?
        /// Members this library does not know, in the order they were read. ``CXF/Encoder`` writes them back
        /// after the known ones.
        public var unknownMembers: [JSONMember]

        /// A `custom-fields` credential holding `fields`.
        public init(
            id: Data? = nil,
            label: String? = nil,
            fields: [EditableField],
            extensions: [Extension]? = nil,
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
        /// `reference`: the item linked to.
        public var reference: LinkedItem
        /// Members this library does not know, in the order they were read. ``CXF/Encoder`` writes them back
        /// after the known ones.
        public var unknownMembers: [JSONMember]

        /// An `item-reference` credential linking to `reference`.
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

    /// The same as ``description``: the secret does not show.
    public var debugDescription: String { description }
}

extension CXF.GeneratedPassword: CustomStringConvertible, CustomDebugStringConvertible {
    /// The password's length, never the password.
    public var description: String { "GeneratedPassword(‹redacted, \(password.count) characters›)" }
    /// The same as ``description``: the password does not show.
    public var debugDescription: String { description }
}

extension CXF.UnrecognizedCredential: CustomStringConvertible, CustomDebugStringConvertible {
    /// The type and why it is kept verbatim; never its members, which may be secrets.
    public var description: String { "UnrecognizedCredential(type: \(type ?? "none"), \(reason))" }
    /// The same as ``description``: never the credential's members.
    public var debugDescription: String { description }
}
