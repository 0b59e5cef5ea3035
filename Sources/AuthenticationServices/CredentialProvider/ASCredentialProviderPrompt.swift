import Foundation
import KeyportInterfaces
import Varlink

/// What a provider asks the person, through keyportd's agent (Linux addition): the stand-in for
/// the view a provider shows on Apple platforms to unlock, or to let the person pick one of
/// several. Use it in ``ASCredentialProviderViewController/prepareInterfaceToProvideCredential(for:)``
/// and the list methods — never in
/// ``ASCredentialProviderViewController/provideCredentialWithoutUserInteraction(for:)``, which must
/// not involve the person.
///
/// The agent shows the provider's name from its manifest (keyportd recognises the provider by its
/// process, as for the identity store), so a prompt cannot claim to come from another app.
public enum ASCredentialProviderPrompt {
    /// A choice the person can make.
    public struct Choice: Hashable, Sendable {
        /// What the answer names.
        public var id: String
        /// What the person sees.
        public var name: String

        /// A choice named `name`, answered as `id`.
        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// Asks the person to confirm `message`; whether they did.
    ///
    /// - Throws: ``ASExtensionError`` (``ASExtensionError/Code-swift.enum/failed``) when nobody can
    ///   be asked: keyportd is not running, no agent is, or the caller is not a registered provider.
    public static func confirm(_ message: String) async throws -> Bool {
        try await call(Prompt.Confirm.self, .init(message: message)).confirmed
    }

    /// Asks the person to choose one of `choices`; the chosen id, or `nil` when they declined.
    ///
    /// - Throws: ``ASExtensionError`` as ``confirm(_:)`` does.
    public static func choose(_ message: String, from choices: [Choice]) async throws -> String? {
        let input = Prompt.Choose.Parameters(
            message: message,
            choices: choices.map { Prompt.Choice(id: $0.id, name: $0.name) }
        )
        return try await call(Prompt.Choose.self, input).choice
    }

    /// Asks the person to type a secret (a passphrase); it, or `nil` when they declined.
    ///
    /// - Throws: ``ASExtensionError`` as ``confirm(_:)`` does.
    public static func secret(_ message: String) async throws -> String? {
        try await call(Prompt.Secret.self, .init(message: message)).secret
    }

    /// Tells the person `message`, such as what an import brought; returns once it was shown.
    ///
    /// - Throws: ``ASExtensionError`` as ``confirm(_:)`` does.
    public static func notify(_ message: String) async throws {
        _ = try await call(Prompt.Notify.self, .init(message: message))
    }

    private static func call<Method: VarlinkMethodType>(
        _ method: Method.Type,
        _ input: Method.Parameters
    ) async throws -> Method.Reply {
        do {
            return try await DaemonClient.withConnection(environment: ProcessInfo.processInfo.environment) {
                connection in
                try await connection.call(method, input)
            }
        } catch let error as VarlinkError {
            throw ASExtensionError(.failed, reason: error.sentence)
        } catch {
            throw ASExtensionError(.failed, reason: "\(error)")
        }
    }
}
