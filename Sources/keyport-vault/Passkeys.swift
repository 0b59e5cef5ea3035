import AuthenticationServices
import CredentialExchangeFormat
import Crypto
import Foundation
import KeyportEncoding
import KeyportFormats
import KeyportPasskeys
import KeyportVaultKeeper
import Varlink

/// Keyport Vault as a passkey authenticator, with Apple's provider API: passkeys are CXF passkey
/// credentials in the vault's items (so export, exchange and the encrypted file carry them, and a
/// passkey another manager exported signs in), made and signed by KeyportPasskeys' software
/// authenticator. keyportd has checked the caller's origin and the relying party already; the
/// vault never sees more of the client data than its hash.
///
/// Without the person, the vault signs or registers only while it is unlocked and the relying
/// party does not require user verification; otherwise it asks for the passphrase through
/// keyportd's agent, and only a passphrase given for this request sets UV.
extension VaultProviderViewController {
    /// Keyport Vault's AAGUID, `721f7147-1b56-4e08-9f31-bb8d28eb1f09`: the model its registrations
    /// name, as the community's list of passkey providers names Bitwarden's or 1Password's
    /// (docs/protocol.md, "Passkeys").
    static let authenticator = SoftwareAuthenticator(aaguid: [
        0x72, 0x1F, 0x71, 0x47, 0x1B, 0x56, 0x4E, 0x08, 0x9F, 0x31, 0xBB, 0x8D, 0x28, 0xEB, 0x1F, 0x09,
    ])

    /// The vault and the passkey's identity a request is about, the person verified (or not) for
    /// `reason`; `nil`, the request cancelled, when it is not a passkey's.
    private func start(
        _ request: ASPasskeyCredentialRequest,
        withPerson: Bool,
        because reason: (ASPasskeyCredentialIdentity) -> String
    ) async throws -> (vault: VaultInstance, identity: ASPasskeyCredentialIdentity, verified: Bool)? {
        guard let vault = Self.vault, let identity = request.credentialIdentity as? ASPasskeyCredentialIdentity else {
            extensionContext.cancelRequest(withError: ASExtensionError(.failed, reason: "not a passkey request"))
            return nil
        }
        let verified = try await verify(
            request.userVerificationPreference,
            vault,
            withPerson: withPerson,
            because: reason(identity)
        )
        return (vault, identity, verified)
    }

    /// Signs an assertion with the passkey the request names.
    func assert(_ request: ASPasskeyCredentialRequest, withPerson: Bool) async {
        do {
            guard
                let (vault, identity, verified) = try await start(
                    request,
                    withPerson: withPerson,
                    because: { "to sign in to \($0.relyingPartyIdentifier) as \($0.userName)" }
                )
            else { return }
            let rpID = identity.relyingPartyIdentifier
            guard let id = identity.recordIdentifier, let item = try await item(id: id, vault.locations),
                let passkey = Self.passkey(in: item, rpID: rpID, credentialID: identity.credentialID)
            else {
                extensionContext.cancelRequest(withError: ASExtensionError(.credentialIdentityNotFound))
                return
            }
            var prf: ASAuthorizationPublicKeyCredentialPRFAssertionInput?
            if case .assertion(let input) = request.extensionInput { prf = input.prf }
            let credential = try Self.assertion(
                by: passkey,
                clientDataHash: request.clientDataHash,
                userVerified: verified,
                prf: prf
            )
            _ = await extensionContext.completeAssertionRequest(using: credential)
        } catch {
            cancel(after: error, personAsked: withPerson)
        }
    }

