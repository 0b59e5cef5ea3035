import ArgumentParser
import CredentialExchangeFormat
import Foundation
import KeyportEncoding
import KeyportSystem

/// The `keyport` command line.
///
/// Exit codes are the same for every command: 0 success, 1 when the input is invalid (or the
/// operation failed on it), 2 for a usage or I/O error.
@main
struct Keyport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyport",
        abstract: "Credential exchange, one-time codes and sign-in for Linux.",
        discussion: """
            keyport talks to keyportd, Keyport's per-user service: it moves credentials between \
            password managers (exchange), answers you in its agent, prints the one-time codes and \
            passwords the providers enabled in Settings hold for a site (otp, password, git-credential, \
            type, fill), runs Keyport Vault (vault), and signs in through a web service (login). Start \
            with `keyport doctor`, which says what runs and what is missing. Exit status: 0 success; 1 the \
            input was invalid or the operation failed on it; 2 a usage or I/O error.
            """,
        version: KeyportRelease.version,
        subcommands: [
            CXFCommand.self, OTPCommand.self, LoginCommand.self, URLSchemeCommand.self, ProvidersCommand.self,
            ExchangeCommand.self, AgentCommand.self, PasswordCommand.self, GitCredentialCommand.self, VaultCommand.self,
            BrowserCommand.self, TypeCommand.self, FillCommand.self, ClipboardServeCommand.self, DoctorCommand.self,
        ]
    )

    /// Runs the command line, mapping errors onto the exit codes above.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let argument = ItemArguments.optionLikeID(in: arguments) {
            try? FileHandle.standardError.write(
                contentsOf: Data(
                    "keyport: \(ItemArguments.optionLikeIDMessage(argument, command: arguments[1]))\n".utf8
                )
            )
            Foundation.exit(2)
        }
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandError {
            // The code, when the failure has one, as the `cxf validate` report prints it: `[too-large]`.
            let code = failure.code.map { " [\($0)]" } ?? ""
            try? FileHandle.standardError.write(
                contentsOf: Data("keyport: \(DisplayText.escaping(failure.message))\(code)\n".utf8)
            )
            Foundation.exit(failure.exitCode)
        } catch {
            // Help requests (0) and a command's own ExitCode(1) keep their status; usage mistakes exit 2.
            let code = exitCode(for: error)
            if code == .success || code == .failure {
                exit(withError: error)
            }
            try? FileHandle.standardError.write(contentsOf: Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(2)
        }
    }
}

/// A failure a person should read, with the exit code it calls for.
struct CommandError: Error {
    var message: String
    var exitCode: Int32
    /// Why, as a stable name, for the failures that have one: the document or file a command reads,
    /// and the file it writes. `keyport cxf validate` reports it; everywhere else it follows the
    /// message on standard error.
    var code: Code? = nil

    /// A stable name for why a command failed (`too-large`, `unreadable-input`).
    struct Code: RawRepresentable, Hashable, CustomStringConvertible {
        let rawValue: String
        init(rawValue: String) { self.rawValue = rawValue }
        var description: String { rawValue }

        /// Why the CXF decoder refused the document (`syntax`, `too-deep`, `not-cxf`, …).
        init(_ code: CXFDecodingError.Code) { rawValue = code.rawValue }

        /// The input is larger than the command reads (`--max-size`): the decoder's own name for it.
        static let tooLarge = Code(CXFDecodingError.Code.tooLarge)
        /// The input cannot be opened or read (missing, a directory, no permission, an I/O error).
        static let unreadableInput = Code(rawValue: "unreadable-input")
        /// The output file cannot be written.
        static let unwritableOutput = Code(rawValue: "unwritable-output")
    }

    /// The input could not be read, or the output written: exit 2.
    static func io(_ message: String, code: Code? = nil) -> CommandError {
        CommandError(message: message, exitCode: 2, code: code)
    }
    /// The input is not acceptable: exit 1.
    static func invalid(_ message: String, code: Code? = nil) -> CommandError {
        CommandError(message: message, exitCode: 1, code: code)
    }
}

/// Holds what a command has finished with just before the process ends, so that it is never
/// freed: the model of a 100 000-item document is millions of small objects, which take about a
/// tenth of `keyport cxf validate`'s time to free one by one, while the exit hands all of the
/// process's memory back at once (docs/performance.md). Never for what lives on after the command.
func keepUntilExit(_ value: Any) {
    _ = Unmanaged.passRetained(KeptUntilExit(value))
}

/// A value ``keepUntilExit(_:)`` holds: retained once more than anyone releases it.
private final class KeptUntilExit {
    let value: Any

