#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where per-user files go, after the XDG Base Directory specification, read from an environment
/// the caller passes (so tests and launched helpers can point it elsewhere).
///
/// The specification says a relative value is invalid and must be ignored; every variable here
/// is used only when it is an absolute path. Paths are plain strings, without a trailing slash.
package struct BaseDirectories: Sendable {
    package var environment: [String: String]

    package init(environment: [String: String] = ProcessEnvironment.current) {
        self.environment = environment
    }

    /// `$HOME` when absolute, else the home directory in the user database, else `/`.
    package var home: String {
        if let home = absolute("HOME") { return home }
        if let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir {
            return FilePaths.standardized(String(cString: directory))
        }
        return "/"
    }

    /// `$XDG_RUNTIME_DIR` when set and absolute: per-user, private, memory-backed on systemd
    /// machines, emptied at logout. `nil` without one; each caller decides its own fallback.
    package var runtime: String? { absolute("XDG_RUNTIME_DIR") }

    /// `$XDG_CACHE_HOME`, else `~/.cache`.
    package var cacheHome: String { absolute("XDG_CACHE_HOME") ?? FilePaths.join(home, ".cache") }

    /// `$XDG_DATA_HOME`, else `~/.local/share`.
    package var dataHome: String { absolute("XDG_DATA_HOME") ?? FilePaths.join(home, ".local/share") }

    /// `$XDG_STATE_HOME`, else `~/.local/state`.
    package var stateHome: String { absolute("XDG_STATE_HOME") ?? FilePaths.join(home, ".local/state") }

    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    package var configHome: String { absolute("XDG_CONFIG_HOME") ?? FilePaths.join(home, ".config") }

    /// The per-user directory Keyport keeps its sockets in: `$XDG_RUNTIME_DIR/keyport`, else
    /// `$XDG_CACHE_HOME/keyport/run`.
    ///
    /// Without `XDG_RUNTIME_DIR` (CI, containers, `su`) the fallback is in the user's cache
    /// directory, not in `/tmp`: a name in the shared, sticky `/tmp` can be taken first by another
    /// user, who alone could then remove it. Nobody else can make names in the home directory.
    /// Callers check it with ``PrivateDirectory`` before binding or connecting.
    package var keyportRuntime: String {
        if let runtime { return FilePaths.join(runtime, "keyport") }
        return FilePaths.join(cacheHome, "keyport/run")
    }

    private func absolute(_ variable: String) -> String? {
        guard let value = environment[variable], value.hasPrefix("/") else { return nil }
        return FilePaths.standardized(value)
    }
}

/// The process's environment, read from `environ` (what `ProcessInfo` gives, without Foundation).
package enum ProcessEnvironment {
    /// Every `NAME=value` entry; the last of a repeated name wins, as in Foundation's
    /// `ProcessInfo`, so that a program reading either finds the same value.
    package static var current: [String: String] {
        var variables: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                let name = String(text[..<equals])
                variables[name] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return variables
    }
}

/// Absolute paths as text: the few operations Keyport's directories need, without Foundation's URL.
package enum FilePaths {
    /// `path` with `.` and empty components removed and `..` applied (never above `/`), without a
    /// trailing slash; a relative path stays relative.
    package static func standardized(_ path: String) -> String {
        var components: [Substring] = []
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch component {
            case ".": continue
            case "..": if !components.isEmpty { components.removeLast() }
            default: components.append(component)
            }
        }
        let joined = components.joined(separator: "/")
        return path.hasPrefix("/") ? "/" + joined : joined
    }

    /// `relative` under `directory`, standardized.
    package static func join(_ directory: String, _ relative: String) -> String {
        standardized(directory + "/" + relative)
    }

    /// Whether `a` and `b` name the same file: the same device and inode, through whatever links
    /// and paths; for files that do not exist, the same standardized path.
    package static func sameFile(_ a: String, _ b: String) -> Bool {
        guard let first = FileIdentity(a), let second = FileIdentity(b) else {
            return standardized(a) == standardized(b)
        }
        return first == second
    }

    /// The directory that holds `path` (`/` for `/` and for names directly under it).
    package static func parent(_ path: String) -> String {
        let standard = standardized(path)
        guard let slash = standard.lastIndex(of: "/") else { return "." }
        return slash == standard.startIndex ? "/" : String(standard[..<slash])
    }
}

/// Which file a path names now: its device and inode, links followed. A path can be made to name
/// another file at any moment (a link moved, a file renamed over it); what was pinned by identity
/// cannot.
package struct FileIdentity: Hashable, Sendable {
    package var device: UInt64
    package var inode: UInt64

    /// The identity of the file `path` names; `nil` when there is none (`errno` says why).
    package init?(_ path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }

    /// The identity of the file `status` describes.
    package init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}
