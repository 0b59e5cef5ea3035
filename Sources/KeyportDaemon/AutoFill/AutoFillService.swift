import Foundation
import KeyportDomains
import KeyportEncoding
import KeyportInterfaces
import Logging
import Varlink

/// `org.keyport.AutoFill`: a client asks for a credential for some services; keyportd picks the
/// identity that fits best among the enabled providers' and asks its provider, as Apple's
/// AutoFill does (seed 003): without the person first, with them when the provider needs it.
///
/// Which identity: for the earliest (most specific) service identifier that any identity fits,
/// the best fit (same host and port, same host, same registrable domain), then the provider
/// earlier in Settings, then the higher rank. Only providers enabled in Settings, and declaring
/// the kind asked for, are considered.
package final class AutoFillService: AutoFill.Server {
    private let providers: CredentialProviders
    private let logger: Logger

    package init(providers: CredentialProviders, logger: Logger) {
        self.providers = providers
        self.logger = logger
    }

    /// An identity that fits a request, and how well.
    package struct Candidate {
        var provider: ProviderManifest
        var identity: IdentityStore.CredentialIdentity
        /// Where the identity was saved for.
        var origin: ServiceOrigin
        var fit: ServiceFit
        /// Sort key: earlier identifier, better fit, earlier provider, higher rank.
        var key: (identifier: Int, fit: Int, provider: Int, rank: Int)

        init(
            provider: ProviderManifest,
            order: Int,
            entry: IdentityStoreService.Identities.Entry,
            fit: ServiceFit,
            identifier: Int
        ) {
            self.provider = provider
            identity = entry.identity
            origin = entry.origin
            self.fit = fit
            key = Self.key(identifier: identifier, fit: fit, order: order, rank: entry.identity.rank)
        }

        static func key(
            identifier: Int,
            fit: ServiceFit,
            order: Int,
            rank: Int
        ) -> (
            identifier: Int, fit: Int, provider: Int, rank: Int
        ) {
            (identifier, -fit.rawValue, order, -rank)
        }

        /// How the person sees it in a question: `https://github.com — alice (Example Passwords)`.
        var shown: String {
            "\(origin) — \(identity.user.isEmpty ? "no user name" : identity.user) (\(provider.name))"
        }
    }

    /// What fits a request: the exact fits (same scheme, host and port), best first, given
    /// without the person; when there is none, the wider fits (another port of the host, another
    /// host of its registrable domain), best first, which only the person may choose.
    package struct Fits {
        package var exact: [Candidate] = []
        package var wider: [Candidate] = []
        /// An identity of the site left out because it was saved for a secure scheme and the
        /// request is not (`https` saved, `http` asked), for the refusal to say so.
        package var secureOnly: ServiceOrigin?
        /// Whether more fitted than are kept.
        package var truncated = false

        /// Keeps the candidate `make` gives among the best `limit` of `kept` (the exact or the
        /// wider fits), in order, an identity once (at its best, when it fits several requests).
        /// A candidate is made only when it would be kept, so work per identity stays small
        /// however many share a domain.
        mutating func keep(
            _ key: (identifier: Int, fit: Int, provider: Int, rank: Int),
            provider: String,
            identity: IdentityStore.CredentialIdentity,
            in kept: WritableKeyPath<Fits, [Candidate]>,
            limit: Int,
            make: () -> Candidate
        ) {
            func isSame(_ other: Candidate) -> Bool {
                other.provider.id == provider && other.identity.key == identity.key
            }
            if self[keyPath: kept].count == limit, let last = self[keyPath: kept].last, !(key < last.key) {
                // Left out, unless it is kept already for an earlier request.
                if !truncated, !self[keyPath: kept].contains(where: isSame) { truncated = true }
                return
            }
            if let same = self[keyPath: kept].firstIndex(where: isSame) {
                guard key < self[keyPath: kept][same].key else { return }
                self[keyPath: kept].remove(at: same)
            }
            let candidate = make()
            self[keyPath: kept].insert(
                candidate,
                at: self[keyPath: kept].firstIndex { key < $0.key } ?? self[keyPath: kept].endIndex
            )
            if self[keyPath: kept].count > limit {
                self[keyPath: kept].removeLast()
                truncated = true
            }
        }
    }

    /// The most exact fits listed (ListIdentities), and the most wider fits offered in one
    /// question or listed.
    static let listedFits = 50
    static let offeredFits = 20

    /// The providers enabled in Settings whose capabilities pass `accepts`, in Settings order.
    private func enabledProviders(where accepts: (Providers.Capabilities) -> Bool) -> [ProviderManifest] {
        self.providers.enabled(where: accepts)
    }

    /// What fits `requested` among the enabled providers' identities of `kind` (only the one
    /// `reference` names, when given).
    package func fits(
        kind: IdentityStore.CredentialType,
        user: String? = nil,
        only reference: AutoFill.IdentityReference? = nil,
        for requested: [ServiceOrigin]
    ) -> Fits {
        var providers = enabledProviders { $0.provides(kind) }
        if let reference { providers = providers.filter { $0.id == reference.provider } }
        return fits(kind: kind, user: user, only: reference, for: requested, among: providers)
    }

    /// What fits `requested` among `providers`' identities (in Settings order). The exact fits
    /// are looked up by origin; only when there is none are the identities of the requests'
    /// sites read for wider ones.
    private func fits(
        kind: IdentityStore.CredentialType,
        user: String?,
        only reference: AutoFill.IdentityReference? = nil,
        for requested: [ServiceOrigin],
        among providers: [ProviderManifest]
    ) -> Fits {
        let stores = providers.map { self.providers.identities.identities(of: $0.id) }
        func wanted(_ identity: IdentityStore.CredentialIdentity) -> Bool {
            identity.kind == kind && (user == nil || identity.user == user)
                && (reference.map {
                    identity.user == $0.user && identity.recordIdentifier == $0.recordIdentifier
                        && identity.serviceIdentifier.identifier == $0.site
                } ?? true)
        }
        var result = Fits()
        for (order, provider) in providers.enumerated() {
            for (index, origin) in requested.enumerated() {
                for entry in stores[order].byOrigin[origin] ?? [] where wanted(entry.identity) {
                    result.keep(
                        Candidate.key(identifier: index, fit: .exact, order: order, rank: entry.identity.rank),
                        provider: provider.id,
                        identity: entry.identity,
                        in: \.exact,
                        limit: Self.listedFits
                    ) {
                        Candidate(provider: provider, order: order, entry: entry, fit: .exact, identifier: index)
                    }
                }
            }
        }
        guard result.exact.isEmpty else { return result }
        for (order, provider) in providers.enumerated() {
            for (index, origin) in requested.enumerated() {
                // Every identity filed under the request's site shares its registrable domain (or
                // is its very host): the fit needs no suffix list here, so a domain of 100 000
                // identities costs a pass over them.
                for entry in stores[order].bySite[origin.site(in: self.providers.list)] ?? []
                where wanted(entry.identity) {
                    let fit = entry.origin.fit(withinSiteOf: origin)
                    guard fit != .none else {
                        if result.secureOnly == nil { result.secureOnly = entry.origin }
                        continue
                    }
                    result.keep(
                        Candidate.key(identifier: index, fit: fit, order: order, rank: entry.identity.rank),
                        provider: provider.id,
                        identity: entry.identity,
                        in: \.wider,
                        limit: Self.offeredFits
                    ) {
                        Candidate(provider: provider, order: order, entry: entry, fit: fit, identifier: index)
                    }
                }
            }
        }
        return result
    }

    /// The service a request names, read; an identifier that names none is the client's error,
    /// reported as `parameter`.
    private static func origin(
        of identifier: AutoFill.ServiceIdentifier,
        parameter: String
    ) throws(VarlinkError) -> ServiceOrigin {
        switch ServiceOrigin.parse(identifier.identifier) {
        case .success(let origin): return origin
        case .failure(let error): throw .invalidParameter(parameter, error.description)
        }
    }

    /// The services a request names, read.
    private static func origins(of identifiers: [AutoFill.ServiceIdentifier]) throws(VarlinkError) -> [ServiceOrigin] {
        var requested: [ServiceOrigin] = []
        for (index, identifier) in identifiers.enumerated() {
            requested.append(try origin(of: identifier, parameter: "serviceIdentifiers[\(index)]"))
        }
        return requested
    }

    /// The most identities `ListIdentities` lists for no service.
    static let listedIdentities = 10_000

    /// `ListIdentities`: what fits, named, never a secret; no provider is asked.
    package func listIdentities(
        _ input: consuming AutoFill.ListIdentities.Parameters,
        request: VarlinkRequest
    ) throws(VarlinkError) -> AutoFill.ListIdentities.Reply {
        try Self.refusePasskeys(input.type)
        guard !input.serviceIdentifiers.isEmpty else { return everyIdentity(of: input.type) }
        let fits = fits(kind: input.type, for: try Self.origins(of: input.serviceIdentifiers))
        let listed = (fits.exact.isEmpty ? fits.wider : fits.exact).map { candidate in
            AutoFill.FittingIdentity(
                identity: AutoFill.IdentityReference(
                    provider: candidate.provider.id,
                    recordIdentifier: candidate.identity.recordIdentifier,
                    user: candidate.identity.user,
                    site: candidate.identity.serviceIdentifier.identifier
                ),
                providerName: candidate.provider.name,
                origin: candidate.origin.description,
                fit: candidate.fit == .exact ? .exact : candidate.fit == .sameHost ? .sameHost : .sameSite,
                service: candidate.key.identifier
            )
        }
        return AutoFill.ListIdentities.Reply(identities: listed, truncated: fits.truncated)
    }

    /// Every identity of `kind` of the enabled providers, in Settings' order, then by rank, site
    /// and user.
    private func everyIdentity(of kind: IdentityStore.CredentialType) -> AutoFill.ListIdentities.Reply {
        var listed: [AutoFill.FittingIdentity] = []
        var truncated = false
        for provider in enabledProviders(where: { $0.provides(kind) }) {
            let entries = self.providers.identities.identities(of: provider.id).byOrigin.values.joined()
                .filter { $0.identity.kind == kind }
                .sorted { left, right in
                    left.identity.rank != right.identity.rank
                        ? left.identity.rank > right.identity.rank
                        : (left.origin.description, left.identity.user) < (
                            right.origin.description, right.identity.user
                        )
                }
            for entry in entries {
                guard listed.count < Self.listedIdentities else {
                    truncated = true
                    break
                }
                listed.append(
                    AutoFill.FittingIdentity(
                        identity: AutoFill.IdentityReference(
                            provider: provider.id,
                            recordIdentifier: entry.identity.recordIdentifier,
                            user: entry.identity.user,
                            site: entry.identity.serviceIdentifier.identifier
                        ),
                        providerName: provider.name,
                        origin: entry.origin.description
                    )
                )
            }
        }
        return AutoFill.ListIdentities.Reply(identities: listed, truncated: truncated)
    }

    package func requestCredential(
        _ input: consuming AutoFill.RequestCredential.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> AutoFill.RequestCredential.Reply {
        try Self.refusePasskeys(input.type)
        let requested = try Self.origins(of: input.serviceIdentifiers)
        let kind = input.type.noun
        let services =
            requested.map(\.description).joined(separator: ", ") + (input.user.map { " (user \($0))" } ?? "")
        let fits = fits(kind: input.type, user: input.user, only: input.identity, for: requested)
        let candidate: Candidate
        if let exact = fits.exact.first {
            candidate = exact
        } else if !fits.wider.isEmpty {
            candidate = try await offer(
                fits.wider,
                chosen: input.identity != nil,
                kind: kind,
                services: services,
                interactive: input.interactive ?? true,
                for: request
            )
        } else {
            let secure = fits.secureOnly.map {
                "; one is saved for \($0), and what is saved for a secure scheme is never given to one that is not"
            }
            let named = input.identity.map {
                " as the identity asked for (\($0.user.isEmpty ? "no user name" : $0.user), saved for \($0.site) in \($0.provider))"
            }
            throw VarlinkError(
                AutoFill.NoCredential(
                    message:
                        "no enabled provider has a \(kind) for \(services.isEmpty ? "no service" : services)\(named ?? "")\(secure ?? "")"
                )
            )
        }
        return AutoFill.RequestCredential.Reply(
            credential: try await provide(candidate, interactive: input.interactive ?? true, for: request),
            provider: candidate.provider.id,
            site: candidate.origin.description
        )
    }

    /// The credential of `candidate`, from its provider: without the person first; if it needs
    /// them and `interactive`, again with them.
    private func provide(
        _ candidate: Candidate,
        interactive: Bool,
        for request: VarlinkRequest
    ) async throws(VarlinkError) -> AutoFill.Credential {
        let provider = candidate.provider
        let parameters = RawJSON(
            encoding:
                CredentialProvider.ProvideWithoutUserInteraction.Parameters(
                    request: CredentialProvider.CredentialRequest(
                        type: candidate.identity.kind,
                        credentialIdentity: candidate.identity
                    )
                )
        )
        let reply = try await ask(
            provider,
            CredentialProvider.ProvideWithoutUserInteraction.name,
            then: CredentialProvider.ProvideWithUserInteraction.name,
            parameters,
            interactive: interactive,
            as: Self.call(for: request, to: provider)
        )
        return try answer(reply, from: provider)
    }

    package func requestAppPassword(
        _ input: consuming AutoFill.RequestAppPassword.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> AutoFill.RequestAppPassword.Reply {
        guard let app = self.providers.associatedApp(of: request) else {
            throw VarlinkError(
                AutoFill.NotAssociated(
                    message:
                        "only a registered app whose manifest names associated domains may ask for a site's password, and the caller is none"
                )
            )
        }
        // Each associated domain counts once its site names the app (its https origin).
        var sites: [ServiceOrigin] = []
        var refusals: [String] = []
        for domain in app.associatedDomains {
            let (confirmed, why) = await self.providers.associations.confirm(domain: domain, app: app.id)
            if confirmed, let origin = ServiceOrigin("https://\(domain)") {
                sites.append(origin)
            } else {
                refusals.append(why)
            }
        }
        let named = "\(app.name) (\(app.id))"
        guard !sites.isEmpty else {
            throw VarlinkError(
                AutoFill.NotAssociated(
                    message: "no site confirms that \(named) is its app: \(refusals.joined(separator: "; "))"
                )
            )
        }
        let services = sites.map(\.description).joined(separator: ", ")
        let saved = fits(kind: .password, for: sites).exact
        guard !saved.isEmpty else {
            throw VarlinkError(AutoFill.NoCredential(message: "no enabled provider has a password for \(services)"))
        }
        if request.call.more {
            try? await request.send(
                Self.asking(provider: "", "Keyport is asking you through the agent which saved password to give")
            )
        }
        // Every app's request is the person's choice: an app is not where they typed, and another
        // process of theirs may run one (SECURITY.md, "Known limits").
        let chosen = try await choose(
            among: saved,
            "The app \(DisplayText.quoted(app.name)) (\(app.id)) asks for your saved password for \(services). Give it which one?",
            what: "which saved password to give the app",
            none: "you chose none of the passwords; nothing was given"
        )
        logger.info("a password given to an app", metadata: ["app": "\(app.id)", "provider": "\(chosen.provider.id)"])
        return AutoFill.RequestAppPassword.Reply(
            credential: try await provide(chosen, interactive: true, for: request),
            provider: chosen.provider.id,
            site: chosen.origin.description
        )
    }

    /// Only wider fits: the person chooses one in the agent, or none; when the client named one
    /// (`chosen`: the one fit left), the person confirms it in the agent. Without an agent, or
    /// when the request is not to involve the person, the client is told the nearest fit instead.
    private func offer(
        _ fits: [Candidate],
        chosen: Bool,
        kind: String,
        services: String,
        interactive: Bool,
        for request: VarlinkRequest
    ) async throws(VarlinkError) -> Candidate {
        // The account is not named: this is told to any client, without the person.
        let nearest = fits[0]
        let onlyOffered =
            "no enabled provider has a \(kind) for \(services) itself; the nearest fit is saved for \(nearest.origin) in \(nearest.provider.name), and is only given when you choose it in the agent"
        guard interactive else {
            throw VarlinkError(AutoFill.NoCredential(message: onlyOffered + ", and the request was not to involve you"))
        }
        guard await self.providers.agents.canAsk else {
            throw VarlinkError(AutoFill.NoCredential(message: onlyOffered + "; " + AgentHub.nobodyToAsk()))
        }
        if request.call.more {
            try? await request.send(
                Self.asking(
                    provider: "",
                    "Keyport is asking you through the agent which saved \(kind) to give to \(services)"
                )
            )
        }
        if chosen {
            let fit = fits[0]
            let question = Agent.Request(
                id: UUID().uuidString,
                kind: .confirm,
                app: "Keyport",
                message:
                    "No \(kind) is saved for \(services). Give the one saved for another site of it, \(fit.shown)? Say yes only if \(services) is the same service."
            )
            let answer = try await askPerson(question, what: "whether to give it")
            guard answer.choice == Agent.yes else {
                throw VarlinkError(
                    AutoFill.Canceled(
                        message: "you did not confirm the \(kind) saved for \(fit.origin); nothing was given"
                    )
                )
            }
            logger.info("wider fit confirmed by the person", metadata: ["provider": "\(fit.provider.id)"])
            return fit
        }
        let chosen = try await choose(
            among: fits,
            "No \(kind) is saved for \(services). Give one saved for another site of it? Choose only if \(services) is the same service.",
            what: "which saved \(kind) to give",
            none: "you chose none of the \(kind)s saved for other sites; nothing was given"
        )
        logger.info("wider fit chosen by the person", metadata: ["provider": "\(chosen.provider.id)"])
        return chosen
    }

    /// The candidate the person chooses in the agent, asked `message` (the candidates numbered
    /// from 1, as the terminal agent lists them); choosing none is the client's `Canceled`, saying
    /// `none`.
    private func choose(
        among candidates: [Candidate],
        _ message: String,
        what: String,
        none: String
    ) async throws(VarlinkError) -> Candidate {
        let question = Agent.Request(
            id: UUID().uuidString,
            kind: .choose,
            app: "Keyport",
            message: message,
            choices: candidates.enumerated().map { Agent.Choice(id: String($0.offset + 1), name: $0.element.shown) }
        )
        let answer = try await askPerson(question, what: what)
        guard let index = answer.choice.flatMap(Int.init).map({ $0 - 1 }), candidates.indices.contains(index) else {
            throw VarlinkError(AutoFill.Canceled(message: none))
        }
        return candidates[index]
    }

    /// Asks the person `question` through the agent; what keeps them from answering is the
    /// client's `Canceled`.
    private func askPerson(
        _ question: Agent.Request,
        what: String
    ) async throws(VarlinkError) -> Agent.Answer.Parameters {
        do {
            return try await self.providers.agents.ask(question, within: self.providers.personTime)
        } catch {
            throw VarlinkError(AutoFill.Canceled(message: error.sentence(what, limit: self.providers.personTime)))
        }
    }

    /// A provider's call on behalf of `request`: when the provider asks the person through the
    /// agent and the client called with `more`, the client hears so at once (an `Asking` reply),
    /// rather than waiting in silence while the person is asked.
    private static func call(for request: VarlinkRequest, to provider: ProviderManifest) -> ProviderPool.Call {
        ProviderPool.Call { message in
            guard request.call.more else { return }
            try? await request.send(asking(provider: provider.id, message))
        }
    }

    /// An interim reply saying who asks the person, and what to tell whoever waits. Every
    /// AutoFill method's reply has `provider` and `asking`, and nothing else is required:
    /// SavePassword's reply type is exactly that pair.
    private static func asking(provider: String, _ message: String) -> RawJSON {
        RawJSON(encoding: AutoFill.SavePassword.Reply(provider: provider, asking: message))
    }

    package func savePassword(
        _ input: consuming AutoFill.SavePassword.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> AutoFill.SavePassword.Reply {
        let address = try Self.origin(of: input.serviceIdentifier, parameter: "serviceIdentifier")
        guard !input.password.isEmpty else { throw .invalidParameter("password", "an empty password is not saved") }
        let savers = enabledProviders { $0.SavesPasswords }
        // An update goes where the account is already (saved for this service, else nearest to
        // it); a new one to the first provider in Settings. Which provider is not consent: the
        // provider asks the person before it changes a password it has.
        let existing = fits(kind: .password, user: input.user, for: [address], among: savers)
        guard let provider = (existing.exact.first ?? existing.wider.first)?.provider ?? savers.first
        else {
            throw VarlinkError(
                AutoFill.NoSavingProvider(
                    message: "no enabled provider takes passwords to save (its manifest would declare SavesPasswords)"
                )
            )
        }
        let parameters = RawJSON(
            encoding:
                CredentialProvider.SavePasswordWithoutUserInteraction.Parameters(
                    request: CredentialProvider.SavePasswordRequest(
                        serviceIdentifier: input.serviceIdentifier,
                        user: input.user,
                        password: input.password,
                        title: input.title,
                        sessionID: UUID().uuidString,
                        event: input.event ?? .formDidDisappear
                    )
                )
        )
        _ = try await ask(
            provider,
            CredentialProvider.SavePasswordWithoutUserInteraction.name,
            then: CredentialProvider.SavePasswordWithUserInteraction.name,
            parameters,
            interactive: input.interactive ?? true,
            as: Self.call(for: request, to: provider)
        )
        logger.info("password saved", metadata: ["provider": "\(provider.id)"])
        return AutoFill.SavePassword.Reply(provider: provider.id)
    }

    /// Seed 003's dance (``ProviderRequests``), its failures said as AutoFill's errors.
    private func ask(
        _ provider: ProviderManifest,
        _ quick: String,
        then withPerson: String,
        _ parameters: RawJSON,
        interactive: Bool,
        as call: ProviderPool.Call
    ) async throws(VarlinkError) -> RawJSON {
        do {
            return try await self.providers.requests.ask(
                provider,
                quick,
                then: withPerson,
                parameters,
                interactive: interactive,
                as: call
            )
        } catch {
            throw Self.error(error, of: provider)
        }
    }

    package func requestFromList(
        _ input: consuming AutoFill.RequestFromList.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> AutoFill.RequestFromList.Reply {
        try Self.refusePasskeys(input.type)
        // A provider's own list is every credential of its kind, which keyportd's matching does not
        // filter: none of it goes to a web page sent in clear text, which anyone on the network
        // between can rewrite to take what the person picks (RequestCredential still gives such a
        // page what was saved for it).
        let requested = try Self.origins(of: input.serviceIdentifiers)
        if let clear = requested.first(where: { $0.isCleartextWeb }) {
            throw .invalidParameter(
                "serviceIdentifiers",
                "a provider's whole list is not shown for \(clear), which is not https: whoever is on the network between could change its page and take what you pick"
            )
        }
        let providers = enabledProviders { $0.provides(input.type) }
        let kind = input.type.plural
        guard var provider = providers.first else {
            throw VarlinkError(
                AutoFill.NoCredential(
                    message: "no provider of \(kind) is enabled in Settings (keyport providers enable ID)"
                )
            )
        }
        if providers.count > 1 {
            // As Apple's picker does: which provider's list, before the list itself.
            let services = input.serviceIdentifiers.map(\.identifier).joined(separator: ", ")
            let question = Agent.Request(
                id: UUID().uuidString,
                kind: .choose,
                app: "Keyport",
                message: "Which provider's \(kind)\(services.isEmpty ? "" : " for \(services)")?",
                choices: providers.map { Agent.Choice(id: $0.id, name: $0.name) }
            )
            let answer = try await askPerson(question, what: "which provider's \(kind) to show")
            guard let chosen = providers.first(where: { $0.id == answer.choice }) else {
                throw VarlinkError(AutoFill.Canceled(message: "you chose no provider"))
            }
            provider = chosen
        }
        let reply: RawJSON
        do {
            reply = try await self.providers.requests.askWithPerson(
                provider,
                CredentialProvider.ProvideFromList.name,
                RawJSON(
                    encoding: CredentialProvider.ProvideFromList.Parameters(
                        type: input.type,
                        serviceIdentifiers: input.serviceIdentifiers
                    )
                ),
                as: Self.call(for: request, to: provider)
            )
        } catch {
            throw Self.error(error, of: provider)
        }
        return AutoFill.RequestFromList.Reply(credential: try answer(reply, from: provider), provider: provider.id)
    }

    /// A provider's failure, as AutoFill says it.
    private static func error(_ failure: ProviderRequestFailure, of provider: ProviderManifest) -> VarlinkError {
        switch failure {
        case .interactionRequired:
            VarlinkError(
                AutoFill.InteractionRequired(
                    message:
                        "\(provider.name) needs you (to unlock, or to choose), and the request was not to involve you"
                )
            )
        case .interactionRefused:
            VarlinkError(
                AutoFill.Canceled(message: "\(provider.name) needs you, though it was given the chance to ask you")
            )
        case .personTimedOut(let limit):
            VarlinkError(
                AutoFill.Canceled(
                    message:
                        "you did not answer \(provider.name)'s question in the agent within \(limit.components.seconds) seconds"
                )
            )
        case .declinedByPerson:
            // ASExtensionError.userCanceled: the person said no to what the provider asked.
            VarlinkError(AutoFill.Canceled(message: "you declined what \(provider.name) asked in the agent"))
        case .canceled(_, let reason): VarlinkError(AutoFill.Canceled(message: "\(provider.name) declined: \(reason)"))
        case .failed(let why): failed(provider, why)
        }
    }

    /// The credential in `provider`'s reply.
    private func answer(
        _ reply: RawJSON,
        from provider: ProviderManifest
    ) throws(VarlinkError) -> AutoFill.Credential {
        guard
            let credential = try? reply.decode(CredentialProvider.ProvideWithoutUserInteraction.Reply.self).credential,
            credential.passkey == nil
        else {
            throw Self.failed(provider, "its answer is not a password or a one-time code")
        }
        logger.info("credential provided", metadata: ["provider": "\(provider.id)"])
        return AutoFill.Credential(user: credential.user, password: credential.password, code: credential.code)
    }

    /// AutoFill's requests are for passwords and one-time codes; a passkey signs only through
    /// org.keyport.WebAuthn, which checks the caller's origin first.
    private static func refusePasskeys(_ kind: AutoFill.CredentialType) throws(VarlinkError) {
        guard kind != .passkey else {
            throw .invalidParameter(
                "type",
                "a passkey is asked for through org.keyport.WebAuthn, which checks who may use it"
            )
        }
    }

    private static func failed(_ provider: ProviderManifest, _ why: String) -> VarlinkError {
        VarlinkError(AutoFill.ProviderFailed(provider: provider.id, message: "\(provider.name): \(why)"))
    }
}
