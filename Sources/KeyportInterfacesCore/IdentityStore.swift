// What keyportd adds to the types of Interfaces/org.keyport.IdentityStore.varlink.
extension IdentityStore.CredentialIdentity {
    /// What makes two identities the same one: a saved identity replaces a stored one with this
    /// key, and a removal removes it. The rank is not part of it; a passkey's credential id is.
    package var key: Key {
        Key(
            kind: kind,
            serviceIdentifier: serviceIdentifier,
            user: user,
            recordIdentifier: recordIdentifier,
            credentialID: credentialID
        )
    }

    package struct Key: Hashable, Sendable {
        var kind: IdentityStore.CredentialType
        var serviceIdentifier: IdentityStore.ServiceIdentifier
        var user: String
        var recordIdentifier: String?
        var credentialID: String?
    }
}
