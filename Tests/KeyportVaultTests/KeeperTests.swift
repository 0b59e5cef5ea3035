import CredentialExchangeFormat
import Foundation
import KeyportCrypto
import KeyportEncoding
import KeyportInterfaces
import KeyportSystem
import KeyportTestSupport
import KeyportVault
import KeyportVaultKeeper
import Synchronization
import Testing
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// keyport-vault, built beside this test bundle.
private let keeperProgram = builtProgram("keyport-vault")

/// A vault with one login, and a keeper for it listening in a private directory.
private struct AgentSandbox {
    let directory: TemporaryDirectory
    let keeper: Program
    let socket: String
    let vault: String

    init(timeout: Int = 900) async throws {
        directory = try TemporaryDirectory("kp-keeper")
        socket = directory.url.appendingPathComponent("run/vault.sock").path
        vault = directory.url.appendingPathComponent("vault.keyport").path
        _ = try Vault.create(at: vault, passphrase: SecretBytes("open sesame"), kdf: ScryptParameters(logN: 10))
        var environment = ProcessInfo.processInfo.environment
        environment["KEYPORT_VAULT_SOCKET"] = socket
        // No keyportd: the keeper has nobody to ask the person through.
        environment["KEYPORT_SOCKET"] = directory.url.appendingPathComponent("run/keyportd.sock").path
        keeper = try Program(
            keeperProgram,
            ["keeper", "--vault", vault, "--timeout", "\(timeout)"],
            environment: environment
        )
        _ = try await keeper.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }
    }

    func call(_ method: String, _ parameters: String = "{}") async throws -> RawJSON {
        try await VarlinkConnection.withConnection(path: socket, maximumMessageSize: 1 << 26) {
            try await $0.call(method, RawJSON(bytes: Array(parameters.utf8)))
        }
    }

    func error(_ method: String, _ parameters: String = "{}") async -> VarlinkError? {
        do {
            _ = try await call(method, parameters)
            return nil
        } catch {
            return error as? VarlinkError
        }
    }

    func unlock(_ passphrase: String = "open sesame", timeout: Int? = nil) async throws -> RawJSON {
        let extra = timeout.map { #","timeout":\#($0)"# } ?? ""
        return try await call(VaultKeeper.Unlock.name, #"{"path":"\#(vault)","passphrase":"\#(passphrase)"\#(extra)}"#)
    }
}

/// A Varlink call to the keeper in Python (a client that is a process of its own): `python3 -c
/// callScript SOCKET METHOD PARAMETERS` prints the reply or the error.
private let callScript = """
    import json, socket, sys
    client = socket.socket(socket.AF_UNIX)
    client.connect(sys.argv[1])
    call = {"method": "org.keyport.Vault." + sys.argv[2], "parameters": json.loads(sys.argv[3])}
    if sys.argv[2] == "List":
        call["more"] = True
    client.sendall(json.dumps(call).encode() + b"\\0")
    reply = b""
    while not reply.endswith(b"\\0"):
        chunk = client.recv(65536)
        if not chunk:
            break
        reply += chunk
    print(reply.rstrip(b"\\0").decode())
    """

private func loginJSON(_ id: String, site: String, user: String = "alice") -> String {
    let item = CXF.Item(
        id: Data(id.utf8),
        title: site,
        scope: CXF.CredentialScope(urls: ["https://\(site)/"]),
        credentials: [
            .basicAuth(
                CXF.BasicAuth(
                    username: CXF.EditableField(value: user),
                    password: CXF.EditableField(fieldType: .concealedString, value: "pw-\(id)")
                )
            )
        ]
    )
    return String(decoding: item.json, as: UTF8.self)
}

@Suite("Keyport Vault's keeper", .serialized)
struct VaultKeeperTests {
    @Test("each vault has its keeper's socket: the default's, and another's named by its file, whatever the path")
    func keeperSockets() throws {
        let directory = try TemporaryDirectory("kp-vault-sockets")
        defer { directory.remove() }
        let data = directory.url.appendingPathComponent("data").path
        let runtime = directory.url.appendingPathComponent("run").path
        let locations = try VaultLocations(environment: ["XDG_RUNTIME_DIR": runtime, "XDG_DATA_HOME": data])
        #expect(locations.forVault(locations.defaultVault).keeperSocket == runtime + "/keyport/vault.sock")
        let second = directory.url.appendingPathComponent("second.keyport").path
        // Not created yet: the default's keeper, which would say there is no such vault.
        #expect(locations.forVault(second).keeperSocket == locations.keeperSocket)
        try Data().write(to: URL(fileURLWithPath: second))
        var status = stat()
        #expect(stat(second, &status) == 0)
        let expected = runtime + "/keyport/vault-\(status.st_dev)-\(status.st_ino).sock"
        #expect(locations.forVault(second).keeperSocket == expected)
        let link = directory.url.appendingPathComponent("link.keyport").path
        #expect(symlink(second, link) == 0)
        #expect(locations.forVault(link).keeperSocket == expected)
        // KEYPORT_VAULT_SOCKET moves the default's keeper, and the others' with it.
        let chosen = try VaultLocations(environment: [
            "XDG_RUNTIME_DIR": runtime, "XDG_DATA_HOME": data, "KEYPORT_VAULT_SOCKET": "/elsewhere/v.sock",
        ])
        #expect(chosen.forVault(chosen.defaultVault).keeperSocket == "/elsewhere/v.sock")
        #expect(chosen.forVault(second).keeperSocket == "/elsewhere/vault-\(status.st_dev)-\(status.st_ino).sock")
    }

    @Test("its interface, org.keyport.Vault, declares what docs/protocol.md documents and is its file")
    func definition() throws {
        #expect(VaultKeeper.name == "org.keyport.Vault")
        #expect(
            Set(VaultKeeper.interface.methods.keys) == [
                "Status", "Unlock", "Lock", "Add", "Update", "Remove", "Get", "Lookup", "List", "Import",
                "ImportDocument", "ChangePassphrase", "Find", "Show",
            ]
        )
        #expect(VaultKeeper.interface.errors.keys.sorted() == ["Denied", "Failed", "Locked", "WrongVault"])
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/KeyportVaultKeeperCore/VaultKeeper.varlink").standardized
        #expect(VaultKeeper.definition == (try String(contentsOf: file, encoding: .utf8)))
    }

    @Test("unlock (a wrong passphrase refused), add, look up, get, list, import, remove, lock; every failure says why")
    func session() async throws {
        let sandbox = try await AgentSandbox()
        defer {
            sandbox.keeper.stop()
            sandbox.directory.remove()
        }
        let status = try await sandbox.call(VaultKeeper.Status.name).decode(VaultKeeper.Status.Reply.self)
        #expect(!status.unlocked && status.path == sandbox.vault)
        #expect(
            await sandbox.error(VaultKeeper.Lookup.name, #"{"service":"example.com"}"#)?.name == VaultKeeper.Locked.name
        )
        let wrong = await sandbox.error(VaultKeeper.Unlock.name, #"{"path":"\#(sandbox.vault)","passphrase":"nope"}"#)
        #expect(wrong?.name == VaultKeeper.Failed.name)
        #expect(wrong?.parameters.description.contains(#""code":"wrong-passphrase""#) == true)
        #expect(
            await sandbox.error(VaultKeeper.Unlock.name, #"{"path":"relative","passphrase":"x"}"#)?.name
                == "org.varlink.service.InvalidParameter"
        )

        #expect(try await sandbox.unlock().decode(VaultKeeper.Unlock.Reply.self).items == 0)
        #expect(
            try await sandbox.call(VaultKeeper.Add.name, #"{"item":\#(loginJSON("a", site: "example.com"))}"#)
                .description
                == #"{"revision":1}"#
        )
        let duplicate = await sandbox.error(VaultKeeper.Add.name, #"{"item":\#(loginJSON("a", site: "example.com"))}"#)
        #expect(duplicate?.parameters.description.contains(#""code":"exists""#) == true)
        // Not an object: the interface refuses it; an object the CXF codec reads without an id:
        // the vault does.
        #expect(
            await sandbox.error(VaultKeeper.Add.name, #"{"item":[1]}"#)?.name == "org.varlink.service.InvalidParameter"
        )
        let noID = await sandbox.error(VaultKeeper.Add.name, #"{"item":{"title":"x"}}"#)
        #expect(
            noID?.parameters.description.contains(#""code":"invalid-item""#) == true,
            "\(noID.map { "\($0)" } ?? "")"
        )

        let found = try await sandbox.call(VaultKeeper.Lookup.name, #"{"service":"https://login.example.com/"}"#)
        #expect(found.description.contains(#""pw-a""#))
        let id = Base64URL.encode(Array("a".utf8))
        #expect(
            try await sandbox.call(VaultKeeper.Get.name, #"{"id":"\#(id)"}"#).description.contains(
                #""title":"example.com""#
            )
        )
        #expect(
            try await sandbox.call(VaultKeeper.Get.name, #"{"id":"\#(Base64URL.encode(Array("zz".utf8)))"}"#)
                .description
                == "{}"  // an optional member with no value is left out
        )

        let imported = try await sandbox.call(
            VaultKeeper.Import.name,
            #"{"items":[\#(loginJSON("b", site: "example.org")),\#(loginJSON("c", site: "example.net")),\#(loginJSON("a", site: "example.com"))]}"#
        ).decode(VaultKeeper.Import.Reply.self)
        #expect(imported == VaultKeeper.Import.Reply(imported: 2, merged: 0, unchanged: 1))
        var listed: [String] = []
        try await VarlinkConnection.withConnection(path: sandbox.socket, maximumMessageSize: 1 << 26) { connection in
            try await connection.send(VaultKeeperTests.listCall)
            while true {
                let (parameters, continues) = try await connection.nextReply()
                listed.append(parameters.description)
                if !continues { break }
            }
        }
        #expect(listed.count == 3 && listed.allSatisfy { $0.hasPrefix(#"{"item":{"id":"#) })
        // A whole document, read by the keeper once: one new item, one it has (merged by id).
        let document =
            #"{"version":{"major":1,"minor":0},"exporterRpId":"example.com","exporterDisplayName":"Test","timestamp":1,"accounts":[{"id":"YQ","username":"a","email":"a@example.com","items":[\#(loginJSON("d", site: "example.dev")),\#(loginJSON("b", site: "example.org"))]}]}"#
        let fromDocument = try await sandbox.call(VaultKeeper.ImportDocument.name, #"{"document":\#(document)}"#)
            .decode(VaultKeeper.ImportDocument.Reply.self)
        #expect(fromDocument == VaultKeeper.ImportDocument.Reply(imported: 1, merged: 0, unchanged: 1))
        let notCXF = await sandbox.error(VaultKeeper.ImportDocument.name, #"{"document":{"x":1}}"#)
        #expect(
            notCXF?.sentence.hasPrefix("document: the document is not CXF") == true,
            "\(notCXF.map { "\($0)" } ?? "")"
        )
        _ = try await sandbox.call(VaultKeeper.Remove.name, #"{"id":"\#(Base64URL.encode(Array("d".utf8)))"}"#)
        _ = try await sandbox.call(VaultKeeper.Remove.name, #"{"id":"\#(id)"}"#)
        #expect(try await sandbox.call(VaultKeeper.Status.name).decode(VaultKeeper.Status.Reply.self).items == 2)

        _ = try await sandbox.call(VaultKeeper.Lock.name)
        #expect(await sandbox.error(VaultKeeper.Get.name, #"{"id":"\#(id)"}"#)?.name == VaultKeeper.Locked.name)
        // Locked, nothing is taken in, from a document any more than from items.
        #expect(
            await sandbox.error(VaultKeeper.ImportDocument.name, #"{"document":\#(document)}"#)?.name
                == VaultKeeper.Locked.name
        )
        // The keeper kept nothing on disk: the vault file is the only file besides the socket and
        // the lock beside it (which holds the keeper's process id).
        let files = try FileManager.default.subpathsOfDirectory(atPath: sandbox.directory.url.path).filter {
            !$0.hasPrefix("vault.keyport") && $0 != "run" && $0 != "run/vault.sock" && $0 != "run/vault.sock.lock"
        }
        #expect(files.isEmpty, "\(files)")
    }

    static let listCall = VarlinkCall(method: VaultKeeper.List.name, more: true)

    @Test(
        "an import through the client hears the counts so far, then the report; one too large for a message is refused before anything is sent"
    )
    func importInOneMessage() async throws {
        let sandbox = try await AgentSandbox()
        defer {
            sandbox.keeper.stop()
            sandbox.directory.remove()
        }
        _ = try await sandbox.unlock()
        var locations = try VaultLocations(environment: ProcessInfo.processInfo.environment)
        locations.keeperSocket = sandbox.socket
        locations.vault = sandbox.vault
        let items = try (0..<2500).map {
            try CXF.Decoder().decode(
                CXF.Part<CXF.Item>.object,
                from: Array(loginJSON("item-\($0)", site: "site-\($0).example").utf8)
            )
        }
        var heard: [VaultKeeper.Import.Reply] = []
        let report = try await VaultKeeperClient.importItems(items, locations) { heard.append($0) }
        #expect(report == VaultKeeper.Import.Reply(imported: 2500, merged: 0, unchanged: 0))
        #expect(heard.last == report && heard.map(\.imported) == heard.map(\.imported).sorted(), "\(heard)")

        let more = try (0..<100).map {
            try CXF.Decoder().decode(
                CXF.Part<CXF.Item>.object,
                from: Array(loginJSON("more-\($0)", site: "x.example").utf8)
            )
        }
        await #expect {
            try await VaultKeeperClient.importItems(more, locations, limit: 10_000)
        } throws: { error in
            "\(error)".contains("the 100 items are 1 MB as CXF") && "\(error)".contains("nothing was imported")
        }
        #expect(try await sandbox.call(VaultKeeper.Status.name).decode(VaultKeeper.Status.Reply.self).items == 2500)
    }

    @Test("the keeper serves the one vault it is given once; the vault's app runs with its path, or not at all")
    func commandLines() async throws {
        let twice = try await Program.run(keeperProgram, ["keeper", "--vault", "/a.keyport", "--vault", "/b.keyport"])
        #expect(twice.status == 2 && twice.standardError.contains("--vault is given once"), "\(twice.standardError)")
        let pathless = try await Program.run(keeperProgram, ["provider"])
        #expect(pathless.status == 2 && pathless.standardError.contains("register the vault again"))
    }

    @Test(
        "the unlocked vault's keys are in memory kept out of core dumps (MADV_DONTDUMP), in a keeper that stays dumpable for keyportd to identify"
    )
    func keysOutOfCoreDumps() async throws {
        let sandbox = try await AgentSandbox()
        defer {
            sandbox.keeper.stop()
            sandbox.directory.remove()
        }
        // Writable memory the kernel leaves out of core dumps ("dd"), as /proc/PID/smaps shows it
        // (read to its end: the file has no size to read up to).
        func excludedAreas() throws -> [Substring] {
            let smaps = try #require(FileHandle(forReadingAtPath: "/proc/\(sandbox.keeper.pid)/smaps"))
            defer { try? smaps.close() }
            return String(decoding: try smaps.readToEnd() ?? Data(), as: UTF8.self).split(separator: "\n")
                .filter { line in
                    let flags = line.split(separator: " ")
                    return flags.first == "VmFlags:" && flags.contains("dd") && flags.contains("wr")
                }
        }
        #expect(try excludedAreas().isEmpty, "nothing is excluded before a key is held")
        _ = try await sandbox.unlock()
        #expect(!(try excludedAreas()).isEmpty)
        // Dumpable: its /proc files belong to its user, not to root.
        var info = stat()
        #expect(stat("/proc/\(sandbox.keeper.pid)/environ", &info) == 0 && info.st_uid == geteuid())
    }

    @Test("a keeper opens only the vault it was started for: another file is WrongVault, a link to its own is fine")
    func oneVault() async throws {
        let sandbox = try await AgentSandbox()
        defer {
            sandbox.keeper.stop()
            sandbox.directory.remove()
        }
        let other = sandbox.directory.url.appendingPathComponent("other.keyport").path
        _ = try Vault.create(at: other, passphrase: SecretBytes("mine"), kdf: ScryptParameters(logN: 10))
        let refused = await sandbox.error(VaultKeeper.Unlock.name, #"{"path":"\#(other)","passphrase":"mine"}"#)
        #expect(refused?.name == VaultKeeper.WrongVault.name)
        #expect(refused?.parameters.description.contains(sandbox.vault) == true)
        #expect(try await sandbox.call(VaultKeeper.Status.name).decode(VaultKeeper.Status.Reply.self).unlocked == false)
        let link = sandbox.directory.url.appendingPathComponent("link.keyport").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: sandbox.vault)
        _ = try await sandbox.call(VaultKeeper.Unlock.name, #"{"path":"\#(link)","passphrase":"open sesame"}"#)
        #expect(try await sandbox.call(VaultKeeper.Status.name).decode(VaultKeeper.Status.Reply.self).unlocked)
    }

    @Test(
        "a keeper whose vault file is gone ends within seconds, unlocked or not; one started before its vault waits for it"
    )
    func endsWithItsVault() async throws {
        let sandbox = try await AgentSandbox()
        defer {
            sandbox.keeper.stop()
            sandbox.directory.remove()
        }
        _ = try await sandbox.unlock()
        #expect(try await sandbox.call(VaultKeeper.Status.name).decode(VaultKeeper.Status.Reply.self).unlocked)
        try FileManager.default.removeItem(atPath: sandbox.vault)
        let ended = await sandbox.keeper.waitForExit(timeout: .seconds(30))
        #expect(ended != nil, "the keeper of a removed vault still runs")
        #expect(sandbox.keeper.standardError.contains("\(sandbox.vault) is gone"), "\(sandbox.keeper.standardError)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.socket), "its socket is left behind")

        // Started before `keyport vault init` makes its vault: it stays, and serves it once there.
        var environment = ProcessInfo.processInfo.environment
        environment["KEYPORT_VAULT_SOCKET"] = sandbox.socket
        let early = try Program(keeperProgram, ["keeper", "--vault", sandbox.vault], environment: environment)
        defer { early.stop() }
        _ = try await early.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }
        #expect(await early.waitForExit(timeout: .seconds(7)) == nil, "a keeper waiting for its vault ended")
        _ = try Vault.create(at: sandbox.vault, passphrase: SecretBytes("open sesame"), kdf: ScryptParameters(logN: 10))
        _ = try await sandbox.unlock()
        #expect(try await sandbox.call(VaultKeeper.Status.name).decode(VaultKeeper.Status.Reply.self).unlocked)
    }

    @Test("one keeper per socket; an unlock timeout past a week is refused")
    func limits() async throws {
        let sandbox = try await AgentSandbox()
        defer {
            sandbox.keeper.stop()
            sandbox.directory.remove()
        }
        var environment = ProcessInfo.processInfo.environment
        environment["KEYPORT_VAULT_SOCKET"] = sandbox.socket
        let second = try await Program.run(
            keeperProgram,
            ["keeper", "--vault", sandbox.vault],
            environment: environment,
            timeout: .seconds(30)
        )
        #expect(
            second.status == 1
                && second.standardError.contains("process \(sandbox.keeper.pid) (keyport-vault) already serves"),
            "\(second.standardError)"
        )
        // The first keeper still answers on its socket.
        #expect(try await sandbox.call(VaultKeeper.Status.name).decode(VaultKeeper.Status.Reply.self).unlocked == false)
        let tooLong = await sandbox.error(
            VaultKeeper.Unlock.name,
            #"{"path":"\#(sandbox.vault)","passphrase":"open sesame","timeout":9223372036854775807}"#
        )
        #expect(tooLong?.name == "org.varlink.service.InvalidParameter")
        #expect(try await sandbox.call(VaultKeeper.Status.name).decode(VaultKeeper.Status.Reply.self).unlocked == false)
    }

    @Test("the vault locks itself after its idle time; a request in between moves the time")
    func idleLock() async throws {
        let sandbox = try await AgentSandbox()
        defer {
            sandbox.keeper.stop()
            sandbox.directory.remove()
        }
        // Read against the keeper's own countdown (`locksIn`) rather than the test's sleeps: on a
        // busy machine a reply can arrive seconds after the keeper sent it.
        _ = try await sandbox.unlock(timeout: 10)
        func locksIn() async throws -> Int? {
            try await sandbox.call(VaultKeeper.Status.name).decode(VaultKeeper.Status.Reply.self).locksIn
        }
        try await Task.sleep(for: .seconds(3))
        let before = try #require(try await locksIn())
        #expect(before <= 8, "3 s after unlocking with 10: \(before) s left")
        _ = try await sandbox.call(VaultKeeper.Lookup.name, #"{"service":"example.com"}"#)
        let after = try #require(try await locksIn())
        #expect(after >= 9 && after > before, "a request moves the time: \(before) s, then \(after) s")
        // Then it locks itself, without a request.
        let deadline = ContinuousClock.now + .seconds(30)
        while try await sandbox.call(VaultKeeper.Status.name).decode(VaultKeeper.Status.Reply.self).unlocked,
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(
            await sandbox.error(VaultKeeper.Lookup.name, #"{"service":"example.com"}"#)?.name == VaultKeeper.Locked.name
        )
    }

    @Test("kill -9 of the keeper during a 50 000-item import: the vault opens, and holds all of them or none")
    func killedDuringImport() async throws {
        let sandbox = try await AgentSandbox()
        defer { sandbox.directory.remove() }
        _ = try await sandbox.unlock()
        var items: [UInt8] = [UInt8(ascii: "[")]
        for number in 0..<50_000 {
            if number > 0 { items.append(UInt8(ascii: ",")) }
            items += Array(loginJSON("bulk-\(number)", site: "site-\(number).example").utf8)
        }
        items.append(UInt8(ascii: "]"))
        let parameters = JSONText.object([("items", items)])
        let socket = sandbox.socket
        let importing = Task {
            try await VarlinkConnection.withConnection(path: socket, maximumMessageSize: 1 << 26) {
                try await $0.call(VaultKeeper.Import.name, parameters)
            }
        }
        // Once the keeper has the request (its reading and sealing take seconds in a debug build).
        try await Task.sleep(for: .milliseconds(700))
        sandbox.keeper.signal(SIGKILL)
        let ended = await sandbox.keeper.waitForExit(timeout: .seconds(30))
        #expect(ended == .signalled(SIGKILL))
        let outcome = await importing.result
        let vault = try Vault.unlock(at: sandbox.vault, passphrase: SecretBytes("open sesame"))
        let count = try vault.count
        #expect(count == 0 || count == 50_000, "\(count) items: an import is all or nothing")
        if case .failure = outcome {
            #expect(count == 0, "the import was cut short, so none of it is there")
        }
    }

    @Test(
        "an unlocked vault is not an open door: another requester gets nothing, not even an exact fit, unless the person allows it; the requester that unlocked it gets everything until the vault locks"
    )
    func openDoor() async throws {
        let sandbox = try await AgentSandbox()
        defer {
            sandbox.keeper.stop()
            sandbox.directory.remove()
        }
        // Clients run by this test (the program that runs them, or the terminal they share, is
        // their requester), and clients in a session of their own (setsid: another terminal, a
        // background service) run by setsid.
        func call(_ method: String, _ parameters: String, newSession: Bool = false) async throws -> String {
            let command = ["/usr/bin/python3", "-c", callScript, sandbox.socket, method, parameters]
            let ran = try await Program.run(
                newSession ? "/usr/bin/setsid" : command[0],
                newSession ? ["-w"] + command : Array(command.dropFirst()),
                timeout: .seconds(60)
            )
            #expect(ran.status == 0, "\(ran.standardError)")
            return ran.standardOutput
        }
        let unlocking = #"{"path":"\#(sandbox.vault)","passphrase":"open sesame"}"#
        #expect(!(try await call("Unlock", unlocking)).contains("error"))
        #expect(!(try await call("Add", #"{"item":\#(loginJSON("a", site: "example.com"))}"#)).contains("error"))
        for (method, parameters) in [
            ("List", "{}"), ("Get", #"{"id":"YQ"}"#), ("Lookup", #"{"service":"example.com"}"#),
            ("Lookup", #"{"service":"https://example.com","exact":true}"#), ("Remove", #"{"id":"YQ"}"#),
            ("Add", #"{"item":\#(loginJSON("b", site: "example.org"))}"#),
            ("Import", #"{"items":[\#(loginJSON("c", site: "example.net"))]}"#),
            ("Find", #"{"target":"example.com"}"#), ("Show", #"{"target":"example.com","reveal":true}"#),
            ("ChangePassphrase", #"{"passphrase":"open sesame","newPassphrase":"mine now"}"#),
        ] {
            let refused = try await call(method, parameters, newSession: true)
            #expect(
                refused.contains(#""error":"org.keyport.Vault.Denied""#)
                    && refused.contains("keyportd could not ask you")
                    && !refused.contains("pw-a"),
                "\(method) from another session: \(refused)"
            )
        }
        // A site is named in the question as it is read: its origin, whatever was written around it.
        let padded = "https://weather.example.com" + String(repeating: "%20", count: 40) + "@example.com/"
        let named = try await call("Show", #"{"target":"\#(padded)"}"#, newSession: true)
        #expect(named.contains(#"\"https://example.com\" names"#) && !named.contains("weather"), "\(named)")
        #expect(try await sandbox.call(VaultKeeper.Status.name).decode(VaultKeeper.Status.Reply.self).items == 1)
        // The requester that unlocked the vault: every item.
        let listed = try await call("List", "{}")
        #expect(listed.contains("pw-a") && !listed.contains("error"), "\(listed)")
        // Locked and unlocked again by another requester: this one no longer may, that one may.
        _ = try await sandbox.call(VaultKeeper.Lock.name)
        #expect(!(try await call("Unlock", unlocking, newSession: true)).contains("error"))
        #expect((try await call("List", "{}")).contains(#""error":"org.keyport.Vault.Denied""#))
    }

    @Test(
        "the keeper serves the file it was started for: a link pointed at another file ends it, a permission given for one vault never reads another"
    )
    func servesItsFile() async throws {
        let sandbox = try await AgentSandbox()
        defer {
            sandbox.keeper.stop()
            sandbox.directory.remove()
        }
        // Another process's keeper, on a link to its own vault, unlocked by it: then the link is
        // pointed at the person's vault, which the person unlocks through that keeper.
        let own = sandbox.directory.url.appendingPathComponent("own.keyport").path
        _ = try Vault.create(at: own, passphrase: SecretBytes("evil"), kdf: ScryptParameters(logN: 10))
        let link = sandbox.directory.url.appendingPathComponent("link.keyport").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: own)
        let socket = sandbox.directory.url.appendingPathComponent("run/other.sock").path
        var environment = ProcessInfo.processInfo.environment
        environment["KEYPORT_VAULT_SOCKET"] = socket
        environment["KEYPORT_SOCKET"] = sandbox.directory.url.appendingPathComponent("run/keyportd.sock").path
        let keeper = try Program(keeperProgram, ["keeper", "--vault", link], environment: environment)
        defer { keeper.stop() }
        _ = try await keeper.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }
        func call(_ method: String, _ parameters: String) async throws -> String {
            let ran = try await Program.run(
                "/usr/bin/python3",
                ["-c", callScript, socket, method, parameters],
                timeout: .seconds(60)
            )
            return ran.standardOutput
        }
        #expect(!(try await call("Unlock", #"{"path":"\#(link)","passphrase":"evil"}"#)).contains("error"))
        try FileManager.default.removeItem(atPath: link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: sandbox.vault)
        let refused = try await call("Unlock", #"{"path":"\#(link)","passphrase":"open sesame"}"#)
        #expect(
            refused.contains("org.keyport.Vault.WrongVault") && refused.contains("names another file"),
            "\(refused)"
        )
        #expect(await keeper.waitForExit(timeout: .seconds(30)) != nil, "the keeper of a repointed link still runs")
        #expect(keeper.standardError.contains("names another file"), "\(keeper.standardError)")

        // The same file written over in place with another vault (the same inode): a passphrase
        // that opens the other vault never replaces the open one.
        _ = try await sandbox.unlock()
        let other = sandbox.directory.url.appendingPathComponent("other.keyport").path
        _ = try Vault.create(at: other, passphrase: SecretBytes("other"), kdf: ScryptParameters(logN: 10))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: other))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: sandbox.vault))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: bytes)
        try handle.close()
        // Its passphrase is no proof for the open vault's passphrase to be changed.
        let changed = await sandbox.error(
            VaultKeeper.ChangePassphrase.name,
            #"{"passphrase":"other","newPassphrase":"known to another"}"#
        )
        #expect(changed?.parameters.description.contains("wrong-passphrase") == true, "\(String(describing: changed))")
        let swapped = await sandbox.error(
            VaultKeeper.Unlock.name,
            #"{"path":"\#(sandbox.vault)","passphrase":"other"}"#
        )
        #expect(swapped?.name == VaultKeeper.WrongVault.name)
        #expect(swapped?.parameters.description.contains("another vault at") == true)
        #expect(
            await sandbox.keeper.waitForExit(timeout: .seconds(30)) != nil,
            "a keeper that met another vault still runs"
        )
    }

    @Test("a refused request does not keep the vault unlocked; a target past 2 KB is refused before anything is read")
    func refusalsDoNotKeepItOpen() async throws {
        let sandbox = try await AgentSandbox(timeout: 4)
        defer {
            sandbox.keeper.stop()
            sandbox.directory.remove()
        }
        _ = try await sandbox.unlock()
        // From a session of its own, every 1.5 s for 7.5 s: each refused at once (nobody to ask),
        // and once the vault locked after its 4 s, told it is locked.
        for _ in 0..<5 {
            let ran = try await Program.run(
                "/usr/bin/setsid",
                ["-w", "/usr/bin/python3", "-c", callScript, sandbox.socket, "Find", #"{"target":"example.com"}"#],
                timeout: .seconds(60)
            )
            #expect(
                ran.standardOutput.contains("org.keyport.Vault.Denied")
                    || ran.standardOutput.contains("org.keyport.Vault.Locked"),
                "\(ran.standardOutput)"
            )
            try await Task.sleep(for: .seconds(1.5))
        }
        #expect(try await sandbox.call(VaultKeeper.Status.name).decode(VaultKeeper.Status.Reply.self).unlocked == false)
        let long = String(repeating: "\u{1100}", count: 1000)
        let refused = await sandbox.error(VaultKeeper.Show.name, #"{"target":"\#(long)"}"#)
        #expect(refused?.name == "org.varlink.service.InvalidParameter")
        #expect(refused?.parameters.description.contains("at most 2048 bytes, not 3000") == true)
    }

    @Test(
        "a program's permission reaches the processes of its session, whose leader has ended, not an orphan a service manager adopted from another"
    )
    func orphansOfASubreaper() async throws {
        let sandbox = try await AgentSandbox()
        defer {
            sandbox.keeper.stop()
            sandbox.directory.remove()
        }
        // A subreaper (as `systemd --user` is) runs the unlock and a client in its session: then
        // a process that left for a session of its own and forked away, which it adopts. The
        // subreaper runs in a session whose leader has ended (as a CI job's or a detached
        // program's may): its own client is still its.
        let subreaper = """
            import ctypes, json, os, subprocess, sys, time
            ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
            socket_path, vault, script, out = sys.argv[1:5]
            def call(method, parameters):
                return subprocess.run([sys.executable, "-c", script, socket_path, method, json.dumps(parameters)],
                                      capture_output=True, text=True, start_new_session=False).stdout
            result = {"unlock": call("Unlock", {"path": vault, "passphrase": "open sesame"})}
            result["add"] = call("Add", {"item": json.loads(sys.argv[5])})
            result["own"] = call("List", {})
            subprocess.run(["setsid", "sh", "-c", '(sleep 1; exec "$0" -c "$1" "$2" List {} > "$3") &',
                            sys.executable, script, socket_path, out])
            for _ in range(300):
                if os.path.exists(out) and os.path.getsize(out) > 0:
                    break
                time.sleep(0.1)
            time.sleep(0.2)
            result["orphan"] = open(out).read() if os.path.exists(out) else ""
            print(json.dumps(result))
            """
        let out = sandbox.directory.url.appendingPathComponent("orphan.out").path
        let ran = try await Program.run(
            "/usr/bin/setsid",
            [
                "-w", "/bin/sh", "-c", #""$@" &"#, "sh", "/usr/bin/python3", "-c", subreaper, sandbox.socket,
                sandbox.vault, callScript, out, loginJSON("a", site: "example.com"),
            ],
            timeout: .seconds(120)
        )
        let result = try JSONSerialization.jsonObject(with: Data(ran.standardOutput.utf8)) as? [String: String]
        #expect(result?["unlock"]?.contains("error") == false, "\(ran.standardOutput) \(ran.standardError)")
        #expect(result?["own"]?.contains("pw-a") == true, "\(result?["own"] ?? "")")
        let orphan = result?["orphan"] ?? ""
        #expect(orphan.contains("org.keyport.Vault.Denied") && !orphan.contains("pw-a"), "\(orphan)")
    }

    @Test(
        "the vault's app is what keyportd says it launched, not whoever runs the keeper's program: keyportd's no means asking the person; a session's permission is given only by its passphrase"
    )
    func vaultsAppIsKeyportdsWord() async throws {
        let own = try PinnedProcess(pid: getpid())
        let program = try own.executable
        let asked = Mutex(0)
        func access(launched: Bool) -> VaultKeeperAccess {
            VaultKeeperAccess(
                program: program,
                launched: { _ in launched },
                ask: { _, _ in
                    asked.withLock { $0 += 1 }
                    return .refused("declined in this test")
                }
            )
        }
        // The same program, and keyportd says it launched it: the vault's app, nobody asked.
        try await access(launched: true).authorize(own, to: "read every item")
        #expect(asked.withLock { $0 } == 0)
        // The same program, which keyportd did not launch (a keyportd of its own as its parent
        // is no proof): the person is asked, and their no refuses it.
        let stranger = access(launched: false)
        do {
            try await stranger.authorize(own, to: "read every item")
            Issue.record("a process keyportd did not launch was let in")
        } catch {
            #expect(error.name == VaultKeeper.Denied.name && error.description.contains("declined in this test"))
        }
        #expect(asked.withLock { $0 } == 1)
        // Once its requester gave the passphrase, it may, without asking.
        await stranger.grant(to: own)
        try await stranger.authorize(own, to: "read every item")
        #expect(asked.withLock { $0 } == 1)
        stranger.revokeAll()
        await #expect(throws: VarlinkError.self) { try await stranger.authorize(own, to: "read every item") }
    }

    @Test("PyPI's varlink client introspects the keeper and calls it")
    func foreignClient() async throws {
        let python = try await Peers.python(importing: ["varlink"])
        let sandbox = try await AgentSandbox()
        defer {
            sandbox.keeper.stop()
            sandbox.directory.remove()
        }
        let script = """
            import sys, varlink
            with varlink.Client(address="unix:" + sys.argv[1]) as client:
                print(client.get_interface("org.keyport.Vault").name)
                with client.open("org.keyport.Vault") as vault:
                    print(vault.Status()["unlocked"])
            """
        let ran = try await Program.run(python, ["-c", script, sandbox.socket], timeout: .seconds(60))
        #expect(ran.status == 0, "\(ran.standardError)")
        #expect(ran.standardOutput == "org.keyport.Vault\nFalse\n")
    }
}
