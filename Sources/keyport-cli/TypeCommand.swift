import ArgumentParser
import Foundation
import KeyportCommandLine
import KeyportDesktop
import KeyportEncoding
import KeyportInterfaces
import KeyportSystem
import Varlink

/// How Keyport types into the focused window, chosen from the session: xdotool on X11 (XWayland
/// windows too), wtype where the compositor has the virtual-keyboard protocol (sway, Hyprland and
/// other wlroots compositors), and the RemoteDesktop portal in GNOME's and KDE's Wayland sessions,
/// which let a program type only that way (the portal asks the person first).
enum Typist {
    case xdotool(String)
    case wtype(String)
    case portal(RemoteDesktopPortal)

    /// The way to type in the session `environment` describes. The portal's session is opened
    /// here, so that the person is asked before any credential is.
    static func choose(_ environment: [String: String]) throws(CommandError) -> Typist {
        let path = environment["PATH"]
        let desktop = (environment["XDG_CURRENT_DESKTOP"] ?? "").lowercased()
        let wayland = !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        let x11 = !(environment["DISPLAY"] ?? "").isEmpty
        if wayland {
            if desktop.contains("gnome") || desktop.contains("kde") {
                do {
                    return .portal(try RemoteDesktopPortal(environment: environment))
                } catch {
                    throw .io("cannot type through the RemoteDesktop portal: \(error); use --copy and paste")
                }
            }
            guard let wtype = Executable.find("wtype", path: path) else {
                throw .io("typing on Wayland needs wtype (apt install wtype); or use --copy and paste")
            }
            return .wtype(wtype)
        }
        if x11 {
            guard let xdotool = Executable.find("xdotool", path: path) else {
                throw .io("typing on X11 needs xdotool (apt install xdotool); or use --copy and paste")
            }
            return .xdotool(xdotool)
        }
        throw .io(
            "no graphical session to type into (neither WAYLAND_DISPLAY nor DISPLAY is set); in a terminal, use keyport otp or keyport password"
        )
    }

    /// Types `text` into the focused window. The text goes on the tool's standard input, never
    /// on its command line (which any process of the person can read in /proc).
    func type(_ text: String, environment: [String: String]) async throws(CommandError) {
        let (program, arguments): (String, [String])
        switch self {
        case .xdotool(let path):
            (program, arguments) = (path, ["type", "--clearmodifiers", "--delay", "0", "--file", "-"])
        // wtype makes a new virtual keyboard each time; a key pressed at once can reach the window
        // before the compositor has told it of that keyboard, and is lost (the first character,
        // now and then): a tenth of a second first.
        case .wtype(let path): (program, arguments) = (path, ["-s", "100", "-"])
        case .portal(let portal):
            defer { portal.close() }
            do {
                try portal.type(SecretBytes(text))
            } catch {
                throw .io("the RemoteDesktop portal could not type: \(error); use --copy and paste")
            }
            return
        }
        let child = try await runToEnd(program, arguments, input: text, environment: environment)
        guard child.termination == .exited(0) else {
            let said = child.output.map { String(decoding: $0.standardError, as: UTF8.self) } ?? ""
            throw .io(
                "\(program) could not type (\(child.termination.map { "\($0)" } ?? "it did not finish"))\(said.isEmpty ? "" : ": \(said.trimmingWhitespace())"); use --copy and paste"
            )
        }
    }
}

