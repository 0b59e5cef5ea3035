import Foundation
import KeyportSystem
import KeyportTestSupport
import Testing

/// The browser tests' set-up: a person at a real browser with Keyport's extension, played by a
/// Python peer of Peers/.
enum BrowserPerson {
    /// keyportd, an unlocked vault enabled as the provider, the host manifest written by
    /// `keyport browser install`, and the person at `browser`, played by Peers/`peer` with
    /// `arguments` more: their report.
    static func run(
        _ peer: String,
        browser: String,
        importing modules: [String],
        arguments: [String] = []
    ) async throws -> [String: Any] {
        let python = try await Peers.python(importing: modules)
        let directory = try TemporaryDirectory("kp-browser")
        defer { directory.remove() }
        var environment = sandboxEnvironment(in: directory.url)
        environment["HOME"] = try directory.subdirectory("home").path
        environment["XDG_RUNTIME_DIR"] = try directory.subdirectory("run").path
        environment["KEYPORT_VAULT_SOCKET"] = directory.url.appendingPathComponent("vault.sock").path
        func keyport(_ arguments: [String], _ input: String? = nil) async throws -> Program.Ran {
            try await runKeyport(arguments, input, environment: environment)
        }
        let daemon = try await startKeyportd(environment)
        defer { daemon.stop() }
        #expect(try await keyport(["vault", "init", "--passphrase-stdin"], "open sesame\n").status == 0)
        #expect(try await keyport(["providers", "enable", "org.keyport.vault"]).status == 0)
        #expect(try await keyport(["vault", "unlock", "--passphrase-stdin"], "open sesame\n").status == 0)

        let extensionDirectory = Peers.file("browser")
        let installed = try await keyport(
            ["browser", "install", "--browser", browser, "--extension", extensionDirectory]
        )
        #expect(installed.status == 0, "\(installed.standardError)")
        #expect(installed.standardOutput.contains("org.keyport.browser.json"), "\(installed.standardOutput)")

        let work = try directory.subdirectory("work")
        let ran: Result<Program.Ran, any Error>
        do {
            ran = .success(
                try await Program.run(
                    python,
                    [
                        Peers.file("Tests/KeyportBrowserTests/Peers/\(peer)"), "--browser", browser,
                        "--keyport", KeyportTestSupport.keyport, "--extension", extensionDirectory, "--work", work.path,
                    ] + arguments,
                    environment: environment,
                    timeout: .seconds(540)
                )
            )
        } catch {
            ran = .failure(error)
        }
        // Locked as a person leaves it; the keeper itself ends once the test's directory, and its
        // vault with it, is gone.
        #expect(try await keyport(["vault", "lock"]).status == 0)
        let person = try ran.get()
        try #require(person.status == 0, "\(person.standardError)")
        return try #require(
            try JSONSerialization.jsonObject(with: Data(person.standardOutput.utf8)) as? [String: Any],
            "\(person.standardOutput)"
        )
    }
}
