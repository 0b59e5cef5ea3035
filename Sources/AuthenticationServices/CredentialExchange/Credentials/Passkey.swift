import CredentialExchangeFormat
import Foundation

extension ASImportableCredential {
    /// A WebAuthn credential (passkey) with its private key.
    ///
    /// In CXF JSON `credentialID` is `credentialId`, `relyingPartyIdentifier` is `rpId` and `userName`
    /// is `username`. Exporters leave out passkeys whose signature counter is not zero; an importer
    /// starts the counter at zero.
    public struct Passkey: Codable, Hashable, Sendable {
        /// The WebAuthn credential ID.
        public var credentialID: Data
        /// The relying party's identifier, usually its domain.
        public var relyingPartyIdentifier: String
        /// The user name the relying party knows the account by.
        public var userName: String
        /// The user's name as the relying party shows it.
        public var userDisplayName: String
        /// The relying party's identifier for the user (the WebAuthn user handle).
        public var userHandle: Data
        /// The private key, PKCS#8 DER.
        public var key: Data
        /// The passkey's FIDO2 extension data. (Apple: 26.4.)
        public var fido2Extensions: ASImportableFIDO2Extensions?

        /// Creates a passkey (the initialiser of iOS and macOS 26.0).
        public init(
            credentialID: Data,
            relyingPartyIdentifier: String,
            userName: String,
            userDisplayName: String,
            userHandle: Data,
            key: Data
        ) {
            self.init(
                credentialID: credentialID,
                relyingPartyIdentifier: relyingPartyIdentifier,
                userName: userName,
                userDisplayName: userDisplayName,
                userHandle: userHandle,
                key: key,
                fido2Extensions: nil
            )
        }

        /// Creates a passkey with FIDO2 extension data (the initialiser of iOS and macOS 26.4).
        public init(
            credentialID: Data,
            relyingPartyIdentifier: String,
            userName: String,
            userDisplayName: String,
            userHandle: Data,
            key: Data,
            fido2Extensions: ASImportableFIDO2Extensions?
        ) {
            self.credentialID = credentialID
            self.relyingPartyIdentifier = relyingPartyIdentifier
            self.userName = userName
            self.userDisplayName = userDisplayName
            self.userHandle = userHandle
            self.key = key
            self.fido2Extensions = fido2Extensions
        }
    }
}

extension CXFImporter {
    mutating func passkey(_ passkey: CXF.Passkey) -> ASImportableCredential.Passkey? {
        unknown(passkey.unknownMembers, in: "ASImportableCredential.Passkey")
        let extensions = passkey.fido2Extensions.map { ext in at("fido2Extensions") { $0.fido2Extensions(ext) } }
        return ASImportableCredential.Passkey(
            credentialID: passkey.credentialId,
            relyingPartyIdentifier: passkey.rpId,
            userName: passkey.username,
            userDisplayName: passkey.userDisplayName,
            userHandle: passkey.userHandle,
            key: passkey.key,
            fido2Extensions: extensions
        )
    }
}

// MARK: - AS → CXF

extension CXF.Passkey {
    /// A large blob's negative `uncompressedSize`, which no authenticator writes, becomes 0.
    init(_ c: ASImportableCredential.Passkey) {
        self.init(
            credentialId: c.credentialID,
            rpId: c.relyingPartyIdentifier,
            username: c.userName,
            userDisplayName: c.userDisplayName,
            userHandle: c.userHandle,
            key: c.key,
            fido2Extensions: c.fido2Extensions.map { CXF.FIDO2Extensions($0) }
        )
    }
}
