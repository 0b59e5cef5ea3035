import Foundation
import KeyportInterfaces
import KeyportTestSupport
import KeyportVaultKeeper
import Testing
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

@Suite("AutoFill from Keyport Vault", .serialized)
struct VaultAutoFillTests {
    @Test("the vault's provider answers keyport otp and keyport password, unlocked or (through the agent) locked")
    func autoFill() async throws {
        let directory = try TemporaryDirectory("kp-vault-fill")
        defer { directory.remove() }
        var environment = sandboxEnvironment(in: directory.url)
        environment["KEYPORT_VAULT_SOCKET"] = directory.url.appendingPathComponent("vault.sock").path
        environment["KEYPORT_PROVIDER_TIMEOUT"] = "10"
        func run(_ arguments: [String], _ input: String? = nil) async throws -> Program.Ran {
            try await runKeyport(arguments, input, environment: environment)
        }
        let daemon = try await startKeyportd(environment)
        defer { daemon.stop() }
        // The keeper, started here (not by `unlock`) so the test can read what it says.
        let vault = try VaultLocations(environment: environment).defaultVault
        let keeper = try Program(builtProgram("keyport-vault"), ["keeper", "--vault", vault], environment: environment)
        defer { keeper.stop() }
        _ = try await keeper.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }

        // A manifest never names a vault that does not exist: registering comes with creating.
        let early = try await run(["vault", "register"])
        #expect(early.status == 1 && early.standardError.contains("there is no vault at"), "\(early.standardError)")
        let created = try await run(["vault", "init", "--passphrase-stdin"], "open sesame\n")
        #expect(created.status == 0 && created.standardOutput.contains("registered it as org.keyport.vault"))
        #expect(try await run(["providers", "enable", "org.keyport.vault"]).status == 0)
        #expect(try await run(["vault", "unlock", "--passphrase-stdin"], "open sesame\n").status == 0)
        _ = try await keeper.waitForLine(timeout: .seconds(30), onStandardError: true) {
            $0.contains("identities updated (0)")
        }
        let added = try await run(
            [
                "vault", "add", "--passphrase-stdin", "--title", "GitHub", "--url", "https://github.com/", "--user",
                "alice", "--otp",
            ],
            "hunter2\nJBSWY3DPEHPK3PXP\n"
        )
        #expect(added.status == 0, "\(added.standardError)")
        _ = try await keeper.waitForLine(timeout: .seconds(30), onStandardError: true) {
            $0.contains("identities updated (2)")
        }

