import Foundation
import KeyportSystem
import Synchronization

/// Starts `keyport agent --dialog --once` in the person's graphical session when keyportd has a
/// question and no agent holds the role, as gpg-agent starts pinentry: the person answers in a
/// zenity dialog without having started an agent beforehand.
///
/// keyportd runs as a systemd user service started on its socket, often before the desktop
/// session has told systemd its display: the display variables are read from systemd's user
/// environment (`systemctl --user show-environment`) each time one is needed, and from keyportd's
/// own environment when there is no user manager (keyportd started from a terminal) or it names
/// no display. Without a display, or without zenity, no agent is started and the caller is told
/// at once that nobody can be asked.
package final class DialogAgentLauncher: Sendable {
    /// The variables that say where the person's graphical session is.
    static let sessionVariables = [
        "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "XDG_SESSION_TYPE", "XDG_CURRENT_DESKTOP",
        "DBUS_SESSION_BUS_ADDRESS",
    ]

    /// The program that may be the agent (`keyport-cli` beside keyportd).
    private let program: String
    /// keyportd's own environment, with its socket named (the agent must reach this keyportd).
    private let base: [String: String]
    /// systemd's environment as last read, and when: kept for ``memory`` so that a burst of
    /// calls runs `systemctl` once, not once each.
    private let remembered = Mutex<(systemd: [String: String]?, at: ContinuousClock.Instant)?>(nil)
    /// How long systemd's environment, once read, is used before it is read again.
    static let memory = Duration.seconds(2)
    /// How long `systemctl` has to answer (a user manager that hangs must not hold the caller).
    static let systemdTime = Duration.seconds(2)

    /// Where a dialog agent would show its dialogs.
    package struct Session: Sendable, Equatable {
        /// The agent's environment.
        package var environment: [String: String]
        /// The display, as a variable: `WAYLAND_DISPLAY=wayland-0` or `DISPLAY=:0`.
        package var display: String
        /// Where it was learnt: "systemd" (its user environment) or "keyportd" (its own).
        package var source: String
    }

    package init(program: String, environment: [String: String], socket: String) {
        self.program = program
        var base = environment
        // Socket activation's variables are keyportd's, not the agent's.
        for name in ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"] { base[name] = nil }
        base["KEYPORT_SOCKET"] = socket
        self.base = base
    }

    /// Where a dialog can be shown now (a display and zenity); `nil` when nowhere. systemd is
    /// asked again once its last answer is older than ``memory`` (the person may have logged in
    /// since).
    package func session() async -> Session? {
        let systemd: [String: String]?
        if let last = remembered.withLock({ $0 }), ContinuousClock.now - last.at < Self.memory {
            systemd = last.systemd
        } else {
            systemd = await Self.systemdEnvironment(base)
            remembered.withLock { $0 = (systemd, .now) }
        }
        return Self.session(base: base, systemd: systemd)
    }

    /// `base` with the display variables of `systemd` (the user manager's environment) when
    /// they name a local display, else `base`'s own; `nil` without a display or without zenity
    /// on `PATH`.
    ///
    /// Any process of the person can set systemd's environment (`systemctl --user
    /// set-environment`), so what is taken from it is held to the person's own machine: `DISPLAY`
    /// a local X server (`:N` or `:N.M`, never `host:N`), `WAYLAND_DISPLAY` a socket in the
    /// runtime directory, the session bus a `unix:` socket (never `unixexec:`, which runs a
    /// program, nor `tcp:`). A value that is not is left out.
    package static func session(base: [String: String], systemd: [String: String]?) -> Session? {
        func display(_ environment: [String: String]) -> String? {
            for name in ["WAYLAND_DISPLAY", "DISPLAY"] {
                if let value = environment[name], !value.isEmpty { return "\(name)=\(value)" }
            }
            return nil
        }
        var environment = base
        var source = "keyportd"
        if let systemd {
            var local: [String: String] = [:]
            for name in sessionVariables {
                if let value = systemd[name], isLocal(name, value, runtime: base["XDG_RUNTIME_DIR"]) {
                    local[name] = value
                }
            }
            if display(local) != nil {
                for name in sessionVariables { environment[name] = local[name] }
                source = "systemd"
            }
        }
        guard let shown = display(environment), Executable.find("zenity", path: environment["PATH"]) != nil else {
            return nil
        }
        return Session(environment: environment, display: shown, source: source)
    }

    /// Whether `value` of the session variable `name` stays on this machine (see
    /// ``session(base:systemd:)``).
    static func isLocal(_ name: String, _ value: String, runtime: String?) -> Bool {
        switch name {
        case "DISPLAY":
            guard value.first == ":" else { return false }
            let parts = value.dropFirst().split(separator: ".", omittingEmptySubsequences: false)
            return (1...2).contains(parts.count)
                && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }
        case "WAYLAND_DISPLAY":
            if !value.contains("/") { return !value.isEmpty && value != "." && value != ".." }
            guard let runtime, !runtime.isEmpty else { return false }
            return value.hasPrefix(runtime + "/") && !value.contains("/../")
        case "DBUS_SESSION_BUS_ADDRESS":
            return value.hasPrefix("unix:") && !value.contains(";")
        default:
            return true
        }
    }

    /// systemd's user environment (`systemctl --user show-environment`), `nil` when there is no
    /// user manager to ask or it does not answer within ``systemdTime``.
    private static func systemdEnvironment(_ base: [String: String]) async -> [String: String]? {
        guard let systemctl = Executable.find("systemctl", path: base["PATH"]),
            let child = try? ChildProcess(
                executable: systemctl,
                arguments: ["--user", "show-environment"],
                environment: base,
                streams: .captured(input: nil)
            )
        else { return nil }
        let timer = Task {
            try await Task.sleep(for: systemdTime)
            child.signal(SIGKILL)
        }
        await child.waitForExit()
        timer.cancel()
        await child.output?.waitForEnd()
        guard child.termination == .exited(0), let output = child.output?.standardOutput else { return nil }
        return parse(String(decoding: output, as: UTF8.self))
    }

    /// `NAME=value` lines as systemctl prints them. Values with characters a shell would read
    /// are printed quoted in `$'…'`; the display variables never need it, and such a line is
    /// passed over.
    package static func parse(_ text: String) -> [String: String] {
        var variables: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let value = line[line.index(after: equals)...]
            if value.hasPrefix("$'") { continue }
            variables[String(line[..<equals])] = String(value)
        }
        return variables
    }

    /// A dialog agent keyportd started: the child it reaps, and the same process pinned by its
    /// pidfd, which is how its `Serve` call is recognised.
    package struct Started: Sendable {
        package var child: ChildProcess
        package var process: PinnedProcess
    }

    /// Starts the agent in `session`. Its standard streams are `/dev/null`: it speaks to the
    /// person in dialogs only.
    package func launch(_ session: Session) throws -> Started {
        let child = try ChildProcess(
            executable: program,
            arguments: ["agent", "--dialog", "--once"],
            environment: session.environment
        )
        do {
            // Pinned at once: keyportd has not reaped it, so the number is still the child's.
            return Started(child: child, process: try PinnedProcess(pid: child.pid))
        } catch {
            child.signal(SIGKILL)
            throw error
        }
    }
}
