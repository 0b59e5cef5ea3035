import Foundation
import KeyportDaemon
import KeyportInterfaces
import KeyportSystem
import KeyportTestSupport
import Testing
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An environment of this process's with `changes` applied (`nil` removes a variable).
private func environment(_ changes: [String: String?]) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    for (name, value) in changes { environment[name] = value }
    return environment
}

private func getInfo(_ path: String) async throws -> (product: String, interfaces: [String]) {
    let info = try await VarlinkConnection.withConnection(
        path: path,
        maximumMessageSize: DaemonClient.maximumMessageSize
    ) {
        try await $0.call(VarlinkService.GetInfo.self, .init())
    }
    return (info.product, info.interfaces)
}

@Suite("keyportd")
struct DaemonTests {
    @Test("it listens at KEYPORT_SOCKET (0600), answers introspection, and on SIGTERM stops and removes its socket")
    func lifecycle() async throws {
        let directory = try TemporaryDirectory("kp-daemon")
        defer { directory.remove() }
        let socket = directory.url.appendingPathComponent("d.sock").path
        let daemon = try await startKeyportd(environment(["KEYPORT_SOCKET": socket]))
        var info = stat()
        #expect(lstat(socket, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let answer = try await getInfo(socket)
        #expect(answer.product == "keyportd")
        #expect(answer.interfaces.contains("org.varlink.service"))

        daemon.signal(SIGTERM)
        let ended = try await daemon.finish(timeout: .seconds(30))
        #expect(ended.status == 0, "\(ended.standardError)")
        #expect(!FileManager.default.fileExists(atPath: socket))
        #expect(!FileManager.default.fileExists(atPath: socket + ".lock"))
    }

    @Test("a second keyportd on the same socket refuses to start, naming the first, which keeps serving its agent")
    func secondInstance() async throws {
        let directory = try TemporaryDirectory("kp-daemon")
        defer { directory.remove() }
        let socket = directory.url.appendingPathComponent("d.sock").path
        let environment = environment(["KEYPORT_SOCKET": socket])
        let first = try await startKeyportd(environment)
        defer { first.stop() }
        let agent = try Program(keyport, ["agent", "--auto", "decline"], environment: environment)
        defer { agent.stop() }
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }

        let second = try await Program.run(keyportd, [scriptedAgent], environment: environment, timeout: .seconds(30))
        #expect(second.status == 1)
        #expect(
            second.standardError.contains("process \(first.pid) (keyportd) already serves \(socket)"),
            "\(second.standardError)"
        )
        // The first one's socket is still there, and its agent still holds the role.
        #expect(try await getInfo(socket).product == "keyportd")
        let busy = try await Program.run(
            keyport,
            ["agent", "--auto", "decline"],
            environment: environment,
            timeout: .seconds(30)
        )
        #expect(busy.standardError.contains("another agent already answers"), "\(busy.standardError)")
    }

    @Test("by default the socket is $XDG_RUNTIME_DIR/keyport/keyportd.sock, its directory made 0700")
    func defaultLocation() async throws {
        let directory = try TemporaryDirectory("kp-daemon")
        defer { directory.remove() }
        let runtime = try directory.subdirectory("run")
        let daemon = try await startKeyportd(environment(["KEYPORT_SOCKET": nil, "XDG_RUNTIME_DIR": runtime.path]))
        defer { daemon.stop() }
        let socket = runtime.appendingPathComponent("keyport/keyportd.sock").path
        #expect(try await getInfo(socket).product == "keyportd")
        var info = stat()
        #expect(lstat(runtime.appendingPathComponent("keyport").path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        let locations = try DaemonLocations(environment: ["XDG_RUNTIME_DIR": runtime.path])
        #expect(locations.socket == socket)
    }

    @Test(
        "it refuses, saying why, a socket directory open to others, a relative KEYPORT_SOCKET and arguments",
        arguments: ["open", "relative", "argument"]
    )
    func refusals(kind: String) async throws {
        let directory = try TemporaryDirectory("kp-daemon")
        defer { directory.remove() }
        let open = try directory.subdirectory("open", mode: 0o755)
        let (changes, arguments, expected): ([String: String?], [String], (Int32, String)) =
            switch kind {
            case "open":
                (["KEYPORT_SOCKET": open.appendingPathComponent("d.sock").path], [], (1, "chmod 700 \(open.path)"))
            case "relative": (["KEYPORT_SOCKET": "d.sock"], [], (1, "KEYPORT_SOCKET must be an absolute path"))
            default: ([:], ["--socket"], (2, "unexpected argument '--socket'"))
            }
        let ran = try await Program.run(keyportd, arguments, environment: environment(changes), timeout: .seconds(30))
        #expect(ran.status == expected.0)
        #expect(ran.standardError.contains(expected.1), "\(ran.standardError)")
        #expect(!FileManager.default.fileExists(atPath: open.appendingPathComponent("d.sock").path))
    }

    @Test("socket activation: systemd-socket-activate binds the socket and keyportd serves it")
    func socketActivation() async throws {
        let activate = try Peers.require(
            "/usr/bin/systemd-socket-activate",
            "systemd-socket-activate (package systemd)"
        )
        let directory = try TemporaryDirectory("kp-daemon")
        defer { directory.remove() }
        let socket = directory.url.appendingPathComponent("a.sock").path
        let wrapper = try Program(
            activate,
            // The variable reaches keyportd only through -E: systemd-socket-activate passes on
            // little of its environment.
            ["-l", socket, "-E", "KEYPORT_SOCKET=\(socket)", keyportd],
            environment: environment(["KEYPORT_SOCKET": nil])
        )
        defer { wrapper.stop() }
        _ = try await wrapper.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("Listening on") }
        // The first connection starts keyportd, which answers on the socket it was handed.
        #expect(try await getInfo(socket).product == "keyportd")
        #expect(try await getInfo(socket).interfaces.contains("org.varlink.service"))
        // A keyportd started by hand on the same path leaves systemd's socket alone.
        let byHand = try await Program.run(
            keyportd,
            environment: environment(["KEYPORT_SOCKET": socket]),
            timeout: .seconds(30)
        )
        #expect(byHand.status == 1)
        #expect(byHand.standardError.contains("already serves \(socket)"), "\(byHand.standardError)")
        #expect(try await getInfo(socket).product == "keyportd")
    }

    @Test("the systemd units in contrib/systemd are valid, and their socket is where clients look")
    func systemdUnits() async throws {
        let activate = try Peers.require(
            "/usr/bin/systemd-socket-activate",
            "systemd-socket-activate (package systemd)"
        )
        let analyze = try Peers.require("/usr/bin/systemd-analyze", "systemd-analyze (package systemd)")
        let directory = try TemporaryDirectory("kp-daemon")
        defer { directory.remove() }
        let socketUnit = try String(contentsOfFile: Peers.file("contrib/systemd/keyportd.socket"), encoding: .utf8)
        let serviceUnit = try String(contentsOfFile: Peers.file("contrib/systemd/keyportd.service"), encoding: .utf8)

        // Valid units, once ExecStart names this build's keyportd.
        let units = try directory.subdirectory("units")
        try socketUnit.write(to: units.appendingPathComponent("keyportd.socket"), atomically: true, encoding: .utf8)
        let execStart = try #require(serviceUnit.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        try serviceUnit.replacingOccurrences(of: String(execStart), with: "ExecStart=\(keyportd)")
            .write(to: units.appendingPathComponent("keyportd.service"), atomically: true, encoding: .utf8)
        let verified = try await Program.run(
            analyze,
            [
                "verify", units.appendingPathComponent("keyportd.socket").path,
                units.appendingPathComponent("keyportd.service").path,
            ],
            timeout: .seconds(60)
        )
        #expect(verified.status == 0 && verified.standardError.isEmpty, "\(verified.standardError)")

        // The socket the unit asks for, with %t as XDG_RUNTIME_DIR, is the one clients find.
        let listen = try #require(socketUnit.split(separator: "\n").first { $0.hasPrefix("ListenStream=") })
        let runtime = try directory.subdirectory("run")
        let path = listen.dropFirst("ListenStream=".count).replacingOccurrences(of: "%t", with: runtime.path)
        let clientView = try DaemonLocations(environment: ["XDG_RUNTIME_DIR": runtime.path])
        #expect(clientView.socket == path)
        _ = try directory.subdirectory("run/keyport")  // DirectoryMode=0700, as systemd makes it
        let wrapper = try Program(activate, ["-l", path, keyportd], environment: environment(["KEYPORT_SOCKET": nil]))
        defer { wrapper.stop() }
        _ = try await wrapper.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("Listening on") }
        #expect(try await getInfo(clientView.socket).product == "keyportd")
    }

    @Test("PyPI's varlink client introspects keyportd")
    func pythonClient() async throws {
        let python = try await Peers.python(importing: ["varlink"])
        let directory = try TemporaryDirectory("kp-daemon")
        defer { directory.remove() }
        let socket = directory.url.appendingPathComponent("d.sock").path
        let daemon = try await startKeyportd(environment(["KEYPORT_SOCKET": socket]))
        defer { daemon.stop() }
        let script = """
            import sys, varlink
            with varlink.Client(address="unix:" + sys.argv[1]) as client, client.open("org.varlink.service", namespaced=False) as service:
                info = service.GetInfo()
                print(info["product"], " ".join(info["interfaces"]))
                print(service.GetInterfaceDescription("org.varlink.service")["description"].splitlines()[2])
                # Its own parser reads every definition keyportd serves.
                for name in info["interfaces"]:
                    with client.open(name, namespaced=False):
                        print("read", name)
            """
        let ran = try await Program.run(python, ["-c", script, socket], timeout: .seconds(60))
        #expect(ran.status == 0, "\(ran.standardError)")
        #expect(
            ran.standardOutput.hasPrefix(
                "keyportd org.keyport.Agent org.keyport.AutoFill org.keyport.Callbacks org.keyport.Exchange org.keyport.IdentityStore org.keyport.Prompt org.keyport.Providers org.keyport.WebAuthn org.varlink.service\n"
            )
        )
        #expect(ran.standardOutput.contains("interface org.varlink.service"))
        for name in [
            "org.keyport.Agent", "org.keyport.AutoFill", "org.keyport.Callbacks", "org.keyport.Exchange",
            "org.keyport.IdentityStore", "org.keyport.Prompt", "org.keyport.Providers", "org.varlink.service",
        ] {
            #expect(ran.standardOutput.contains("read \(name)\n"), "PyPI's varlink could not read \(name)")
        }
    }
}

