import struct Foundation.Data

/// The FIDO Credential Exchange Format (CXF) 1.0 data model.
///
/// Every object of the format is a value type under this namespace. Members the format defines are
/// typed properties; members it does not define are kept in `unknownMembers` and written back by
/// ``CXF/Encoder``, so a document survives decode → encode → decode unchanged.
///
/// Binary members (ids, keys, hashes) hold the decoded bytes; the wire form is unpadded base64url.
/// Timestamps are Unix seconds as written (negative and far-future values are kept; the validator
/// warns about them).
public enum CXF {}

extension CXF {
    /// `version`: the format version a document declares.
    public struct Version: Hashable, Sendable, CustomStringConvertible {
        public var major: UInt32
        public var minor: UInt32
        public var unknownMembers: [JSONMember]

        /// CXF 1.0, the only version published.
        public static let v1_0 = Version(major: 1, minor: 0)
        /// What the decoder holds when a document does not give its version, or gives one it
        /// cannot read: major 0, which no reader accepts. A version is never assumed.
        public static let unknown = Version(major: 0, minor: 0)

        public init(major: UInt32, minor: UInt32, unknownMembers: [JSONMember] = []) {
            self.major = major
            self.minor = minor
            self.unknownMembers = unknownMembers
        }

        public var description: String { "\(major).\(minor)" }
    }

    /// A whole document. Exports start at a ``Header``; several password managers export a single
    /// ``Account`` with no header, and both shapes are kept as they came.
    public enum Document: Hashable, Sendable {
        case header(Header)
        case account(Account)

        /// The accounts of the document: the header's, or the one top-level account.
        public var accounts: [Account] {
            switch self {
            case .header(let header): header.accounts
            case .account(let account): [account]
            }
        }

        /// The declared version; `nil` for an account-only document, which declares none.
        public var version: Version? {
            if case .header(let header) = self { return header.version }
            return nil
        }
    }

    /// The top-level object of an export.
    public struct Header: Hashable, Sendable {
        public var version: Version
        /// The exporter's relying-party identifier (`exporterRpId`).
        public var exporterRpId: String
        public var exporterDisplayName: String
        /// Unix seconds.
        public var timestamp: Int64
        public var accounts: [Account]
        public var unknownMembers: [JSONMember]

        public init(
            version: Version = .v1_0, exporterRpId: String, exporterDisplayName: String, timestamp: Int64,
            accounts: [Account], unknownMembers: [JSONMember] = []
        ) {
            self.version = version
            self.exporterRpId = exporterRpId
            self.exporterDisplayName = exporterDisplayName
            self.timestamp = timestamp
            self.accounts = accounts
            self.unknownMembers = unknownMembers
        }
    }

    /// One user account of the exporter, with its items and collections.
    public struct Account: Hashable, Sendable {
        public var id: Data
        /// `""` when the exporter has none.
        public var username: String
        public var email: String
        public var fullName: String?
        public var collections: [Collection]
        public var items: [Item]
        public var extensions: [Extension]?
        public var unknownMembers: [JSONMember]

        public init(
            id: Data, username: String = "", email: String = "", fullName: String? = nil,
            collections: [Collection] = [], items: [Item] = [], extensions: [Extension]? = nil,
            unknownMembers: [JSONMember] = []
        ) {
            self.id = id
            self.username = username
            self.email = email
            self.fullName = fullName
            self.collections = collections
            self.items = items
            self.extensions = extensions
            self.unknownMembers = unknownMembers
        }
    }

    /// A folder-like grouping of items; collections nest.
    public struct Collection: Hashable, Sendable {
        public var id: Data
        public var creationAt: Int64?
        public var modifiedAt: Int64?
        public var title: String
        public var subtitle: String?
        public var items: [LinkedItem]
        public var subCollections: [Collection]?
        public var extensions: [Extension]?
        public var unknownMembers: [JSONMember]

        public init(
            id: Data, creationAt: Int64? = nil, modifiedAt: Int64? = nil, title: String, subtitle: String? = nil,
            items: [LinkedItem] = [], subCollections: [Collection]? = nil, extensions: [Extension]? = nil,
            unknownMembers: [JSONMember] = []
        ) {
            self.id = id
            self.creationAt = creationAt
            self.modifiedAt = modifiedAt
            self.title = title
            self.subtitle = subtitle
            self.items = items
            self.subCollections = subCollections
            self.extensions = extensions
            self.unknownMembers = unknownMembers
        }
    }

