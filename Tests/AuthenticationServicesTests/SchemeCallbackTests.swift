import AuthenticationServices
import Foundation
import KeyportTestSupport
import Testing

@testable import WebAuthentication

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The socket files in a directory.
func socketFiles(in directory: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".sock") }
}

/// The permission bits of a file.
func mode(of path: String) -> Int {
    var info = stat()
    guard lstat(path, &info) == 0 else { return -1 }
    return Int(info.st_mode & 0o777)
}

/// A plain blocking Unix-socket client, written from docs/protocol.md rather than with the
/// module's own client: sends `bytes`, returns what the session answers up to the end of its first
/// message (NUL), or everything until it closes. Throws when the session neither answers nor
/// closes within `seconds`, so a session that leaves the connection open is not mistaken for one
/// that closed it.
func rawExchange(_ bytes: [UInt8], with path: String, receiveTimeout seconds: Int = 10) async throws -> [UInt8] {
    try await onOwnThread {
        try RawUnixSocket.exchange(bytes, with: path, timeout: seconds) { $0.last == 0 }
    }
}

/// Offers `url` (any text) to the session at `path` with a hand-written Varlink call; its answer,
/// or `nil` when it answered no `accepted` (an error) or closed the connection.
func rawOffer(_ url: String, to path: String) async throws -> Bool? {
    let call = try JSONSerialization.data(
        withJSONObject: ["method": "org.keyport.CallbackSession.Offer", "parameters": ["url": url]]
    )
    let reply = try await rawExchange(Array(call) + [0], with: path)
    guard reply.last == 0,
        let object = try JSONSerialization.jsonObject(with: Data(reply.dropLast())) as? [String: Any]
    else { return nil }
    return (object["parameters"] as? [String: Any])?["accepted"] as? Bool
}

/// Leaves a socket file nobody listens on, as a crashed process would.
func makeStaleSocket(at path: String) throws {
    let descriptor = try RawUnixSocket.bound(to: path, listening: false)
    chmod(path, 0o600)
    close(descriptor)
}

