import AsyncHTTPClient
import Foundation
import KeyportEncoding
import NIOCore
import NIOSSL
import Varlink

/// Whether a web site confirms that an app may use its passkeys, as Apple's platforms confirm an
/// app's Associated Domains: the site's `https://DOMAIN/.well-known/apple-app-site-association`
/// names the app's id among `webcredentials.apps` (docs/protocol.md, "Passkeys").
///
/// An app's manifest only claims domains; the site decides. The file is fetched over https with
/// the system's trust roots (`SSL_CERT_FILE`, OpenSSL's variable, names another bundle), no
/// redirect followed, at most 128 KiB, within 10 seconds; an answer is kept for an hour, a refusal
/// for a minute, so a site that just published its file is not kept waiting.
package actor SiteAssociations {
    /// Fetches an https URL's body; throws what went wrong, for the person's message.
    package typealias Fetch = @Sendable (String) async throws -> [UInt8]

    private let fetch: Fetch
    private var known: [Key: (confirmed: Bool, why: String, until: ContinuousClock.Instant)] = [:]

    private struct Key: Hashable {
        var domain: String
        var app: String
    }

    /// Associations read with `fetch` (by default over https, as described above).
    package init(fetch: @escaping Fetch = SiteAssociations.https) {
        self.fetch = fetch
    }

    /// Whether `domain` (a host, with `:port` when not 443) confirms the app `app`; when not, why,
    /// for the caller's message.
    package func confirm(domain: String, app: String) async -> (confirmed: Bool, why: String) {
        let key = Key(domain: domain, app: app)
        let now = ContinuousClock.now
        if let kept = known[key], kept.until > now { return (kept.confirmed, kept.why) }
        let url = "https://\(domain)/.well-known/apple-app-site-association"
        let answer: (Bool, String)
        do {
            let document = try await fetch(url)
            answer =
                Self.lists(app: app, in: document)
                ? (true, "\(url) names \(app)")
                : (false, "\(url) does not name \(app) among its webcredentials apps")
        } catch {
            answer = (false, "\(url) could not be read (\(error))")
        }
        known[key] = (answer.0, answer.1, now + (answer.0 ? .seconds(3600) : .seconds(60)))
        return answer
    }

    /// Whether an apple-app-site-association document lists `app` in `webcredentials.apps`.
    /// Anything else in it is passed over; a document that is not a JSON object lists nobody.
    package static func lists(app: String, in document: [UInt8]) -> Bool {
        var cursor = JSONCursor(document)
        var found = false
        do {
            guard try cursor.peekKind() == .object else { return false }
            try cursor.forEachMember { cursor, key in
                guard key == "webcredentials", try cursor.peekKind() == .object else { return try cursor.skipValue() }
                try cursor.forEachMember { cursor, key in
                    guard key == "apps", try cursor.peekKind() == .array else { return try cursor.skipValue() }
                    try cursor.forEachElement { cursor in
                        guard try cursor.peekKind() == .string else { return try cursor.skipValue() }
                        if try cursor.string() == app { found = true }
                    }
                }
            }
            return found && cursor.isAtEnd
        } catch {
            return false
        }
    }

    /// The body of an https GET, as described on the type.
    package static let https: Fetch = { url in
        var tls = TLSConfiguration.makeClientConfiguration()
        if let bundle = ProcessInfo.processInfo.environment["SSL_CERT_FILE"], !bundle.isEmpty {
            tls.trustRoots = .file(bundle)
        }
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: HTTPClient.Configuration(
                tlsConfiguration: tls,
                redirectConfiguration: .disallow,
                timeout: .init(connect: .seconds(10), read: .seconds(10))
            )
        )
        do {
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Accept", value: "application/json")
            let response = try await client.execute(request, timeout: .seconds(10))
            guard response.status == .ok else {
                throw AssociationFetchError(description: "the site answered \(response.status.code)")
            }
            let body = try await response.body.collect(upTo: 128 * 1024)
            try await client.shutdown()
            return Array(buffer: body)
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}

/// Why a site's association file could not be read.
struct AssociationFetchError: Error, CustomStringConvertible {
    var description: String
}
