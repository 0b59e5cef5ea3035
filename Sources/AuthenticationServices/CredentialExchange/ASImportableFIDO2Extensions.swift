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

    private enum CodingKeys: String, CodingKey {
        case hmacCredentials, largeBlob
    }

    /// Reads CXF `fido2Extensions`.
    ///
    /// `hmacCredentials` whose `algorithm` has no ``ASImportableFIDO2HMACCredential/Algorithm`` case
    /// read as absent, as CXF asks for a required member with an unknown value; everything else about
    /// them must be valid.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hmacCredentials = nil
        if container.contains(.hmacCredentials), try !container.decodeNil(forKey: .hmacCredentials) {
            let hmac = try container.nestedContainer(keyedBy: WireKey.self, forKey: .hmacCredentials)
            let name = try hmac.decode(String.self, forKey: WireKey("algorithm"))
            if ASImportableFIDO2HMACCredential.Algorithm(rawValue: name) != nil {
                hmacCredentials = try container.decode(ASImportableFIDO2HMACCredential.self, forKey: .hmacCredentials)
            }
        }
        largeBlob = try container.decodeIfPresent(ASImportableFIDO2LargeBlob.self, forKey: .largeBlob)
    }

    /// Writes it as CXF JSON, with the specification's member names.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(hmacCredentials, forKey: .hmacCredentials)
        try container.encodeIfPresent(largeBlob, forKey: .largeBlob)
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

    private enum CodingKeys: String, CodingKey {
        case algorithm
        case credentialWithUV = "credWithUV"
        case credentialWithoutUV = "credWithoutUV"
    }

    /// Reads it from CXF JSON, with the specification's member names.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        algorithm = try container.decode(Algorithm.self, forKey: .algorithm)
        credentialWithUV = try container.decodeBase64URL(forKey: .credentialWithUV)
        credentialWithoutUV = try container.decodeBase64URL(forKey: .credentialWithoutUV)
    }

    /// Writes it as CXF JSON, with the specification's member names.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(algorithm, forKey: .algorithm)
        try container.encodeBase64URL(credentialWithUV, forKey: .credentialWithUV)
        try container.encodeBase64URL(credentialWithoutUV, forKey: .credentialWithoutUV)
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

    private enum CodingKeys: String, CodingKey {
        case uncompressedSize, data
    }

    /// Reads it from CXF JSON, with the specification's member names.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        uncompressedSize = try container.decode(Int.self, forKey: .uncompressedSize)
        guard uncompressedSize >= 0 else {
            throw DecodingError.dataCorruptedError(
                forKey: .uncompressedSize,
                in: container,
                debugDescription: "A large blob's size cannot be negative"
            )
        }
        data = try container.decodeBase64URL(forKey: .data)
    }

    /// Writes it as CXF JSON, with the specification's member names.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(uncompressedSize, forKey: .uncompressedSize)
        try container.encodeBase64URL(data, forKey: .data)
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
        let hmac: ASImportableFIDO2HMACCredential? = ext.hmacCredentials.flatMap { hmac in
            at("hmacCredentials") { importer in
                guard let algorithm = ASImportableFIDO2HMACCredential.Algorithm(rawValue: hmac.algorithm) else {
                    importer.omit(
                        "the HMAC credentials' algorithm '\(hmac.algorithm)' has no "
                            + "ASImportableFIDO2HMACCredential.Algorithm case; they are left out"
                    )
                    return nil
                }
                importer.unknown(hmac.unknownMembers, in: "ASImportableFIDO2HMACCredential")
                return ASImportableFIDO2HMACCredential(
                    algorithm: algorithm,
                    credentialWithUV: hmac.credWithUV,
                    credentialWithoutUV: hmac.credWithoutUV
                )
            }
        }
        let largeBlob: ASImportableFIDO2LargeBlob? = ext.largeBlob.flatMap { blob in
            at("largeBlob") { importer in
                guard let size = Int(exactly: blob.uncompressedSize) else {
                    importer.omit("the large blob's uncompressedSize does not fit Int; the large blob is left out")
                    return nil
                }
                importer.unknown(blob.unknownMembers, in: "ASImportableFIDO2LargeBlob")
                return ASImportableFIDO2LargeBlob(uncompressedSize: size, data: blob.data)
            }
        }
        return ASImportableFIDO2Extensions(hmacCredentials: hmac, largeBlob: largeBlob)
    }
}