    init(_ value: Any) {
        self.value = value
    }
}

/// Reads a whole file, or standard input for `-`, refusing more than `limit` bytes.
///
/// A regular file's size is checked before anything is read; a pipe or device is read until
/// `limit` + 1 bytes have arrived, never further, so neither can make Keyport buffer more than
/// the limit allows.
/// `limitOption` names the option that raises `limit`, for the message; `nil` when there is none.
func readInput(_ path: String, limit: Int, limitOption: String? = nil) throws(CommandError) -> [UInt8] {
    let name = path == "-" ? "standard input" : path
    let fd: Int32
    if path == "-" {
        fd = STDIN_FILENO
    } else {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw .io("cannot open \(path): \(String(cString: strerror(errno)))", code: .unreadableInput)
        }
    }
    defer { if fd != STDIN_FILENO { close(fd) } }
    let tooLarge = CommandError.invalid(
        "\(name) is larger than \(limit) bytes"
            + (limitOption.map { " (raise \($0) to read it)" } ?? " (the most this command reads)"),
        code: .tooLarge
    )

    var info = stat()
    guard fstat(fd, &info) == 0 else {
        throw .io("cannot read \(name): \(String(cString: strerror(errno)))", code: .unreadableInput)
    }
    var bytes: [UInt8] = []
    if info.st_mode & S_IFMT == S_IFREG {
        guard info.st_size <= limit else { throw tooLarge }
        // Read straight into the array, as large as the file and a byte more (a file that grew
        // meanwhile goes on below): neither filled with zeros first nor grown chunk by chunk.
        let capacity = Int(info.st_size) + 1
        var failure: Int32 = 0
        bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            while count < capacity {
                let got = read(fd, buffer.baseAddress! + count, capacity - count)
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if got == 0 { return }
                count += got
            }
        }
        if failure != 0 {
            throw .io("cannot read \(name): \(String(cString: strerror(failure)))", code: .unreadableInput)
        }
        if bytes.count > limit { throw tooLarge }
        if bytes.count < capacity { return bytes }
    } else if info.st_mode & S_IFMT == S_IFDIR {
        throw .io("cannot read \(name): it is a directory", code: .unreadableInput)
    }
    let chunk = 1 << 20
    while true {
        let want = min(chunk, limit + 1 - bytes.count)
        let before = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: want))
        let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + before, want) }
        if got < 0 {
            if errno == EINTR {
                bytes.removeLast(want)
                continue
            }
            throw .io("cannot read \(name): \(String(cString: strerror(errno)))", code: .unreadableInput)
        }
        bytes.removeLast(want - got)
        if got == 0 { break }
        if bytes.count > limit { throw tooLarge }
    }
    return bytes
}

extension FileHandle {
    /// Writes text to standard output or error. A write that fails (a full disk) ends the program
    /// with exit 2 and says why: output is never silently cut short. A reader that closed the
    /// pipe (`| head`) ends it as SIGPIPE ends other tools, without a word.
    static func write(_ text: String, to handle: FileHandle = .standardOutput) {
        write(Data(text.utf8), to: handle)
    }

    static func write(_ data: Data, to handle: FileHandle = .standardOutput) {
        do {
            try handle.write(contentsOf: data)
        } catch {
            let code = Self.posixCode(error)
            if code == EPIPE {
                signal(SIGPIPE, SIG_DFL)
                raise(SIGPIPE)
            }
            let which = handle === FileHandle.standardError ? "standard error" : "standard output"
            // The system's words for it, as the `keyport` front says them.
            let reason = code.map { String(cString: strerror($0)) } ?? error.localizedDescription
            try? FileHandle.standardError.write(contentsOf: Data("keyport: cannot write to \(which): \(reason)\n".utf8))
            Foundation.exit(2)
        }
    }

    /// The `errno` a write failed with (EPIPE when the reader is gone, ENOSPC on a full disk),
    /// perhaps under Foundation's own error; `nil` when it carries none.
    private static func posixCode(_ error: any Error) -> Int32? {
        let error = error as NSError
        let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError
        return [error, underlying].lazy.compactMap { $0 }.first { $0.domain == NSPOSIXErrorDomain }
            .map { Int32($0.code) }
    }
}

/// Replaces `path` with `bytes` all at once (``AtomicFile``: a new file 0600, as CXF documents
/// hold secrets; an existing one keeps its mode), so a failure leaves the old file or none.
func writeAtomically(_ bytes: [UInt8], to path: String) throws(CommandError) {
    do {
        try AtomicFile.write(bytes, to: path)
    } catch {
        throw .io(error.message, code: .unwritableOutput)
    }
}
