import KeyportDomainsCore
import KeyportEncoding
import VarlinkCore

/// One AutoFill request from the command line, on a blocking connection: what `keyport otp`,
/// `keyport password` and `keyport git-credential` share, and what the `keyport` front program
/// answers by itself, without loading Foundation, so that a code is printed within milliseconds.
///
/// The request and its replies are the types generated from org.keyport.AutoFill's definition,
/// which read and write their own JSON without Foundation.
package enum AutoFillClient {
    /// The credential that came, who gave it, and for which site it was saved.
    package struct Answer: Hashable, Sendable {
        package var credential: AutoFill.Credential
        /// The id of the provider that answered.
        package var provider: String
        /// Where the answering identity was saved for (`https://github.com`); `nil` for a pick
        /// from a provider's own list.
        package var site: String?

        package init(credential: AutoFill.Credential, provider: String, site: String?) {
            self.credential = credential
            self.provider = provider
            self.site = site
        }
    }

    /// Why no credential came, as the command line says it: the message and the exit status
    /// (1 none, declined or failed; 2 keyportd not reachable).
    package struct RequestError: Error, Hashable, Sendable, CustomStringConvertible {
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
    /// a provider's list; `identity`, when given, is the one to ask for (as ListIdentities named
    /// it). `interactive: false`: the provider may not ask the person. `asking`
    /// hears at once each time the provider asks the person through the agent (what to tell
    /// them, naming the provider), so the command does not wait in silence.
    package static func request(
        _ kind: AutoFill.CredentialType,
        for service: String,
        user: String? = nil,
        fromList: Bool = false,
        interactive: Bool? = nil,
        identity: AutoFill.IdentityReference? = nil,
        environment: [String: String],
        asking: (String) -> Void
    ) throws(RequestError) -> Answer {
        // Read here as keyportd will read it, so a site that names no service is said before
        // keyportd is asked (with the same words).
        if case .failure(let error) = ServiceOrigin.parse(service) {
            throw RequestError(error.description, exitCode: 2)
        }
        let identifier = AutoFill.ServiceIdentifier(
            identifier: service,
            type: service.contains("://") ? .URL : .domain
        )
        let method: String
        let parameters: RawJSON
        if fromList {
            method = AutoFill.RequestFromList.name
            parameters = RawJSON(
                encoding: AutoFill.RequestFromList.Parameters(type: kind, serviceIdentifiers: [identifier])
            )
        } else {
            method = AutoFill.RequestCredential.name
            parameters = RawJSON(
                encoding: AutoFill.RequestCredential.Parameters(
                    type: kind,
                    serviceIdentifiers: [identifier],
                    user: user,
                    interactive: interactive,
                    identity: identity
                )
            )
        }
        let last: RawJSON
        do {
            last = try DaemonClient.connect(environment: environment).call(method, parameters) { interim in
                if let message = try? interim.decode(AutoFill.RequestCredential.Reply.self).asking { asking(message) }
            }
        } catch let error as VarlinkError {
            throw RequestError(error.sentence, exitCode: 1, name: error.name)
        } catch let error as DaemonError {
            throw RequestError(error.description, exitCode: 2)
        } catch {
            throw RequestError("keyportd: \(error)", exitCode: 2)
        }
        // RequestFromList's reply is RequestCredential's without `site`: one type reads both.
        let reply: AutoFill.RequestCredential.Reply
        do {
            reply = try last.decode(AutoFill.RequestCredential.Reply.self)
        } catch {
            throw RequestError(
                "keyportd's reply is not what this keyport understands (\(error)); keyport and keyportd may come from different builds",
                exitCode: 2
            )
        }
        guard let credential = reply.credential else {
            throw RequestError("\(reply.provider) answered without a credential", exitCode: 1)
        }
        return Answer(credential: credential, provider: reply.provider, site: reply.site)
    }

    /// What `keyport password --json` prints: `{"password", "provider", "site", "user"}`, keys
    /// sorted; `site` and `user` left out when the answer has none (a pick from a provider's
    /// list names no site).
    package static func passwordJSON(_ answer: Answer, password: String) -> String {
        var members: [(name: String, value: [UInt8])] = [
            ("password", JSONString.quoted(password)), ("provider", JSONString.quoted(answer.provider)),
        ]
        if let site = answer.site { members.append(("site", JSONString.quoted(site))) }
        if let user = answer.credential.user { members.append(("user", JSONString.quoted(user))) }
        return JSONText.object(members).description
    }

    /// Which account answered and where it was saved, for standard error: `the password of alice
    /// saved for https://github.com (org.example.passwords)`. The person sees what went out, and a
    /// wider fit they chose is named.
    package static func answered(_ kind: AutoFill.CredentialType, _ answer: Answer) -> String {
        let what = "the \(kind.noun)"
        let user = answer.credential.user.map { $0.isEmpty ? "" : " of \($0)" } ?? ""
        let site = answer.site.map { " saved for \($0)" } ?? ""
        return "\(what)\(user)\(site) (\(answer.provider))"
    }

    /// The secret `answer` carries for `kind`: the code, or the password.
    package static func secret(_ kind: AutoFill.CredentialType, of answer: Answer) throws(RequestError) -> String {
        switch kind {
        case .oneTimeCode:
            guard let code = answer.credential.code else {
                throw RequestError("\(answer.provider) answered without a code", exitCode: 1)
            }
            return code
        case .password:
            guard let password = answer.credential.password else {
                throw RequestError("\(answer.provider) answered without a password", exitCode: 1)
            }
            return password
        case .passkey:
            // A passkey signs for a relying party through org.keyport.WebAuthn; AutoFill's
            // requests never carry one, and keyportd refuses to ask for one that way.
            throw RequestError("a passkey is used through WebAuthn, not printed", exitCode: 2)
        }
    }
}
