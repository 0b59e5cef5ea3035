import KeyportSystemCore
import VarlinkCore

/// A connection to keyportd, found where ``DaemonLocations`` says it listens.
///
/// Here the blocking connection, for programs that make a call and exit; KeyportInterfaces adds
/// swift-nio's (`withConnection`) for everything else.
package enum DaemonClient {
    /// The largest message keyportd and its clients exchange: a credential exchange carries a whole
    /// CXF document in one message, and real exports reach 50 MB.
    package static let maximumMessageSize = 64 << 20

    /// The largest message on keyportd's descriptor socket: its calls carry documents as
    /// descriptors, so their messages are small.
    package static let descriptorMessageSize = 1 << 20

    /// Connects to keyportd's descriptor socket (calls that pass descriptors) with a blocking
    /// connection.
    ///
    /// - Throws: ``DaemonError`` when keyportd is not running or its directory is not private;
    ///   ``VarlinkConnectionError`` when the connection fails otherwise.
    package static func connectForDescriptors(environment: [String: String]) throws -> VarlinkBlockingConnection {
        let locations = try DaemonLocations(environment: environment)
        do {
            return try VarlinkBlockingConnection(
                path: try locations.clientDescriptorSocket(),
                maximumMessageSize: descriptorMessageSize
            )
        } catch let error as VarlinkConnectionError where error.isRefused {
            throw DaemonError.noDescriptorSocket(locations)
        }
    }

    /// Connects to keyportd with a blocking connection.
    ///
    /// - Throws: ``DaemonError`` when keyportd is not running (saying how to start it) or its
    ///   directory is not private; ``VarlinkConnectionError`` when the connection fails otherwise.
    package static func connect(environment: [String: String]) throws -> VarlinkBlockingConnection {
        let locations = try DaemonLocations(environment: environment)
        do {
            return try VarlinkBlockingConnection(
                path: try locations.clientSocket(),
                maximumMessageSize: maximumMessageSize
            )
        } catch let error as VarlinkConnectionError where error.isRefused {
            throw DaemonError.notRunning(locations)
        }
    }
}
