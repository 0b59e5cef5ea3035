// What Keyport adds to the one kind of credential AutoFill's interfaces share: AutoFill,
// CredentialProvider and IdentityStore each define `CredentialType`, and the generator makes them
// one Swift type (`AutoFill.CredentialType`). Code that words, sorts or checks a kind switches over
// it here, so that a kind the definitions add is met by the compiler everywhere, never filed as
// another by a two-way test.
extension AutoFill.CredentialType {
    /// The kind in a sentence: "password", "one-time code", "passkey".
    package var noun: String {
        switch self {
        case .password: "password"
        case .oneTimeCode: "one-time code"
        case .passkey: "passkey"
        }
    }

    /// The kind of several: "passwords", "one-time codes", "passkeys".
    package var plural: String {
        switch self {
        case .password: "passwords"
        case .oneTimeCode: "one-time codes"
        case .passkey: "passkeys"
        }
    }

    /// The manifest's capability that says an app provides the kind (Apple's Info.plist key).
    package var capability: String {
        switch self {
        case .password: "ProvidesPasswords"
        case .oneTimeCode: "ProvidesOneTimeCodes"
        case .passkey: "ProvidesPasskeys"
        }
    }
}
