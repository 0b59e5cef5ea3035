/// Parameter types of `org.keyport.AutoFill` (Interfaces/org.keyport.AutoFill.varlink).
package enum AutoFill {
    package static let requestCredential = "org.keyport.AutoFill.RequestCredential"
    package static let requestFromList = "org.keyport.AutoFill.RequestFromList"
    package static let savePassword = "org.keyport.AutoFill.SavePassword"

    package struct SavePasswordIn: Codable, Hashable, Sendable {
        package var serviceIdentifier: IdentityStore.ServiceIdentifier
        package var user: String
        package var password: String
        package var title: String?
        package var event: CredentialProvider.SaveEvent?
        package var interactive: Bool?

        package init(
            serviceIdentifier: IdentityStore.ServiceIdentifier,
            user: String,
            password: String,
            title: String? = nil,
            event: CredentialProvider.SaveEvent? = nil,
            interactive: Bool? = nil
        ) {
            self.serviceIdentifier = serviceIdentifier
            self.user = user
            self.password = password
            self.title = title
            self.event = event
            self.interactive = interactive
        }
    }

    package struct SavePasswordOut: Codable, Hashable, Sendable {
        package var provider: String

        package init(provider: String) { self.provider = provider }
    }

    package struct RequestIn: Codable, Hashable, Sendable {
        package var type: IdentityStore.Kind
        package var serviceIdentifiers: [IdentityStore.ServiceIdentifier]
        package var user: String?
        package var interactive: Bool?

        package init(
            type: IdentityStore.Kind,
            serviceIdentifiers: [IdentityStore.ServiceIdentifier],
            user: String? = nil,
            interactive: Bool? = nil
        ) {
            self.type = type
            self.serviceIdentifiers = serviceIdentifiers
            self.user = user
            self.interactive = interactive
        }
    }

    package struct RequestOut: Codable, Hashable, Sendable {
        package var credential: CredentialProvider.Credential
        package var provider: String
        /// Where the answering identity was saved for (`https://github.com`); `nil` for a pick
        /// from a provider's own list.
        package var site: String?

        package init(credential: CredentialProvider.Credential, provider: String, site: String? = nil) {
            self.credential = credential
            self.provider = provider
            self.site = site
        }
    }

    /// The reply that comes first, to a request called with `more`, when its provider asks the
    /// person through the agent: `asking` is what to tell whoever waits.
    package struct Asking: Codable, Hashable, Sendable {
        package var provider: String
        package var asking: String

        package init(provider: String, asking: String) {
            self.provider = provider
            self.asking = asking
        }
    }

    package enum Error {
        package static let noCredential = "org.keyport.AutoFill.NoCredential"
        package static let noSavingProvider = "org.keyport.AutoFill.NoSavingProvider"
        package static let interactionRequired = "org.keyport.AutoFill.InteractionRequired"
        package static let canceled = "org.keyport.AutoFill.Canceled"
        package static let providerFailed = "org.keyport.AutoFill.ProviderFailed"
    }
}
