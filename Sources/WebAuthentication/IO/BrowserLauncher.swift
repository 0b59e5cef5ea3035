import Foundation
import KeyportEncoding
import KeyportSystem

/// Opens a URL in the person's browser the way Linux desktops do: each command of `$BROWSER` (a
/// colon-separated list; `%s` stands for the URL, else the URL is appended), then `xdg-open`.
/// Without a display (`$DISPLAY` and `$WAYLAND_DISPLAY` unset: SSH, CI) nothing is launched and the
/// caller prints the URL for the person to open elsewhere.
public struct BrowserLauncher: Sendable {
    /// What opening a URL did.
    public enum Outcome: Equatable, Sendable {
        /// This command was started with the URL.
        case launched(command: [String])
        /// There is no display, or no browser could be started: show the URL to the person.
        case showURL(reason: String)
    }

    /// Where `BROWSER`, `DISPLAY`, `WAYLAND_DISPLAY` and `PATH` are read; the browser gets it too.
    public var environment: [String: String]

    /// A launcher reading `environment` (the process's own by default).
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    /// Whether a graphical session is there to show a browser in.
    public var hasDisplay: Bool {
        !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// The commands to try, in order, for `url`.
    public func candidates(for url: URL) -> [[String]] {
        var commands: [[String]] = []
        for entry in (environment["BROWSER"] ?? "").split(separator: ":")
        where !entry.trimmingWhitespace(newlines: false).isEmpty {
            var words = entry.split(separator: " ").map(String.init)
            if words.contains(where: { $0.contains("%s") }) {
                words = words.map { $0.replacingOccurrences(of: "%s", with: url.absoluteString) }
            } else {
                words.append(url.absoluteString)
            }
            commands.append(words)
        }
        commands.append(["xdg-open", url.absoluteString])
        return commands
    }

    /// Starts the first command that can be started. `$BROWSER` is honoured even without a display
    /// (a person may have set a terminal browser); the `xdg-open` fallback needs one.
    public func open(_ url: URL) -> Outcome {
        let fromEnvironment = !(environment["BROWSER"] ?? "").isEmpty
        let commands = candidates(for: url)
        for (index, command) in commands.enumerated() {
            if index == commands.count - 1 && !hasDisplay {
                return .showURL(
                    reason: fromEnvironment
                        ? "no browser in $BROWSER could be started, and there is no display"
                        : "there is no display (DISPLAY and WAYLAND_DISPLAY are unset)"
                )
            }
            guard let executable = Executable.find(command[0], path: environment["PATH"]) else { continue }
            // A shared browser is not ours to watch: xdg-open and most $BROWSER entries hand the
            // URL to a running browser and exit. ChildProcess reaps it whenever it ends.
            if (try? ChildProcess(
                executable: executable,
                arguments: Array(command.dropFirst()),
                environment: environment
            )) != nil {
                return .launched(command: command)
            }
        }
        return .showURL(reason: "no browser could be started (set $BROWSER, or install xdg-utils)")
    }
}
