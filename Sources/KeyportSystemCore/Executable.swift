import Foundation

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

    /// The program `name` installed beside this one (in the folder of `/proc/self/exe`), links
    /// resolved as `/proc/PID/exe` shows a running program; `nil` when there is none.
    package static func beside(_ name: String) -> String? {
        let own = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let program = own.appendingPathComponent(name).resolvingSymlinksInPath().path
        return FileManager.default.isExecutableFile(atPath: program) ? program : nil
    }
}