    /// A reference to an item, in this account (`account` absent) or in another one.
    public struct LinkedItem: Hashable, Sendable {
        public var item: Data
        public var account: Data?
        public var unknownMembers: [JSONMember]

        public init(item: Data, account: Data? = nil, unknownMembers: [JSONMember] = []) {
            self.item = item
            self.account = account
            self.unknownMembers = unknownMembers
        }
    }

    /// One entry of a password manager: a title, where it applies, and its credentials.
    public struct Item: Hashable, Sendable {
        public var id: Data
        public var creationAt: Int64?
        public var modifiedAt: Int64?
        public var title: String
        public var subtitle: String?
        public var favorite: Bool?
        public var scope: CredentialScope?
        public var credentials: [Credential]
        public var tags: [String]?
        public var extensions: [Extension]?
        public var unknownMembers: [JSONMember]

        public init(
            id: Data, creationAt: Int64? = nil, modifiedAt: Int64? = nil, title: String, subtitle: String? = nil,
            favorite: Bool? = nil, scope: CredentialScope? = nil, credentials: [Credential] = [],
            tags: [String]? = nil, extensions: [Extension]? = nil, unknownMembers: [JSONMember] = []
        ) {
            self.id = id
            self.creationAt = creationAt
            self.modifiedAt = modifiedAt
            self.title = title
            self.subtitle = subtitle
            self.favorite = favorite
            self.scope = scope
            self.credentials = credentials
            self.tags = tags
            self.extensions = extensions
            self.unknownMembers = unknownMembers
        }
    }

    /// Where an item's credentials may be used: web addresses and Android apps.
    public struct CredentialScope: Hashable, Sendable {
        /// URLs as written (kept as text: real exports hold strings no URL parser accepts).
        public var urls: [String]
        public var androidApps: [AndroidAppIdentifier]
        public var unknownMembers: [JSONMember]

        public init(urls: [String] = [], androidApps: [AndroidAppIdentifier] = [], unknownMembers: [JSONMember] = []) {
            self.urls = urls
            self.androidApps = androidApps
            self.unknownMembers = unknownMembers
        }
    }

    /// An Android application an item's credentials belong to.
    public struct AndroidAppIdentifier: Hashable, Sendable {
        public var bundleId: String
        public var certificate: AndroidAppCertificateFingerprint?
        public var name: String?
        public var unknownMembers: [JSONMember]

        public init(
            bundleId: String, certificate: AndroidAppCertificateFingerprint? = nil, name: String? = nil,
            unknownMembers: [JSONMember] = []
        ) {
            self.bundleId = bundleId
            self.certificate = certificate
            self.name = name
            self.unknownMembers = unknownMembers
        }
    }

    /// The signing certificate fingerprint of an Android app.
    public struct AndroidAppCertificateFingerprint: Hashable, Sendable {
        public var fingerprint: Data
        public var hashAlgorithm: HashAlgorithm
        public var unknownMembers: [JSONMember]

        /// `hashAlg`: `sha256`, `sha1`, or another algorithm's name.
        public enum HashAlgorithm: Hashable, Sendable {
            case sha256
            case sha1
            case other(String)

            public init(rawValue: String) {
                switch rawValue {
                case "sha256": self = .sha256
                case "sha1": self = .sha1
                default: self = .other(rawValue)
                }
            }

            public var rawValue: String {
                switch self {
                case .sha256: "sha256"
                case .sha1: "sha1"
                case .other(let name): name
                }
            }
        }

        public init(fingerprint: Data, hashAlgorithm: HashAlgorithm, unknownMembers: [JSONMember] = []) {
            self.fingerprint = fingerprint
            self.hashAlgorithm = hashAlgorithm
            self.unknownMembers = unknownMembers
        }
    }

    /// A value a person can see and edit, with its kind (`fieldType`). The value is always text.
    ///
    /// Fields are the most numerous objects of a document, so a field is one reference to shared,
    /// copy-on-write storage: copying a credential copies a pointer per field, not six members.
    public struct EditableField: Hashable, Sendable {
        /// `nil` when absent; empty when the exporter wrote `"id": ""`.
        public var id: Data? {
            get { storage.id }
            set { mutableStorage.id = newValue }
        }
        public var fieldType: FieldType {
            get { storage.fieldType }
            set { mutableStorage.fieldType = newValue }
        }
        public var value: String {
            get { storage.value }
            set { mutableStorage.value = newValue }
        }
        public var label: String? {
            get { storage.label }
            set { mutableStorage.label = newValue }
        }
        public var extensions: [Extension]? {
            get { storage.extensions }
            set { mutableStorage.extensions = newValue }
        }
        public var unknownMembers: [JSONMember] {
            get { storage.unknownMembers }
            set { mutableStorage.unknownMembers = newValue }
        }

