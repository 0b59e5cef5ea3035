import AuthenticationServices
import Foundation
import KeyportInterfaces
import KeyportSystem
import KeyportVaultKeeper
import Varlink

/// The vault this program acts for (`--vault`, else the default) and where its keeper listens.
struct VaultInstance: Sendable {
    /// The vault file's absolute path.
    var path: String
    /// Keyport's locations, with ``VaultLocations/vaultKeeper`` this vault's keeper.
    var locations: VaultLocations

    init(path: String?, environment: [String: String]) throws {
        let common = try VaultLocations(environment: environment)
        let chosen = path.map { $0.hasPrefix("/") ? $0 : FileManager.default.currentDirectoryPath + "/" + $0 }
        self.path = FilePaths.standardized(chosen ?? common.defaultVault)
        locations = common.forVault(self.path)
        home = environment["HOME"]
    }

    private var home: String?

    /// The vault as the person knows it in a sentence: "Keyport Vault" for the default one, "the
    /// vault ~/work.keyport" for another (its path, the home folder written `~`). The agent shows
    /// the app's registered name above it.
    var name: String {
        if path == FilePaths.standardized(locations.defaultVault) { return "Keyport Vault" }
        if let home, home.count > 1, path.hasPrefix(home + "/") { return "the vault ~" + path.dropFirst(home.count) }
        return "the vault \(path)"
    }

    /// ``name`` at the start of a sentence.
    var nameFirst: String { name.prefix(1).uppercased() + name.dropFirst() }

    /// Makes sure the vault is open in its keeper: starts the keeper when it is not running, and
    /// when the vault is locked asks the person for its passphrase through keyportd's agent,
    /// saying what it is needed `because` of.
    ///
    /// - Throws: ``ASExtensionError`` (``ASExtensionError/Code-swift.enum/userCanceled``) when the
    ///   person declined; the agent's and keyportd's errors.
    /// - Returns: whether the person gave the passphrase for it (false: it was unlocked).
    @discardableResult
    func unlock(because reason: String) async throws -> Bool {
        try await VaultKeeperClient.startIfNeeded(locations)
        let status = try await VaultKeeperClient.call(locations, VaultKeeper.Status.name).decode(
            VaultKeeper.Status.Reply.self
        )
        if status.unlocked && status.path == path { return false }
        try await askPassphrase("Unlock \(name) \(reason)")
        return true
    }

    /// Verifies the person, for WebAuthn's user verification: asks for the passphrase through
    /// keyportd's agent, unlocked or not, and has the keeper open the vault with it (a wrong one
    /// is refused as any unlock is).
    func verifyPerson(because reason: String) async throws {
        try await VaultKeeperClient.startIfNeeded(locations)
        try await askPassphrase("Enter the passphrase of \(name) \(reason)")
    }

    private func askPassphrase(_ question: String) async throws {
        guard let passphrase = try await ASCredentialProviderPrompt.secret(question)
        else { throw ASExtensionError(.userCanceled) }
        _ = try await VaultKeeperClient.call(
            locations,
            VaultKeeper.Unlock.name,
            RawJSON(encoding: VaultKeeper.Unlock.Parameters(path: path, passphrase: passphrase))
        )
    }
}
