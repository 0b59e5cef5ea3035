import Foundation

/// One user account of the exporting app, with its items and collections.
///
/// In CXF JSON `userName` is the member `username`. CXF lets an account carry extensions; Apple's
/// type has no place for them (see ``ASExportedCredentialData/CXFOmission``).
public struct ASImportableAccount: Codable, Hashable, Sendable {
    /// The account's identifier in the exporting app (at most 64 bytes).
    public var id: Data
    /// The account's user name; empty when the exporter has none.
    public var userName: String
    /// The account's email address; may be empty.
    public var email: String
    /// The account holder's full name.
    public var fullName: String?
    /// The account's collections (folders).
    public var collections: [ASImportableCollection]
    /// The account's items.
    public var items: [ASImportableItem]

    /// Creates an account.
    public init(
        id: Data,
        userName: String,
        email: String,
        fullName: String? = nil,
        collections: [ASImportableCollection],
        items: [ASImportableItem]
    ) {
        self.id = id
        self.userName = userName
        self.email = email
        self.fullName = fullName
        self.collections = collections
        self.items = items
    }

    private enum CodingKeys: String, CodingKey {
        case id
        case userName = "username"
        case email, fullName, collections, items
    }

    /// Reads a CXF account. A missing `username`, `email`, `collections` or `items` reads as empty:
    /// real exports leave them out.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeID(forKey: .id)
        userName = try container.decodeIfPresent(String.self, forKey: .userName) ?? ""
        email = try container.decodeIfPresent(String.self, forKey: .email) ?? ""
        fullName = try container.decodeIfPresent(String.self, forKey: .fullName)
        collections = try container.decodeArrayIfPresent([ASImportableCollection].self, forKey: .collections)
        items = try container.decodeArrayIfPresent([ASImportableItem].self, forKey: .items)
    }

    /// Writes it as CXF JSON, with the specification's member names.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeBase64URL(id, forKey: .id)
        try container.encode(userName, forKey: .userName)
        try container.encode(email, forKey: .email)
        try container.encodeIfPresent(fullName, forKey: .fullName)
        try container.encode(collections, forKey: .collections)
        try container.encode(items, forKey: .items)
    }
}

/// A folder-like group of items. Collections nest.
///
/// In CXF JSON `created` and `lastModified` are `creationAt` and `modifiedAt` (Unix seconds; set the
/// coder's date strategy to `.secondsSince1970`), and `subcollections` is `subCollections`.
public struct ASImportableCollection: Codable, Hashable, Sendable {
    /// The collection's identifier.
    public var id: Data
    /// When the collection was created.
    public var created: Date?
    /// When the collection was last changed.
    public var lastModified: Date?
    /// The collection's name.
    public var title: String
    /// A line shown under the title.
    public var subtitle: String?
    /// The items in the collection, by reference.
    public var items: [ASImportableLinkedItem]
    /// The collections inside this one.
    public var subcollections: [ASImportableCollection]

    /// Creates a collection.
    public init(
        id: Data,
        created: Date?,
        lastModified: Date?,
        title: String,
        subtitle: String? = nil,
        items: [ASImportableLinkedItem],
        subcollections: [ASImportableCollection] = []
    ) {
        self.id = id
        self.created = created
        self.lastModified = lastModified
        self.title = title
        self.subtitle = subtitle
        self.items = items
        self.subcollections = subcollections
    }

    private enum CodingKeys: String, CodingKey {
        case id
        case created = "creationAt"
        case lastModified = "modifiedAt"
        case title, subtitle, items
        case subcollections = "subCollections"
        /// The spelling Apple's decoder is reported to use; read as well, never written.
        case appleSubcollections = "subcollections"
    }

    /// Reads it from CXF JSON, with the specification's member names.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeID(forKey: .id)
        created = try container.decodeIfPresent(Date.self, forKey: .created)
        lastModified = try container.decodeIfPresent(Date.self, forKey: .lastModified)
        title = try container.decode(String.self, forKey: .title)
        subtitle = try container.decodeIfPresent(String.self, forKey: .subtitle)
        items = try container.decodeArrayIfPresent([ASImportableLinkedItem].self, forKey: .items)
        subcollections =
            try container.decodeIfPresent([ASImportableCollection].self, forKey: .subcollections)
            ?? container.decodeArrayIfPresent([ASImportableCollection].self, forKey: .appleSubcollections)
    }

    /// Writes it as CXF JSON, with the specification's member names.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeBase64URL(id, forKey: .id)
        try container.encodeIfPresent(created, forKey: .created)
        try container.encodeIfPresent(lastModified, forKey: .lastModified)
        try container.encode(title, forKey: .title)
        try container.encodeIfPresent(subtitle, forKey: .subtitle)
        try container.encode(items, forKey: .items)
        try container.encodeUnlessEmpty(subcollections, forKey: .subcollections)
    }
}

/// A reference to an item: in the same account, or in another account of the export.
public struct ASImportableLinkedItem: Codable, Hashable, Sendable {
    /// The ``ASImportableItem/id`` of the item.
    public var item: Data
    /// The ``ASImportableAccount/id`` of the account holding the item; `nil` for the same account.
    public var account: Data?

    /// Creates a reference to an item.
    public init(item: Data, account: Data? = nil) {
        self.item = item
        self.account = account
    }

    private enum CodingKeys: String, CodingKey {
        case item, account
    }

    /// Reads it from CXF JSON, with the specification's member names.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        item = try container.decodeID(forKey: .item)
        account = try container.decodeIDIfPresent(forKey: .account)
    }

    /// Writes it as CXF JSON, with the specification's member names.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeBase64URL(item, forKey: .item)
        try container.encodeBase64URLIfPresent(account, forKey: .account)
    }
}
