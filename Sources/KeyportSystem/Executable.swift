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
}
