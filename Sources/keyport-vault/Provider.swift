import AuthenticationServices
import CredentialExchangeFormat
import Foundation
import KeyportDomains
import KeyportEncoding
import KeyportFormats
import KeyportInterfaces
import KeyportSystem
import KeyportVaultKeeper
import OneTimeCodes
import Varlink

/// Keyport Vault as an AutoFill provider, written with Apple's API like any other: it answers
/// from the keeper's unlocked vault, and when the vault is locked asks the person (through
/// keyportd's agent) for the passphrase, in `prepareInterfaceToProvideCredential`.
final class VaultProviderViewController: ASCredentialProviderViewController {
    /// The vault this provider answers from; set once, before the provider runs.
    nonisolated(unsafe) static var vault: VaultInstance?

    override func provideCredentialWithoutUserInteraction(for credentialRequest: any ASCredentialRequest) {
        Task { await answer(credentialRequest, unlocking: false) }
    }

    override func prepareInterfaceToProvideCredential(for credentialRequest: any ASCredentialRequest) {
        Task { await answer(credentialRequest, unlocking: true) }
    }

    private func answer(_ request: any ASCredentialRequest, unlocking: Bool) async {
        if let passkey = request as? ASPasskeyCredentialRequest {
            await assert(passkey, withPerson: unlocking)
            return
        }
        guard let vault = Self.vault else {
            extensionContext.cancelRequest(withError: ASExtensionError(.failed, reason: "no runtime directory"))
            return
        }
        let locations = vault.locations
        do {
            let service = request.credentialIdentity.serviceIdentifier.identifier
            if unlocking {
                try await vault.unlock(
                    because: request.type == .oneTimeCode
                        ? "to give the one-time code for \(service)" : "to fill in your password at \(service)"
                )
            }
            // The item must still be saved for the identity's site: AutoFill's copy of the
            // identities may be older than an edit that moved the item elsewhere.
            guard let id = request.credentialIdentity.recordIdentifier,
                let item = try await item(id: id, locations),
                let origin = ServiceOrigin(service),
                (item.scope?.urls ?? []).contains(where: { ServiceOrigin($0) == origin })
            else {
                extensionContext.cancelRequest(withError: ASExtensionError(.credentialIdentityNotFound))
                return
            }
            try await complete(
                from: item,
                oneTimeCode: request.type == .oneTimeCode,
                user: request.credentialIdentity.user
            )
        } catch {
            cancel(after: error, personAsked: unlocking)
        }
    }

    /// Completes the request with `item`'s current one-time code, or its login (for `user`, when
    /// given); cancels it when the item has none.
    private func complete(from item: CXF.Item, oneTimeCode: Bool, user: String?) async throws {
        if oneTimeCode {
            for case .totp(let totp) in item.credentials {
                let code = try OTPAuthURI(cxf: totp).code(at: Int64(Date().timeIntervalSince1970))
                _ = await extensionContext.completeOneTimeCodeRequest(using: ASOneTimeCodeCredential(code: code))
                return
            }
        } else {
            for case .basicAuth(let auth) in item.credentials
            where user.map({ auth.username?.value ?? "" == $0 }) ?? true {
                _ = await extensionContext.completeRequest(
                    withSelectedCredential: ASPasswordCredential(
                        user: auth.username?.value ?? "",
                        password: auth.password?.value ?? ""
                    )
                )
                return
            }
        }
        extensionContext.cancelRequest(withError: ASExtensionError(.credentialIdentityNotFound))
    }

    // MARK: - Passkeys (Passkeys.swift)

    override func performWithoutUserInteractionIfPossible(
        passkeyRegistration registrationRequest: ASPasskeyCredentialRequest
    ) {
        Task { await register(registrationRequest, withPerson: false) }
    }

    override func prepareInterface(forPasskeyRegistration registrationRequest: any ASCredentialRequest) {
        guard let request = registrationRequest as? ASPasskeyCredentialRequest else {
            extensionContext.cancelRequest(withError: ASExtensionError(.failed, reason: "not a passkey registration"))
            return
        }
        Task { await register(request, withPerson: true) }
    }

    override func prepareCredentialList(
        for serviceIdentifiers: [ASCredentialServiceIdentifier],
        requestParameters: ASPasskeyCredentialRequestParameters
    ) {
        Task { await pickPasskey(requestParameters) }
    }

    /// Ends the request after `error`: a vault that is locked, or whose keeper is not running,
    /// needs the person (unless they were asked already); everything else is a failure that says
    /// what happened.
    func cancel(after error: any Error, personAsked: Bool) {
        switch error {
        case is VaultKeeperClient.NotRunning where !personAsked:
            extensionContext.cancelRequest(withError: ASExtensionError(.userInteractionRequired))
        case let error as VarlinkError where error.name == VaultKeeper.Locked.name && !personAsked:
            extensionContext.cancelRequest(withError: ASExtensionError(.userInteractionRequired))
        case let error as ASExtensionError:
            extensionContext.cancelRequest(withError: error)
        case let error as VarlinkError:
            extensionContext.cancelRequest(withError: ASExtensionError(.failed, reason: error.sentence))
        default:
            extensionContext.cancelRequest(withError: ASExtensionError(.failed, reason: "\(error)"))
        }
    }

