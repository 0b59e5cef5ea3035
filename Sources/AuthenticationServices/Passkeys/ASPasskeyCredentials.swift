import Foundation

/// A credential an authorization hands over: a password, a passkey's assertion or registration.
public protocol ASAuthorizationCredential: NSObjectProtocol, NSCopying, Sendable {}

extension ASPasswordCredential: ASAuthorizationCredential {}

/// A passkey's assertion, as a provider completes a request with it
/// (``ASCredentialProviderExtensionContext/completeAssertionRequest(using:completionHandler:)``):
/// the authenticator data it signed and the signature over it and the client data's hash.
open class ASPasskeyAssertionCredential: NSObject, ASAuthorizationCredential, @unchecked Sendable {
    /// The account's user handle.
    public let userHandle: Data
    /// The relying party id.
    public let relyingParty: String
    /// The signature of the authenticator data followed by ``clientDataHash``.
    public let signature: Data
    /// The client data's hash, as the request gave it.
    public let clientDataHash: Data
    /// The authenticator data signed.
    public let authenticatorData: Data
    /// The passkey's credential id.
    public let credentialID: Data
    /// The extension outputs.
    public var extensionOutput: ASPasskeyAssertionCredentialExtensionOutput?

    /// An assertion.
    public init(
        userHandle: Data,
        relyingParty: String,
        signature: Data,
        clientDataHash: Data,
        authenticatorData: Data,
        credentialID: Data
    ) {
        self.userHandle = userHandle
        self.relyingParty = relyingParty
        self.signature = signature
        self.clientDataHash = clientDataHash
        self.authenticatorData = authenticatorData
        self.credentialID = credentialID
    }

    /// An assertion with extension outputs.
    public convenience init(
        userHandle: Data,
        relyingParty: String,
        signature: Data,
        clientDataHash: Data,
        authenticatorData: Data,
        credentialID: Data,
        extensionOutput: ASPasskeyAssertionCredentialExtensionOutput?
    ) {
        self.init(
            userHandle: userHandle,
            relyingParty: relyingParty,
            signature: signature,
            clientDataHash: clientDataHash,
            authenticatorData: authenticatorData,
            credentialID: credentialID
        )
        self.extensionOutput = extensionOutput
    }

    /// This credential (a copy shares its values).
    public func copy(with zone: NSZone? = nil) -> Any { self }

    /// The relying party and the credential id; no signature.
    open override var description: String { "passkey assertion for \(relyingParty)" }
}

/// A new passkey, as a provider completes a registration with it
/// (``ASCredentialProviderExtensionContext/completeRegistrationRequest(using:completionHandler:)``).
open class ASPasskeyRegistrationCredential: NSObject, ASAuthorizationCredential, @unchecked Sendable {
    /// The relying party id.
    public let relyingParty: String
    /// The client data's hash, as the request gave it.
    public let clientDataHash: Data
    /// The new passkey's credential id.
    public let credentialID: Data
    /// The attestation object (CBOR), with the authenticator data that carries the public key.
    public let attestationObject: Data
    /// The extension outputs.
    public var extensionOutput: ASPasskeyRegistrationCredentialExtensionOutput?

    /// A registration.
    public init(relyingParty: String, clientDataHash: Data, credentialID: Data, attestationObject: Data) {
        self.relyingParty = relyingParty
        self.clientDataHash = clientDataHash
        self.credentialID = credentialID
        self.attestationObject = attestationObject
    }

    /// A registration with extension outputs.
    public convenience init(
        relyingParty: String,
        clientDataHash: Data,
        credentialID: Data,
        attestationObject: Data,
        extensionOutput: ASPasskeyRegistrationCredentialExtensionOutput?
    ) {
        self.init(
            relyingParty: relyingParty,
            clientDataHash: clientDataHash,
            credentialID: credentialID,
            attestationObject: attestationObject
        )
        self.extensionOutput = extensionOutput
    }

    /// This credential (a copy shares its values).
    public func copy(with zone: NSZone? = nil) -> Any { self }

    /// The relying party only.
    open override var description: String { "passkey registration for \(relyingParty)" }
}
