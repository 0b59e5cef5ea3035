import CredentialExchangeFormat
import Foundation
import KeyportEncoding

extension ASImportableCredential {
    /// A time-based one-time-code (TOTP, RFC 6238) secret with its parameters.
    ///
    /// The secret is the raw key bytes; in CXF JSON it is Base32 text (read leniently: lowercase,
    /// spaces, hyphens and padding are accepted). In JSON `userName` is the member `username`.
    public struct TOTP: Codable, Hashable, Sendable {
        /// The shared secret, as bytes.
        public var secret: Data
        /// How long a code is valid, in seconds (usually 30).
        public var period: UInt16
        /// How many digits a code has (usually 6).
        public var digits: UInt16
        /// The account the codes are for.
        public var userName: String?
        /// The hash function of the HMAC.
        public var algorithm: ASImportableCredential.TOTP.Algorithm
        /// The service that issued the secret.
        public var issuer: String?

        /// Creates a TOTP credential.
        public init(
            secret: Data,
            period: UInt16,
            digits: UInt16,
            userName: String?,
            algorithm: ASImportableCredential.TOTP.Algorithm,
            issuer: String? = nil
        ) {
            self.secret = secret
            self.period = period
            self.digits = digits
            self.userName = userName
            self.algorithm = algorithm
            self.issuer = issuer
        }

        /// The hash function of a TOTP's HMAC.
        public enum Algorithm: String, Codable, Hashable, Sendable {
            /// HMAC-SHA-1, the usual one.
            case sha1
            /// HMAC-SHA-256.
            case sha256
            /// HMAC-SHA-512.
            case sha512
        }
    }
}

extension CXFImporter {
    mutating func totp(_ totp: CXF.TOTP) -> ASImportableCredential.TOTP? {
        guard let secret = try? Base32.decode(totp.secret) else {
            at("secret") { $0.omit("the TOTP secret is not Base32; the credential is left out") }
            return nil
        }
        guard let period = UInt16(exactly: totp.period) else {
            at("period") { $0.omit("the TOTP period \(totp.period) does not fit UInt16; the credential is left out") }
            return nil
        }
        guard let digits = UInt16(exactly: totp.digits) else {
            at("digits") { $0.omit("the TOTP digits \(totp.digits) do not fit UInt16; the credential is left out") }
            return nil
        }
        unknown(totp.unknownMembers, in: "ASImportableCredential.TOTP")
        return ASImportableCredential.TOTP(
            secret: Data(secret),
            period: period,
            digits: digits,
            userName: totp.username,
            algorithm: ASImportableCredential.TOTP.Algorithm(totp.algorithm),
            issuer: totp.issuer
        )
    }
}

extension ASImportableCredential.TOTP.Algorithm {
    init(_ algorithm: CXF.TOTP.Algorithm) {
        switch algorithm {
        case .sha1: self = .sha1
        case .sha256: self = .sha256
        case .sha512: self = .sha512
        }
    }
}

// MARK: - AS → CXF

extension CXF.TOTP {
    /// The secret becomes uppercase Base32 without padding.
    init(_ c: ASImportableCredential.TOTP) {
        let algorithm: CXF.TOTP.Algorithm =
            switch c.algorithm {
            case .sha1: .sha1
            case .sha256: .sha256
            case .sha512: .sha512
            }
        self.init(
            secret: Base32.encode(c.secret),
            period: UInt32(c.period),
            digits: UInt32(c.digits),
            username: c.userName,
            algorithm: algorithm,
            issuer: c.issuer
        )
    }
}