    // MARK: - Saving (seed 003's dance for ASSavePasswordRequest)

    /// A new login is saved at once while the vault is unlocked; the same password again changes
    /// nothing; a changed password, or a locked vault, needs the person.
    override func performWithoutUserInteractionIfPossible(savePasswordRequest: ASSavePasswordRequest) {
        Task { await save(savePasswordRequest, withPerson: false) }
    }

    /// Unlocks the vault when it is locked; a new login is then saved, and a changed password only
    /// once the person confirms it in the agent, the old one kept in the item's history (any
    /// process of the person's could otherwise replace a password).
    override func prepareInterface(for savePasswordRequest: ASSavePasswordRequest) {
        Task { await save(savePasswordRequest, withPerson: true) }
    }

    private func save(_ request: ASSavePasswordRequest, withPerson: Bool) async {
        guard let vault = Self.vault else {
            extensionContext.cancelRequest(withError: ASExtensionError(.failed, reason: "no runtime directory"))
            return
        }
        let locations = vault.locations
        let user = request.credential.user
        let password = request.credential.password
        let origin: ServiceOrigin
        switch ServiceOrigin.parse(request.serviceIdentifier.identifier) {
        case .success(let parsed): origin = parsed
        case .failure(let error):
            extensionContext.cancelRequest(withError: ASExtensionError(.failed, reason: error.description))
            return
        }
        do {
            if withPerson { try await vault.unlock(because: "to save the password of \(user) for \(origin)") }
            if let item = try await login(for: origin, user: user, locations) {
                guard !ConstantTime.equal(Self.password(of: item, user: user) ?? "", password) else {
                    _ = await extensionContext.completeSavePasswordRequest()
                    return
                }
                guard withPerson else {
                    extensionContext.cancelRequest(withError: ASExtensionError(.userInteractionRequired))
                    return
                }
                // The user name is the client's text: quoted, so it cannot read as part of the question.
                let question =
                    "Change the password of \(user.isEmpty ? "the login without a user name" : "the user “\(user)”") for \(origin) in the vault \(vault.path)? The one it has now is kept in the item's password history."
                guard try await ASCredentialProviderPrompt.confirm(question) else {
                    extensionContext.cancelRequest(withError: ASExtensionError(.userCanceled))
                    return
                }
                var edit = ItemEdit()
                edit.login = user
                edit.password = password
                let changed = try edit.applied(to: item, at: Int64(Date().timeIntervalSince1970))
                _ = try await VaultKeeperClient.call(
                    locations,
                    VaultKeeper.Update.self,
                    .init(item: RawJSON(bytes: changed.json))
                )
                try await ASCredentialIdentityStore.shared.saveCredentialIdentities(
                    IdentitySync.identities(of: changed)
                )
            } else {
                let item = try ItemBuilder.login(
                    title: request.title ?? origin.host.description,
                    urls: [origin.description],
                    username: user.isEmpty ? nil : user,
                    password: password,
                    otp: nil,
                    notes: nil
                )
                _ = try await VaultKeeperClient.call(
                    locations,
                    VaultKeeper.Add.self,
                    .init(item: RawJSON(bytes: item.json))
                )
                // AutoFill knows the login before the save completes, as Apple's providers keep the
                // store current themselves: git's next `get` finds it. (The keeper sends the same
                // identities in its turn.)
                try await ASCredentialIdentityStore.shared.saveCredentialIdentities(IdentitySync.identities(of: item))
            }
            _ = await extensionContext.completeSavePasswordRequest()
        } catch {
            cancel(after: error, personAsked: withPerson)
        }
    }

    /// The vault's login for `user` saved for exactly `origin` (AutoFill's rule), if any.
    private func login(for origin: ServiceOrigin, user: String, _ locations: VaultLocations) async throws -> CXF.Item? {
        try await VaultKeeperClient.items(locations, forService: origin.description, exact: true).first { item in
            (item.scope?.urls ?? []).contains { ServiceOrigin($0) == origin }
                && item.credentials.contains {
                    if case .basicAuth(let auth) = $0 { return auth.username?.value ?? "" == user }
                    return false
                }
        }
    }

    // MARK: - Lists ("show all": keyport otp SITE --list)

    override func prepareCredentialList(for serviceIdentifiers: [ASCredentialServiceIdentifier]) {
        Task { await pick(oneTimeCode: false, for: serviceIdentifiers) }
    }

