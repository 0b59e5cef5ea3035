/// Parameter types of `org.keyport.CredentialProvider`
/// (Interfaces/org.keyport.CredentialProvider.varlink), which providers serve and keyportd calls.
package enum CredentialProvider {
    package static let interface = "org.keyport.CredentialProvider"
    package static let provideWithoutUserInteraction = "org.keyport.CredentialProvider.ProvideWithoutUserInteraction"
    package static let provideWithUserInteraction = "org.keyport.CredentialProvider.ProvideWithUserInteraction"
    package static let provideFromList = "org.keyport.CredentialProvider.ProvideFromList"
    package static let configure = "org.keyport.CredentialProvider.Configure"
    package static let savePasswordWithoutUserInteraction =
        "org.keyport.CredentialProvider.SavePasswordWithoutUserInteraction"
    package static let savePasswordWithUserInteraction =
        "org.keyport.CredentialProvider.SavePasswordWithUserInteraction"
    package static let canceled = "org.keyport.CredentialProvider.Canceled"

    package struct Request: Codable, Hashable, Sendable {
        package var type: IdentityStore.Kind
        package var credentialIdentity: IdentityStore.Identity

        package init(type: IdentityStore.Kind, credentialIdentity: IdentityStore.Identity) {
            self.type = type
            self.credentialIdentity = credentialIdentity
        }
    }

    package struct RequestIn: Codable, Hashable, Sendable {
        package var request: Request

        package init(request: Request) { self.request = request }
    }

    package struct ListIn: Codable, Hashable, Sendable {
        package var type: IdentityStore.Kind
        package var serviceIdentifiers: [IdentityStore.ServiceIdentifier]

        package init(type: IdentityStore.Kind, serviceIdentifiers: [IdentityStore.ServiceIdentifier]) {
            self.type = type
            self.serviceIdentifiers = serviceIdentifiers
        }
    }

    /// A credential on the wire. Its secret travels as JSON text, the only way Varlink carries it;
    /// whoever holds one moves it into wiping storage at once.
    package struct Credential: Codable, Hashable, Sendable {
        package var user: String?
        package var password: String?
        package var code: String?

        package init(user: String? = nil, password: String? = nil, code: String? = nil) {
            self.user = user
            self.password = password
            self.code = code
        }
    }

    package struct CredentialOut: Codable, Hashable, Sendable {
        package var credential: Credential

        package init(credential: Credential) { self.credential = credential }
    }

    /// `Canceled`'s parameters.
    package struct CanceledParameters: Codable, Hashable, Sendable {
        package var code: Int
        package var message: String

        package init(code: Int, message: String) {
            self.code = code
            self.message = message
        }
    }

    /// What happened to make a password worth saving (Apple's `ASSavePasswordRequest.Event`).
    package enum SaveEvent: String, Codable, Hashable, Sendable, CaseIterable {
        case userInitiated, formDidDisappear, generatedPasswordFilled
    }

    package struct SavePasswordRequest: Codable, Hashable, Sendable {
        package var serviceIdentifier: IdentityStore.ServiceIdentifier
        package var user: String
        package var password: String
        package var title: String?
        package var sessionID: String
        package var event: SaveEvent

        package init(
            serviceIdentifier: IdentityStore.ServiceIdentifier,
            user: String,
            password: String,
            title: String?,
            sessionID: String,
            event: SaveEvent
        ) {
            self.serviceIdentifier = serviceIdentifier
            self.user = user
            self.password = password
            self.title = title
            self.sessionID = sessionID
            self.event = event
        }
    }

    package struct SavePasswordIn: Codable, Hashable, Sendable {
        package var request: SavePasswordRequest

        package init(request: SavePasswordRequest) { self.request = request }
    }
}
