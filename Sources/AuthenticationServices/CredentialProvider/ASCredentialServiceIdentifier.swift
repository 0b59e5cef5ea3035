import Foundation

/// Where a credential is used: a domain or a URL, as AutoFill names a service to providers.
///
/// As on Apple platforms, requests list their service identifiers most specific first
/// (`https://m.example.com/login`, then `example.com`).
open class ASCredentialServiceIdentifier: NSObject, NSCopying, @unchecked Sendable {
    /// What ``identifier`` holds.
    public enum IdentifierType: Int, Sendable {
        /// A domain name, such as `example.com`.
        case domain = 0
        /// A URL, such as `https://example.com/login`.
        case URL = 1
    }

    /// The domain or URL.
    public let identifier: String
    /// Whether ``identifier`` is a domain or a URL.
    public let type: IdentifierType

    /// A service identifier for `identifier`, a domain or a URL as `type` says.
    public init(identifier: String, type: IdentifierType) {
        self.identifier = identifier
        self.type = type
    }

    /// This identifier (it never changes, so a copy is itself).
    public func copy(with zone: NSZone? = nil) -> Any { self }

    /// Equal when the identifier and its type are.
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? ASCredentialServiceIdentifier else { return false }
        return identifier == other.identifier && type == other.type
    }

    /// The hash of the identifier and its type.
    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(identifier)
        hasher.combine(type)
        return hasher.finalize()
    }

    /// The identifier, with its type.
    open override var description: String { "\(type == .URL ? "URL" : "domain") \(identifier)" }
}
