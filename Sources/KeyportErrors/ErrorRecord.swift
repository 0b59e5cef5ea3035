/// What Keyport's error types share: a stable code, the sentence a person reads, and where the
/// error was made.
///
/// Two errors are the same error when their codes are (as swift-certificates' `CertificateError`
/// compares): the sentence is for people and may be reworded, and the place is for whoever
/// debugs. Each error type keeps its own public shape (`code`, `message`, an initializer with the
/// code first) and holds one of these, so that equality, hashing and the recorded place are
/// written once.
package struct ErrorRecord<Code: Hashable & Sendable>: Hashable, Sendable, CustomStringConvertible {
    package var code: Code
    package var message: String
    /// The file (`Module/File.swift`, as `#fileID` gives it) that made the error.
    package let file: String
    /// The line in ``file``.
    package let line: UInt

    package init(_ code: Code, _ message: String, file: String, line: UInt) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
    }

    /// `Module/File.swift:LINE`.
    package var location: String { "\(file):\(line)" }

    package static func == (left: ErrorRecord, right: ErrorRecord) -> Bool { left.code == right.code }

    package func hash(into hasher: inout Hasher) { hasher.combine(code) }

    package var description: String { message }
}

/// A stable name for why an error happened (`wrong-passphrase`), as scripts and tests read it. A
/// struct of constants rather than an enum, so that a new code breaks no `switch`. The package's
/// own error types' codes conform; a public type's code spells the same out, its conformances
/// being public.
package protocol ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible where RawValue == String {}

extension ErrorCode {
    /// The code's name.
    package var description: String { rawValue }
}

/// A package-level error that holds an ``ErrorRecord``: its code, message, place and description
/// come from the record, written once here. (Public error types spell these out, their
/// conformances being public.)
package protocol RecordedError: Error, Hashable, Sendable, CustomStringConvertible {
    associatedtype Code: ErrorCode
    var record: ErrorRecord<Code> { get set }
}

extension RecordedError {
    package var code: Code {
        get { record.code }
        set { record.code = newValue }
    }

    package var message: String {
        get { record.message }
        set { record.message = newValue }
    }

    /// Where the error was made, for whoever debugs; equality compares codes.
    package var location: String { record.location }

    package var description: String { message }
}
