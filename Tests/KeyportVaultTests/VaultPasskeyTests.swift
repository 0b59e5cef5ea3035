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
    @Test(
        "a registration and two sign-ins verified by py_webauthn (EdDSA) and python-fido2 (ES256); BE and BS, counter 0; another site's page is refused",
        arguments: ["webauthn", "fido2"]
    )
    func registerAndSignIn(library: String) async throws {
        let python = try await Peers.python(importing: ["webauthn", "fido2"])
        let directory = try TemporaryDirectory("kp-vault-passkey")
        defer { directory.remove() }
        var environment = sandboxEnvironment(in: directory.url)
        environment["KEYPORT_VAULT_SOCKET"] = directory.url.appendingPathComponent("vault.sock").path
        func run(_ arguments: [String], _ input: String? = nil) async throws -> Program.Ran {
            try await runKeyport(arguments, input, environment: environment)
        }
        let daemon = try await startKeyportd(environment)
        defer { daemon.stop() }
        let vault = try VaultLocations(environment: environment).defaultVault
        let keeper = try Program(builtProgram("keyport-vault"), ["keeper", "--vault", vault], environment: environment)
        defer { keeper.stop() }
        _ = try await keeper.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }
        #expect(try await run(["vault", "init", "--passphrase-stdin"], "open sesame\n").status == 0)
        #expect(try await run(["providers", "enable", "org.keyport.vault"]).status == 0)
        #expect(try await run(["vault", "unlock", "--passphrase-stdin"], "open sesame\n").status == 0)

        let ran = try await Program.run(
            python,
            [
                Peers.file("Tests/KeyportVaultTests/Peers/passkeys_through_host.py"), builtProgram("keyport-browser"),
                Peers.file("Tests/KeyportPasskeysTests/Peers/relying_party.py"), library, "https://login.example.com",
                "example.com",
            ],
            environment: environment,
            timeout: .seconds(120)
        )
        try #require(ran.status == 0, "\(ran.standardError)")
        let out = try #require(try JSONSerialization.jsonObject(with: Data(ran.standardOutput.utf8)) as? [String: Any])
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
        for round in ["first", "second"] {
            #expect(
                parameters("get_\(round)")["provider"] as? String == "org.keyport.vault",
                "\(object("get_\(round)"))"
            )
            let signedIn = object("signed_in_\(round)")
            #expect(signedIn["refused"] == nil && signedIn["credentialId"] != nil, "\(round): \(signedIn)")
        }
        #expect(
            object("other_site")["error"] as? String == "org.keyport.WebAuthn.SecurityError",
            "\(object("other_site"))"
        )

        // The passkey is a CXF passkey in the vault: `vault list` shows the item of its relying party.
        let list = try await run(["vault", "list"])
        #expect(list.standardOutput.contains("example.com"), "\(list.standardOutput)")
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
