import Foundation
import KeyportEncoding
import KeyportInterfaces

/// A credential a provider offers for AutoFill, as the identity store keeps it: the service, the
/// user (or a one-time code's label), and the provider's own reference to the credential. Never
/// the secret itself.
public protocol ASCredentialIdentity: NSObjectProtocol, Sendable {
    /// Where the credential is used.
    var serviceIdentifier: ASCredentialServiceIdentifier { get }
    /// The account name (a one-time code's label).
    var user: String { get }
    /// The provider's reference to the credential, handed back when the person picks it.
    var recordIdentifier: String? { get }
    /// Among a provider's identities for one service, a higher rank is offered first.
    var rank: Int { get set }
}

extension ASCredentialIdentity {
    /// Whether `other` has the same service, user (a code's label), record and rank: what every
    /// identity class's `isEqual` compares, with the class itself.
    func hasSameValues(as other: some ASCredentialIdentity) -> Bool {
        serviceIdentifier == other.serviceIdentifier && user == other.user
            && recordIdentifier == other.recordIdentifier && rank == other.rank
    }

    /// The hash of the service, user and record, as every identity class's `hash`.
    var valuesHash: Int {
        var hasher = Hasher()
        hasher.combine(serviceIdentifier)
        hasher.combine(user)
        hasher.combine(recordIdentifier)
        return hasher.finalize()
    }
}

/// A password's identity: a service and a user name.
open class ASPasswordCredentialIdentity: NSObject, ASCredentialIdentity, NSCopying, @unchecked Sendable {
    /// Where the password is used.
    public let serviceIdentifier: ASCredentialServiceIdentifier
    /// The account name.
    public let user: String
    /// The provider's reference to the password.
    public let recordIdentifier: String?
    /// Among a provider's identities for one service, a higher rank is offered first.
    public var rank: Int = 0

    /// A password identity for `user` at `serviceIdentifier`.
    public required init(serviceIdentifier: ASCredentialServiceIdentifier, user: String, recordIdentifier: String?) {
        self.serviceIdentifier = serviceIdentifier
        self.user = user
        self.recordIdentifier = recordIdentifier
    }

    /// Apple's class factory: the same as ``init(serviceIdentifier:user:recordIdentifier:)``.
    public class func identity(
        serviceIdentifier: ASCredentialServiceIdentifier,
        user: String,
        recordIdentifier: String?
    ) -> Self {
        Self(serviceIdentifier: serviceIdentifier, user: user, recordIdentifier: recordIdentifier)
    }

    /// A copy with the same values.
    public func copy(with zone: NSZone? = nil) -> Any {
        let copy = ASPasswordCredentialIdentity(
            serviceIdentifier: serviceIdentifier,
            user: user,
            recordIdentifier: recordIdentifier
        )
        copy.rank = rank
        return copy
    }

    /// Equal when the service, user, record and rank are.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? ASPasswordCredentialIdentity else { return false }
        return hasSameValues(as: other)
    }

    /// The hash of the service, user and record.
    open override var hash: Int { valuesHash }
}

/// A one-time code's identity: a service and the label the person sees for it.
open class ASOneTimeCodeCredentialIdentity: NSObject, ASCredentialIdentity, NSCopying, @unchecked Sendable {
    /// Where the code is used.
    public let serviceIdentifier: ASCredentialServiceIdentifier
    /// What the person sees for the code (often the account's name).
    public let label: String
    /// The provider's reference to the code's secret.
    public let recordIdentifier: String?
    /// Among a provider's identities for one service, a higher rank is offered first.
    public var rank: Int = 0

    /// The label, as ``ASCredentialIdentity`` asks for a user.
    public var user: String { label }

    /// A one-time-code identity labelled `label` at `serviceIdentifier`.
    public init(serviceIdentifier: ASCredentialServiceIdentifier, label: String, recordIdentifier: String) {
        self.serviceIdentifier = serviceIdentifier
        self.label = label
        self.recordIdentifier = recordIdentifier
    }

    /// A copy with the same values.
    public func copy(with zone: NSZone? = nil) -> Any {
        let copy = ASOneTimeCodeCredentialIdentity(
            serviceIdentifier: serviceIdentifier,
            label: label,
            recordIdentifier: recordIdentifier ?? ""
        )
        copy.rank = rank
        return copy
    }

