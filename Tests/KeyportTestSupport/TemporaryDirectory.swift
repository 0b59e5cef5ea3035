import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A directory of one test's own, made by `mkdtemp`: mode 0700, under a name nobody could have
/// taken first (a fixed name in a shared directory can be), removed by ``remove()``.
package struct TemporaryDirectory: Sendable {
    package let url: URL
    package var path: String { url.path }

    /// Makes `BASE/PREFIX-XXXXXX`, BASE being ``base``. Keep `prefix` short in a directory that
    /// will hold sockets.
    package init(_ prefix: String) throws {
        var template = Array("\(Self.base)/\(prefix)-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw SupportFailure(
                description: "cannot make a temporary directory in \(Self.base): \(String(cString: strerror(errno)))"
            )
        }
        url = URL(
            fileURLWithPath: template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) },
            isDirectory: true
        )
    }

    /// `$TMPDIR` when it is an absolute path of at most 20 bytes, else `/tmp`. Tests bind Unix
    /// sockets up to 87 bytes below it (`kp-test-XXXXXX/home/.cache/keyport/run/callbacks/` and a
    /// 37-byte name) and a socket path holds at most 107; a longer `$TMPDIR` would make them fail
    /// for a reason that has nothing to do with what they test.
    package static var base: String {
        let value =
            ProcessInfo.processInfo.environment["TMPDIR"].map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? ""
        return value.hasPrefix("/") && value.utf8.count <= 20 ? value : "/tmp"
    }

    /// Creates `name` inside (and what is missing above it), with `mode`.
    package func subdirectory(_ name: String, mode: Int = 0o700) throws -> URL {
        let directory = url.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: directory.path)
        return directory
    }

    package func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
