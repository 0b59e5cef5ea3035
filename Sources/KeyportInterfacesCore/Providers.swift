// What keyportd adds to the types of Interfaces/org.keyport.Providers.varlink.
extension Providers.Capabilities {
    /// Whether the app provides credentials of `kind` to AutoFill.
    package func provides(_ kind: IdentityStore.CredentialType) -> Bool {
        switch kind {
        case .password: ProvidesPasswords
        case .oneTimeCode: ProvidesOneTimeCodes
        }
    }
}