    /// Equal when the service, label, record and rank are.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? ASOneTimeCodeCredentialIdentity else { return false }
        return hasSameValues(as: other)
    }

    /// The hash of the service, label and record.
    open override var hash: Int { valuesHash }
}

/// Which kinds of identity a call is about.
public struct ASCredentialIdentityTypes: OptionSet, Hashable, Sendable {
    /// The bits.
    public let rawValue: UInt
    /// Types with these bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Every kind (no bit set, as on Apple platforms).
    public static let all = ASCredentialIdentityTypes([])
    /// Passwords.
    public static let password = ASCredentialIdentityTypes(rawValue: 1)
    /// Passkeys.
    public static let passkey = ASCredentialIdentityTypes(rawValue: 2)
    /// One-time codes.
    public static let oneTimeCode = ASCredentialIdentityTypes(rawValue: 4)
}

/// Between Apple's identity classes and keyportd's (org.keyport.IdentityStore's types, which
/// org.keyport.CredentialProvider's requests carry too).
enum IdentityWire {
    static func service(_ identifier: ASCredentialServiceIdentifier) -> IdentityStore.ServiceIdentifier {
        IdentityStore.ServiceIdentifier(
            identifier: identifier.identifier,
            type: identifier.type == .URL ? .URL : .domain
        )
    }

    static func service(_ identifier: IdentityStore.ServiceIdentifier) -> ASCredentialServiceIdentifier {
        ASCredentialServiceIdentifier(identifier: identifier.identifier, type: identifier.type == .URL ? .URL : .domain)
    }

    /// keyportd's form of an identity; `nil` for a class of identity keyportd does not know.
    static func identity(_ identity: any ASCredentialIdentity) -> IdentityStore.CredentialIdentity? {
        let kind: IdentityStore.CredentialType
        var credentialID: String?
        var userHandle: String?
        switch identity {
        case is ASPasswordCredentialIdentity: kind = .password
        case is ASOneTimeCodeCredentialIdentity: kind = .oneTimeCode
        case let passkey as ASPasskeyCredentialIdentity:
            kind = .passkey
            credentialID = Base64URL.encode(passkey.credentialID)
            userHandle = Base64URL.encode(passkey.userHandle)
        default: return nil
        }
        return IdentityStore.CredentialIdentity(
            kind: kind,
            serviceIdentifier: service(identity.serviceIdentifier),
            user: identity.user,
            recordIdentifier: identity.recordIdentifier,
            rank: identity.rank,
            credentialID: credentialID,
            userHandle: userHandle
        )
    }

    static func identity(_ identity: IdentityStore.CredentialIdentity) -> any ASCredentialIdentity {
        let service = service(identity.serviceIdentifier)
        let made: any ASCredentialIdentity =
            switch identity.kind {
            case .password:
                ASPasswordCredentialIdentity(
                    serviceIdentifier: service,
                    user: identity.user,
                    recordIdentifier: identity.recordIdentifier
                )
            case .oneTimeCode:
                ASOneTimeCodeCredentialIdentity(
                    serviceIdentifier: service,
                    label: identity.user,
                    recordIdentifier: identity.recordIdentifier ?? ""
                )
            case .passkey:
                ASPasskeyCredentialIdentity(
                    relyingPartyIdentifier: identity.serviceIdentifier.identifier,
                    userName: identity.user,
                    credentialID: Data((try? identity.credentialID.map(Base64URL.decode)) ?? []),
                    userHandle: Data((try? identity.userHandle.map(Base64URL.decode)) ?? []),
                    recordIdentifier: identity.recordIdentifier
                )
            }
        made.rank = identity.rank
        return made
    }

    static func kinds(_ types: ASCredentialIdentityTypes) -> [IdentityStore.CredentialType]? {
        if types == .all { return nil }
        var kinds: [IdentityStore.CredentialType] = []
        if types.contains(.password) { kinds.append(.password) }
        if types.contains(.oneTimeCode) { kinds.append(.oneTimeCode) }
        if types.contains(.passkey) { kinds.append(.passkey) }
        return kinds
    }
}
