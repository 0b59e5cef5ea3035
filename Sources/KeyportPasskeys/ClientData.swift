import Crypto
import KeyportEncoding

/// WebAuthn's collected client data (§5.8.1): what the client — keyportd, for every provider —
/// says it asked for, whose hash the authenticator signs.
///
/// Its JSON is written as browsers write it (§5.8.1.1, "limited verification"): `type`,
/// `challenge` (base64url without padding), `origin`, `crossOrigin`, then `topOrigin` only for a
/// cross-origin call; strings escaped as JSON requires, nothing else. Relying parties parse it;
/// the order is kept for those that match a template anyway.
package struct CollectedClientData: Hashable, Sendable {
    /// Which ceremony.
    package enum Ceremony: String, Sendable {
        /// A registration (`navigator.credentials.create`).
        case create = "webauthn.create"
        /// An assertion (`navigator.credentials.get`).
        case get = "webauthn.get"
    }

    /// Which ceremony.
    package var ceremony: Ceremony
    /// The relying party's challenge, as it sent it.
    package var challenge: [UInt8]
    /// The caller's origin, serialized (`https://login.example.com`).
    package var origin: String
    /// The top-level origin when the call comes from a frame of another origin; `nil` otherwise.
    package var topOrigin: String?

    /// The client data of a `ceremony` for `origin` (inside a frame of `topOrigin`'s page, when
    /// that is another origin).
    package init(_ ceremony: Ceremony, challenge: [UInt8], origin: String, topOrigin: String? = nil) {
        self.ceremony = ceremony
        self.challenge = challenge
        self.origin = origin
        self.topOrigin = topOrigin
    }

    /// `clientDataJSON`.
    package var json: [UInt8] {
        var out = Array(#"{"type":""#.utf8)
        out += ceremony.rawValue.utf8
        out += #"","challenge":""#.utf8
        out += Base64URL.encode(challenge).utf8
        out += #"","origin":"#.utf8
        JSONString.append(origin, to: &out)
        out += #","crossOrigin":"#.utf8
        if let topOrigin {
            out += #"true,"topOrigin":"#.utf8
            JSONString.append(topOrigin, to: &out)
        } else {
            out += "false".utf8
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// SHA-256 of ``json``: all an authenticator is given of it.
    package var hash: [UInt8] { Array(SHA256.hash(data: json)) }
}
