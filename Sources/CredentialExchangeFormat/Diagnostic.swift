import KeyportEncoding

/// A finding about a document: what is wrong, where (a JSON pointer), and how bad.
///
/// The decoder reports what it had to tolerate; ``CXF/Validator`` reports what breaks the format's
/// rules. A document is valid when no diagnostic has ``Severity/error``.
///
/// Severity follows one rule: ``Severity/error`` when an importer cannot use a credential or the
/// document as it stands (an unknown major version, a value that could not be read, an ambiguous
/// repeat, a key that is not PKCS#8, a TOTP secret that is not Base32); ``Severity/warning`` for a
/// deviation it can store as it came (a subdivision without its country, `WPA2` for
/// `wpa2-personal`, an SSH `keyType` that disagrees with its key, a short integrity hash).
public struct Diagnostic: Hashable, Sendable, CustomStringConvertible {
    /// How bad a finding is.
    public enum Severity: String, Hashable, Sendable, Comparable {
        /// A deviation an importer can store as it came.
        case warning
        /// An importer cannot use the credential or the document as it stands.
        case error

        /// Whether `lhs` is a warning and `rhs` an error.
        public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs == .warning && rhs == .error }
    }

    /// A stable, machine-readable name for the kind of finding (for example `id-too-long`).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, such as `id-too-long`.
        public let rawValue: String
        /// The code named `rawValue`.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }
    }

    /// How bad the finding is.
    public var severity: Severity
    /// What kind of finding it is.
    public var code: Code
    /// A JSON pointer (RFC 6901) to the value the finding is about; `""` is the whole document.
    public var path: String
    /// A sentence a person understands: what is wrong and, where it helps, what was done about it.
    public var message: String

    /// A finding; `path` is a JSON pointer, `""` for the whole document.
    public init(severity: Severity, code: Code, path: String, message: String) {
        self.severity = severity
        self.code = code
        self.path = path
        self.message = message
    }

    /// One line for a person: `error: /accounts/0/items/3: … [code]`. The path and message are
    /// escaped for a terminal (control characters and bidirectional marks written as `\u{1B}`): they
    /// can carry a document's keys and values.
    public var description: String {
        "\(severity.rawValue): \(DisplayText.escaping(path.isEmpty ? "/" : path)): \(DisplayText.escaping(message)) [\(DisplayText.escaping(code.rawValue))]"
    }
}

extension Diagnostic.Code {
    // Found while decoding: something was tolerated.
    /// A required member is absent; an empty or default value stands in for it.
    public static let missingMember = Self(rawValue: "missing-member")
    /// A member's value cannot be read as its type (wrong JSON type, out of range, an array with an
    /// element of another kind); it is kept verbatim and written back. An error — except for an
    /// extension that is not an object, a warning: importers skip extensions they cannot read.
    public static let wrongType = Self(rawValue: "wrong-type")
    /// A value of another JSON type was converted (a number where text belongs, text "true", ...).
    public static let coercedValue = Self(rawValue: "coerced-value")
    /// A member appears twice in one object: the first is read, the repeat kept verbatim and
    /// written back. An error: JSON readers disagree about which one counts.
    public static let duplicateMember = Self(rawValue: "duplicate-member")
    /// A credential `type` this library does not know; the credential is kept verbatim.
    public static let unknownCredentialType = Self(rawValue: "unknown-credential-type")
    /// A credential that cannot be typed (a required member missing or unusable); kept verbatim.
    public static let malformedCredential = Self(rawValue: "malformed-credential")
    /// A string is not valid UTF-8; the bad bytes became U+FFFD.
    public static let invalidUTF8 = Self(rawValue: "invalid-utf8")
    /// An id is not base64url; its UTF-8 text is used as the id's bytes.
    public static let idNotBase64URL = Self(rawValue: "id-not-base64url")
    /// A binary member is not base64url; it is kept verbatim and written back. An error.
    public static let invalidBase64URL = Self(rawValue: "invalid-base64url")

