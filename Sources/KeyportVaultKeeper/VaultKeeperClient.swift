import Foundation
import KeyportInterfaces
import KeyportSystem
@_exported import KeyportVaultKeeperCore
import Varlink

/// The keeper's client as swift-nio's connections make it: what `keyport vault`, the vault's
/// provider and its importer call from async code.
extension VaultKeeperClient {
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
            throw locked(locations)
        }
    }

    /// Starts `keyport-vault keeper --vault VAULT`, the keeper installed beside this program
    /// (``keeperProgram``, the one its clients accept), when nothing answers on the keeper's
    /// socket, and waits up to 10 s for it to listen. It runs in its own process group with no
    /// terminal, and outlives the caller. It serves `locations.vault` alone, on
    /// `locations.keeperSocket` (``VaultLocations/forVault(_:)``), which its environment names.
    ///
    /// - Throws: ``WrongKeeper`` when a keeper of another vault answers there.
    package static func startIfNeeded(_ locations: VaultLocations) async throws {
        do {
            _ = try await call(locations, VaultKeeper.Status.name)
            return
        } catch is NotRunning {
            // Started below.
        }
        guard let program = keeperProgram else {
            throw VarlinkConnectionError(
                .notStarted,
                "keyport-vault is not installed beside this program (\(Executable.own ?? Executable.running)), so the vault's keeper cannot be started"
            )
        }
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
        throw VarlinkConnectionError(.notStarted, "the vault's keeper \(program) did not start listening within 10 s")
    }
}
