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
        /// `major`: a new major version changes the format incompatibly. This library reads major 1; the
        /// validator reports any other as an error.
        public var major: UInt32
        /// `minor`: minor versions only add to the format, so any minor version of major 1 is read.
        public var minor: UInt32
        /// Members this library does not know, repeats of known members, and values it could not read as
        /// their type (``JSONMember/unreadable``), in the order read; ``CXF/Encoder`` writes them all back.
        public var unknownMembers: [JSONMember]

        /// CXF 1.0, the only version published.
        public static let v1_0 = Version(major: 1, minor: 0)
        /// What the decoder holds when a document does not give its version, or gives one it
        /// cannot read: major 0, which no reader accepts. A version is never assumed.
        public static let unknown = Version(major: 0, minor: 0)

        /// The version `major.minor`.
        public init(major: UInt32, minor: UInt32, unknownMembers: [JSONMember] = []) {
            self.major = major
            self.minor = minor
            self.unknownMembers = unknownMembers
        }

        /// `major.minor`, such as `1.0`.
        public var description: String { "\(major).\(minor)" }
    }

    /// A whole document. Exports start at a ``Header``; several password managers export a single
    /// ``Account`` with no header, and both shapes are kept as they came.
    public enum Document: Hashable, Sendable {
        /// A document that starts at a ``Header``, as CXF 1.0 defines it.
        case header(Header)
        /// A document that is a single ``Account`` object with no header, as several password managers
        /// export.
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
        /// `version`: the CXF version the exporter declares. The decoder holds ``Version/unknown`` when the
        /// document gives none or one it cannot read.
        public var version: Version
        /// `exporterRpId`: the exporting app's WebAuthn relying party ID, a domain.
        public var exporterRpId: String
        /// `exporterDisplayName`: the exporting app's name, for people.
        public var exporterDisplayName: String
        /// `timestamp`: when the export was made, in Unix seconds.
        public var timestamp: Int64
        /// `accounts`: the exported accounts.
        public var accounts: [Account]
        /// Members this library does not know, repeats of known members, and values it could not read as
        /// their type (``JSONMember/unreadable``), in the order read; ``CXF/Encoder`` writes them all back.
        public var unknownMembers: [JSONMember]

        /// A header; the version defaults to CXF 1.0 and `timestamp` is in Unix seconds.
        public init(
            version: Version = .v1_0,
            exporterRpId: String,
            exporterDisplayName: String,
            timestamp: Int64,
            accounts: [Account],
            unknownMembers: [JSONMember] = []
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
        /// `id`: the exporter's identifier of the account, opaque bytes (base64url in JSON, at most 64
        /// bytes). A ``LinkedItem`` in another account names it.
        public var id: Data
        /// `username`: the account's user name; `""` when the exporter has none.
        public var username: String
        /// `email`: the account's email address; `""` when the exporter has none.
        public var email: String
        /// `fullName`: the account holder's full name, when the exporter gives one.
        public var fullName: String?
        /// `collections`: the account's collections, which refer to its ``items``. Empty when the document
        /// has none.
        public var collections: [Collection]
        /// `items`: every item of the account.
        public var items: [Item]
        /// `extensions`: extensions that apply to the whole account; `nil` when absent.
        public var extensions: [Extension]?
        /// Members this library does not know, repeats of known members, and values it could not read as
        /// their type (``JSONMember/unreadable``), in the order read; ``CXF/Encoder`` writes them all back.
        public var unknownMembers: [JSONMember]

        /// An account; every member but the id defaults to empty or absent.
        public init(
            id: Data,
            username: String = "",
            email: String = "",
            fullName: String? = nil,
            collections: [Collection] = [],
            items: [Item] = [],
            extensions: [Extension]? = nil,
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
        /// `id`: the collection's identifier, opaque bytes (base64url in JSON, at most 64 bytes). Collections
        /// and items of an account share one id space.
        public var id: Data
        /// `creationAt`: when the collection was created, in Unix seconds.
        public var creationAt: Int64?
        /// `modifiedAt`: when the collection was last changed, in Unix seconds.
        public var modifiedAt: Int64?
        /// `title`: the collection's name.
        public var title: String
        /// `subtitle`: a line shown under the title.
        public var subtitle: String?
        /// `items`: the items in the collection, by reference; one item can be in several collections.
        public var items: [LinkedItem]
        /// `subCollections`: collections nested in this one.
        public var subCollections: [Collection]?
        /// `extensions`: extensions of the collection, such as ``SharedExtension`` (`shared`).
        public var extensions: [Extension]?
        /// Members this library does not know, repeats of known members, and values it could not read as
        /// their type (``JSONMember/unreadable``), in the order read; ``CXF/Encoder`` writes them all back.
        public var unknownMembers: [JSONMember]

        /// A collection; every member but the id and title defaults to empty or absent.
        public init(
            id: Data,
            creationAt: Int64? = nil,
            modifiedAt: Int64? = nil,
            title: String,
            subtitle: String? = nil,
            items: [LinkedItem] = [],
            subCollections: [Collection]? = nil,
            extensions: [Extension]? = nil,
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
        /// `item`: the ``Item/id`` of the item referred to (base64url in JSON).
        public var item: Data
        /// `account`: the ``Account/id`` of the account holding the item; `nil` means this account. The
        /// validator warns when the item is not in the document.
        public var account: Data?
        /// Members this library does not know, repeats of known members, and values it could not read as
        /// their type (``JSONMember/unreadable``), in the order read; ``CXF/Encoder`` writes them all back.
        public var unknownMembers: [JSONMember]

        /// A link to item `item` in account `account` (`nil`: this account).
        public init(item: Data, account: Data? = nil, unknownMembers: [JSONMember] = []) {
            self.item = item
            self.account = account
            self.unknownMembers = unknownMembers
        }
    }

    /// One entry of a password manager: a title, where it applies, and its credentials.
    public struct Item: Hashable, Sendable {
        /// `id`: the item's identifier, opaque bytes (base64url in JSON, at most 64 bytes), unique within its
        /// account.
        public var id: Data
        /// `creationAt`: when the item was created, in Unix seconds.
        public var creationAt: Int64?
        /// `modifiedAt`: when the item was last changed, in Unix seconds.
        public var modifiedAt: Int64?
        /// `title`: the item's name, as a person sees it in a list.
        public var title: String
        /// `subtitle`: a line shown under the title.
        public var subtitle: String?
        /// `favorite`: whether the person marked the item as a favorite.
        public var favorite: Bool?
        /// `scope`: the websites and Android apps the item's credentials are for.
        public var scope: CredentialScope?
        /// `credentials`: the item's credentials, in the order written. One item can hold several of
        /// different types, such as a password, a TOTP secret and a passkey for the same site.
        public var credentials: [Credential]
        /// `tags`: labels the person gave the item.
        public var tags: [String]?
        /// `extensions`: extensions of the item, such as ``SharedExtension`` (`shared`).
        public var extensions: [Extension]?
        /// Members this library does not know, repeats of known members, and values it could not read as
        /// their type (``JSONMember/unreadable``), in the order read; ``CXF/Encoder`` writes them all back.
        public var unknownMembers: [JSONMember]

        /// An item; every member but the id and title defaults to empty or absent.
        public init(
            id: Data,
            creationAt: Int64? = nil,
            modifiedAt: Int64? = nil,
            title: String,
            subtitle: String? = nil,
            favorite: Bool? = nil,
            scope: CredentialScope? = nil,
            credentials: [Credential] = [],
            tags: [String]? = nil,
            extensions: [Extension]? = nil,
            unknownMembers: [JSONMember] = []
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
        /// `androidApps`: Android apps the credentials are for.
        public var androidApps: [AndroidAppIdentifier]
        /// Members this library does not know, repeats of known members, and values it could not read as
        /// their type (``JSONMember/unreadable``), in the order read; ``CXF/Encoder`` writes them all back.
        public var unknownMembers: [JSONMember]

        /// A scope of these URLs and apps.
        public init(urls: [String] = [], androidApps: [AndroidAppIdentifier] = [], unknownMembers: [JSONMember] = []) {
            self.urls = urls
            self.androidApps = androidApps
            self.unknownMembers = unknownMembers
        }
    }

    /// An Android application an item's credentials belong to.
    public struct AndroidAppIdentifier: Hashable, Sendable {
        /// `bundleId`: the app's package name, such as `com.example.app`.
        public var bundleId: String
        /// `certificate`: the fingerprint of the certificate the app is signed with, which tells the genuine
        /// app from another one using the same package name.
        public var certificate: AndroidAppCertificateFingerprint?
        /// `name`: the app's name, for people.
        public var name: String?
        /// Members this library does not know, repeats of known members, and values it could not read as
        /// their type (``JSONMember/unreadable``), in the order read; ``CXF/Encoder`` writes them all back.
        public var unknownMembers: [JSONMember]

        /// An Android app identifier.
        public init(
            bundleId: String,
            certificate: AndroidAppCertificateFingerprint? = nil,
            name: String? = nil,
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
        /// `fingerprint`: the hash of the signing certificate, raw bytes (base64url in JSON).
        public var fingerprint: Data
        /// `hashAlg`: the hash function that made ``fingerprint``.
        public var hashAlgorithm: HashAlgorithm
        /// Members this library does not know, repeats of known members, and values it could not read as
        /// their type (``JSONMember/unreadable``), in the order read; ``CXF/Encoder`` writes them all back.
        public var unknownMembers: [JSONMember]

        /// `hashAlg`: `sha256`, `sha1`, or another algorithm's name.
        public enum HashAlgorithm: Hashable, Sendable {
            /// `sha256`: SHA-256.
            case sha256
            /// `sha1`: SHA-1.
            case sha1
            /// Any other name, kept as written.
            case other(String)

            /// The algorithm with wire name `rawValue`; a name other than `sha256` and `sha1` becomes
            /// ``other(_:)``.
            public init(rawValue: String) {
                switch rawValue {
                case "sha256": self = .sha256
                case "sha1": self = .sha1
                default: self = .other(rawValue)
                }
            }

            /// The name on the wire.
            public var rawValue: String {
                switch self {
                case .sha256: "sha256"
                case .sha1: "sha1"
                case .other(let name): name
                }
            }
        }

        /// A fingerprint made with `hashAlgorithm`.
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
            get { storage.members.id }
            set { mutableStorage.members.id = newValue }
        }
        /// `fieldType`: the kind of value, which says how ``value`` is written. It can differ from the type
        /// the member holding the field calls for; the validator warns then.
        public var fieldType: FieldType {
            get { storage.members.fieldType }
            set { mutableStorage.members.fieldType = newValue }
        }
        /// `value`: the value, always text (`"true"`, `"2030-01-31"`, `"US-CA"`). It may be a secret: see
        /// ``Credential/secretFields``.
        public var value: String {
            get { storage.members.value }
            set { mutableStorage.members.value = newValue }
        }
        /// `label`: a label the person gave the field.
        public var label: String? {
            get { storage.members.label }
            set { mutableStorage.members.label = newValue }
        }
        /// `extensions`: extensions of the field.
        public var extensions: [Extension]? {
            get { storage.members.extensions }
            set { mutableStorage.members.extensions = newValue }
        }
        /// Members this library does not know, in the order they were read. ``CXF/Encoder`` writes them back.
        public var unknownMembers: [JSONMember] {
            get { storage.members.unknownMembers }
            set { mutableStorage.members.unknownMembers = newValue }
        }

        /// A field; its type defaults to `string`.
        public init(
            id: Data? = nil,
            fieldType: FieldType = .string,
            value: String,
            label: String? = nil,
            extensions: [Extension]? = nil,
            unknownMembers: [JSONMember] = []
        ) {
            storage = Storage(
                Members(
                    id: id,
                    fieldType: fieldType,
                    value: value,
                    label: label,
                    extensions: extensions,
                    unknownMembers: unknownMembers
                )
            )
        }

        /// A field holding `members`.
        package init(_ members: Members) { storage = Storage(members) }

        /// The field's members, as the codec reads and writes them.
        package var members: Members { storage.members }

        private var storage: Storage

        private var mutableStorage: Storage {
            mutating get {
                if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
                return storage
            }
        }

        /// Whether the two fields' members are all equal.
        public static func == (lhs: EditableField, rhs: EditableField) -> Bool {
            lhs.storage === rhs.storage || lhs.storage.members == rhs.storage.members
        }

        /// Hashes every member.
        public func hash(into hasher: inout Hasher) {
            let members = storage.members
            hasher.combine(members.id)
            hasher.combine(members.fieldType)
            hasher.combine(members.value)
            hasher.combine(members.label)
            hasher.combine(members.extensions)
            hasher.combine(members.unknownMembers)
        }

        /// `@unchecked Sendable`: the storage is only mutated through `mutableStorage`, which first
        /// makes it unique to the value being mutated, so no two threads ever share a mutable one.
        private final class Storage: @unchecked Sendable {
            var members: Members

            init(_ members: Members) { self.members = members }

            func copy() -> Storage { Storage(members) }
        }

        /// A field's members: what its storage holds, and what the codec reads and writes (a plain
        /// struct, so the reader fills it with no reference counting or access checks per member,
        /// and the field's storage is made once, when it is complete).
        package struct Members: Equatable, Sendable {
            var id: Data?
            var fieldType: FieldType
            var value: String
            var label: String?
            var extensions: [Extension]?
            package var unknownMembers: [JSONMember]

            init(
                id: Data? = nil,
                fieldType: FieldType,
                value: String,
                label: String? = nil,
                extensions: [Extension]? = nil,
                unknownMembers: [JSONMember] = []
            ) {
                self.id = id
                self.fieldType = fieldType
                self.value = value
                self.label = label
                self.extensions = extensions
                self.unknownMembers = unknownMembers
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

    /// The same as ``description``: a concealed field's value does not show.
    public var debugDescription: String { description }
}

extension CXF {
    /// The kind of an ``EditableField``. Unknown kinds are kept by name.
    public enum FieldType: Hashable, Sendable, CaseIterable {
        /// `string`: plain text.
        case string
        /// `concealed-string`: text to keep hidden until asked for, such as a password.
        case concealedString
        /// `email`: an email address.
        case email
        /// `number`: a decimal number, written as text.
        case number
        /// `boolean`: `true` or `false`.
        case boolean
        /// `date`: a day, `YYYY-MM-DD`.
        case date
        /// `year-month`: a month, `YYYY-MM`.
        case yearMonth
        /// `wifi-network-security-type`: one of ``WiFiNetworkSecurityType``.
        case wifiNetworkSecurityType
        /// `subdivision-code`: an ISO 3166-2 subdivision code, such as `US-CA`.
        case subdivisionCode
        /// `country-code`: an ISO 3166-1 alpha-2 country code, such as `US`.
        case countryCode
        /// A field type CXF 1.0 does not define, kept by its wire name.
        case unknown(String)

        /// The ten field types CXF 1.0 defines (not ``unknown(_:)``).
        public static let allCases: [FieldType] = [
            .string, .concealedString, .email, .number, .boolean, .date, .yearMonth, .wifiNetworkSecurityType,
            .subdivisionCode, .countryCode,
        ]

        /// The field type with wire name `rawValue`; any other name becomes ``unknown(_:)``.
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
        /// `unsecured`: an open network, without a passphrase.
        case unsecured
        /// `wpa-personal`: WPA with a shared passphrase.
        case wpaPersonal = "wpa-personal"
        /// `wpa2-personal`: WPA2 with a shared passphrase.
        case wpa2Personal = "wpa2-personal"
        /// `wpa3-personal`: WPA3 with a shared passphrase (SAE).
        case wpa3Personal = "wpa3-personal"
        /// `wep`: WEP.
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
        /// `shared`: who else may see or change a collection or item.
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
        /// The extension's `name`: `shared`.
        public static let name = "shared"
        /// `accessors`: the users and groups the collection or item is shared with, as written.
        /// ``effectiveAccessors`` gives those to honour.
        public var accessors: [Accessor]
        /// Members this library does not know, repeats of known members, and values it could not read as
        /// their type (``JSONMember/unreadable``), in the order read; ``CXF/Encoder`` writes them all back.
        public var unknownMembers: [JSONMember]

        /// A `shared` extension with these accessors.
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

        /// One user or group a collection or item is shared with, and what they may do.
        public struct Accessor: Hashable, Sendable {
            /// `type`: whether ``accountId`` names a user or a group.
            public var type: AccessorType
            /// `accountId`: the ``Account/id`` of the user or group given access (base64url in JSON).
            public var accountId: Data
            /// `name`: the user's user name, or the group's name.
            public var name: String
            /// `permissions`: what the accessor may do. Unknown permissions are kept;
            /// ``SharedExtension/effectiveAccessors`` leaves them out.
            public var permissions: [Permission]
            /// Members this library does not know, repeats of known members, and values it could not read as
            /// their type (``JSONMember/unreadable``), in the order read; ``CXF/Encoder`` writes them all
            /// back.
            public var unknownMembers: [JSONMember]

            /// An accessor.
            public init(
                type: AccessorType,
                accountId: Data,
                name: String,
                permissions: [Permission],
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
            /// `user` or `group`.
            case known(Kind)
            /// Any other type, kept as written; the specification says to ignore such an accessor.
            case unknown(String)

            /// The accessor types CXF 1.0 defines.
            public enum Kind: String, Hashable, Sendable {
                /// `user`: one account.
                case user
                /// `group`: a group of accounts.
                case group
            }

            /// An accessor that is one account (`user`).
            public static let user = AccessorType.known(.user)
            /// An accessor that is a group of accounts (`group`).
            public static let group = AccessorType.known(.group)

            /// The type with wire name `rawValue`; a name other than `user` and `group` becomes
            /// ``unknown(_:)``.
            public init(rawValue: String) {
                if let kind = Kind(rawValue: rawValue) { self = .known(kind) } else { self = .unknown(rawValue) }
            }

            /// The name on the wire.
            public var rawValue: String {
                switch self {
                case .known(let kind): kind.rawValue
                case .unknown(let name): name
                }
            }
        }

        /// What an accessor may do with a shared collection or item. Unknown permissions are kept by name.
        public enum Permission: Hashable, Sendable {
            /// `read`: see the entity, its secrets hidden (autofill may still use them).
            case read
            /// `readSecret`: see its secrets too.
            case readSecret
            /// `update`: change it.
            case update
            /// `create`: add to it, such as items to a collection.
            case create
            /// `delete`: delete what it holds.
            case delete
            /// `share`: share it further.
            case share
            /// `manage`: change who it is shared with.
            case manage
            /// Any other permission, kept as written; it grants nothing.
            case unknown(String)

            /// The permission with wire name `rawValue`; any other name becomes ``unknown(_:)``.
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

            /// The name on the wire.
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

extension CXF.EditableField.Members: SchemaObject {
    package static let schema = ObjectSchema("an editable field", of: Self.self)
    package static var blank: Self { Self(fieldType: .string, value: "") }

    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {
        try v.optional("id", &id, .id, &c)
        try v.required(
            "fieldType",
            &fieldType,
            .custom(read: { d, _ throws(ScanFailure) in try d.fieldType() }, write: { $0.string($1.rawValue) }),
            .assumed("the type the member calls for is assumed"),
            &c
        )
        try v.required(
            "value",
            &value,
            .custom(read: { d, _ throws(ScanFailure) in try d.fieldValue() }, write: { $0.string($1) }),
            .empty,
            &c
        )
        try v.optional("label", &label, .string, &c)
        try v.optional("extensions", &extensions, .extensions, &c)
    }
}
