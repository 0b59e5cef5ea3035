/// Parameter types of `org.keyport.IdentityStore` (Interfaces/org.keyport.IdentityStore.varlink).
package enum IdentityStore {
    package struct ServiceIdentifier: Codable, Hashable, Sendable {
        package enum Kind: String, Codable, Hashable, Sendable {
            case domain, URL
        }

        package var identifier: String
        package var type: Kind

        package init(identifier: String, type: Kind) {
            self.identifier = identifier
            self.type = type
        }
    }

    package enum Kind: String, Codable, Hashable, Sendable, CaseIterable {
        case password, oneTimeCode
    }

    package struct Identity: Codable, Hashable, Sendable {
        package var kind: Kind
        package var serviceIdentifier: ServiceIdentifier
        package var user: String
        package var recordIdentifier: String?
        package var rank: Int

        package init(
            kind: Kind,
            serviceIdentifier: ServiceIdentifier,
            user: String,
            recordIdentifier: String?,
            rank: Int = 0
        ) {
            self.kind = kind
            self.serviceIdentifier = serviceIdentifier
            self.user = user
            self.recordIdentifier = recordIdentifier
            self.rank = rank
        }

        /// What makes two identities the same one: a saved identity replaces a stored one with
        /// this key, and a removal removes it. The rank is not part of it.
        package var key: Key {
            Key(kind: kind, serviceIdentifier: serviceIdentifier, user: user, recordIdentifier: recordIdentifier)
        }

        package struct Key: Hashable, Sendable {
            var kind: Kind
            var serviceIdentifier: ServiceIdentifier
            var user: String
            var recordIdentifier: String?
        }
    }

    package struct State: Codable, Hashable, Sendable {
        package var isEnabled: Bool
        package var supportsIncrementalUpdates: Bool

        package init(isEnabled: Bool, supportsIncrementalUpdates: Bool) {
            self.isEnabled = isEnabled
            self.supportsIncrementalUpdates = supportsIncrementalUpdates
        }
    }

    /// `Save`, `Remove` and `Replace`'s input.
    package struct Identities: Codable, Hashable, Sendable {
        package var identities: [Identity]

        package init(identities: [Identity]) { self.identities = identities }
    }

    package struct ListIn: Codable, Hashable, Sendable {
        package var service: ServiceIdentifier?
        package var kinds: [Kind]?

        package init(service: ServiceIdentifier? = nil, kinds: [Kind]? = nil) {
            self.service = service
            self.kinds = kinds
        }
    }

    package enum Error {
        package static let notAProvider = "org.keyport.IdentityStore.NotAProvider"
        package static let storeDisabled = "org.keyport.IdentityStore.StoreDisabled"
        package static let invalidIdentity = "org.keyport.IdentityStore.InvalidIdentity"
        package static let storeFailed = "org.keyport.IdentityStore.StoreFailed"
    }
}