func query(_ url: URL) -> [String: String] {
    Dictionary(
        (URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map { ($0.name, $0.value ?? "") },
        uniquingKeysWith: { first, _ in first }
    )
}

@Suite("Custom-scheme callbacks")
struct SchemeCallbackTests {
    let scheme = "com.example.keyport"

    @Test("a matching URL handed over by SchemeCallbackDelivery ends the wait; the socket is 0600 and removed after")
    func delivered() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let directory = scratch.url.appendingPathComponent("callbacks")
        let listener = try await SchemeCallbackListener.start(scheme: scheme, directory: directory)
        #expect(listener.scheme == scheme)
        #expect(mode(of: directory.path) == 0o700)
        #expect(mode(of: listener.socketPath) == 0o600)
        #expect(listener.socketPath.hasPrefix(directory.path + "/"))
        #expect(socketFiles(in: directory).count == 1)
        let name = URL(fileURLWithPath: listener.socketPath).lastPathComponent
        #expect(name.count == 32 + 5 && name.dropLast(5).allSatisfy(\.isHexDigit))
        let url = URL(string: "com.example.keyport:/callback?code=abc&state=s1")!
        #expect(try await SchemeCallbackDelivery.deliver(url, directory: directory))
        #expect(try await listener.waitForCallback(timeout: .seconds(20)) == url)
        #expect(listener.matcher.matches(url))
        #expect(socketFiles(in: directory).isEmpty)
        // Nobody is waiting any more.
        #expect(try await SchemeCallbackDelivery.deliver(url, directory: directory) == false)
    }

    @Test("another scheme and a URL accept refuses are not accepted; the wait goes on to the right one")
    func refusedThenAccepted() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let listener = try await SchemeCallbackListener.start(scheme: scheme, directory: scratch.url) {
            query($0)["state"] == "good"
        }
        #expect(
            try await !SchemeCallbackDelivery.deliver(
                URL(string: "com.example.other:/callback?code=1&state=good")!,
                directory: scratch.url
            )
        )
        #expect(
            try await !SchemeCallbackDelivery.deliver(
                URL(string: "com.example.keyport:/callback?code=2&state=bad")!,
                directory: scratch.url
            )
        )
        #expect(try await rawOffer("com.example.keyport:/callback?state=bad", to: listener.socketPath) == false)
        #expect(try await rawOffer("not a url at all", to: listener.socketPath) == false)
        // Not Varlink at all: the connection is closed, the session goes on waiting.
        #expect(try await rawExchange([0xff, 0xfe, 0x00], with: listener.socketPath) == [])
        #expect(socketFiles(in: scratch.url).count == 1)
        // The scheme is compared case-insensitively.
        let good = URL(string: "COM.Example.Keyport:/callback?code=3&state=good")!
        #expect(try await SchemeCallbackDelivery.deliver(good, directory: scratch.url))
        #expect(try await listener.waitForCallback(timeout: .seconds(20)) == good)
    }

    @Test("two sessions for one scheme with different states each get their own URL")
    func twoSessions() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let first = try await SchemeCallbackListener.start(scheme: scheme, directory: scratch.url) {
            query($0)["state"] == "one"
        }
        let second = try await SchemeCallbackListener.start(scheme: scheme, directory: scratch.url) {
            query($0)["state"] == "two"
        }
        #expect(socketFiles(in: scratch.url).count == 2)
        #expect(
            try await SchemeCallbackDelivery.deliver(
                URL(string: "com.example.keyport:/cb?code=B&state=two")!,
                directory: scratch.url
            )
        )
        #expect(
            try await SchemeCallbackDelivery.deliver(
                URL(string: "com.example.keyport:/cb?code=A&state=one")!,
                directory: scratch.url
            )
        )
        #expect(query(try await first.waitForCallback(timeout: .seconds(20)))["code"] == "A")
        #expect(query(try await second.waitForCallback(timeout: .seconds(20)))["code"] == "B")
        #expect(socketFiles(in: scratch.url).isEmpty)
    }

    @Test("a URL over 8192 bytes is not accepted, nor sent; 8192 bytes is accepted")
    func tooLong() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let listener = try await SchemeCallbackListener.start(scheme: scheme, directory: scratch.url)
        let prefix = "com.example.keyport:/callback?state="
        let tooLong = prefix + String(repeating: "a", count: 8193 - prefix.utf8.count)
        #expect(try await rawOffer(tooLong, to: listener.socketPath) == false)
        // Past the message limit (64 KiB): the connection is closed, the session waits on.
        #expect(try await rawOffer(prefix + String(repeating: "a", count: 70_000), to: listener.socketPath) == nil)
        let longURL = URL(string: tooLong)!
        await #expect(throws: SchemeCallbackError.self) {
            try await SchemeCallbackDelivery.deliver(longURL, directory: scratch.url)
        }

        let limit = URL(string: prefix + String(repeating: "b", count: 8192 - prefix.utf8.count))!
        #expect(limit.absoluteString.utf8.count == 8192)
        #expect(try await SchemeCallbackDelivery.deliver(limit, directory: scratch.url))
        #expect(try await listener.waitForCallback(timeout: .seconds(20)) == limit)
    }

    @Test("a stale socket file is skipped and removed; a live listener behind it still gets the URL")
    func staleSocket() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        // "0000…" sorts first, so it is tried before the live listener.
        let stale = scratch.url.appendingPathComponent(String(repeating: "0", count: 32) + ".sock").path
        try makeStaleSocket(at: stale)
        #expect(FileManager.default.fileExists(atPath: stale))
        let url = URL(string: "com.example.keyport:/callback?code=1")!
        #expect(try await SchemeCallbackDelivery.deliver(url, directory: scratch.url) == false)
        #expect(!FileManager.default.fileExists(atPath: stale))

        try makeStaleSocket(at: stale)
        let listener = try await SchemeCallbackListener.start(scheme: scheme, directory: scratch.url)
        #expect(try await SchemeCallbackDelivery.deliver(url, directory: scratch.url))
        #expect(try await listener.waitForCallback(timeout: .seconds(20)) == url)
        #expect(!FileManager.default.fileExists(atPath: stale))
    }

    @Test("a connection that sends nothing holds up no offer on another")
    func idleConnection() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let listener = try await SchemeCallbackListener.start(scheme: scheme, directory: scratch.url)
        let idle = try RawUnixSocket.connected(to: listener.socketPath)
        defer { close(idle) }
        let url = URL(string: "com.example.keyport:/callback?code=1")!
        #expect(try await SchemeCallbackDelivery.deliver(url, directory: scratch.url))
        #expect(try await listener.waitForCallback(timeout: .seconds(20)) == url)
        #expect(socketFiles(in: scratch.url).isEmpty)
    }

    @Test("the wait times out with CallbackTimedOut, and the listener is gone")
    func timeout() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let listener = try await SchemeCallbackListener.start(scheme: scheme, directory: scratch.url)
        await #expect(throws: CallbackTimedOut.self) { try await listener.waitForCallback(timeout: .milliseconds(200)) }
        #expect(socketFiles(in: scratch.url).isEmpty)
        #expect(
            try await SchemeCallbackDelivery.deliver(URL(string: "com.example.keyport:/late")!, directory: scratch.url)
                == false
        )
    }

    @Test("cancel() and task cancellation end the wait with CancellationError and remove the socket")
    func cancel() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let listener = try await SchemeCallbackListener.start(scheme: scheme, directory: scratch.url)
        let waiting = Task { try await listener.waitForCallback() }
        listener.cancel()
        listener.cancel()  // idempotent
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(socketFiles(in: scratch.url).isEmpty)

        let other = try await SchemeCallbackListener.start(scheme: scheme, directory: scratch.url)
        let task = Task { try await other.waitForCallback(timeout: .seconds(60)) }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(socketFiles(in: scratch.url).isEmpty)
    }

    @Test("a listener nobody holds any more removes its socket")
    func released() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        var listener: SchemeCallbackListener? = try await SchemeCallbackListener.start(
            scheme: scheme,
            directory: scratch.url
        )
        #expect(socketFiles(in: scratch.url).count == 1)
        listener = nil
        _ = listener
        _ = try await FileChanges.waitUntil(within: .seconds(10), changesIn: scratch.url) {
            socketFiles(in: scratch.url).isEmpty
        }
        #expect(socketFiles(in: scratch.url).isEmpty)
    }

    @Test("both receivers are CallbackReceivers")
    func protocolConformance() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let receivers: [any CallbackReceiver] = [
            try await SchemeCallbackListener.start(scheme: scheme, directory: scratch.url),
            try await LoopbackReceiver.start(),
        ]
        for receiver in receivers {
            await #expect(throws: CallbackTimedOut.self) {
                try await receiver.waitForCallback(timeout: .milliseconds(50))
            }
            receiver.cancel()
        }
    }

    @Test(
        "the default directory: $XDG_RUNTIME_DIR/keyport/callbacks, else $XDG_CACHE_HOME/keyport/run/callbacks, never /tmp"
    )
    func defaultDirectory() throws {
        #expect(
            SchemeCallbackListener.defaultDirectory(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]).path
                == "/run/user/1000/keyport/callbacks"
        )
        #expect(
            SchemeCallbackListener.defaultDirectory(environment: ["HOME": "/home/alice"]).path
                == "/home/alice/.cache/keyport/run/callbacks"
        )
        #expect(
            SchemeCallbackListener.defaultDirectory(environment: [
                "HOME": "/home/alice", "XDG_CACHE_HOME": "/var/cache/alice",
            ]).path
                == "/var/cache/alice/keyport/run/callbacks"
        )
        // Relative values are invalid and ignored (XDG Base Directory spec).
        #expect(
            SchemeCallbackListener.defaultDirectory(environment: [
                "XDG_RUNTIME_DIR": "run", "XDG_CACHE_HOME": "cache", "HOME": "/home/alice",
            ]).path
                == "/home/alice/.cache/keyport/run/callbacks"
        )
        // No HOME: the home directory from the user database.
        let home = String(cString: try #require(getpwuid(geteuid())?.pointee.pw_dir))
        #expect(
            SchemeCallbackListener.defaultDirectory(environment: [:]).path == "\(home)/.cache/keyport/run/callbacks"
        )
        #expect(!SchemeCallbackListener.defaultDirectory(environment: [:]).path.hasPrefix("/tmp/"))
    }

    @Test(
        "without XDG_RUNTIME_DIR, sessions wait in ~/.cache/keyport/run/callbacks, each new directory 0700, and are found there"
    )
    func cacheFallback() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let environment = ["HOME": scratch.url.appendingPathComponent("home").path]
        let listener = try await SchemeCallbackListener.start(scheme: scheme, directory: nil, environment: environment)
        { _ in true }
        let directory = scratch.url.appendingPathComponent("home/.cache/keyport/run/callbacks")
        #expect(listener.socketPath.hasPrefix(directory.path + "/"))
        for path in [
            "home/.cache", "home/.cache/keyport", "home/.cache/keyport/run", "home/.cache/keyport/run/callbacks",
        ] {
            #expect(mode(of: scratch.url.appendingPathComponent(path).path) == 0o700, "\(path)")
        }
        let url = URL(string: "com.example.keyport:/callback?code=1")!
        #expect(try await SchemeCallbackDelivery.deliver(url, directory: nil, environment: environment))
        #expect(try await listener.waitForCallback(timeout: .seconds(60)) == url)
    }

    @Test("a fallback directory made beforehand with the wrong mode is refused by both sides, saying how to fix it")
    func cacheFallbackWrongMode() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let environment = ["HOME": scratch.url.appendingPathComponent("home").path]
        let run = try scratch.subdirectory("home/.cache/keyport/run", mode: 0o755)
        let error = await #expect(throws: SchemeCallbackError.self) {
            try await SchemeCallbackListener.start(scheme: scheme, directory: nil, environment: environment) { _ in true
            }
        }
        #expect(error?.code == .unsafeDirectory)
        #expect(error?.message.contains("chmod 700 \(run.path)") == true, "\(error?.message ?? "")")
        let delivery = await #expect(throws: SchemeCallbackError.self) {
            try await SchemeCallbackDelivery.deliver(
                URL(string: "com.example.keyport:/cb")!,
                directory: nil,
                environment: environment
            )
        }
        #expect(delivery?.code == .unsafeDirectory)
    }

    @Test(
        "a fallback directory another user made first is refused, naming the owner",
        .enabled(if: geteuid() == 0, "needs root to give a directory away")
    )
    func cacheFallbackForeignOwner() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let environment = ["HOME": scratch.url.appendingPathComponent("home").path]
        let run = try scratch.subdirectory("home/.cache/keyport/run")
        #expect(chown(run.path, 65534, 65534) == 0)
        let error = await #expect(throws: SchemeCallbackError.self) {
            try await SchemeCallbackListener.start(scheme: scheme, directory: nil, environment: environment) { _ in true
            }
        }
        #expect(error?.code == .unsafeDirectory)
        #expect(error?.message.contains("\(run.path) belongs to user 65534") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("Remove it") == true)
    }

    @Test("a directory open to others (0755) is refused, with what to do; nothing is bound or delivered there")
    func openDirectory() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let open = try scratch.subdirectory("open", mode: 0o755)
        let error = await #expect(throws: SchemeCallbackError.self) {
            try await SchemeCallbackListener.start(scheme: scheme, directory: open)
        }
        #expect(error?.code == .unsafeDirectory)
        #expect(error?.message.contains("chmod 700 \(open.path)") == true)
        #expect(error?.message.contains("mode 755") == true)
        #expect(socketFiles(in: open).isEmpty)
        let delivery = await #expect(throws: SchemeCallbackError.self) {
            try await SchemeCallbackDelivery.deliver(URL(string: "com.example.keyport:/callback")!, directory: open)
        }
        #expect(delivery?.code == .unsafeDirectory)
    }

    @Test(
        "a directory that belongs to another user, or a link, is refused",
        .enabled(if: geteuid() == 0, "needs root to give a directory away")
    )
    func foreignDirectory() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let foreign = try scratch.subdirectory("foreign")
        #expect(chown(foreign.path, 65534, 65534) == 0)
        let error = await #expect(throws: SchemeCallbackError.self) {
            try await SchemeCallbackListener.start(scheme: scheme, directory: foreign)
        }
        #expect(error?.code == .unsafeDirectory)
        #expect(error?.message.contains("belongs to user 65534") == true)

        let target = try scratch.subdirectory("target")
        let link = scratch.url.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let linked = await #expect(throws: SchemeCallbackError.self) {
            try await SchemeCallbackListener.start(scheme: scheme, directory: link)
        }
        #expect(linked?.message.contains("not a directory") == true)
    }

    @Test("missing directories are created 0700; a missing directory on delivery means nobody waits")
    func createdDirectories() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let nested = scratch.url.appendingPathComponent("keyport/callbacks")
        #expect(
            try await SchemeCallbackDelivery.deliver(URL(string: "com.example.keyport:/x")!, directory: nested) == false
        )
        #expect(!FileManager.default.fileExists(atPath: nested.path))
        let listener = try await SchemeCallbackListener.start(scheme: scheme, directory: nested)
        defer { listener.cancel() }
        #expect(mode(of: nested.path) == 0o700)
        #expect(mode(of: nested.deletingLastPathComponent().path) == 0o700)
    }

    @Test("an invalid scheme is refused before anything is bound")
    func invalidScheme() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let error = await #expect(throws: SchemeCallbackError.self) {
            try await SchemeCallbackListener.start(scheme: "https", directory: scratch.url)
        }
        #expect(error?.code == .invalidScheme)
        #expect(socketFiles(in: scratch.url).isEmpty)
    }
}

