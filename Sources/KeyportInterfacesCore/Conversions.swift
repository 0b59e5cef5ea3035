// Varlink has no imports: each interface defines the types it uses, and the generated Swift types
// of two interfaces are distinct even where their definitions agree. keyportd carries a value from
// one interface to another (a client's request to a provider, a provider's question to the
// agent) with these conversions: switches and field-by-field copies the compiler checks.

extension IdentityStore.CredentialType {
    package init(_ type: AutoFill.CredentialType) {
        switch type {
        case .password: self = .password
        case .oneTimeCode: self = .oneTimeCode
        }
    }
}

extension CredentialProvider.CredentialType {
    package init(_ type: IdentityStore.CredentialType) {
        switch type {
        case .password: self = .password
        case .oneTimeCode: self = .oneTimeCode
        }
    }
}

extension IdentityStore.IdentifierType {
    package init(_ type: AutoFill.IdentifierType) {
        switch type {
        case .domain: self = .domain
        case .URL: self = .URL
        }
    }
}

extension CredentialProvider.IdentifierType {
    package init(_ type: IdentityStore.IdentifierType) {
        switch type {
        case .domain: self = .domain
        case .URL: self = .URL
        }
    }
}

extension IdentityStore.ServiceIdentifier {
    package init(_ identifier: AutoFill.ServiceIdentifier) {
        self.init(identifier: identifier.identifier, type: IdentityStore.IdentifierType(identifier.type))
    }
}

extension CredentialProvider.ServiceIdentifier {
    package init(_ identifier: IdentityStore.ServiceIdentifier) {
        self.init(identifier: identifier.identifier, type: CredentialProvider.IdentifierType(identifier.type))
    }
}

extension CredentialProvider.CredentialIdentity {
    package init(_ identity: IdentityStore.CredentialIdentity) {
        self.init(
            kind: CredentialProvider.CredentialType(identity.kind),
            serviceIdentifier: CredentialProvider.ServiceIdentifier(identity.serviceIdentifier),
            user: identity.user,
            recordIdentifier: identity.recordIdentifier,
            rank: identity.rank
        )
    }
}

extension CredentialProvider.SaveEvent {
    package init(_ event: AutoFill.SaveEvent) {
        switch event {
        case .userInitiated: self = .userInitiated
        case .formDidDisappear: self = .formDidDisappear
        case .generatedPasswordFilled: self = .generatedPasswordFilled
        }
    }
}

extension AutoFill.Credential {
    package init(_ credential: CredentialProvider.Credential) {
        self.init(user: credential.user, password: credential.password, code: credential.code)
    }
}

extension Agent.Choice {
    package init(_ choice: Prompt.Choice) {
        self.init(id: choice.id, name: choice.name)
    }
}
