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

            private enum CodingKeys: String, CodingKey {
                case type
                case accountID = "accountId"
                case name, permissions
            }

            /// Reads it from CXF JSON, with the specification's member names.
            public init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                type = try container.decode(AccessorType.self, forKey: .type)
                accountID = try container.decodeID(forKey: .accountID)
                name = try container.decode(String.self, forKey: .name)
                permissions = try container.decode([Permission].self, forKey: .permissions)
            }

            /// Writes it as CXF JSON, with the specification's member names.
            public func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(type, forKey: .type)
                try container.encodeBase64URL(accountID, forKey: .accountID)
                try container.encode(name, forKey: .name)
                try container.encode(permissions, forKey: .permissions)
            }

            /// Reads an accessor as CXF asks an importer to: `nil` for one that is not an object or has an
            /// unknown type, unknown permissions left out, and `nil` for one left with no permission.
            static func lenient(from decoder: any Decoder) throws -> Self? {
                guard let container = try? decoder.container(keyedBy: CodingKeys.self) else { return nil }
                guard let typeName = try container.decodeIfPresent(String.self, forKey: .type),
                    let type = AccessorType(rawValue: typeName)
                else { return nil }
                let names = try container.decodeIfPresent([String].self, forKey: .permissions) ?? []
                let permissions = names.compactMap(Permission.init(rawValue:))
                guard !permissions.isEmpty else { return nil }
                return Self(
                    type: type,
                    accountID: try container.decodeIDIfPresent(forKey: .accountID) ?? Data(),
                    name: try container.decodeIfPresent(String.self, forKey: .name) ?? "",
                    permissions: permissions
                )
            }
        }

        private enum CodingKeys: String, CodingKey {
            case accessors
        }

        /// Reads the members of a `shared` extension. Accessors of an unknown type, unknown
        /// permissions, and accessors left with none are ignored, as CXF asks.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            var accessors: [SharingAccessor] = []
            if container.contains(.accessors), try !container.decodeNil(forKey: .accessors) {
                var array = try container.nestedUnkeyedContainer(forKey: .accessors)
                while !array.isAtEnd {
                    if let accessor = try SharingAccessor.lenient(from: try array.superDecoder()) {
                        accessors.append(accessor)
                    }
                }
            }
            self.accessors = accessors
        }

        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(accessors, forKey: .accessors)
        }
    }

    private enum NameKey: String, CodingKey {
        case name
    }

    /// Reads a CXF extension by its `name`; a name with no case here throws `DecodingError.dataCorrupted`
    /// (``ASImportableItem`` catches it and skips the extension).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: NameKey.self)
        let name = try container.decode(String.self, forKey: .name)
        switch name {
        case "shared": self = .shared(try Shared(from: decoder))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .name,
                in: container,
                debugDescription: "The extension '\(name)' has no ASImportableExtension case; it cannot be imported"
            )
        }
    }

    /// Writes `name` and then the extension's members, into one JSON object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: NameKey.self)
        switch self {
        case .shared(let shared):
            try container.encode("shared", forKey: .name)
            try shared.encode(to: encoder)
        }
    }
}
