import Foundation
import KeyportEncoding

/// An `otpauth://` URI (Google's Key URI format, as authenticator apps read it), parsed and written.
///
/// Read leniently, as people's URIs come: the type and algorithm in any case, the label's colon as
/// `:` or `%3A`, spaces as `%20`, Base32 secrets in any case and with or without padding, Steam as
/// `encoder=steam`, `otpauth://steam/…` or `steam://SECRET`. Parameters this type does not know
/// (`image=`, …) are kept, in order, and written back.
///
/// **Issuer rule.** The `issuer` parameter wins over the label's prefix: it is the field Google's
/// format says apps should rely on, and the label is display text people edit. The prefix is used
/// only when there is no parameter. When they differ, ``labelIssuer`` keeps the prefix so the URI
/// can be written back as it was.
public struct OTPAuthURI: Equatable, Sendable {
    /// Whether codes follow the time or a counter.
    public enum Kind: Hashable, Sendable {
        /// Time-based: one code per `period` seconds.
        case totp(period: Int64)
        /// Counter-based: the next code is for `counter`.
        case hotp(counter: UInt64)
    }

    /// A query parameter this type does not interpret, kept as it came (decoded).
    public struct Parameter: Hashable, Sendable {
        /// The parameter's name, percent-decoded.
        public var name: String
        /// The parameter's value, percent-decoded.
        public var value: String

        /// A parameter named `name` with value `value`.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// TOTP with its period, or HOTP with its counter (the URI's type, `period` and `counter`).
    public var kind: Kind
    /// The shared secret (`secret`, Base32 in the URI).
    public var secret: OTPSecret
    /// Who issued the account (the `issuer` parameter, else the label's prefix).
    public var issuer: String?
    /// The account name (the label after the issuer prefix); may be empty.
    public var account: String
    /// The hash function (`algorithm`; SHA1 when absent).
    public var algorithm: OTPAlgorithm
    /// Decimal digits, or Steam's five characters.
    public var format: OTPGenerator.Format
    /// The label's own issuer prefix when it differs from the `issuer` parameter.
    public var labelIssuer: String?
    /// Query parameters this type does not interpret (`image`, …), in order; ``uriString`` writes them back.
    public var otherParameters: [Parameter]

    /// An account; the defaults are the format's (TOTP every 30 seconds, SHA-1, 6 digits).
    public init(
        kind: Kind = .totp(period: 30),
        secret: OTPSecret,
        issuer: String? = nil,
        account: String = "",
        algorithm: OTPAlgorithm = .sha1,
        format: OTPGenerator.Format = .decimal(digits: 6),
        otherParameters: [Parameter] = []
    ) {
        self.kind = kind
        self.secret = secret
        self.issuer = issuer
        self.account = account
        self.algorithm = algorithm
        self.format = format
        self.otherParameters = otherParameters
    }

    /// Parses `text`; the error names the part that is wrong.
    public init(parsing text: String) throws(OTPError) {
        let trimmed = text.trimmingWhitespace()
        let lower = trimmed.lowercased()
        if lower.hasPrefix("steam://") {
            secret = try OTPSecret(base32: String(trimmed.dropFirst("steam://".count)))
            kind = .totp(period: 30)
            issuer = "Steam"
            account = ""
            algorithm = .sha1
            format = .steam
            otherParameters = []
            return
        }
        guard lower.hasPrefix("otpauth://") else {
            throw OTPError(.invalidURI, "the URI must start with otpauth:// (or steam://)")
        }
        let rest = trimmed.dropFirst("otpauth://".count)
        guard let slash = rest.firstIndex(of: "/") else {
            throw OTPError(.invalidURI, "the URI has no label: expected otpauth://totp/LABEL?secret=…")
        }
        let type = rest[..<slash].lowercased()
        let afterType = rest[rest.index(after: slash)...]
        let query = afterType.firstIndex(of: "?")
        let rawLabel = query.map { afterType[..<$0] } ?? afterType
        guard let label = PercentEncoding.unescape(rawLabel) else {
            throw OTPError(.invalidURI, "the label has a broken percent escape")
        }

        // Each with its name in lowercase once, for the look-ups below.
        var parameters: [(key: String, name: String, value: String)] = []
        if let query {
            for pair in afterType[afterType.index(after: query)...].split(
                separator: "&",
                omittingEmptySubsequences: true
            ) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let name = PercentEncoding.unescape(parts[0]),
                    let value = PercentEncoding.unescape(parts.count > 1 ? parts[1] : "")
                else {
                    throw OTPError(.invalidURI, "the parameter '\(parts[0])' has a broken percent escape")
                }
                parameters.append((name.lowercased(), name, value))
            }
        }
        // A parameter this type reads may come twice only with the same value: which of two
        // different ones counts is a guess readers make differently (values are not quoted: one
        // may be the secret).
        func take(_ name: String) throws(OTPError) -> String? {
            let matches = parameters.indices.filter { parameters[$0].key == name }
            guard let first = matches.first else { return nil }
            let value = parameters[first].value
            guard matches.allSatisfy({ parameters[$0].value == value }) else {
                throw OTPError(
                    .invalidParameter,
                    "the parameter '\(name)' is given more than once, with different values"
                )
            }
            parameters.removeAll { $0.key == name }
            return value
        }

        guard let secretText = try take("secret") else {
            throw OTPError(.invalidSecret, "the URI has no secret parameter")
        }
        secret = try OTPSecret(base32: secretText)