// SchemeRegistration runs xdg-mime to its end, blocking its thread (it is for the command line's
// synchronous commands): called here on a thread of its own, not on one of the few cooperative
// threads the other tests' servers and clients need.
@Suite("Custom-scheme registration")
struct SchemeRegistrationTests {
    /// An environment whose XDG directories and HOME are all inside `scratch`.
    func environment(_ scratch: TemporaryDirectory, path: String = "/usr/local/bin:/usr/bin:/bin") -> [String: String] {
        [
            "PATH": path, "HOME": scratch.url.appendingPathComponent("home").path,
            "XDG_DATA_HOME": scratch.url.appendingPathComponent("data").path,
            "XDG_CONFIG_HOME": scratch.url.appendingPathComponent("config").path,
            "XDG_DATA_DIRS": scratch.url.appendingPathComponent("system").path,
            "XDG_CONFIG_DIRS": scratch.url.appendingPathComponent("system-config").path,
        ]
    }

    /// `xdg-mime query default x-scheme-handler/NAME` in `environment`.
    func queryDefault(_ scheme: String, _ environment: [String: String]) async throws -> String {
        let xdgMime = try Peers.require("/usr/bin/xdg-mime", "xdg-utils (Debian package xdg-utils)")
        let ran = try await Program.run(
            xdgMime,
            ["query", "default", "x-scheme-handler/\(scheme)"],
            environment: environment
        )
        return ran.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(
        "valid scheme names, lowercased",
        arguments: [
            ("com.example.keyport", "com.example.keyport"), ("Keyport", "keyport"), ("a+b-c.d", "a+b-c.d"),
            ("x1", "x1"),
        ]
    )
    func validNames(name: String, expected: String) throws {
        #expect(try SchemeRegistration.validate(scheme: name) == expected)
    }

    @Test(
        "invalid names are refused with the offending character named",
        arguments: [
            ("com.exa mple", "U+0020 (a space) at position 8"),
            ("1password", "starts with '1'"),
            ("com.example:", "':' (U+003A) at position 12"),
            ("com.example://", "without ':' or '//'"),
            ("héllo", "'é' (U+00E9) at position 2"),
            ("com_example", "'_' (U+005F) at position 4"),
            ("", "empty"),
            ("https", "browsers and the system handle themselves"),
            ("JavaScript", "browsers and the system handle themselves"),
            ("mailto", "browsers and the system handle themselves"),
        ]
    )
    func invalidNames(name: String, expected: String) {
        let error = #expect(throws: SchemeCallbackError.self) { try SchemeRegistration.validate(scheme: name) }
        #expect(error?.code == .invalidScheme)
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    }

    @Test("Exec quoting follows the Desktop Entry spec: quotes, backslash escapes, %%, doubled backslashes")
    func execQuoting() throws {
        #expect(
            try SchemeRegistration.execLine(["/opt/my apps/keyport", "url-scheme", "open"])
                == #""/opt/my apps/keyport" url-scheme open"#
        )
        #expect(try SchemeRegistration.execLine(["/usr/bin/keyport"]) == "/usr/bin/keyport")
        #expect(
            try SchemeRegistration.execLine(["/bin/echo", "50%", #"a"b"#, #"c\d"#, "$HOME", ""])
                == #"/bin/echo 50%% "a\\"b" "c\\\\d" "\\$HOME" """#
        )
        #expect(throws: SchemeCallbackError.self) { try SchemeRegistration.execLine([]) }
        #expect(throws: SchemeCallbackError.self) { try SchemeRegistration.execLine(["/bin/x", "a\nb"]) }
    }

    @Test("the .desktop entry: hidden application, quoted Exec with %u, the x-scheme-handler MIME type")
    func desktopEntry() throws {
        let entry = try SchemeRegistration.desktopEntry(
            scheme: "Com.Example.Keyport",
            handlerCommand: ["/opt/my apps/keyport", "url-scheme", "open"]
        )
        #expect(
            entry == """
                [Desktop Entry]
                Type=Application
                Name=Keyport sign-in callback (com.example.keyport)
                Comment=Hands com.example.keyport: URLs to the Keyport session waiting for them
                NoDisplay=true
                Terminal=false
                Exec="/opt/my apps/keyport" url-scheme open %u
                MimeType=x-scheme-handler/com.example.keyport;

                """
        )
    }