/// `keyport type`: a code, a password or a user name typed where the cursor is, in any app.
struct TypeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "type",
        abstract: "Type a site's one-time code, password or user name into the focused window.",
        discussion: """
            For desktop apps, bound to a key in your desktop's settings: keyportd gives it as to \
            `keyport otp` and `keyport password` (the same scheme, host and port; a wider fit only once \
            you chose it in `keyport agent`), and it is typed with xdotool (X11), wtype (sway, Hyprland) or, \
            in GNOME and KDE on Wayland, the RemoteDesktop portal, which asks you first. Exit status: 0 typed; \
            1 nothing fits the site, or the provider declined; 2 keyportd is not running, no way to type, \
            or a usage error.
            """
    )

    enum What: String, ExpressibleByArgument, CaseIterable {
        case otp, password, user
    }

    @Argument(help: "What to type: otp, password or user.")
    var what: What

    @Argument(help: "The site: a URL (https://login.example.com/) or a domain (example.com).")
    var site: String

    @Option(help: "The account's user name, when the site has several (password and user).")
    var user: String?

    @Flag(help: "Put it on the clipboard instead, marked secret; cleared after 30 seconds if it is still Keyport's.")
    var copy = false

    func validate() throws {
        if what == .otp && user != nil {
            throw ValidationError(
                "--user is for password and user: a site's one-time code is asked for by the site alone"
            )
        }
    }

    func run() async throws {
        let kind: AutoFill.CredentialType =
            switch what {
            case .otp: .oneTimeCode
            case .password, .user: .password
            }
        // Whether it can be typed (or copied) is known before anyone is asked for it.
        let delivery = try Delivery(copy: copy)
        let answer = try requestCredential(kind, for: site, user: what == .otp ? nil : user)
        let text: String
        if what == .user {
            guard let name = answer.credential.user else {
                throw CommandError.invalid("\(answer.provider) gave no user name")
            }
            text = name
        } else {
            text = try secret(kind, of: answer)
        }
        try await delivery.deliver(text)
        FileHandle.write(
            "keyport: \(copy ? "copied" : "typed") \(DisplayText.escaping(AutoFillClient.answered(kind, answer)))\(what == .user ? "'s user name" : "")\n",
            to: .standardError
        )
    }
}

/// Where the text goes: typed into the focused window, or onto the clipboard. Chosen before the
/// credential is asked for, so that nobody unlocks a vault for a text that cannot be delivered.
struct Delivery {
    private let typist: Typist?

    init(copy: Bool) throws(CommandError) {
        let environment = ProcessInfo.processInfo.environment
        if copy {
            guard ClipboardOwner.hasSession(environment) else { throw noClipboard }
            typist = nil
        } else {
            typist = try Typist.choose(environment)
        }
    }

    func deliver(_ text: String) async throws(CommandError) {
        if let typist {
            try await typist.type(text, environment: ProcessInfo.processInfo.environment)
        } else {
            try await copyToClipboard(text)
        }
    }
}

/// `keyport fill`: pick an account in a menu, and its password or code is typed.
struct FillCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fill",
        abstract: "Pick one of your accounts in a menu; its password (or code) is typed into the focused window.",
        discussion: """
            The menu lists what keyportd's ListIdentities gives — for SITE, what fits it; without one, \
            every account of the enabled providers — in fuzzel (Wayland, not GNOME), rofi (X11) or zenity. \
            Only names are listed; the chosen account's secret is asked for as `keyport type` asks. \
            Exit status: 0 typed; 1 nothing chosen, or the provider declined; 2 keyportd is not running, \
            no menu or way to type, or a usage error.
            """
    )

    @Argument(help: "The site whose accounts to list (all of them when absent).")
    var site: String?

    @Flag(help: "One-time codes instead of passwords.")
    var otp = false

    @Flag(name: .customLong("with-user"), help: "Type the user name, Tab, then the password.")
    var withUser = false

    @Flag(help: "Put it on the clipboard instead, marked secret; cleared after 30 seconds if it is still Keyport's.")
    var copy = false

    func validate() throws {
        if otp && withUser { throw ValidationError("--with-user is for passwords: a one-time code is typed alone") }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let delivery = try Delivery(copy: copy)
        let kind: AutoFill.CredentialType = otp ? .oneTimeCode : .password
        let services = site.map {
            [AutoFill.ServiceIdentifier(identifier: $0, type: $0.contains("://") ? .URL : .domain)]
        }
        let listed = try await withKeyportd { connection in
            try await connection.call(
                AutoFill.ListIdentities.self,
                .init(type: kind, serviceIdentifiers: services ?? [])
            )
        }
        guard !listed.identities.isEmpty else {
            throw CommandError.invalid(
                "no enabled provider has \(otp ? "a one-time code" : "a password")\(site.map { " for \($0)" } ?? "")"
            )
        }
        let rows = listed.identities.map { fit in
            DisplayText.escaping(
                "\(fit.identity.user.isEmpty ? "(no user name)" : fit.identity.user) — \(fit.origin) (\(fit.providerName))"
            )
        }
        guard
            let index = try await Picker.choose(
                rows,
                prompt: otp ? "One-time code" : "Password",
                environment: environment
            )
        else {
            throw CommandError.invalid("nothing was chosen")
        }
        let chosen = listed.identities[index]
        // Asked for the site it was saved for, unless a SITE was given: then for that site, so a
        // wider fit goes through the agent as everywhere.
        let service = site ?? chosen.identity.site
        let answer: AutoFillClient.Answer
        do {
            answer = try AutoFillClient.request(
                kind,
                for: service,
                identity: chosen.identity,
                environment: environment
            ) { asking in
                FileHandle.write("keyport: \(DisplayText.escaping(asking))\n", to: .standardError)
            }
        } catch {
            throw CommandError(message: error.message, exitCode: error.exitCode)
        }
        var text = try secret(kind, of: answer)
        if withUser, !otp, let user = answer.credential.user {
            // A control character typed would act (Enter sends the form, Tab moves on): a user
            // name with one, from an imported file, is refused rather than typed.
            guard !user.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw CommandError.invalid(
                    "the user name holds a control character, which would act when typed; nothing was typed"
                )
            }
            text = user + "\t" + text
        }
        try await delivery.deliver(text)
        FileHandle.write(
            "keyport: \(copy ? "copied" : "typed") \(DisplayText.escaping(AutoFillClient.answered(kind, answer)))\n",
            to: .standardError
        )
    }
}

