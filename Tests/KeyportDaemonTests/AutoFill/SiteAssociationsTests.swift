import Foundation
import KeyportDaemon
import KeyportDomains
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

    /// A reader whose fetch is counted and waits until `open` is set, answering a file that
    /// lists `https://shop.example`.
    private final class HeldFetch: @unchecked Sendable {
        private let lock = NSLock()
        private var urls: [String] = []
        private var open = false

        var fetched: [String] { lock.withLock { urls } }
        func release() { lock.withLock { open = true } }

        func fetch(_ url: String) async throws -> SiteAssociations.Document {
            lock.withLock { urls.append(url) }
            while !lock.withLock({ open }) { try await Task.sleep(for: .milliseconds(5)) }
            return SiteAssociations.Document(
                contentType: "application/json",
                body: Array(#"{"origins":["https://shop.example"]}"#.utf8)
            )
        }
    }

    @Test("a page naming relying party after relying party has a few files fetched, not one for each")
    func relatedOriginsBudget() async throws {
        let held = HeldFetch()
        held.release()
        let reader = SiteAssociations(fetch: { try await held.fetch($0) })
        let list = PublicSuffixList.bundled
        let probe = try #require(ServiceOrigin("https://a.probe.example"))
        var answers: [String] = []
        for index in 0..<(SiteAssociations.relyingPartiesPerSite + 2) {
            answers.append(await reader.relatedOrigins(of: "host\(index).example", admit: probe, in: list).why)
        }
        #expect(held.fetched.count == SiteAssociations.relyingPartiesPerSite, "\(held.fetched)")
        #expect(
            answers.suffix(2).allSatisfy { $0.contains("asked about too many other relying parties") },
            "\(answers)"
        )
        // Another host of the same site shares the budget; a file read before is kept, whoever asks.
        let sibling = try #require(ServiceOrigin("https://b.probe.example"))
        #expect(await reader.relatedOrigins(of: "host9.example", admit: sibling, in: list).why.contains("too many"))
        _ = await reader.relatedOrigins(of: "host0.example", admit: sibling, in: list)
        #expect(held.fetched.count == SiteAssociations.relyingPartiesPerSite)
        // The related origin the files list is admitted, by any site.
        let shop = try #require(ServiceOrigin("https://shop.example"))
        #expect(await reader.relatedOrigins(of: "host0.example", admit: shop, in: list).admitted)
    }

    @Test("past the fetches that may run at once a caller is refused at once, and the refusal is not kept")
    func runningCap() async throws {
        let held = HeldFetch()
        let reader = SiteAssociations(fetch: { try await held.fetch($0) })
        let waiting = Task {
            await withTaskGroup(of: Bool.self) { group in
                for index in 0..<SiteAssociations.maximumRunning {
                    group.addTask {
                        await reader.confirm(domain: "site\(index).example", app: "org.example.app").confirmed
                    }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
        }
        while held.fetched.count < SiteAssociations.maximumRunning { try await Task.sleep(for: .milliseconds(5)) }
        let refused = await reader.confirm(domain: "one-more.example", app: "org.example.app")
        #expect(!refused.confirmed && refused.why.contains("try again in a moment"), "\(refused.why)")
        // Pages' related-origins reads have slots of their own: they neither wait for the apps'
        // nor crowd them out.
        let page = try #require(ServiceOrigin("https://shop.example"))
        let related = Task { await reader.relatedOrigins(of: "rp.example", admit: page, in: PublicSuffixList.bundled) }
        while !held.fetched.contains("https://rp.example/.well-known/webauthn") {
            try await Task.sleep(for: .milliseconds(5))
        }
        held.release()
        _ = await waiting.value
        #expect(await related.value.admitted)
        // Not kept: asked again, the file is fetched.
        _ = await reader.confirm(domain: "one-more.example", app: "org.example.app")
        #expect(held.fetched.contains("https://one-more.example/.well-known/apple-app-site-association"))
    }
}
