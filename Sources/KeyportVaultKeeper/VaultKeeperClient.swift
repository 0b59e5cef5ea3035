import Foundation
import KeyportInterfaces
import KeyportSystem
import Varlink

/// A client of a Keyport vault's keeper (`org.keyport.Vault` on ``VaultLocations/vaultKeeper``):
/// `keyport vault` and the vault's AutoFill provider.
package enum VaultKeeperClient {
    /// Nothing listens on the keeper's socket.
    package struct NotRunning: Error, CustomStringConvertible {
        /// The command that starts it, naming the vault unless it is the default one.
        package var unlock = "keyport vault unlock"
        package var description: String { "the vault's keeper is not running; start it with `\(unlock)`" }
    }

    /// `keyport vault unlock`, with `--vault PATH` when `locations` are another vault's than the
    /// default: what the person runs to open this one.
    package static func unlockCommand(_ locations: VaultLocations) -> String {
        locations.vault == locations.defaultVault
            ? "keyport vault unlock" : "keyport vault unlock --vault '\(locations.vault)'"
    }

    /// The keeper on the socket serves another vault than the one meant: it was started for
    /// another file, by someone else than Keyport.
    package struct WrongKeeper: Error, CustomStringConvertible {
        package var description: String
    }

    /// Keyport Vault's keeper's program: `keyport-vault` installed beside the calling program
    /// (`keyport-cli`, `keyport-vault` itself), links resolved, as `/proc/PID/exe` shows it.
    static let keeperProgram = Executable.beside("keyport-vault")

    /// Calls `method` with `parameters` and returns its reply, as ``call(_:_:_:more:each:)``
    /// does.
    package static func call<Method: VarlinkMethodType>(
        _ locations: VaultLocations,
        _ method: Method.Type,
        _ parameters: Method.Parameters
    ) async throws -> Method.Reply {
        try await call(locations, Method.name, RawJSON(encoding: parameters)).decode(Method.Reply.self)
    }

    /// Calls `method`, once the process on the socket is Keyport Vault's keeper beside this
    /// program, started for `locations.vault` (``WrongKeeper`` else: a
    /// passphrase or an item is never given to a keeper of another file); with `more`, `each`
    /// hears every reply but the last, which is returned.
    ///
    /// - Throws: ``NotRunning``; ``WrongKeeper``; the keeper's ``VarlinkError`` (`Locked`,
    ///   `Failed`, `WrongVault`); ``VarlinkConnectionError``.
    package static func call(
        _ locations: VaultLocations,
        _ method: String,
        _ parameters: RawJSON = .emptyObject,
        more: Bool = false,
        each: ((RawJSON) throws -> Void)? = nil
    ) async throws -> RawJSON {
        do {
            return try await VarlinkConnection.withConnection(
                path: locations.keeperSocket,
                maximumMessageSize: VaultKeeper.maximumMessageSize
            ) {
                connection in
                // Whoever answers on the socket must be Keyport Vault's keeper as installed beside
                // this program, started for this vault: a process that took the socket's name, or
                // a keeper of another file, is given neither a passphrase nor an item, whatever it
                // says. Both are read from the kernel (the pinned peer's program and the `--vault`
                // its command line was started with, which that program does not rewrite), so no
                // call is added to each request.
                try check(try await connection.peerProcess(), serves: locations)
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
            // The keeper does not know how the person named the vault; this side does.
            throw VarlinkError(
                VaultKeeper.Locked(
                    message: "the vault \(locations.vault) is locked; unlock it with `\(unlockCommand(locations))`"
                )
            )
        }
    }

    /// Throws ``WrongKeeper`` unless `peer`, the process on the keeper's socket, is Keyport
    /// Vault's keeper beside this program, started for `locations.vault`.
    static func check(_ peer: PinnedProcess, serves locations: VaultLocations) throws {
        let program = try peer.executable
        guard program == Self.keeperProgram else {
            throw WrongKeeper(
                description:
                    "\(program) (process \(peer.pid)) answers on \(locations.keeperSocket), not Keyport Vault's keeper (\(Self.keeperProgram ?? "keyport-vault beside this program")); it was not started by Keyport: stop it (kill \(peer.pid)), and `keyport vault unlock` starts the keeper"
            )
        }
        let arguments = try peer.arguments
        let served = arguments.firstIndex(of: "--vault").flatMap {
            arguments.index(after: $0) < arguments.endIndex ? arguments[arguments.index(after: $0)] : nil
        }
        guard let served, FilePaths.sameFile(served, locations.vault) else {
            throw WrongKeeper(
                description:
                    "the vault's keeper on \(locations.keeperSocket) (process \(peer.pid)) serves \(served ?? "no vault it names"), not \(locations.vault)\(FileManager.default.fileExists(atPath: locations.vault) ? "; it was not started for this vault: stop it (kill \(peer.pid)), and `keyport vault unlock` starts the right one" : ", which does not exist (`keyport vault init` makes it)")"
            )
        }
    }

    /// A blocking connection to the keeper of `locations.vault`, once the process on its socket
    /// is that keeper (as ``call(_:_:_:more:each:)`` checks).
    ///
    /// - Throws: ``NotRunning``; ``WrongKeeper``; ``VarlinkConnectionError``.
    static func blockingConnection(_ locations: VaultLocations) throws -> VarlinkBlockingConnection {
        let connection: VarlinkBlockingConnection
        do {
            connection = try VarlinkBlockingConnection(
                path: locations.keeperSocket,
                maximumMessageSize: VaultKeeper.maximumMessageSize
            )
        } catch {
            if error.isRefused { throw NotRunning(unlock: unlockCommand(locations)) }
            throw error
        }
        let peer: PinnedProcess
        do {
            peer = try PinnedProcess(peerOf: connection.socket)
        } catch {
            throw VarlinkConnectionError("cannot tell which process serves \(locations.keeperSocket): \(error)")
        }
        try check(peer, serves: locations)
        return connection
    }

    /// The arguments `keyport-vault` runs with as the keeper of `vault` (an absolute path): what
    /// ``startIfNeeded(_:from:)`` starts, and what `keyport vault register` writes into the
    /// vault's manifest as a helper, so keyportd knows that keeper as the vault's app.
    package static func keeperArguments(for vault: String) -> [String] { ["keeper", "--vault", vault] }

    /// Starts `keyport-vault keeper --vault VAULT` from `directory` (where the calling program was
    /// installed) when nothing answers on the keeper's socket, and waits up to 10 s for it to
    /// listen. It runs in its own process group with no terminal, and outlives the caller. It
    /// serves `locations.vault` alone, on `locations.keeperSocket` (``VaultLocations/forVault(_:)``),
    /// which its environment names.
    ///
    /// - Throws: ``WrongKeeper`` when a keeper of another vault answers there.

    package static func startIfNeeded(_ locations: VaultLocations, from directory: URL) async throws {
        do {
            _ = try await call(locations, VaultKeeper.Status.name)
            return
        } catch is NotRunning {
            // Started below.
        }
        let program = directory.appendingPathComponent("keyport-vault").path
        var environment = ProcessInfo.processInfo.environment
        environment[VaultLocations.socketVariable] = locations.keeperSocket
        _ = try ChildProcess(
            executable: program,
            arguments: keeperArguments(for: locations.vault),
            environment: environment
        )
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if (try? await call(locations, VaultKeeper.Status.name)) != nil { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw VarlinkConnectionError("the vault's keeper \(program) did not start listening within 10 s")
    }
}
