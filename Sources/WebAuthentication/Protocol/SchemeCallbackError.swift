import Foundation
import KeyportErrors

/// Why a custom-scheme callback could not be waited for, handed over, or registered. Check
/// ``code`` to tell one failure from another; ``message`` says what happened and what to do next,
/// and never holds a callback URL's query (it carries authorization codes).
public struct SchemeCallbackError: RecordedError {
    /// What went wrong, as a stable name (`invalid-scheme`). A struct of constants rather than an
    /// enum, so that a new code is not a breaking change for code that switches over them.
    public typealias Code = ErrorCodeOf<SchemeCallbackError>

    /// The code, the message and the place, kept as all Keyport's errors keep them.
    public var record: ErrorRecord<Code>

    /// An error with `code` and the `message` a person reads.
    /// `file` and `line` record where it was made (``location``).
    public init(
        _ code: Code,
        _ message: String,
        file: String = #fileID,
        line: UInt = #line
    ) {
        record = ErrorRecord(code, message, file: file, line: line)
    }
}

extension ErrorCodeOf<SchemeCallbackError> {
    /// The name is not a URL scheme (RFC 3986 §3.1), or is one browsers handle themselves.
    public static let invalidScheme = Self(rawValue: "invalid-scheme")
    /// The socket directory, or the directory Keyport made for it, belongs to another user, is
    /// open to group or others, or is not a directory: a URL handed over there could be read by
    /// someone else, so it is not used.
    public static let unsafeDirectory = Self(rawValue: "unsafe-directory")
    /// The socket directory could not be created or read.
    public static let directoryUnavailable = Self(rawValue: "directory-unavailable")
    /// The socket could not be opened (or its path is too long for a Unix-domain socket).
    public static let listenFailed = Self(rawValue: "listen-failed")
    /// The URL is longer than the hand-off protocol carries (8192 bytes).
    public static let urlTooLong = Self(rawValue: "url-too-long")
    /// A program the desktop registration needs (`xdg-mime`) is not installed.
    public static let toolMissing = Self(rawValue: "tool-missing")
    /// Writing the `.desktop` file or `mimeapps.list`, or running `xdg-mime`, failed.
    public static let registrationFailed = Self(rawValue: "registration-failed")
}
