import KeyportDomainsCore
import VarlinkCore

/// One AutoFill request from the command line, on a blocking connection: what `keyport otp`,
/// `keyport password` and `keyport git-credential` share, and what the `keyport` front program
/// answers by itself, without loading Foundation, so that a code is printed within milliseconds.
///
/// Without Foundation there is no `JSONEncoder`: the request is written and the reply read here,
/// member by member, after the interface's definition (tests check both against the Codable
/// types' own JSON).
package enum AutoFillClient {
    /// Why no credential came, as the command line says it: the message and the exit status
    /// (1 none, declined or failed; 2 keyportd not reachable).
    package struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        package var message: String
        package var exitCode: Int32
        /// keyportd's error, when it refused (`org.keyport.AutoFill.InteractionRequired`, …).
        package var name: String?

        package init(_ message: String, exitCode: Int32, name: String? = nil) {
            self.message = message
            self.exitCode = exitCode
            self.name = name
        }

        package var description: String { message }
    }

    /// Asks keyportd's AutoFill for a credential for `service` (a URL, or a domain): the one its
    /// identities fit best (for `user`, when given), or, `fromList`, the one the person picks from
    /// a provider's list. `interactive: false`: the provider may not ask the person. `asking`
    /// hears at once each time the provider asks the person through the agent (what to tell
    /// them, naming the provider), so the command does not wait in silence.
    package static func request(
        _ kind: IdentityStore.Kind,
        for service: String,
        user: String? = nil,
        fromList: Bool = false,
        interactive: Bool? = nil,
        environment: [String: String],
        asking: (String) -> Void
    ) throws(Failure) -> AutoFill.RequestOut {
        // Read here as keyportd will read it, so a site that names no service is said before
        // keyportd is asked (with the same words).
        if case .failure(let error) = ServiceOrigin.parse(service) { throw Failure(error.description, exitCode: 2) }
        let identifier = IdentityStore.ServiceIdentifier(
            identifier: service,
            type: service.contains("://") ? .URL : .domain
        )
        let method = fromList ? AutoFill.requestFromList : AutoFill.requestCredential
        let parameters =
            fromList
            ? CredentialProvider.ListIn(type: kind, serviceIdentifiers: [identifier]).json
            : AutoFill.RequestIn(type: kind, serviceIdentifiers: [identifier], user: user, interactive: interactive)
                .json
        let reply: RawJSON
        do {
            reply = try DaemonClient.connect(environment: environment).call(method, parameters) { interim in
                if let message = try? AutoFill.Asking(json: interim).asking { asking(message) }
            }
        } catch let error as VarlinkError {
            throw Failure(error.sentence, exitCode: 1, name: error.name)
        } catch let error as DaemonError {
            throw Failure(error.description, exitCode: 2)
        } catch {
            throw Failure("keyportd: \(error)", exitCode: 2)
        }
        do {
            return try AutoFill.RequestOut(json: reply)
        } catch {
            throw Failure(
                "keyportd's reply is not what this keyport understands (\(error)); keyport and keyportd may come from different builds",
                exitCode: 2
            )
        }
    }

    /// What `keyport password --json` prints: `{"password", "provider", "site", "user"}`, keys
    /// sorted; `site` and `user` left out when the answer has none (a pick from a provider's
    /// list names no site).
    package static func passwordJSON(_ answer: AutoFill.RequestOut, password: String) -> String {
        var members: [(name: String, value: [UInt8])] = [
            ("password", JSONText.quoted(password)), ("provider", JSONText.quoted(answer.provider)),
        ]
        if let site = answer.site { members.append(("site", JSONText.quoted(site))) }
        if let user = answer.credential.user { members.append(("user", JSONText.quoted(user))) }
        return JSONText.object(members).description
    }

    /// Which account answered and where it was saved, for standard error: `the password of alice
    /// saved for https://github.com (org.keyport.vault)`. The person sees what went out, and a
    /// wider fit they chose is named.
    package static func answered(_ kind: IdentityStore.Kind, _ answer: AutoFill.RequestOut) -> String {
        let what = kind == .password ? "the password" : "the one-time code"
        let user = answer.credential.user.map { $0.isEmpty ? "" : " of \($0)" } ?? ""
        let site = answer.site.map { " saved for \($0)" } ?? ""
        return "\(what)\(user)\(site) (\(answer.provider))"
    }

    /// The secret `answer` carries for `kind`: the code, or the password.
    package static func secret(_ kind: IdentityStore.Kind, of answer: AutoFill.RequestOut) throws(Failure) -> String {
        switch kind {
        case .oneTimeCode:
            guard let code = answer.credential.code else {
                throw Failure("\(answer.provider) answered without a code", exitCode: 1)
            }
            return code
        case .password:
            guard let password = answer.credential.password else {
                throw Failure("\(answer.provider) answered without a password", exitCode: 1)
            }
            return password
        }
    }
}