        public init(
            id: Data? = nil, fieldType: FieldType = .string, value: String, label: String? = nil,
            extensions: [Extension]? = nil, unknownMembers: [JSONMember] = []
        ) {
            storage = Storage(
                id: id, fieldType: fieldType, value: value, label: label, extensions: extensions,
                unknownMembers: unknownMembers)
        }

        private var storage: Storage

        private var mutableStorage: Storage {
            mutating get {
                if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
                return storage
            }
        }

        public static func == (lhs: EditableField, rhs: EditableField) -> Bool {
            lhs.storage === rhs.storage || lhs.storage.members == rhs.storage.members
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(storage.id)
            hasher.combine(storage.fieldType)
            hasher.combine(storage.value)
            hasher.combine(storage.label)
            hasher.combine(storage.extensions)
            hasher.combine(storage.unknownMembers)
        }

        /// `@unchecked Sendable`: the storage is only mutated through `mutableStorage`, which first
        /// makes it unique to the value being mutated, so no two threads ever share a mutable one.
        private final class Storage: @unchecked Sendable {
            var id: Data?
            var fieldType: FieldType
            var value: String
            var label: String?
            var extensions: [Extension]?
            var unknownMembers: [JSONMember]

            init(
                id: Data?, fieldType: FieldType, value: String, label: String?, extensions: [Extension]?,
                unknownMembers: [JSONMember]
            ) {
                self.id = id
                self.fieldType = fieldType
                self.value = value
                self.label = label
                self.extensions = extensions
                self.unknownMembers = unknownMembers
            }

            func copy() -> Storage {
                Storage(
                    id: id, fieldType: fieldType, value: value, label: label, extensions: extensions,
                    unknownMembers: unknownMembers)
            }

            var members: Members {
                Members(
                    id: id, fieldType: fieldType, value: value, label: label, extensions: extensions,
                    unknownMembers: unknownMembers)
            }

            struct Members: Equatable {
                var id: Data?
                var fieldType: FieldType
                var value: String
                var label: String?
                var extensions: [Extension]?
                var unknownMembers: [JSONMember]
            }
        }
    }

}

extension CXF.EditableField: CustomStringConvertible, CustomDebugStringConvertible {
    /// The field with its value, unless the field is concealed: then only the value's length shows.
    public var description: String {
        let shown = fieldType == .concealedString ? "‹concealed, \(value.count) characters›" : value.debugDescription
        return "EditableField(\(fieldType.rawValue): \(shown)\(label.map { ", label: \($0.debugDescription)" } ?? ""))"
    }

    public var debugDescription: String { description }
}

extension CXF {
    /// The kind of an ``EditableField``. Unknown kinds are kept by name.
    public enum FieldType: Hashable, Sendable, CaseIterable {
        case string
        case concealedString
        case email
        case number
        case boolean
        case date
        case yearMonth
        case wifiNetworkSecurityType
        case subdivisionCode
        case countryCode
        case unknown(String)

        public static let allCases: [FieldType] = [
            .string, .concealedString, .email, .number, .boolean, .date, .yearMonth, .wifiNetworkSecurityType,
            .subdivisionCode, .countryCode,
        ]

        public init(rawValue: String) {
            switch rawValue {
            case "string": self = .string
            case "concealed-string": self = .concealedString
            case "email": self = .email
            case "number": self = .number
            case "boolean": self = .boolean
            case "date": self = .date
            case "year-month": self = .yearMonth
            case "wifi-network-security-type": self = .wifiNetworkSecurityType
            case "subdivision-code": self = .subdivisionCode
            case "country-code": self = .countryCode
            default: self = .unknown(rawValue)
            }
        }

        /// The wire name.
        public var rawValue: String {
            switch self {
            case .string: "string"
            case .concealedString: "concealed-string"
            case .email: "email"
            case .number: "number"
            case .boolean: "boolean"
            case .date: "date"
            case .yearMonth: "year-month"
            case .wifiNetworkSecurityType: "wifi-network-security-type"
            case .subdivisionCode: "subdivision-code"
            case .countryCode: "country-code"
            case .unknown(let name): name
            }
        }
    }

