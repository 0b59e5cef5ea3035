import ArgumentParser
import Crypto
import Foundation
import KeyportCommandLine
import KeyportEncoding
import KeyportSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `keyport browser`: connects Keyport's browser extension (browser/ in the repository) to
/// keyport-browser, its native messaging host, by writing the host manifests the browsers read.
struct BrowserCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "browser",
        abstract: "Connect Keyport's browser extension to Keyport: AutoFill in Chromium, Chrome and Firefox.",
        discussion: """
            install writes the native messaging host manifest (org.keyport.browser.json) where each \
            browser looks for it, allowing only Keyport's extension to start keyport-browser, and says how \
            to load the extension; uninstall removes them. Browsers from snap or Flatpak run sandboxed and \
            cannot start keyport-browser: install says so when it finds one. manifest prints one host \
            manifest, for a package that installs Keyport for every user.
            """,
        subcommands: [Install.self, Uninstall.self, Manifest.self]
    )

    /// The browsers whose manifests Keyport writes.
    enum Browser: String, CaseIterable, ExpressibleByArgument {
        case chromium, chrome, firefox

        var shown: String {
            switch self {
            case .chromium: "Chromium"
            case .chrome: "Google Chrome"
            case .firefox: "Firefox"
            }
        }

        /// Where the browser reads a user's host manifests.
        func hostDirectory(_ directories: BaseDirectories) -> String {
            switch self {
            case .chromium: directories.configHome + "/chromium/NativeMessagingHosts"
            case .chrome: directories.configHome + "/google-chrome/NativeMessagingHosts"
            case .firefox: directories.home + "/.mozilla/native-messaging-hosts"
            }
        }

        /// The commands that start it, as Debian and Google install them.
        var commands: [String] {
            switch self {
            case .chromium: ["chromium", "chromium-browser"]
            case .chrome: ["google-chrome", "google-chrome-stable"]
            case .firefox: ["firefox", "firefox-esr"]
            }
        }

        /// Its sandboxed packages: snap names and Flatpak ids.
        var sandboxed: (snap: String, flatpak: String) {
            switch self {
            case .chromium: ("chromium", "org.chromium.Chromium")
            case .chrome: ("google-chrome", "com.google.Chrome")
            case .firefox: ("firefox", "org.mozilla.firefox")
            }
        }
    }

    /// The host's name, as the extension connects to it (`runtime.connectNative`).
    static let hostName = "org.keyport.browser"

    /// The extension, read from its folder: where it is and the ids each browser knows it by.
    struct Extension {
        var directory: String
        /// Chromium's id, fixed by the public key in the manifest's `key`.
        var chromiumID: String
        /// Firefox's id, `browser_specific_settings.gecko.id`.
        var firefoxID: String

        /// The extension in `directory` (or the folder of `directory` when it names the
        /// manifest itself).
        init(directory given: String) throws(CommandError) {
            let directory = given.hasSuffix("/manifest.json") ? String(given.dropLast("/manifest.json".count)) : given
            self.directory = directory
            let path = directory + "/manifest.json"
            guard let data = FileManager.default.contents(atPath: path) else {
                throw .io(
                    "there is no extension in \(directory): \(path) cannot be read; name the extension's folder (browser/ in Keyport's sources)"
                )
            }
            guard let manifest = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw .io("\(path) is not a JSON object: not an extension's manifest")
            }
            guard let key = manifest["key"] as? String, let der = Data(base64Encoded: key) else {
                throw .io("\(path) has no \"key\" in base64: the extension's Chromium id comes from it")
            }
            guard
                let gecko = (manifest["browser_specific_settings"] as? [String: Any])?["gecko"] as? [String: Any],
                let firefoxID = gecko["id"] as? String
            else {
                throw .io("\(path) has no browser_specific_settings.gecko.id: Firefox's id for it")
            }
            chromiumID = Self.chromiumID(publicKey: der)
            self.firefoxID = firefoxID
        }

        /// Chromium's id for an extension: the first 32 hexadecimal digits of the SHA-256 of its
        /// public key (DER), each written as a letter from `a` (0) to `p` (15).
        static func chromiumID(publicKey: Data) -> String {
            let digest = SHA256.hash(data: publicKey)
            let letters = digest.prefix(16).flatMap { [$0 >> 4, $0 & 0x0f] }
            return String(decoding: letters.map { UInt8(ascii: "a") + $0 }, as: UTF8.self)
        }

        /// Where the extension is: `--extension`, else the first folder holding its manifest
        /// among those Keyport installs it to, else the repository this keyport was built in.
        static func find(
            _ given: String?,
            directories: BaseDirectories,
            program: String
        ) throws(CommandError) -> Extension {
            if let given { return try Extension(directory: URL(fileURLWithPath: given).standardizedFileURL.path) }
            let bin = URL(fileURLWithPath: program).deletingLastPathComponent()
            var candidates = [
                directories.dataHome + "/keyport/browser",
                bin.deletingLastPathComponent().appendingPathComponent("share/keyport/browser").path,
                "/usr/share/keyport/browser",
            ]
            // A build tree: .build/<triple>/<configuration>/keyport-cli in the repository.
            var folder = bin
            for _ in 0..<4 {
                folder.deleteLastPathComponent()
                candidates.append(folder.appendingPathComponent("browser").path)
            }
            guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0 + "/manifest.json") })
            else {
                throw .io(
                    "the extension is in none of \(candidates.prefix(3).joined(separator: ", ")); name its folder with --extension"
                )
            }
            return try Extension(directory: found)
        }
    }

    /// This program's path and the host's beside it.
    static func programs() throws(CommandError) -> (cli: String, host: String) {
        guard let cli = Executable.own else {
            throw .io(Executable.unknown)
        }
        let host = URL(fileURLWithPath: cli).deletingLastPathComponent().appendingPathComponent("keyport-browser").path
        guard FileManager.default.isExecutableFile(atPath: host) else {
            throw .io("keyport-browser is not beside this keyport (\(host)): build or install it with the rest")
        }
        return (cli, host)
    }

    /// The browsers installed from Debian's or Google's packages, by their commands on PATH.
    static func installed(_ environment: [String: String]) -> [Browser] {
        let path = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        return Browser.allCases.filter { browser in
            browser.commands.contains { command in
                path.contains { FileManager.default.isExecutableFile(atPath: $0 + "/" + command) }
            }
        }
    }

    /// What cannot work: each browser of `browsers` found as a snap or a Flatpak.
    static func sandboxed(_ browsers: [Browser], directories: BaseDirectories) -> [String] {
        browsers.flatMap { browser -> [String] in
            var found: [String] = []
            if FileManager.default.fileExists(atPath: "/snap/bin/\(browser.sandboxed.snap)") {
                found.append(
                    browser == .firefox
                        ? "Firefox from snap starts native messaging hosts through the WebExtensions portal, which Keyport has not been tried with; the Firefox from Debian's or Mozilla's package works"
                        : "\(browser.shown) from snap runs confined and cannot start keyport-browser; AutoFill works in the \(browser.shown) from Debian's or the vendor's package"
                )
            }
            let id = browser.sandboxed.flatpak
            if ["/var/lib/flatpak/app/\(id)", directories.dataHome + "/flatpak/app/\(id)"].contains(where: {
                FileManager.default.fileExists(atPath: $0)
            }) {
                found.append(
                    "\(browser.shown) from Flatpak (\(id)) runs sandboxed and cannot start keyport-browser outside it; AutoFill works in the \(browser.shown) from Debian's or the vendor's package"
                )
            }
            return found
        }
    }

    /// The program the host manifest at `path` names (`path` in it); nil when there is none.
    static func hostNamed(at path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path),
            let manifest = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return manifest["path"] as? String
    }

    /// The host manifest for `browser`: only Keyport's extension may start the host.
    static func hostManifest(for browser: Browser, host: String, webExtension: Extension) -> Data {
        var manifest: [String: Any] = [
            "name": hostName,
            "description": "Keyport AutoFill: relays the Keyport extension's requests to keyportd",
            "path": host,
            "type": "stdio",
        ]
        switch browser {
        case .chromium, .chrome: manifest["allowed_origins"] = ["chrome-extension://\(webExtension.chromiumID)/"]
        case .firefox: manifest["allowed_extensions"] = [webExtension.firefoxID]
        }
        // Sorted keys: the same install writes the same bytes.
        let data = try! JSONSerialization.data(
            withJSONObject: manifest,
            options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        )
        return data + Data("\n".utf8)
    }

    /// How to load the extension in `browser`.
    static func howToLoad(_ browser: Browser, webExtension: Extension) -> String {
        switch browser {
        case .chromium, .chrome:
            """
            \(browser.shown): open chrome://extensions, turn on Developer mode, choose "Load unpacked" and \
            pick \(webExtension.directory) (its id is \(webExtension.chromiumID)).
            """
        case .firefox:
            """
            Firefox: in any Firefox, until it restarts, load \(webExtension.directory)/manifest.json in \
            about:debugging ("This Firefox", "Load Temporary Add-on"). To keep it: release builds accept only \
            add-ons Mozilla signed, and Keyport's is not; in Firefox ESR or Developer Edition set \
            xpinstall.signatures.required to false in about:config, make the add-on with \
            `(cd \(webExtension.directory) && zip -FS -r /tmp/keyport-autofill.xpi .)` (manifest.json at the \
            zip's top) and install it from about:addons ("Install Add-on From File").
            """
        }
    }

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Let Keyport's extension reach Keyport, and say how to load the extension.",
            discussion: """
                Without --browser, for each of chromium, chrome and firefox whose command is on PATH (all \
                three when none is). Manifests point at the keyport-browser beside this keyport (run from the \
                build directory, into it: run install again after moving or rebuilding Keyport elsewhere). \
                Exit status: 0, 2 when a file cannot be written or the extension is not found or not Keyport's.
                """
        )

        @Option(name: .long, help: "Only this browser: chromium, chrome or firefox.")
        var browser: Browser?

        @Option(
            name: .customLong("extension"),
            help: """
                The extension's folder (holding its manifest.json). By default the first of \
                $XDG_DATA_HOME/keyport/browser, PREFIX/share/keyport/browser (PREFIX/bin holding this keyport), \
                /usr/share/keyport/browser, and the browser/ folder of the sources this keyport was built from.
                """
        )
        var extensionDirectory: String?

        func run() throws {
            let environment = ProcessInfo.processInfo.environment
            let directories = BaseDirectories(environment: environment)
            let (cli, host) = try programs()
            let found = try Extension.find(extensionDirectory, directories: directories, program: cli)
            let detected = BrowserCommand.installed(environment)
            let browsers = browser.map { [$0] } ?? (detected.isEmpty ? Browser.allCases : detected)
            if browser == nil {
                let others = Browser.allCases.filter { !browsers.contains($0) }.map(\.rawValue)
                FileHandle.write(
                    detected.isEmpty
                        ? "no browser's command is on PATH: writing the manifests of all three\n"
                        : "for the browsers on PATH\(others.isEmpty ? "" : " (another: --browser \(others.joined(separator: "|")))")\n"
                )
            }
            for browser in browsers {
                let directory = browser.hostDirectory(directories)
                let path = directory + "/\(hostName).json"
                do {
                    try MadeFolders(directories).make(directory)
                    let manifest = hostManifest(for: browser, host: host, webExtension: found)
                    if FileManager.default.contents(atPath: path) != manifest {
                        // Another Keyport's host (another prefix, a build tree) gives way: said, so
                        // that nobody wonders where theirs went.
                        let replaced = hostNamed(at: path).flatMap { $0 == host ? nil : $0 }
                        try manifest.write(to: URL(fileURLWithPath: path), options: .atomic)
                        FileHandle.write(
                            DisplayText.escaping(
                                "wrote \(path)\(replaced.map { " (it named \($0), now this one)" } ?? "")"
                            )
                                + "\n"
                        )
                    } else {
                        FileHandle.write("\(path) is up to date\n")
                    }
                } catch {
                    throw CommandError.io("cannot write \(path): \(error.localizedDescription)")
                }
            }
            FileHandle.write("\nTo load the extension:\n")
            for browser in browsers where browser != .chrome || !browsers.contains(.chromium) {
                FileHandle.write("- " + howToLoad(browser, webExtension: found) + "\n")
            }
            for warning in sandboxed(Browser.allCases, directories: directories) {
                FileHandle.write("note: \(warning)\n")
            }
        }
    }

    struct Manifest: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a browser's host manifest for a keyport-browser installed elsewhere (for packages).",
            discussion: """
                A system-wide package puts it where the browser reads every user's: \
                /etc/chromium/native-messaging-hosts, /etc/opt/chrome/native-messaging-hosts, \
                /usr/lib/mozilla/native-messaging-hosts (scripts/package does). Exit status: 0, 2 when \
                the extension is not found or not Keyport's.
                """
        )

        @Option(name: .long, help: "The browser: chromium, chrome or firefox.")
        var browser: Browser

        @Option(name: .long, help: "keyport-browser's absolute path where it will be installed.")
        var host: String

        @Option(name: .customLong("extension"), help: "The extension's folder (holding its manifest.json).")
        var extensionDirectory: String

        func validate() throws {
            guard host.hasPrefix("/") else { throw ValidationError("--host must be an absolute path: \(host)") }
        }

        func run() throws {
            let found = try Extension(directory: URL(fileURLWithPath: extensionDirectory).standardizedFileURL.path)
            FileHandle.write(hostManifest(for: browser, host: host, webExtension: found))
        }
    }

    struct Uninstall: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove the host manifests install wrote; the extension stays until you remove it.",
            discussion: """
                The folders install made for them go too, once empty. A manifest naming another Keyport's keyport-browser (another prefix, a build tree) that \
                is there stays: it is that Keyport's. Exit status: 0 (also when there was nothing to \
                remove), 2 when a file cannot be removed.
                """
        )

        @Option(name: .long, help: "Only this browser: chromium, chrome or firefox.")
        var browser: Browser?

        func run() throws {
            let directories = BaseDirectories(environment: ProcessInfo.processInfo.environment)
            let ownHost = try? programs().host
            var removed = 0
            var left = 0
            for browser in browser.map({ [$0] }) ?? Browser.allCases {
                let path = browser.hostDirectory(directories) + "/\(hostName).json"
                // The folders install made for it go once empty, also after the manifest went.
                defer { MadeFolders(directories).remove(holding: browser.hostDirectory(directories)) }
                guard FileManager.default.fileExists(atPath: path) else { continue }
                if let named = hostNamed(at: path), named != ownHost, named.hasSuffix("/keyport-browser"),
                    FileManager.default.isExecutableFile(atPath: named)
                {
                    FileHandle.write(DisplayText.escaping("left \(path): it names another Keyport's \(named)") + "\n")
                    left += 1
                    continue
                }
                do {
                    try FileManager.default.removeItem(atPath: path)
                } catch {
                    throw CommandError.io("cannot remove \(path): \(error.localizedDescription)")
                }
                FileHandle.write("removed \(path)\n")
                removed += 1
            }
            if removed == 0 && left == 0 { FileHandle.write("no host manifest of Keyport's was installed\n") }
        }
    }
}

