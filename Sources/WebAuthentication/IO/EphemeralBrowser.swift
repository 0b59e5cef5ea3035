import Foundation
import KeyportSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A browser Keyport launches itself, with a profile directory made for this one sign-in and
/// removed afterwards, so the page sees no cookies or storage from earlier browsing and keeps none.
/// This is how an ephemeral session (Apple's `prefersEphemeralWebBrowserSession`) is honoured on
/// Linux: the person's running browser cannot be asked for a private window with a clean profile,
/// but a new browser process with `--user-data-dir` (Chromium) or `--profile` (Firefox) can.
///
/// Owning the process has a second use: when the person closes the window the process exits, and
/// the session ends at once instead of waiting for a callback that cannot come.
public struct EphemeralBrowser: Sendable {
    /// The command, one word per element: `%s` stands for the URL, `%p` for the profile directory.
    public let command: [String]

    /// Why no ephemeral browser can be run.
    public struct Unavailable: Error, CustomStringConvertible, Sendable {
        /// What is missing and how to get it (install a browser, set `$BROWSER`).
        public let description: String
    }

    /// The browsers tried when no command is given, in order, with the flags that give each a
    /// fresh profile and a private window.
    public static let knownBrowsers: [[String]] = [
        [
            "chromium", "--user-data-dir=%p", "--incognito", "--no-first-run", "--no-default-browser-check",
            "--new-window", "%s",
        ],
        [
            "chromium-browser", "--user-data-dir=%p", "--incognito", "--no-first-run", "--no-default-browser-check",
            "--new-window", "%s",
        ],
        [
            "google-chrome", "--user-data-dir=%p", "--incognito", "--no-first-run", "--no-default-browser-check",
            "--new-window", "%s",
        ],
        ["firefox", "--no-remote", "--profile", "%p", "--private-window", "%s"],
    ]

    /// Chooses the browser. A given `command` must place the profile directory (`%p`): a browser
    /// that is not told where its profile is would use the person's own, and the session would
    /// not be ephemeral. Without a command, the first of ``knownBrowsers`` found on `PATH` is
    /// used, and only when there is a display to show it on.
    public init(
        command: [String]? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(Unavailable) {
        if let command {
            guard let program = command.first, !program.isEmpty else {
                throw Unavailable(description: "the ephemeral browser command is empty")
            }
            guard command.contains(where: { $0.contains("%p") }) else {
                throw Unavailable(
                    description:
                        "the browser command \(program) does not place its profile directory (%p), so it would use the person's own profile; an ephemeral session needs one made for it"
                )
            }
            guard let executable = Executable.find(program, path: environment["PATH"]) else {
                throw Unavailable(description: "the browser \(program) was not found")
            }
            self.command = [executable] + command.dropFirst()
            return
        }
        let launcher = BrowserLauncher(environment: environment)
        guard launcher.hasDisplay else {
            throw Unavailable(
                description:
                    "there is no display (DISPLAY and WAYLAND_DISPLAY are unset) to show a browser Keyport launches"
            )
        }
        for candidate in Self.knownBrowsers {
            if let executable = Executable.find(candidate[0], path: environment["PATH"]) {
                self.command = [executable] + candidate.dropFirst()
                return
            }
        }
        throw Unavailable(
            description: "no browser that can run with a fresh profile was found (chromium, google-chrome or firefox)"
        )
    }

    /// Starts the browser on `url` with a new profile directory. Profile directories left behind
    /// by a Keyport process that no longer runs (killed, crashed) are removed first.
    public func launch(
        _ url: URL,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Running {
        let base = ProfileDirectory.base(environment: environment)
        ProfileDirectory.removeStale(in: base)
        let profile = try ProfileDirectory(in: base)
        let arguments = command.dropFirst().map {
            $0.replacingOccurrences(of: "%p", with: profile.url.path).replacingOccurrences(
                of: "%s",
                with: url.absoluteString
            )
        }
        do {
            let child = try ChildProcess(executable: command[0], arguments: arguments, environment: environment)
            return Running(child: child, profile: profile)
        } catch {
            profile.remove()
            throw error
        }
    }

    /// A launched browser: its process and its profile directory.
    public final class Running: Sendable {
        private let child: ChildProcess
        private let profileDirectory: ProfileDirectory
        /// The profile directory; removed once the browser has exited.
        public var profile: URL { profileDirectory.url }

        fileprivate init(child: ChildProcess, profile: ProfileDirectory) {
            self.child = child
            self.profileDirectory = profile
        }

        /// Returns when the browser process has exited (at once if it already has), or early when
        /// the waiting task is cancelled.
        public func waitForExit() async {
            await child.waitForExit()
        }

        /// Asks the browser to quit (SIGTERM to its process group, so helper processes go too),
        /// waits up to `grace` for it, then kills the group, and removes the profile directory.
        /// This runs to the end even when the calling task is cancelled (as it is after `cancel()`).
        public func terminate(grace: Duration = .seconds(3)) async {
            await Task { await self.stop(grace: grace) }.value
        }

        private func stop(grace: Duration) async {
            if child.isRunning {
                child.signalGroup(SIGTERM)
                // Whichever comes first: the browser's exit, or the end of the grace period.
                let child = self.child
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await child.waitForExit() }
                    group.addTask { try? await Task.sleep(for: grace) }
                    await group.next()
                    group.cancelAll()
                }
                child.signalGroup(SIGKILL)
                await waitForExit()
            }
            profileDirectory.remove()
        }
    }
}

