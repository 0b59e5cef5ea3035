/// Why a callback could not be waited for or handed over, for the public API to say in its own
/// error type (`SchemeCallbackError` in AuthenticationServices' Linux additions; the same codes).
package struct CallbackHandOffError: Error, Hashable, Sendable, CustomStringConvertible {
    package enum Reason: Hashable, Sendable {
        /// The socket directory, or the one Keyport made above it, is not private to this user.
        case unsafeDirectory
        /// The socket directory could not be created or read.
        case directoryUnavailable
        /// The socket could not be opened (or its path is too long for a Unix-domain socket).
        case listenFailed
        /// The URL is longer than the hand-off carries.
        case urlTooLong
    }

    package var reason: Reason
    /// What happened and what to do next; never a callback URL's query.
    package var message: String

    package init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    package var description: String { message }
}
