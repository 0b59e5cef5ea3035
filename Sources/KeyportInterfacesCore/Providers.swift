/// Parameter types of `org.keyport.Providers` (Interfaces/org.keyport.Providers.varlink).
package enum Providers {
    /// What an app says it can do: the keys of Apple's Info.plist for credential providers.
    package struct Capabilities: Codable, Hashable, Sendable {
        package var SupportsCredentialExchange: Bool
        package var SupportedCredentialExchangeVersions: [String]
        package var ProvidesPasswords: Bool
        package var ProvidesOneTimeCodes: Bool
        /// Keyport's own key: the provider saves passwords it is given (Apple's
        /// `ASSavePasswordRequest`), as `git credential approve` hands them over.
        package var SavesPasswords: Bool

        package init(
            SupportsCredentialExchange: Bool = false,
            SupportedCredentialExchangeVersions: [String] = [],
            ProvidesPasswords: Bool = false,
            ProvidesOneTimeCodes: Bool = false,
            SavesPasswords: Bool = false
        ) {
            self.SupportsCredentialExchange = SupportsCredentialExchange
            self.SupportedCredentialExchangeVersions = SupportedCredentialExchangeVersions
            self.ProvidesPasswords = ProvidesPasswords
            self.ProvidesOneTimeCodes = ProvidesOneTimeCodes
            self.SavesPasswords = SavesPasswords
        }

        /// Whether the app provides credentials of `kind` to AutoFill.
        package func provides(_ kind: IdentityStore.Kind) -> Bool {
            kind == .password ? ProvidesPasswords : ProvidesOneTimeCodes
        }
    }

    /// A registered app, with its Settings.
    package struct Provider: Codable, Hashable, Sendable {
        package var id: String
        package var name: String
        package var exec: [String]
        /// The command lines of its other processes that act for it (its manifest's `helpers`).
        package var helpers: [[String]]?
        package var capabilities: Capabilities
        package var manifest: String
        package var enabled: Bool
        package var position: Int?
        /// How many identities it keeps in keyportd; `nil` for an app that provides no credentials.
        package var identities: Int?
        /// How many of them are saved as a domain (`example.com`, no scheme): AutoFill gives
        /// them without the person only to `https` on that very host's default port.
        package var domainIdentities: Int?

        package init(
            id: String,
            name: String,
            exec: [String],
            helpers: [[String]]? = nil,
            capabilities: Capabilities,
            manifest: String,
            enabled: Bool,
            position: Int?,
            identities: Int? = nil,
            domainIdentities: Int? = nil
        ) {
            self.helpers = helpers
            self.identities = identities
            self.domainIdentities = domainIdentities
            self.id = id
            self.name = name
            self.exec = exec
            self.capabilities = capabilities
            self.manifest = manifest
            self.enabled = enabled
            self.position = position
        }
    }

    /// A manifest that was skipped, and why.
    package struct Problem: Codable, Hashable, Sendable {
        package var manifest: String
        package var message: String

        package init(manifest: String, message: String) {
            self.manifest = manifest
            self.message = message
        }
    }

    /// `List`'s output.
    package struct List: Codable, Hashable, Sendable {
        package var providers: [Provider]
        package var problems: [Problem]

        package init(providers: [Provider], problems: [Problem]) {
            self.providers = providers
            self.problems = problems
        }
    }

    /// `Enable`'s and `Disable`'s input.
    package struct ID: Codable, Hashable, Sendable {
        package var id: String

        package init(id: String) { self.id = id }
    }

    /// `Order`'s input.
    package struct IDs: Codable, Hashable, Sendable {
        package var ids: [String]

        package init(ids: [String]) { self.ids = ids }
    }
}
