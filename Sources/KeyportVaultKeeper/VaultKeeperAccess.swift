import Foundation
import KeyportSystem
import Synchronization
import Varlink

/// Who may do what with the unlocked vault without the person's word (docs/protocol.md, "Keyport
/// Vault's keeper", and SECURITY.md).
///
/// An unlocked vault is not an open door to every process of the person's. What AutoFill gives
/// without asking — the items saved for exactly one scheme, host and port (`Lookup` with `exact`)
/// — any client gets, as keyportd's AutoFill gives it. A read of items by id or by a wider look-up,
/// every item at once (`List`, an export), a removal or a change comes only:
/// - from the vault's own app started by keyportd (its AutoFill provider, its credential-exchange
///   importer: the keeper's program whose parent is the keyportd beside it), which keyportd's
///   own rules and questions guard; or
/// - from the terminal session that unlocked the vault with its passphrase, for ``idleTime`` after
///   its last use (and ``longestTime`` at most), as sudo's timestamp and 1Password's CLI authorize
///   a terminal; or
/// - once the person allowed it, asked through keyportd's agent with the caller named: once, or
///   for its terminal session as above.
/// Locking forgets every session.
package final class VaultKeeperAccess: Sendable {
    /// What the person said.
    package enum Permission: Sendable {
        case once
        /// For the caller's terminal session.
        case session
        /// Not allowed: the person declined, or could not be asked (the reason).
        case refused(String)
    }

    /// Asks the person whether the caller (described) may do what it asks, and whether that
    /// may be for its terminal session too (`offerSession`: false when it has no terminal).
    package typealias Ask = @Sendable (_ question: String, _ offerSession: Bool) async -> Permission

    /// How long a session's permission lasts after its last use.
    package static let idleTime = Duration.seconds(10 * 60)
    /// How long a session's permission lasts at most.
    package static let longestTime = Duration.seconds(12 * 3600)

    private struct Grant {
        var lastUse: ContinuousClock.Instant
        var given: ContinuousClock.Instant
    }

    /// The keeper's own program and the keyportd beside it: a process running the first whose
    /// parent runs the second is the vault's app as keyportd started it.
    private let program: String?
    private let daemon: String?
    private let ask: Ask
    private let grants = Mutex<[PinnedProcess.TerminalSession: Grant]>([:])

    package init(program: String?, daemon: String?, ask: @escaping Ask) {
        self.program = program
        self.daemon = daemon
        self.ask = ask
    }

    /// Lets `process` do `what` ("read every item with its secrets") when one of the rules above
    /// allows it, asking the person when it must; else throws `Denied`, saying why.
    package func authorize(_ process: PinnedProcess, to what: String) async throws(VarlinkError) {
        if startedByKeyportd(process) { return }
        let session = try? process.terminalSession
        if let session, granted(session) { return }
        let caller = Self.describe(process, session)
        switch await ask("\(caller) asks to \(what). Allow it only if you just ran it.", (session?.terminal ?? 0) != 0)
        {
        case .once: return
        case .session:
            if let session { grant(session) }
        case .refused(let why):
            throw VarlinkError(
                VaultKeeper.Denied(
                    message:
                        "\(why); this process may \(what) only once you allow it, or from the terminal where you unlocked the vault (`keyport vault unlock` there)"
                )
            )
        }
    }

    /// The terminal session of `process`, which has just proved it is the person's (it gave the
    /// passphrase), may use the vault without asking for a while. Not when it is the vault's app
    /// as keyportd started it: the passphrase came through keyportd's agent, and the session is
    /// keyportd's, which may be a terminal's where keyportd was started by hand.
    package func grant(to process: PinnedProcess) {
        guard !startedByKeyportd(process), let session = try? process.terminalSession else { return }
        grant(session)
    }

    /// Forgets every session's permission (the vault was locked).
    package func revokeAll() {
        grants.withLock { $0.removeAll() }
    }

    private func grant(_ session: PinnedProcess.TerminalSession) {
        let now = ContinuousClock.now
        grants.withLock { $0[session] = Grant(lastUse: now, given: now) }
    }

    /// Whether `session` holds a permission still in time; its use counts as its last.
    private func granted(_ session: PinnedProcess.TerminalSession) -> Bool {
        let now = ContinuousClock.now
        return grants.withLock { grants in
            guard let grant = grants[session] else { return false }
            guard now - grant.lastUse < Self.idleTime, now - grant.given < Self.longestTime else {
                grants[session] = nil
                return false
            }
            grants[session]?.lastUse = now
            return true
        }
    }

    private func startedByKeyportd(_ process: PinnedProcess) -> Bool {
        guard let program, let daemon, (try? process.executable) == program,
            let parent = try? process.parent, (try? parent.executable) == daemon
        else { return false }
        return process.isAlive
    }

    /// The caller as the person can recognise it: its command line, number and terminal.
    private static func describe(_ process: PinnedProcess, _ session: PinnedProcess.TerminalSession?) -> String {
        let command = ((try? process.arguments) ?? []).joined(separator: " ")
        let shown = command.count > 160 ? command.prefix(160) + "…" : Substring(command)
        let terminal = session?.terminalName.map { ", in the terminal \($0)" } ?? ", with no terminal"
        return "\(shown.isEmpty ? "A program" : "“\(shown)”") (process \(process.pid)\(terminal))"
    }
}
