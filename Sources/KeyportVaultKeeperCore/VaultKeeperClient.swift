import KeyportEncoding
import KeyportSystemCore
import VarlinkCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A client of a Keyport vault's keeper (`org.keyport.Vault` on ``VaultLocations/keeperSocket``):
/// `keyport vault`, the vault's AutoFill provider, its importer, and the `keyport` front's
/// `vault show`. This part needs only the standard library: the blocking connection, the check of
/// who answers on the socket, and what a person reads when the keeper refuses.
package enum VaultKeeperClient {
    /// Nothing listens on the keeper's socket.
    package struct NotRunning: Error, CustomStringConvertible {
        /// The command that starts it, naming the vault unless it is the default one.
        package var unlock = "keyport vault unlock"
        package var description: String { "the vault's keeper is not running; start it with `\(unlock)`" }

        package init(unlock: String) {
            self.unlock = unlock
        }
    }

    /// The keeper on the socket serves another vault than the one meant: it was started for
    /// another file, by someone else than Keyport.
    package struct WrongKeeper: Error, CustomStringConvertible {
        package var description: String
    }

    /// `keyport vault unlock`, with `--vault PATH` when `locations` are another vault's than the
    /// default: what the person runs to open this one.
    package static func unlockCommand(_ locations: VaultLocations) -> String {
        locations.vault == locations.defaultVault
            ? "keyport vault unlock" : "keyport vault unlock --vault '\(locations.vault)'"
    }

    /// The keeper's `Locked`, saying how the person opens this vault: the keeper does not know how
    /// the person named the vault; its client does.
    package static func locked(_ locations: VaultLocations) -> VarlinkError {
        VarlinkError(
            VaultKeeper.Locked(
                message: "the vault \(locations.vault) is locked; unlock it with `\(unlockCommand(locations))`"
            )
        )
    }

    /// Keyport Vault's keeper's program: `keyport-vault` installed beside the calling program
    /// (`keyport`, `keyport-cli`, `keyport-vault` itself), links resolved, as `/proc/PID/exe`
    /// shows it.
    package static let keeperProgram = Executable.beside("keyport-vault")

    /// The arguments `keyport-vault` runs with as the keeper of `vault` (an absolute path): what
    /// `startIfNeeded` starts, and what `keyport vault register` writes into the vault's manifest
    /// as a helper, so keyportd knows that keeper as the vault's app.
    package static func keeperArguments(for vault: String) -> [String] { ["keeper", "--vault", vault] }

    /// Throws ``WrongKeeper`` unless `peer`, the process on the keeper's socket, is Keyport
    /// Vault's keeper beside this program, started for `locations.vault`.
    ///
    /// Whoever answers on the socket must be that keeper: a process that took the socket's name,
    /// or a keeper of another file, is given neither a passphrase nor an item, whatever it says.
    /// Both are read from the kernel (the pinned peer's program, and the `--vault` its command
    /// line was started with, which that program does not rewrite), so no call is added to each
    /// request.
    package static func check(_ peer: PinnedProcess, serves locations: VaultLocations) throws {
        let program = try peer.executable
        guard program == Self.keeperProgram else {
            throw WrongKeeper(
                description:
                    "\(program) (process \(peer.pid)) answers on \(locations.keeperSocket), not Keyport Vault's keeper (\(Self.keeperProgram ?? "keyport-vault beside this program")); if it should not be there, stop it (kill \(peer.pid)), and `keyport vault unlock` starts the keeper"
            )
        }
        let arguments = try peer.arguments
        let served = arguments.firstIndex(of: "--vault").flatMap {
            arguments.index(after: $0) < arguments.endIndex ? arguments[arguments.index(after: $0)] : nil
        }
        guard let served, FilePaths.sameFile(served, locations.vault) else {
            guard FileIdentity(locations.vault) != nil else {
                let initCommand =
                    locations.vault == locations.defaultVault
                    ? "keyport vault init" : "keyport vault init --vault '\(locations.vault)'"
                throw WrongKeeper(description: "there is no vault at \(locations.vault) (`\(initCommand)` makes one)")
            }
            throw WrongKeeper(
                description:
                    "the vault's keeper on \(locations.keeperSocket) (process \(peer.pid)) serves \(served ?? "no vault it names"), not \(locations.vault); it was not started for this vault: stop it (kill \(peer.pid)), and `keyport vault unlock` starts the right one"
            )
        }
    }

    /// A blocking connection to the keeper of `locations.vault`, once the process on its socket
    /// is that keeper (``check(_:serves:)``).
    ///
    /// - Throws: ``NotRunning``; ``WrongKeeper``; ``VarlinkConnectionError``.
    package static func blockingConnection(_ locations: VaultLocations) throws -> VarlinkBlockingConnection {
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
            throw VarlinkConnectionError(
                .unexpectedPeer,
                "cannot tell which process serves \(locations.keeperSocket): \(error)"
            )
        }
        try check(peer, serves: locations)
        return connection
    }

    /// Calls `method` on a blocking connection to the keeper of `locations.vault` (checked as
    /// ``blockingConnection(_:)`` does) and returns its reply.
    ///
    /// - Throws: ``NotRunning``; ``WrongKeeper``; the keeper's ``VarlinkError`` (`Locked` saying
    ///   how to unlock this vault, `Denied`, `Failed`); ``VarlinkConnectionError``.
    package static func callBlocking<Method: VarlinkMethodType>(
        _ locations: VaultLocations,
        _ method: Method.Type,
        _ parameters: Method.Parameters
    ) throws -> Method.Reply {
        do {
            return try blockingConnection(locations).call(method, parameters)
        } catch let error as VarlinkError where error.name == VaultKeeper.Locked.name {
            throw locked(locations)
        }
    }

    /// What a person reads when a call to the keeper failed with `error`, and the status a command
    /// ends with: 1 when the keeper refused (locked, denied, the vault's own refusal, whose code
    /// follows in brackets), 2 when it could not be reached or is not the vault's keeper; `nil`
    /// for an error that is neither the keeper's nor the connection's.
    package static func refusal(_ error: any Error) -> (message: String, exitCode: Int32)? {
        switch error {
        case let error as NotRunning: (error.description, 2)
        case let error as WrongKeeper: (error.description, 2)
        case let error as VarlinkError:
            (error.sentence + (error.parameters(as: VaultKeeper.Failed.self).map { " [\($0.code)]" } ?? ""), 1)
        case let error as VarlinkConnectionError: ("the vault's keeper: \(error)", 2)
        default: nil
        }
    }
}

