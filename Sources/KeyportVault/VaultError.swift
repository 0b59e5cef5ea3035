import KeyportCrypto
import KeyportErrors

/// Why the vault did not do what was asked: a stable code and a sentence that says what was wrong
/// and where. A call that throws has changed nothing.
package struct VaultError: RecordedError {
    /// A stable name for why (`wrong-passphrase`, `tampered`), for scripts and tests.
    package typealias Code = ErrorCodeOf<VaultError>

    package var record: ErrorRecord<Code>

    package init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
    }
}

extension ErrorCodeOf<VaultError> {
    /// The passphrase does not open the vault's key (or the key's record was changed).
    package static let wrongPassphrase = Self(rawValue: "wrong-passphrase")
    /// The file is not a Keyport vault (another SQLite file, or not SQLite at all).
    package static let notAVault = Self(rawValue: "not-a-vault")
    /// A vault of a format this Keyport does not read.
    package static let unsupportedFormat = Self(rawValue: "unsupported-format")
    /// The file is damaged: SQLite cannot read it, or a record is not what the format says.
    package static let corrupt = Self(rawValue: "corrupt")
    /// A sealed record fails its check: edited, swapped, replayed, removed or added behind
    /// the vault's back.
    package static let tampered = Self(rawValue: "tampered")
    /// Another process is writing to the vault.
    package static let busy = Self(rawValue: "busy")
    /// A vault, or an item with this id, is there already.
    package static let exists = Self(rawValue: "exists")
    /// No item with this id.
    package static let notFound = Self(rawValue: "not-found")
    /// Key-derivation parameters outside what Keyport accepts (they come from a file, so an
    /// attacker may have chosen them).
    package static let unsafeParameters = Self(rawValue: "unsafe-parameters")
    /// The file cannot be created, opened, read or written.
    package static let io = Self(rawValue: "io")
    /// An item the vault cannot keep (no id, say).
    package static let invalidItem = Self(rawValue: "invalid-item")
    /// The caller gave up on a change before it was committed (an import whose client went
    /// away): nothing was written.
    package static let cancelled = Self(rawValue: "cancelled")
}

extension VaultError {
    /// Runs `body`; key-derivation parameters it refuses are `unsafeParameters`.
    static func unsafe<T>(_ body: () throws(KDFError) -> T) throws(VaultError) -> T {
        do {
            return try body()
        } catch {
            throw VaultError(.unsafeParameters, error.message)
        }
    }
}
