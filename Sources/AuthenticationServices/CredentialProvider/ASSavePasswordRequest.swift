import Foundation

/// A password to save: AutoFill hands it to a provider whose manifest declares `SavesPasswords`
/// (on Linux: `git credential approve` through `keyport git-credential store`, after the password
/// worked).
///
/// Apple's initialisers that take an `ASGeneratedPassword.Kind` are not here yet: nothing on
/// Linux generates passwords for a provider to save.
open class ASSavePasswordRequest: NSObject, @unchecked Sendable {
    /// What happened to make the password worth saving, with Apple's raw values.
    public enum Event: Int, Sendable {
        /// The person asked to save it.
        case userInitiated = 0
        /// A sign-in form was submitted and went away: the password worked.
        case formDidDisappear = 1
        /// A generated password was filled in.
        case generatedPasswordFilled = 2
    }

    /// Where the password is used.
    public let serviceIdentifier: ASCredentialServiceIdentifier
    /// The account and its password.
    public let credential: ASPasswordCredential
    /// A name for the saved item, when the request has one.
    public let title: String?
    /// Identifies the session the request belongs to (keyportd makes one per request).
    public let sessionID: String
    /// What happened.
    public let event: Event

    /// A request to save `credential` for `serviceIdentifier`.
    public init(
        serviceIdentifier: ASCredentialServiceIdentifier,
        credential: ASPasswordCredential,
        sessionID: String,
        event: Event
    ) {
        self.serviceIdentifier = serviceIdentifier
        self.credential = credential
        self.title = nil
        self.sessionID = sessionID
        self.event = event
    }

    /// A request to save `credential` for `serviceIdentifier` under `title`.
    public init(
        serviceIdentifier: ASCredentialServiceIdentifier,
        credential: ASPasswordCredential,
        title: String?,
        sessionID: String,
        event: Event
    ) {
        self.serviceIdentifier = serviceIdentifier
        self.credential = credential
        self.title = title
        self.sessionID = sessionID
        self.event = event
    }

    /// The service and the user; the password is never printed.
    open override var description: String {
        "save \(credential) for \(serviceIdentifier.identifier) (\(event))"
    }
}
