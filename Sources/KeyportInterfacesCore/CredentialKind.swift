// What Keyport adds to the one kind of credential AutoFill's interfaces share: AutoFill,
// CredentialProvider and IdentityStore each define `CredentialType`, and the generator makes them
// one Swift type (`AutoFill.CredentialType`). Code that words or sorts a kind switches over it
// here, so that a kind the definitions add is met by the compiler everywhere, never filed as
// another by a two-way test.
extension AutoFill.CredentialType {
    /// The kind in a sentence: "password", "one-time code".
    package var noun: String {
        switch self {
        case .password: "password"
        case .oneTimeCode: "one-time code"
        }
    }

    /// The kind of several: "passwords", "one-time codes".
    package var plural: String {
        switch self {
        case .password: "passwords"
        case .oneTimeCode: "one-time codes"
        }
    }
}
