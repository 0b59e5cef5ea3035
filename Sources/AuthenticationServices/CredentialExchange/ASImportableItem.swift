import Foundation

/// One entry of a credential manager: a title, where its credentials apply, and the credentials.
///
/// In CXF JSON `created` and `lastModified` are `creationAt` and `modifiedAt` (Unix seconds; set the
/// coder's date strategy to `.secondsSince1970`). `favorite` is written only when `true`, and `tags`
/// and `extensions` only when not empty, as CXF makes them optional. Credentials and extensions
/// that Apple's types cannot represent are skipped when decoding.
public struct ASImportableItem: Codable, Hashable, Sendable {
    /// The item's identifier, unique within its account.
    public var id: Data
    /// When the item was created.
    public var created: Date?
    /// When the item was last changed.
    public var lastModified: Date?
    /// The item's name.
    public var title: String
    /// A line shown under the title.
    public var subtitle: String?
    /// Whether the person marked the item as a favorite.
    public var favorite: Bool
    /// The websites and apps the item's credentials are for.
    public var scope: ASImportableCredentialScope?
    /// The item's credentials.
    public var credentials: [ASImportableCredential]
    /// The person's tags for the item.
    public var tags: [String]
    /// The extensions associated with this item. (Apple: 26.4.)
    public var extensions: [ASImportableExtension]

    /// Creates an item (the initialiser of iOS and macOS 26.0).
    ///
    /// The dates are required here although the properties are optional; the 26.4 initialiser takes
    /// optional dates and extensions. A call that passes `Date` values and no `extensions` uses this one.
    public init(
        id: Data,
        created: Date,
        lastModified: Date,
        title: String,
        subtitle: String? = nil,
        favorite: Bool = false,
        scope: ASImportableCredentialScope? = nil,
        credentials: [ASImportableCredential],
        tags: [String] = []
    ) {
        self.init(
            id: id,
            created: Optional(created),
            lastModified: Optional(lastModified),
            title: title,
            subtitle: subtitle,
            favorite: favorite,
            scope: scope,
            credentials: credentials,
            tags: tags,
            extensions: []
        )
    }

    /// Creates an item (the initialiser of iOS and macOS 26.4).
    public init(
        id: Data,
        created: Date? = nil,
        lastModified: Date? = nil,
        title: String,
        subtitle: String? = nil,
        favorite: Bool = false,
        scope: ASImportableCredentialScope? = nil,
        credentials: [ASImportableCredential],
        tags: [String] = [],
        extensions: [ASImportableExtension] = []
    ) {
        self.id = id
        self.created = created
        self.lastModified = lastModified
        self.title = title
        self.subtitle = subtitle
        self.favorite = favorite
        self.scope = scope
        self.credentials = credentials
        self.tags = tags
        self.extensions = extensions
    }

    private enum CodingKeys: String, CodingKey {
        case id
        case created = "creationAt"
        case lastModified = "modifiedAt"
        case title, subtitle, favorite, scope, credentials, tags, extensions
    }

    /// Reads it from CXF JSON, with the specification's member names.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeID(forKey: .id)
        created = try container.decodeIfPresent(Date.self, forKey: .created)
        lastModified = try container.decodeIfPresent(Date.self, forKey: .lastModified)
        title = try container.decode(String.self, forKey: .title)
        subtitle = try container.decodeIfPresent(String.self, forKey: .subtitle)
        favorite = try container.decodeIfPresent(Bool.self, forKey: .favorite) ?? false
        scope = try container.decodeIfPresent(ASImportableCredentialScope.self, forKey: .scope)
        credentials = try container.decodeLenientArray(ASImportableCredential.self, forKey: .credentials)
        tags = try container.decodeArrayIfPresent([String].self, forKey: .tags)
        extensions = try container.decodeLenientArray(ASImportableExtension.self, forKey: .extensions)
    }

    /// Writes it as CXF JSON, with the specification's member names.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeBase64URL(id, forKey: .id)
        try container.encodeIfPresent(created, forKey: .created)
        try container.encodeIfPresent(lastModified, forKey: .lastModified)
        try container.encode(title, forKey: .title)
        try container.encodeIfPresent(subtitle, forKey: .subtitle)
        if favorite { try container.encode(true, forKey: .favorite) }
        try container.encodeIfPresent(scope, forKey: .scope)
        try container.encode(credentials, forKey: .credentials)
        try container.encodeUnlessEmpty(tags, forKey: .tags)
        try container.encodeUnlessEmpty(extensions, forKey: .extensions)
    }
}