    // Found by the validator: the format's rules.
    /// The header's major version is not 1: the document may be in a format this library does not understand.
    /// An error.
    public static let unsupportedVersion = Self(rawValue: "unsupported-version")
    /// An id is longer than the 64 bytes CXF allows. A warning: an importer may keep it or give it a
    /// new one.
    public static let idTooLong = Self(rawValue: "id-too-long")
    /// An account, collection, item, file or custom-fields id is empty, so nothing can refer to it. A
    /// warning.
    public static let emptyID = Self(rawValue: "empty-id")
    /// Two items or collections of one account have the same id. An error.
    public static let duplicateID = Self(rawValue: "duplicate-id")
    /// A linked item (in a collection or an `item-reference`) names an account or item that is not in the
    /// document. A warning.
    public static let danglingLinkedItem = Self(rawValue: "dangling-linked-item")
    /// A TOTP secret is empty or not Base32. An error.
    public static let invalidTOTPSecret = Self(rawValue: "invalid-totp-secret")
    /// A TOTP period of 0 or a digit count of 0 or more than 10 (errors), or fewer than 6 digits (a warning).
    public static let invalidTOTPParameter = Self(rawValue: "invalid-totp-parameter")
    /// An editable field's `fieldType` is not one CXF 1.0 defines; its value is kept as text. A warning.
    public static let unknownFieldType = Self(rawValue: "unknown-field-type")
    /// An editable field's type is not the one its member calls for, such as a `string` field where a
    /// `concealed-string` belongs. A warning.
    public static let unexpectedFieldType = Self(rawValue: "unexpected-field-type")
    /// A field's value is not written as its field type asks (a warning), or a passkey's user handle is not 1
    /// to 64 bytes (an error).
    public static let invalidFieldValue = Self(rawValue: "invalid-field-value")
    /// A required field, or a field of a type other than `string` and `concealed-string`, has an empty value.
    /// A warning.
    public static let emptyFieldValue = Self(rawValue: "empty-field-value")
    /// A passkey or SSH private key is not PKCS#8 DER of a supported algorithm, or its public key does not
    /// fit it. An error.
    public static let invalidPrivateKey = Self(rawValue: "invalid-private-key")
    /// An SSH key's `keyType` does not name the key's algorithm. A warning.
    public static let keyTypeMismatch = Self(rawValue: "key-type-mismatch")
    /// A file's integrity hash is not 32 bytes, so the file cannot be checked against it. A warning.
    public static let invalidIntegrityHash = Self(rawValue: "invalid-integrity-hash")
    /// A timestamp is before 1970 or after the year 3000 (often milliseconds where CXF counts seconds). A
    /// warning.
    public static let timestampOutOfRange = Self(rawValue: "timestamp-out-of-range")
    /// A `shared` accessor, or some of its permissions, is of a kind the specification says to ignore. A
    /// warning.
    public static let ignoredAccessor = Self(rawValue: "ignored-accessor")
    /// A required member is empty: a passkey's credential ID or relying party ID (errors), a generated
    /// password (a warning).
    public static let emptyRequiredValue = Self(rawValue: "empty-required-value")
}

/// Builds RFC 6901 JSON pointers; `package` so that every module writes them one way.
package enum JSONPointer {
    /// One reference token: `~` becomes `~0` and `/` becomes `~1`.
    package static func escape(_ token: String) -> String {
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

/// The diagnostics of one pass, at most `limit` of each code kept; the rest are counted and summed
/// up at the end by ``finish()``. A hostile document can raise millions of findings of one kind
/// (`"items":[1,1,…]`); a person needs the first few and a count, and memory stays bounded.
struct DiagnosticList {
    struct Tally {
        var count = 0
        /// Whether a finding left out of the list was an error, so the summary keeps the document invalid.
        var droppedError = false
    }

    let limit: Int
    private(set) var list: [Diagnostic] = []
    private var tallies: [Diagnostic.Code: Tally] = [:]

    init(limit: Int) {
        self.limit = max(limit, 1)
    }

    /// Whether a finding of `code` would still be listed; callers skip building its text when not.
    @inline(__always) func wants(_ code: Diagnostic.Code) -> Bool {
        (tallies[code]?.count ?? 0) < limit
    }

    /// Lists the finding, or only counts it when `limit` of its code are listed already (then
    /// `path` and `message` are not looked at: pass what is cheap when ``wants(_:)`` is false).
    mutating func append(_ severity: Diagnostic.Severity, _ code: Diagnostic.Code, path: String, message: String) {
        let listed = wants(code)
        tallies[code, default: Tally()].count += 1
        if listed {
            list.append(Diagnostic(severity: severity, code: code, path: path, message: message))
        } else if severity == .error {
            tallies[code]!.droppedError = true
        }
    }

    /// A point to go back to when a tentative reading is abandoned. Cheap: the tallies are shared
    /// with the list until the next finding.
    struct Mark {
        fileprivate let count: Int
        fileprivate let tallies: [Diagnostic.Code: Tally]
    }

    var mark: Mark { Mark(count: list.count, tallies: tallies) }

    mutating func rewind(to mark: Mark) {
        if list.count > mark.count { list.removeSubrange(mark.count...) }
        tallies = mark.tallies
    }

    /// The listed findings, then one summary per code that had more than `limit`.
    func finish() -> [Diagnostic] {
        var out = list
        for (code, tally) in tallies.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where tally.count > limit {
            out.append(
                Diagnostic(
                    severity: tally.droppedError ? .error : .warning,
                    code: code,
                    path: "",
                    message:
                        "\(tally.count - limit) more findings like this were not listed (only the first \(limit) of each kind are)"
                )
            )
        }
        return out
    }
}
