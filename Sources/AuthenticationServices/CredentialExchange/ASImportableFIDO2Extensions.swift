import CredentialExchangeFormat
import Foundation

/// The FIDO2 extension data of a passkey (CXF `fido2Extensions`). (Apple: 26.4.)
///
/// CXF also defines `credBlob` and `payments`; Apple's type, and so this one, does not hold them.
public struct ASImportableFIDO2Extensions: Codable, Hashable, Sendable {
    /// PRF extension.
    public var hmacCredentials: ASImportableFIDO2HMACCredential?
    /// Large blob extension.
    public var largeBlob: ASImportableFIDO2LargeBlob?

    /// Creates a passkey's extension data.
    public init(hmacCredentials: ASImportableFIDO2HMACCredential? = nil, largeBlob: ASImportableFIDO2LargeBlob? = nil) {
        self.hmacCredentials = hmacCredentials
        self.largeBlob = largeBlob
    }
}

/// A representation of FIDO2 HMAC credentials as defined in CXF: the secrets behind a passkey's
/// `hmac-secret` / PRF extension. (Apple: 26.4.)
///
/// In CXF JSON `credentialWithUV` and `credentialWithoutUV` are `credWithUV` and `credWithoutUV`.
public struct ASImportableFIDO2HMACCredential: Codable, Hashable, Sendable {
    /// Algorithm used to generate the shared secret from the credentials.
    public var algorithm: ASImportableFIDO2HMACCredential.Algorithm
    /// Credential to use when user verification is performed.
    public var credentialWithUV: Data
    /// Credential to use when user verification is not performed.
    public var credentialWithoutUV: Data

    /// Creates HMAC credentials.
    public init(algorithm: ASImportableFIDO2HMACCredential.Algorithm, credentialWithUV: Data, credentialWithoutUV: Data)
    {
        self.algorithm = algorithm
        self.credentialWithUV = credentialWithUV
        self.credentialWithoutUV = credentialWithoutUV
    }

    /// The algorithm of HMAC credentials; the raw value is the CXF `algorithm` string.
    ///
    /// Apple's cases are not documented. This enum has the one algorithm CTAP's `hmac-secret` uses,
    /// named as CXF names it. Being an enum it cannot keep an algorithm it does not know:
    /// `init?(rawValue:)` returns `nil` for one, and such HMAC credentials are left out when a
    /// document is read (and reported by ``ASExportedCredentialData/init(cxf:omissions:)``).
    public enum Algorithm: String, CaseIterable, Codable, Hashable, Sendable {
        /// HMAC-SHA-256 (`hmac-sha256`).
        case hmacSHA256 = "hmac-sha256"
    }
}

/// The data a passkey's `largeBlob` extension stores. (Apple: 26.4.)
public struct ASImportableFIDO2LargeBlob: Codable, Hashable, Sendable {
    /// The claimed uncompressed size of stored data.
    public var uncompressedSize: Int
    /// The large blob value, DEFLATE compressed.
    public var data: Data

    /// Creates large blob data.
    public init(uncompressedSize: Int, data: Data) {
        self.uncompressedSize = uncompressedSize
        self.data = data
    }
}

extension CXFImporter {
    mutating func fido2Extensions(_ ext: CXF.FIDO2Extensions) -> ASImportableFIDO2Extensions {
        if ext.credBlob != nil {
            at("credBlob") { $0.omit("ASImportableFIDO2Extensions has no credBlob; it is left out") }
        }
        if ext.payments != nil {
            at("payments") { $0.omit("ASImportableFIDO2Extensions has no payments flag; it is left out") }
        }
        unknown(ext.unknownMembers, in: "ASImportableFIDO2Extensions")
        return ASImportableFIDO2Extensions(
            hmacCredentials: ext.hmacCredentials.flatMap { hmac in at("hmacCredentials") { $0.hmacCredentials(hmac) } },
            largeBlob: ext.largeBlob.flatMap { blob in at("largeBlob") { $0.largeBlob(blob) } }
        )
    }

    /// HMAC credentials, or `nil` for an algorithm Apple's enum has no case for.
    mutating func hmacCredentials(_ hmac: CXF.FIDO2Extensions.HMACCredentials) -> ASImportableFIDO2HMACCredential? {
        guard let algorithm = ASImportableFIDO2HMACCredential.Algorithm(rawValue: hmac.algorithm) else {
            omit(
                "the HMAC credentials' algorithm '\(hmac.algorithm)' has no "
                    + "ASImportableFIDO2HMACCredential.Algorithm case; they are left out"
            )
            return nil
        }
        unknown(hmac.unknownMembers, in: "ASImportableFIDO2HMACCredential")
        return ASImportableFIDO2HMACCredential(
            algorithm: algorithm,
            credentialWithUV: hmac.credWithUV,
            credentialWithoutUV: hmac.credWithoutUV
        )
    }

    /// A large blob, or `nil` for one whose size does not fit `Int`.
    mutating func largeBlob(_ blob: CXF.FIDO2Extensions.LargeBlob) -> ASImportableFIDO2LargeBlob? {
        guard let size = Int(exactly: blob.uncompressedSize) else {
            omit("the large blob's uncompressedSize does not fit Int; the large blob is left out")
            return nil
        }
        unknown(blob.unknownMembers, in: "ASImportableFIDO2LargeBlob")
        return ASImportableFIDO2LargeBlob(uncompressedSize: size, data: blob.data)
    }
}

// MARK: - AS → CXF

extension CXF.FIDO2Extensions {
    /// The CXF form of a passkey's extension data. (Linux addition.)
    public init(_ ext: ASImportableFIDO2Extensions) {
        self.init(
            hmacCredentials: ext.hmacCredentials.map { CXF.FIDO2Extensions.HMACCredentials($0) },
            largeBlob: ext.largeBlob.map { CXF.FIDO2Extensions.LargeBlob($0) }
        )
    }
}

extension CXF.FIDO2Extensions.HMACCredentials {
    /// The CXF form of HMAC credentials. (Linux addition.)
    public init(_ hmac: ASImportableFIDO2HMACCredential) {
        self.init(
            algorithm: hmac.algorithm.rawValue,
            credWithUV: hmac.credentialWithUV,
            credWithoutUV: hmac.credentialWithoutUV
        )
    }
}

extension CXF.FIDO2Extensions.LargeBlob {
    /// The CXF form of a large blob; a negative `uncompressedSize`, which no authenticator writes,
    /// becomes 0. (Linux addition.)
    public init(_ blob: ASImportableFIDO2LargeBlob) {
        self.init(uncompressedSize: UInt64(clamping: blob.uncompressedSize), data: blob.data)
    }
}
