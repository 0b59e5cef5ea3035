import Foundation

/// A request for a passkey: an assertion by the passkey of ``credentialIdentity``, or (in
/// ``ASCredentialProviderViewController/prepareInterface(forPasskeyRegistration:)``) a new passkey
/// for the account it names, whose credential id is empty.
///
/// keyportd, as WebAuthn's client, has checked the caller's origin against the relying party and
/// built the client data: the provider signs over ``clientDataHash`` and never sees more of it.
open class ASPasskeyCredentialRequest: NSObject, ASCredentialRequest, NSCopying, @unchecked Sendable {
    /// ``ASCredentialRequestType/passkeyAssertion`` or ``ASCredentialRequestType/passkeyRegistration``.
    public let type: ASCredentialRequestType
    /// The passkey (or, for a registration, the new account).
    public let credentialIdentity: any ASCredentialIdentity
    /// SHA-256 of the client data the relying party will check.
    public let clientDataHash: Data
    /// Whether the relying party wants the person verified for this request.
    public var userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference
    /// The algorithms the relying party accepts, in its order (a registration's; empty for an
    /// assertion).
    public let supportedAlgorithms: [ASCOSEAlgorithmIdentifier]
    /// The passkeys the relying party has for this account already (a registration's): a
    /// provider that holds one of them cancels with
    /// ``ASExtensionError/Code-swift.enum/matchedExcludedCredential``.
    public let excludedCredentials: [ASAuthorizationPlatformPublicKeyCredentialDescriptor]?
    /// The extensions asked for.
    public let extensionInput: ASPasskeyCredentialExtensionInput

    /// An assertion request for `credentialIdentity`'s passkey.
    public convenience init(
        credentialIdentity: ASPasskeyCredentialIdentity,
        clientDataHash: Data,
        userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference,
        supportedAlgorithms: [ASCOSEAlgorithmIdentifier]
    ) {
        self.init(
            type: .passkeyAssertion,
            credentialIdentity: credentialIdentity,
            clientDataHash: clientDataHash,
            userVerificationPreference: userVerificationPreference,
            supportedAlgorithms: supportedAlgorithms,
            excludedCredentials: nil,
            extensionInput: .none
        )
    }

    /// An assertion request with extension inputs.
    public convenience init(
        credentialIdentity: ASPasskeyCredentialIdentity,
        clientDataHash: Data,
        userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference,
        supportedAlgorithms: [ASCOSEAlgorithmIdentifier],
        extensionInput: ASPasskeyAssertionCredentialExtensionInput?
    ) {
        self.init(
            type: .passkeyAssertion,
            credentialIdentity: credentialIdentity,
            clientDataHash: clientDataHash,
            userVerificationPreference: userVerificationPreference,
            supportedAlgorithms: supportedAlgorithms,
            excludedCredentials: nil,
            extensionInput: extensionInput.map { .assertion($0) } ?? .none
        )
    }

    /// A registration request (keyportd's).
    init(
        type: ASCredentialRequestType,
        credentialIdentity: ASPasskeyCredentialIdentity,
        clientDataHash: Data,
        userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference,
        supportedAlgorithms: [ASCOSEAlgorithmIdentifier],
        excludedCredentials: [ASAuthorizationPlatformPublicKeyCredentialDescriptor]?,
        extensionInput: ASPasskeyCredentialExtensionInput
    ) {
        self.type = type
        self.credentialIdentity = credentialIdentity
        self.clientDataHash = clientDataHash
        self.userVerificationPreference = userVerificationPreference
        self.supportedAlgorithms = supportedAlgorithms
        self.excludedCredentials = excludedCredentials
        self.extensionInput = extensionInput
    }

    /// A copy with the same values.
    public func copy(with zone: NSZone? = nil) -> Any {
        ASPasskeyCredentialRequest(
            type: type,
            credentialIdentity: credentialIdentity as? ASPasskeyCredentialIdentity
                ?? ASPasskeyCredentialIdentity(
                    relyingPartyIdentifier: credentialIdentity.serviceIdentifier.identifier,
                    userName: credentialIdentity.user,
                    credentialID: Data(),
                    userHandle: Data()
                ),
            clientDataHash: clientDataHash,
            userVerificationPreference: userVerificationPreference,
            supportedAlgorithms: supportedAlgorithms,
            excludedCredentials: excludedCredentials,
            extensionInput: extensionInput
        )
    }
}

/// What the person picking a passkey from a provider's own list is picking for
/// (``ASCredentialProviderViewController/prepareCredentialList(for:requestParameters:)``).
open class ASPasskeyCredentialRequestParameters: NSObject, NSCopying, @unchecked Sendable {
    /// The relying party id.
    public let relyingPartyIdentifier: String
    /// SHA-256 of the client data.
    public let clientDataHash: Data
    /// Whether the relying party wants the person verified.
    public let userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference
    /// The credential ids the relying party allows; empty: any of its passkeys.
    public let allowedCredentials: [Data]
    /// The extensions asked for.
    public let extensionInput: ASPasskeyAssertionCredentialExtensionInput?

    init(
        relyingPartyIdentifier: String,
        clientDataHash: Data,
        userVerificationPreference: ASAuthorizationPublicKeyCredentialUserVerificationPreference,
        allowedCredentials: [Data],
        extensionInput: ASPasskeyAssertionCredentialExtensionInput?
    ) {
        self.relyingPartyIdentifier = relyingPartyIdentifier
        self.clientDataHash = clientDataHash
        self.userVerificationPreference = userVerificationPreference
        self.allowedCredentials = allowedCredentials
        self.extensionInput = extensionInput
    }

    /// These parameters (they never change, so a copy is itself).
    public func copy(with zone: NSZone? = nil) -> Any { self }
}
