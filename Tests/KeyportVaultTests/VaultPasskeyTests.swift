import Foundation
import KeyportInterfaces
import KeyportTestSupport
import KeyportVaultKeeper
import Testing

/// Keyport Vault answering WebAuthn through keyportd, asked as the browser extension asks:
/// org.keyport.WebAuthn's calls in native messaging frames to keyport-browser. A real relying
/// party — py_webauthn and python-fido2 (Tests/KeyportPasskeysTests/Peers/relying_party.py) —
/// makes the options and verifies the registration and the sign-ins.
@Suite("Passkeys from Keyport Vault through keyportd", .serialized)
struct VaultPasskeyTests {
    /// keyportd with an unlocked vault registered and enabled as its provider.
    struct Sandbox {
        var directory: TemporaryDirectory
        var environment: [String: String]
        var daemon: Program
        var keeper: Program
        /// The person's agent, saying yes to every question: keyportd asks before each passkey is
        /// made or used, the browser host's calls too.
        var agent: Program?

        init(directory: TemporaryDirectory? = nil, environment extra: [String: String] = [:]) async throws {
            self.directory = try directory ?? TemporaryDirectory("kp-vault-passkey")
            environment = sandboxEnvironment(in: self.directory.url).merging(extra) { _, given in given }
            environment["KEYPORT_VAULT_SOCKET"] = self.directory.url.appendingPathComponent("vault.sock").path
            daemon = try await startKeyportd(environment)
            let vault = try VaultLocations(environment: environment).defaultVault
            keeper = try Program(builtProgram("keyport-vault"), ["keeper", "--vault", vault], environment: environment)
            _ = try await keeper.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }
            #expect(try await run(["vault", "init", "--passphrase-stdin"], "open sesame\n").status == 0)
            #expect(try await run(["providers", "enable", "org.keyport.vault"]).status == 0)
            #expect(try await run(["vault", "unlock", "--passphrase-stdin"], "open sesame\n").status == 0)
        }

        /// Starts the agent that says yes.
        mutating func startAgent() async throws {
            let agent = try Program(keyport, ["agent", "--auto", "accept-first"], environment: environment)
            _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
            self.agent = agent
        }

        func run(_ arguments: [String], _ input: String? = nil) async throws -> Program.Ran {
            try await runKeyport(arguments, input, environment: environment)
        }

        /// The extension's part, played by Peers/passkeys_through_host.py against keyport-browser: its JSON.
        func throughHost(
            _ library: String,
            origin: String = "https://login.example.com",
            rpID: String = "example.com",
            registered: String? = nil
        ) async throws -> [String: Any] {
            let python = try await Peers.python(importing: ["webauthn", "fido2"])
            let ran = try await Program.run(
                python,
                [
                    Peers.file("Tests/KeyportVaultTests/Peers/passkeys_through_host.py"),
                    builtProgram("keyport-browser"),
                    Peers.file("Tests/KeyportPasskeysTests/Peers/relying_party.py"), library,
                    origin, rpID,
                ] + (registered.map { [$0] } ?? []),
                environment: environment,
                timeout: .seconds(120)
            )
            try #require(ran.status == 0, "\(ran.standardError)")
            return try #require(try JSONSerialization.jsonObject(with: Data(ran.standardOutput.utf8)) as? [String: Any])
        }

