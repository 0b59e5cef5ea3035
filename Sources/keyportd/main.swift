import Foundation
import KeyportDaemon
import KeyportInterfaces
import Logging
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// keyportd takes no arguments: where it listens and keeps its files comes from the environment
// (KEYPORT_SOCKET, the XDG variables), as for its clients; KEYPORT_LOG sets the log level.
let arguments = CommandLine.arguments.dropFirst()
if !arguments.isEmpty {
    let help = arguments.contains("--help") || arguments.contains("-h")
    let usage = """
        usage: keyportd
        Runs Keyport's per-user service in the foreground until SIGTERM or SIGINT.
        Environment: KEYPORT_SOCKET (the socket's path; default $XDG_RUNTIME_DIR/keyport/keyportd.sock),
        KEYPORT_LOG (trace, debug, info, notice, warning, error, critical; default info).
        Started by systemd with socket activation, it serves the socket systemd passes.

        """
    FileHandle.standardError.write(
        Data((help ? usage : "keyportd: unexpected argument '\(arguments.first!)'\n" + usage).utf8)
    )
    exit(help ? 0 : 2)
}

let environment = ProcessInfo.processInfo.environment
let level = environment["KEYPORT_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .info
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = level
    return handler
}
let logger = Logger(label: "keyportd")

// systemd socket activation (sd_listen_fds): the socket is descriptor 3 when LISTEN_PID is ours.
// The variables are removed so that programs keyportd starts do not take the socket for theirs.
var listener = KeyportDaemon.Listener.socketFile
if environment["LISTEN_PID"].flatMap(Int32.init) == getpid(), let count = environment["LISTEN_FDS"].flatMap(Int.init),
    count >= 1
{
    if count > 1 { logger.warning("systemd passed \(count) sockets; keyportd serves the first") }
    listener = .descriptor(3)
    for variable in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(variable) }
}

do {
    let locations = try DaemonLocations(environment: environment)
    let daemon = KeyportDaemon(locations: locations, listener: listener, environment: environment, logger: logger)
    let group = ServiceGroup(services: [daemon], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
    try await group.run()
} catch {
    logger.critical("keyportd cannot run: \(error)")
    exit(1)
}
