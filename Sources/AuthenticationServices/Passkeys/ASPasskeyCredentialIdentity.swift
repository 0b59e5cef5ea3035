import Foundation

/// A passkey a provider offers, as the identity store keeps it: its relying party, the account's
/// name, its WebAuthn credential id and user handle, and the provider's own reference to it.
/// Never the private key.
open class ASPasskeyCredentialIdentity: NSObject, ASCredentialIdentity, NSCopying, @unchecked Sendable {
    /// The relying party id the passkey is for (`example.com`).
    public let relyingPartyIdentifier: String
    /// The account's name at the relying party (WebAuthn's `user.name`).
    public let userName: String
    /// The passkey's credential id.
    public let credentialID: Data
    /// The relying party's id of the account (WebAuthn's `user.id`).
    public let userHandle: Data
    /// The provider's reference to the passkey.
    public let recordIdentifier: String?
    /// Among a provider's passkeys for one relying party, a higher rank is offered first.
    public var rank: Int = 0

    /// The relying party, as a domain service identifier.
    public var serviceIdentifier: ASCredentialServiceIdentifier {
        ASCredentialServiceIdentifier(identifier: relyingPartyIdentifier, type: .domain)
    }

    /// The account's name.
    public var user: String { userName }

    /// A passkey identity.
    public required init(
        relyingPartyIdentifier: String,
        userName: String,
        credentialID: Data,
        userHandle: Data,
        recordIdentifier: String? = nil
    ) {
        self.relyingPartyIdentifier = relyingPartyIdentifier
        self.userName = userName
        self.credentialID = credentialID
        self.userHandle = userHandle
        self.recordIdentifier = recordIdentifier
    }

    /// Apple's class factory: the same as ``init(relyingPartyIdentifier:userName:credentialID:userHandle:recordIdentifier:)``.
    public class func identity(
        relyingPartyIdentifier: String,
        userName: String,
        credentialID: Data,
        userHandle: Data,
        recordIdentifier: String?
    ) -> Self {
        Self(
            relyingPartyIdentifier: relyingPartyIdentifier,
            userName: userName,
            credentialID: credentialID,
            userHandle: userHandle,
            recordIdentifier: recordIdentifier
        )
    }

    /// A copy with the same values.
    public func copy(with zone: NSZone? = nil) -> Any {
        let copy = ASPasskeyCredentialIdentity(
            relyingPartyIdentifier: relyingPartyIdentifier,
            userName: userName,
            credentialID: credentialID,
            userHandle: userHandle,
            recordIdentifier: recordIdentifier
        )
        copy.rank = rank
        return copy
    }

    /// Equal when the relying party, user, record, rank, credential id and user handle are.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? ASPasskeyCredentialIdentity else { return false }
        return hasSameValues(as: other) && credentialID == other.credentialID && userHandle == other.userHandle
    }

    /// The hash of the relying party, user, record and credential id.
    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(valuesHash)
        hasher.combine(credentialID)
        return hasher.finalize()
    }
}
