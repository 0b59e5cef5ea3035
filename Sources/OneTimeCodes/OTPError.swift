import KeyportErrors

/// Why a one-time-code secret, parameter or document cannot be used. The message names the part
/// that is wrong and never quotes a secret.
public struct OTPError: RecordedError {
    /// What kind of failure an error is, by a stable name.
    public typealias Code = ErrorCodeOf<OTPError>

    /// The code, the message and the place, kept as all Keyport's errors keep them.
    public var record: ErrorRecord<Code>

    /// An error of kind `code` saying `message`.
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

extension ErrorCodeOf<OTPError> {
    /// The secret is missing, empty or not Base32.
    public static let invalidSecret = Self(rawValue: "invalid-secret")
    /// A parameter (digits, period, counter, algorithm, time) is out of range or unreadable.
    public static let invalidParameter = Self(rawValue: "invalid-parameter")
    /// The text is not a URI of the expected form.
    public static let invalidURI = Self(rawValue: "invalid-uri")
    /// A Google Authenticator export cannot be read.
    public static let invalidMigration = Self(rawValue: "invalid-migration")
    /// A value the format allows but this library cannot honestly turn into a code (MD5, an
    /// unspecified algorithm).
    public static let unsupported = Self(rawValue: "unsupported")
}
