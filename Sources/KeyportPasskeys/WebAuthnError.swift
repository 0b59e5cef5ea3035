import KeyportErrors

/// Why a WebAuthn ceremony failed, as WebAuthn names it to a page: the code is the name of the
/// `DOMException` (or `TypeError`) that `navigator.credentials.create` or `get` rejects with, and
/// the message is the sentence beside it. The names are WebAuthn's own rather than kebab case,
/// since they are what pages, relying-party libraries and tests already read.
package struct WebAuthnError: RecordedError {
    /// The exception's name.
    package typealias Code = ErrorCodeOf<WebAuthnError>

    /// The code, the message and the place, kept as all Keyport's errors keep them.
    package var record: ErrorRecord<Code>

    /// An error of kind `code` saying `message`; `file` and `line` record where it was made.
    package init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
    }
}

extension ErrorCodeOf<WebAuthnError> {
    /// The person declined, nobody answered in time, or no credential could be used — said alike,
    /// so that a page cannot tell which (WebAuthn's privacy rule).
    package static let notAllowed = Self(rawValue: "NotAllowedError")
    /// The caller may not act for this origin, or the relying party id does not belong to it.
    package static let security = Self(rawValue: "SecurityError")
    /// The options break a rule of their own (a user id of 65 bytes, a missing challenge).
    package static let type = Self(rawValue: "TypeError")
    /// A credential the relying party excluded is already the person's.
    package static let invalidState = Self(rawValue: "InvalidStateError")
    /// Nothing asked for can be done: no algorithm offered is supported.
    package static let notSupported = Self(rawValue: "NotSupportedError")
    /// The caller stopped the ceremony.
    package static let abort = Self(rawValue: "AbortError")
    /// The authenticator failed in a way none of the others names.
    package static let unknown = Self(rawValue: "UnknownError")
}

/// Why bytes a passkey's ceremony carries — an attestation object, authenticator data, a COSE key,
/// a private key — cannot be used, and where: the message names the structure and the member.
package struct PasskeyDataError: RecordedError {
    /// What kind of failure it is.
    package typealias Code = ErrorCodeOf<PasskeyDataError>

    /// The code, the message and the place.
    package var record: ErrorRecord<Code>

    /// An error of kind `code` saying `message`; `file` and `line` record where it was made.
    package init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
    }
}

extension ErrorCodeOf<PasskeyDataError> {
    /// The bytes break the structure's rules (not CBOR, a member missing or of the wrong kind,
    /// bytes left over, a length that does not fit).
    package static let malformed = Self(rawValue: "malformed")
    /// A well-formed value Keyport does not implement (a key type, curve or algorithm).
    package static let unsupported = Self(rawValue: "unsupported")
}
