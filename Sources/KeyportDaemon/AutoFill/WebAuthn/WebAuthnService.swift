import Foundation
import KeyportDomains
import KeyportEncoding
import KeyportInterfaces
import KeyportPasskeys
import KeyportSystem
import Logging
import Varlink

/// `org.keyport.WebAuthn`: keyportd as WebAuthn's client for every credential provider that
/// declares `ProvidesPasskeys` (docs/protocol.md, "Passkeys").
///
/// For each call it decides, from the caller's process, whether the caller may speak for the
/// origin it names; checks the relying party id against that origin (the Public Suffix List);
/// builds `clientDataJSON` and hands the provider only its hash; and checks what the provider
/// answers — the relying party's hash, the person's presence, their verification when required,
/// the credential asked for, the hash echoed — before it writes the page's
/// `PublicKeyCredential.toJSON()`.
package final class WebAuthnService: WebAuthn.Server {
    private let providers: CredentialProviders
    private let logger: Logger
    /// Keyport's browser host, installed beside keyportd: the one program that speaks for the web
    /// origins a browser reports.
    private let browserHost: String?
    /// Which sites confirm which apps, and which origins relying parties relate.
    private var associations: SiteAssociations { providers.associations }

    package init(
        providers: CredentialProviders,
        browserHost: String? = Executable.beside("keyport-browser"),
        logger: Logger
    ) {
        self.providers = providers
        self.browserHost = browserHost
        self.logger = logger
    }

    // MARK: - Who speaks for an origin

    /// Who is asking, as keyportd knows it from the kernel.
    private enum Claimant {
        /// Keyport's browser host, relaying what a browser reports.
        case browserHost
        /// A registered app, for the https origins of its associated domains.
        case app(ProviderManifest)

        /// Whether the person chose `named` (a passkey, or the provider to keep a new one) in the
        /// extension's prompt, whose click the extension checks as it checks its AutoFill menu's:
        /// then that click is the person's presence, and the agent is not asked again. An app's
        /// request, or the host's naming nothing, is confirmed in the agent
        /// (``confirmWithPerson(_:request:)``). The host is not a boundary against the person's
        /// other processes, for passkeys as for passwords (SECURITY.md, "Known limits").
        func choseInItsPrompt(_ named: String?) -> Bool {
            if case .browserHost = self { return named != nil }
            return false
        }
    }

    /// The caller, the origin and the relying party id a call may use. The caller is Keyport's
    /// browser host (for whatever web origin its browser reports) or a registered app (for the
    /// https origins of the domains its manifest associates, each confirmed by the site itself);
    /// the origin must be a secure web origin, written as a browser serializes it; the relying
    /// party id (by default the origin's host) must be the origin's host or a registrable suffix
    /// of it.
    private func relyingParty(
        origin text: String,
        topOrigin: String?,
        rpID requested: String?,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> (claimant: Claimant, origin: ServiceOrigin, rpID: String) {
        let claimant = try claimant(request)
        let origin: ServiceOrigin
        do {
            origin = try RelyingPartyID.origin(text)
            if let topOrigin { _ = try RelyingPartyID.origin(topOrigin) }
        } catch {
            throw Self.error(error)
        }
        if case .app(let app) = claimant { try await admit(app, for: origin, topOrigin: topOrigin) }
        let rpID = requested ?? RelyingPartyID.default(for: origin)
        if !RelyingPartyID.isValid(rpID, for: origin, in: self.providers.list) {
            let mismatch =
                "the relying party id \"\(DisplayText.escaping(rpID))\" is neither \(origin.host) nor a registrable domain it is under"
            // A web page's last chance: the relying party lists the page's origin among its related
            // origins. (An app's is Apple's rule below: its associated domain's own passkeys only.)
            guard case .browserHost = claimant, Self.isRegistrableDomain(rpID, in: self.providers.list) else {
                throw VarlinkError(WebAuthn.SecurityError(message: mismatch))
            }
            let (admitted, why) = await associations.relatedOrigins(of: rpID, admit: origin, in: self.providers.list)
            guard admitted else { throw VarlinkError(WebAuthn.SecurityError(message: "\(mismatch), and \(why)")) }
        }
        // An app uses only the passkeys of the domain it is associated with (Apple's rule), not
        // those of a parent domain its site's subdomain could otherwise vouch for.
        if case .app(let app) = claimant, rpID != origin.host.description {
            throw VarlinkError(
                WebAuthn.SecurityError(
                    message:
                        "\(app.name) (\(app.id)) may use the passkeys of \(origin.host), its associated domain, not \(rpID)'s"
                )
            )
        }
        return (claimant, origin, rpID)
    }

    /// Who the caller is, from the kernel, never the message: Keyport's browser host by its
    /// program, an app by AppResolver's rules; anyone else is refused.
    private func claimant(_ request: VarlinkRequest) throws(VarlinkError) -> Claimant {
        let program = try? request.peer.process.executable
        if let program, let browserHost, program == browserHost { return .browserHost }
        if let app = self.providers.associatedApp(of: request) { return .app(app) }
        let who = program.map { "the program \($0)" } ?? "a process keyportd cannot read"
        throw VarlinkError(
            WebAuthn.SecurityError(
                message:
                    "\(who) may not speak for a web origin: only Keyport's browser host (\(browserHost ?? "keyport-browser")) and apps whose manifests name associated domains may"
            )
        )
    }

    /// An app speaks only for the https origins of its associated domains, each confirmed by the
    /// site's apple-app-site-association, and never from inside another origin's frame.
    private func admit(
        _ app: ProviderManifest,
        for origin: ServiceOrigin,
        topOrigin: String?
    ) async throws(VarlinkError) {
        let domain = String(origin.description.dropFirst("https://".count))
        guard origin.scheme == "https", topOrigin == nil, app.associatedDomains.contains(domain) else {
            throw VarlinkError(
                WebAuthn.SecurityError(
                    message:
                        "\(app.name) (\(app.id)) may speak only for the https origins of its associated domains (\(app.associatedDomains.joined(separator: ", "))), not \(origin)"
                )
            )
        }
        let (confirmed, why) = await associations.confirm(domain: domain, app: app.id)
        guard confirmed else {
            throw VarlinkError(
                WebAuthn.SecurityError(
                    message: "\(domain) does not confirm that \(app.name) (\(app.id)) is its app: \(why)"
                )
            )
        }
    }

    /// Whether `rpID` is a domain written as a host is, at or under a registrable domain (or
    /// `localhost`, which WebAuthn treats as a secure site): the only ids whose related origins
    /// keyportd fetches (never a public suffix's, an address's, or text that would make another URL).
    private static func isRegistrableDomain(_ rpID: String, in list: PublicSuffixList) -> Bool {
        guard let host = ServiceHost(rpID), case .domain(let name) = host, name == rpID else { return false }
        return host.isLocalhost || list.registrableDomain(of: host) != nil
    }

    /// Who asks, for the person: an app by its name and id, the browser host by the page's origin.
    private static func asker(_ claimant: Claimant, _ origin: ServiceOrigin) -> String {
        switch claimant {
        case .app(let app): "The app \(DisplayText.quoted(app.name)) (\(app.id))"
        case .browserHost: "A page of \(origin) (in your browser)"
        }
    }

    /// The person says yes in the agent to `message` before a provider is asked: every request but
    /// the one whose passkey or provider they chose in the extension's prompt
    /// (``Claimant/choseInItsPrompt(_:)``).
    private func confirmWithPerson(_ message: String, request: VarlinkRequest) async throws(VarlinkError) {
        let question = Agent.Request(id: UUID().uuidString, kind: .confirm, app: "Keyport", message: message)
        let answer = try await askPerson(question, what: "whether to go on", request: request)
        guard answer.choice == Agent.yes else {
            throw VarlinkError(WebAuthn.NotAllowedError(message: "you said no"))
        }
    }

    /// Asks the person `question` in their agent, first telling a caller that waits for interim
    /// replies that the agent is asking; an agent that is not there or does not answer in time
    /// refuses the request, saying that Keyport could not learn `what`.
    private func askPerson(
        _ question: Agent.Request,
        what: String,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> Agent.Answer.Parameters {
        if request.call.more {
            try? await request.send(
                RawJSON(encoding: WebAuthn.Get.Reply(provider: "", asking: "Keyport is asking you through the agent"))
            )
        }
        do {
            return try await self.providers.agents.ask(question, within: self.providers.personTime)
        } catch {
            throw VarlinkError(
                WebAuthn.NotAllowedError(message: error.sentence(what, limit: self.providers.personTime))
            )
        }
    }

    // MARK: - The passkeys a relying party has here

    /// A passkey of an enabled provider, as the identity store has it.
    private struct Candidate {
        var provider: ProviderManifest
        var identity: IdentityStore.CredentialIdentity
        var credentialID: [UInt8]
    }

    /// The enabled providers' passkeys for `rpID`, in Settings order, then by rank; only the
    /// `allowed` credential ids when the relying party names some.
    private func passkeys(for rpID: String, allowed: [[UInt8]]) -> [Candidate] {
        let allowedSet = Set(allowed)
        var found: [Candidate] = []
        for provider in self.providers.enabled(where: { $0.provides(.passkey) }) {
            let stored = self.providers.identities.identities(of: provider.id).byRelyingParty[rpID] ?? []
            for identity in stored.sorted(by: { $0.rank > $1.rank }) {
                guard let id = identity.credentialID, let bytes = try? Base64URL.decode(id) else { continue }
                if !allowedSet.isEmpty && !allowedSet.contains(bytes) { continue }
                found.append(Candidate(provider: provider, identity: identity, credentialID: bytes))
            }
        }
        return found
    }

    package func listAuthenticators(
        _ input: consuming WebAuthn.ListAuthenticators.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> WebAuthn.ListAuthenticators.Reply {
        _ = try await relyingParty(origin: input.origin, topOrigin: nil, rpID: nil, request: request)
        return WebAuthn.ListAuthenticators.Reply(
            authenticators: self.providers.enabled(where: { $0.provides(.passkey) }).map {
                WebAuthn.Authenticator(id: $0.id, name: $0.name)
            }
        )
    }

    package func listPasskeys(
        _ input: consuming WebAuthn.ListPasskeys.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> WebAuthn.ListPasskeys.Reply {
        let (_, _, rpID) = try await relyingParty(
            origin: input.origin,
            topOrigin: input.topOrigin,
            rpID: input.rpId,
            request: request
        )
        let allowed = try (input.allowCredentials ?? []).map { id throws(VarlinkError) in
            try Self.bytes(id, "allowCredentials")
        }
        return WebAuthn.ListPasskeys.Reply(
            passkeys: passkeys(for: rpID, allowed: allowed).map { candidate in
                WebAuthn.Passkey(
                    provider: candidate.provider.id,
                    providerName: candidate.provider.name,
                    recordIdentifier: candidate.identity.recordIdentifier,
                    credentialID: Base64URL.encode(candidate.credentialID),
                    userName: candidate.identity.user,
                    userHandle: candidate.identity.userHandle ?? ""
                )
            }
        )
    }

    /// Where a call's time went: the person's answers, the provider's, and the rest, keyportd's
    /// own part (the caller's check, the client data, the answer's checks), logged with each
    /// passkey made or used for docs/performance.md.
    private struct CallClock {
        let started = ContinuousClock.now
        var person = Duration.zero
        var provider = Duration.zero

        /// `metadata` with `keyportd_ms` (keyportd's own part so far) and `provider_ms`.
        func metadata(_ metadata: Logger.Metadata) -> Logger.Metadata {
            let own = ContinuousClock.now - started - person - provider
            return metadata.merging([
                "keyportd_ms": "\(Self.milliseconds(own))", "provider_ms": "\(Self.milliseconds(provider))",
            ]) { $1 }
        }

        private static func milliseconds(_ duration: Duration) -> String {
            let (seconds, attoseconds) = duration.components
            return String(format: "%.3f", Double(seconds) * 1000 + Double(attoseconds) / 1e15)
        }
    }

    // MARK: - navigator.credentials.create()

    package func create(
        _ input: consuming WebAuthn.Create.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> WebAuthn.Create.Reply {
        var clock = CallClock()
        let options = input.options
        let (claimant, origin, rpID) = try await relyingParty(
            origin: input.origin,
            topOrigin: input.topOrigin,
            rpID: options.rp.id,
            request: request
        )
        let challenge = try Self.bytes(options.challenge, "options.challenge")
        let userHandle = try Self.bytes(options.user.id, "options.user.id")
        guard (1...64).contains(userHandle.count) else {
            throw VarlinkError(
                WebAuthn.TypeError(message: "options.user.id is \(userHandle.count) bytes; WebAuthn allows 1 to 64")
            )
        }
        // An empty list means ES256 and RS256 (WebAuthn §5.1.3); only "public-key" entries count.
        let offered =
            options.pubKeyCredParams.isEmpty
            ? [COSEAlgorithm.es256, .rs256]
            : options.pubKeyCredParams.filter { $0.type == "public-key" }.map { COSEAlgorithm(rawValue: Int64($0.alg)) }
        let algorithms = offered.filter(COSEAlgorithm.known.contains)
        guard !algorithms.isEmpty else {
            throw VarlinkError(
                WebAuthn.NotSupportedError(
                    message:
                        "none of the algorithms offered (\(offered.map(\.description).joined(separator: ", "))) is one a passkey here can have"
                )
            )
        }
        let excluded = try (options.excludeCredentials ?? []).map { descriptor throws(VarlinkError) in
            try Self.bytes(descriptor.id, "options.excludeCredentials")
        }
        let verification = options.authenticatorSelection?.userVerification ?? "preferred"
        let extensions = try Self.extensions(options.extensions, creating: true)
        let providers = self.providers.enabled(where: { $0.provides(.passkey) })
        let provider: ProviderManifest
        if let named = input.provider {
            guard let found = providers.first(where: { $0.id == named }) else {
                throw VarlinkError(
                    WebAuthn.NotAllowedError(message: "\(named) is not an enabled provider of passkeys")
                )
            }
            provider = found
        } else {
            guard let first = providers.first else {
                throw VarlinkError(
                    WebAuthn.NotAllowedError(
                        message: "no provider of passkeys is enabled in Settings (keyport providers enable ID)"
                    )
                )
            }
            provider = first
        }
        if !claimant.choseInItsPrompt(input.provider) {
            let asked = ContinuousClock.now
            try await confirmWithPerson(
                "\(Self.asker(claimant, origin)) asks to make a passkey for \(DisplayText.quoted(options.user.name)) at \(rpID), kept by \(provider.name). Go on?",
                request: request
            )
            clock.person += .now - asked
        }
        // Only once the person said yes (WebAuthn's rule, so that a caller cannot probe for
        // passkeys): one of the excluded passkeys is the person's already.
        if !excluded.isEmpty, !passkeys(for: rpID, allowed: excluded).isEmpty {
            throw VarlinkError(WebAuthn.InvalidStateError(message: Self.excluded))
        }
        let clientData = CollectedClientData(
            .create,
            challenge: challenge,
            origin: origin.description,
            topOrigin: input.topOrigin
        )
        let parameters = RawJSON(
            encoding: CredentialProvider.RegisterPasskeyWithoutUserInteraction.Parameters(
                request: CredentialProvider.CredentialRequest(
                    type: .passkey,
                    credentialIdentity: CredentialProvider.CredentialIdentity(
                        kind: .passkey,
                        serviceIdentifier: CredentialProvider.ServiceIdentifier(identifier: rpID, type: .domain),
                        user: options.user.name,
                        recordIdentifier: nil,
                        rank: 0,
                        credentialID: nil,
                        userHandle: Base64URL.encode(userHandle)
                    ),
                    passkey: CredentialProvider.PasskeyRequest(
                        clientDataHash: Base64URL.encode(clientData.hash),
                        userVerificationPreference: verification,
                        supportedAlgorithms: algorithms.map { Int($0.rawValue) },
                        excludedCredentials: excluded.isEmpty ? nil : excluded.map { Base64URL.encode($0) },
                        prf: extensions?.prf.map(Self.prfInput)
                    )
                )
            )
        )
        let reply: RawJSON
        let asked = ContinuousClock.now
        do {
            defer { clock.provider += .now - asked }
            reply = try await self.providers.requests.ask(
                provider,
                CredentialProvider.RegisterPasskeyWithoutUserInteraction.name,
                then: CredentialProvider.RegisterPasskey.name,
                parameters,
                interactive: true,
                as: Self.call(for: request, to: provider)
            )
        } catch .canceled(let code, _) where code == ProviderRequestFailure.matchedExcludedCredential {
            throw VarlinkError(WebAuthn.InvalidStateError(message: Self.excluded))
        } catch {
            throw Self.error(error, of: provider)
        }
        guard let registration = try? reply.decode(CredentialProvider.RegisterPasskey.Reply.self).registration else {
            throw Self.unknown(provider, "its answer is not a passkey registration")
        }
        var credential = try Self.checked(
            registration,
            from: provider,
            rpID: rpID,
            clientData: clientData,
            verification: verification
        )
        guard let key = credential.authenticatorData.attestedCredential?.publicKey, algorithms.contains(key.algorithm)
        else {
            throw Self.unknown(provider, "it made a key for an algorithm the site did not offer")
        }
        // The attestation the site asked for: by default none, so a provider's own statement (which
        // names its model and may identify the device) does not go to the site.
        if !["direct", "indirect", "enterprise"].contains(options.attestation ?? "none"), credential.format != "none" {
            credential.format = "none"
            credential.statement = .map([])
        }
        logger.info("passkey registered", metadata: clock.metadata(["provider": "\(provider.id)", "rp": "\(rpID)"]))
        return WebAuthn.Create.Reply(
            credential: Self.registrationJSON(
                credential,
                clientData: clientData,
                registration: registration,
                credProps: extensions?.credProps == true,
                prfAsked: extensions?.prf != nil
            ),
            provider: provider.id
        )
    }

    /// The attestation object of `registration`, checked against the request: for `rpID`, the
    /// person present, verified when that was required, a new credential whose id is the one
    /// named, the client data's hash echoed.
    private static func checked(
        _ registration: CredentialProvider.PasskeyRegistration,
        from provider: ProviderManifest,
        rpID: String,
        clientData: CollectedClientData,
        verification: String
    ) throws(VarlinkError) -> AttestationObject {
        let object: AttestationObject
        do {
            object = try AttestationObject(try Base64URL.decode(registration.attestationObject))
        } catch let error as PasskeyDataError {
            throw unknown(provider, error.message)
        } catch {
            throw unknown(provider, "its attestation object is not base64url")
        }
        let data = object.authenticatorData
        guard registration.relyingParty == rpID, data.isFor(rpID: rpID) else {
            throw unknown(provider, "it made a passkey for another relying party than \(rpID)")
        }
        guard registration.clientDataHash == Base64URL.encode(clientData.hash) else {
            throw unknown(provider, "it signed other client data than it was given")
        }
        guard let attested = data.attestedCredential,
            registration.credentialID == Base64URL.encode(attested.credentialID)
        else {
            throw unknown(provider, "the credential id it named is not the one its attestation holds")
        }
        try checkFlags(data.flags, from: provider, verification: verification)
        return object
    }

    /// The person was present; verified when the relying party required it.
    private static func checkFlags(
        _ flags: AuthenticatorData.Flags,
        from provider: ProviderManifest,
        verification: String
    ) throws(VarlinkError) {
        guard flags.contains(.userPresent) else {
            throw unknown(provider, "its authenticator data does not say the person was present")
        }
        if verification == "required" && !flags.contains(.userVerified) {
            throw VarlinkError(
                WebAuthn.NotAllowedError(
                    message: "the site requires that you be verified, and \(provider.name) did not verify you"
                )
            )
        }
    }

    private static func registrationJSON(
        _ object: AttestationObject,
        clientData: CollectedClientData,
        registration: CredentialProvider.PasskeyRegistration,
        credProps: Bool,
        prfAsked: Bool
    ) -> WebAuthn.RegistrationCredential {
        let key = object.authenticatorData.attestedCredential!.publicKey
        let id = registration.credentialID
        return WebAuthn.RegistrationCredential(
            id: id,
            rawId: id,
            type: "public-key",
            authenticatorAttachment: "platform",
            response: WebAuthn.RegistrationResponse(
                clientDataJSON: Base64URL.encode(clientData.json),
                attestationObject: Base64URL.encode(object.bytes),
                authenticatorData: Base64URL.encode(object.authenticatorDataBytes),
                transports: ["internal", "hybrid"],
                publicKey: Base64URL.encode(key.subjectPublicKeyInfo),
                publicKeyAlgorithm: Int(key.algorithm.rawValue)
            ),
            clientExtensionResults: WebAuthn.ExtensionOutputs(
                credProps: credProps ? WebAuthn.CredentialProperties(rk: true) : nil,
                prf: prfAsked
                    ? WebAuthn.PRFOutputs(
                        enabled: registration.prfSupported ?? false,
                        results: registration.prf.map { WebAuthn.PRFValues(first: $0.first, second: $0.second) }
                    ) : nil
            )
        )
    }

    // MARK: - navigator.credentials.get()

    package func get(
        _ input: consuming WebAuthn.Get.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> WebAuthn.Get.Reply {
        var clock = CallClock()
        let options = input.options
        let (claimant, origin, rpID) = try await relyingParty(
            origin: input.origin,
            topOrigin: input.topOrigin,
            rpID: options.rpId,
            request: request
        )
        let challenge = try Self.bytes(options.challenge, "options.challenge")
        let allowed = try (options.allowCredentials ?? []).map { descriptor throws(VarlinkError) in
            try Self.bytes(descriptor.id, "options.allowCredentials")
        }
        let verification = options.userVerification ?? "preferred"
        let extensions = try Self.extensions(options.extensions, creating: false, allowed: allowed)
        let candidates = passkeys(for: rpID, allowed: allowed)
        let chosen: Candidate
        if let named = input.passkey {
            guard let found = candidates.first(where: { Base64URL.encode($0.credentialID) == named }) else {
                throw VarlinkError(WebAuthn.NotAllowedError(message: Self.noPasskey))
            }
            chosen = found
        } else if candidates.count == 1 {
            chosen = candidates[0]
        } else if candidates.isEmpty {
            throw VarlinkError(WebAuthn.NotAllowedError(message: Self.noPasskey))
        } else {
            let asked = ContinuousClock.now
            defer { clock.person += .now - asked }
            chosen = try await choose(
                among: candidates,
                rpID: rpID,
                asker: Self.asker(claimant, origin),
                request: request
            )
        }
        if (candidates.count == 1 || input.passkey != nil) && !claimant.choseInItsPrompt(input.passkey) {
            // The person's choice in the agent is their consent; a passkey given without a choice
            // is confirmed there, unless the person chose it in the extension's prompt.
            let asked = ContinuousClock.now
            defer { clock.person += .now - asked }
            try await confirmWithPerson(
                "\(Self.asker(claimant, origin)) asks to sign you in to \(rpID) as \(DisplayText.quoted(chosen.identity.user)) with \(chosen.provider.name)'s passkey. Go on?",
                request: request
            )
        }
        let clientData = CollectedClientData(
            .get,
            challenge: challenge,
            origin: origin.description,
            topOrigin: input.topOrigin
        )
        let parameters = RawJSON(
            encoding: CredentialProvider.ProvideWithoutUserInteraction.Parameters(
                request: CredentialProvider.CredentialRequest(
                    type: .passkey,
                    credentialIdentity: chosen.identity,
                    passkey: CredentialProvider.PasskeyRequest(
                        clientDataHash: Base64URL.encode(clientData.hash),
                        userVerificationPreference: verification,
                        supportedAlgorithms: [],
                        excludedCredentials: nil,
                        prf: extensions?.prf.map(Self.prfInput)
                    )
                )
            )
        )
        let reply: RawJSON
        let asked = ContinuousClock.now
        do {
            defer { clock.provider += .now - asked }
            reply = try await self.providers.requests.ask(
                chosen.provider,
                CredentialProvider.ProvideWithoutUserInteraction.name,
                then: CredentialProvider.ProvideWithUserInteraction.name,
                parameters,
                interactive: true,
                as: Self.call(for: request, to: chosen.provider)
            )
        } catch {
            throw Self.error(error, of: chosen.provider)
        }
        guard
            let assertion = try? reply.decode(CredentialProvider.ProvideWithUserInteraction.Reply.self).credential
                .passkey
        else {
            throw Self.unknown(chosen.provider, "its answer is not a passkey's assertion")
        }
        let checked = try Self.check(
            assertion,
            of: chosen,
            rpID: rpID,
            clientData: clientData,
            verification: verification
        )
        logger.info(
            "passkey assertion",
            metadata: clock.metadata(["provider": "\(chosen.provider.id)", "rp": "\(rpID)"])
        )
        return WebAuthn.Get.Reply(
            credential: WebAuthn.AssertionCredential(
                id: assertion.credentialID,
                rawId: assertion.credentialID,
                type: "public-key",
                authenticatorAttachment: "platform",
                response: WebAuthn.AssertionResponse(
                    clientDataJSON: Base64URL.encode(clientData.json),
                    authenticatorData: checked.authenticatorData,
                    signature: checked.signature,
                    userHandle: checked.userHandle
                ),
                clientExtensionResults: WebAuthn.ExtensionOutputs(
                    prf: extensions?.prf == nil
                        ? nil
                        : WebAuthn.PRFOutputs(
                            results: assertion.prf.map { WebAuthn.PRFValues(first: $0.first, second: $0.second) }
                        )
                )
            ),
            provider: chosen.provider.id
        )
    }

    /// An assertion is for `rpID`, by the passkey chosen and its account, of the client data
    /// sent, the person present (and verified when required), without a new credential in it. Its
    /// parts go to the page as keyportd writes base64url, not as the provider did.
    private static func check(
        _ assertion: CredentialProvider.PasskeyAssertion,
        of chosen: Candidate,
        rpID: String,
        clientData: CollectedClientData,
        verification: String
    ) throws(VarlinkError) -> (authenticatorData: String, signature: String, userHandle: String) {
        let bytes: (data: [UInt8], signature: [UInt8], userHandle: [UInt8])
        do {
            bytes = (
                try Base64URL.decode(assertion.authenticatorData), try Base64URL.decode(assertion.signature),
                try Base64URL.decode(assertion.userHandle)
            )
        } catch {
            throw unknown(chosen.provider, "its assertion holds a value that is not base64url")
        }
        let data: AuthenticatorData
        do {
            data = try AuthenticatorData(bytes.data)
        } catch {
            throw unknown(chosen.provider, error.message)
        }
        guard assertion.relyingParty == rpID, data.isFor(rpID: rpID) else {
            throw unknown(chosen.provider, "it signed for another relying party than \(rpID)")
        }
        guard assertion.credentialID == Base64URL.encode(chosen.credentialID) else {
            throw unknown(chosen.provider, "it signed with another passkey than the one chosen")
        }
        guard let handle = chosen.identity.userHandle, Base64URL.encode(bytes.userHandle) == handle else {
            throw unknown(chosen.provider, "it answered for another account than the passkey's")
        }
        guard assertion.clientDataHash == Base64URL.encode(clientData.hash) else {
            throw unknown(chosen.provider, "it signed other client data than it was given")
        }
        guard data.attestedCredential == nil, !bytes.signature.isEmpty else {
            throw unknown(chosen.provider, "its assertion carries a new credential, or no signature")
        }
        try checkFlags(data.flags, from: chosen.provider, verification: verification)
        return (Base64URL.encode(bytes.data), Base64URL.encode(bytes.signature), Base64URL.encode(bytes.userHandle))
    }

    /// The person chooses which passkey, in the agent.
    private func choose(
        among candidates: [Candidate],
        rpID: String,
        asker: String,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> Candidate {
        let question = Agent.Request(
            id: UUID().uuidString,
            kind: .choose,
            app: "Keyport",
            message: "\(asker) asks to sign you in to \(rpID). With which passkey?",
            choices: candidates.enumerated().map { index, candidate in
                Agent.Choice(
                    id: String(index),
                    name: "\(DisplayText.quoted(candidate.identity.user)) (\(candidate.provider.name))"
                )
            }
        )
        let answer = try await askPerson(question, what: "which passkey to use", request: request)
        guard let choice = answer.choice.flatMap(Int.init), candidates.indices.contains(choice) else {
            throw VarlinkError(WebAuthn.NotAllowedError(message: "you chose no passkey"))
        }
        return candidates[choice]
    }

    // MARK: - Shared

    /// Every Get that finds no passkey says this, whether none exists or none was allowed, so that
    /// a caller cannot tell which (WebAuthn's privacy rule).
    private static let noPasskey = "no passkey could be used"

    /// What an excluded passkey that is the person's already is said as: no account or provider
    /// named.
    private static let excluded = "a passkey the site excluded is already yours"

    /// The extensions keyportd takes part in (credProps, prf), read from the options' object;
    /// others are ignored, as WebAuthn says. One of the two that is not what WebAuthn defines is
    /// a TypeError naming it.
    private static func extensions(
        _ object: RawJSON?,
        creating: Bool,
        allowed: [[UInt8]] = []
    ) throws(VarlinkError) -> WebAuthn.ExtensionInputs? {
        guard let object else { return nil }
        let inputs: WebAuthn.ExtensionInputs
        do {
            inputs = try object.decode(WebAuthn.ExtensionInputs.self)
        } catch {
            throw VarlinkError(WebAuthn.TypeError(message: "options.extensions: \(error)"))
        }
        if let prf = inputs.prf {
            // WebAuthn §10.1.4: evalByCredential only for an assertion that names its credentials.
            if let byCredential = prf.evalByCredential, !byCredential.isEmpty {
                guard !creating, !allowed.isEmpty else {
                    throw VarlinkError(
                        WebAuthn.NotSupportedError(
                            message: "prf.evalByCredential needs a sign-in that names its allowCredentials"
                        )
                    )
                }
                for id in byCredential.keys {
                    guard let bytes = try? Base64URL.decode(id), allowed.contains(bytes) else {
                        throw VarlinkError(
                            WebAuthn.TypeError(
                                message: "prf.evalByCredential names \(id), which allowCredentials does not"
                            )
                        )
                    }
                }
            }
            for values in [prf.eval].compactMap({ $0 }) + (prf.evalByCredential.map { Array($0.values) } ?? []) {
                for value in [values.first] + (values.second.map { [$0] } ?? []) {
                    _ = try bytes(value, "options.extensions.prf")
                }
            }
        }
        return inputs
    }

    /// The relying party's PRF inputs, as the provider takes them (it salts them itself).
    private static func prfInput(_ inputs: WebAuthn.PRFInputs) -> CredentialProvider.PRFInput {
        CredentialProvider.PRFInput(
            eval: inputs.eval.map { CredentialProvider.PRFValues(first: $0.first, second: $0.second) },
            evalByCredential: inputs.evalByCredential?.mapValues {
                CredentialProvider.PRFValues(first: $0.first, second: $0.second)
            }
        )
    }

    /// A base64url member's bytes; WebAuthn's TypeError naming it when it is not base64url.
    private static func bytes(_ text: String, _ member: String) throws(VarlinkError) -> [UInt8] {
        do {
            return try Base64URL.decode(text)
        } catch {
            throw VarlinkError(WebAuthn.TypeError(message: "\(member) is not base64url: \(error)"))
        }
    }

    /// A provider's call for `request`: when the provider asks the person and the client called
    /// with `more`, the client hears so at once. The interim reply is `{provider, asking}`, which
    /// Create's and Get's replies alike are without their credential (Get's type writes it).
    private static func call(for request: VarlinkRequest, to provider: ProviderManifest) -> ProviderPool.Call {
        ProviderPool.Call { message in
            guard request.call.more else { return }
            try? await request.send(RawJSON(encoding: WebAuthn.Get.Reply(provider: provider.id, asking: message)))
        }
    }

    private static func error(_ error: WebAuthnError) -> VarlinkError {
        switch error.code {
        case .security: VarlinkError(WebAuthn.SecurityError(message: error.message))
        case .type: VarlinkError(WebAuthn.TypeError(message: error.message))
        case .invalidState: VarlinkError(WebAuthn.InvalidStateError(message: error.message))
        case .notSupported: VarlinkError(WebAuthn.NotSupportedError(message: error.message))
        case .unknown: VarlinkError(WebAuthn.UnknownError(message: error.message))
        default: VarlinkError(WebAuthn.NotAllowedError(message: error.message))
        }
    }

    /// A provider's failure, as WebAuthn says it: what the person declined or let pass is
    /// NotAllowedError, a provider that broke is UnknownError.
    private static func error(_ failure: ProviderRequestFailure, of provider: ProviderManifest) -> VarlinkError {
        switch failure {
        case .interactionRequired, .interactionRefused:
            VarlinkError(WebAuthn.NotAllowedError(message: "\(provider.name) needs you, and could not ask you"))
        case .personTimedOut(let limit):
            VarlinkError(
                WebAuthn.NotAllowedError(
                    message: "you did not answer \(provider.name)'s question within \(limit.components.seconds) seconds"
                )
            )
        case .declinedByPerson:
            VarlinkError(WebAuthn.NotAllowedError(message: "you declined what \(provider.name) asked"))
        case .canceled(_, let reason):
            VarlinkError(WebAuthn.NotAllowedError(message: "\(provider.name) declined: \(reason)"))
        case .failed(let why): unknown(provider, why)
        }
    }

    private static func unknown(_ provider: ProviderManifest, _ why: String) -> VarlinkError {
        VarlinkError(WebAuthn.UnknownError(message: "\(provider.name): \(why)"))
    }
}
