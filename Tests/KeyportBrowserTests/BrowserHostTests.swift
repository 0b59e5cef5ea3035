import Foundation
import KeyportAutoFillTestSupport
import KeyportInterfaces
import KeyportTestSupport
import Testing

/// keyport-browser as the browser starts it (native messaging frames on its standard input and
/// output, the extension's origin as its argument), driven by a Python script in the browser's place.
@Suite("keyport-browser, the extension's native messaging host", .serialized)
struct BrowserHostTests {
    /// Frames in the browsers' format: what the script sends and reads.
    static let driver = """
        import json, os, struct, subprocess, sys, time
        host = subprocess.Popen([sys.argv[1], "chrome-extension://pgapgpgkilgjidgnaedbcoanfnabnedp/"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        def send(message):
            data = message if isinstance(message, bytes) else json.dumps(message).encode()
            host.stdin.write(struct.pack("@I", len(data)) + data)
            host.stdin.flush()
        def receive():
            header = host.stdout.read(4)
            if len(header) < 4:
                return None
            return json.loads(host.stdout.read(struct.unpack("@I", header)[0]))
        def call(id, method, **parameters):
            send({"id": id, "method": "org.keyport." + method, "parameters": parameters})
        site = [{"identifier": "https://example.com/", "type": "URL"}]
        hang = [{"identifier": "https://hang.example/", "type": "URL"}]
        out = {}
        # A call that waits (the hanging provider), then one that does not: answered first.
        call(1, "AutoFill.RequestCredential", type="password", serviceIdentifiers=hang)
        call(2, "AutoFill.ListIdentities", type="password", serviceIdentifiers=site)
        out["first"] = receive()
        # Cancel stops the waiting call at once; both are answered.
        started = time.time()
        call(3, "Browser.Cancel", call=1)
        out["cancel"] = sorted([receive(), receive()], key=lambda reply: reply.get("id", 0))
        out["cancel_seconds"] = time.time() - started
        # The person's credential, with the interim reply of a provider asking through the agent.
        call(4, "AutoFill.RequestCredential", type="password", serviceIdentifiers=[{"identifier": "https://interactive.example/", "type": "URL"}])
        out["asked"] = [receive(), receive()]
        # What it does not relay, and messages it cannot read.
        call(5, "Exchange.Export", app="x")
        out["not_relayed"] = receive()
        # A page is one site: no call for every identity, nor for a site that is not a web page's.
        call(8, "AutoFill.ListIdentities", type="password", serviceIdentifiers=[])
        call(9, "AutoFill.RequestCredential", type="password", serviceIdentifiers=[{"identifier": "example.com", "type": "domain"}])
        out["no_site"] = sorted([receive(), receive()], key=lambda reply: reply.get("id", 0))
        send({"method": "org.keyport.AutoFill.ListIdentities"})
        out["no_id"] = receive()
        send(b"not json")
        out["not_json"] = receive()
        send(b"x" * (2 << 20))
        out["too_large"] = receive()
        call(6, "AutoFill.RequestCredential", type="password", serviceIdentifiers=hang)
        call(6, "AutoFill.ListIdentities", type="password", serviceIdentifiers=site)
        out["same_id"] = receive()
        call(7, "Browser.Cancel", call=6)
        out["after"] = sorted([receive(), receive()], key=lambda reply: reply.get("id", 0))
        host.stdin.close()
        out["rest"] = host.stdout.read().decode(errors="replace")
        out["status"] = host.wait(timeout=30)
        print(json.dumps(out))
        """