    override func prepareOneTimeCodeCredentialList(for serviceIdentifiers: [ASCredentialServiceIdentifier]) {
        Task { await pick(oneTimeCode: true, for: serviceIdentifiers) }
    }

    /// The most items one question offers (the agent's limit).
    private static let listed = 100

    /// The person picks one of the vault's logins (or one-time codes) in the agent: those saved
    /// for the services first, as AutoFill's rule fits them (exact, another port, another host
    /// of the site); when none fits, every one, by title. The vault is unlocked first if it must be.
    private func pick(oneTimeCode: Bool, for services: [ASCredentialServiceIdentifier]) async {
        guard let vault = Self.vault else {
            extensionContext.cancelRequest(withError: ASExtensionError(.failed, reason: "no runtime directory"))
            return
        }
        let kind = oneTimeCode ? "one-time codes" : "passwords"
        // The list may hold every item of the vault: never for a web page sent in clear text, which
        // anyone on the network between can rewrite to take what the person picks (keyportd
        // refuses it too; the vault does not rely on its caller for that).
        if let clear = services.compactMap({ ServiceOrigin($0.identifier) }).first(where: { $0.isCleartextWeb }) {
            extensionContext.cancelRequest(
                withError: ASExtensionError(
                    .failed,
                    reason: "the vault shows no list of its \(kind) for \(clear), which is not https"
                )
            )
            return
        }
        do {
            try await vault.unlock(because: "to show its \(kind)")
            let wanted: (CXF.Item) -> Bool = { item in
                item.credentials.contains {
                    switch $0 {
                    case .totp: oneTimeCode
                    case .basicAuth: !oneTimeCode
                    default: false
                    }
                }
            }
            let requested = services.compactMap { ServiceOrigin($0.identifier) }
            var fitting: [(item: CXF.Item, fit: ServiceFit)] = []
            var seen = Set<Data>()
            for origin in requested {
                for item in try await VaultKeeperClient.items(vault.locations, forService: origin.description)
                where wanted(item) && !seen.contains(item.id) {
                    let fit =
                        (item.scope?.urls ?? []).compactMap { ServiceOrigin($0) }.map {
                            $0.fit(for: origin, in: .current)
                        }.max() ?? .none
                    guard fit != .none else { continue }
                    seen.insert(item.id)
                    fitting.append((item, fit))
                }
            }
            let sites = requested.map(\.description).joined(separator: ", ")
            var items = fitting.sorted { ($0.fit, $1.item.title) > ($1.fit, $0.item.title) }.map(\.item)
            var message = "Which of the vault's \(kind) for \(sites)?"
            if items.isEmpty {
                items = try await VaultKeeperClient.items(vault.locations).filter(wanted).sorted { $0.title < $1.title }
                message =
                    requested.isEmpty
                    ? "Which of the vault's \(kind)?"
                    : "The vault has no \(kind) for \(sites). Which of all its \(kind)?"
            }
            guard !items.isEmpty else {
                extensionContext.cancelRequest(
                    withError: ASExtensionError(.credentialIdentityNotFound, reason: "the vault has no \(kind)")
                )
                return
            }
            if items.count > Self.listed {
                message += " (the first \(Self.listed) of \(items.count); `keyport vault search` finds the rest)"
                items = Array(items.prefix(Self.listed))
            }
            let choices = items.enumerated().map { index, item in
                ASCredentialProviderPrompt.Choice(
                    id: String(index + 1),
                    name: Self.shown(item, oneTimeCode: oneTimeCode)
                )
            }
            guard
                let chosen = try await ASCredentialProviderPrompt.choose(message, from: choices).flatMap(Int.init)
                    .map({ $0 - 1 }),
                items.indices.contains(chosen)
            else {
                extensionContext.cancelRequest(withError: ASExtensionError(.userCanceled))
                return
            }
            try await complete(from: items[chosen], oneTimeCode: oneTimeCode, user: nil)
        } catch {
            cancel(after: error, personAsked: true)
        }
    }

    /// `GitHub — alice (https://github.com)`: what the person tells items apart by.
    private static func shown(_ item: CXF.Item, oneTimeCode: Bool) -> String {
        var user: String?
        for credential in item.credentials {
            switch credential {
            case .totp(let totp) where oneTimeCode: user = user ?? totp.username
            case .basicAuth(let auth): user = user ?? auth.username?.value
            default: continue
            }
        }
        let site = item.scope?.urls.first.map { " (\($0))" } ?? ""
        return item.title + (user.map { " — \($0)" } ?? "") + site
    }

    /// The password of `item`'s login for `user`.
    private static func password(of item: CXF.Item, user: String) -> String? {
        for case .basicAuth(let auth) in item.credentials where auth.username?.value ?? "" == user {
            return auth.password?.value
        }
        return nil
    }

