import KeyportSystem
import Varlink

/// A connection to keyportd, found where ``DaemonLocations`` says it listens.
package enum DaemonClient {
    /// The largest message keyportd and its clients exchange: a credential exchange carries a whole
    /// CXF document in one message, and real exports reach 50 MB.
    package static let maximumMessageSize = 64 << 20

    /// Connects to keyportd, runs `body`, and closes the connection.
    ///
    /// - Throws: ``DaemonError`` when keyportd is not running (saying how to start it) or its
    ///   directory is not private; what `body` throws.
    package static func withConnection<T>(
        environment: [String: String],
        _ body: (VarlinkConnection) async throws -> T
    ) async throws -> T {
        let locations = try DaemonLocations(environment: environment)
        // Checked before connecting: a socket in a directory another user controls could be theirs.
        guard try locations.prepareSocketDirectory(create: false), UnixSocketPath.isOwnSocket(locations.socket.path)
        else {
            throw DaemonError.notRunning(locations)
        }
        do {
            return try await VarlinkConnection.withConnection(
                path: locations.socket.path,
                maximumMessageSize: maximumMessageSize,
                body
            )
        } catch let error as VarlinkConnectionError where error.isRefused {
            throw DaemonError.notRunning(locations)
        }
    }
}

extension DaemonError {
    /// keyportd is not listening at `locations.socket`.
    static func notRunning(_ locations: DaemonLocations) -> DaemonError {
        DaemonError(
            "keyportd is not running (nothing listens at \(locations.socket.path)); start it with `keyportd`, or `systemctl --user enable --now keyportd.socket`"
        )
    }
}
