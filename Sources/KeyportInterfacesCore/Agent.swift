/// Parameter types and names of `org.keyport.Agent` (Interfaces/org.keyport.Agent.varlink).
package enum Agent {
    /// The methods' full names.
    package enum Method {
        package static let serve = "org.keyport.Agent.Serve"
        package static let answer = "org.keyport.Agent.Answer"
    }

    /// The errors' names.
    package enum Error {
        package static let notAnAgent = "org.keyport.Agent.NotAnAgent"
        package static let agentBusy = "org.keyport.Agent.AgentBusy"
        package static let scriptedNotAllowed = "org.keyport.Agent.ScriptedNotAllowed"
        package static let replaced = "org.keyport.Agent.Replaced"
        package static let notTheAgent = "org.keyport.Agent.NotTheAgent"
        package static let unknownRequest = "org.keyport.Agent.UnknownRequest"
        package static let invalidChoice = "org.keyport.Agent.InvalidChoice"
    }

    /// An app the person can choose.
    package struct Choice: Codable, Hashable, Sendable {
        package var id: String
        package var name: String

        package init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// Something to ask the person.
    package struct Request: Codable, Hashable, Sendable {
        package var id: String
        /// `export`, `choose`, `confirm`, `secret` or `notice` (``Kind``).
        package var kind: String
        package var app: String
        package var message: String
        package var choices: [Choice]

        package init(id: String, kind: Kind, app: String, message: String, choices: [Choice] = []) {
            self.id = id
            self.kind = kind.rawValue
            self.app = app
            self.message = message
            self.choices = choices
        }
    }

    /// The kinds of request.
    package enum Kind: String, Sendable {
        case export, choose, confirm, secret, notice
    }

    /// `Answer(confirm)`'s choice for yes.
    package static let yes = "yes"

    /// `Serve`'s input.
    package struct ServeIn: Codable, Hashable, Sendable {
        package var scripted: Bool?
        package var replace: Bool?

        package init(scripted: Bool, replace: Bool) {
            self.scripted = scripted ? true : nil
            self.replace = replace ? true : nil
        }
    }

    /// `Serve`'s replies: the first with nothing set (the role is the caller's), then one member
    /// each.
    package struct Served: Codable, Hashable, Sendable {
        package var request: Request?
        package var withdrawn: String?
        package var alert: String?

        package init(request: Request? = nil, withdrawn: String? = nil, alert: String? = nil) {
            self.request = request
            self.withdrawn = withdrawn
            self.alert = alert
        }
    }

    /// `Answer`'s input.
    package struct Answer: Codable, Hashable, Sendable {
        package var request: String
        package var choice: String?
        package var secret: String?

        package init(request: String, choice: String?, secret: String? = nil) {
            self.request = request
            self.choice = choice
            self.secret = secret
        }
    }
}