    func item(id: String, _ locations: VaultLocations) async throws -> CXF.Item? {
        let reply = try await VaultKeeperClient.call(locations, VaultKeeper.Get.self, .init(id: id))
        return try reply.item.map { try CXF.Decoder().decode(CXF.Part<CXF.Item>.object, from: $0.bytes) }
    }

}

/// Keeps AutoFill's identity store the vault's: every login a password identity and every TOTP
/// secret a one-time-code identity, per site, keyed by the item's id. Called by the keeper after
/// each change; the store is keyportd's, which knows this program as the vault's provider.
enum IdentitySync {
    static func identities(of item: CXF.Item) -> [any ASCredentialIdentity] {
        let record = Base64URL.encode(item.id)
        // Only URLs AutoFill can read: keyportd refuses a whole batch for one it cannot, and one
        // odd URL among 100 000 items must not keep the rest from AutoFill.
        let services = (item.scope?.urls ?? []).filter { ServiceOrigin($0) != nil }.map {
            ASCredentialServiceIdentifier(identifier: $0, type: .URL)
        }
        var identities: [any ASCredentialIdentity] = []
        // A passkey is filed by its relying party, whatever the item's sites; only one keyportd
        // can take (a relying party written as a host is, ids of WebAuthn's lengths).
        for case .passkey(let passkey) in item.credentials
        where ServiceHost(passkey.rpId)?.description == passkey.rpId && (1...1023).contains(passkey.credentialId.count)
            && (1...64).contains(passkey.userHandle.count)
        {
            identities.append(
                ASPasskeyCredentialIdentity(
                    relyingPartyIdentifier: passkey.rpId,
                    userName: passkey.username,
                    credentialID: passkey.credentialId,
                    userHandle: passkey.userHandle,
                    recordIdentifier: record
                )
            )
        }
        for service in services {
            for credential in item.credentials {
                switch credential {
                case .basicAuth(let auth):
                    identities.append(
                        ASPasswordCredentialIdentity(
                            serviceIdentifier: service,
                            user: auth.username?.value ?? "",
                            recordIdentifier: record
                        )
                    )
                case .totp(let totp):
                    identities.append(
                        ASOneTimeCodeCredentialIdentity(
                            serviceIdentifier: service,
                            label: totp.username ?? item.title,
                            recordIdentifier: record
                        )
                    )
                default:
                    continue
                }
            }
        }
        return identities
    }

    /// Applies `change` to the store (`service` gives every item for ``VaultKeeperService/Change/everything``),
    /// says so on standard error, and returns what the person is to read in `keyport vault
    /// status`: whether AutoFill has the vault's identities, or why not; `nil` when there was
    /// nothing to do (the vault was locked before the change's turn came).
    static func apply(
        _ change: VaultKeeperService.Change,
        of service: VaultKeeperService
    ) async -> VaultKeeper.AutoFillState? {
        let store = ASCredentialIdentityStore.shared
        do {
            let count: Int
            switch change {
            case .saved(let items):
                let identities = items.flatMap(identities(of:))
                try await store.saveCredentialIdentities(identities)
                count = identities.count
            case .removed(let items):
                let identities = items.flatMap(identities(of:))
                try await store.removeCredentialIdentities(identities)
                count = identities.count
            case .everything:
                // The identities of 100 000 items and their message are tens of megabytes, needed
                // once: given back to the system, so the keeper stays the size of what it looks up,
                // whether or not AutoFill took them.
                var all: [any ASCredentialIdentity] = []
                guard service.forEachItem({ all += identities(of: $0) }) else { return nil }
                count = all.count
                var failure: (any Error)?
                do {
                    try await store.replaceCredentialIdentities(all)
                } catch {
                    failure = error
                }
                all = []
                Memory.releaseFreed()
                if let failure { throw failure }
            }
            FileHandle.standardError.write(Data("keyport-vault: AutoFill's identities updated (\(count))\n".utf8))
            return VaultKeeper.AutoFillState(current: true, message: "AutoFill has the vault's identities")
        } catch {
            // keyportd not running, this vault not registered (or not enabled) as a provider: AutoFill
            // then has no identities of the vault's, which `keyport vault status` says; the vault
            // itself is unaffected.
            let reason = (error as? ASCredentialIdentityStoreError)?.failureReason ?? "\(error)"
            FileHandle.standardError.write(
                Data("keyport-vault: AutoFill's identity store not updated: \(reason)\n".utf8)
            )
            let hint =
                (error as? ASCredentialIdentityStoreError)?.code == .storeDisabled
                ? "" : " (`keyport vault register` makes the vault an app keyportd knows)"
            return VaultKeeper.AutoFillState(
                current: false,
                message: "AutoFill does not have the vault's latest identities: \(reason)\(hint)"
            )
        }
    }
}
