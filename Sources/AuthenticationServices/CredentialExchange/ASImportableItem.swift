import CredentialExchangeFormat
import Foundation

/// One entry of a credential manager: a title, where its credentials apply, and the credentials.
///
/// In CXF JSON `created` and `lastModified` are `creationAt` and `modifiedAt` (Unix seconds, whatever
/// the coder's date strategy). `favorite` is written only when `true`, and `tags`
/// and `extensions` only when not empty, as CXF makes them optional. Credentials and extensions
/// that Apple's types cannot represent are left out when decoding, as an import leaves them out.
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
    }
}
