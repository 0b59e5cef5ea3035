import Foundation
import KeyportDomainsCore
import KeyportEncoding
import KeyportSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Registers a program as the desktop's handler for a private-use URL scheme, the way freedesktop.org
/// desktops find one: a `.desktop` file with `MimeType=x-scheme-handler/NAME;` in
/// `$XDG_DATA_HOME/applications`, made the default for that MIME type with `xdg-mime default`.
///
/// Use reverse-DNS names you control, such as `com.example.app` (RFC 8252 §7.1): any application
/// can claim any scheme and the last registration wins, so a short name like `myapp` is easily
/// taken over. On Linux the loopback redirect (``LoopbackReceiver``) cannot be claimed by anyone
/// else and is the better choice where the authorization server allows it.
///
/// Everything reads the environment given to ``init(environment:)`` (`XDG_DATA_HOME`,
/// `XDG_CONFIG_HOME`, `HOME`, `PATH`), and the programs it runs get that environment too, so a
/// test can point it at temporary directories.
public struct SchemeRegistration: Sendable {
    /// Schemes browsers or the system handle themselves; Keyport will not take them over.
    public static var reservedSchemes: Set<String> { PrivateURLScheme.reserved }

    /// The longest scheme accepted (the `.desktop` file name must stay within 255 bytes).
    public static var maximumSchemeLength: Int { PrivateURLScheme.maximumLength }

    /// Where the XDG directories, `HOME` and `PATH` are read; the programs run get it too.
    public var environment: [String: String]

    /// A registration reading `environment` (the process's own by default).
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    /// What ``register(scheme:handlerCommand:)`` did.
    public struct Registration: Sendable, Equatable {
        /// The `.desktop` file written.
        public var desktopFile: URL
        /// Its contents.
        public var contents: String
        /// The MIME type the file was made the default for: `x-scheme-handler/NAME`.
        public var mimeType: String
        /// Whether `update-desktop-database` was found and run.
        public var updatedDesktopDatabase: Bool
    }

    // MARK: - Where

    /// `$XDG_DATA_HOME/applications`, `XDG_DATA_HOME` defaulting to `~/.local/share`.
    public var applicationsDirectory: URL {
        URL(fileURLWithPath: BaseDirectories(environment: environment).dataHome, isDirectory: true)
            .appendingPathComponent("applications", isDirectory: true)
    }

    /// `$XDG_CONFIG_HOME/mimeapps.list`, `XDG_CONFIG_HOME` defaulting to `~/.config`.
    public var mimeAppsList: URL {
        URL(fileURLWithPath: BaseDirectories(environment: environment).configHome, isDirectory: true)
            .appendingPathComponent("mimeapps.list")
    }

    // MARK: - Registering

