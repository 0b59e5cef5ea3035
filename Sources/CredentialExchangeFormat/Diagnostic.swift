/// A finding about a document: what is wrong, where (a JSON pointer), and how bad.
///
/// The decoder reports what it had to tolerate; ``CXF/Validator`` reports what breaks the format's
/// rules. A document is valid when no diagnostic has ``Severity/error``.
public struct Diagnostic: Hashable, Sendable, CustomStringConvertible {
    public enum Severity: String, Hashable, Sendable, Comparable {
        case warning
        case error

        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs == .warning && rhs == .error }
    }

    /// A stable, machine-readable name for the kind of finding (for example `id-too-long`).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }
    }

    public var severity: Severity
    public var code: Code
    /// A JSON pointer (RFC 6901) to the value the finding is about; `""` is the whole document.
    public var path: String
    /// A sentence a person understands: what is wrong and, where it helps, what was done about it.
    public var message: String

    public init(severity: Severity, code: Code, path: String, message: String) {
        self.severity = severity
        self.code = code
        self.path = path
        self.message = message
    }

    public var description: String { "\(severity.rawValue): \(path.isEmpty ? "/" : path): \(message) [\(code)]" }
}

extension Diagnostic.Code {
    // Found while decoding: something was tolerated.
    /// A required member is absent; an empty or default value stands in for it.
    public static let missingMember = Self(rawValue: "missing-member")
    /// A member's JSON type is wrong; the member is treated as absent and kept verbatim.
    public static let wrongType = Self(rawValue: "wrong-type")
    /// A value of another JSON type was converted (a number where text belongs, text "true", ...).
    public static let coercedValue = Self(rawValue: "coerced-value")
    /// A member appears twice in one object; the last one counts.
    public static let duplicateMember = Self(rawValue: "duplicate-member")
    /// A credential `type` this library does not know; the credential is kept verbatim.
    public static let unknownCredentialType = Self(rawValue: "unknown-credential-type")
    /// A credential that cannot be typed (a required member missing or unusable); kept verbatim.
    public static let malformedCredential = Self(rawValue: "malformed-credential")
    /// An array element that must be an object is not; it is left out.
    public static let notAnObject = Self(rawValue: "not-an-object")
    /// A string is not valid UTF-8; the bad bytes became U+FFFD.
    public static let invalidUTF8 = Self(rawValue: "invalid-utf8")
    /// An id is not base64url; its UTF-8 text is used as the id's bytes.
    public static let idNotBase64URL = Self(rawValue: "id-not-base64url")
    /// A binary member is not base64url; the member is treated as absent and kept verbatim.
    public static let invalidBase64URL = Self(rawValue: "invalid-base64url")

    // Found by the validator: the format's rules.
    public static let unsupportedVersion = Self(rawValue: "unsupported-version")
    public static let idTooLong = Self(rawValue: "id-too-long")
    public static let emptyID = Self(rawValue: "empty-id")
    public static let duplicateID = Self(rawValue: "duplicate-id")
    public static let danglingLinkedItem = Self(rawValue: "dangling-linked-item")
    public static let invalidTOTPSecret = Self(rawValue: "invalid-totp-secret")
    public static let invalidTOTPParameter = Self(rawValue: "invalid-totp-parameter")
    public static let unknownFieldType = Self(rawValue: "unknown-field-type")
    public static let unexpectedFieldType = Self(rawValue: "unexpected-field-type")
    public static let invalidFieldValue = Self(rawValue: "invalid-field-value")
    public static let emptyFieldValue = Self(rawValue: "empty-field-value")
    public static let invalidPrivateKey = Self(rawValue: "invalid-private-key")
    public static let keyTypeMismatch = Self(rawValue: "key-type-mismatch")
    public static let invalidIntegrityHash = Self(rawValue: "invalid-integrity-hash")
    public static let timestampOutOfRange = Self(rawValue: "timestamp-out-of-range")
    public static let ignoredAccessor = Self(rawValue: "ignored-accessor")
    public static let emptyRequiredValue = Self(rawValue: "empty-required-value")
}

/// Builds RFC 6901 JSON pointers.
enum JSONPointer {
    static func escape(_ token: String) -> String {
        guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else { return token }
        var out = ""
        for scalar in token.unicodeScalars {
            switch scalar {
            case "~": out += "~0"
            case "/": out += "~1"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
