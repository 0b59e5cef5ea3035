import Foundation

/// A COSE algorithm identifier (IANA's registry), as WebAuthn's `pubKeyCredParams` name them.
public struct ASCOSEAlgorithmIdentifier: RawRepresentable, Hashable, Sendable {
    /// The registry's number.
    public let rawValue: Int

    /// The algorithm numbered `rawValue`.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The algorithm numbered `rawValue`.
    public init(_ rawValue: Int) { self.rawValue = rawValue }

    /// ECDSA on P-256 with SHA-256 (-7).
    public static let ES256 = ASCOSEAlgorithmIdentifier(-7)
}

/// A COSE elliptic curve identifier.
public struct ASCOSEEllipticCurveIdentifier: RawRepresentable, Hashable, Sendable {
    /// The registry's number.
    public let rawValue: Int

    /// The curve numbered `rawValue`.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The curve numbered `rawValue`.
    public init(_ rawValue: Int) { self.rawValue = rawValue }

    /// NIST P-256 (1).
    public static let P256 = ASCOSEEllipticCurveIdentifier(1)
}

/// Whether a relying party wants the person verified (WebAuthn's `userVerification`), with
/// WebAuthn's strings as raw values.
public struct ASAuthorizationPublicKeyCredentialUserVerificationPreference: RawRepresentable, Hashable, Sendable {
    /// WebAuthn's string.
    public let rawValue: String

    /// The preference named `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The preference named `rawValue`.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// Verify the person if the authenticator can.
    public static let preferred = Self("preferred")
    /// The person must be verified.
    public static let required = Self("required")
    /// Verification is not wanted.
    public static let discouraged = Self("discouraged")
}

/// What attestation a relying party asks for (WebAuthn's `attestation`).
public struct ASAuthorizationPublicKeyCredentialAttestationKind: RawRepresentable, Hashable, Sendable {
    /// WebAuthn's string.
    public let rawValue: String

    /// The kind named `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The kind named `rawValue`.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// No attestation (what Keyport's authenticators give).
    public static let none = Self("none")
    /// The authenticator's own attestation.
    public static let direct = Self("direct")
    /// An anonymized attestation.
    public static let indirect = Self("indirect")
    /// An attestation that identifies the device, for managed deployments.
    public static let enterprise = Self("enterprise")
}

/// Whether a relying party wants a discoverable credential (WebAuthn's `residentKey`).
public struct ASAuthorizationPublicKeyCredentialResidentKeyPreference: RawRepresentable, Hashable, Sendable {
    /// WebAuthn's string.
    public let rawValue: String

    /// The preference named `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The preference named `rawValue`.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// A server-side credential is wanted.
    public static let discouraged = Self("discouraged")
    /// A discoverable credential if possible.
    public static let preferred = Self("preferred")
    /// A discoverable credential is required.
    public static let required = Self("required")
}

/// How the authenticator that answered is attached: Keyport's providers are `platform`.
public enum ASAuthorizationPublicKeyCredentialAttachment: Int, Sendable {
    /// Part of the platform (a passkey provider).
    case platform = 0
    /// A roaming authenticator (a security key, another device).
    case crossPlatform = 1
}

/// A credential a relying party names (WebAuthn's `PublicKeyCredentialDescriptor`).
public protocol ASAuthorizationPublicKeyCredentialDescriptor: NSObjectProtocol, NSCopying {
    /// The credential's id.
    var credentialID: Data { get set }
}

/// A platform passkey a relying party names: in `allowCredentials` or `excludeCredentials`.
open class ASAuthorizationPlatformPublicKeyCredentialDescriptor: NSObject, ASAuthorizationPublicKeyCredentialDescriptor,
    @unchecked Sendable
{
    /// The credential's id.
    public var credentialID: Data

    /// The credential with id `credentialID`.
    public init(credentialID: Data) {
        self.credentialID = credentialID
    }

    /// A copy with the same id.
    public func copy(with zone: NSZone? = nil) -> Any {
        ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: credentialID)
    }

    /// Equal when the ids are.
    open override func isEqual(_ object: Any?) -> Bool {
        (object as? ASAuthorizationPlatformPublicKeyCredentialDescriptor)?.credentialID == credentialID
    }

    /// The id's hash.
    open override var hash: Int { credentialID.hashValue }
}
