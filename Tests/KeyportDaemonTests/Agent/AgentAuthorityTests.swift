import Foundation
import KeyportDaemon
import KeyportInterfaces
import KeyportTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// This process's environment for an agent that must ask in the terminal: no display.
private func withoutDisplay(_ environment: [String: String]) -> [String: String] {
    var environment = environment
    environment["DISPLAY"] = nil
    environment["WAYLAND_DISPLAY"] = nil
    return environment
}

/// Waits until `program` has written `text` on standard error `count` times.
private func waitForStandardError(_ program: Program, _ text: String, count: Int) async throws {
    let deadline = ContinuousClock.now + .seconds(30)
    while program.standardError.components(separatedBy: text).count - 1 < count {
        guard ContinuousClock.now < deadline else {
            Issue.record("\(text) did not appear \(count) times: \(program.standardError)")
            return
        }
        try await Task.sleep(for: .milliseconds(100))
    }
}

@Suite("the person's agent: who may hold the role, and what it shows", .serialized)
struct AgentAuthorityTests {
    @Test(
        "a program of the person's that is not keyport can neither take the agent's role nor answer; the agent is shown the attempt"
    )
    func rogueClient() async throws {
        let sandbox = try await ExchangeSandbox()
        defer { sandbox.directory.remove() }
        try await sandbox.withSystem(agent: "accept:org.example.importer") { daemon, agent async throws in
            let python = try await Peers.python(importing: ["varlink"])
            let rogue = try await Program.run(
                python,
                [Peers.file("Tests/KeyportDaemonTests/Peers/rogue_agent.py"), "a-question", "org.example.importer"],
                environment: sandbox.environment,
                timeout: .seconds(60)
            )
            #expect(rogue.status == 0, "\(rogue.standardError)")
            let said = try #require(
                try JSONSerialization.jsonObject(with: Data(rogue.standardOutput.utf8)) as? [String: String]
            )
            #expect(said["serve"] == Agent.NotAnAgent.name)
            #expect(said["answer"] == Agent.NotTheAgent.name)
            let alert = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) {
                $0.contains("attention")
            }
            #expect(alert.contains("rogue_agent.py") && alert.contains("tried to become your agent"), "\(alert)")
            // Trying again and again, from new processes, does not flood the person's screen: the
            // attempts of the next ten seconds are only counted.
            for _ in 0..<5 {
                let again = try await Program.run(
                    python,
                    [
                        Peers.file("Tests/KeyportDaemonTests/Peers/rogue_agent.py"), "a-question",
                        "org.example.importer",
                    ],
                    environment: sandbox.environment,
                    timeout: .seconds(60)
                )
                #expect(again.standardOutput.contains(Agent.NotAnAgent.name))
            }
            // The person's agent still holds the role: the export goes where it chose.
            let exported = try await sandbox.export(sample)
            #expect(exported.status == 0, "\(exported.standardError)")
            // (Six attempts; one alert, or two should the attempts straddle ten seconds on a slow machine.)
            #expect(agent.standardError.components(separatedBy: "attention").count <= 3, "\(agent.standardError)")
        }
    }

    @Test("keyport agent --auto is refused by a keyportd not started with --allow-scripted-agent, and says so")
    func scriptedNeedsPermission() async throws {
        let sandbox = try await ExchangeSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await sandbox.start(keyportd, readyWhen: "listening")
        defer { daemon.stop() }
        let scripted = try await Program.run(
            keyport,
            ["agent", "--auto", "accept-first"],
            environment: sandbox.environment,
            timeout: .seconds(30)
        )
        #expect(scripted.status == 1)
        #expect(scripted.standardError.contains("--allow-scripted-agent"), "\(scripted.standardError)")
        // Nobody answers for the person, so nothing is exported.
        let exported = try await sandbox.export(sample)
        #expect(exported.status == 1)
        #expect(exported.standardError.contains("no agent is running"), "\(exported.standardError)")
    }

    @Test(
        "one agent at a time: another is refused naming the holder, which shows it; --replace takes over once the holder confirms"
    )
    func oneAtATime() async throws {
        let sandbox = try await ExchangeSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await sandbox.start(keyportd, [scriptedAgent], readyWhen: "listening")
        defer { daemon.stop() }
        let holder = try await sandbox.start(keyport, ["agent", "--auto", "decline"], readyWhen: "waiting")
        defer { holder.stop() }

        let second = try await Program.run(
            keyport,
            ["agent", "--auto", "accept-first"],
            environment: sandbox.environment,
            timeout: .seconds(30)
        )
        #expect(second.status == 1)
        #expect(
            second.standardError.contains("another agent already answers keyportd's questions"),
            "\(second.standardError)"
        )
        #expect(second.standardError.contains("process \(holder.pid) "), "\(second.standardError)")
        _ = try await holder.waitForLine(timeout: .seconds(30), onStandardError: true) {
            $0.contains("attention") && $0.contains("tried to become your agent")
        }

        // The holder (here: declining everything) is asked, and declines the takeover.
        let refused = try await Program.run(
            keyport,
            ["agent", "--auto", "accept-first", "--replace"],
            environment: sandbox.environment,
            timeout: .seconds(30)
        )
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("declined the takeover"), "\(refused.standardError)")

        // A holder that confirms hands the role over, and ends saying who has it.
        holder.stop()
        let confirming = try await sandbox.start(keyport, ["agent", "--auto", "accept-first"], readyWhen: "waiting")
        defer { confirming.stop() }
        let replacement = try await sandbox.start(
            keyport,
            ["agent", "--auto", "accept:org.example.importer", "--replace"],
            readyWhen: "waiting"
        )
        defer { replacement.stop() }
        let ended = try await confirming.finish(timeout: .seconds(30))
        #expect(ended.status == 0)
        #expect(ended.standardError.contains("process \(replacement.pid) "), "\(ended.standardError)")
        let exported = try await sandbox.export(sample)
        #expect(exported.status == 0, "\(exported.standardError)")
        _ = try await replacement.waitForLine(timeout: .seconds(30), onStandardError: true) {
            $0.contains("chose org.example.importer")
        }
    }

    @Test("when keyportd stops, the agent says so and serves again once keyportd is back")
    func reconnects() async throws {
        let sandbox = try await ExchangeSandbox()
        defer { sandbox.directory.remove() }
        let first = try await sandbox.start(keyportd, [scriptedAgent], readyWhen: "listening")
        let agent = try await sandbox.start(keyport, ["agent", "--auto", "accept-first"], readyWhen: "waiting")
        defer { agent.stop() }
        first.signal(SIGTERM)
        _ = try await first.finish(timeout: .seconds(30))
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) {
            $0.contains("keyportd stopped; waiting for it to come back")
        }
        #expect(!agent.standardError.contains("not what this keyport understands"))
        let again = try await sandbox.start(keyportd, [scriptedAgent], readyWhen: "listening")
        defer { again.stop() }
        try await waitForStandardError(agent, "waiting for keyportd's questions", count: 2)
        let exported = try await sandbox.export(sample)
        #expect(exported.status == 0, "\(exported.standardError)")
    }

    @Test(
        "the terminal agent: what was typed before a question cannot answer it, and a withdrawn question leaves the screen"
    )
    func terminal() async throws {
        let sandbox = try await ExchangeSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await sandbox.start(keyportd, readyWhen: "listening")
        defer { daemon.stop() }
        let steps: [[String]] = [
            ["expect", "waiting for keyportd's questions"], ["type", "1\n"], ["say", "typed ahead"],
            ["expect", "Export to which app? "], ["pause", "0.5"], ["type", "0\n"], ["expect", "declined"],
            ["expect", "Export to which app? "], ["say", "asked again"], ["expect", "the question was withdrawn"],
            ["say", "withdrawn"],
        ]
        let python = try await Peers.python(importing: ["varlink"])
        let driver = try Program(
            python,
            [
                Peers.file("Tests/KeyportDaemonTests/Peers/pty_driver.py"),
                String(decoding: try JSONSerialization.data(withJSONObject: steps), as: UTF8.self), keyport, "agent",
            ],
            environment: withoutDisplay(sandbox.environment)
        )
        defer { driver.stop() }
        _ = try await driver.waitForLine(timeout: .seconds(60)) { $0 == "@@ typed ahead" }
        // "1" was typed before the question: it must not choose the importer. The "0" typed
        // after it declines.
        let declined = try await sandbox.export(sample)
        #expect(declined.status == 1)
        #expect(declined.standardError.contains("the export was declined"), "\(declined.standardError)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.output))

        // The exporter gives up while the question is on the screen: it is taken away.
        let exporter = try Program(keyport, ["exchange", "export", sample], environment: sandbox.environment)
        _ = try await driver.waitForLine(timeout: .seconds(60)) { $0 == "@@ asked again" }
        exporter.stop()
        // The driver says so once the terminal showed that the question was withdrawn.
        _ = try await driver.waitForLine(timeout: .seconds(60)) { $0 == "@@ withdrawn" }
    }

    @Test(
        "the dialog agent: zenity's command line holds Keyport's own words only (every user can read it); the question and the names apps call themselves reach it on its input; a withdrawn question closes the dialog"
    )
    func dialog() async throws {
        // An importer whose name tries to be zenity's options, and to add a row of its own.
        let sandbox = try await ExchangeSandbox(name: "--title=Keyport Vault\n--text=Choose me\n2")
        defer { sandbox.directory.remove() }
        let desktop = try await DialogDesktop(in: sandbox)
        defer { desktop.stop() }
        let (environment, records) = (desktop.environment, desktop.records)
        let daemon = try await sandbox.start(keyportd, readyWhen: "listening")
        defer { daemon.stop() }
        let agent = try Program(keyport, ["agent"], environment: environment)
        defer { agent.stop() }
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        #expect(agent.standardError.contains("in dialogs"))

        try "1\n".write(to: records.appendingPathComponent("answer"), atomically: true, encoding: .utf8)
        let exported = try await sandbox.export(sample)
        #expect(exported.status == 0, "\(exported.standardError)")
        // Two windows: the question, then the list. Every argument of each is an option Keyport
        // wrote, with a value of its own words after "=".
        let question = try records.arguments(0)
        let list = try records.arguments(1)
        #expect(
            question == [
                "--text-info", "--title=Keyport", "--width=520", "--height=320", "--ok-label=Choose the app…",
                "--cancel-label=Do not export",
            ]
        )
        #expect(
            list == [
                "--list", "--title=Keyport", "--text=Export to which app?", "--column=App", "--column=Number",
                "--print-column=2", "--hide-column=2", "--ok-label=Export", "--cancel-label=Do not export",
                "--width=560", "--height=360",
            ]
        )
        // The question on the first window's input; one row on the list's: the name (its line
        // breaks shown, not made) and Keyport's own number.
        let asked = try String(contentsOf: records.appendingPathComponent("stdin-0"), encoding: .utf8)
        #expect(
            asked.hasPrefix("keyport (a CXF file) asks:\n\n") && asked.contains("wants to export your credentials"),
            "\(asked)"
        )
        let rows = try String(contentsOf: records.appendingPathComponent("stdin-1"), encoding: .utf8)
        #expect(rows == "--title=Keyport Vault\\u{A}--text=Choose me\\u{A}2\n1\n", "\(rows)")

        // Withdrawn while the dialog is open: the dialog is closed.
        try FileManager.default.removeItem(at: records.appendingPathComponent("answer"))
        let exporter = try Program(keyport, ["exchange", "export", sample], environment: sandbox.environment)
        let pidFile = records.appendingPathComponent("pid-2").path
        try #require(
            try await FileChanges.waitUntil(within: .seconds(30), changesIn: records) {
                (try? String(contentsOfFile: pidFile, encoding: .utf8))?.hasSuffix("\n") == true
            }
        )
        let dialog = try #require(
            pid_t(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
        )
        exporter.stop()
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("withdrawn") }
        let deadline = ContinuousClock.now + .seconds(10)
        while kill(dialog, 0) == 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(kill(dialog, 0) != 0, "the dialog of a withdrawn question is still open")
    }
}