        func stop() {
            agent?.stop()
            keeper.stop()
            daemon.stop()
            directory.remove()
        }
    }

    @Test(
        "a registration and two sign-ins verified by py_webauthn (EdDSA) and python-fido2 (ES256); BE and BS, counter 0; another site's page is refused",
        arguments: ["webauthn", "fido2"]
    )
    func registerAndSignIn(library: String) async throws {
        var sandbox = try await Sandbox()
        defer { sandbox.stop() }
        try await sandbox.startAgent()
        let out = try await sandbox.throughHost(library)
        func object(_ key: String) -> [String: Any] { out[key] as? [String: Any] ?? [:] }
        func parameters(_ key: String) -> [String: Any] { object(key)["parameters"] as? [String: Any] ?? [:] }

        #expect(parameters("create")["provider"] as? String == "org.keyport.vault", "\(object("create"))")
        let registered = object("registered")
        #expect(registered["refused"] == nil, "\(registered)")
        #expect(registered["aaguid"] as? String == "721f7147-1b56-4e08-9f31-bb8d28eb1f09", "\(registered)")
        #expect(registered["backupEligible"] as? Bool == true && registered["backedUp"] as? Bool == true)
        #expect(registered["signCount"] as? Int == 0)
        let listed = parameters("listed")["passkeys"] as? [[String: Any]] ?? []
        #expect(listed.count == 1 && listed.first?["userName"] as? String == "alice@example.com", "\(listed)")
        for round in ["first", "second", "chosen"] {
            #expect(
                parameters("get_\(round)")["provider"] as? String == "org.keyport.vault",
                "\(object("get_\(round)"))"
            )
            let signedIn = object("signed_in_\(round)")
            #expect(signedIn["refused"] == nil && signedIn["credentialId"] != nil, "\(round): \(signedIn)")
        }
        // PRF: an input's output is the same each time, another input's is another.
        let prf = object("prf")
        #expect(prf["a"] as? String != nil && prf["a"] as? String == prf["again"] as? String, "\(prf)")
        #expect(prf["b"] as? String != nil && prf["b"] as? String != prf["a"] as? String, "\(prf)")
        #expect(prf["a_verified"] as? Bool == true && prf["b_verified"] as? Bool == true, "\(prf)")
        for (key, error, words) in [
            ("excluded", "InvalidStateError", "excluded"), ("other_site", "SecurityError", "relying party id"),
            ("http", "SecurityError", "not a secure origin"), ("public_suffix", "SecurityError", "\"com\""),
            ("long_user_id", "TypeError", "65 bytes"), ("no_algorithm", "NotSupportedError", "-65535"),
            ("unknown_passkey", "NotAllowedError", "no passkey could be used"),
            ("other_relying_party", "NotAllowedError", "no passkey could be used"),
            ("prf_by_credential_create", "NotSupportedError", "evalByCredential"),
        ] {
            #expect(object(key)["error"] as? String == "org.keyport.WebAuthn.\(error)", "\(key): \(object(key))")
            #expect((object(key)["message"] as? String)?.contains(words) == true, "\(key): \(object(key))")
        }

        // The person was asked in the agent before the passkey was made and each time it was used.
        let asked = sandbox.agent?.standardError ?? ""
        #expect(
            asked.contains(
                "you said yes to: A page of https://login.example.com (in your browser) asks to make a passkey for “alice@example.com” at example.com"
            ),
            "\(asked)"
        )
        // Asked for each sign-in (two, and three with PRF), but not for the passkey the host named,
        // as the extension does for the one the person clicked in its prompt.
        #expect(
            asked.components(separatedBy: "asks to sign you in to example.com as “alice@example.com”").count - 1 == 5,
            "\(asked)"
        )

        // The passkey is a CXF passkey in the vault: `vault list` shows the item of its relying party.
        let list = try await sandbox.run(["vault", "list"])
        #expect(list.standardOutput.contains("example.com\talice@example.com"), "\(list.standardOutput)")
        // `vault search` finds it by its account and relying party.
        let found = try await sandbox.run(["vault", "search", "alice@example", "example.com"])
        #expect(found.standardOutput.contains("example.com\talice@example.com"), "\(found.standardOutput)")
        let shown = try await sandbox.run(["vault", "show", "example.com"])
        #expect(shown.standardOutput.contains("passkey: example.com as alice@example.com"), "\(shown.standardOutput)")
        #expect(shown.standardOutput.contains("private key: (hidden: --reveal)"), "\(shown.standardOutput)")
        #expect(shown.standardOutput.contains("prf: yes"), "\(shown.standardOutput)")
        let revealed = try await sandbox.run(["vault", "show", "--reveal", "example.com"])
        #expect(
            revealed.standardOutput.contains("private key: M"),
            "\(revealed.standardOutput) \(revealed.standardError)"
        )
    }

    @Test(
        "a passkey another manager exported (CXF) signs in after `keyport vault import`, verified by both relying parties"
    )
    func importedPasskey() async throws {
        var sandbox = try await Sandbox()
        defer { sandbox.stop() }
        try await sandbox.startAgent()
        let python = try await Peers.python(importing: ["webauthn", "fido2"])
        let export = sandbox.directory.url.appendingPathComponent("export.json").path
        let registered = sandbox.directory.url.appendingPathComponent("registered.json").path
        let made = try await Program.run(
            python,
            [Peers.file("Tests/KeyportVaultTests/Peers/exported_passkey.py"), "example.com", export, registered]
        )
        try #require(made.status == 0, "\(made.standardError)")
        let imported = try await sandbox.run(["vault", "import", export])
        #expect(imported.status == 0, "\(imported.standardError)")
        _ = try await sandbox.keeper.waitForLine(timeout: .seconds(30), onStandardError: true) {
            $0.contains("identities updated (1)")
        }
        for library in ["webauthn", "fido2"] {
            let out = try await sandbox.throughHost(library, registered: registered)
            let signedIn = out["signed_in"] as? [String: Any]
            #expect(signedIn != nil && signedIn?["refused"] == nil, "\(library): \(out)")
        }
    }

    @Test("a passkey moved to a second vault by credential exchange signs in from there, verified by py_webauthn")
    func movedByExchange() async throws {
        var sandbox = try await Sandbox()
        defer { sandbox.stop() }
        // The person, scripted: says yes, chooses the second vault as the importer, and types its
        // passphrase when it asks.
        let secret = sandbox.directory.url.appendingPathComponent("secret").path
        try "second passphrase\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let person = try Program(
            keyport,
            ["agent", "--auto", "accept:org.example.second", "--secret-file", secret],
            environment: sandbox.environment
        )
        _ = try await person.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        sandbox.agent = person
        let first = try await sandbox.throughHost("webauthn")
        let registered = try #require(first["registered"] as? [String: Any])
        let credentialID = try #require(registered["credentialId"] as? String)

        let second = sandbox.directory.url.appendingPathComponent("second.keyport").path
        #expect(
            try await sandbox.run(["vault", "init", "--vault", second, "--passphrase-stdin"], "second passphrase\n")
                .status == 0
        )
        #expect(
            try await sandbox.run([
                "vault", "register", "--vault", second, "--id", "org.example.second", "--name", "Second vault",
            ])
            .status == 0
        )
        // Only the second vault answers from here on.
        #expect(try await sandbox.run(["providers", "enable", "org.example.second"]).status == 0)
        let exported = try await sandbox.run(["vault", "export", "--to-app"])
        #expect(
            exported.status == 0 && exported.standardError.contains("Second vault kept 1 of the 1 items"),
            "\(exported.standardError)"
        )
        #expect(try await sandbox.run(["providers", "disable", "org.keyport.vault"]).status == 0)

        let state = sandbox.directory.url.appendingPathComponent("registered.json").path
        try JSONSerialization.data(withJSONObject: ["credentialId": credentialID, "registered": registered]).write(
            to: URL(fileURLWithPath: state)
        )
        var signedIn: [String: Any] = [:]
        // The second vault's keeper sends its identities once the import is in: wait for them.
        for _ in 0..<50 {
            signedIn = try await sandbox.throughHost("webauthn", registered: state)
            if signedIn["signed_in"] != nil { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        let get = (signedIn["get"] as? [String: Any])?["parameters"] as? [String: Any]
        #expect(get?["provider"] as? String == "org.example.second", "\(signedIn)")
        let verdict = signedIn["signed_in"] as? [String: Any]
        #expect(
            verdict != nil && verdict?["refused"] == nil && verdict?["credentialId"] as? String == credentialID,
            "\(signedIn)"
        )
    }

    @Test(
        "a native app written with Apple's API signs up and in, for the domain its manifest associates and its site confirms, once the person says yes; an app the site does not name is refused"
    )
    func nativeApp() async throws {
        let python = try await Peers.python(importing: ["webauthn", "fido2"])
        let directory = try TemporaryDirectory("kp-passkey-app")
        // The app's site: https on localhost, confirming org.example.passkeyapp; keyportd trusts its CA.
        let site = try Program(
            python,
            [
                Peers.file("Tests/KeyportVaultTests/Peers/association_site.py"), directory.url.path,
                "org.example.passkeyapp",
            ]
        )
        defer { site.stop() }
        let ready = try await site.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("ready ") }
        let words = ready.split(separator: " ")
        let port = String(words[1])
        let sandbox = try await Sandbox(directory: directory, environment: ["SSL_CERT_FILE": String(words[2])])
        defer { sandbox.stop() }
        let origin = "https://localhost:\(port)"
        func register(_ id: String) throws {
            let providers = URL(fileURLWithPath: sandbox.environment["XDG_DATA_HOME"]!).appendingPathComponent(
                "keyport/providers"
            )
            try FileManager.default.createDirectory(at: providers, withIntermediateDirectories: true)
            let manifest: [String: Any] = [
                "id": id, "name": "Example Passkey App", "exec": [builtProgram("ExamplePasskeyApp")],
                "associatedDomains": ["webcredentials:localhost:\(port)"],
            ]
            try JSONSerialization.data(withJSONObject: manifest).write(
                to: providers.appendingPathComponent("\(id).json")
            )
        }
        try register("org.example.passkeyapp")
        // `providers list` says what the app may do: a client signing in at its domain.
        let listed = try await sandbox.run(["providers", "list"])
        #expect(listed.standardOutput.contains("signing in at localhost:\(port)"), "\(listed.standardOutput)")
        let agent = try Program(keyport, ["agent", "--auto", "accept-first"], environment: sandbox.environment)
        defer { agent.stop() }
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        let script = Peers.file("Tests/KeyportPasskeysTests/Peers/relying_party.py")
        func relyingParty(
            _ command: String,
            _ arguments: [String],
            _ given: [String: Any] = [:]
        ) async throws -> [String: Any] {
            let input = try JSONSerialization.data(withJSONObject: given)
            let ran = try await Program.run(python, [script, "webauthn", command] + arguments, input: input)
            try #require(ran.status == 0, "\(command): \(ran.standardError)")
            return try #require(try JSONSerialization.jsonObject(with: Data(ran.standardOutput.utf8)) as? [String: Any])
        }
        func app(_ arguments: [String]) async throws -> Program.Ran {
            try await Program.run(
                builtProgram("ExamplePasskeyApp"),
                arguments,
                environment: sandbox.environment,
                timeout: .seconds(60)
            )
        }

        // Signing in as apps do (a passkey, else a saved password) with nothing saved: canceled,
        // saying so. Then with passwords saved for the app's domain and another site: the person
        // chooses among those of the app's domain, in the agent, and the app gets it.
        let nothingSaved = try await app(["signin", "localhost", "AAAA", origin])
        #expect(
            nothingSaved.status == 1
                && nothingSaved.standardError.contains("no enabled provider has a password for \(origin)"),
            "\(nothingSaved.standardError)"
        )
        for (site, user) in [(origin, "alice@example.com"), ("https://elsewhere.example", "mallory")] {
            let added = try await sandbox.run(
                ["vault", "add", "--passphrase-stdin", "--title", user, "--url", site, "--user", user],
                "hunter2-\(user)\n"
            )
            try #require(added.status == 0, "\(added.standardError)")
        }
        var fallback = try await app(["signin", "localhost", "AAAA", origin])
        for _ in 0..<50 where fallback.standardError.contains("no enabled provider has a password") {
            // The vault's identities reach keyportd a moment after the item is added.
            try await Task.sleep(for: .milliseconds(100))
            fallback = try await app(["signin", "localhost", "AAAA", origin])
        }
        try #require(fallback.status == 0, "\(fallback.standardError)")
        #expect(
            try JSONSerialization.jsonObject(with: Data(fallback.standardOutput.utf8)) as? [String: String]
                == ["user": "alice@example.com", "password": "hunter2-alice@example.com"],
            "\(fallback.standardOutput)"
        )

        let begun = try await relyingParty("begin-registration", ["localhost"])
        let options = try #require(begun["options"] as? [String: Any])
        let user = try #require(options["user"] as? [String: Any])
        let made = try await app([
            "register", "localhost", try #require(options["challenge"] as? String), try #require(user["id"] as? String),
            "alice@example.com", origin,
        ])
        try #require(made.status == 0, "\(made.standardError)")
        let credential = try JSONSerialization.jsonObject(with: Data(made.standardOutput.utf8))
        let registered = try await relyingParty(
            "finish-registration",
            ["localhost", origin],
            ["state": begun["state"]!, "credential": credential]
        )
        #expect(registered["aaguid"] as? String == "721f7147-1b56-4e08-9f31-bb8d28eb1f09")
        // The person was asked, in the agent, before the provider was.
        _ = try await agent.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains(
                "you said yes to: The app “Example Passkey App” (org.example.passkeyapp) asks to make a passkey for “alice@example.com” at localhost, kept by Keyport Vault"
            )
        }

        let signIn = try await relyingParty(
            "begin-authentication",
            ["localhost"],
            ["credentialIds": [registered["credentialId"]!]]
        )
        let challenge = try #require((signIn["options"] as? [String: Any])?["challenge"] as? String)
        let signed = try await app(["signin", "localhost", challenge, origin])
        try #require(signed.status == 0, "\(signed.standardError)")
        let verdict = try await relyingParty(
            "finish-authentication",
            ["localhost", origin],
            [
                "state": signIn["state"]!,
                "credential": try JSONSerialization.jsonObject(with: Data(signed.standardOutput.utf8)),
                "registered": registered,
            ]
        )
        #expect(verdict["credentialId"] as? String == registered["credentialId"] as? String)
        _ = try await agent.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains(
                "you said yes to: The app “Example Passkey App” (org.example.passkeyapp) asks to sign you in to localhost as “alice@example.com”"
            )
        }

        // With a passkey, the sign-in sheet's passkey is used ("signin" asks for a passkey, else a
        // password); the app asking only for a password gets the one the person chooses.
        let given = try await app(["password"])
        try #require(given.status == 0, "\(given.standardError)")
        let password = try JSONSerialization.jsonObject(with: Data(given.standardOutput.utf8)) as? [String: String]
        #expect(
            password == ["user": "alice@example.com", "password": "hunter2-alice@example.com"],
            "\(given.standardOutput)"
        )
        _ = try await agent.waitForLine(timeout: .seconds(10), onStandardError: true) {
            $0.contains("chose 1: \(origin) — alice@example.com (Keyport Vault)")
        }

        // The person says no: nothing is signed, and the app hears it was canceled.
        agent.stop()
        let declining = try Program(keyport, ["agent", "--auto", "decline"], environment: sandbox.environment)
        defer { declining.stop() }
        _ = try await declining.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        let declined = try await app(["signin", "localhost", challenge, origin])
        #expect(declined.status == 1 && declined.standardError.contains("you said no"), "\(declined.standardError)")
        let noPassword = try await app(["password"])
        #expect(
            noPassword.status == 1 && noPassword.standardError.contains("you chose none of the passwords"),
            "\(noPassword.standardError)"
        )

        // Registered under an id the site does not name: keyportd refuses it, and says why.
        try FileManager.default.removeItem(
            at: URL(fileURLWithPath: sandbox.environment["XDG_DATA_HOME"]!).appendingPathComponent(
                "keyport/providers/org.example.passkeyapp.json"
            )
        )
        // Not registered at all: no password for it.
        let unregistered = try await app(["password"])
        #expect(
            unregistered.status == 1 && unregistered.standardError.contains("the caller is none"),
            "\(unregistered.standardError)"
        )
        try register("org.example.unnamed")
        let refused = try await app(["signin", "localhost", challenge, origin])
        #expect(
            refused.status == 1 && refused.standardError.contains("does not name org.example.unnamed"),
            "\(refused.standardError)"
        )
        let refusedPassword = try await app(["password"])
        #expect(
            refusedPassword.status == 1 && refusedPassword.standardError.contains("does not name org.example.unnamed"),
            "\(refusedPassword.standardError)"
        )
        // And no app speaks for an origin its manifest does not associate.
        let elsewhere = try await app(["signin", "localhost", challenge, "https://localhost"])
        #expect(
            elsewhere.status == 1 && elsewhere.standardError.contains("may speak only for"),
            "\(elsewhere.standardError)"
        )
    }

    @Test(
        "a page of another site signs up and in with a relying party's passkeys when the relying party lists its origin in /.well-known/webauthn (Related Origin Requests); an origin it does not list is refused"
    )
    func relatedOrigins() async throws {
        let python = try await Peers.python(importing: ["webauthn"])
        let directory = try TemporaryDirectory("kp-related-origins")
        // The relying party is localhost: its list is at https://localhost/.well-known/webauthn,
        // port 443, behind a test CA keyportd trusts through SSL_CERT_FILE.
        let site = try Program(
            python,
            [
                Peers.file("Tests/KeyportVaultTests/Peers/association_site.py"), directory.url.path, "org.example.none",
                "443", "https://shop.example",
            ]
        )
        defer { site.stop() }
        let ready = try await site.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("ready ") }
        let ca = String(ready.split(separator: " ")[2])
        var sandbox = try await Sandbox(directory: directory, environment: ["SSL_CERT_FILE": ca])
        defer { sandbox.stop() }
        try await sandbox.startAgent()
        let results = try await sandbox.throughHost("webauthn", origin: "https://shop.example", rpID: "localhost")
        func object(_ key: String) -> [String: Any] { results[key] as? [String: Any] ?? [:] }

        // Made and used from https://shop.example for the relying party localhost, and verified by
        // py_webauthn with that origin.
        let registered = object("registered")
        #expect(registered["refused"] == nil && registered["credentialId"] != nil, "\(results)")
        let signedIn = object("signed_in_first")
        #expect(signedIn["refused"] == nil && signedIn["credentialId"] != nil, "\(results)")
        // A page of a site the list does not name: refused, saying why.
        let other = object("other_site")
        #expect(other["error"] as? String == "org.keyport.WebAuthn.SecurityError", "\(other)")
        #expect(
            (other["message"] as? String)?.contains(
                "https://localhost/.well-known/webauthn does not list https://example.net among its related origins"
            ) == true,
            "\(other)"
        )
    }

    @Test("a process that is not Keyport's browser host may not speak for a web origin")
    func onlyTheBrowserHost() async throws {
        let python = try await Peers.python(importing: ["varlink"])
        let directory = try TemporaryDirectory("kp-webauthn-caller")
        defer { directory.remove() }
        let environment = sandboxEnvironment(in: directory.url)
        let daemon = try await startKeyportd(environment)
        defer { daemon.stop() }
        let script = """
            import json, os, varlink
            address = "unix:" + os.environ["KEYPORT_SOCKET"]
            with varlink.Client(address=address) as client, client.open("org.keyport.WebAuthn") as service:
                try:
                    service.Get(origin="https://login.example.com", options={"challenge": "AAAAAAAAAAAAAAAAAAAAAA"})
                    print("answered")
                except varlink.VarlinkError as error:
                    print(json.dumps({"error": error.error(), "parameters": error.parameters()}))
            """
        let ran = try await Program.run(python, ["-c", script], environment: environment, timeout: .seconds(60))
        let out = try JSONSerialization.jsonObject(with: Data(ran.standardOutput.utf8)) as? [String: Any]
        #expect(
            out?["error"] as? String == "org.keyport.WebAuthn.SecurityError",
            "\(ran.standardOutput) \(ran.standardError)"
        )
        let message = (out?["parameters"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains("may not speak for a web origin"), "\(message)")
    }
}