    @Test("register writes the file and makes it xdg-mime's default; unregister removes both and keeps the rest")
    func registerAndUnregister() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let environment = environment(scratch)
        let registration = SchemeRegistration(environment: environment)
        // Someone else's associations must survive.
        let config = try scratch.subdirectory("config")
        let list = config.appendingPathComponent("mimeapps.list")
        try """
        [Default Applications]
        text/html=firefox.desktop

        [Added Associations]
        x-scheme-handler/com.example.keyport=other-app.desktop;keyport-url-com.example.keyport.desktop;
        """.write(to: list, atomically: true, encoding: .utf8)

        let result = try await onOwnThread {
            try registration.register(
                scheme: "com.example.keyport",
                handlerCommand: ["/opt/my apps/keyport", "url-scheme", "open"]
            )
        }
        let file = scratch.url.appendingPathComponent("data/applications/keyport-url-com.example.keyport.desktop")
        #expect(result.desktopFile.path == file.path)
        #expect(result.mimeType == "x-scheme-handler/com.example.keyport")
        #expect(try String(contentsOf: file, encoding: .utf8) == result.contents)
        #expect(result.contents.contains(#"Exec="/opt/my apps/keyport" url-scheme open %u"#))
        #expect(try await queryDefault("com.example.keyport", environment) == "keyport-url-com.example.keyport.desktop")
        #expect(registration.isRegistered(scheme: "com.example.keyport") == true)
        #expect(registration.isRegistered(scheme: "com.example.other") == false)

