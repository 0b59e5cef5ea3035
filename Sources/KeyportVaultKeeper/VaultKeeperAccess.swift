import Foundation
import KeyportEncoding
import KeyportSystem
import Synchronization
import Varlink

/// Who may read and change the unlocked vault without the person's word (docs/protocol.md,
/// "Keyport Vault's keeper", and SECURITY.md).
///
/// An unlocked vault is not an open door to every process of the person's. Its items — by id,
/// by site, all at once (`List`, every export) — and its changes go only:
/// - to the vault's own app as keyportd launched it (its AutoFill provider, its credential-exchange
///   importer), which keyportd's own rules and questions guard: a process running the keeper's
///   program that the keyportd on the person's socket says it started for this vault's app
///   (`org.keyport.Providers.Launched`), never one that merely runs the same program;
/// - to the requester that unlocked the vault with its passphrase, for ``idleTime`` after its last
///   use and ``longestTime`` at most, as sudo's timestamp and 1Password's CLI authorize a terminal:
///   its terminal session when it has a terminal (while the session's leader lives), else the
///   program that ran it (its parent process, by number and start time) for the processes of its
///   session (while the parent is in that session or the session's leader lives);
/// - or once the person allowed it, asked through keyportd's agent with the caller named: once,
///   or for its requester as above.
/// Locking forgets every permission. AutoFill's exact fit reaches every client through keyportd,
/// whose provider is the vault's app.
package final class VaultKeeperAccess: Sendable {
    /// What the person said.
    package enum Permission: Sendable {
        case once
        /// For the caller's requester (its terminal, or the program that ran it).
        case requester
        /// Not allowed: the person declined, or could not be asked (the reason).
        case refused(String)
    }

    /// Who a permission is given to.
    package enum Requester: Hashable, Sendable {
        /// A terminal session: its id, its terminal and when its leader started.
        case terminal(session: pid_t, terminal: Int64, leaderStarted: UInt64)
        /// The program that ran the caller (its number and when it started), for callers in the
        /// caller's session (its id). The session, which a process can leave but never join,
        /// keeps out an orphan adopted by the same parent: a service manager (`systemd --user`)
        /// adopts any process that forks twice. A session's number is another's only once every
        /// process of it has ended, so the parent living in it names it (`leaderStarted` is
        /// `nil`); a parent outside it (a service manager that ran the caller, which then began
        /// a session of its own) names it only with its leader alive, by when that started.
        case program(pid: pid_t, started: UInt64, session: pid_t, leaderStarted: UInt64?)
    }

    /// Asks the person `question`; `requester` names what a lasting permission would be for
    /// ("this terminal", "the program …"), `nil` when none can be given.
    package typealias Ask = @Sendable (_ question: String, _ requester: String?) async -> Permission

    /// Whether the keyportd on the person's socket started process `pid` as this vault's app.
    package typealias Launched = @Sendable (_ pid: pid_t) async -> Bool

    /// How long a permission lasts after its last use.
    package static let idleTime = Duration.seconds(10 * 60)
    /// How long a permission lasts at most.
    package static let longestTime = Duration.seconds(12 * 3600)

    private struct Grant {
        var lastUse: ContinuousClock.Instant
        var given: ContinuousClock.Instant
    }

    /// The keeper's own program: only a process running it can be the vault's app.
    private let program: String?
    private let launched: Launched
    private let ask: Ask
    private let grants = Mutex<[Requester: Grant]>([:])

    package init(program: String?, launched: @escaping Launched, ask: @escaping Ask) {
        self.program = program
        self.launched = launched
        self.ask = ask
    }

    /// Lets `process` do `what` ("read every item with its secrets") when one of the rules above
    /// allows it, asking the person when it must; else throws `Denied`, saying why.
    package func authorize(_ process: PinnedProcess, to what: String) async throws(VarlinkError) {
        if await isVaultsApp(process) { return }
        let requester = Self.requester(of: process)
        if let requester, granted(requester) { return }
        let question =
            "\(Self.describe(process)) asks to \(what). Allow it only if you just ran it."
            + Self.commandLine(of: process)
        switch await ask(question, requester.map(Self.describe)) {
        case .once: return
        case .requester:
            if let requester { grant(requester) }
        case .refused(let why):
            throw VarlinkError(
                VaultKeeper.Denied(
                    message:
                        "\(why). This process may \(what) once you allow it when asked, or after `keyport vault unlock` in its terminal"
                )
            )
        }
    }

    /// The requester of `process`, which has just proved it is the person's (it gave the
    /// passphrase), may use the vault without asking for a while. Not when it is the vault's app
    /// as keyportd launched it: the passphrase came through keyportd's agent, and its requester
    /// is keyportd's, which may be the terminal keyportd was started from.
    package func grant(to process: PinnedProcess) async {
        guard await !isVaultsApp(process), let requester = Self.requester(of: process) else { return }
        grant(requester)
    }

    /// Forgets every permission (the vault was locked).
    package func revokeAll() {
        grants.withLock { $0.removeAll() }
    }

    private func grant(_ requester: Requester) {
        let now = ContinuousClock.now
        grants.withLock { $0[requester] = Grant(lastUse: now, given: now) }
    }

    /// Whether `requester` holds a permission still in time; its use counts as its last.
    private func granted(_ requester: Requester) -> Bool {
        let now = ContinuousClock.now
        return grants.withLock { grants in
            guard let grant = grants[requester] else { return false }
            guard now - grant.lastUse < Self.idleTime, now - grant.given < Self.longestTime else {
                grants[requester] = nil
                return false
            }
            grants[requester]?.lastUse = now
            return true
        }
    }

    private func isVaultsApp(_ process: PinnedProcess) async -> Bool {
        guard let program, (try? process.executable) == program else { return false }
        // keyportd pins the number and answers for the process it holds; this one, pinned before
        // the question and alive after it, held the number all along.
        return await launched(process.pid) && process.isAlive
    }

    /// A terminal session whose leader lives (a session's number is not another's while any of
    /// its processes lives, and the leader's start time tells a later one apart), else the
    /// program that ran `process` within its session (see ``Requester/program(pid:started:session:leaderStarted:)``);
    /// `nil` when neither can be read.
    static func requester(of process: PinnedProcess) -> Requester? {
        if let session = try? process.terminalSession, session.terminal != 0, let started = session.leaderStarted {
            return .terminal(session: session.id, terminal: session.terminal, leaderStarted: started)
        }
        guard let session = try? process.terminalSession, let parent = try? process.parent,
            let started = try? parent.startTime, parent.pid > 1, let parentSession = try? parent.terminalSession,
            process.isAlive
        else { return nil }
        if parentSession.id == session.id {
            return .program(pid: parent.pid, started: started, session: session.id, leaderStarted: nil)
        }
        guard let leaderStarted = session.leaderStarted else { return nil }
        return .program(pid: parent.pid, started: started, session: session.id, leaderStarted: leaderStarted)
    }

    /// What a lasting permission is given to, for the person.
    private static func describe(_ requester: Requester) -> String {
        switch requester {
        case .terminal(_, let terminal, _):
            let name = PinnedProcess.TerminalSession(id: 0, terminal: terminal, leaderStarted: nil).terminalName
            return "the terminal \(name ?? "it runs in")"
        case .program(let pid, _, _, _):
            return "the program that ran it (process \(pid))"
        }
    }

    /// The caller in Keyport's words, from the kernel: its program's path, number and terminal.
    private static func describe(_ process: PinnedProcess) -> String {
        let program = (try? process.executable).map { DisplayText.escaping($0) } ?? "an unknown program"
        let terminal =
            (try? process.terminalSession)?.terminalName.map { ", in the terminal \($0)" } ?? ", with no terminal"
        return "The program \(program) (process \(process.pid)\(terminal))"
    }

    /// The caller's command line, last and marked as its own words (a process chooses its own):
    /// at most 300 bytes, escaped as Keyport shows what others say.
    private static func commandLine(of process: PinnedProcess) -> String {
        let words = ((try? process.arguments) ?? []).joined(separator: " ")
        guard !words.isEmpty else { return "" }
        // On the same line: an agent shows a question's line breaks escaped.
        return " Its command line, as it gives it: \(DisplayText.escaping(DisplayText.excerpt(words, bytes: 300)))"
    }
}