/// Where an item's credentials may be used: websites and Android apps.
public struct ASImportableCredentialScope: Codable, Hashable, Sendable {
    /// The websites. In JSON each is its `absoluteString`; a string that is not a URL is skipped when
    /// decoding.
    public var urls: [URL]
    /// Android apps that are associated with this credential.
    public var androidApps: [ASImportableCredentialScope.AndroidAppID]

    /// Creates a scope.
    public init(urls: [URL], androidApps: [ASImportableCredentialScope.AndroidAppID] = []) {
        self.urls = urls
        self.androidApps = androidApps
    }

    /// An identifier for an Android app.
    ///
    /// In CXF JSON `bundleID` is the member `bundleId`.
    public struct AndroidAppID: Codable, Hashable, Sendable {
        /// The app's package name, for example `com.example.app`.
        public var bundleID: String
        /// The fingerprint of the app's signing certificate.
        public var certificate: ASImportableCredentialScope.AndroidAppCertificationFingerprint?
        /// The app's name, as people see it.
        public var name: String?

        /// Creates an Android app identifier.
        public init(
            bundleID: String,
            certificate: ASImportableCredentialScope.AndroidAppCertificationFingerprint?,
            name: String?
        ) {
            self.bundleID = bundleID
            self.certificate = certificate
            self.name = name
        }

        private enum CodingKeys: String, CodingKey {
            case bundleID = "bundleId"
            case certificate, name
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            bundleID = try container.decode(String.self, forKey: .bundleID)
            certificate = try container.decodeIfPresent(AndroidAppCertificationFingerprint.self, forKey: .certificate)
            name = try container.decodeIfPresent(String.self, forKey: .name)
        }

        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(bundleID, forKey: .bundleID)
            try container.encodeIfPresent(certificate, forKey: .certificate)
            try container.encodeIfPresent(name, forKey: .name)
        }
    }

    /// The fingerprint of an Android app's signing certificate.
    ///
    /// In CXF JSON `hashAlgorithm` is the member `hashAlg`.
    public struct AndroidAppCertificationFingerprint: Codable, Hashable, Sendable {
        /// The hash of the certificate.
        public var fingerprint: Data
        /// The hash algorithm's name: `sha256`, `sha1`, or another algorithm's name as the exporter wrote it.
        public var hashAlgorithm: String

        /// Creates a fingerprint.
        public init(fingerprint: Data, hashAlgorithm: String) {
            self.fingerprint = fingerprint
            self.hashAlgorithm = hashAlgorithm
        }

        private enum CodingKeys: String, CodingKey {
            case fingerprint
            case hashAlgorithm = "hashAlg"
        }

        /// Reads a fingerprint; a missing `hashAlg` reads as `sha256`, as `CXF.Decoder` does.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            fingerprint = try container.decodeBase64URL(forKey: .fingerprint)
            hashAlgorithm = try container.decodeIfPresent(String.self, forKey: .hashAlgorithm) ?? "sha256"
        }

        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeBase64URL(fingerprint, forKey: .fingerprint)
            try container.encode(hashAlgorithm, forKey: .hashAlgorithm)
        }
    }

    private enum CodingKeys: String, CodingKey {
        case urls, androidApps
    }

    /// Reads it from CXF JSON, with the specification's member names.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        urls = try container.decodeArrayIfPresent([String].self, forKey: .urls).compactMap { URL(string: $0) }
        androidApps = try container.decodeArrayIfPresent([AndroidAppID].self, forKey: .androidApps)
    }

    /// Writes it as CXF JSON, with the specification's member names.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(urls.map(\.absoluteString), forKey: .urls)
        try container.encode(androidApps, forKey: .androidApps)
    }
}
