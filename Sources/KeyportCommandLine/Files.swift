import Foundation
import KeyportSystem

/// Holds what a command has finished with just before the process ends, so that it is never
/// freed: the model of a 100 000-item document is millions of small objects, which take about a
/// tenth of `keyport cxf validate`'s time to free one by one, while the exit hands all of the
/// process's memory back at once (docs/performance.md). Never for what lives on after the command.
package func keepUntilExit(_ value: Any) {
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
package func readInput(_ path: String, limit: Int, limitOption: String? = nil) throws(CommandError) -> [UInt8] {
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
    package static func write(_ text: String, to handle: FileHandle = .standardOutput) {
        write(Data(text.utf8), to: handle)
    }

    package static func write(_ data: Data, to handle: FileHandle = .standardOutput) {
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
package func writeAtomically(_ bytes: [UInt8], to path: String) throws(CommandError) {
    do {
        try AtomicFile.write(bytes, to: path)
    } catch {
        throw .io(error.message, code: .unwritableOutput)
    }
}
