import Foundation

/// A user name and its password, as a provider hands it to AutoFill.
///
/// Apple's type holds the password as a `String`, and so does this one, for code written against
/// Apple's API; its ``description`` never shows it.
open class ASPasswordCredential: NSObject, NSCopying, @unchecked Sendable {
    /// The account name.
    public let user: String
    /// The password.
    public let password: String

    /// A credential for `user` with `password`.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// Apple's class factory: the same as ``init(user:password:)``.
    public class func credential(withUser user: String, password: String) -> ASPasswordCredential {
        ASPasswordCredential(user: user, password: password)
    }

    /// This credential (it never changes, so a copy is itself).
    public func copy(with zone: NSZone? = nil) -> Any { self }

    /// The user and a placeholder: the password is never printed.
    open override var description: String { "password for \(user) (hidden)" }
}

/// A one-time code, as a provider hands it to AutoFill.
open class ASOneTimeCodeCredential: NSObject, NSCopying, @unchecked Sendable {
    /// The code.
    public let code: String

    /// A credential holding `code`.
    public init(code: String) {
        self.code = code
    }

    /// This credential (it never changes, so a copy is itself).
    public func copy(with zone: NSZone? = nil) -> Any { self }

    /// A placeholder: the code is never printed.
    open override var description: String { "one-time code (hidden)" }
}
