import Crypto
import Foundation
import KeyportEncoding

/// An authenticator whose passkeys are keys in a password manager's store: it makes passkeys and
/// signs assertions, given only what WebAuthn gives an authenticator — the
/// relying party id and the client data's hash.
///
/// Its passkeys are synced passkeys: every authenticator data says backup eligible and backed up
/// (BE and BS, which Apple requires of third-party passkeys), and the signature counter stays 0,
/// since a counter one device moved could not move on the others. Registrations are attested
/// with `none` and carry the authenticator's AAGUID.
package struct SoftwareAuthenticator: Sendable {
    /// The AAGUID registrations carry: the password manager's model, as a relying party reads it
    /// (the community's list of passkey providers names each manager's).
    package var aaguid: [UInt8]

    /// An authenticator of model `aaguid` (16 bytes).
    package init(aaguid: [UInt8]) {
        precondition(aaguid.count == 16, "an AAGUID is 16 bytes")
        self.aaguid = aaguid
    }

    /// A new passkey's parts.
    package struct Registration: Sendable {
        /// Its private key; the store keeps it (CXF's passkey `key`, PKCS#8).
        package var privateKey: PasskeyPrivateKey
        /// Its id: 16 random bytes.
        package var credentialID: [UInt8]
        /// The attestation object for the relying party.
        package var attestationObject: AttestationObject
    }

    /// Makes a passkey for `rpID` with the first of `algorithms` it supports (ES256 or EdDSA),
    /// attesting it with `none` over authenticator data for `rpID` with UP, BE, BS and, when the
    /// person proved who they are for this request, UV.
    /// - Throws: `NotSupportedError` when `algorithms` offers neither.
    package func register(
        rpID: String,
        algorithms: [COSEAlgorithm],
        userVerified: Bool,
        extensions: CBOR? = nil
    ) throws(WebAuthnError) -> Registration {
        guard let key = PasskeyPrivateKey(newFor: algorithms) else {
            throw WebAuthnError(
                .notSupported,
                "the relying party offers \(algorithms.map(\.description).joined(separator: ", ")), and this authenticator makes ES256 (-7) and EdDSA (-8) keys"
            )
        }
        let credentialID = Array(SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) })
        let publicKey: COSEKey
        do {
            publicKey = try key.publicKey
        } catch {
            throw WebAuthnError(.unknown, error.message)
        }
        let data = AuthenticatorData(
            rpID: rpID,
            flags: flags(userVerified: userVerified),
            attestedCredential: .init(aaguid: aaguid, credentialID: credentialID, publicKey: publicKey),
            extensions: extensions
        )
        return Registration(
            privateKey: key,
            credentialID: credentialID,
            attestationObject: AttestationObject(none: data)
        )
    }

    /// An assertion's parts.
    package struct Assertion: Sendable {
        /// The authenticator data, as signed.
        package var authenticatorData: [UInt8]
        /// The signature of `authenticatorData ‖ clientDataHash`.
        package var signature: [UInt8]
    }

    /// Signs an assertion for `rpID` with `key`: authenticator data with UP, BE, BS (and UV when
    /// the person proved who they are for this request), counter 0, and the signature of it
    /// followed by `clientDataHash`.
    package func assert(
        with key: PasskeyPrivateKey,
        rpID: String,
        clientDataHash: [UInt8],
        userVerified: Bool,
        extensions: CBOR? = nil
    ) throws(PasskeyDataError) -> Assertion {
        let data = AuthenticatorData(rpID: rpID, flags: flags(userVerified: userVerified), extensions: extensions).bytes
        return Assertion(authenticatorData: data, signature: try key.signature(for: data + clientDataHash))
    }

    private func flags(userVerified: Bool) -> AuthenticatorData.Flags {
        var flags: AuthenticatorData.Flags = [.userPresent, .backupEligible, .backedUp]
        if userVerified { flags.insert(.userVerified) }
        return flags
    }
}