/// A browser profile directory made for one sign-in, marked as in use for as long as its Keyport
/// process lives.
///
/// The mark is an exclusive `flock` on the directory itself, held through a descriptor only this
/// process has (close-on-exec, and `ChildProcess` closes it in the browser). The kernel drops the
/// lock when the process ends in any way — SIGKILL and crashes included — so an unlocked profile
/// directory is one nobody owns, whatever process now has the owner's pid. Nothing is written
/// into the directory, which the browser gets empty.
final class ProfileDirectory: Sendable {
    /// Every profile directory's name starts with this.
    static let prefix = "keyport-browser-"

    let url: URL
    private let lock: Mutex<Int32?>

    /// `$XDG_RUNTIME_DIR` when there is one (memory-backed and per-user on systemd machines), else
    /// the temporary directory.
    static func base(environment: [String: String]) -> String {
        BaseDirectories(environment: environment).runtime ?? FileManager.default.temporaryDirectory.path
    }

    /// Makes a private directory (mode 0700) in `base` and locks it.
    ///
    /// A sweep in another process can come between making the directory and locking it; it then
    /// holds the lock while removing the directory, or has removed it by the time the lock is
    /// taken. Either way this sees it (the lock is busy, or the path no longer leads to the
    /// directory locked) and makes another.
    init(in base: String) throws {
        var attempts = 0
        while true {
            attempts += 1
            var template = Array("\(base)/\(Self.prefix)XXXXXX".utf8CString)
            guard
                let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }).map({
                    String(cString: $0)
                })
            else {
                throw CocoaError(
                    .fileWriteUnknown,
                    userInfo: [
                        NSFilePathErrorKey: base,
                        NSLocalizedDescriptionKey:
                            "could not create a browser profile directory in \(base): \(String(cString: strerror(errno)))",
                    ]
                )
            }
            let descriptor = open(made, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if descriptor >= 0 {
                let locked = flock(descriptor, LOCK_EX | LOCK_NB) == 0
                // A file system without flock: the directory cannot be marked, and no sweep can
                // lock (so remove) it either.
                let unsupported = !locked && errno != EWOULDBLOCK
                if (locked || unsupported) && Self.isSameDirectory(descriptor, made) {
                    url = URL(fileURLWithPath: made, isDirectory: true)
                    lock = Mutex(descriptor)
                    return
                }
                close(descriptor)
            }
            guard attempts < 8 else {
                throw CocoaError(
                    .fileWriteUnknown,
                    userInfo: [
                        NSFilePathErrorKey: base,
                        NSLocalizedDescriptionKey:
                            "could not create a browser profile directory in \(base): it was removed each time as it was made",
                    ]
                )
            }
        }
    }

    /// Removes the directory, then lets go of the lock. Idempotent.
    func remove() {
        guard
            let descriptor = lock.withLock({ lock in
                defer { lock = nil }
                return lock
            })
        else { return }
        try? FileManager.default.removeItem(at: url)
        close(descriptor)
    }

    deinit {
        remove()
    }

    /// Removes the profile directories in `base` that belong to this user and that no process
    /// holds locked: their Keyport process has ended without removing them (killed, crashed, the
    /// machine lost power with a persistent temporary directory). A directory is removed while
    /// this holds its lock, so a Keyport process making a profile at the same moment never loses
    /// one it uses.
    static func removeStale(in base: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
        // Exactly what mkdtemp makes from the template: the prefix and six letters or digits.
        for name in names where name.hasPrefix(prefix) && name.utf8.count == prefix.utf8.count + 6 {
            let path = "\(base)/\(name)"
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid() else { continue }
            let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 && isSameDirectory(descriptor, path) {
                try? FileManager.default.removeItem(atPath: path)
            }
            close(descriptor)
        }
    }

    /// Whether `path` still leads to the directory open as `descriptor`.
    private static func isSameDirectory(_ descriptor: Int32, _ path: String) -> Bool {
        var opened = stat()
        var named = stat()
        return fstat(descriptor, &opened) == 0 && lstat(path, &named) == 0 && opened.st_dev == named.st_dev
            && opened.st_ino == named.st_ino
    }
}