        var expected = try await Peers.oathtoolCodes()
        let code = try await run(["otp", "github.com"])
        #expect(
            code.status == 0 && expected.contains(code.standardOutput.trimmingCharacters(in: .newlines)),
            "\(code.standardError)"
        )
        let password = try await run(["password", "https://github.com/login", "--json"])
        #expect(
            password.standardOutput
                == #"{"password":"hunter2","provider":"org.keyport.vault","site":"https://github.com","user":"alice"}"#
                + "\n",
            "\(password.standardError)"
        )

        // Locked: the provider asks for the passphrase through keyportd's agent, then answers.
        #expect(try await run(["vault", "lock"]).status == 0)
        let refused = try await run(["otp", "github.com"])
        #expect(refused.status == 1, "no agent to ask: \(refused.standardOutput)")
        let secret = directory.url.appendingPathComponent("secret").path
        try "open sesame\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let asking = try Program(
            keyport,
            ["agent", "--auto", "accept-first", "--secret-file", secret],
            environment: environment
        )
        defer { asking.stop() }
        _ = try await asking.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        expected = try await Peers.oathtoolCodes()
        let unlocked = try await run(["otp", "github.com"])
        #expect(
            unlocked.status == 0 && expected.contains(unlocked.standardOutput.trimmingCharacters(in: .newlines)),
            "\(unlocked.standardError)"
        )
        #expect(try await run(["vault", "status"]).standardOutput.hasPrefix("unlocked"))
        // The question named what the passphrase was for: the one-time code, not a sign-in.
        _ = try await asking.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains("gave the secret it asked for (Unlock Keyport Vault to give the one-time code for ")
                && $0.contains("github.com")
        }

        // "Show all": the person picks from the vault's own list in the agent (here the first).
        expected = try await Peers.oathtoolCodes()
        let listed = try await run(["otp", "github.com", "--list"])
        #expect(
            listed.status == 0 && expected.contains(listed.standardOutput.trimmingCharacters(in: .newlines)),
            "\(listed.standardError)"
        )
        _ = try await asking.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains("Keyport Vault: chose 1: GitHub — alice (https://github.com/)")
        }
        let picked = try await run(["password", "example.org", "--list"])
        #expect(picked.standardOutput == "hunter2\n", "\(picked.standardError)")

        // The provider unlocked the vault, not this terminal session (whose permission went with
        // `vault lock`; keyportd, started from it, shares it, and its provider's unlock gives it
        // nothing): every item at once is asked about through the agent, in the vault's name, and
        // given once allowed.
        let all = try await run(["vault", "list"])
        #expect(all.status == 0 && all.standardOutput.contains("GitHub"), "\(all.standardError)")
        _ = try await asking.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains("Keyport Vault: chose once: Allow it this once")
        }
        asking.stop()
        let declining = try Program(keyport, ["agent", "--auto", "decline"], environment: environment)
        defer { declining.stop() }
        _ = try await declining.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        let denied = try await run(["vault", "list"])
        #expect(
            denied.status != 0 && denied.standardError.contains("you did not allow it")
                && !denied.standardOutput.contains("GitHub"),
            "\(denied.standardError)"
        )
        // AutoFill's exact fit is still given without asking.
        #expect(try await run(["password", "https://github.com/login"]).standardOutput == "hunter2\n")
    }

    @Test("the vault's provider shows no list of its items for a web page sent in clear text, whoever asks it")
    func noListForClearText() async throws {
        let activate = try Peers.require(
            "/usr/bin/systemd-socket-activate",
            "systemd-socket-activate (package systemd)"
        )
        let directory = try TemporaryDirectory("kp-vault-list")
        defer { directory.remove() }
        var environment = sandboxEnvironment(in: directory.url)
        environment["KEYPORT_VAULT_SOCKET"] = directory.url.appendingPathComponent("vault.sock").path
        let vault = try VaultLocations(environment: environment).defaultVault
        let keeper = try Program(builtProgram("keyport-vault"), ["keeper", "--vault", vault], environment: environment)
        defer { keeper.stop() }
        _ = try await keeper.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }
        for (arguments, input) in [(["vault", "init"], "open sesame\n"), (["vault", "unlock"], "open sesame\n")] {
            let ran = try await Program.run(
                keyport,
                arguments + ["--passphrase-stdin"],
                environment: environment,
                input: Data(input.utf8),
                timeout: .seconds(120)
            )
            #expect(ran.status == 0, "\(ran.standardError)")
        }
        // The provider asked directly, as keyportd would (which refuses such a request itself
        // first): on a socket systemd-socket-activate hands it.
        let socket = directory.url.appendingPathComponent("provider.sock").path
        let provider = try Program(
            activate,
            ["-l", socket] + environment.sorted { $0.key < $1.key }.flatMap { ["-E", "\($0.key)=\($0.value)"] }
                + [builtProgram("keyport-vault"), "provider", "--vault", vault],
            environment: environment
        )
        defer { provider.stop() }
        _ = try await provider.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("Listening on") }
        func list(_ site: String) throws -> VarlinkError? {
            let connection = try VarlinkBlockingConnection(path: socket, maximumMessageSize: 1 << 20)
            do {
                _ = try connection.call(
                    CredentialProvider.ProvideFromList.name,
                    RawJSON(
                        encoding: CredentialProvider.ProvideFromList.Parameters(
                            type: .password,
                            serviceIdentifiers: [CredentialProvider.ServiceIdentifier(identifier: site, type: .URL)]
                        )
                    )
                )
                return nil
            } catch let error as VarlinkError {
                return error
            }
        }
        // https: the vault looks, and has nothing to show.
        let secure = try list("https://example.org/login")
        #expect(secure?.message?.contains("the vault has no passwords") == true, "\(String(describing: secure))")
        // http: refused before the vault is looked at.
        for site in ["http://example.org/login", "ws://example.org"] {
            let clear = try list(site)
            #expect(clear?.name == CredentialProvider.Canceled.name, "\(String(describing: clear))")
            #expect(clear?.message?.contains("which is not https") == true, "\(String(describing: clear))")
        }
    }

    @Test(
        "each vault is its own app: two registered vaults' keepers keep AutoFill each its own; an unregistered vault's reaches nobody, and its status says so"
    )
    func eachVaultItsOwnApp() async throws {
        let directory = try TemporaryDirectory("kp-vault-apps")
        var environment = sandboxEnvironment(in: directory.url)
        environment["XDG_RUNTIME_DIR"] = try directory.subdirectory("run").path
        let runtime = "XDG_RUNTIME_DIR=" + (environment["XDG_RUNTIME_DIR"] ?? "")
        defer {
            Started.stop(running: "keyport-vault", withEnvironment: runtime)
            directory.remove()
        }
        func run(_ arguments: [String], _ input: String? = nil) async throws -> Program.Ran {
            try await runKeyport(arguments, input, environment: environment)
        }
        /// `vault status` once the vault's keeper has heard from AutoFill about its last change.
        func status(_ vault: [String], until expected: String) async throws -> String {
            let deadline = ContinuousClock.now + .seconds(30)
            while true {
                let status = try await run(["vault", "status"] + vault).standardOutput
                if status.contains(expected) || ContinuousClock.now > deadline { return status }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let daemon = try await startKeyportd(environment)
        defer { daemon.stop() }
        let second = directory.url.appendingPathComponent("second.keyport").path
        let third = directory.url.appendingPathComponent("third.keyport").path
        let vaults: [(options: [String], site: String, user: String, password: String)] = [
            ([], "https://a-site.net", "alice", "a-pass"),
            (["--vault", second], "https://b-site.net", "bob", "b-pass"),
            (["--vault", third], "https://c-site.net", "carol", "c-pass"),
        ]
        for vault in vaults {
            #expect(
                try await run(["vault", "init", "--passphrase-stdin"] + vault.options, "pass phrase\n").status == 0
            )
        }
        #expect(
            try await run(["vault", "register", "--vault", second, "--id", "org.example.second", "--name", "Second"])
                .status == 0
        )
        #expect(try await run(["providers", "order", "org.keyport.vault", "org.example.second"]).status == 0)
        for vault in vaults {
            #expect(
                try await run(["vault", "unlock", "--passphrase-stdin"] + vault.options, "pass phrase\n").status == 0
            )
            let added = try await run(
                [
                    "vault", "add", "--passphrase-stdin", "--title", vault.user, "--url", vault.site, "--user",
                    vault.user,
                ]
                    + vault.options,
                vault.password + "\n"
            )
            #expect(added.status == 0, "\(added.standardError)")
        }
        // A URL AutoFill cannot read (an empty label) keeps no other item from it: the item added
        // after it reaches AutoFill (the keeper's changes go in order, so the odd one went first).
        // `vault add` refuses such a URL; an import keeps it as the file has it.
        let oddAdded = try await run(
            ["vault", "add", "--passphrase-stdin", "--title", "odd", "--url", "https://a..b.example", "--user", "o"],
            "odd-pass\n"
        )
        #expect(
            oddAdded.status != 0 && oddAdded.standardError.contains("no look-up would ever find it"),
            "\(oddAdded.standardError)"
        )
        let odd = directory.url.appendingPathComponent("odd.csv").path
        try "name,url,username,password\nodd,https://a..b.example,o,odd-pass\n".write(
            toFile: odd,
            atomically: true,
            encoding: .utf8
        )
        let imported = try await run(["vault", "import", odd])
        #expect(imported.status == 0, "\(imported.standardError)")
        let added = try await run(
            ["vault", "add", "--passphrase-stdin", "--title", "marker", "--url", "https://m-site.net", "--user", "o"],
            "marker-pass\n"
        )
        #expect(added.status == 0, "\(added.standardError)")
        let deadline = ContinuousClock.now + .seconds(30)
        var marker = try await run(["password", "https://m-site.net"])
        while marker.status != 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            marker = try await run(["password", "https://m-site.net"])
        }
        #expect(marker.standardOutput == "marker-pass\n", "\(marker.standardError)")
        for vault in vaults.prefix(2) {
            let status = try await status(vault.options, until: "AutoFill has the vault's identities")
            #expect(status.contains("AutoFill has the vault's identities"), "\(vault.options): \(status)")
        }
        let unregistered = try await status(["--vault", third], until: "AutoFill does not have")
        #expect(
            unregistered.contains("AutoFill does not have the vault's latest identities")
                && unregistered.contains("not a registered provider")
                && unregistered.contains("`keyport vault register` makes the vault an app keyportd knows"),
            "\(unregistered)"
        )
        // Each registered vault answers for its own site, as its own app; the third for nothing.
        for (vault, provider) in zip(vaults.prefix(2), ["org.keyport.vault", "org.example.second"]) {
            let answer = try await run(["password", vault.site, "--json"])
            #expect(
                answer.standardOutput.contains(#""password":"\#(vault.password)","provider":"\#(provider)""#),
                "\(vault.site): \(answer.standardOutput)\(answer.standardError)"
            )
        }
        let nobody = try await run(["password", "https://c-site.net"])
        #expect(nobody.status == 1 && nobody.standardError.contains("no enabled provider has a password"))

        // Later changes in either vault reach AutoFill too; the unregistered one's never replace theirs.
        let later = try await run(
            ["vault", "add", "--passphrase-stdin", "--title", "d", "--url", "https://d-site.net", "--user", "dan"]
                + ["--vault", second],
            "d-pass\n"
        )
        #expect(later.status == 0, "\(later.standardError)")
        _ = try await run(
            ["vault", "add", "--passphrase-stdin", "--title", "e", "--url", "https://e-site.net", "--user", "eve"]
                + ["--vault", third],
            "e-pass\n"
        )
        let reachedBy = ContinuousClock.now + .seconds(30)
        var reached = try await run(["password", "https://d-site.net"])
        while reached.status != 0, ContinuousClock.now < reachedBy {
            try await Task.sleep(for: .milliseconds(100))
            reached = try await run(["password", "https://d-site.net"])
        }
        #expect(reached.standardOutput == "d-pass\n", "\(reached.standardError)")
        for vault in vaults.prefix(2) {
            #expect(try await run(["password", vault.site]).standardOutput == vault.password + "\n")
        }
        #expect(try await run(["password", "https://e-site.net"]).status == 1)
        // What to run names the vault that is meant.
        #expect(try await run(["vault", "lock", "--vault", third]).status == 0)
        let hint = try await run(["vault", "list", "--vault", third])
        #expect(hint.standardError.contains("keyport vault unlock --vault '\(third)'"), "\(hint.standardError)")

        // An item moved to another site while AutoFill could not hear of it (the vault disabled
        // in Settings): AutoFill's old identity still names the old site, and the vault, which
        // checks the item itself, gives nothing there.
        #expect(try await run(["providers", "disable", "org.example.second"]).status == 0)
        let moved = try await run([
            "vault", "edit", "--vault", second, "https://b-site.net", "--url", "https://moved.example",
        ])
        #expect(moved.status == 0, "\(moved.standardError)")
        #expect(try await run(["providers", "enable", "org.example.second"]).status == 0)
        let stale = try await run(["password", "https://b-site.net"])
        #expect(stale.status == 1 && stale.standardOutput.isEmpty, "\(stale.standardOutput)\(stale.standardError)")
        // Asking the vault's status, once it is enabled again, sends AutoFill everything anew.
        _ = try await run(["vault", "status", "--vault", second])
        let movedBy = ContinuousClock.now + .seconds(30)
        var moved2 = try await run(["password", "https://moved.example"])
        while moved2.status != 0, ContinuousClock.now < movedBy {
            try await Task.sleep(for: .milliseconds(100))
            moved2 = try await run(["password", "https://moved.example"])
        }
        #expect(moved2.standardOutput == "b-pass\n", "\(moved2.standardError)")
        #expect(
            try await status(["--vault", second], until: "AutoFill has").contains("AutoFill has the vault's identities")
        )
    }

    @Test("an exchange between two vaults through keyportd: every item, whole, into a locked vault")
    func exchangeBetweenVaults() async throws {
        let directory = try TemporaryDirectory("kp-vault-exchange")
        var environment = sandboxEnvironment(in: directory.url)
        // Each vault's keeper listens in the runtime directory, named after its vault.
        environment["XDG_RUNTIME_DIR"] = try directory.subdirectory("run").path
        let runtime = "XDG_RUNTIME_DIR=" + (environment["XDG_RUNTIME_DIR"] ?? "")
        defer {
            // The two vaults' keepers, which `unlock` and the importer started.
            Started.stop(running: "keyport-vault", withEnvironment: runtime)
            directory.remove()
        }
        environment["KEYPORT_LOG"] = "info"
        let second = directory.url.appendingPathComponent("second.keyport").path
        func run(_ arguments: [String], _ input: String? = nil) async throws -> Program.Ran {
            let ran = try await Program.run(
                keyport,
                arguments,
                environment: environment,
                input: input.map { Data($0.utf8) },
                timeout: .seconds(120)
            )
            return ran
        }
        let daemon = try await startKeyportd(environment)
        defer { daemon.stop() }
        // Two vaults, two apps of one program, told apart by their manifests' arguments.
        #expect(try await run(["vault", "init", "--passphrase-stdin"], "first passphrase\n").status == 0)
        #expect(
            try await run(["vault", "init", "--vault", second, "--passphrase-stdin"], "second passphrase\n").status == 0
        )
        let registered = try await run([
            "vault", "register", "--vault", second, "--id", "org.example.second", "--name", "Second vault",
        ])
        #expect(registered.status == 0, "\(registered.standardError)")
        #expect(try await run(["vault", "unlock", "--passphrase-stdin"], "first passphrase\n").status == 0)
        let sample = Peers.file("Examples/sample.cxf.json")
        let imported = try await run(["vault", "import", sample])
        #expect(imported.standardOutput.contains("15 new"), "\(imported.standardOutput)\(imported.standardError)")

        // The person chooses the second vault but does not give its passphrase: the exporter
        // hears that the second vault took nothing.
        let refusing = try Program(
            keyport,
            ["agent", "--auto", "accept:org.example.second"],
            environment: environment
        )
        _ = try await refusing.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        let declined = try await run(["vault", "export", "--to-app"])
        #expect(declined.status == 1)
        #expect(
            declined.standardError.contains("Second vault took nothing of ")
                && declined.standardError.contains("declined"),
            "\(declined.standardError)"
        )
        refusing.stop()
        _ = await refusing.waitForExit(timeout: .seconds(30))

        // The person, scripted: they choose the second vault, and type its passphrase when it asks.
        let secret = directory.url.appendingPathComponent("secret").path
        try "second passphrase\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let person = try Program(
            keyport,
            ["agent", "--auto", "accept:org.example.second", "--secret-file", secret],
            environment: environment
        )
        defer { person.stop() }
        _ = try await person.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }

        let exported = try await run(["vault", "export", "--to-app"])
        #expect(exported.status == 0, "\(exported.standardError)")
        #expect(exported.standardError.contains("Second vault kept 15 of the 15 items of"), "\(exported.standardError)")
        #expect(exported.standardError.contains("started Second vault; waiting for it to take the credentials"))
        let told = try await person.waitForLine(timeout: .seconds(60), onStandardError: true) {
            $0.contains("told you:")
        }
        #expect(told.contains("Second vault: told you:"), "the notice is in the importer's name: \(told)")
        #expect(told.contains("15 new, 0 merged"), "\(told)")
        // The second vault names itself by its path, not as "Keyport Vault (PATH)".
        #expect(told.contains("told you: The vault \(second) imported the credentials"), "\(told)")
        #expect(person.standardError.contains("gave the secret it asked for (Unlock the vault \(second) to import"))

        // Every item came over whole: the two vaults export the same document.
        func document(_ vault: [String]) async throws -> NSDictionary {
            let ran = try await run(["vault", "export"] + vault)
            #expect(ran.status == 0, "\(ran.standardError)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(ran.standardOutput.utf8)) as? NSDictionary
            )
            let copy = try #require(object.mutableCopy() as? NSMutableDictionary)
            copy.removeObject(forKey: "timestamp")
            return copy
        }
        let first = try await document([])
        // The second vault was unlocked by its importer, not by this session: its passphrase, given
        // here, lets this session read it (the vault stays open as it was).
        let unlocked = try await run(
            ["vault", "unlock", "--vault", second, "--passphrase-stdin"],
            "second passphrase\n"
        )
        #expect(unlocked.status == 0, "\(unlocked.standardError)")
        #expect(try await document(["--vault", second]) == first)
        #expect(((first["accounts"] as? [NSDictionary])?.first?["items"] as? [Any])?.count == 15)

        // A selection, the other way: the second vault exports one item to the first, which had it.
        let list = try await run(["vault", "list", "--vault", second, "Example login"])
        let id = try #require(list.standardOutput.split(separator: "\t").first.map(String.init))
        let back = try Program(
            keyport,
            ["agent", "--auto", "accept:org.keyport.vault"],
            environment: environment
        )
        defer { back.stop() }
        person.stop()
        _ = try await back.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        let one = try await run(["vault", "export", "--vault", second, "--to-app", "--item", id])
        #expect(one.status == 0, "\(one.standardError)")
        let again = try await back.waitForLine(timeout: .seconds(60), onStandardError: true) {
            $0.contains("told you:")
        }
        #expect(
            again.contains("Keyport Vault: told you:")
                && again.contains("0 new, 0 merged into items it had, 1 it had already"),
            "\(again)"
        )
        // The importer may still be ending after its report; the keepers are what is counted.
        #expect(
            Started.processes(running: "keyport-vault", arguments: ["keeper"], withEnvironment: runtime).count == 2,
            "one keeper per vault"
        )
        let unknown = try await run(["vault", "export", "--vault", second, "--to-app", "--item", "bm9uZQ"])
        #expect(unknown.status == 1 && unknown.standardError.contains("has no item bm9uZQ"), "\(unknown.standardError)")
    }
}
