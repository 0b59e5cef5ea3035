import Foundation

/// Why a custom-scheme callback could not be waited for, handed over, or registered. Compared by
/// ``kind``; ``message`` says what happened and what to do next, and never holds a callback URL's
/// query (it carries authorization codes).
public struct SchemeCallbackError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// The name is not a URL scheme (RFC 3986 §3.1), or is one browsers handle themselves.
        case invalidScheme
        /// The socket directory, or the directory Keyport made for it, belongs to another user, is
        /// open to group or others, or is not a directory: a URL handed over there could be read by
        /// someone else, so it is not used.
        case unsafeDirectory
        /// The socket directory could not be created or read.
        case directoryUnavailable
        /// The socket could not be opened (or its path is too long for a Unix-domain socket).
        case listenFailed
        /// The URL is longer than the hand-off protocol carries (8192 bytes).
        case urlTooLong
        /// A program the desktop registration needs (`xdg-mime`) is not installed.
        case toolMissing
        /// Writing the `.desktop` file or `mimeapps.list`, or running `xdg-mime`, failed.
        case registrationFailed
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
