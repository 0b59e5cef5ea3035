import Foundation
import KeyportAutoFillTestSupport
import KeyportTestSupport
import Testing

/// `keyport type` and `keyport fill` typing into real text fields: a Tk entry on an X server (Xvfb,
/// xdotool) and a GTK entry on a Wayland compositor (headless sway, wtype).
@Suite("typing into desktop apps", .serialized)
struct DesktopTypingTests {
    /// A text field that writes what it holds to `file` on every change; "ready" once focused.
    static let tkField = """
        import sys, tkinter
        root = tkinter.Tk(); root.title("Keyport test field")
        text = tkinter.StringVar()
        text.trace_add("write", lambda *_: open(sys.argv[1], "w").write(text.get()))
        entry = tkinter.Entry(root, textvariable=text); entry.pack()
        root.after(200, lambda: (root.focus_force(), entry.focus_set(), print("ready", flush=True)))
        root.mainloop()
        """
    static let gtkField = """
        import sys, gi
        gi.require_version("Gtk", "3.0")
        from gi.repository import Gtk, GLib
        window = Gtk.Window(title="Keyport test field")
        entry = Gtk.Entry()
        entry.connect("changed", lambda widget: open(sys.argv[1], "w").write(widget.get_text()))
        window.add(entry); window.show_all(); entry.grab_focus()
        GLib.timeout_add(300, lambda: print("ready", flush=True) and False)
        Gtk.main()
        """

