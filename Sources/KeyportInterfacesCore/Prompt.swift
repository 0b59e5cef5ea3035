/// Parameter types of `org.keyport.Prompt` (Interfaces/org.keyport.Prompt.varlink).
package enum Prompt {
    package struct MessageIn: Codable, Hashable, Sendable {
        package var message: String

        package init(message: String) { self.message = message }
    }

    package struct ChooseIn: Codable, Hashable, Sendable {
        package var message: String
        package var choices: [Agent.Choice]

        package init(message: String, choices: [Agent.Choice]) {
            self.message = message
            self.choices = choices
        }
    }

    package struct ConfirmOut: Codable, Hashable, Sendable {
        package var confirmed: Bool

        package init(confirmed: Bool) { self.confirmed = confirmed }
    }

    package struct ChooseOut: Codable, Hashable, Sendable {
        package var choice: String?

        package init(choice: String?) { self.choice = choice }
    }

    package struct SecretOut: Codable, Hashable, Sendable {
        package var secret: String?

        package init(secret: String?) { self.secret = secret }
    }

    package enum Error {
        package static let notAProvider = "org.keyport.Prompt.NotAProvider"
        package static let noAgent = "org.keyport.Prompt.NoAgent"
        package static let shuttingDown = "org.keyport.Prompt.ShuttingDown"
    }
}
