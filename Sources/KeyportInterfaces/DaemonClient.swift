// KeyportInterfaces is KeyportInterfacesCore (names, parameter types, where keyportd listens, the
// blocking client) with the definitions' text and swift-nio's client; users see both.
@_exported import KeyportInterfacesCore
import KeyportSystem
import Varlink

extension DaemonClient {
    /// Connects to keyportd, runs `body`, and closes the connection.
    ///
    /// - Throws: ``DaemonError`` when keyportd is not running (saying how to start it) or its
    ///   directory is not private; what `body` throws.
    package static func withConnection<T>(
        environment: [String: String],
        _ body: (VarlinkConnection) async throws -> T
    ) async throws -> T {
        let locations = try DaemonLocations(environment: environment)
        do {
            return try await VarlinkConnection.withConnection(
                path: try locations.clientSocket(),
                maximumMessageSize: maximumMessageSize,
                body
            )
        } catch let error as VarlinkConnectionError where error.isRefused {
            throw DaemonError.notRunning(locations)
        }
    }

    /// Sends `call` with `descriptors` attached on keyportd's descriptor socket, then runs `body`
    /// with that connection (swift-nio's from there on: the replies carry no descriptors) to
    /// read the replies, and closes it.
    ///
    /// - Throws: ``DaemonError`` when keyportd is not running; ``VarlinkConnectionError``; what
    ///   `body` throws.
    package static func withDescriptorConnection<T>(
        environment: [String: String],
        sending call: VarlinkCall,
        descriptors: [Int32],
        _ body: (VarlinkConnection) async throws -> T
    ) async throws -> T {
        let connection = try connectForDescriptors(environment: environment)
        try connection.send(call, descriptors: descriptors)
        return try await VarlinkConnection.withConnection(
            connectedDescriptor: connection.releaseSocket(),
            maximumMessageSize: descriptorMessageSize,
            body
        )
    }
}
