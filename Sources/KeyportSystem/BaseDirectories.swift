import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where per-user files go, after the XDG Base Directory specification, read from an environment
/// the caller passes (so tests and launched helpers can point it elsewhere).
///
/// The specification says a relative value is invalid and must be ignored; every variable here
/// is used only when it is an absolute path.
package struct BaseDirectories: Sendable {
    package var environment: [String: String]

    package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    /// `$HOME` when absolute, else the home directory in the user database, else `/`.
    package var home: URL {
        if let home = absolute("HOME") { return home }
        if let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir {
            return URL(fileURLWithPath: String(cString: directory), isDirectory: true)
        }
        return URL(fileURLWithPath: "/", isDirectory: true)
    }

    /// `$XDG_RUNTIME_DIR` when set and absolute: per-user, private, memory-backed on systemd
    /// machines, emptied at logout. `nil` without one; each caller decides its own fallback.
    package var runtime: URL? { absolute("XDG_RUNTIME_DIR") }

    /// `$XDG_CACHE_HOME`, else `~/.cache`.
    package var cacheHome: URL {
        absolute("XDG_CACHE_HOME") ?? home.appendingPathComponent(".cache", isDirectory: true)
    }

    /// `$XDG_DATA_HOME`, else `~/.local/share`.
    package var dataHome: URL {
        absolute("XDG_DATA_HOME") ?? home.appendingPathComponent(".local/share", isDirectory: true)
    }

    /// `$XDG_STATE_HOME`, else `~/.local/state`.
    package var stateHome: URL {
        absolute("XDG_STATE_HOME") ?? home.appendingPathComponent(".local/state", isDirectory: true)
    }

    /// The per-user directory Keyport keeps its sockets in: `$XDG_RUNTIME_DIR/keyport`, else
    /// `$XDG_CACHE_HOME/keyport/run`.
    ///
    /// Without `XDG_RUNTIME_DIR` (CI, containers, `su`) the fallback is in the user's cache
    /// directory, not in `/tmp`: a name in the shared, sticky `/tmp` can be taken first by another
    /// user, who alone could then remove it. Nobody else can make names in the home directory.
    /// Callers check it with ``PrivateDirectory`` before binding or connecting.
    package var keyportRuntime: URL {
        if let runtime { return runtime.appendingPathComponent("keyport", isDirectory: true) }
        return cacheHome.appendingPathComponent("keyport/run", isDirectory: true)
    }

    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    package var configHome: URL {
        absolute("XDG_CONFIG_HOME") ?? home.appendingPathComponent(".config", isDirectory: true)
    }

    private func absolute(_ variable: String) -> URL? {
        guard let value = environment[variable], value.hasPrefix("/") else { return nil }
        return URL(fileURLWithPath: value, isDirectory: true)
    }
}

/// Finds programs the way a shell does.
package enum Executable {
    /// The executable for `name`: a path as given, else the first match on `path` (a `PATH`
    /// value; `/usr/local/bin:/usr/bin:/bin` when `nil`).
    package static func find(_ name: String, path: String?) -> String? {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) ? name : nil }
        for directory in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
