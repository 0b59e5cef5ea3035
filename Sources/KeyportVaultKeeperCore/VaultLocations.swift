import KeyportSystemCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where Keyport Vault keeps its default vault and where a vault's keeper listens: the vault's
/// own places, beside keyportd's in Keyport's runtime directory but none of keyportd's business.
///
/// - The default vault: `$XDG_DATA_HOME/keyport/vault.keyport`.
/// - Its keeper's socket: `$KEYPORT_VAULT_SOCKET` when set (an absolute path), else `vault.sock` in
///   Keyport's runtime directory (``BaseDirectories/keyportRuntime``). ``forVault(_:)`` gives
///   another vault's.
package struct VaultLocations: Hashable, Sendable {
    /// Where the keeper of ``vault`` listens.
    package var keeperSocket: String
    /// The vault `keyport vault` opens when none is named.
    package var defaultVault: String
    /// The vault whose keeper listens at ``keeperSocket``: ``defaultVault`` unless
    /// ``forVault(_:)`` chose another. Its keeper serves that file alone, and its clients check
    /// that it does.
    package var vault: String

    /// The variable that names the default vault's keeper's socket.
    package static let socketVariable = "KEYPORT_VAULT_SOCKET"

    /// A location `environment` gives that cannot be used, and why.
    package struct Invalid: Error, Hashable, Sendable, CustomStringConvertible {
        package var description: String
    }

    /// The locations `environment` gives.
    ///
    /// - Throws: ``Invalid`` when `KEYPORT_VAULT_SOCKET` is set but not an absolute path short
    ///   enough for a Unix-domain socket.
    package init(environment: [String: String]) throws(Invalid) {
        let base = BaseDirectories(environment: environment)
        if let chosen = environment[Self.socketVariable], !chosen.isEmpty {
            guard chosen.hasPrefix("/"), chosen.utf8.count <= UnixSocketPath.maximumLength else {
                throw Invalid(
                    description:
                        "\(Self.socketVariable) must be an absolute path of at most \(UnixSocketPath.maximumLength) bytes, not '\(chosen)'"
                )
            }
            keeperSocket = FilePaths.standardized(chosen)
        } else {
            keeperSocket = FilePaths.join(base.keyportRuntime, "vault.sock")
        }
        defaultVault = FilePaths.join(base.dataHome, "keyport/vault.keyport")
        vault = defaultVault
    }

    /// These locations with ``keeperSocket`` the socket of the keeper of the vault at `vault` (an
    /// absolute path): each vault has a keeper of its own, so two vaults can be open at once (and
    /// exchange credentials). The default vault's is ``keeperSocket``; another's, beside it, is
    /// named by its file's device and inode (`vault-DEV-INODE.sock`), so every path to one file
    /// finds the same keeper. A vault that does not exist yet has the default's socket, whose
    /// keeper serves another file: its clients refuse it.
    package func forVault(_ vault: String) -> VaultLocations {
        guard vault != defaultVault else { return self }
        var chosen = self
        chosen.vault = vault
        var status = stat()
        guard stat(vault, &status) == 0 else { return chosen }
        chosen.keeperSocket = FilePaths.join(
            FilePaths.parent(keeperSocket),
            "vault-\(UInt64(status.st_dev))-\(UInt64(status.st_ino)).sock"
        )
        return chosen
    }
}