    @Test(
        "calls are relayed at once, answered as they finish, canceled on request; what it cannot read or relay is refused"
    )
    func relays() async throws {
        let python = try await Peers.python(importing: ["json"])
        let sandbox = try AutoFillSandbox(timeout: 30)
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(
            order: ["quiet", "interactive", "hang"],
            services: ["quiet": "example.com", "interactive": "interactive.example", "hang": "hang.example"]
        )
        let agent = try await sandbox.startAgent(secret: "open sesame")
        defer { agent.stop() }
        let ran = try await Program.run(
            python,
            ["-c", Self.driver, builtProgram("keyport-browser")],
            environment: sandbox.environment,
            timeout: .seconds(120)
        )
        try #require(ran.status == 0, "\(ran.standardError)")
        let out = try #require(try JSONSerialization.jsonObject(with: Data(ran.standardOutput.utf8)) as? [String: Any])
        func reply(_ value: Any?) -> [String: Any] { value as? [String: Any] ?? [:] }
        func parameters(_ value: Any?) -> [String: Any] { reply(value)["parameters"] as? [String: Any] ?? [:] }

        let first = reply(out["first"])
        #expect(first["id"] as? Int == 2 && first["error"] == nil, "\(first)")
        #expect(((parameters(first)["identities"] as? [Any])?.count ?? 0) == 1, "\(first)")
        let canceled = out["cancel"] as? [Any] ?? []
        #expect(reply(canceled.first)["id"] as? Int == 1)
        #expect(reply(canceled.first)["error"] as? String == Browser.Canceled.name, "\(canceled)")
        #expect(reply(canceled.last)["id"] as? Int == 3 && reply(canceled.last)["error"] == nil, "\(canceled)")
        #expect((out["cancel_seconds"] as? Double ?? 99) < 10, "the provider's 30 s were not waited for")

        let asked = out["asked"] as? [Any] ?? []
        #expect(reply(asked.first)["continues"] as? Bool == true, "\(asked)")
        #expect((parameters(asked.first)["asking"] as? String)?.contains("Example interactive") == true, "\(asked)")
        let credential = parameters(asked.last)["credential"] as? [String: Any]
        #expect(credential?["password"] as? String == "correct horse battery staple", "\(asked)")
        #expect(reply(asked.last)["id"] as? Int == 4)

        let notRelayed = reply(out["not_relayed"])
        #expect(notRelayed["error"] as? String == Browser.MethodNotRelayed.name && notRelayed["id"] as? Int == 5)
        for refused in out["no_site"] as? [Any] ?? [] {
            #expect(reply(refused)["error"] as? String == "org.varlink.service.InvalidParameter", "\(refused)")
        }
        for key in ["no_id", "not_json", "too_large"] {
            let refused = reply(out[key])
            #expect(
                refused["error"] as? String == Browser.InvalidMessage.name && refused["id"] == nil,
                "\(key): \(refused)"
            )
        }
        #expect((parameters(out["too_large"])["message"] as? String)?.contains("2097152 bytes") == true)
        #expect((parameters(out["same_id"])["message"] as? String)?.contains("id 6 is running already") == true)
        let after = out["after"] as? [Any] ?? []
        #expect(reply(after.first)["error"] as? String == Browser.Canceled.name, "\(after)")
        // Frames only on standard output, and the host ends when the browser closes the port.
        #expect(out["rest"] as? String == "" && out["status"] as? Int == 0, "\(out)")
    }

    @Test("without keyportd every call is answered DaemonUnavailable, saying how to start it")
    func withoutKeyportd() async throws {
        let python = try await Peers.python(importing: ["json"])
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let script = """
            import json, struct, subprocess, sys
            host = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            data = json.dumps({"id": 1, "method": "org.keyport.AutoFill.ListIdentities", "parameters": {"type": "password", "serviceIdentifiers": [{"identifier": "https://example.com/", "type": "URL"}]}}).encode()
            host.stdin.write(struct.pack("@I", len(data)) + data)
            host.stdin.flush()
            length = struct.unpack("@I", host.stdout.read(4))[0]
            print(host.stdout.read(length).decode())
            host.stdin.close()
            host.wait(timeout=30)
            """
        let ran = try await Program.run(
            python,
            ["-c", script, builtProgram("keyport-browser")],
            environment: sandbox.environment,
            timeout: .seconds(60)
        )
        #expect(ran.status == 0, "\(ran.standardError)")
        #expect(ran.standardOutput.contains(Browser.DaemonUnavailable.name), "\(ran.standardOutput)")
        #expect(ran.standardOutput.contains("keyportd"), "\(ran.standardOutput)")
    }

    @Test(
        "keyport browser install writes each browser's host manifest with the extension's ids; again, nothing changes; uninstall removes them"
    )
    func install() async throws {
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        var environment = sandbox.environment
        environment["HOME"] = try sandbox.directory.subdirectory("home").path
        let extensionDirectory = Peers.file("browser")
        func keyport(_ arguments: [String]) async throws -> Program.Ran {
            try await runKeyport(arguments, environment: environment, timeout: .seconds(60))
        }
        let config = environment["XDG_CONFIG_HOME"]!
        // Google Chrome's folder is there already (the person uses Chrome); the others are not.
        try FileManager.default.createDirectory(atPath: config + "/google-chrome", withIntermediateDirectories: true)
        let paths = [
            "chromium": config + "/chromium/NativeMessagingHosts/org.keyport.browser.json",
            "chrome": config + "/google-chrome/NativeMessagingHosts/org.keyport.browser.json",
            "firefox": environment["HOME"]! + "/.mozilla/native-messaging-hosts/org.keyport.browser.json",
        ]
        for browser in ["chromium", "chrome", "firefox"] {
            let installed = try await keyport([
                "browser", "install", "--browser", browser, "--extension", extensionDirectory,
            ])
            #expect(installed.status == 0, "\(installed.standardError)")
            let data = try Data(contentsOf: URL(fileURLWithPath: paths[browser]!))
            let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(manifest["name"] as? String == "org.keyport.browser" && manifest["type"] as? String == "stdio")
            #expect(manifest["path"] as? String == builtProgram("keyport-browser"))
            if browser == "firefox" {
                #expect(manifest["allowed_extensions"] as? [String] == ["autofill@keyport.org"])
                #expect(installed.standardOutput.contains("xpinstall.signatures.required"))
            } else {
                // The id Chromium derives from the manifest's key (the Chromium test loads it by it).
                #expect(
                    manifest["allowed_origins"] as? [String] == ["chrome-extension://pgapgpgkilgjidgnaedbcoanfnabnedp/"]
                )
                #expect(installed.standardOutput.contains("Load unpacked"))
            }
            let again = try await keyport([
                "browser", "install", "--browser", browser, "--extension", extensionDirectory,
            ])
            #expect(again.standardOutput.contains("is up to date"), "\(again.standardOutput)")
            // A package's manifest: the same, but for the host where the package puts it.
            let packaged = try await keyport([
                "browser", "manifest", "--browser", browser, "--host", "/usr/bin/keyport-browser",
                "--extension", extensionDirectory,
            ])
            var expected = manifest
            expected["path"] = "/usr/bin/keyport-browser"
            let printed = try JSONSerialization.jsonObject(with: Data(packaged.standardOutput.utf8))
            #expect(packaged.status == 0 && (printed as? NSDictionary) == (expected as NSDictionary))
        }
        let relative = try await keyport([
            "browser", "manifest", "--browser", "firefox", "--host", "bin/keyport-browser",
            "--extension", extensionDirectory,
        ])
        #expect(relative.status == 2 && relative.standardError.contains("absolute path"), "\(relative.standardError)")
        let missing = try await keyport(["browser", "install", "--extension", "/nonexistent"])
        #expect(
            missing.status == 2 && missing.standardError.contains("/nonexistent/manifest.json"),
            "\(missing.standardError)"
        )
        // Another Keyport's host (installed elsewhere, there) in Firefox's manifest: install says it
        // replaces it; uninstall leaves a manifest that names another Keyport's host that is there.
        let other = try sandbox.directory.subdirectory("other-prefix/bin").appendingPathComponent("keyport-browser")
            .path
        try "#!/bin/sh\n".write(toFile: other, atomically: true, encoding: .utf8)
        #expect(chmod(other, 0o755) == 0)
        let othersManifest = Data(#"{"name": "org.keyport.browser", "path": "\#(other)", "type": "stdio"}"#.utf8)
        try othersManifest.write(to: URL(fileURLWithPath: paths["firefox"]!))
        let replacing = try await keyport([
            "browser", "install", "--browser", "firefox", "--extension", extensionDirectory,
        ])
        #expect(replacing.standardOutput.contains("(it named \(other), now this one)"), "\(replacing.standardOutput)")
        try othersManifest.write(to: URL(fileURLWithPath: paths["chromium"]!))
        let removed = try await keyport(["browser", "uninstall"])
        #expect(removed.status == 0)
        #expect(removed.standardOutput.contains("left \(paths["chromium"]!): it names another Keyport's \(other)"))
        #expect(FileManager.default.contents(atPath: paths["chromium"]!) == othersManifest)
        let onlyTheirs = try await keyport(["browser", "uninstall"])
        #expect(
            onlyTheirs.standardOutput.contains("left ") && !onlyTheirs.standardOutput.contains("no host manifest"),
            "\(onlyTheirs.standardOutput)"
        )
        try FileManager.default.removeItem(atPath: paths["chromium"]!)
        for path in paths.values { #expect(!FileManager.default.fileExists(atPath: path), "\(path)") }
        #expect(try await keyport(["browser", "uninstall"]).standardOutput.contains("no host manifest"))
        // The folders install made are gone; the one that was there before stays.
        for made in [
            config + "/chromium", config + "/google-chrome/NativeMessagingHosts", environment["HOME"]! + "/.mozilla",
        ] {
            #expect(!FileManager.default.fileExists(atPath: made), "\(made) was left behind")
        }
        #expect(FileManager.default.fileExists(atPath: config + "/google-chrome"))
    }
}