    /// The values a `wifi-network-security-type` field may hold.
    public enum WiFiNetworkSecurityType: String, Hashable, Sendable, CaseIterable {
        case unsecured
        case wpaPersonal = "wpa-personal"
        case wpa2Personal = "wpa2-personal"
        case wpa3Personal = "wpa3-personal"
        case wep

        /// Reads the spellings exporters and Wi-Fi QR codes use besides CXF's own: any case, with
        /// or without separators or the `personal`/`psk` suffix (`WPA2`, `WPA2-PSK`, `wpa2_personal`,
        /// `SAE`, `open`, `nopass`). `nil` for anything else, such as the enterprise modes.
        public init?(lenient text: String) {
            var key = text.lowercased().filter { $0.isLetter || $0.isNumber }
            for suffix in ["personal", "psk"] where key.hasSuffix(suffix) && key.count > suffix.count {
                key.removeLast(suffix.count)
            }
            switch key {
            case "unsecured", "none", "open", "nopass": self = .unsecured
            case "wpa": self = .wpaPersonal
            case "wpa2": self = .wpa2Personal
            case "wpa3", "sae", "wpa3sae": self = .wpa3Personal
            case "wep": self = .wep
            default: return nil
            }
        }
    }

    /// An extension object: `shared` is modelled; any other is kept whole.
    public enum Extension: Hashable, Sendable {
        case shared(SharedExtension)
        /// An extension this library does not know, kept verbatim (the object, `name` included).
        case unknown(name: String, object: JSONValue)

        /// The extension's `name`.
        public var name: String {
            switch self {
            case .shared: SharedExtension.name
            case .unknown(let name, _): name
            }
        }
    }

    /// The `shared` extension: who else may see or change a collection or item.
    public struct SharedExtension: Hashable, Sendable {
        public static let name = "shared"
        public var accessors: [Accessor]
        public var unknownMembers: [JSONMember]

        public init(accessors: [Accessor], unknownMembers: [JSONMember] = []) {
            self.accessors = accessors
            self.unknownMembers = unknownMembers
        }

        /// The accessors the specification says to honour: known type, with their unknown
        /// permissions left out, and none left without a permission.
        public var effectiveAccessors: [Accessor] {
            accessors.compactMap { accessor in
                guard case .known = accessor.type else { return nil }
                var kept = accessor
                kept.permissions = accessor.permissions.filter { if case .unknown = $0 { false } else { true } }
                return kept.permissions.isEmpty ? nil : kept
            }
        }

        public struct Accessor: Hashable, Sendable {
            public var type: AccessorType
            public var accountId: Data
            public var name: String
            public var permissions: [Permission]
            public var unknownMembers: [JSONMember]

            public init(
                type: AccessorType, accountId: Data, name: String, permissions: [Permission],
                unknownMembers: [JSONMember] = []
            ) {
                self.type = type
                self.accountId = accountId
                self.name = name
                self.permissions = permissions
                self.unknownMembers = unknownMembers
            }
        }

        /// `user` or `group`; other values are kept and ignored.
        public enum AccessorType: Hashable, Sendable {
            case known(Kind)
            case unknown(String)

            public enum Kind: String, Hashable, Sendable { case user, group }

            public static let user = AccessorType.known(.user)
            public static let group = AccessorType.known(.group)

            public init(rawValue: String) {
                if let kind = Kind(rawValue: rawValue) { self = .known(kind) } else { self = .unknown(rawValue) }
            }

            public var rawValue: String {
                switch self {
                case .known(let kind): kind.rawValue
                case .unknown(let name): name
                }
            }
        }

        public enum Permission: Hashable, Sendable {
            case read, readSecret, update, create, delete, share, manage
            case unknown(String)

            public init(rawValue: String) {
                switch rawValue {
                case "read": self = .read
                case "readSecret": self = .readSecret
                case "update": self = .update
                case "create": self = .create
                case "delete": self = .delete
                case "share": self = .share
                case "manage": self = .manage
                default: self = .unknown(rawValue)
                }
            }

            public var rawValue: String {
                switch self {
                case .read: "read"
                case .readSecret: "readSecret"
                case .update: "update"
                case .create: "create"
                case .delete: "delete"
                case .share: "share"
                case .manage: "manage"
                case .unknown(let name): name
                }
            }
        }
    }
}