extension AutoFill.RequestIn {
    /// The parameters as JSON, keys sorted (as `JSONEncoder` with `.sortedKeys` writes them).
    package var json: RawJSON {
        var members: [(name: String, value: [UInt8])] = []
        if let interactive { members.append(("interactive", Array((interactive ? "true" : "false").utf8))) }
        members.append(("serviceIdentifiers", IdentityStore.ServiceIdentifier.json(serviceIdentifiers)))
        members.append(("type", JSONText.quoted(type.rawValue)))
        if let user { members.append(("user", JSONText.quoted(user))) }
        return JSONText.object(members)
    }
}

extension CredentialProvider.ListIn {
    /// The parameters as JSON, keys sorted.
    package var json: RawJSON {
        JSONText.object([
            ("serviceIdentifiers", IdentityStore.ServiceIdentifier.json(serviceIdentifiers)),
            ("type", JSONText.quoted(type.rawValue)),
        ])
    }
}

extension IdentityStore.ServiceIdentifier {
    /// `identifiers` as a JSON array of objects, keys sorted.
    static func json(_ identifiers: [Self]) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "[")]
        for (index, identifier) in identifiers.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out +=
                JSONText.object([
                    ("identifier", JSONText.quoted(identifier.identifier)),
                    ("type", JSONText.quoted(identifier.type.rawValue)),
                ]).bytes
        }
        out.append(UInt8(ascii: "]"))
        return out
    }
}

extension AutoFill.RequestOut {
    /// Reads the reply's parameters: `credential` (`user`, `password`, `code`, each a string or
    /// absent), `provider` and `site`. Members the interface may add later are passed over.
    package init(json: RawJSON) throws {
        var credential = CredentialProvider.Credential()
        var provider: String?
        var site: String?
        var cursor = JSONCursor(json.bytes)
        try cursor.forEachMember { cursor, key in
            switch key {
            case "credential":
                try cursor.forEachMember { cursor, key in
                    switch key {
                    case "user": credential.user = try cursor.optionalString(key)
                    case "password": credential.password = try cursor.optionalString(key)
                    case "code": credential.code = try cursor.optionalString(key)
                    default: try cursor.skipValue()
                    }
                }
            case "provider":
                provider = try cursor.optionalString(key)
            case "site":
                site = try cursor.optionalString(key)
            default:
                try cursor.skipValue()
            }
        }
        guard let provider else { throw cursor.error("the reply has no \"provider\"") }
        self.init(credential: credential, provider: provider, site: site)
    }
}

extension AutoFill.Asking {
    /// Reads an `Asking` reply without Foundation.
    package init(json: RawJSON) throws {
        var provider: String?
        var asking: String?
        var cursor = JSONCursor(json.bytes)
        try cursor.forEachMember { cursor, key in
            switch key {
            case "provider": provider = try cursor.optionalString(key)
            case "asking": asking = try cursor.optionalString(key)
            default: try cursor.skipValue()
            }
        }
        guard let provider, let asking else { throw cursor.error("the reply is not an Asking one") }
        self.init(provider: provider, asking: asking)
    }
}

extension JSONCursor {
    /// The next value when it is a string; `nil` when it is `null`; anything else is an error that
    /// names `member`.
    fileprivate mutating func optionalString(_ member: String) throws(JSONSyntaxError) -> String? {
        switch try peekKind() {
        case .string: return try string()
        case .null:
            try null()
            return nil
        default: throw error("\"\(member)\" must be a string")
        }
    }
}