    /// Makes `handlerCommand URL` the desktop's handler for `scheme`: writes
    /// `$XDG_DATA_HOME/applications/keyport-url-NAME.desktop`, runs `update-desktop-database` on
    /// that directory when it is installed, and `xdg-mime default keyport-url-NAME.desktop
    /// x-scheme-handler/NAME`. Registering again replaces the file.
    ///
    /// - Parameters:
    ///   - scheme: the scheme (validated as ``validate(scheme:)``).
    ///   - handlerCommand: the program and its arguments; the URL is added as the last argument
    ///     (`%u`). Use an absolute path: the desktop's `PATH` may not be the shell's.
    /// - Throws: ``SchemeCallbackError`` — `.invalidScheme`; `.toolMissing` when `xdg-mime` is not
    ///   installed (nothing is written then); `.registrationFailed` when the file cannot be written
    ///   or `xdg-mime` fails.
    @discardableResult
    public func register(scheme: String, handlerCommand: [String]) throws(SchemeCallbackError) -> Registration {
        let scheme = try Self.validate(scheme: scheme)
        let contents = try Self.desktopEntry(scheme: scheme, handlerCommand: handlerCommand)
        guard let xdgMime = Executable.find("xdg-mime", path: environment["PATH"]) else {
            throw SchemeCallbackError(
                .toolMissing,
                "xdg-mime was not found on PATH, so the desktop cannot be told to use Keyport for \(scheme): URLs. Install xdg-utils (Debian, Ubuntu: apt install xdg-utils; Fedora: dnf install xdg-utils) and run this again"
            )
        }
        let directory = applicationsDirectory
        let file = directory.appendingPathComponent(Self.desktopFileName(for: scheme))
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(contents.utf8).write(to: file, options: .atomic)
        } catch {
            throw SchemeCallbackError(.registrationFailed, "cannot write \(file.path): \(error.localizedDescription)")
        }
        let updated = updateDesktopDatabase(directory)
        let mimeType = "x-scheme-handler/\(scheme)"
        let result = run(xdgMime, ["default", Self.desktopFileName(for: scheme), mimeType])
        guard result.status == 0 else {
            throw SchemeCallbackError(
                .registrationFailed,
                "xdg-mime default \(Self.desktopFileName(for: scheme)) \(mimeType) failed (exit \(result.status))\(result.stderr.isEmpty ? "" : ": \(result.stderr)")"
            )
        }
        return Registration(desktopFile: file, contents: contents, mimeType: mimeType, updatedDesktopDatabase: updated)
    }

    /// Whether the desktop sends `scheme` URLs to Keyport now (`xdg-mime query default` names
    /// Keyport's desktop file); `nil` when `xdg-mime` is not installed or the name is invalid.
    /// Another application may have claimed the scheme since it was registered: the last
    /// registration wins.
    public func isRegistered(scheme: String) -> Bool? {
        guard let scheme = try? Self.validate(scheme: scheme),
            let xdgMime = Executable.find("xdg-mime", path: environment["PATH"])
        else { return nil }
        let result = run(xdgMime, ["query", "default", "x-scheme-handler/\(scheme)"])
        guard result.status == 0 else { return nil }
        return result.stdout == Self.desktopFileName(for: scheme)
    }

    /// Undoes ``register(scheme:handlerCommand:)``: removes the `.desktop` file, refreshes the
    /// desktop database, and removes the association from `mimeapps.list` (`xdg-mime` has no way to
    /// unset a default, so the file is edited: only our desktop file is taken out of the lines for
    /// `x-scheme-handler/NAME`; another application's claim is left alone).
    ///
    /// - Returns: whether anything was registered (a file or an association was removed).
    /// - Throws: ``SchemeCallbackError`` `.invalidScheme`; `.registrationFailed` when a file cannot
    ///   be removed or rewritten.
    @discardableResult
    public func unregister(scheme: String) throws(SchemeCallbackError) -> Bool {
        let scheme = try Self.validate(scheme: scheme)
        let name = Self.desktopFileName(for: scheme)
        let directory = applicationsDirectory
        let file = directory.appendingPathComponent(name)
        var removed = false
        if FileManager.default.fileExists(atPath: file.path) {
            do {
                try FileManager.default.removeItem(at: file)
            } catch {
                throw SchemeCallbackError(
                    .registrationFailed,
                    "cannot remove \(file.path): \(error.localizedDescription)"
                )
            }
            removed = true
            // The cache (mimeinfo.cache) still names the file until the database is rebuilt.
            updateDesktopDatabase(directory)
        }
        let list = mimeAppsList
        if let data = FileManager.default.contents(atPath: list.path) {
            let (edited, changed) = Self.removingAssociation(
                from: String(decoding: data, as: UTF8.self),
                mimeType: "x-scheme-handler/\(scheme)",
                desktopFile: name
            )
            if changed {
                try Self.replaceContents(of: list.path, with: Data(edited.utf8))
                removed = true
            }
        }
        return removed
    }

    /// Replaces the file at `path` atomically (``AtomicFile``), keeping its mode; a link is followed.
    static func replaceContents(of path: String, with data: Data) throws(SchemeCallbackError) {
        do {
            try AtomicFile.write(data, to: path)
        } catch {
            throw SchemeCallbackError(.registrationFailed, error.message)
        }
    }

    /// Runs `update-desktop-database DIR` if it is installed; its absence or failure is not an
    /// error (it only refreshes a cache that `xdg-mime default` does not need).
    @discardableResult
    private func updateDesktopDatabase(_ directory: URL) -> Bool {
        guard let program = Executable.find("update-desktop-database", path: environment["PATH"]) else { return false }
        return run(program, [directory.path]).status == 0
    }

    /// Runs a program to completion with this registration's environment (`ChildProcess`: both
    /// outputs read together, so a program that writes much to one cannot stall on it).
    private func run(_ program: String, _ arguments: [String]) -> (status: Int32, stdout: String, stderr: String) {
        let ran: (termination: ChildProcess.Termination, standardOutput: Data, standardError: Data)
        do {
            ran = try ChildProcess.run(executable: program, arguments: arguments, environment: environment)
        } catch {
            return (-1, "", "cannot run \(program): \(error.localizedDescription)")
        }
        func text(_ data: Data) -> String {
            String(decoding: data, as: UTF8.self).trimmingWhitespace()
        }
        return (ran.termination.shellStatus, text(ran.standardOutput), text(ran.standardError))
    }
}