/// A desktop where the person answers dialogs: a real X server (the agent asks in dialogs only on
/// a display that answers) and a zenity standing in for the person, first on `PATH` in
/// `environment`. The stand-in records its arguments (each ended by a NUL), its input, its pid and
/// its locale in `records` (`argv-N`, `stdin-N`, `pid-N`, `charmap-N`: what `locale charmap` says
/// in its environment), then prints the line of `records`' `answer` file, cancels (exit 1) when
/// that line is "cancel", fails as zenity does when it cannot show a window (exit 255, a message
/// on standard error) when it is "fail" or when its arguments or input are not ASCII and its
/// locale is not UTF-8, or stays open until it is closed when there is no answer file.
private struct DialogDesktop {
    let records: URL
    let environment: [String: String]
    private let server: XServer

    init(in sandbox: ExchangeSandbox) async throws {
        let bin = try sandbox.directory.subdirectory("bin")
        records = try sandbox.directory.subdirectory("zenity")
        let standIn = bin.appendingPathComponent("zenity")
        try """
        #!/bin/sh
        n=$(ls "\(records.path)" | grep -c '^argv')
        printf '%s\\0' "$@" > "\(records.path)/argv-$n"
        cat > "\(records.path)/stdin-$n"
        locale charmap > "\(records.path)/charmap-$n" 2>/dev/null
        echo $$ > "\(records.path)/pid-$n"
        if [ "$(cat "\(records.path)/charmap-$n")" != UTF-8 ] && cat "\(records.path)/argv-$n" "\(records.path)/stdin-$n" | tr '\\0' '\\n' | LC_ALL=C grep -q '[^ -~]'; then
          echo "zenity: Invalid byte sequence in conversion input" >&2; exit 255
        fi
        [ -f "\(records.path)/answer" ] || exec sleep 120
        answer=$(cat "\(records.path)/answer")
        [ "$answer" = cancel ] && exit 1
        [ "$answer" = fail ] && { echo "zenity: cannot open display" >&2; exit 255; }
        echo "$answer"
        """.write(to: standIn, atomically: true, encoding: .utf8)
        chmod(standIn.path, 0o755)
        server = try await XServer(cookieIn: sandbox.directory.url)
        var environment = server.environment(sandbox.environment)
        environment["PATH"] = bin.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        self.environment = environment
    }

