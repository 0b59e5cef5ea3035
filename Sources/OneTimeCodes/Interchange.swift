import CredentialExchangeFormat
import Foundation
import KeyportEncoding

// KeePassXC entry attributes and CXF `totp` credentials, both ways.

extension OTPAuthURI {
    /// Reads a KeePassXC entry's one-time-code attributes: `otp` (an `otpauth://` URI, or the
    /// KeeOtp form `key=…&step=…&size=…&otpHashMode=…`), else the legacy pair `TOTP Seed` and
    /// `TOTP Settings` (`"30;6"`, `"30;8"`, or `"30;S"` for Steam).
    public init(keePassXCAttributes attributes: [String: String]) throws(OTPError) {
        if let otp = attributes["otp"]?.trimmingWhitespace(), !otp.isEmpty {
            if otp.lowercased().hasPrefix("otpauth://") || otp.lowercased().hasPrefix("steam://") {
                try self.init(parsing: otp)
                return
            }
            var fields: [String: String] = [:]
            for pair in otp.split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, let value = PercentEncoding.unescape(parts[1]) else {
                    throw OTPError(
                        .invalidURI,
                        "the otp attribute is neither an otpauth:// URI nor key=…&step=…&size=…"
                    )
                }
                fields[String(parts[0]).lowercased()] = value
            }
            guard let key = fields["key"] else { throw OTPError(.invalidSecret, "the otp attribute has no key") }
            var query = "secret=\(OTPAuthURI.escape(key))"
            if let step = fields["step"] { query += "&period=\(OTPAuthURI.escape(step))" }
            if let size = fields["size"] { query += "&digits=\(OTPAuthURI.escape(size))" }
            if let mode = fields["otphashmode"] { query += "&algorithm=\(OTPAuthURI.escape(mode))" }
            if fields["encoder"]?.lowercased() == "steam" { query += "&encoder=steam" }
            try self.init(parsing: "otpauth://totp/?" + query)
            return
        }
        guard let seed = attributes["TOTP Seed"] else {
            throw OTPError(.invalidSecret, "the entry has neither an otp attribute nor a TOTP Seed")
        }
        var period: Int64 = 30
        var format = OTPGenerator.Format.decimal(digits: 6)
        if let settings = attributes["TOTP Settings"] {
            let parts = settings.split(separator: ";").map { $0.trimmingWhitespace(newlines: false) }
            guard parts.count == 2, let p = Int64(parts[0]), p > 0 else {
                throw OTPError(
                    .invalidParameter,
                    "TOTP Settings must be \"period;digits\" (like 30;6 or 30;S), not \"\(settings)\""
                )
            }
            period = p
            if parts[1].uppercased() == "S" {
                format = .steam
            } else if let digits = Int(parts[1]), OTPGenerator.digitRange.contains(digits) {
                format = .decimal(digits: digits)
            } else {
                throw OTPError(.invalidParameter, "TOTP Settings digits must be 6 to 10 or S, not \"\(parts[1])\"")
            }
        }
        self.init(kind: .totp(period: period), secret: try OTPSecret(base32: seed), format: format)
    }

    /// The attribute KeePassXC writes today: `otp` holding this URI.
    public var keePassXCAttributes: [String: String] { ["otp": uriString] }

    /// Reads a CXF `totp` credential.
    public init(cxf totp: CXF.TOTP) throws(OTPError) {
        guard totp.period > 0 else { throw OTPError(.invalidParameter, "the period is 0 seconds") }
        guard OTPGenerator.digitRange.contains(Int(totp.digits)) else {
            throw OTPError(.invalidParameter, "a code of \(totp.digits) digits is not possible; use 6 to 10")
        }
        let algorithm: OTPAlgorithm =
            switch totp.algorithm {
            case .sha1: .sha1
            case .sha256: .sha256
            case .sha512: .sha512
            }
        self.init(
            kind: .totp(period: Int64(totp.period)),
            secret: try OTPSecret(base32: totp.secret),
            issuer: totp.issuer,
            account: totp.username ?? "",
            algorithm: algorithm,
            format: .decimal(digits: Int(totp.digits))
        )
    }
}

extension CXF.TOTP {
    /// The CXF credential for a TOTP account. HOTP and Steam accounts have no CXF form.
    public init(_ uri: OTPAuthURI) throws(OTPError) {
        guard case .totp(let period) = uri.kind, let period32 = UInt32(exactly: period) else {
            throw OTPError(
                .unsupported,
                "CXF totp credentials hold time-based codes with a period up to \(UInt32.max) s; this account is counter-based or its period is too long"
            )
        }
        guard case .decimal(let digits) = uri.format else {
            throw OTPError(.unsupported, "CXF has no Steam Guard codes")
        }
        let algorithm: CXF.TOTP.Algorithm =
            switch uri.algorithm {
            case .sha1: .sha1
            case .sha256: .sha256
            case .sha512: .sha512
            }
        self.init(
            secret: uri.secret.base32EncodedSecret(),
            period: period32,
            digits: UInt32(digits),
            username: uri.account.isEmpty ? nil : uri.account,
            algorithm: algorithm,
            issuer: uri.issuer
        )
    }
}
