import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Replaces a file's contents all at once: a reader sees the old file or the new one, never part
/// of either, and a failure (a full disk, a crash) leaves the old file as it was.
///
/// The new contents go into a temporary file beside the target (same directory, so the same file
/// system), made with `mkstemp` (mode 0600, a name nobody else can have chosen), given the old
/// file's permission bits when there is one, written whole, flushed with `fsync`, then renamed over
/// the target. When the target is a symbolic link (dotfiles kept in a repository), the file it
/// leads to is replaced and the link stays.
package enum AtomicFile {
    /// Why the file could not be replaced; `message` names the file and the reason.
    package struct WriteError: Error, Sendable, CustomStringConvertible {
        package var message: String
        package var description: String { message }
    }

    /// Writes `bytes` to `path`. A new file gets mode 0600; an existing one keeps its mode unless
    /// `private` (secrets: 0600 whatever the old file allowed).
    package static func write(_ bytes: some ContiguousBytes, to path: String, private: Bool = false) throws(WriteError)
    {
        // Follow a link to the file it leads to; a path that does not exist yet is used as given.
        var target = path
        if let resolved = realpath(path, nil) {
            target = String(cString: resolved)
            free(resolved)
        }
        let shown = target == path ? path : "\(target) (where the link \(path) leads)"
        func failure(_ what: String) -> WriteError {
            WriteError(
                message: "cannot write \(shown): \(what)\(what.isEmpty ? "" : ": ")\(String(cString: strerror(errno)))"
            )
        }
        let url = URL(fileURLWithPath: target)
        var template = Array("\(url.deletingLastPathComponent().path)/.\(url.lastPathComponent).XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw failure("") }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        var existing = stat()
        var problem: WriteError?
        if !`private`, stat(target, &existing) == 0, fchmod(descriptor, existing.st_mode & 0o7777) != 0 {
            problem = failure("cannot give the new file the old one's permissions")
        }
        if problem == nil, !writeAll(descriptor, bytes) { problem = failure("") }
        if problem == nil, fsync(descriptor) != 0 { problem = failure("") }
        close(descriptor)
        if problem == nil, rename(temporary, target) != 0 { problem = failure("") }
        if let problem {
            unlink(temporary)
            throw problem
        }
    }

    /// Creates `path` with `bytes` and `mode`, refusing to replace anything: a path that exists
    /// (a file, a link, even a dangling one) is an error that says so, and nothing is written.
    ///
    /// For files that must never be overwritten silently (a private key). The file is opened
    /// with `O_CREAT | O_EXCL | O_NOFOLLOW`, so the check and the creation are one step that no
    /// other process can come between; written whole and flushed with `fsync`. It is not renamed
    /// into place (a link made with `link` or `renameat2` would be, but not every file system a
    /// person writes to, a FAT stick, takes them), so a failure part-way removes what it wrote.
    package static func create(_ bytes: some ContiguousBytes, at path: String, mode: mode_t = 0o600) throws(WriteError)
    {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            if errno == EEXIST {
                throw WriteError(message: "\(path) exists already; Keyport will not overwrite it")
            }
            throw WriteError(message: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        // The umask may have taken bits away; it cannot have added any.
        let written = fchmod(descriptor, mode) == 0 && writeAll(descriptor, bytes) && fsync(descriptor) == 0
        var reason = written ? "" : String(cString: strerror(errno))
        if close(descriptor) != 0, written { reason = String(cString: strerror(errno)) }
        if !reason.isEmpty {
            unlink(path)
            throw WriteError(message: "cannot write \(path): \(reason)")
        }
    }

    private static func writeAll(_ descriptor: Int32, _ bytes: some ContiguousBytes) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let count = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
    }
}
