/// What Keyport's error types share: a stable code, the sentence a person reads, and where the
/// error was made.
///
/// Two errors are the same error when their codes are (as swift-certificates' `CertificateError`
/// compares): the sentence is for people and may be reworded, and the place is for whoever
/// debugs. Every error type of Keyport's own holds one of these (``RecordedError``), so that the
/// code, the sentence, equality, hashing and the recorded place are written once. Apple's error
/// types keep Apple's shape and do not.
public struct ErrorRecord<Code: Hashable & Sendable>: Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure it is.
    public package(set) var code: Code
    /// What is wrong, for a person; never a secret.
    public package(set) var message: String
    /// The file (`Module/File.swift`, as `#fileID` gives it) that made the error.
    public let file: String
    /// The line in ``file``.
    public let line: UInt

    package init(_ code: Code, _ message: String, file: String, line: UInt) {
        self.code = code
        self.message = message
        self.file = file
        self.line = line
    }

    /// `Module/File.swift:LINE`.
    public var location: String { "\(file):\(line)" }

    /// Records are equal when their codes are.
    public static func == (left: ErrorRecord, right: ErrorRecord) -> Bool { left.code == right.code }

    /// Hashes the code, which is what equality compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// The message.
    public var description: String { message }
}

/// A stable name for why an error happened (`wrong-passphrase`), as scripts and tests read it. A
/// struct of constants rather than an enum, so that a new code breaks no `switch`.
public protocol ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible where RawValue == String {}

/// The codes of the error type `Owner`, its `Code`: each error type declares its codes once, as
/// `static let`s in an extension of `ErrorCodeOf<Owner>`, and one type's codes are not another's
/// (the owner is part of the type).
public struct ErrorCodeOf<Owner>: ErrorCode {
    /// The code's stable name, in kebab case (`invalid-secret`).
    public let rawValue: String
    /// The code named `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }
}

extension ErrorCode {
    /// The code's name.
    public var description: String { rawValue }
}

/// An error of Keyport's own: its code, message, place and description come from its
/// ``ErrorRecord``, written once here. Equality compares the record (its code) and whatever else
/// the type stores, as Swift derives it.
public protocol RecordedError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The type's codes.
    associatedtype Code: ErrorCode
    /// The code, the message and the place.
    var record: ErrorRecord<Code> { get set }
}

extension RecordedError {
    /// What kind of failure it is.
    public var code: Code {
        get { record.code }
        set { record.code = newValue }
    }

    /// What is wrong, for a person; never a secret.
    public var message: String {
        get { record.message }
        set { record.message = newValue }
    }

    /// Where the error was made (`Module/File.swift:LINE`), for whoever debugs; equality compares
    /// codes.
    public var location: String { record.location }

    /// The message.
    public var description: String { message }
}