    /// Makes a passkey for the account the request names, and keeps it in a new item.
    func register(_ request: ASPasskeyCredentialRequest, withPerson: Bool) async {
        do {
            guard
                let (vault, identity, verified) = try await start(
                    request,
                    withPerson: withPerson,
                    because: { "to make a passkey for \($0.userName) at \($0.relyingPartyIdentifier)" }
                )
            else { return }
            let rpID = identity.relyingPartyIdentifier
            let excluded = Set((request.excludedCredentials ?? []).map(\.credentialID))
            if !excluded.isEmpty {
                let items = try await VaultKeeperClient.items(vault.locations, forService: "https://\(rpID)")
                if items.contains(where: { item in
                    excluded.contains { Self.passkey(in: item, rpID: rpID, credentialID: $0) != nil }
                }) {
                    extensionContext.cancelRequest(withError: ASExtensionError(.matchedExcludedCredential))
                    return
                }
            }
            let algorithms = request.supportedAlgorithms.map { COSEAlgorithm(rawValue: Int64($0.rawValue)) }
            let registration: SoftwareAuthenticator.Registration
            do {
                registration = try Self.authenticator.register(
                    rpID: rpID,
                    algorithms: algorithms,
                    userVerified: verified
                )
            } catch {
                throw ASExtensionError(.failed, reason: error.message)
            }
            // A PRF secret with every passkey (CXF's hmacCredentials: one for verified requests,
            // one for the others), so a relying party can use PRF later.
            let withUV = PRF.newSecret()
            let withoutUV = PRF.newSecret()
            let passkey = CXF.Passkey(
                credentialId: Data(registration.credentialID),
                rpId: rpID,
                username: identity.userName,
                userDisplayName: identity.userName,
                userHandle: identity.userHandle,
                key: registration.privateKey.pkcs8,
                fido2Extensions: CXF.FIDO2Extensions(
                    hmacCredentials: .init(
                        algorithm: "hmac-sha256",
                        credWithUV: withUV.withUnsafeBytes { Data($0) },
                        credWithoutUV: withoutUV.withUnsafeBytes { Data($0) }
                    )
                )
            )
            let item = try ItemBuilder.passkey(passkey)
            _ = try await VaultKeeperClient.call(
                vault.locations,
                VaultKeeper.Add.self,
                .init(item: RawJSON(bytes: item.json))
            )
            // Sign-ins find the passkey before the registration completes, as Apple's providers
            // keep the store current themselves (the keeper sends the same identities in its turn).
            try await ASCredentialIdentityStore.shared.saveCredentialIdentities(IdentitySync.identities(of: item))
            var output: ASPasskeyRegistrationCredentialExtensionOutput?
            if case .registration(let input) = request.extensionInput, let prf = input.prf {
                output = ASPasskeyRegistrationCredentialExtensionOutput(
                    prf: prf.inputValues.map { values in
                        let (first, second) = Self.prf(values, secret: verified ? withUV : withoutUV)
                        return ASAuthorizationPublicKeyCredentialPRFRegistrationOutput(first: first, second: second)
                    } ?? .supported
                )
            }
            _ = await extensionContext.completeRegistrationRequest(
                using: ASPasskeyRegistrationCredential(
                    relyingParty: rpID,
                    clientDataHash: request.clientDataHash,
                    credentialID: Data(registration.credentialID),
                    attestationObject: Data(registration.attestationObject.bytes),
                    extensionOutput: output
                )
            )
        } catch {
            cancel(after: error, personAsked: withPerson)
        }
    }

    /// The person picks one of the vault's passkeys for the relying party, in the agent.
    func pickPasskey(_ parameters: ASPasskeyCredentialRequestParameters) async {
        guard let vault = Self.vault else {
            extensionContext.cancelRequest(withError: ASExtensionError(.failed, reason: "no runtime directory"))
            return
        }
        let rpID = parameters.relyingPartyIdentifier
        do {
            let asked = try await vault.unlock(because: "to sign in to \(rpID) with a passkey")
            let verified =
                parameters.userVerificationPreference == .required && !asked
                ? try await verifyPerson(vault, because: "to sign in to \(rpID)") : asked
            let allowed = Set(parameters.allowedCredentials)
            var found: [(item: CXF.Item, passkey: CXF.Passkey)] = []
            for item in try await VaultKeeperClient.items(vault.locations, forService: "https://\(rpID)") {
                for case .passkey(let passkey) in item.credentials
                where passkey.rpId == rpID && (allowed.isEmpty || allowed.contains(passkey.credentialId)) {
                    found.append((item, passkey))
                }
            }
            guard !found.isEmpty else {
                extensionContext.cancelRequest(
                    withError: ASExtensionError(
                        .credentialIdentityNotFound,
                        reason: "the vault has no passkey for \(rpID)"
                    )
                )
                return
            }
            let choices = found.enumerated().map { index, entry in
                ASCredentialProviderPrompt.Choice(
                    id: String(index),
                    name: "\(entry.passkey.username) (\(entry.item.title))"
                )
            }
            guard
                let chosen = try await ASCredentialProviderPrompt.choose(
                    "Sign in to \(rpID) with which passkey?",
                    from: choices
                )
                .flatMap(Int.init), found.indices.contains(chosen)
            else {
                extensionContext.cancelRequest(withError: ASExtensionError(.userCanceled))
                return
            }
            let credential = try Self.assertion(
                by: found[chosen].passkey,
                clientDataHash: parameters.clientDataHash,
                userVerified: verified,
                prf: parameters.extensionInput?.prf
            )
            _ = await extensionContext.completeAssertionRequest(using: credential)
        } catch {
            cancel(after: error, personAsked: true)
        }
    }