    /// What the field's file holds once it is `expected` (or after 10 seconds).
    private func typed(_ file: URL, matching expected: (String) -> Bool) async throws -> String {
        var text = ""
        for _ in 0..<100 {
            text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
            if expected(text) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return text
    }

    @Test(
        "X11: keyport type puts oathtool's code into a Tk field; keyport fill picks in rofi; --copy clears only its own"
    )
    func x11() async throws {
        _ = try Peers.require("/usr/bin/xdotool", "xdotool")
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(order: ["quiet"], services: ["quiet": "example.com"])

        // An X server of its own that takes only clients with its cookie (every client below reads
        // it from XAUTHORITY).
        let server = try await XServer(cookieIn: sandbox.directory.url)
        defer { server.stop() }
        let environment = server.environment(sandbox.environment)
        let file = sandbox.directory.url.appendingPathComponent("field")
        let field = try Program("/usr/bin/python3", ["-c", Self.tkField, file.path], environment: environment)
        defer { field.stop() }
        _ = try await field.waitForLine(timeout: .seconds(30)) { $0 == "ready" }
        func keyport(_ arguments: [String]) async throws -> Program.Ran {
            try await runKeyport(arguments, environment: environment, timeout: .seconds(60))
        }

        let expected = try await Peers.oathtoolCodes()
        let ran = try await keyport(["type", "otp", "example.com"])
        #expect(ran.status == 0, "\(ran.standardError)")
        #expect(ran.standardError.contains("typed the one-time code"), "\(ran.standardError)")
        let code = try await typed(file) { expected.contains($0) }
        #expect(expected.contains(code), "\(code) not in \(expected)")

        // keyport fill: the person picks "alice" in rofi's menu; the password is typed after the code.
        do {
            _ = try Peers.require("/usr/bin/rofi", "rofi")
            let picking = try Program(KeyportTestSupport.keyport, ["fill", "example.com"], environment: environment)
            try await Task.sleep(for: .seconds(2))
            for keys in [["type", "--delay", "20", "alice"], ["key", "Return"]] {
                _ = try await Program.run("/usr/bin/xdotool", keys, environment: environment, timeout: .seconds(30))
            }
            let picked = try await picking.finish(timeout: .seconds(60))
            #expect(picked.status == 0, "\(picked.standardError)")
            let filled = try await typed(file) { $0.hasSuffix("correct horse battery staple") }
            #expect(filled == code + "correct horse battery staple", "\(filled)")
        }

        // --copy: on the clipboard, with the hint; cleared later only if it still holds it.
        func paste(_ type: String?) async throws -> String {
            try await Program.run(
                "/usr/bin/xclip",
                ["-selection", "clipboard", "-o"] + (type.map { ["-t", $0] } ?? []),
                environment: environment,
                timeout: .seconds(30)
            ).standardOutput
        }
        try await checkClipboard(
            copying: ["type", "password", "example.com", "--copy"],
            expected: ["correct horse battery staple"],
            environment: environment,
            paste: paste,
            copy: "xclip -selection clipboard"
        )
    }

    /// `keyport … --copy` puts one of `expected` on the clipboard with the hint that keeps it out of
    /// clipboard histories; another program's copy made while Keyport serves it is left alone when
    /// Keyport's time is up, and Keyport's own copy is cleared then. `paste` prints the clipboard
    /// (as a type, or the text when nil; "TARGETS" lists the types), `copy` is a shell command
    /// that copies its standard input.
    private func checkClipboard(
        copying arguments: [String],
        expected: Set<String>,
        environment: [String: String],
        paste: (String?) async throws -> String,
        copy: String
    ) async throws {
        let copied = try await Program.run(
            KeyportTestSupport.keyport,
            arguments,
            environment: environment,
            timeout: .seconds(60)
        )
        #expect(copied.status == 0, "\(copied.standardError)")
        let pasted = try await paste(nil)
        #expect(expected.contains(pasted), "\(pasted) not in \(expected)")
        #expect(try await paste("x-kde-passwordManagerHint") == "secret")
        #expect(try await paste("TARGETS").split(separator: "\n").contains("x-kde-passwordManagerHint"))

        func serve(_ text: String, seconds: Int) async throws -> Program {
            let serving = try Program(
                KeyportTestSupport.keyport,
                ["clipboard-serve", "--seconds", "\(seconds)"],
                environment: environment,
                input: Data(text.utf8)
            )
            _ = try await serving.waitForLine(timeout: .seconds(30)) { $0 == "ready" }
            return serving
        }
        // Another program copies while Keyport serves: when Keyport's time is up, that copy stays.
        let replaced = try await serve("first secret", seconds: 3)
        #expect(try await paste(nil) == "first secret")
        let other = try await Program.run(
            "/bin/sh",
            ["-c", "printf 'mine' | \(copy) >/dev/null 2>&1"],
            environment: environment,
            timeout: .seconds(30)
        )
        #expect(other.status == 0)
        #expect(try await replaced.finish(timeout: .seconds(30)).status == 0)
        try await Task.sleep(for: .seconds(4))
        #expect(try await paste(nil) == "mine")
        // Nobody copies: when Keyport's time is up, its text is gone from the clipboard.
        let alone = try await serve("second secret", seconds: 2)
        #expect(try await paste(nil) == "second secret")
        #expect(try await alone.finish(timeout: .seconds(30)).status == 0)
        #expect(try await paste(nil) == "")
    }

    @Test(
        "Wayland: keyport type puts oathtool's code into a GTK field under a headless sway, with wtype; --copy through data control"
    )
    func wayland() async throws {
        let sway = try Peers.require("/usr/bin/sway", "sway")
        _ = try Peers.require("/usr/bin/wtype", "wtype")
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(order: ["quiet"], services: ["quiet": "example.com"])

        // sway refuses to run as root: as root, it runs as nobody, in a directory of nobody's.
        let runtime = try TemporaryDirectory("kp-sway")
        defer { runtime.remove() }
        try "output HEADLESS-1 resolution 1024x768\n".write(
            to: runtime.url.appendingPathComponent("config"),
            atomically: true,
            encoding: .utf8
        )
        let root = getuid() == 0
        if root { #expect(chown(runtime.path, 65534, 65534) == 0) }
        var swayEnvironment = [
            "PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": runtime.path, "HOME": runtime.path,
            "WLR_BACKENDS": "headless", "WLR_LIBINPUT_NO_DEVICES": "1", "WLR_RENDERER": "pixman",
        ]
        swayEnvironment["WAYLAND_DISPLAY"] = nil
        let compositor =
            root
            ? try Program(
                "/usr/bin/setpriv",
                ["--reuid=65534", "--regid=65534", "--clear-groups", sway, "-c", runtime.path + "/config"],
                environment: swayEnvironment
            )
            : try Program(sway, ["-c", runtime.path + "/config"], environment: swayEnvironment)
        defer { compositor.stop() }
        let socket = runtime.path + "/wayland-1"
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: socket) {
            try await Task.sleep(for: .milliseconds(100))
        }
        try #require(FileManager.default.fileExists(atPath: socket), "sway did not start: \(compositor.standardError)")

        var environment = sandbox.environment
        environment["WAYLAND_DISPLAY"] = socket
        environment.removeValue(forKey: "DISPLAY")
        environment.removeValue(forKey: "XDG_CURRENT_DESKTOP")
        var fieldEnvironment = environment
        fieldEnvironment["GDK_BACKEND"] = "wayland"
        fieldEnvironment["XDG_RUNTIME_DIR"] = try sandbox.directory.subdirectory("gtk-run").path
        let file = sandbox.directory.url.appendingPathComponent("field")
        let field = try Program("/usr/bin/python3", ["-c", Self.gtkField, file.path], environment: fieldEnvironment)
        defer { field.stop() }
        _ = try await field.waitForLine(timeout: .seconds(30)) { $0 == "ready" }

        let expected = try await Peers.oathtoolCodes()
        let ran = try await Program.run(
            KeyportTestSupport.keyport,
            ["type", "otp", "example.com"],
            environment: environment,
            timeout: .seconds(60)
        )
        #expect(ran.status == 0, "\(ran.standardError)")
        let code = try await typed(file) { expected.contains($0) }
        #expect(expected.contains(code), "\(code) not in \(expected)")

        // --copy, served through the compositor's data control, read back with wl-clipboard.
        _ = try Peers.require("/usr/bin/wl-paste", "wl-clipboard")
        func paste(_ type: String?) async throws -> String {
            let arguments =
                type == "TARGETS" ? ["--list-types"] : ["--no-newline"] + (type.map { ["--type", $0] } ?? [])
            return try await Program.run(
                "/usr/bin/wl-paste",
                arguments,
                environment: environment,
                timeout: .seconds(30)
            )
            .standardOutput
        }
        try await checkClipboard(
            copying: ["otp", "example.com", "--copy"],
            expected: expected,
            environment: environment,
            paste: paste,
            copy: "wl-copy"
        )

        // No session at all: said plainly, with the terminal's commands offered.
        var none = environment
        none.removeValue(forKey: "WAYLAND_DISPLAY")
        let nowhere = try await Program.run(
            KeyportTestSupport.keyport,
            ["type", "otp", "example.com"],
            environment: none,
            timeout: .seconds(60)
        )
        #expect(
            nowhere.status == 2 && nowhere.standardError.contains("no graphical session to type into")
                && nowhere.standardError.contains("keyport otp"),
            "\(nowhere.standardError)"
        )
    }

