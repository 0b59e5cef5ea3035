import Foundation

/// The client data a web browser app supplies for a request it makes for a page: the page's
/// origin (and top origin), which keyportd checks the app may speak for (Apple's, iOS 17.4).
open class ASPublicKeyCredentialClientData: NSObject, @unchecked Sendable {
    /// Whether the call comes from a frame of another origin than the top.
    public enum CrossOriginValue: Int, Sendable {
        /// Not known.
        case notSet = 0
        /// The same origin as the top.
        case sameOriginWithAncestors = 1
        /// Another origin.
        case crossOrigin = 2
    }

    /// The challenge.
    public var challenge: Data
    /// The caller's origin (`https://login.example.com`).
    public var origin: String
    /// The top-level origin, for a cross-origin frame.
    public var topOrigin: String?
    /// Whether the call is cross-origin.
    public var crossOrigin: CrossOriginValue

    /// Client data for `origin`.
    public init(challenge: Data, origin: String) {
        self.challenge = challenge
        self.origin = origin
        self.topOrigin = nil
        self.crossOrigin = .notSet
    }
}

/// The platform's passkeys: requests to register one with the person's passkey provider, or to
/// sign in with one, for a relying party the app is associated with.
open class ASAuthorizationPlatformPublicKeyCredentialProvider: NSObject, ASAuthorizationProvider, @unchecked Sendable {
    /// The relying party id (`example.com`).
    public let relyingPartyIdentifier: String

    /// A provider for `relyingPartyIdentifier`.
    public init(relyingPartyIdentifier: String) {
        self.relyingPartyIdentifier = relyingPartyIdentifier
    }

    /// A request to register a passkey for the account `name` (its user handle `userID`).
    public func createCredentialRegistrationRequest(
        challenge: Data,
        name: String,
        userID: Data
    ) -> ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest {
        ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest(
            provider: self,
            challenge: challenge,
            name: name,
            userID: userID
        )
    }

    /// A request to sign in with a passkey.
    public func createCredentialAssertionRequest(
        challenge: Data
    ) -> ASAuthorizationPlatformPublicKeyCredentialAssertionRequest {
        ASAuthorizationPlatformPublicKeyCredentialAssertionRequest(provider: self, challenge: challenge)
    }
}

/// A request to register a platform passkey.
open class ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest: ASAuthorizationRequest, @unchecked Sendable {
    /// The relying party id.
    public var relyingPartyIdentifier: String {
        (provider as? ASAuthorizationPlatformPublicKeyCredentialProvider)?.relyingPartyIdentifier ?? ""
    }
    /// The user handle, 1 to 64 bytes.
    public var userID: Data
    /// The account's name.
    public var name: String
    /// The account's name for display; the name when not set.
    public var displayName: String?
    /// The relying party's challenge.
    public var challenge: Data
    /// Whether the person is to be verified.
    public var userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference = .preferred
    /// The attestation wanted (Keyport's providers attest with `none`).
    public var attestationPreference: ASAuthorizationPublicKeyCredentialAttestationKind = .none
    /// The passkeys the relying party has for this account already.
    public var excludedCredentials: [ASAuthorizationPlatformPublicKeyCredentialDescriptor]?
    /// PRF, asked of the new passkey.
    public var prf: ASAuthorizationPublicKeyCredentialPRFRegistrationInput?
    /// The page's client data, for a web browser app; otherwise the origin is `https://` and the
    /// relying party id.
    public var clientData: ASPublicKeyCredentialClientData?

    init(provider: ASAuthorizationPlatformPublicKeyCredentialProvider, challenge: Data, name: String, userID: Data) {
        self.challenge = challenge
        self.name = name
        self.userID = userID
        super.init(provider: provider)
    }
}

/// A request to sign in with a platform passkey.
open class ASAuthorizationPlatformPublicKeyCredentialAssertionRequest: ASAuthorizationRequest, @unchecked Sendable {
    /// The relying party id.
    public var relyingPartyIdentifier: String {
        (provider as? ASAuthorizationPlatformPublicKeyCredentialProvider)?.relyingPartyIdentifier ?? ""
    }
    /// The relying party's challenge.
    public var challenge: Data
    /// The passkeys the relying party accepts; empty: any of its passkeys.
    public var allowedCredentials: [ASAuthorizationPlatformPublicKeyCredentialDescriptor] = []
    /// Whether the person is to be verified.
    public var userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference = .preferred
    /// PRF's inputs.
    public var prf: ASAuthorizationPublicKeyCredentialPRFAssertionInput?
    /// The page's client data, for a web browser app; otherwise the origin is `https://` and the
    /// relying party id.
    public var clientData: ASPublicKeyCredentialClientData?

    init(provider: ASAuthorizationPlatformPublicKeyCredentialProvider, challenge: Data) {
        self.challenge = challenge
        super.init(provider: provider)
    }
}

/// A WebAuthn credential an authorization returns.
public protocol ASPublicKeyCredential: ASAuthorizationCredential {
    /// The client data keyportd wrote, which the relying party checks.
    var rawClientDataJSON: Data { get }
    /// The credential's id.
    var credentialID: Data { get }
}

/// A new passkey, for the relying party to register: the attestation object and client data.
open class ASAuthorizationPlatformPublicKeyCredentialRegistration: NSObject, ASPublicKeyCredential, @unchecked Sendable
{
    /// The client data.
    public let rawClientDataJSON: Data
    /// The new passkey's id.
    public let credentialID: Data
    /// The attestation object (CBOR).
    public let rawAttestationObject: Data?
    /// How the authenticator is attached: `platform`.
    public let attachment: ASAuthorizationPublicKeyCredentialAttachment
    /// What PRF said.
    public let prf: ASAuthorizationPublicKeyCredentialPRFRegistrationOutput?

    init(
        rawClientDataJSON: Data,
        credentialID: Data,
        rawAttestationObject: Data,
        prf: ASAuthorizationPublicKeyCredentialPRFRegistrationOutput?
    ) {
        self.rawClientDataJSON = rawClientDataJSON
        self.credentialID = credentialID
        self.rawAttestationObject = rawAttestationObject
        self.attachment = .platform
        self.prf = prf
    }

    /// This credential (a copy shares its values).
    public func copy(with zone: NSZone? = nil) -> Any { self }
}

/// A passkey's assertion, for the relying party to verify.
open class ASAuthorizationPlatformPublicKeyCredentialAssertion: NSObject, ASPublicKeyCredential, @unchecked Sendable {
    /// The client data.
    public let rawClientDataJSON: Data
    /// The passkey's id.
    public let credentialID: Data
    /// The authenticator data signed.
    public let rawAuthenticatorData: Data
    /// The account's user handle.
    public let userID: Data
    /// The signature.
    public let signature: Data
    /// How the authenticator is attached: `platform`.
    public let attachment: ASAuthorizationPublicKeyCredentialAttachment
    /// PRF's outputs.
    public let prf: ASAuthorizationPublicKeyCredentialPRFAssertionOutput?

    init(
        rawClientDataJSON: Data,
        credentialID: Data,
        rawAuthenticatorData: Data,
        userID: Data,
        signature: Data,
        prf: ASAuthorizationPublicKeyCredentialPRFAssertionOutput?
    ) {
        self.rawClientDataJSON = rawClientDataJSON
        self.credentialID = credentialID
        self.rawAuthenticatorData = rawAuthenticatorData
        self.userID = userID
        self.signature = signature
        self.attachment = .platform
        self.prf = prf
    }

    /// This credential (a copy shares its values).
    public func copy(with zone: NSZone? = nil) -> Any { self }
}
