import Crypto
import KeyportEncoding

/// WebAuthn's authenticator data (§6.1): what an authenticator signs, beside the client data's
/// hash.
///
/// `rpIdHash[32] ‖ flags[1] ‖ signCount[4, big-endian]`, then, with ``Flags/attestedCredentialData``,
/// `aaguid[16] ‖ credentialIdLength[2] ‖ credentialId ‖ COSE public key`, then, with
/// ``Flags/extensionData``, a CBOR map of extension outputs.
package struct AuthenticatorData: Hashable, Sendable {
    /// The flags byte.
    package struct Flags: OptionSet, Hashable, Sendable {
        /// The byte.
        package let rawValue: UInt8
        /// The flags of byte `rawValue`.
        package init(rawValue: UInt8) { self.rawValue = rawValue }

        /// UP, bit 0: the person was present (a click, a touch).
        package static let userPresent = Flags(rawValue: 0x01)
        /// UV, bit 2: the person proved who they are, for this request.
        package static let userVerified = Flags(rawValue: 0x04)
        /// BE, bit 3: the credential may be backed up (a synced passkey).
        package static let backupEligible = Flags(rawValue: 0x08)
        /// BS, bit 4: the credential is backed up now.
        package static let backedUp = Flags(rawValue: 0x10)
        /// AT, bit 6: attested credential data follows.
        package static let attestedCredentialData = Flags(rawValue: 0x40)
        /// ED, bit 7: an extensions map follows.
        package static let extensionData = Flags(rawValue: 0x80)
    }

    /// A new credential, in a registration's authenticator data.
    package struct AttestedCredential: Hashable, Sendable {
        /// The authenticator's model (16 bytes; all zero for "none").
        package var aaguid: [UInt8]
        /// The credential's id (1 to 1023 bytes).
        package var credentialID: [UInt8]
        /// Its public key.
        package var publicKey: COSEKey

        /// The credential `credentialID` with `publicKey`, made by an authenticator of model `aaguid`.
        package init(aaguid: [UInt8], credentialID: [UInt8], publicKey: COSEKey) {
            self.aaguid = aaguid
            self.credentialID = credentialID
            self.publicKey = publicKey
        }
    }

    /// SHA-256 of the relying party id.
    package var rpIDHash: [UInt8]
    /// The flags; AT and ED say whether ``attestedCredential`` and ``extensions`` are there.
    package var flags: Flags
    /// The signature counter; 0 for a synced passkey, whose counter could not move on every device.
    package var signCount: UInt32
    /// The new credential, in a registration.
    package var attestedCredential: AttestedCredential?
    /// The extension outputs, a CBOR map.
    package var extensions: CBOR?

    /// Authenticator data for the relying party `rpID`, with AT and ED set as its parts are there.
    package init(
        rpID: String,
        flags: Flags,
        signCount: UInt32 = 0,
        attestedCredential: AttestedCredential? = nil,
        extensions: CBOR? = nil
    ) {
        rpIDHash = Array(SHA256.hash(data: Array(rpID.utf8)))
        self.flags = flags.subtracting([.attestedCredentialData, .extensionData])
        if attestedCredential != nil { self.flags.insert(.attestedCredentialData) }
        if extensions != nil { self.flags.insert(.extensionData) }
        self.signCount = signCount
        self.attestedCredential = attestedCredential
        self.extensions = extensions
    }

    /// The bytes: AT and ED set exactly when their parts are there, whatever ``flags`` says.
    package var bytes: [UInt8] {
        var flags = self.flags.subtracting([.attestedCredentialData, .extensionData])
        if attestedCredential != nil { flags.insert(.attestedCredentialData) }
        if extensions != nil { flags.insert(.extensionData) }
        var out = rpIDHash
        out.append(flags.rawValue)
        out += [
            UInt8(signCount >> 24), UInt8(truncatingIfNeeded: signCount >> 16),
            UInt8(truncatingIfNeeded: signCount >> 8), UInt8(truncatingIfNeeded: signCount),
        ]
        if let credential = attestedCredential {
            out += credential.aaguid
            out += [
                UInt8(credential.credentialID.count >> 8), UInt8(truncatingIfNeeded: credential.credentialID.count),
            ]
            out += credential.credentialID
            out += credential.publicKey.encoded
        }
        if let extensions { out += extensions.encoded }
        return out
    }

    /// Reads authenticator data, refusing what WebAuthn's rules forbid: fewer than 37 bytes, BS
    /// without BE, a flag whose part is missing or a part whose flag is, bytes left over.
    package init(_ bytes: [UInt8]) throws(PasskeyDataError) {
        func malformed(_ what: String) -> PasskeyDataError {
            PasskeyDataError(.malformed, "the authenticator data \(what)")
        }
        guard bytes.count >= 37 else { throw malformed("is \(bytes.count) bytes, fewer than the 37 it always has") }
        rpIDHash = Array(bytes[0..<32])
        flags = Flags(rawValue: bytes[32])
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        if flags.contains(.backedUp) && !flags.contains(.backupEligible) {
            throw malformed("says backed up (BS) but not backup eligible (BE)")
        }
        var offset = 37
        if flags.contains(.attestedCredentialData) {
            guard bytes.count >= offset + 18 else {
                throw malformed("ends inside its attested credential data (AT is set)")
            }
            let aaguid = Array(bytes[offset..<offset + 16])
            let length = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard length >= 1, length <= 1023 else {
                throw malformed("has a credential id of \(length) bytes; 1 to 1023 are allowed")
            }
            guard bytes.count >= offset + length else { throw malformed("ends inside its credential id") }
            let credentialID = Array(bytes[offset..<offset + length])
            offset += length
            var reader = CBORReader(Array(bytes[offset...]))
            let key: COSEKey
            do {
                key = try COSEKey(try reader.next())
            } catch let failure as CBORReadFailure {
                throw malformed(
                    "has a credential public key that is not CBOR: \(failure.message) (at byte \(offset + failure.offset))"
                )
            } catch let error as PasskeyDataError {
                throw error
            } catch {
                throw malformed("has an unreadable credential public key")
            }
            offset += reader.offset
            attestedCredential = AttestedCredential(aaguid: aaguid, credentialID: credentialID, publicKey: key)
        } else {
            attestedCredential = nil
        }
        if flags.contains(.extensionData) {
            var reader = CBORReader(Array(bytes[offset...]))
            let map: CBOR
            do {
                map = try reader.next()
            } catch {
                throw malformed("has extensions that are not CBOR: \(error.message) (at byte \(offset + error.offset))")
            }
            guard map.entries != nil else {
                throw malformed("has extensions that are \(map.kindDescription), not a map")
            }
            offset += reader.offset
            extensions = map
        } else {
            extensions = nil
        }
        guard offset == bytes.count else {
            throw malformed("has \(bytes.count - offset) bytes after its last part (are AT and ED set right?)")
        }
    }

    /// Whether the data is for the relying party `rpID`.
    package func isFor(rpID: String) -> Bool {
        rpIDHash == Array(SHA256.hash(data: Array(rpID.utf8)))
    }
}
