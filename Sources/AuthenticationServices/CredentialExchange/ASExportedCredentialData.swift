import CredentialExchangeFormat
import Foundation

/// The credentials of one export: the exporter's accounts with their items and collections, and
/// what the exporter says about itself.
///
/// This is the Swift form of the FIDO Credential Exchange Format (CXF) 1.0 header. Encoded with
/// `JSONEncoder` it is CXF JSON, and `JSONDecoder` reads CXF JSON into it. Apple's documentation sets
/// the coder's date strategy to `.secondsSince1970`; here that is allowed and not needed, because
/// every type of this API is read and written through the CXF codec, whose timestamps are Unix
/// seconds whatever the coder's strategies say:
///
/// ```swift
/// let export = try JSONDecoder().decode(ASExportedCredentialData.self, from: json)
/// ```
///
/// Reading with any `Decoder` is reading as an import does (``init(cxfJSON:omissions:)``), silently:
/// binary values (ids, keys) are read from base64url or base64, padded or not, and written as
/// unpadded base64url; members CXF leaves optional get its defaults; credentials of a type Apple's
/// ``ASImportableCredential`` has no case for, and whatever else Apple's types cannot hold, are left
/// out, as CXF asks importers to do. Another major version throws `DecodingError.dataCorrupted`.
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
}
