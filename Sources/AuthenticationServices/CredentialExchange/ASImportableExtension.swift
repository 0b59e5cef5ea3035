import CredentialExchangeFormat
import Foundation

/// A representation of CXF extensions. (Apple: 26.4.)
///
/// Only ``ASImportableItem`` carries extensions in Apple's API. In CXF JSON an extension is an object
/// whose `name` says which one it is; an extension with another name is skipped when decoding.
public enum ASImportableExtension: Codable, Hashable, Sendable {
    /// Shared extension.
    case shared(ASImportableExtension.Shared)

    /// The `shared` extension: it indicates how an item or collection is shared, and with whom.
    public struct Shared: Codable, Hashable, Sendable {
        /// The accounts and groups the item is shared with.
        public var accessors: [ASImportableExtension.Shared.SharingAccessor]

        /// Creates a `shared` extension.
        public init(accessors: [ASImportableExtension.Shared.SharingAccessor]) {
            self.accessors = accessors
        }

        /// An account or group that has been given access, and what it may do.
        ///
        /// In CXF JSON `accountID` is the member `accountId`.
        public struct SharingAccessor: Codable, Hashable, Sendable {
            /// The type of accessor.
            public var type: ASImportableExtension.Shared.SharingAccessor.AccessorType
            /// The ID of the account that has been granted access (an ``ASImportableAccount/id``).
            public var accountID: Data
            /// The name of the accessor's account.
            public var name: String
            /// What the accessor may do.
            public var permissions: [ASImportableExtension.Shared.SharingAccessor.Permission]

            /// Creates an accessor.
            public init(
                type: ASImportableExtension.Shared.SharingAccessor.AccessorType,
                accountID: Data,
                name: String,
                permissions: [ASImportableExtension.Shared.SharingAccessor.Permission]
            ) {
                self.type = type
                self.accountID = accountID
                self.name = name
                self.permissions = permissions
            }

            /// Whether an accessor is one account or a group of them; the raw value is the CXF string.
            ///
            /// Apple's cases are not documented; these are CXF's `SharingAccessorType` values.
            public enum AccessorType: String, Codable, Hashable, Sendable {
                /// One user account.
                case user
                /// A group of accounts.
                case group
            }

            /// A permission an accessor holds; the raw value is the CXF string.
            ///
            /// Apple lists `create`, `delete`, `manage`, `read`, `readSecret` and `share` and its list is
            /// cut short; `update` is CXF's seventh permission and is assumed to be Apple's too. The raw
            /// values are CXF's (`readSecret`, not `read-secret`).
            public enum Permission: String, Codable, Hashable, Sendable {
                /// See the item's non-secret members.
                case read
                /// See the item's secrets.
                case readSecret
                /// Change the item.
                case update
                /// Create items (in a shared collection).
                case create
                /// Delete the item.
                case delete
                /// Share the item further.
                case share
                /// Change who the item is shared with.
                case manage
            }
        }
    }
}
