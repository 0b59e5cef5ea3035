import AsyncHTTPClient
import Foundation
import KeyportDomainsCore
import KeyportEncoding
import KeyportPasskeys
import NIOCore
import NIOSSL
import Varlink

/// What web sites say about who may use their passkeys, read from their well-known files:
/// whether a site confirms that an app may, as Apple's platforms confirm an app's Associated
/// Domains (the site's `https://DOMAIN/.well-known/apple-app-site-association` names the app's id
/// among `webcredentials.apps`), and whether a relying party lists an origin among its related
/// origins (WebAuthn's Related Origin Requests, `https://RPID/.well-known/webauthn`;
/// docs/protocol.md, "Passkeys").
///
/// A caller only claims; the site decides. A file is fetched over https with the system's trust
/// roots (`SSL_CERT_FILE`, OpenSSL's variable, names another bundle; read once), no redirect
/// followed, at most 128 KiB, all of it within 10 seconds; callers asking for the same file at
/// once share one fetch. A file is kept for ten minutes whoever asks about it (a site that just
/// published a change waits that long), a failure to read it for a minute.
///
/// A web page chooses the relying party ids it names, so it could have keyportd fetch files from
/// any host it likes (to time the answers, as a probe of the person's network) or tie up its
/// connections. So a site (the registrable domain of the asking origin) has other relying
/// parties' files fetched for it at most ``relyingPartiesPerSite`` times in ten minutes; at most
/// ``maximumRunning`` related-origins fetches run at once (a caller beyond that is refused at
/// once, and that refusal is not kept), apart from the apps' confirmations, which pages cannot
/// crowd out; and at most ``maximumKept`` files are kept, the oldest going first.
package actor SiteAssociations {
    /// How many fetches of each kind (apps' confirmations, related origins) may run at once.
    package static let maximumRunning = 8
    /// How many other relying parties' files one site may have fetched in ten minutes.
    package static let relyingPartiesPerSite = 4
    /// How many files are kept at the most.
    static let maximumKept = 1024

    /// A fetched file: its media type, as the `Content-Type` header names it, and its body.
    package struct Document: Sendable {
        package var contentType: String?
        package var body: [UInt8]

        package init(contentType: String?, body: [UInt8]) {
            self.contentType = contentType
            self.body = body
        }
    }

    /// Fetches an https URL; throws what went wrong, for the person's message.
    package typealias Fetch = @Sendable (String) async throws -> Document

    /// What a file is read for: each kind has fetch slots of its own.
    private enum Purpose {
        case app, relatedOrigins
    }

    private let fetch: Fetch
    /// Files read, or failed, by URL, and until when they are kept.
    private var files: [String: (result: Result<Document, AssociationFetchError>, until: ContinuousClock.Instant)] = [:]
    /// The fetches running, by URL.
    private var running: [String: Task<Result<Document, AssociationFetchError>, Never>] = [:]
    /// How many fetches of each kind are running.
    private var runningCount: [Purpose: Int] = [:]
    /// The related-origins files fetched for each asking site, and until when they count.
    private var fetchedFor: [String: [(url: String, until: ContinuousClock.Instant)]] = [:]

    /// Associations read with `fetch` (by default over https, as described above).
    package init(fetch: @escaping Fetch = SiteAssociations.https) {
        self.fetch = fetch
    }

    /// Whether `domain` (a host, with `:port` when not 443) confirms the app `app`; when not, why,
    /// for the caller's message.
    package func confirm(domain: String, app: String) async -> (confirmed: Bool, why: String) {
        let url = "https://\(domain)/.well-known/apple-app-site-association"
        return await decide(url, for: .app) { document in
            Self.lists(app: app, in: document.body)
                ? (true, "\(url) names \(app)")
                : (false, "\(url) does not name \(app) among its webcredentials apps")
        }
    }

    /// Whether the relying party `rpID` (a registrable domain, checked by the caller) lists
    /// `origin` among its related origins: its `https://RPID/.well-known/webauthn`, served as
    /// `application/json`, admits it by WebAuthn's rule (``RelyingPartyID/relatedOriginsAdmit(_:document:in:)``).
    /// An origin's site may have ``relyingPartiesPerSite`` files fetched in ten minutes; one it
    /// has had fetched, or one kept, costs nothing more.
    package func relatedOrigins(
        of rpID: String,
        admit origin: ServiceOrigin,
        in list: PublicSuffixList
    ) async -> (admitted: Bool, why: String) {
        let url = "https://\(rpID)/.well-known/webauthn"
        let now = ContinuousClock.now
        if files[url].map({ $0.until <= now }) ?? true {
            let site = origin.site(in: list)
            var fetched = (fetchedFor[site] ?? []).filter { $0.until > now }
            if !fetched.contains(where: { $0.url == url }) {
                guard fetched.count < Self.relyingPartiesPerSite else {
                    return (false, "\(site) asked about too many other relying parties in ten minutes")
                }
                fetched.append((url, now + .seconds(600)))
            }
            fetchedFor = fetchedFor.filter { $0.value.contains { $0.until > now } }
            fetchedFor[site] = fetched
        }
        let (admitted, why) = await decide(url, for: .relatedOrigins) { document in
            let type = document.contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
            guard type?.lowercased() == "application/json" else {
                return (false, "\(url) is served as \(document.contentType ?? "nothing"), not application/json")
            }
            do throws(WebAuthnError) {
                return try RelyingPartyID.relatedOriginsAdmit(origin, document: document.body, in: list)
                    ? (true, "\(url) lists \(origin)")
                    : (false, "\(url) does not list \(origin) among its related origins")
            } catch {
                return (false, error.message)
            }
        }
        return (admitted, why)
    }

    /// What `judge` says of the file at `url`, fetched for `purpose` unless it is kept.
    private func decide(
        _ url: String,
        for purpose: Purpose,
        judge: (Document) -> (Bool, String)
    ) async -> (confirmed: Bool, why: String) {
        let now = ContinuousClock.now
        let result: Result<Document, AssociationFetchError>
        if let kept = files[url], kept.until > now {
            result = kept.result
        } else {
            result = await document(at: url, for: purpose)
        }
        switch result {
        case .success(let document): return judge(document)
        case .failure(let error) where error.busy: return (false, error.description)
        case .failure(let error): return (false, "\(url) could not be read (\(error))")
        }
    }

    /// The file at `url`, fetched once for every caller that asks while it is on its way, then
    /// kept.
    private func document(at url: String, for purpose: Purpose) async -> Result<Document, AssociationFetchError> {
        if let fetching = running[url] { return await fetching.value }
        guard runningCount[purpose, default: 0] < Self.maximumRunning else {
            return .failure(
                AssociationFetchError(
                    description:
                        "keyportd is reading \(Self.maximumRunning) sites' files already; try again in a moment",
                    busy: true
                )
            )
        }
        let fetch = self.fetch
        let fetching = Task { () -> Result<Document, AssociationFetchError> in
            do {
                return .success(try await fetch(url))
            } catch let error as AssociationFetchError {
                return .failure(error)
            } catch {
                return .failure(AssociationFetchError(description: "\(error)"))
            }
        }
        running[url] = fetching
        runningCount[purpose, default: 0] += 1
        let result = await fetching.value
        running[url] = nil
        runningCount[purpose, default: 1] -= 1
        keep(result, of: url)
        return result
    }

    /// Keeps a file ten minutes, a failure one; past ``maximumKept`` files, the oldest go.
    private func keep(_ result: Result<Document, AssociationFetchError>, of url: String) {
        let now = ContinuousClock.now
        if files.count >= Self.maximumKept {
            files = files.filter { $0.value.until > now }
            if files.count >= Self.maximumKept {
                let oldest = files.sorted { $0.value.until < $1.value.until }.prefix(Self.maximumKept / 4)
                for (url, _) in oldest { files[url] = nil }
            }
        }
        let kept: Duration
        switch result {
        case .success: kept = .seconds(600)
        case .failure: kept = .seconds(60)
        }
        files[url] = (result, now + kept)
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

    /// An https GET, as described on the type, trusting the system's roots or `SSL_CERT_FILE`'s
    /// bundle (read once, when first used).
    package static let https: Fetch = https(trusting: ProcessInfo.processInfo.environment["SSL_CERT_FILE"])

    /// An https GET, as described on the type, trusting the PEM bundle `bundle` (read now), or the
    /// system's roots when there is none or it holds no certificate.
    package static func https(trusting bundle: String?) -> Fetch {
        let trustRoots: NIOSSLTrustRoots
        if let bundle, !bundle.isEmpty, let certificates = try? NIOSSLCertificate.fromPEMFile(bundle),
            !certificates.isEmpty
        {
            trustRoots = .certificates(certificates)
        } else {
            trustRoots = .default
        }
        return { url in try await get(url, trustRoots: trustRoots) }
    }

    /// The whole of an https GET of `url`, body included, within 10 seconds.
    private static func get(_ url: String, trustRoots: NIOSSLTrustRoots) async throws -> Document {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = trustRoots
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls,
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(10), read: .seconds(10))
        )
        // One file, once: a site that cannot be reached (no such name, a refused connection, a
        // certificate not trusted) is said at once, not retried until the time is up.
        configuration.connectionPool.retryConnectionEstablishment = false
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let document = try await withThrowingTaskGroup(of: Document.self) { group in
                group.addTask {
                    var request = HTTPClientRequest(url: url)
                    request.headers.add(name: "Accept", value: "application/json")
                    let response = try await client.execute(request, timeout: .seconds(10))
                    guard response.status == .ok else {
                        throw AssociationFetchError(description: "the site answered \(response.status.code)")
                    }
                    let body: ByteBuffer
                    do {
                        body = try await response.body.collect(upTo: 128 * 1024)
                    } catch is NIOTooManyBytesError {
                        throw AssociationFetchError(description: "the file is larger than 128 KiB")
                    }
                    return Document(
                        contentType: response.headers.first(name: "Content-Type"),
                        body: Array(buffer: body)
                    )
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(10))
                    throw AssociationFetchError(description: "the site did not send it all within 10 seconds")
                }
                defer { group.cancelAll() }
                guard let first = try await group.next() else {
                    throw AssociationFetchError(description: "nothing was fetched")
                }
                return first
            }
            try await client.shutdown()
            return document
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}

/// Why a site's association file could not be read.
struct AssociationFetchError: Error, CustomStringConvertible {
    var description: String
    /// Not the site's fault: keyportd was reading as many files as it may at once.
    var busy = false
}
