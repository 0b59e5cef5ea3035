import ArgumentParser
import Foundation

/// The `keyport` command line.
///
/// Exit codes are the same for every command: 0 success, 1 when the input is invalid (or the
/// operation failed on it), 2 for a usage or I/O error.
@main
struct Keyport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyport",
        abstract: "Credential exchange, one-time codes and sign-in for Linux.",
        subcommands: [CXFCommand.self, OTPCommand.self, LoginCommand.self, URLSchemeCommand.self])

    /// Runs the command line, mapping errors onto the exit codes above.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let failure as Failure {
            FileHandle.standardError.write(Data("keyport: \(failure.message)\n".utf8))
            Foundation.exit(failure.exitCode)
        } catch {
            // Help requests (0) and a command's own ExitCode(1) keep their status; usage mistakes exit 2.
            let code = exitCode(for: error)
            if code == .success || code == .failure {
                exit(withError: error)
            }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(2)
        }
    }
}

/// A failure a person should read, with the exit code it calls for.
struct Failure: Error {
    var message: String
    var exitCode: Int32

    /// The input could not be read: exit 2.
    static func io(_ message: String) -> Failure { Failure(message: message, exitCode: 2) }
    /// The input is not acceptable: exit 1.
    static func invalid(_ message: String) -> Failure { Failure(message: message, exitCode: 1) }
}

/// Reads a whole file, or standard input for `-`, refusing more than `limit` bytes.
func readInput(_ path: String, limit: Int) throws(Failure) -> [UInt8] {
    let handle: FileHandle
    if path == "-" {
        handle = FileHandle.standardInput
    } else {
        guard let file = FileHandle(forReadingAtPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "it cannot be read (permissions?)" : "no such file"
            throw .io("cannot open \(path): \(reason)")
        }
        handle = file
    }
    var bytes: [UInt8] = []
    do {
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            bytes.append(contentsOf: chunk)
            if bytes.count > limit {
                throw Failure.invalid("\(path == "-" ? "standard input" : path) is larger than \(limit) bytes (raise --max-size to read it)")
            }
        }
    } catch let failure as Failure {
        throw failure
    } catch {
        throw .io("cannot read \(path == "-" ? "standard input" : path): \(error.localizedDescription)")
    }
    return bytes
}

extension FileHandle {
    /// Writes text to standard output or error without buffering surprises.
    static func write(_ text: String, to handle: FileHandle = .standardOutput) {
        handle.write(Data(text.utf8))
    }
}
