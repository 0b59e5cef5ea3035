import Foundation
import KeyportDaemon
import KeyportInterfaces
import KeyportSystem
import Logging
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// keyportd takes one option: where it listens and keeps its files comes from the environment
// (KEYPORT_SOCKET, the XDG variables), as for its clients; KEYPORT_LOG sets the log level.
let usage = """
    usage: keyportd [--allow-scripted-agent] | keyportd --version
    Runs Keyport's per-user service in the foreground until SIGTERM or SIGINT.
      --allow-scripted-agent  let `keyport agent --auto` answer the person's questions by itself
                              (for demos and tests: whatever it is told to choose, it chooses)
    Environment: KEYPORT_SOCKET (the socket's path; default $XDG_RUNTIME_DIR/keyport/keyportd.sock,
    or $XDG_CACHE_HOME/keyport/run/keyportd.sock without it), KEYPORT_LOG (trace, debug,
    info, notice, warning, error, critical; default info). `man keyportd` has the rest.
    Started by systemd with socket activation, it serves the socket systemd passes.

    """
// keyportd's review of an exchanged document runs its program again, in a process of its own.
if Array(CommandLine.arguments.dropFirst()) == [ExchangeReview.argument] { ExchangeReview.run() }

var allowsScriptedAgent = false
for argument in CommandLine.arguments.dropFirst() {
    switch argument {
    case "--allow-scripted-agent": allowsScriptedAgent = true
    case "--help", "-h":
        FileHandle.standardError.write(Data(usage.utf8))
        exit(0)
    case "--version":
        print(KeyportRelease.version)
        exit(0)
    default:
        FileHandle.standardError.write(Data("keyportd: unexpected argument '\(argument)'\n\(usage)".utf8))
        exit(2)
    }
}

// Nobody needs to identify keyportd through /proc, and it holds exchanged documents and AutoFill's
// answers in memory: no core dumps, and no ptrace or /proc reading by the person's other
// processes (programs it starts are dumpable again: exec resets it).
if !Memory.makeUndumpable() { FileHandle.standardError.write(Data("keyportd: cannot make itself undumpable\n".utf8)) }

// Connections are descriptors: as many as the system allows (keyportd's own limits on
// connections, VarlinkConnectionLimits, stay below it).
DescriptorLimit.raise()

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
    let daemon = KeyportDaemon(
        locations: locations,
        listener: listener,
        allowsScriptedAgent: allowsScriptedAgent,
        environment: environment,
        logger: logger
    )
    if allowsScriptedAgent {
        logger.notice("a scripted agent may answer the person's questions (--allow-scripted-agent)")
    }
    let group = ServiceGroup(services: [daemon], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
    try await group.run()
} catch {
    logger.critical("keyportd cannot run: \(error)")
    exit(1)
}
