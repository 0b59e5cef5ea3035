import VarlinkCore

/// Parameter types of `org.keyport.Vault` (Interfaces/org.keyport.Vault.varlink), which Keyport
/// Vault's agent serves. Items travel as raw CXF item objects, read and written by the CXF codec.
package enum VaultAgent {
    package static let status = "org.keyport.Vault.Status"
    package static let unlock = "org.keyport.Vault.Unlock"
    package static let lock = "org.keyport.Vault.Lock"
    package static let changePassphrase = "org.keyport.Vault.ChangePassphrase"
    package static let add = "org.keyport.Vault.Add"
    package static let update = "org.keyport.Vault.Update"
    package static let remove = "org.keyport.Vault.Remove"
    package static let get = "org.keyport.Vault.Get"
    package static let lookup = "org.keyport.Vault.Lookup"
    package static let list = "org.keyport.Vault.List"
    package static let importItems = "org.keyport.Vault.Import"

    /// The longest message the agent takes. An import is one message, so that it is one
    /// transaction: this is the largest import, as CXF. `keyport vault import` reads files of up
    /// to 256 MB, and their CXF is about as large (larger for an otpauth list), so 512 MB; larger
    /// ones are refused before they are sent. Only this user's processes can connect.
    package static let maximumMessageSize = 512 << 20

    package enum Error {
        package static let locked = "org.keyport.Vault.Locked"
        package static let failed = "org.keyport.Vault.Failed"
        package static let wrongVault = "org.keyport.Vault.WrongVault"
    }

    package struct StatusOut: Codable, Hashable, Sendable {
        package var path: String
        package var unlocked: Bool
        package var locksIn: Int?
        package var items: Int?
        /// Whether AutoFill's identity store has the vault's identities; `nil` before the first
        /// change (or unlock) was sent.
        package var autoFill: AutoFillState?

        package init(path: String, unlocked: Bool, locksIn: Int?, items: Int?, autoFill: AutoFillState? = nil) {
            self.path = path
            self.unlocked = unlocked
            self.locksIn = locksIn
            self.items = items
            self.autoFill = autoFill
        }
    }

    /// What the agent last heard from AutoFill's identity store.
    package struct AutoFillState: Codable, Hashable, Sendable {
        /// Whether the store has every change the vault made.
        package var current: Bool
        /// What the person reads: that it is current, or why not.
        package var message: String

        package init(current: Bool, message: String) {
            self.current = current
            self.message = message
        }
    }

    package struct UnlockIn: Codable, Hashable, Sendable {
        package var path: String
        package var passphrase: String
        package var timeout: Int?

        package init(path: String, passphrase: String, timeout: Int? = nil) {
            self.path = path
            self.passphrase = passphrase
            self.timeout = timeout
        }
    }

    package struct ChangePassphraseIn: Codable, Hashable, Sendable {
        package var passphrase: String
        package var newPassphrase: String

        package init(passphrase: String, newPassphrase: String) {
            self.passphrase = passphrase
            self.newPassphrase = newPassphrase
        }
    }

    package struct ItemsOut: Codable, Hashable, Sendable {
        package var items: Int
        package init(items: Int) { self.items = items }
    }

    package struct RevisionOut: Codable, Hashable, Sendable {
        package var revision: Int
        package init(revision: Int) { self.revision = revision }
    }

    package struct IDIn: Codable, Hashable, Sendable {
        package var id: String
        package init(id: String) { self.id = id }
    }

    package struct LookupIn: Codable, Hashable, Sendable {
        package var service: String
        /// Only the items saved for the same scheme, host and port.
        package var exact: Bool?

        package init(service: String, exact: Bool? = nil) {
            self.service = service
            self.exact = exact
        }
    }

    package struct ImportOut: Codable, Hashable, Sendable {
        package var imported: Int
        package var merged: Int
        package var unchanged: Int

        package init(imported: Int, merged: Int, unchanged: Int) {
            self.imported = imported
            self.merged = merged
            self.unchanged = unchanged
        }
    }
}
