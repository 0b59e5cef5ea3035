import Foundation
import KeyportDaemon
import KeyportTestSupport
import Testing

/// What keyportd makes of a site's well-known file when the site attacks its reader: a real https
/// server (Peers/hostile_site.py, a test CA of its own) read by SiteAssociations' own fetch.
@Suite("Sites' well-known files, read by keyportd", .serialized)
struct SiteAssociationsTests {
    /// The site in `mode`, its port, and a reader trusting its CA.
    private func site(_ mode: String) async throws -> (Program, String, SiteAssociations, TemporaryDirectory) {
        let python = try await Peers.python(importing: ["ssl"])
        let directory = try TemporaryDirectory("kp-hostile-site")
        let site = try Program(
            python,
            [Peers.file("Tests/KeyportDaemonTests/Peers/hostile_site.py"), directory.url.path, mode]
        )
        let ready = try await site.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("ready ") }
        let words = ready.split(separator: " ")
        let reader = SiteAssociations(fetch: SiteAssociations.https(trusting: String(words[2])))
        return (site, "localhost:\(words[1])", reader, directory)
    }

    @Test("a site's file confirms its app; the same reader asked at once fetches it once")
    func confirmsOnce() async throws {
        let (site, domain, reader, directory) = try await site("slow")
        defer {
            site.stop()
            directory.remove()
        }
        let answers = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 { group.addTask { await reader.confirm(domain: domain, app: "org.example.app").confirmed } }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(answers == Array(repeating: true, count: 8))
        #expect(site.standardOutput.components(separatedBy: "request").count - 1 == 1, "\(site.standardOutput)")
        // Kept: asked again, nobody fetches.
        #expect(await reader.confirm(domain: domain, app: "org.example.app").confirmed)
        #expect(site.standardOutput.components(separatedBy: "request").count - 1 == 1, "\(site.standardOutput)")
    }

    @Test(
        "a file that would take all day, one too large, or one behind a redirect confirms nothing, and says why",
        arguments: [
            ("drip", "did not send it all within 10 seconds"), ("huge", "larger than 128 KiB"),
            ("redirect", "could not be read"),
        ]
    )
    func refuses(mode: String, why: String) async throws {
        let (site, domain, reader, directory) = try await site(mode)
        defer {
            site.stop()
            directory.remove()
        }
        let (confirmed, said) = await reader.confirm(domain: domain, app: "org.example.app")
        #expect(!confirmed)
        #expect(said.contains(why), "\(said)")
    }
}
