import Foundation
import KeyportSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The directory where waiting listeners bind their sockets, and the checks that keep it private.
///
/// Whoever can connect to a listener can hand it a URL, and whoever can bind in the directory can
/// receive URLs meant for sessions (with their authorization codes). So the directory must be the
/// user's own and closed to everybody else (mode 0700), and so must the directory above it that
/// Keyport creates (``PrivateDirectory`` checks both).
///
/// Without `XDG_RUNTIME_DIR` the fallback is in the user's cache directory, not in `/tmp`: a name in
/// the shared, sticky `/tmp` can be taken first by another user, who alone could then remove it,
/// so the session could never wait. The home directory is the user's; nobody else can take the
/// name there, and what is there the user can fix.
package enum CallbackSocketDirectory {
    /// `$XDG_RUNTIME_DIR/keyport/callbacks`, or `$XDG_CACHE_HOME/keyport/run/callbacks` (by default
    /// `~/.cache/keyport/run/callbacks`) when XDG_RUNTIME_DIR is unset or not absolute (the Base
    /// Directory spec says to ignore a relative value).
    package static func defaultURL(environment: [String: String]) -> URL {
        keyportDirectory(environment: environment).appendingPathComponent("callbacks", isDirectory: true)
    }

    /// The per-user directory Keyport owns above the socket directory: `$XDG_RUNTIME_DIR/keyport`,
    /// else `$XDG_CACHE_HOME/keyport/run`. The listener and the handler the desktop starts both
    /// look here.
    package static func keyportDirectory(environment: [String: String]) -> URL {
        URL(fileURLWithPath: BaseDirectories(environment: environment).keyportRuntime, isDirectory: true)
    }

    /// Makes sure the socket directory exists (when `create`) and is private to this user.
    ///
    /// - Parameters:
    ///   - directory: a directory the caller chose, or `nil` for ``defaultURL(environment:)``.
    ///   - create: create what is missing, each new directory with mode 0700 (listeners do;
    ///     delivery does not — a missing directory means nobody is waiting).
    /// - Returns: the directory, or `nil` when it does not exist and `create` is false.
    package static func prepare(
        _ directory: URL?,
        environment: [String: String],
        create: Bool
    ) throws(CallbackHandOffError) -> URL? {
        // What must be private: the directory, and for the default location the `keyport`
        // directory above it too; for a chosen directory, every level this call creates.
        let above = directory == nil ? [keyportDirectory(environment: environment)] : []
        do {
            return try PrivateDirectory.prepare(
                (directory ?? defaultURL(environment: environment)).path,
                alsoPrivate: above.map(\.path),
                contents: "the sign-in callbacks",
                create: create
            ).map { URL(fileURLWithPath: $0, isDirectory: true) }
        } catch {
            throw CallbackHandOffError(
                error.code == .unsafe ? .unsafeDirectory : .directoryUnavailable,
                error.message
            )
        }
    }

    /// A fresh socket path in `directory`: 128 random bits in hex, then `.sock`.
    package static func newSocketPath(in directory: URL) throws(CallbackHandOffError) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let name = bytes.map { String(format: "%02x", $0) }.joined()
        let path = directory.appendingPathComponent("\(name).sock").path
        guard path.utf8.count <= UnixSocketPath.maximumLength else {
            throw CallbackHandOffError(
                .listenFailed,
                "the socket path \(path) is longer than the \(UnixSocketPath.maximumLength) bytes a Unix-domain socket allows; choose a shorter directory (or XDG_RUNTIME_DIR)"
            )
        }
        return path
    }

    /// The sockets listeners wait on, in a stable order.
    package static func sockets(in directory: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".sock") }.sorted().map { directory.appendingPathComponent($0).path }
    }
}
