import KeyportDomainsCore
import KeyportEncoding

/// WebAuthn's rules for who may use a relying party id (§5.1.3 step 8, §5.1.4 step 7, and
/// "Related Origin Requests", §5.11): the client's checks. keyportd makes the origin and suffix
/// checks for every caller before a provider hears of the request, and for a web page whose
/// origin the relying party id does not cover, fetches the relying party's list of related
/// origins for ``relatedOriginsAdmit(_:document:in:)``.
package enum RelyingPartyID {
    /// Reads the caller's origin as a browser serializes it (`https://login.example.com`,
    /// `http://localhost:8080`): a secure context only — `https`, or `http` on `localhost` — on a
    /// domain (WebAuthn refuses an IP address: it has no effective domain), written exactly as
    /// the serialization writes it, so that what `clientDataJSON` says is what was checked.
    package static func origin(_ text: String) throws(WebAuthnError) -> ServiceOrigin {
        guard case .success(let origin) = ServiceOrigin.parse(text), origin.description == text else {
            throw WebAuthnError(
                .security,
                "\"\(DisplayText.escaping(text))\" is not a web origin as a browser writes one (https://host[:port])"
            )
        }
        guard case .domain = origin.host else {
            throw WebAuthnError(.security, "\(text) is an IP address, which has no domain for a passkey")
        }
        guard origin.scheme == "https" || (origin.scheme == "http" && origin.host.isLocalhost) else {
            throw WebAuthnError(
                .security,
                "\(text) is not a secure origin: passkeys are for https (and localhost) only"
            )
        }
        return origin
    }

    /// The relying party id a request without one uses: the origin's effective domain, its host.
    package static func `default`(for origin: ServiceOrigin) -> String { origin.host.description }

    /// Whether `rpID` may be used from `origin` by HTML's rule, "is a registrable domain suffix of
    /// or is equal to": the origin's host itself, or a suffix of it at a label boundary that is
    /// not a public suffix (`example.com` for `login.example.com`; never `com`, `co.uk` or
    /// `github.io`). The id must be written as a host is (lowercase, IDNA's ASCII form).
    package static func isValid(_ rpID: String, for origin: ServiceOrigin, in list: PublicSuffixList) -> Bool {
        guard let host = ServiceHost(rpID), case .domain(let name) = host, name == rpID else { return false }
        guard case .domain(let originName) = origin.host else { return false }
        if name == originName { return true }
        guard originName.hasSuffix("." + name) else { return false }
        return list.registrableDomain(of: host) != nil
    }

    /// Related Origin Requests (§5.11.1): whether the relying party's list of origins,
    /// `https://RPID/.well-known/webauthn` (`{"origins": ["https://…", …]}`, fetched by the
    /// caller), admits `origin`. Origins are read in order, counting the distinct registrable
    /// labels they name (`example` for `example.co.uk`); once five are seen, origins under a sixth
    /// are passed over, so a list cannot stretch one id over every site.
    package static func relatedOriginsAdmit(
        _ origin: ServiceOrigin,
        document: [UInt8],
        in list: PublicSuffixList
    ) throws(WebAuthnError) -> Bool {
        let origins = try Self.origins(in: document)
        var labels: Set<String> = []
        for text in origins {
            guard let listed = ServiceOrigin(text), text.contains("://"), case .domain = listed.host,
                let registrable = list.registrableDomain(of: listed.host),
                let label = registrable.split(separator: ".").first.map(String.init), !label.isEmpty
            else { continue }
            if labels.count >= maximumLabels && !labels.contains(label) { continue }
            if listed == origin { return true }
            labels.insert(label)
        }
        return false
    }

    /// The most registrable labels a related-origins list may name (WebAuthn's suggested value).
    package static let maximumLabels = 5

    /// The strings of the document's `origins` array.
    private static func origins(in document: [UInt8]) throws(WebAuthnError) -> [String] {
        func refuse(_ why: String) -> WebAuthnError {
            WebAuthnError(.security, "the relying party's /.well-known/webauthn \(why)")
        }
        let origins: [String]?
        do throws(JSONReadFailure) {
            origins = try document.withUnsafeBufferPointer { buffer throws(JSONReadFailure) -> [String]? in
                guard let base = buffer.baseAddress else { return nil }
                var reader = JSONReader(base: base, count: buffer.count, maxDepth: 8)
                reader.skipWhitespace()
                guard reader.kind == .object else { return nil }
                try reader.enterObject()
                var origins: [String]?
                var first = true
                while try reader.nextKey(&first) {
                    guard reader.keyIs("origins"), reader.kind == .array else {
                        try reader.skipValue()
                        continue
                    }
                    try reader.enterArray()
                    var strings: [String] = []
                    var firstElement = true
                    while try reader.nextElement(&firstElement) {
                        guard reader.kind == .string else { return nil }
                        var invalid = false
                        strings.append(try reader.string(try reader.scanString(), invalidUTF8: &invalid))
                    }
                    origins = strings
                }
                reader.skipWhitespace()
                guard reader.pos == reader.count else { throw reader.syntax("text follows the object") }
                return origins
            }
        } catch {
            throw refuse("is not JSON: \(error)")
        }
        guard let origins else { throw refuse("is not an object with an array of strings named \"origins\"") }
        return origins
    }
}