/// What `keyport vault show`, `edit` and `rm` say when the target they were given names no item,
/// or more than one (``VaultKeeper/Find``'s `how` says how they were found): the words both the
/// `keyport` front and keyport-cli use.
package enum VaultTargetWords {
    /// The sentence for `count` items found `how` (none, or several to choose from by id) for
    /// `target`, ending with `outcome` ("nothing changed") when given. A change is never made to
    /// an item found by a wider fit, even alone (`count` 1): it is listed for the person to name
    /// by its id.
    package static func notOne(_ count: Int, _ how: String, target: String, outcome: String? = nil) -> String {
        let end = outcome.map { "; \($0)" } ?? ""
        guard count > 0 else {
            return
                "the vault has no item with the id \(DisplayText.escaping(target)), nothing saved for that site, and nothing titled so\(end)"
        }
        let what = count == 1 ? "1 item is" : "\(count) items are"
        return "\(what) \(DisplayText.escaping(how)): name one by its id\(end)"
    }

    /// What `keyport vault show TARGET` prints of the keeper's `reply`: the item's fields when
    /// exactly one fits (even by a wider fit: showing changes nothing); else the lines of those
    /// that fit, and the sentence the command fails with.
    ///
    /// The keeper escaped what it wrote; each line is escaped here again (which changes nothing
    /// the keeper escaped), so that whatever answers on the socket cannot write to the terminal.
    package static func shown(_ reply: VaultKeeper.Show.Reply, target: String) -> (output: String, failure: String?) {
        if reply.items.count == 1 { return (escapingLines(reply.items[0].details), nil) }
        return (
            reply.items.map { escapingLines($0.line) + "\n" }.joined(),
            notOne(reply.items.count, reply.how, target: target)
        )
    }

    /// `text` escaped line by line and field by field: its line breaks and the tabs between a
    /// line's fields stay.
    private static func escapingLines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.split(separator: "\t", omittingEmptySubsequences: false).map { DisplayText.escaping(String($0)) }
                .joined(separator: "\t")
        }
        .joined(separator: "\n")
    }
}