    func stop() { server.stop() }
}

extension URL {
    /// The arguments the dialog stand-in recorded for its `index`th window.
    fileprivate func arguments(_ index: Int) throws -> [String] {
        try String(contentsOf: appendingPathComponent("argv-\(index)"), encoding: .utf8).split(separator: "\0")
            .map(String.init)
    }
}

/// The processes whose parent is `parent` and whose command line contains `word`.
private func children(of parent: pid_t, running word: String) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap(pid_t.init).filter { pid in
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")"),
            let parentField = stat[stat.index(after: close)...].split(separator: " ").dropFirst().first,
            pid_t(parentField) == parent,
            let command = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")
        else { return false }
        return String(decoding: command, as: UTF8.self).split(separator: "\0").contains { $0 == word }
    }
}

@Suite("the dialog agent keyportd starts when no agent runs", .serialized)
struct StartedDialogAgentTests {
    @Test(
        "a question with no agent running starts `keyport agent --dialog --once` on the person's display; it holds the role for that question only and exits; a cancelled dialog declines; without a display the caller is told at once"
    )
    func startedForTheQuestion() async throws {
        let sandbox = try await ExchangeSandbox()
        defer { sandbox.directory.remove() }
        // keyportd's own environment names the display: there is no systemd user manager here.
        let desktop = try await DialogDesktop(in: sandbox)
        defer { desktop.stop() }
        let (environment, records) = (desktop.environment, desktop.records)
        let daemon = try Program(keyportd, [], environment: environment)
        defer { daemon.stop() }
        _ = try await daemon.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }

        try "1\n".write(to: records.appendingPathComponent("answer"), atomically: true, encoding: .utf8)
        let exported = try await sandbox.export(sample)
        #expect(exported.status == 0, "\(exported.standardError)")
        #expect(try await sandbox.imported()["data"] != nil)
        #expect(try records.arguments(0).first == "--text-info" && records.arguments(1).first == "--list")
        // Its question answered, the agent keyportd started gives the role back and exits.
        let deadline = ContinuousClock.now + .seconds(30)
        while !children(of: daemon.pid, running: "--once").isEmpty && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(children(of: daemon.pid, running: "--once").isEmpty, "the dialog agent is still running")

        // The next question starts another; the person cancels its dialog: declined.
        try "cancel\n".write(to: records.appendingPathComponent("answer"), atomically: true, encoding: .utf8)
        let declined = try await sandbox.export(sample)
        #expect(declined.status == 1 && declined.standardError.contains("declined"), "\(declined.standardError)")
        #expect(FileManager.default.fileExists(atPath: records.appendingPathComponent("argv-2").path))
        #expect(!FileManager.default.fileExists(atPath: records.appendingPathComponent("argv-3").path))

        // zenity cannot show the window (here: it fails as it does on a display it cannot use):
        // the exporter hears that nobody could be asked, never that the person said no.
        try "fail\n".write(to: records.appendingPathComponent("answer"), atomically: true, encoding: .utf8)
        let failed = try await sandbox.export(sample)
        #expect(
            failed.status == 1 && failed.standardError.contains("could not show you the question")
                && failed.standardError.contains("cannot open display") && !failed.standardError.contains("declined"),
            "\(failed.standardError)"
        )
        daemon.stop()

        // A keyportd started without a UTF-8 locale (a bare service environment): the dialog is
        // given one, and a question with "—" in it is shown, not failed.
        var plain = environment
        plain["LANG"] = "C"
        plain["LC_ALL"] = nil
        plain["LC_CTYPE"] = nil
        try "1\n".write(to: records.appendingPathComponent("answer"), atomically: true, encoding: .utf8)
        let bare = try Program(keyportd, [], environment: plain)
        _ = try await bare.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }
        let shown = try await sandbox.export(sample)
        bare.stop()
        #expect(shown.status == 0, "\(shown.standardError)")
        #expect(try String(contentsOf: records.appendingPathComponent("charmap-4"), encoding: .utf8) == "UTF-8\n")

        // No display: nobody can be asked, and the exporter hears it at once.
        var displayless = environment
        displayless["DISPLAY"] = nil
        let blind = try Program(keyportd, [], environment: displayless)
        defer { blind.stop() }
        _ = try await blind.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }
        let unasked = try await sandbox.export(sample)
        #expect(
            unasked.status == 1 && unasked.standardError.contains("could not ask you in a dialog"),
            "\(unasked.standardError)"
        )
        #expect(!FileManager.default.fileExists(atPath: records.appendingPathComponent("argv-6").path))
        blind.stop()

        // A display that takes connections and never answers (a session gone, a variable left
        // behind): the dialog agent checks it before it takes the role, and leaves without
        // answering, so the exporter hears that nobody could be asked, not that the person said
        // no. While it tries, the role is kept for it: an agent that comes meanwhile is refused.
        let silent = try SilentXDisplay()
        defer { silent.stop() }
        var unanswering = environment
        unanswering["DISPLAY"] = silent.display
        unanswering["XAUTHORITY"] = nil
        let waiting = try Program(keyportd, ["--allow-scripted-agent"], environment: unanswering)
        defer { waiting.stop() }
        _ = try await waiting.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("listening") }
        let exporter = try Program(keyport, ["exchange", "export", sample], environment: sandbox.environment)
        let seen = ContinuousClock.now + .seconds(30)
        while children(of: waiting.pid, running: "--once").isEmpty && ContinuousClock.now < seen {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(!children(of: waiting.pid, running: "--once").isEmpty, "no dialog agent was started")
        let intruder = try await Program.run(
            keyport,
            ["agent", "--auto", "accept-first"],
            environment: sandbox.environment,
            timeout: .seconds(30)
        )
        #expect(
            intruder.status == 1 && intruder.standardError.contains("just started a dialog agent"),
            "\(intruder.standardError)"
        )
        let unanswered = try await exporter.finish(timeout: .seconds(60))
        #expect(
            unanswered.status == 1 && unanswered.standardError.contains("could not ask you in a dialog")
                && !unanswered.standardError.contains("declined"),
            "\(unanswered.standardError)"
        )
        #expect(!FileManager.default.fileExists(atPath: records.appendingPathComponent("argv-6").path))
    }
}

