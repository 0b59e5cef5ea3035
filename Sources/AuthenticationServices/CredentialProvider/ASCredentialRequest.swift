import Foundation

/// What a credential request asks for, with Apple's raw values.
public enum ASCredentialRequestType: Int, Sendable {
    /// A password.
    case password = 0
    /// A passkey assertion (``ASPasskeyCredentialRequest``).
    case passkeyAssertion = 1
    /// A passkey registration (``ASPasskeyCredentialRequest``).
    case passkeyRegistration = 2
    /// A one-time code.
    case oneTimeCode = 3
}

/// A request AutoFill makes of a provider: a kind of credential, for the identity it matched.
public protocol ASCredentialRequest: NSObjectProtocol, Sendable {
    /// What is asked for.
    var type: ASCredentialRequestType { get }
    /// The identity AutoFill matched, one the provider saved in ``ASCredentialIdentityStore``.
    var credentialIdentity: any ASCredentialIdentity { get }
}

/// A request for the password of a password identity.
open class ASPasswordCredentialRequest: NSObject, ASCredentialRequest, @unchecked Sendable {
    /// ``ASCredentialRequestType/password``.
    public var type: ASCredentialRequestType { .password }
    /// The identity whose password is asked for.
    public let credentialIdentity: any ASCredentialIdentity

    /// A request for `credentialIdentity`'s password.
    public init(credentialIdentity: ASPasswordCredentialIdentity) {
        self.credentialIdentity = credentialIdentity
    }
}

/// A request for the current one-time code of a one-time-code identity.
open class ASOneTimeCodeCredentialRequest: NSObject, ASCredentialRequest, @unchecked Sendable {
    /// ``ASCredentialRequestType/oneTimeCode``.
    public var type: ASCredentialRequestType { .oneTimeCode }
    /// The identity whose code is asked for.
    public let credentialIdentity: any ASCredentialIdentity

    /// A request for `credentialIdentity`'s code.
    public init(credentialIdentity: ASOneTimeCodeCredentialIdentity) {
        self.credentialIdentity = credentialIdentity
    }
}
