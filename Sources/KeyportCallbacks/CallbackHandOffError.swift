import KeyportErrors

/// Why a callback could not be waited for or handed over, for the public API to say in its own
/// error type (`SchemeCallbackError` in AuthenticationServices' Linux additions; the same codes).
package struct CallbackHandOffError: RecordedError {
    /// A stable name for why; SchemeCallbackError's codes of the same names.
    package typealias Code = ErrorCodeOf<CallbackHandOffError>

    /// The code, and what happened and what to do next; never a callback URL's query.
    package var record: ErrorRecord<Code>

    package init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
    }
}

extension ErrorCodeOf<CallbackHandOffError> {
    /// The socket directory, or the one Keyport made above it, is not private to this user.
    package static let unsafeDirectory = Self(rawValue: "unsafe-directory")
    /// The socket directory could not be created or read.
    package static let directoryUnavailable = Self(rawValue: "directory-unavailable")
    /// The socket could not be opened (or its path is too long for a Unix-domain socket).
    package static let listenFailed = Self(rawValue: "listen-failed")
    /// The URL is longer than the hand-off carries.
    package static let urlTooLong = Self(rawValue: "url-too-long")
}