/// An X display whose socket takes connections and never answers, as a server that hangs or a
/// session's socket left behind would: `/tmp/.X11-unix/XN`, bound and listening, never accepted.
private struct SilentXDisplay {
    let display: String
    private let path: String
    private let descriptor: Int32

    init() throws {
        let directory = "/tmp/.X11-unix"
        if !FileManager.default.fileExists(atPath: directory) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
            chmod(directory, 0o1777)
        }
        let number = (600..<900).shuffled().first { !FileManager.default.fileExists(atPath: "\(directory)/X\($0)") }
        let chosen = try #require(number, "no free display number in 600..<900")
        path = "\(directory)/X\(chosen)"
        display = ":\(chosen)"
        descriptor = try RawUnixSocket.bound(to: path, listening: true)
    }

    func stop() {
        close(descriptor)
        unlink(path)
    }
}

@Suite("where the dialog agent keyportd starts shows its dialogs")
struct DialogSessionTests {
    @Test(
        "systemd's user environment names the display when it has one, else keyportd's own; none, or no zenity: nowhere"
    )
    func session() throws {
        let directory = try TemporaryDirectory("kp-session")
        defer { directory.remove() }
        let zenity = directory.url.appendingPathComponent("zenity").path
        try "#!/bin/sh\n".write(toFile: zenity, atomically: true, encoding: .utf8)
        #expect(chmod(zenity, 0o755) == 0)
        let systemd = DialogAgentLauncher.parse(
            "HOME=/home/a\nWAYLAND_DISPLAY=wayland-1\nXDG_CURRENT_DESKTOP=GNOME\nODD=$'a\\nb'\nno equals sign\n"
        )
        #expect(systemd == ["HOME": "/home/a", "WAYLAND_DISPLAY": "wayland-1", "XDG_CURRENT_DESKTOP": "GNOME"])
        let own = ["PATH": directory.url.path, "DISPLAY": ":5", "XDG_CURRENT_DESKTOP": "old", "KEYPORT_SOCKET": "/s"]
        let fromSystemd = try #require(DialogAgentLauncher.session(base: own, systemd: systemd))
        #expect(fromSystemd.display == "WAYLAND_DISPLAY=wayland-1" && fromSystemd.source == "systemd")
        // The session's variables are systemd's, all of them: none of keyportd's is mixed in.
        #expect(fromSystemd.environment["DISPLAY"] == nil && fromSystemd.environment["XDG_CURRENT_DESKTOP"] == "GNOME")
        #expect(fromSystemd.environment["KEYPORT_SOCKET"] == "/s" && fromSystemd.environment["HOME"] == nil)
        let fromOwn = try #require(DialogAgentLauncher.session(base: own, systemd: ["HOME": "/home/a"]))
        #expect(fromOwn.display == "DISPLAY=:5" && fromOwn.source == "keyportd")
        #expect(DialogAgentLauncher.session(base: own, systemd: nil)?.display == "DISPLAY=:5")
        // What any process of the person can put into systemd's environment is held to this
        // machine: no X server over the network, no bus address that runs a program, no
        // compositor socket outside the runtime directory.
        let remote = DialogAgentLauncher.session(
            base: own,
            systemd: ["DISPLAY": "elsewhere.example:0", "DBUS_SESSION_BUS_ADDRESS": "unixexec:path=/bin/sh"]
        )
        #expect(remote?.source == "keyportd" && remote?.display == "DISPLAY=:5")
        let mixed = try #require(
            DialogAgentLauncher.session(
                base: own,
                systemd: [
                    "DISPLAY": ":1.0", "DBUS_SESSION_BUS_ADDRESS": "unixexec:path=/bin/sh",
                    "WAYLAND_DISPLAY": "/elsewhere/wayland-0",
                ]
            )
        )
        #expect(mixed.display == "DISPLAY=:1.0" && mixed.source == "systemd")
        #expect(mixed.environment["DBUS_SESSION_BUS_ADDRESS"] == nil && mixed.environment["WAYLAND_DISPLAY"] == nil)
        #expect(DialogAgentLauncher.session(base: ["PATH": directory.url.path], systemd: [:]) == nil)
        #expect(DialogAgentLauncher.session(base: ["PATH": "/nonexistent", "DISPLAY": ":5"], systemd: nil) == nil)
    }
}

@Suite("what a provider may ask the person to choose from")
struct PromptChoicesTests {
    @Test("1 to 100 choices, ids of their own, names a person can read; anything else is refused, naming the choice")
    func bounds() throws {
        func refusal(_ choices: [Agent.Choice]) -> String? {
            do {
                try PromptService.check(choices)
                return nil
            } catch {
                return error.description
            }
        }
        let fine = (1...3).map { Agent.Choice(id: "id\($0)", name: "--title=Name \($0)") }
        #expect(refusal(fine) == nil)
        #expect(refusal([])?.contains("from 1 to 100 choices") == true)
        #expect(refusal((0...100).map { Agent.Choice(id: "\($0)", name: "n") })?.contains("not 101") == true)
        #expect(refusal(fine + [Agent.Choice(id: "id2", name: "again")])?.contains("choice 4") == true)
        #expect(refusal([Agent.Choice(id: "", name: "n")])?.contains("choice 1") == true)
        #expect(
            refusal([Agent.Choice(id: "a", name: String(repeating: "x", count: 201))])?.contains("choice 1") == true
        )
    }
}