/// The folders `browser install` made for the host manifests (`~/.mozilla/native-messaging-hosts`
/// and those above it that were not there), recorded in Keyport's state folder so that `browser
/// uninstall` removes them once they are empty, as it removes its files, and never a folder that
/// was there before.
private struct MadeFolders {
    let record: String

    init(_ directories: BaseDirectories) { record = directories.stateHome + "/keyport/browser-folders" }

    private func read() -> [String] {
        ((try? String(contentsOfFile: record, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    private func write(_ folders: [String]) throws {
        if folders.isEmpty {
            unlink(record)
            return
        }
        try FileManager.default.createDirectory(atPath: FilePaths.parent(record), withIntermediateDirectories: true)
        try AtomicFile.write(Data((folders.joined(separator: "\n") + "\n").utf8), to: record)
    }

    /// Makes `directory`, noting the folders that were not there.
    func make(_ directory: String) throws {
        var missing: [String] = []
        var folder = directory
        while folder.count > 1, !FileManager.default.fileExists(atPath: folder) {
            missing.append(folder)
            folder = FilePaths.parent(folder)
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if !missing.isEmpty { try write(Set(read()).union(missing).sorted()) }
    }

    /// Removes the recorded folders that hold `directory` (itself included), deepest first, each
    /// only when it is empty; the others stay recorded.
    func remove(holding directory: String) {
        var kept: [String] = []
        // Descending order puts a folder after everything inside it.
        for folder in read().sorted(by: >) {
            let holds = directory == folder || directory.hasPrefix(folder + "/")
            if holds && (rmdir(folder) == 0 || errno == ENOENT) { continue }
            kept.append(folder)
        }
        try? write(kept.sorted())
    }
}