    @Test(
        "GNOME or KDE on Wayland: keyport type asks through the RemoteDesktop portal first, then types oathtool's code; a cancelled dialog asks the vault nothing"
    )
    func remoteDesktopPortal() async throws {
        let daemonBus = try Peers.require("/usr/bin/dbus-daemon", "dbus-daemon")
        _ = try Peers.require("/usr/libexec/xdg-desktop-portal", "xdg-desktop-portal")
        let sandbox = try AutoFillSandbox()
        defer { sandbox.directory.remove() }
        let daemon = try await startKeyportd(sandbox.environment)
        defer { daemon.stop() }
        try await sandbox.setUp(order: ["quiet"], services: ["quiet": "example.com"])

        // A session bus of its own, on which the real xdg-desktop-portal is started on demand
        // and finds only the test's backend (XDG_DESKTOP_PORTAL_DIR), which answers the dialog as
        // `answer` says and logs the keys the compositor would press.
        let directory = try sandbox.directory.subdirectory("portal")
        let portals = directory.appendingPathComponent("portals")
        try FileManager.default.createDirectory(at: portals, withIntermediateDirectories: true)
        try """
        [portal]
        DBusName=org.freedesktop.impl.portal.desktop.keyporttest
        Interfaces=org.freedesktop.impl.portal.RemoteDesktop;
        UseIn=keyporttest

        """.write(to: portals.appendingPathComponent("keyporttest.portal"), atomically: true, encoding: .utf8)
        let answer = directory.appendingPathComponent("answer")
        let log = directory.appendingPathComponent("log")
        try "allow".write(to: answer, atomically: true, encoding: .utf8)
        var busEnvironment = ProcessInfo.processInfo.environment
        busEnvironment["XDG_DESKTOP_PORTAL_DIR"] = portals.path
        busEnvironment["XDG_CURRENT_DESKTOP"] = "keyporttest"
        let bus = try Program(
            daemonBus,
            ["--session", "--nofork", "--address=unix:path=\(directory.path)/bus", "--print-address=1"],
            environment: busEnvironment
        )
        defer { bus.stop() }
        let address = try await bus.waitForLine(timeout: .seconds(30)) { $0.hasPrefix("unix:") }
        busEnvironment["DBUS_SESSION_BUS_ADDRESS"] = address
        let backend = try Program(
            "/usr/bin/python3",
            [Peers.file("Tests/KeyportDesktopTests/Peers/remote_desktop_backend.py"), answer.path, log.path],
            environment: busEnvironment
        )
        defer { backend.stop() }
        _ = try await backend.waitForLine(timeout: .seconds(30)) { $0 == "ready" }
        func logged() -> [String] {
            ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        var environment = sandbox.environment
        environment["WAYLAND_DISPLAY"] = "wayland-gnome"
        environment["XDG_CURRENT_DESKTOP"] = "GNOME"
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        environment.removeValue(forKey: "DISPLAY")
        let expected = try await Peers.oathtoolCodes()
        let ran = try await Program.run(
            KeyportTestSupport.keyport,
            ["type", "otp", "example.com"],
            environment: environment,
            timeout: .seconds(60)
        )
        #expect(ran.status == 0, "\(ran.standardError)")
        let calls = logged()
        let typed = calls.filter { $0.hasPrefix("key ") }.map { $0.dropFirst(4) }.joined()
        #expect(expected.contains(typed), "\(typed) not in \(expected)")
        #expect(
            calls.first == "create" && calls.contains("select types=1") && calls.contains("start allow"),
            "\(calls)"
        )
        #expect(calls.last == "close", "\(calls)")

        // The person cancels the dialog: nothing is typed, and the provider is never asked.
        try "cancel".write(to: answer, atomically: true, encoding: .utf8)
        func provided() -> Int { daemon.standardError.components(separatedBy: "credential provided").count - 1 }
        let before = provided()
        #expect(before == 1, "keyportd logs each credential it gives: \(daemon.standardError)")
        let refused = try await Program.run(
            KeyportTestSupport.keyport,
            ["type", "password", "example.com"],
            environment: environment,
            timeout: .seconds(60)
        )
        #expect(refused.status == 2 && refused.standardError.contains("did not allow"), "\(refused.standardError)")
        #expect(logged().count == calls.count + 4 && logged().last == "close", "\(logged())")
        #expect(provided() == before)

        // No portal on the bus at all: said plainly, with --copy offered.
        backend.stop()
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(directory.path)/none"
        let nowhere = try await Program.run(
            KeyportTestSupport.keyport,
            ["type", "otp", "example.com"],
            environment: environment,
            timeout: .seconds(60)
        )
        #expect(
            nowhere.status == 2 && nowhere.standardError.contains("RemoteDesktop portal")
                && nowhere.standardError.contains("use --copy"),
            "\(nowhere.standardError)"
        )
    }
}
