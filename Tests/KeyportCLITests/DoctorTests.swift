import Foundation
import KeyportTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `keyport doctor` on a system that is set up one step at a time: each missing part is named
/// with the command that fixes it, and the exit status is 0 only once nothing is missing.
@Suite("keyport doctor", .serialized)
struct DoctorTests {
    @Test("says what is missing with its fix, step by step, and exits 0 only when all is well")
    func doctor() async throws {
        let directory = try TemporaryDirectory("kp-doctor")
        defer { directory.remove() }
        var environment = sandboxEnvironment(in: directory.url)
        // A runtime directory of its own: no systemd user manager listens there, until one is put.
        let runtime = try directory.subdirectory("run")
        environment["XDG_RUNTIME_DIR"] = runtime.path
        // No browser on this PATH, until one is put there.
        let bin = try directory.subdirectory("bin")
        environment["PATH"] = bin.path
        // A display (a real X server: an agent asks in dialogs only on one that answers), but no
        // zenity to ask in, until one is put there.
        let server = try await XServer(cookieIn: directory.url)
        defer { server.stop() }
        environment = server.environment(environment)
        func doctor() async throws -> Program.Ran {
            try await Program.run(
                KeyportTestSupport.keyport,
                ["doctor"],
                environment: environment,
                timeout: .seconds(60)
            )
        }
        func keyport(_ arguments: [String], _ input: String? = nil) async throws -> Program.Ran {
            try await runKeyport(arguments, input, environment: environment)
        }

        // Nothing yet, and no systemd user manager (a container): keyportd is to be started by hand.
        let bare = try await doctor()
        #expect(bare.status == 1, "\(bare.standardOutput)")
        #expect(
            bare.standardOutput.contains("fix keyportd does not answer")
                && bare.standardOutput.contains("→ \(keyportd) & (no systemd user manager runs in this session"),
            "\(bare.standardOutput)"
        )
        #expect(bare.standardOutput.contains("ok  no systemd user manager runs"), "\(bare.standardOutput)")
        #expect(!bare.standardOutput.contains("→ systemctl"), "\(bare.standardOutput)")
        #expect(bare.standardOutput.contains("ok  Public Suffix List: "), "\(bare.standardOutput)")

        // A user manager (its socket), and no units for it: install them.
        let manager = try directory.subdirectory("run/systemd").appendingPathComponent("private").path
        let listening = try RawUnixSocket.bound(to: manager, listening: true)
        let unitless = try await doctor()
        close(listening)
        unlink(manager)
        #expect(unitless.standardOutput.contains("fix keyportd's systemd user units"), "\(unitless.standardOutput)")
        #expect(
            unitless.standardOutput.contains("systemctl --user enable --now keyportd.socket"),
            "\(unitless.standardOutput)"
        )

        // Units that start keyportd, keyportd itself, and a vault (registered as it is made).
        let units = try directory.subdirectory("config/systemd/user")
        try "[Socket]\nListenStream=%t/keyport/keyportd.sock\n".write(
            to: units.appendingPathComponent("keyportd.socket"),
            atomically: true,
            encoding: .utf8
        )
        try "[Service]\nExecStart=\(keyportd)\n".write(
            to: units.appendingPathComponent("keyportd.service"),
            atomically: true,
            encoding: .utf8
        )
        let daemon = try await startKeyportd(environment)
        defer { daemon.stop() }
        #expect(try await keyport(["vault", "init", "--passphrase-stdin"], "open sesame\n").status == 0)
        let disabled = try await doctor()
        #expect(disabled.status == 1, "\(disabled.standardOutput)")
        #expect(disabled.standardOutput.contains("ok  keyportd answers at"), "\(disabled.standardOutput)")
        #expect(
            disabled.standardOutput.contains("ok  keyportd's units are in \(units.path)"),
            "\(disabled.standardOutput)"
        )
        // No zenity, and no user manager: the fixes are those of this machine (no systemctl).
        #expect(
            disabled.standardOutput.contains("fix no agent runs and zenity is not installed")
                && disabled.standardOutput.contains(
                    "→ keyport agent (in a terminal); or install zenity, for keyportd's dialogs\n"
                ),
            "\(disabled.standardOutput)"
        )
        #expect(!disabled.standardOutput.contains("systemctl"), "\(disabled.standardOutput)")
        #expect(
            disabled.standardOutput.contains("fix no provider is enabled")
                && disabled.standardOutput.contains("→ keyport providers enable org.keyport.vault"),
            "\(disabled.standardOutput)"
        )

        // zenity (one that says no) comes: keyportd would ask in dialogs it starts. Enabled: all is well.
        let zenity = bin.appendingPathComponent("zenity").path
        try "#!/bin/sh\nexit 1\n".write(toFile: zenity, atomically: true, encoding: .utf8)
        #expect(chmod(zenity, 0o755) == 0)
        #expect(try await keyport(["providers", "enable", "org.keyport.vault"]).status == 0)
        let well = try await doctor()
        #expect(well.status == 0, "\(well.standardOutput)")
        #expect(
            well.standardOutput.contains(
                "ok  keyportd's questions go to dialogs it starts (keyport agent --dialog) on DISPLAY=\(server.display), from keyportd's environment"
            ),
            "\(well.standardOutput)"
        )
        // An agent runs: it is the one asked.
        let agent = try Program(KeyportTestSupport.keyport, ["agent"], environment: environment)
        defer { agent.stop() }
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        let held = try await doctor()
        #expect(held.standardOutput.contains("ok  keyportd's questions go to the agent process \(agent.pid)"))
        agent.stop()
        #expect(well.standardOutput.contains("ok  AutoFill asks, in order: Keyport Vault (org.keyport.vault)"))
        #expect(!well.standardOutput.split(separator: "\n").contains { $0.hasPrefix("fix ") }, "\(well.standardOutput)")

        // A browser appears without Keyport's host; installing the host mends it. A manifest that
        // cannot be used is named.
        let chromium = bin.appendingPathComponent("chromium").path
        try "#!/bin/sh\n".write(toFile: chromium, atomically: true, encoding: .utf8)
        #expect(chmod(chromium, 0o755) == 0)
        let browserless = try await doctor()
        #expect(browserless.status == 1)
        #expect(
            browserless.standardOutput.contains("fix Chromium: Keyport's native messaging host is not installed")
                && browserless.standardOutput.contains("→ keyport browser install --browser chromium"),
            "\(browserless.standardOutput)"
        )
        let installed = try await keyport([
            "browser", "install", "--browser", "chromium", "--extension", Peers.file("browser"),
        ])
        #expect(installed.status == 0, "\(installed.standardError)")
        #expect(try await doctor().status == 0)
        let broken = directory.url.appendingPathComponent("data/keyport/providers/broken.json")
        try "{".write(to: broken, atomically: true, encoding: .utf8)
        let problem = try await doctor()
        #expect(
            problem.status == 1 && problem.standardOutput.contains("→ correct or remove \(broken.path)"),
            "\(problem.standardOutput)"
        )
    }
}
