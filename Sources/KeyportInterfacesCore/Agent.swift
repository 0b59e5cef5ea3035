// What Interfaces/org.keyport.Agent.varlink leaves to its readers: the names its strings take.
extension Agent {
    /// The kinds of request (`Request.kind`). The definition keeps the kind a string, so that an
    /// agent can show a kind it does not know as a question to decline.
    package enum Kind: String, Sendable {
        case export, choose, confirm, secret, notice
    }

    /// `Answer`'s choice for yes, to a `confirm` request.
    package static let yes = "yes"
}

extension Agent.Request {
    /// A request of a known kind.
    package init(id: String, kind: Agent.Kind, app: String, message: String, choices: [Agent.Choice] = []) {
        self.init(id: id, kind: kind.rawValue, app: app, message: message, choices: choices)
    }
}
