import Foundation

/// Where the package's programs were built: beside the test bundle running this.
package let buildDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    .deletingLastPathComponent()

/// The built program `name` (`keyportd`, `keyport`, `keyport-vault`, an example app).
package func builtProgram(_ name: String) -> String {
    buildDirectory.appendingPathComponent(name).path
}

package let keyportd = builtProgram("keyportd")
package let keyport = builtProgram("keyport")

/// Runs the built `keyport` with `arguments` to its end, in exactly `environment`, with `input` (a
/// passphrase, a document) on its standard input.
package func runKeyport(
    _ arguments: [String],
    _ input: String? = nil,
    environment: [String: String],
    timeout: Duration = .seconds(120)
) async throws -> Program.Ran {
    try await Program.run(
        keyport,
        arguments,
        environment: environment,
        input: input.map { Data($0.utf8) },
        timeout: timeout
    )
}

/// This process's environment with keyportd's socket and every XDG directory it reads moved into
/// `directory`, so a test's keyportd, agent and apps see only the test's manifests and Settings.
package func sandboxEnvironment(in directory: URL) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["KEYPORT_SOCKET"] = directory.appendingPathComponent("d.sock").path
    environment["XDG_DATA_HOME"] = directory.appendingPathComponent("data").path
    environment["XDG_DATA_DIRS"] = directory.appendingPathComponent("none").path
    environment["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
    environment["XDG_STATE_HOME"] = directory.appendingPathComponent("state").path
    // No display unless a test gives one: keyportd would start dialog agents on it.
    environment["DISPLAY"] = nil
    environment["WAYLAND_DISPLAY"] = nil
    return environment
}

/// keyportd's option that lets `keyport agent --auto` answer for the person, which the tests'
/// agents do.
package let scriptedAgent = "--allow-scripted-agent"

/// Starts keyportd with `environment` and waits until it listens; it takes scripted agents unless
/// `allowingScriptedAgent` is false.
package func startKeyportd(
    _ environment: [String: String],
    allowingScriptedAgent: Bool = true
) async throws
    -> Program
{
    let daemon = try Program(keyportd, allowingScriptedAgent ? [scriptedAgent] : [], environment: environment)
    _ = try await daemon.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }
    return daemon
}
