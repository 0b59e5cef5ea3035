import Foundation
import KeyportSystem
import Varlink

/// A client of a Keyport vault's agent (`org.keyport.Vault` on ``DaemonLocations/vaultAgent``):
/// `keyport vault` and the vault's AutoFill provider.
package enum VaultAgentClient {
    /// Nothing listens on the agent's socket.
    package struct NotRunning: Error, CustomStringConvertible {
        package var description: String { "the vault's agent is not running; start it with `keyport vault unlock`" }
    }

    /// Calls `method`; with `more`, `each` hears every reply but the last, which is returned.
    ///
    /// - Throws: ``NotRunning``; the agent's ``VarlinkError`` (`Locked`, `Failed`);
    ///   ``VarlinkConnectionError``.
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
                maximumMessageSize: VaultAgent.maximumMessageSize
            ) {
                connection in
                guard more else { return try await connection.call(method, parameters) }
                try await connection.send(VarlinkCall(method: method, parameters: parameters, more: true))
                while true {
                    let (reply, continues) = try await connection.nextReply()
                    guard continues else { return reply }
                    try each?(reply)
                }
            }
        } catch let error as VarlinkConnectionError where error.isRefused {
            throw NotRunning()
        }
    }

    /// Starts `keyport-vault agent` from `directory` (where the calling program was installed)
    /// when nothing answers on the agent's socket, and waits up to 10 s for it to listen. It runs
    /// in its own process group with no terminal, and outlives the caller. It listens on
    /// `locations.vaultAgent` (``DaemonLocations/forVault(_:)``), which its environment names.
    package static func startIfNeeded(_ locations: DaemonLocations, from directory: URL) async throws {
        if (try? await call(locations, VaultAgent.status)) != nil { return }
        let program = directory.appendingPathComponent("keyport-vault").path
        var environment = ProcessInfo.processInfo.environment
        environment[DaemonLocations.vaultSocketVariable] = locations.vaultAgent
        _ = try ChildProcess(executable: program, arguments: ["agent"], environment: environment)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if (try? await call(locations, VaultAgent.status)) != nil { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw VarlinkConnectionError("the vault's agent \(program) did not start listening within 10 s")
    }
}
