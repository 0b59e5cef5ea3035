import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a custom-scheme callback could not be waited for, handed over, or registered. Compared by
/// ``kind``; ``message`` says what happened and what to do next, and never holds a callback URL's
/// query (it carries authorization codes).
public struct SchemeCallbackError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// The name is not a URL scheme (RFC 3986 §3.1), or is one browsers handle themselves.
        case invalidScheme
        /// The socket directory, or the directory Keyport made for it, belongs to another user, is
        /// open to group or others, or is not a directory: a URL handed over there could be read by
        /// someone else, so it is not used.
        case unsafeDirectory
        /// The socket directory could not be created or read.
        case directoryUnavailable
        /// The socket could not be opened (or its path is too long for a Unix-domain socket).
        case listenFailed
        /// The URL is longer than the hand-off protocol carries (8192 bytes).
        case urlTooLong
        /// A program the desktop registration needs (`xdg-mime`) is not installed.
        case toolMissing
        /// Writing the `.desktop` file or `mimeapps.list`, or running `xdg-mime`, failed.
        case registrationFailed
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// The directory where waiting listeners bind their sockets, and the checks that keep it private.
///
/// Whoever can connect to a listener can hand it a URL, and whoever can bind in the directory can
/// receive URLs meant for sessions (with their authorization codes). So the directory must be the
/// user's own and closed to everybody else (mode 0700), and so must the directory above it that
/// Keyport creates.
///
/// Without `XDG_RUNTIME_DIR` the fallback is in the user's cache directory, not in `/tmp`: a name in
/// the shared, sticky `/tmp` can be taken first by another user, who alone could then remove it,
/// so the session could never wait. The home directory is the user's; nobody else can take the
/// name there, and what is there the user can fix.
enum CallbackSocketDirectory {
    /// The longest path a Unix-domain socket address holds (`sun_path` is 108 bytes with its NUL).
    static let maximumSocketPathLength = 107

    /// `$XDG_RUNTIME_DIR/keyport/callbacks`, or `$XDG_CACHE_HOME/keyport/run/callbacks` (by default
    /// `~/.cache/keyport/run/callbacks`) when XDG_RUNTIME_DIR is unset or not absolute (the Base
    /// Directory spec says to ignore a relative value).
    static func defaultURL(environment: [String: String]) -> URL {
        keyportDirectory(environment: environment).appendingPathComponent("callbacks", isDirectory: true)
    }

    /// The per-user directory Keyport owns above the socket directory: `$XDG_RUNTIME_DIR/keyport`,
    /// else `$XDG_CACHE_HOME/keyport/run`.
    static func keyportDirectory(environment: [String: String]) -> URL {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return URL(fileURLWithPath: runtime, isDirectory: true).appendingPathComponent("keyport", isDirectory: true)
        }
        return cacheHome(environment: environment).appendingPathComponent("keyport/run", isDirectory: true)
    }

    /// `$XDG_CACHE_HOME` when absolute, else `$HOME/.cache`, else the home directory in the user
    /// database. The listener and the handler the desktop starts both look here.
    static func cacheHome(environment: [String: String]) -> URL {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
            return URL(fileURLWithPath: cache, isDirectory: true)
        }
        let home: String
        if let fromEnvironment = environment["HOME"], fromEnvironment.hasPrefix("/") {
            home = fromEnvironment
        } else if let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir {
            home = String(cString: directory)
        } else {
            home = "/"
        }
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".cache", isDirectory: true)
    }

    /// Makes sure the socket directory exists (when `create`) and is private to this user.
    ///
    /// - Parameters:
    ///   - directory: a directory the caller chose, or `nil` for ``defaultURL(environment:)``.
    ///   - create: create what is missing, each new directory with mode 0700 (listeners do;
    ///     delivery does not — a missing directory means nobody is waiting).
    /// - Returns: the directory, or `nil` when it does not exist and `create` is false.
    static func prepare(
        _ directory: URL?, environment: [String: String], create: Bool
    ) throws(SchemeCallbackError) -> URL? {
        let target = (directory ?? defaultURL(environment: environment)).standardizedFileURL
        // What must be private: the directory, and for the default location the `keyport`
        // directory above it too; for a chosen directory, every level this call creates.
        var checked: [String] = [target.path]
        if directory == nil { checked.append(keyportDirectory(environment: environment).path) }

        if !exists(target.path) {
            guard create else { return nil }
            var missing: [String] = []
            var current = target
            while !exists(current.path), current.path != "/" {
                missing.append(current.path)
                current = current.deletingLastPathComponent()
            }
            for path in missing.reversed() {
                if mkdir(path, 0o700) != 0 && errno != EEXIST {
                    let reason = String(cString: strerror(errno))
                    throw SchemeCallbackError(.directoryUnavailable, "cannot create the callback socket directory \(path): \(reason)")
                }
            }
            checked.append(contentsOf: missing)
        }
        for path in Set(checked).sorted() {
            try checkPrivate(path)
        }
        return target
    }

    /// Whether something (a directory, a link, anything) is at `path`, without following links.
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Refuses a directory that is a link, belongs to another user, or grants group or others any
    /// access.
    static func checkPrivate(_ path: String) throws(SchemeCallbackError) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            throw SchemeCallbackError(.directoryUnavailable, "cannot read the callback socket directory \(path): \(reason)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw SchemeCallbackError(
                .unsafeDirectory,
                "\(path) is not a directory (a link or a file is there); Keyport will not pass sign-in callbacks through it. Remove it and try again")
        }
        let user = geteuid()
        guard info.st_uid == user else {
            throw SchemeCallbackError(
                .unsafeDirectory,
                "\(path) belongs to user \(info.st_uid), not to you (user \(user)); someone else could read the sign-in callbacks passed through it, so Keyport will not use it. Remove it, or set XDG_RUNTIME_DIR to a private directory")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw SchemeCallbackError(
                .unsafeDirectory,
                "\(path) is open to other users (mode \(String(mode, radix: 8))); sign-in callbacks passed through it could be read by them, so Keyport will not use it. Run: chmod 700 \(path)")
        }
    }

    /// A fresh socket path in `directory`: 128 random bits in hex, then `.sock`.
    static func newSocketPath(in directory: URL) throws(SchemeCallbackError) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let name = bytes.map { String(format: "%02x", $0) }.joined()
        let path = directory.appendingPathComponent("\(name).sock").path
        guard path.utf8.count <= maximumSocketPathLength else {
            throw SchemeCallbackError(
                .listenFailed,
                "the socket path \(path) is longer than the \(maximumSocketPathLength) bytes a Unix-domain socket allows; choose a shorter directory (or XDG_RUNTIME_DIR)")
        }
        return path
    }

    /// The sockets listeners wait on, in a stable order.
    static func sockets(in directory: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".sock") }.sorted().map { directory.appendingPathComponent($0).path }
    }

    /// Whether `path` is a socket that belongs to this user: only such a socket is handed a URL.
    static func isOwnSocket(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK && info.st_uid == geteuid()
    }
}
