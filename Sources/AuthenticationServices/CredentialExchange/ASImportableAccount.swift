import CredentialExchangeFormat
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
}

/// A folder-like group of items. Collections nest.
///
/// In CXF JSON `created` and `lastModified` are `creationAt` and `modifiedAt` (Unix seconds, whatever
/// the coder's date strategy), and `subcollections` is `subCollections` (Apple's spelling is read too).
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
}
