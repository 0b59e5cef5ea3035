import KeyportErrors
import KeyportSystemCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why keyportd cannot start, or a client cannot find it: what happened and what to do.
package struct DaemonError: RecordedError {
    /// A stable name for why.
    package typealias Code = ErrorCodeOf<DaemonError>

    package var record: ErrorRecord<Code>

    package init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
    }
}

extension ErrorCodeOf<DaemonError> {
    /// Nothing listens at keyportd's socket.
    package static let notRunning = Self(rawValue: "not-running")
    /// Nothing listens at the descriptor socket: keyportd is not running, or is older than this
    /// program.
    package static let noDescriptorSocket = Self(rawValue: "no-descriptor-socket")
    /// `KEYPORT_SOCKET` names no usable path.
    package static let misconfigured = Self(rawValue: "misconfigured")
    /// The socket's directory is not private to this user, or cannot be made or read.
    package static let unsafeDirectory = Self(rawValue: "unsafe-directory")
}

/// Where keyportd listens and keeps its files, for the daemon and its clients alike.
///
/// - The socket: `$KEYPORT_SOCKET` when set (an absolute path), else `keyportd.sock` in Keyport's
///   per-user runtime directory (`$XDG_RUNTIME_DIR/keyport`, or `~/.cache/keyport/run` without
///   one; ``BaseDirectories/keyportRuntime``). The directory must be private to the user
///   (``PrivateDirectory``): the daemon creates it 0700 and checks it, a client checks it before
///   connecting, so neither talks through a directory another user could have made.
/// - The descriptor socket, beside it: the socket's name with `-fd` before `.sock`
///   (`keyportd-fd.sock`), where calls that pass descriptors go (a credential exchange's document,
///   as a sealed memory file). keyportd makes it as it starts, also when systemd made the other:
///   only an exporter that called `RequestExport`, and importers keyportd started, use it.
/// - Settings: `$XDG_CONFIG_HOME/keyport`; state: `$XDG_STATE_HOME/keyport`.
package struct DaemonLocations: Hashable, Sendable {
    /// The socket's path.
    package var socket: String
    /// The descriptor socket's path.
    package var descriptorSocket: String
    /// Where Settings live (enabled providers, their order).
    package var configuration: String
    /// Where state lives (the credential identity store).
    package var state: String
    /// The variable that overrides the socket's path.
    package static let socketVariable = "KEYPORT_SOCKET"
    /// The socket's name in the runtime directory.
    package static let socketName = "keyportd.sock"

    /// The locations `environment` gives.
    ///
    /// - Throws: ``DaemonError`` when `KEYPORT_SOCKET` is set but not an absolute path, or the
    ///   path is too long for a Unix-domain socket.
    package init(environment: [String: String]) throws(DaemonError) {
        let base = BaseDirectories(environment: environment)
        if let chosen = environment[Self.socketVariable], !chosen.isEmpty {
            guard chosen.hasPrefix("/") else {
                throw DaemonError(.misconfigured, "\(Self.socketVariable) must be an absolute path, not '\(chosen)'")
            }
            socket = FilePaths.standardized(chosen)
        } else {
            socket = FilePaths.join(base.keyportRuntime, Self.socketName)
        }
        let stem = socket.hasSuffix(".sock") ? String(socket.dropLast(5)) : socket
        descriptorSocket = stem + "-fd.sock"
        guard descriptorSocket.utf8.count <= UnixSocketPath.maximumLength else {
            throw DaemonError(
                .misconfigured,
                "the socket path \(descriptorSocket) (beside \(socket)) is longer than the \(UnixSocketPath.maximumLength) bytes a Unix-domain socket allows; set \(Self.socketVariable) to a shorter path"
            )
        }
        configuration = FilePaths.join(base.configHome, "keyport")
        state = FilePaths.join(base.stateHome, "keyport")
    }

    /// Makes sure the socket's directory exists (when `create`) and is private to this user.
    ///
    /// - Returns: `false` when it does not exist and `create` is false (nobody is listening).
    package func prepareSocketDirectory(create: Bool) throws(DaemonError) -> Bool {
        do {
            return try PrivateDirectory.prepare(
                FilePaths.parent(socket),
                contents: "requests to keyportd",
                create: create
            ) != nil
        } catch {
            throw DaemonError(.unsafeDirectory, error.message)
        }
    }

    /// The socket a client may connect to: its directory is private to this user and the socket
    /// is theirs (a socket in a directory another user controls could be theirs).
    ///
    /// - Throws: ``DaemonError/notRunning(_:)`` when there is no such socket; ``DaemonError``
    ///   when the directory is not private.
    package func clientSocket() throws(DaemonError) -> String {
        guard try prepareSocketDirectory(create: false), UnixSocketPath.isOwnSocket(socket) else {
            throw DaemonError.notRunning(self)
        }
        return socket
    }

    /// The descriptor socket, checked as ``clientSocket()`` checks the other.
    ///
    /// - Throws: ``DaemonError/notRunning(_:)`` when there is no such socket; ``DaemonError``
    ///   when the directory is not private.
    package func clientDescriptorSocket() throws(DaemonError) -> String {
        guard try prepareSocketDirectory(create: false), UnixSocketPath.isOwnSocket(descriptorSocket) else {
            throw DaemonError.noDescriptorSocket(self)
        }
        return descriptorSocket
    }
}

extension DaemonError {
    /// Nothing listens at `locations.descriptorSocket`: keyportd is not running, or one from
    /// before the descriptor socket is.
    package static func noDescriptorSocket(_ locations: DaemonLocations) -> DaemonError {
        DaemonError(
            .noDescriptorSocket,
            "nothing listens at \(locations.descriptorSocket), where exchanges pass their documents: keyportd is not running (start it with `keyportd`, or `systemctl --user enable --now keyportd.socket`), or a keyportd older than this program runs (restart it: `systemctl --user restart keyportd.service`)"
        )
    }

    /// keyportd is not listening at `locations.socket`.
    package static func notRunning(_ locations: DaemonLocations) -> DaemonError {
        DaemonError(
            .notRunning,
            "keyportd is not running (nothing listens at \(locations.socket)); start it with `keyportd`, or `systemctl --user enable --now keyportd.socket`"
        )
    }
}
