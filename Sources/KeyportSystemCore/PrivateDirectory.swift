import KeyportErrors

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A directory that must be this user's alone: where sockets are bound that hand over secrets
/// (sign-in callbacks today, the daemon's socket next).
///
/// Whoever can bind in such a directory can receive what is meant for us, and whoever can replace
/// it can redirect us; so each directory checked must be a real directory (not a link), belong to
/// the effective user, and grant group and others nothing (mode 0700 or stricter).
package enum PrivateDirectory {
    /// Why a directory cannot be used. `message` names the path and what to do.
    package struct Unusable: RecordedError {
        /// A stable name for why.
        package typealias Code = ErrorCodeOf<Unusable>

        package var record: ErrorRecord<Code>

        package init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
            record = ErrorRecord(code, message, file: file, line: line)
        }
    }

    /// Makes sure `directory` exists (when `create`) and is private, and so are `alsoPrivate`
    /// (directories above it that the caller owns) and every level this call creates.
    ///
    /// - Parameters:
    ///   - contents: what passes through the directory, for the messages ("the sign-in callbacks
    ///     passed through it").
    ///   - create: create what is missing, each new directory with mode 0700.
    /// - Returns: the standardized directory, or `nil` when it does not exist and `create` is false.
    package static func prepare(
        _ directory: String,
        alsoPrivate: [String] = [],
        contents: String,
        create: Bool
    ) throws(Unusable) -> String? {
        let target = FilePaths.standardized(directory)
        var checked = [target] + alsoPrivate.map(FilePaths.standardized)
        if !exists(target) {
            guard create else { return nil }
            var missing: [String] = []
            var current = target
            while !exists(current), current != "/" {
                missing.append(current)
                current = FilePaths.parent(current)
            }
            for path in missing.reversed() where mkdir(path, 0o700) != 0 && errno != EEXIST {
                let reason = String(cString: strerror(errno))
                throw Unusable(
                    .unavailable,
                    "cannot create the directory \(path) for \(contents): \(reason)"
                )
            }
            checked.append(contentsOf: missing)
        }
        for path in Set(checked).sorted() {
            do {
                try checkPrivate(path, contents: contents)
            } catch  where !create && !exists(target) {
                // Removed since it was seen: it does not exist, as when it was never there.
                return nil
            }
        }
        return target
    }

    /// Whether something (a directory, a link, anything) is at `path`, without following links.
    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Refuses a directory that is a link, belongs to another user, or grants group or others any
    /// access.
    package static func checkPrivate(_ path: String, contents: String) throws(Unusable) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            throw Unusable(
                .unavailable,
                "cannot read the directory \(path) for \(contents): \(reason)"
            )
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw Unusable(
                .unsafe,
                "\(path) is not a directory (a link or a file is there); Keyport will not pass \(contents) through it. Remove it and try again"
            )
        }
        let user = geteuid()
        guard info.st_uid == user else {
            throw Unusable(
                .unsafe,
                "\(path) belongs to user \(info.st_uid), not to you (user \(user)); someone else could read \(contents) passed through it, so Keyport will not use it. Remove it, or set XDG_RUNTIME_DIR to a private directory"
            )
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw Unusable(
                .unsafe,
                "\(path) is open to other users (mode \(String(mode, radix: 8))); \(contents) passed through it could be read by them, so Keyport will not use it. Run: chmod 700 \(path)"
            )
        }
    }
}

extension ErrorCodeOf<PrivateDirectory.Unusable> {
    /// Another user's, open to others, or not a directory.
    package static let unsafe = Self(rawValue: "unsafe")
    /// It could not be created or examined.
    package static let unavailable = Self(rawValue: "unavailable")
}

/// Unix-domain socket paths.
package enum UnixSocketPath {
    /// The longest path a socket address holds (`sun_path` is 108 bytes with its NUL).
    package static let maximumLength = 107

    /// Whether `path` is a socket (a stale one from an earlier run, say), not following links.
    package static func isSocket(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK
    }

    /// Whether `path` is a socket that belongs to this user: only such a socket is handed a secret.
    package static func isOwnSocket(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK && info.st_uid == geteuid()
    }
}