@Suite("keyportd's interface definitions")
struct InterfaceDefinitionTests {
    @Test("each definition parses and declares what the protocol documents")
    func definitions() {
        #expect(Providers.interface.name == "org.keyport.Providers")
        #expect(Set(Providers.interface.methods.keys) == ["List", "Enable", "Disable", "Order", "Launched"])
        #expect(
            Set(Exchange.interface.methods.keys) == [
                "RequestExport", "ExportCredentials", "ImportCredentials", "ReportImport",
            ]
        )
        #expect(
            Exchange.interface.methods["ImportCredentials"]?.output == [
                VarlinkField(name: "data", type: .optional(.object)),
                VarlinkField(name: "dataDescriptor", type: .optional(.int)),
            ]
        )
        #expect(
            Exchange.interface.errors.keys.sorted() == [
                "Declined", "ImporterFailed", "InvalidData", "InvalidToken", "NoAgent", "NoImporter", "NotAllowed",
                "ShuttingDown",
                "UnknownExport",
            ]
        )
        #expect(Set(Agent.interface.methods.keys) == ["Serve", "Answer", "Status"])
        #expect(
            Agent.interface.errors.keys.sorted() == [
                "AgentBusy", "InvalidChoice", "NotAnAgent", "NotTheAgent", "Replaced", "ScriptedNotAllowed",
                "UnknownRequest",
            ]
        )
        #expect(Set(Callbacks.interface.methods.keys) == ["Listen", "Deliver"])
        #expect(Callbacks.interface.errors.keys.sorted() == ["InvalidCallback", "NoSession"])
        #expect(
            Set(AutoFill.interface.methods.keys) == [
                "ListIdentities", "RequestCredential", "RequestFromList", "SavePassword", "RequestAppPassword",
            ]
        )
        #expect(Set(Browser.interface.methods.keys) == ["Cancel"])
        #expect(
            Browser.interface.errors.keys.sorted() == [
                "Canceled", "DaemonUnavailable", "HostUnavailable", "InvalidMessage", "MethodNotRelayed",
                "ReplyTooLarge",
            ]
        )
        #expect(
            AutoFill.interface.errors.keys.sorted() == [
                "Canceled", "InteractionRequired", "NoCredential", "NoSavingProvider", "NotAssociated",
                "ProviderFailed",
            ]
        )
        #expect(
            Set(CredentialProvider.interface.methods.keys) == [
                "ProvideWithoutUserInteraction", "ProvideWithUserInteraction", "ProvideFromList", "Configure",
                "SavePasswordWithoutUserInteraction", "SavePasswordWithUserInteraction",
                "RegisterPasskeyWithoutUserInteraction", "RegisterPasskey",
            ]
        )
        #expect(Set(WebAuthn.interface.methods.keys) == ["ListAuthenticators", "ListPasskeys", "Create", "Get"])
        #expect(
            WebAuthn.interface.errors.keys.sorted() == [
                "InvalidStateError", "NotAllowedError", "NotSupportedError", "SecurityError", "TypeError",
                "UnknownError",
            ]
        )
        #expect(
            Set(IdentityStore.interface.methods.keys) == [
                "State", "Save", "Remove", "Replace", "RemoveAll", "List",
            ]
        )
        // What each interface serves for introspection is its file, byte for byte.
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/KeyportInterfacesCore/Interfaces").standardized
        for (name, definition) in [
            (Providers.name, Providers.definition), (Exchange.name, Exchange.definition),
            (Agent.name, Agent.definition),
            (Callbacks.name, Callbacks.definition), (AutoFill.name, AutoFill.definition),
            (CredentialProvider.name, CredentialProvider.definition), (IdentityStore.name, IdentityStore.definition),
            (Prompt.name, Prompt.definition), (CallbackSession.name, CallbackSession.definition),
            (WebAuthn.name, WebAuthn.definition),
        ] {
            let path = FileManager.default.enumerator(atPath: directory.path)?.compactMap { $0 as? String }
                .first { $0.hasSuffix("/\(name).varlink") || $0 == "\(name).varlink" }
            let file = directory.appendingPathComponent(path ?? "\(name).varlink")
            #expect(definition == (try? String(contentsOf: file, encoding: .utf8)), "\(name)")
        }
        // Every error gives a person something to read.
        for interface in [
            Providers.interface, Exchange.interface, Agent.interface,
            Callbacks.interface,
        ] {
            for (name, fields) in interface.errors {
                #expect(fields.contains(VarlinkField(name: "message", type: .string)), "\(interface.name).\(name)")
            }
        }
    }
}