/// A menu to pick a row from: on Wayland fuzzel (where the compositor has layer shell: not GNOME),
/// then zenity, then rofi (through XWayland); on X11 rofi, then zenity. The rows go on the menu's
/// standard input, never its command line.
enum Picker {
    /// The index of the row the person picked; `nil` when they picked none.
    static func choose(
        _ rows: [String],
        prompt: String,
        environment: [String: String]
    ) async throws(CommandError) -> Int? {
        let path = environment["PATH"]
        let wayland = !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        var menus: [(String, [String])] = []
        // fuzzel draws with the layer-shell protocol, which GNOME's compositor does not have.
        let gnome = (environment["XDG_CURRENT_DESKTOP"] ?? "").lowercased().contains("gnome")
        if wayland, !gnome, let fuzzel = Executable.find("fuzzel", path: path) {
            menus.append((fuzzel, ["--dmenu", "--index", "--prompt=\(prompt): "]))
        }
        // rofi 1.7 (Debian 12's) draws on X11 only: on Wayland it needs XWayland, so it comes after zenity there.
        let rofi = Executable.find("rofi", path: path).map { ($0, ["-dmenu", "-i", "-format", "i", "-p", prompt]) }
        if !wayland, let rofi { menus.append(rofi) }
        if let zenity = Executable.find("zenity", path: path) {
            menus.append(
                (
                    zenity,
                    [
                        "--list", "--title=Keyport", "--text=\(prompt)", "--column=Account", "--column=Number",
                        "--print-column=2", "--hide-column=2", "--width=560", "--height=420",
                    ]
                )
            )
        }
        if wayland, let rofi { menus.append(rofi) }
        guard let (program, arguments) = menus.first,
            wayland || !(environment["DISPLAY"] ?? "").isEmpty
        else {
            throw .io("no menu to pick from: install fuzzel, rofi or zenity, in a graphical session")
        }
        let zenity = program.hasSuffix("/zenity")
        let input = rows.enumerated().map { zenity ? "\($0.element)\n\($0.offset)\n" : "\($0.element)\n" }.joined()
        let child = try await runToEnd(program, arguments, input: input, environment: environment)
        // fuzzel, rofi and zenity all end with 1 when the person closes the menu.
        if child.termination == .exited(1) { return nil }
        guard child.termination == .exited(0), let output = child.output else {
            let said = String(decoding: child.output?.standardError ?? Data(), as: UTF8.self).trimmingWhitespace()
            throw .io(
                "\(program) failed (\(child.termination.map { "\($0)" } ?? "it did not finish"))\(said.isEmpty ? "" : ": \(said)")"
            )
        }
        guard let index = Int(String(decoding: output.standardOutput, as: UTF8.self).trimmingWhitespace()),
            rows.indices.contains(index)
        else { return nil }
        return index
    }
}

/// Runs `program` with `input` on its standard input until it ends, its output captured.
private func runToEnd(
    _ program: String,
    _ arguments: [String],
    input: String,
    environment: [String: String]
) async throws(CommandError) -> ChildProcess {
    let child: ChildProcess
    do {
        child = try ChildProcess(
            executable: program,
            arguments: arguments,
            environment: environment,
            streams: .captured(input: Data(input.utf8))
        )
    } catch {
        throw .io("cannot run \(program): \(error)")
    }
    await child.waitForExit()
    await child.output?.waitForEnd()
    return child
}