    /// Whether the person is verified for this request: the passphrase given for it. Without the
    /// person, a locked vault or a relying party that requires verification needs them
    /// (`userInteractionRequired`); with them, the passphrase is asked for when the vault is
    /// locked, or unlocked and verification is required.
    private func verify(
        _ preference: ASAuthorizationPublicKeyCredentialUserVerificationPreference,
        _ vault: VaultInstance,
        withPerson: Bool,
        because reason: String
    ) async throws -> Bool {
        let required = preference == .required
        guard withPerson else {
            if required { throw ASExtensionError(.userInteractionRequired) }
            // The keeper answers Locked when it is: userInteractionRequired then (cancel(after:)).
            return false
        }
        if try await vault.unlock(because: reason) { return true }
        return required ? try await verifyPerson(vault, because: reason) : false
    }

    private func verifyPerson(_ vault: VaultInstance, because reason: String) async throws -> Bool {
        try await vault.verifyPerson(because: reason)
        return true
    }

    /// The passkey of `item` for `rpID` with id `credentialID`.
    static func passkey(in item: CXF.Item, rpID: String, credentialID: Data) -> CXF.Passkey? {
        for case .passkey(let passkey) in item.credentials
        where passkey.rpId == rpID && passkey.credentialId == credentialID {
            return passkey
        }
        return nil
    }

    /// `passkey`'s assertion of `clientDataHash`, with PRF's outputs when asked and it has a secret.
    static func assertion(
        by passkey: CXF.Passkey,
        clientDataHash: Data,
        userVerified: Bool,
        prf: ASAuthorizationPublicKeyCredentialPRFAssertionInput?
    ) throws -> ASPasskeyAssertionCredential {
        let key = try PasskeyPrivateKey(pkcs8: passkey.key)
        let signed = try authenticator.assert(
            with: key,
            rpID: passkey.rpId,
            clientDataHash: Array(clientDataHash),
            userVerified: userVerified
        )
        var output: ASPasskeyAssertionCredentialExtensionOutput?
        if let values = prf.flatMap({ $0.perCredentialInputValues?[passkey.credentialId] ?? $0.inputValues }),
            let secrets = passkey.fido2Extensions?.hmacCredentials
        {
            let secret = SymmetricKey(data: userVerified ? secrets.credWithUV : secrets.credWithoutUV)
            let (first, second) = Self.prf(values, secret: secret)
            output = ASPasskeyAssertionCredentialExtensionOutput(
                prf: ASAuthorizationPublicKeyCredentialPRFAssertionOutput(first: first, second: second)
            )
        }
        return ASPasskeyAssertionCredential(
            userHandle: passkey.userHandle,
            relyingParty: passkey.rpId,
            signature: Data(signed.signature),
            clientDataHash: clientDataHash,
            authenticatorData: Data(signed.authenticatorData),
            credentialID: passkey.credentialId,
            extensionOutput: output
        )
    }

    /// PRF's outputs for the relying party's inputs: each salted as WebAuthn says, then HMACed.
    private static func prf(
        _ values: ASAuthorizationPublicKeyCredentialPRFAssertionInput.InputValues,
        secret: SymmetricKey
    ) -> (SymmetricKey, SymmetricKey?) {
        (
            PRF.output(secret: secret, salt: PRF.salt(for: Array(values.saltInput1))),
            values.saltInput2.map { PRF.output(secret: secret, salt: PRF.salt(for: Array($0))) }
        )
    }
}
