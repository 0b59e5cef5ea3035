import Foundation
import Varlink

/// keyportd's interfaces, read from their definitions (`Interfaces/*.varlink`, shipped with the
/// module). The files are the protocol's documentation; docs/protocol.md explains them.
package enum KeyportInterfaces {
    /// `org.keyport.Providers`: registered apps and Settings.
    package static let providers = load("org.keyport.Providers")

    /// `org.keyport.Exchange`: credential exchange between apps.
    package static let exchange = load("org.keyport.Exchange")

    /// `org.keyport.Agent`: the system's user interface.
    package static let agent = load("org.keyport.Agent")

    /// `org.keyport.Callbacks`: custom-scheme sign-in callbacks routed to waiting sessions.
    package static let callbacks = load("org.keyport.Callbacks")

    /// `org.keyport.IdentityStore`: the identities providers offer for AutoFill.
    package static let identityStore = load("org.keyport.IdentityStore")

    /// `org.keyport.Prompt`: providers asking the person through the agent.
    package static let prompt = load("org.keyport.Prompt")

    /// `org.keyport.AutoFill`: clients asking for a credential.
    package static let autoFill = load("org.keyport.AutoFill")

    /// `org.keyport.Vault`: Keyport Vault's agent, which holds a vault unlocked.
    package static let vault = load("org.keyport.Vault")

    /// `org.keyport.CredentialProvider`: what providers serve, for keyportd to call.
    package static let credentialProvider = load("org.keyport.CredentialProvider")

    /// Parses `Interfaces/NAME.varlink`, embedded in the code by the EmbedText plugin (no resource
    /// bundle is read: installed programs run without the build tree). A definition that does not
    /// parse is a bug in the package, not something a user can meet, so it stops the program
    /// with the reason.
    private static func load(_ name: String) -> VarlinkInterface {
        guard let text = EmbeddedText.texts[name] else {
            preconditionFailure("the interface definition \(name).varlink was not embedded in the module")
        }
        do {
            return try VarlinkInterface(text)
        } catch {
            preconditionFailure("\(name).varlink does not parse: \(error)")
        }
    }
}