@Suite("keyportd and other users")
struct DaemonOtherUserTests {
    @Test(
        "keyportd is undumpable (its /proc files are root's, not its user's), while the person's agent, which it identifies through /proc, stays dumpable and is accepted",
        .enabled(
            if: geteuid() == 0,
            "needs root to run keyportd as an ordinary user, whose /proc files then differ from root's"
        )
    )
    func undumpable() async throws {
        let setpriv = try Peers.require("/usr/bin/setpriv", "setpriv (package util-linux)")
        // An ordinary user's private directory: outside any directory only root can enter.
        var template = Array("/tmp/kp-dump-XXXXXX".utf8CString)
        let made = try #require(
            template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
            }
        )
        defer { try? FileManager.default.removeItem(atPath: made) }
        #expect(chown(made, 65534, 65534) == 0)
        let environment = sandboxEnvironment(in: URL(fileURLWithPath: made))
        let asUser = ["--reuid=65534", "--regid=65534", "--clear-groups"]
        let daemon = try Program(setpriv, asUser + [keyportd, scriptedAgent], environment: environment)
        defer { daemon.stop() }
        _ = try await daemon.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }
        let agent = try Program(setpriv, asUser + [keyport, "agent", "--auto", "decline"], environment: environment)
        defer { agent.stop() }
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        func owner(_ pid: pid_t) -> uid_t? {
            var info = stat()
            return stat("/proc/\(pid)/environ", &info) == 0 ? info.st_uid : nil
        }
        #expect(owner(daemon.pid) == 0)
        #expect(owner(agent.pid) == 65534)
    }

    @Test(
        "another user can neither reach keyportd's socket nor, were it reachable, talk to keyportd",
        .enabled(if: geteuid() == 0, "needs root to run a client as another user")
    )
    func otherUser() async throws {
        let setpriv = try Peers.require("/usr/bin/setpriv", "setpriv (package util-linux)")
        let directory = try TemporaryDirectory("kp-daemon")
        defer { directory.remove() }
        let socket = directory.url.appendingPathComponent("d.sock").path
        let daemon = try await startKeyportd(environment(["KEYPORT_SOCKET": socket]))
        defer { daemon.stop() }
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(sys.argv[1])
            except PermissionError:
                print("unreachable"); sys.exit(0)
            try:
                s.sendall(b'{"method":"org.varlink.service.GetInfo"}\\0')
                print("closed" if s.recv(65536) == b"" else "answered")
            except (ConnectionResetError, BrokenPipeError):
                print("closed")
            """
        func attempt() async throws -> String {
            let ran = try await Program.run(
                setpriv,
                ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, socket],
                timeout: .seconds(20)
            )
            #expect(ran.status == 0, "\(ran.standardError)")
            return ran.standardOutput
        }
        // As keyportd made it: the private directory keeps the other user out.
        #expect(try await attempt() == "unreachable\n")
        // Opened up by hand: keyportd itself still refuses the other user.
        #expect(chmod(directory.path, 0o755) == 0 && chmod(socket, 0o666) == 0)
        #expect(try await attempt() == "closed\n")
        #expect(try await getInfo(socket).product == "keyportd")
    }
}