        if let name = try take("algorithm") {
            guard let algorithm = OTPAlgorithm(name: name) else {
                throw OTPError(.unsupported, "the algorithm '\(name)' is not supported (SHA1, SHA256 or SHA512)")
            }
            self.algorithm = algorithm
        } else {
            algorithm = .sha1
        }

        let encoder = try take("encoder")?.lowercased()
        let digitsText = try take("digits")
        let periodText = try take("period")
        let counterText = try take("counter")
        switch type {
        case "totp", "steam":
            var period: Int64 = 30
            if let periodText {
                guard let value = Int64(periodText), value > 0 else {
                    throw OTPError(.invalidParameter, "the period '\(periodText)' is not a positive number of seconds")
                }
                period = value
            }
            kind = .totp(period: period)
        case "hotp":
            guard let counterText else { throw OTPError(.invalidParameter, "an hotp URI needs a counter parameter") }
            guard let counter = UInt64(counterText) else {
                throw OTPError(.invalidParameter, "the counter '\(counterText)' is not a whole number from 0")
            }
            kind = .hotp(counter: counter)
        default:
            throw OTPError(.invalidURI, "the type '\(type)' is not totp, hotp or steam")
        }

        if type == "steam", let encoder, encoder != "steam" {
            throw OTPError(.unsupported, "a steam URI cannot use the encoder '\(encoder)'")
        }
        if type == "steam" || encoder == "steam" {
            format = .steam
        } else {
            var digits = 6
            if let digitsText {
                guard let value = Int(digitsText), OTPGenerator.digitRange.contains(value) else {
                    throw OTPError(.invalidParameter, "digits must be 6 to 10, not '\(digitsText)'")
                }
                digits = value
            }
            format = .decimal(digits: digits)
        }
        if let encoder, encoder != "steam" {
            parameters.append(("encoder", "encoder", encoder))
        }

        // Label: "issuer:account", the colon possibly escaped; spaces after it are decoration.
        let issuerParameter = try take("issuer")
        var prefix: String? = nil
        if let colon = label.firstIndex(of: ":") {
            // An empty prefix (":account") only protects the account's own colon: no issuer.
            prefix = colon == label.startIndex ? nil : String(label[..<colon])
            account = label[label.index(after: colon)...].trimmingWhitespace(newlines: false)
        } else {
            account = label
        }
        issuer = issuerParameter ?? prefix
        if let issuerParameter, let prefix, prefix != issuerParameter { labelIssuer = prefix }
        otherParameters = parameters.map { Parameter(name: $0.name, value: $0.value) }
    }

    /// The URI text. It contains the secret.
    public var uriString: String {
        var out = "otpauth://"
        switch kind {
        case .totp: out += "totp/"
        case .hotp: out += "hotp/"
        }
        if let prefix = Self.labelPrefix(labelIssuer ?? issuer, account: account) {
            out += Self.escape(prefix) + ":"
        }
        out += Self.escape(account)
        out += "?secret=" + secret.base32EncodedSecret()
        if let issuer { out += "&issuer=" + Self.escape(issuer) }
        out += "&algorithm=" + algorithm.uriName
        switch format {
        case .decimal(let digits): out += "&digits=\(digits)"
        case .steam: out += "&encoder=steam"
        }
        switch kind {
        case .totp(let period): out += "&period=\(period)"
        case .hotp(let counter): out += "&counter=\(counter)"
        }
        for parameter in otherParameters {
            out += "&" + Self.escape(parameter.name) + "=" + Self.escape(parameter.value)
        }
        return out
    }

    /// The generator for this account's codes.
    public func generator() throws(OTPError) -> OTPGenerator {
        try OTPGenerator(secret: secret, algorithm: algorithm, format: format)
    }

    /// The code for Unix time `time` (TOTP) or for the URI's counter (HOTP).
    public func code(at time: Int64) throws(OTPError) -> String {
        switch kind {
        case .totp(let period):
            try TOTP(secret: secret, algorithm: algorithm, format: format, period: period).code(at: time)
        case .hotp(let counter):
            try generator().code(counter: counter)
        }
    }

    static func escape(_ text: String) -> String { PercentEncoding.escape(text) }

    /// The issuer prefix to write before `account` in a label ("issuer:account"), so that reading
    /// the label splits it back the same way: the first colon separates the prefix, and spaces
    /// around the account after it are decoration. So there is no prefix when the account has
    /// spaces at its ends (only a label without a colon gives one) or the prefix has a colon of
    /// its own (the issuer is then given elsewhere), and an account with a colon of its own gets
    /// at least an empty prefix. Used for `otpauth://` labels and migration entries alike.
    static func labelPrefix(_ prefix: String?, account: String) -> String? {
        let padded = account != account.trimmingWhitespace(newlines: false)
        if let prefix, !prefix.isEmpty, !padded, !prefix.contains(":") { return prefix }
        return account.contains(":") ? "" : nil
    }
}

extension OTPAuthURI: CustomStringConvertible {
    /// Everything but the secret; the issuer and account escaped for a terminal (control characters
    /// and bidirectional marks written as `\u{1B}`).
    public var description: String {
        let issuer = issuer.map { DisplayText.escaping($0) } ?? "none"
        var parts = [
            "issuer: \(issuer)", "account: \(DisplayText.escaping(account))", algorithm.uriName, format.description,
        ]
        switch kind {
        case .totp(let period): parts.append("period \(period) s")
        case .hotp(let counter): parts.append("counter \(counter)")
        }
        return "OTPAuthURI(\(parts.joined(separator: ", ")), secret: ‹redacted›)"
    }
}
