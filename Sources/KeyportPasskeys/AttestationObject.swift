import KeyportEncoding

/// A registration's attestation object (WebAuthn §6.5): `{"fmt", "attStmt", "authData"}` in CBOR.
///
/// Keyport's authenticators attest with `none`, as synced passkeys do (Apple's, Google's,
/// Bitwarden's): a statement would name the model, which for a password manager's passkeys says
/// nothing a relying party can check. Objects other providers make are read in any format, and
/// their authenticator data kept as the bytes that came, since an attestation signs those.
package struct AttestationObject: Hashable, Sendable {
    /// The attestation statement's format (`none`, `packed`, …).
    package var format: String
    /// The statement; an empty map for `none`.
    package var statement: CBOR
    /// The authenticator data, as the authenticator wrote it.
    package var authenticatorDataBytes: [UInt8]
    /// The same, read.
    package var authenticatorData: AuthenticatorData

    /// A `none` attestation of `authenticatorData`.
    package init(none authenticatorData: AuthenticatorData) {
        format = "none"
        statement = .map([])
        authenticatorDataBytes = authenticatorData.bytes
        self.authenticatorData = authenticatorData
    }

    /// The object's canonical CBOR.
    package var bytes: [UInt8] {
        CBOR.map([
            .init(.text("fmt"), .text(format)), .init(.text("attStmt"), statement),
            .init(.text("authData"), .bytes(authenticatorDataBytes)),
        ]).encoded
    }

    /// Reads an attestation object: three members of their kinds, nothing after, the
    /// authenticator data with attested credential data; `none` with an empty statement.
    package init(_ bytes: [UInt8]) throws(PasskeyDataError) {
        func malformed(_ what: String) -> PasskeyDataError {
            PasskeyDataError(.malformed, "the attestation object \(what)")
        }
        let item: CBOR
        do {
            item = try CBORReader.read(bytes)
        } catch {
            throw malformed("is not CBOR: \(error)")
        }
        guard item.entries != nil else { throw malformed("is \(item.kindDescription), not a map") }
        guard let format = item["fmt"]?.text else { throw malformed("has no \"fmt\" text") }
        guard let statement = item["attStmt"], statement.entries != nil else {
            throw malformed("has no \"attStmt\" map")
        }
        guard let data = item["authData"]?.bytes else { throw malformed("has no \"authData\" byte string") }
        if format == "none" && statement != CBOR.map([]) {
            throw malformed("of format \"none\" has a statement that is not empty")
        }
        let authenticatorData = try AuthenticatorData(data)
        guard authenticatorData.attestedCredential != nil else {
            throw malformed("has authenticator data without the new credential (AT is not set)")
        }
        self.format = format
        self.statement = statement
        authenticatorDataBytes = data
        self.authenticatorData = authenticatorData
    }
}
