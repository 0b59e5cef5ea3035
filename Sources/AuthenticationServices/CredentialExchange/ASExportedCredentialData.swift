import Foundation

/// The credentials of one export: the exporter's accounts with their items and collections, and
/// what the exporter says about itself.
///
/// This is the Swift form of the FIDO Credential Exchange Format (CXF) 1.0 header. Encoded with
/// `JSONEncoder` it is CXF JSON, and `JSONDecoder` reads CXF JSON into it. As on Apple platforms, set
/// the coder's date strategy to `.secondsSince1970`, because CXF timestamps are Unix seconds:
///
/// ```swift
/// let decoder = JSONDecoder()
/// decoder.dateDecodingStrategy = .secondsSince1970
/// let export = try decoder.decode(ASExportedCredentialData.self, from: json)
/// ```
///
/// Binary values (ids, keys) are written as unpadded base64url whatever the coder's data strategy
/// is; they are read from base64url or base64, padded or not. Credentials of a type Apple's
/// ``ASImportableCredential`` has no case for are skipped when decoding, as CXF asks importers to do.
///
/// On Linux there are also a fast path that reports what Apple's types cannot hold,
/// ``init(cxfJSON:omissions:)``, and its counterpart ``cxfJSON()``.
public struct ASExportedCredentialData: Codable, Hashable, Sendable {
    /// The exported accounts.
    public var accounts: [ASImportableAccount]
    /// The version of the Credential Exchange Format the export follows.
    public let formatVersion: ASExportedCredentialData.FormatVersion
    /// The relying-party identifier of the exporting app (CXF `exporterRpId`), for example its domain.
    public let exporterRelyingPartyIdentifier: String
    /// The exporting app's name, as people see it.
    public let exporterDisplayName: String
    /// When the export was made.
    public let timestamp: Date

    /// Creates the data of an export.
    public init(
        accounts: [ASImportableAccount],
        formatVersion: ASExportedCredentialData.FormatVersion,
        exporterRelyingPartyIdentifier: String,
        exporterDisplayName: String,
        timestamp: Date
    ) {
        self.accounts = accounts
        self.formatVersion = formatVersion
        self.exporterRelyingPartyIdentifier = exporterRelyingPartyIdentifier
        self.exporterDisplayName = exporterDisplayName
        self.timestamp = timestamp
    }

    /// The Credential Exchange Format version of an ``ASExportedCredentialData``.
    ///
    /// In JSON it is CXF's `version` object, `{"major":1,"minor":0}`, not its raw value.
    public enum FormatVersion: String, CaseIterable, Codable, Hashable, Sendable {
        /// CXF 1.0, and any 1.x: minor versions only add members, which older importers ignore.
        ///
        /// The raw value `"1.0"` is a guess: Apple's is not documented. Do not rely on it.
        case v1 = "1.0"

        private enum CodingKeys: String, CodingKey {
            case major, minor
        }

        /// Reads `{"major":…,"minor":…}`.
        ///
        /// Any minor version of major 1 is accepted, because CXF makes minor versions additive.
        /// (Apple's decoder, as far as it is known, accepts only 1.0; that rejects valid 1.x exports.)
        /// Another major version is an incompatible format and throws `DecodingError.dataCorrupted`.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let major = try container.decode(UInt32.self, forKey: .major)
            let minor = try container.decodeIfPresent(UInt32.self, forKey: .minor) ?? 0
            guard let version = Self(major: major) else {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(
                        codingPath: container.codingPath,
                        debugDescription: Self.unsupportedMessage(major: major, minor: minor)
                    )
                )
            }
            self = version
        }

        /// Writes `{"major":1,"minor":0}`.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .v1:
                try container.encode(1 as UInt32, forKey: .major)
                try container.encode(0 as UInt32, forKey: .minor)
            }
        }

        /// The version for a CXF major version, if this implementation reads it.
        init?(major: UInt32) {
            guard major == 1 else { return nil }
            self = .v1
        }

        static func unsupportedMessage(major: UInt32, minor: UInt32) -> String {
            "Unsupported Credential Exchange Format version \(major).\(minor): only version 1.x can be imported. "
                + "Export again with CXF 1.0, or update the importing app."
        }
    }

    private enum CodingKeys: String, CodingKey {
        case formatVersion = "version"
        case exporterRelyingPartyIdentifier = "exporterRpId"
        case exporterDisplayName
        case timestamp
        case accounts
    }

    /// Reads it from CXF JSON, with the specification's member names.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        formatVersion = try container.decode(FormatVersion.self, forKey: .formatVersion)
        exporterRelyingPartyIdentifier = try container.decode(String.self, forKey: .exporterRelyingPartyIdentifier)
        exporterDisplayName = try container.decode(String.self, forKey: .exporterDisplayName)
        timestamp = try container.decode(Date.self, forKey: .timestamp)
        accounts = try container.decodeArrayIfPresent([ASImportableAccount].self, forKey: .accounts)
    }

    /// Writes it as CXF JSON, with the specification's member names.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(formatVersion, forKey: .formatVersion)
        try container.encode(exporterRelyingPartyIdentifier, forKey: .exporterRelyingPartyIdentifier)
        try container.encode(exporterDisplayName, forKey: .exporterDisplayName)
        try container.encode(timestamp, forKey: .timestamp)
        try container.encode(accounts, forKey: .accounts)
    }
}
