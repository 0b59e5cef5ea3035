import Foundation
import KeyportCallbacks
import KeyportTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The URLs a session accepted.
private final class Taken: Sendable {
    let urls = Mutex<[URL]>([])
}

/// The hand-off without keyportd: sessions serving sockets in a private directory, and the
/// handler's offer going from socket to socket until one takes the URL.
@Suite("The callback hand-off between sessions")
struct HandOffTests {
    /// A session serving `path` that takes the URLs `take` says yes to; what it accepted goes to
    /// `taken`. Returns once it listens.
    private func session(
        at path: String,
        taken: Taken,
        take: @escaping @Sendable (URL) -> Bool
    ) async throws -> Task<Void, any Error> {
        let listening = AsyncStream<Void>.makeStream()
        let server = CallbackHandOff.sessionServer(take: take) { url in taken.urls.withLock { $0.append(url) } }
        let task = Task { try await server.serve(path: path) { listening.continuation.yield() } }
        var ready = listening.stream.makeAsyncIterator()
        _ = await ready.next()
        return task
    }

    @Test("an offer passes a session that refuses and a stale socket (removed) and goes to the one that takes it")
    func offerToEach() async throws {
        let temporary = try TemporaryDirectory("kp-handoff")
        defer { temporary.remove() }
        let directory = try temporary.subdirectory("callbacks")
        let refusedBy = Taken()
        let takenBy = Taken()
        let askedFirst = Taken()
        let refusing = try await session(at: directory.appendingPathComponent("a.sock").path, taken: refusedBy) {
            url in
            askedFirst.urls.withLock { $0.append(url) }
            return false
        }
        defer { refusing.cancel() }
        let taking = try await session(at: directory.appendingPathComponent("c.sock").path, taken: takenBy) {
            $0.scheme == "com.example.app"
        }
        defer { taking.cancel() }
        // A socket whose process died: bound, then closed without removing its file.
        let stale = directory.appendingPathComponent("b.sock").path
        close(try RawUnixSocket.bound(to: stale, listening: true))

        let url = "com.example.app:/done?code=secret&state=s1"
        let handed = try await CallbackHandOff.offerToEach(url, in: directory, environment: [:], skipping: [])
        #expect(handed)
        #expect(takenBy.urls.withLock { $0 } == [URL(string: url)!])
        #expect(askedFirst.urls.withLock { $0 } == [URL(string: url)!], "the first session was asked, and said no")
        #expect(refusedBy.urls.withLock { $0 }.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: stale), "a stale socket file is removed")
    }

    @Test("nobody takes it: false, and nothing accepted; a missing directory means nobody waits")
    func nobody() async throws {
        let temporary = try TemporaryDirectory("kp-handoff")
        defer { temporary.remove() }
        let directory = try temporary.subdirectory("callbacks")
        let refusedBy = Taken()
        let refusing = try await session(at: directory.appendingPathComponent("a.sock").path, taken: refusedBy) { _ in
            false
        }
        defer { refusing.cancel() }
        #expect(try await !CallbackHandOff.offerToEach("x:/y", in: directory, environment: [:], skipping: []))
        let missing = temporary.url.appendingPathComponent("missing")
        #expect(try await !CallbackHandOff.offerToEach("x:/y", in: missing, environment: [:], skipping: []))
    }

    @Test("a directory others can enter is refused, saying so, and a URL over 8192 bytes is not handed over")
    func refusals() async throws {
        let temporary = try TemporaryDirectory("kp-handoff")
        defer { temporary.remove() }
        let open = try temporary.subdirectory("open", mode: 0o755)
        let unsafe = #expect(throws: CallbackHandOffError.self) {
            _ = try CallbackSocketDirectory.prepare(open, environment: [:], create: false)
        }
        #expect(unsafe?.code == .unsafeDirectory)
        #expect(unsafe?.message.contains(open.path) == true, "\(unsafe?.message ?? "")")

        let long = "x:/" + String(repeating: "a", count: CallbackHandOff.maximumURLLength)
        let tooLong = await #expect(throws: CallbackHandOffError.self) {
            _ = try await CallbackHandOff.deliver(long, directory: temporary.url, environment: [:])
        }
        #expect(tooLong?.code == .urlTooLong)
    }
}