        #expect(try await onOwnThread { try registration.unregister(scheme: "com.example.keyport") })
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(registration.isRegistered(scheme: "com.example.keyport") == false)
        // other-app.desktop is not installed, so xdg-mime reports no default, but its claim is kept.
        #expect(try await queryDefault("com.example.keyport", environment) == "")
        let edited = try String(contentsOf: list, encoding: .utf8)
        #expect(edited.contains("text/html=firefox.desktop"))
        #expect(edited.contains("x-scheme-handler/com.example.keyport=other-app.desktop;"))
        #expect(!edited.contains("keyport-url-com.example.keyport.desktop"))
        #expect(try await onOwnThread { try registration.unregister(scheme: "com.example.keyport") } == false)
    }

    @Test("register then unregister leaves xdg-mime with no handler")
    func unregisterLeavesNothing() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let environment = environment(scratch)
        let registration = SchemeRegistration(environment: environment)
        _ = try await onOwnThread {
            try registration.register(
                scheme: "org.example.solo",
                handlerCommand: ["/usr/bin/keyport", "url-scheme", "open"]
            )
        }
        #expect(try await queryDefault("org.example.solo", environment) == "keyport-url-org.example.solo.desktop")
        #expect(try await onOwnThread { try registration.unregister(scheme: "org.example.solo") })
        #expect(try await queryDefault("org.example.solo", environment) == "")
        let list = try String(contentsOf: scratch.url.appendingPathComponent("config/mimeapps.list"), encoding: .utf8)
        #expect(!list.contains("org.example.solo"))
    }

    @Test("unregister edits a symlinked mimeapps.list through the link: the link stays, the target keeps its mode 0600")
    func symlinkedMimeAppsList() async throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let registration = SchemeRegistration(environment: environment(scratch))
        let dotfiles = try scratch.subdirectory("dotfiles")
        let target = dotfiles.appendingPathComponent("mimeapps.list")
        try """
        [Default Applications]
        text/html=firefox.desktop
        x-scheme-handler/com.example.keyport=keyport-url-com.example.keyport.desktop;

        """.write(to: target, atomically: true, encoding: .utf8)
        #expect(chmod(target.path, 0o600) == 0)
        let config = try scratch.subdirectory("config")
        let link = config.appendingPathComponent("mimeapps.list")
        // A relative link, as dotfile managers make them.
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "../dotfiles/mimeapps.list")

        #expect(try await onOwnThread { try registration.unregister(scheme: "com.example.keyport") })
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "../dotfiles/mimeapps.list")
        #expect(mode(of: target.path) == 0o600)
        let edited = try String(contentsOf: target, encoding: .utf8)
        #expect(edited.contains("text/html=firefox.desktop"))
        #expect(!edited.contains("keyport-url-com.example.keyport.desktop"))
        // No temporary file is left beside the target.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dotfiles.path) == ["mimeapps.list"])
    }

    @Test("without xdg-mime, register says to install xdg-utils and writes nothing")
    func missingXDGMime() throws {
        let scratch = try TemporaryDirectory("kp-test")
        defer { scratch.remove() }
        let empty = try scratch.subdirectory("bin")
        let registration = SchemeRegistration(environment: environment(scratch, path: empty.path))
        let error = #expect(throws: SchemeCallbackError.self) {
            try registration.register(
                scheme: "com.example.keyport",
                handlerCommand: ["/usr/bin/keyport", "url-scheme", "open"]
            )
        }
        #expect(error?.code == .toolMissing)
        #expect(error?.message.contains("install xdg-utils") == true)
        #expect(!FileManager.default.fileExists(atPath: registration.applicationsDirectory.path))
    }

    @Test("XDG_DATA_HOME and XDG_CONFIG_HOME default under HOME")
    func defaults() {
        let registration = SchemeRegistration(environment: ["HOME": "/home/alice"])
        #expect(registration.applicationsDirectory.path == "/home/alice/.local/share/applications")
        #expect(registration.mimeAppsList.path == "/home/alice/.config/mimeapps.list")
    }
}
