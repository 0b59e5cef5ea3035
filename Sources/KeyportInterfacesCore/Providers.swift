// What keyportd adds to the types of Interfaces/org.keyport.Providers.varlink.
extension Providers.Capabilities {
    /// Whether the app provides credentials of `kind` to AutoFill.
    package func provides(_ kind: IdentityStore.CredentialType) -> Bool {
        switch kind {
        case .password: ProvidesPasswords
        case .oneTimeCode: ProvidesOneTimeCodes
        case .passkey: ProvidesPasskeys ?? false
        }
    }

    /// Whether the app provides credentials of any kind: a credential provider.
    package var providesCredentials: Bool { IdentityStore.CredentialType.allCases.contains(where: provides) }

    /// The kinds the app provides, in the definition's order.
    package var providedKinds: [IdentityStore.CredentialType] { IdentityStore.CredentialType.allCases.filter(provides) }
}
