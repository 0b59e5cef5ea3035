import Foundation
import Logging
import ServiceLifecycle
import Varlink

/// keyportd: the per-user service that stands between apps as the system does on Apple platforms.
///
/// It serves Varlink on one Unix-domain socket (``DaemonLocations``), or on the socket systemd
/// hands it when socket-activated, until a graceful shutdown (SIGTERM, SIGINT) ends it; the
/// socket file it made is removed then.
package struct KeyportDaemon: Service {
    /// Where to listen.
    package enum Listener: Sendable, Equatable {
        /// Bind the socket at the locations' path.
        case socketFile
        /// A socket that is already bound and listening (systemd socket activation: descriptor 3).
        case descriptor(Int32)
    }

    /// The largest message keyportd reads or a client of it accepts: a credential exchange carries
    /// a whole CXF document in one message, and real exports reach 50 MB.
    package static let maximumMessageSize = 64 << 20

    /// What `org.varlink.service.GetInfo` says.
    package static let info = VarlinkServiceInfo(
        vendor: "Keyport",
        product: "keyportd",
        version: "0.1",
        // Keyport has no web site of its own to name here.
        url: ""
    )

    package let locations: DaemonLocations
    package let listener: Listener
    package let logger: Logger

    package init(locations: DaemonLocations, listener: Listener, logger: Logger) {
        self.locations = locations
        self.listener = listener
        self.logger = logger
    }

    package func run() async throws {
        let server = VarlinkServer(info: Self.info, interfaces: [], maximumMessageSize: Self.maximumMessageSize)
        let logger = logger
        switch listener {
        case .socketFile:
            _ = try locations.prepareSocketDirectory(create: true)
            let path = locations.socket.path
            try await cancelWhenGracefulShutdown {
                try await server.serve(path: path) { logger.info("listening", metadata: ["socket": "\(path)"]) }
            }
        case .descriptor(let descriptor):
            try await cancelWhenGracefulShutdown {
                try await server.serve(listeningDescriptor: descriptor) {
                    logger.info("listening on the socket systemd passed", metadata: ["descriptor": "\(descriptor)"])
                }
            }
        }
        logger.info("stopped")
    }
}
