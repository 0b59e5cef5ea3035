#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Finds programs: the way a shell does, and the ones installed beside this one. The one place
/// that reads `/proc/self/exe`.
package enum Executable {
    /// The executable for `name`: a path as given, else the first match on `path` (a `PATH`
    /// value; `/usr/local/bin:/usr/bin:/bin` when `nil`).
    package static func find(_ name: String, path: String?) -> String? {
        if name.contains("/") { return isExecutable(name) ? name : nil }
        for directory in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if isExecutable(candidate) { return candidate }
        }
        return nil
    }

    /// This program's own absolute path, links resolved, as `/proc/PID/exe` shows it; `nil`
    /// without /proc (never a guess from argv[0], which could name a program in the current
    /// directory).
    package static var own: String? { resolved(running) }

    /// This very program as the kernel runs it (`/proc/self/exe`), to start it again: still this
    /// program after an upgrade replaced its file.
    package static let running = "/proc/self/exe"

    /// What a message says when ``own`` is `nil`.
    package static let unknown = "cannot find where this program is installed (/proc/self/exe)"

    /// The folder this program was installed in (``own``'s).
    package static var directory: String? { own.map(FilePaths.parent) }

    /// The program `name` installed beside this one (in ``directory``), links resolved as
    /// `/proc/PID/exe` shows a running program; `nil` when there is none.
    package static func beside(_ name: String) -> String? {
        guard let directory, let program = resolved(FilePaths.join(directory, name)), isExecutable(program) else {
            return nil
        }
        return program
    }

    /// `path` with every link resolved; `nil` when it does not exist.
    private static func resolved(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    /// Whether `path` is a regular file this user may run.
    private static func isExecutable(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG && access(path, X_OK) == 0
    }
}
