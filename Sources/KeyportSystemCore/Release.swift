/// Keyport's release: the one place its version is written. keyportd's `GetInfo`, `keyport
/// --version` and the Debian package (scripts/package reads this line) all say it.
package enum KeyportRelease {
    /// The version, as Semantic Versioning writes it; a release is tagged with it.
    package static let version = "0.1.0"
}
