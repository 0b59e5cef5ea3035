import CredentialExchangeFormat

/// A failure a person should read, with the exit code it calls for.
package struct CommandError: Error {
    package var message: String
    package var exitCode: Int32
    /// Why, as a stable name, for the failures that have one: the document or file a command reads,
    /// and the file it writes. `keyport cxf validate` reports it; everywhere else it follows the
    /// message on standard error.
    package var code: Code? = nil

    /// A stable name for why a command failed (`too-large`, `unreadable-input`).
    package struct Code: RawRepresentable, Hashable, CustomStringConvertible {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }
        package var description: String { rawValue }

        /// Why the CXF decoder refused the document (`syntax`, `too-deep`, `not-cxf`, …).
        package init(_ code: CXFDecodingError.Code) { rawValue = code.rawValue }

        /// The input is larger than the command reads (`--max-size`): the decoder's own name for it.
        package static let tooLarge = Code(CXFDecodingError.Code.tooLarge)
        /// The input cannot be opened or read (missing, a directory, no permission, an I/O error).
        package static let unreadableInput = Code(rawValue: "unreadable-input")
        /// The output file cannot be written.
        package static let unwritableOutput = Code(rawValue: "unwritable-output")
    }

    /// A failure saying `message`, ending the command with `exitCode`.
    package init(message: String, exitCode: Int32, code: Code? = nil) {
        self.message = message
        self.exitCode = exitCode
        self.code = code
    }

    /// The input could not be read, or the output written: exit 2.
    package static func io(_ message: String, code: Code? = nil) -> CommandError {
        CommandError(message: message, exitCode: 2, code: code)
    }
    /// The input is not acceptable: exit 1.
    package static func invalid(_ message: String, code: Code? = nil) -> CommandError {
        CommandError(message: message, exitCode: 1, code: code)
    }
}
