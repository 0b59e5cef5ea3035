import Foundation
import KeyportInterfaces
import KeyportSystem
import Varlink

/// A client of a Keyport vault's agent (`org.keyport.Vault` on ``DaemonLocations/vaultAgent``):
/// `keyport vault` and the vault's AutoFill provider.
package enum VaultAgentClient {
    /// Nothing listens on the agent's socket.
    package struct NotRunning: Error, CustomStringConvertible {
        /// The command that starts it, naming the vault unless it is the default one.
        package var unlock = "keyport vault unlock"
        package var description: String { "the vault's agent is not running; start it with `\(unlock)`" }
    }

    /// `keyport vault unlock`, with `--vault PATH` when `locations` are another vault's than the
    /// default: what the person runs to open this one.
    package static func unlockCommand(_ locations: DaemonLocations) -> String {
        locations.vault == locations.defaultVault
            ? "keyport vault unlock" : "keyport vault unlock --vault '\(locations.vault)'"
    }

    /// The agent on the socket serves another vault than the one meant: it was started for
    /// another file, by someone else than Keyport.
    package struct WrongAgent: Error, CustomStringConvertible {
        package var description: String
    }

    /// Keyport Vault's agent's program: `keyport-vault` installed beside the calling program
    /// (`keyport-cli`, `keyport-vault` itself), links resolved, as `/proc/PID/exe` shows it.
    static let agentProgram: String? = {
        let own = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let program = own.appendingPathComponent("keyport-vault").resolvingSymlinksInPath().path
        return FileManager.default.isExecutableFile(atPath: program) ? program : nil
    }()

    /// Calls `method` with `parameters` and returns its reply, as ``call(_:_:_:more:each:)``
    /// does.
    package static func call<Method: VarlinkMethodType>(
        _ locations: DaemonLocations,
        _ method: Method.Type,
        _ parameters: Method.Parameters
    ) async throws -> Method.Reply {
        try await call(locations, Method.name, RawJSON(encoding: parameters)).decode(Method.Reply.self)
    }

    /// Calls `method`, once the process on the socket is Keyport Vault's agent beside this
    /// program, started for `locations.vault` (``WrongAgent`` else: a
    /// passphrase or an item is never given to an agent of another file); with `more`, `each`
    /// hears every reply but the last, which is returned.
    ///
    /// - Throws: ``NotRunning``; ``WrongAgent``; the agent's ``VarlinkError`` (`Locked`,
    ///   `Failed`, `WrongVault`); ``VarlinkConnectionError``.
    package static func call(
        _ locations: DaemonLocations,
        _ method: String,
        _ parameters: RawJSON = .emptyObject,
        more: Bool = false,
        each: ((RawJSON) throws -> Void)? = nil
    ) async throws -> RawJSON {
        do {
            return try await VarlinkConnection.withConnection(
                path: locations.vaultAgent,
                maximumMessageSize: VaultKeeper.maximumMessageSize
            ) {
                connection in
                // Whoever answers on the socket must be Keyport Vault's agent as installed beside
                // this program, started for this vault: a process that took the socket's name, or
                // an agent of another file, is given neither a passphrase nor an item, whatever it
                // says. Both are read from the kernel (the pinned peer's program and the `--vault`
                // its command line was started with, which that program does not rewrite), so no
                // call is added to each request.
                let peer = try await connection.peerProcess()
                let program = try peer.executable
                guard program == Self.agentProgram else {
                    throw WrongAgent(
                        description:
                            "\(program) (process \(peer.pid)) answers on \(locations.vaultAgent), not Keyport Vault's agent (\(Self.agentProgram ?? "keyport-vault beside this program")); it was not started by Keyport: stop it (kill \(peer.pid)), and `keyport vault unlock` starts the agent"
                    )
                }
                let arguments = try peer.arguments
                let served = arguments.firstIndex(of: "--vault").flatMap {
                    arguments.index(after: $0) < arguments.endIndex ? arguments[arguments.index(after: $0)] : nil
                }
                guard let served, FilePaths.sameFile(served, locations.vault) else {
                    throw WrongAgent(
                        description:
                            "the vault's agent on \(locations.vaultAgent) (process \(peer.pid)) serves \(served ?? "no vault it names"), not \(locations.vault)\(FileManager.default.fileExists(atPath: locations.vault) ? "; it was not started for this vault: stop it (kill \(peer.pid)), and `keyport vault unlock` starts the right one" : ", which does not exist (`keyport vault init` makes it)")"
                    )
                }
                guard more else { return try await connection.call(method, parameters) }
                try await connection.send(VarlinkCall(method: method, parameters: parameters, more: true))
                while true {
                    let (reply, continues) = try await connection.nextReply()
                    guard continues else { return reply }
                    try each?(reply)
                }
            }
        } catch let error as VarlinkConnectionError where error.isRefused {
            throw NotRunning(unlock: unlockCommand(locations))
        } catch let error as VarlinkError where error.name == VaultKeeper.Locked.name {
            // The agent does not know how the person named the vault; this side does.
            throw VarlinkError(
                VaultKeeper.Locked(
                    message: "the vault \(locations.vault) is locked; unlock it with `\(unlockCommand(locations))`"
                )
            )
        }
    }

    /// The arguments `keyport-vault` runs with as the agent of `vault` (an absolute path): what
    /// ``startIfNeeded(_:from:)`` starts, and what `keyport vault register` writes into the
    /// vault's manifest as a helper, so keyportd knows that agent as the vault's app.
    package static func agentArguments(for vault: String) -> [String] { ["agent", "--vault", vault] }

    /// Starts `keyport-vault agent --vault VAULT` from `directory` (where the calling program was
    /// installed) when nothing answers on the agent's socket, and waits up to 10 s for it to
    /// listen. It runs in its own process group with no terminal, and outlives the caller. It
    /// serves `locations.vault` alone, on `locations.vaultAgent` (``DaemonLocations/forVault(_:)``),
    /// which its environment names.
    ///
    /// - Throws: ``WrongAgent`` when an agent of another vault answers there.

    package static func startIfNeeded(_ locations: DaemonLocations, from directory: URL) async throws {
        do {
            _ = try await call(locations, VaultKeeper.Status.name)
            return
        } catch is NotRunning {
            // Started below.
        }
        let program = directory.appendingPathComponent("keyport-vault").path
        var environment = ProcessInfo.processInfo.environment
        environment[DaemonLocations.vaultSocketVariable] = locations.vaultAgent
        _ = try ChildProcess(
            executable: program,
            arguments: agentArguments(for: locations.vault),
            environment: environment
        )
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if (try? await call(locations, VaultKeeper.Status.name)) != nil { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw VarlinkConnectionError("the vault's agent \(program) did not start listening within 10 s")
    }
}
