import CredentialExchangeFormat
import Foundation

extension ASImportableCredential {
    /// A Wi-Fi network and its passphrase.
    public struct WiFi: Codable, Hashable, Sendable {
        /// The network's name.
        public var ssid: ASImportableEditableField?
        /// The network's security (a `wifi-network-security-type` field).
        public var networkSecurityType: ASImportableEditableField?
        /// The passphrase (a concealed string).
        public var passphrase: ASImportableEditableField?
        /// Whether the network hides its name (a boolean field).
        public var hidden: ASImportableEditableField?

        /// Creates a Wi-Fi credential.
        public init(
            ssid: ASImportableEditableField?,
            networkSecurityType: ASImportableEditableField?,
            passphrase: ASImportableEditableField?,
            hidden: ASImportableEditableField? = nil
        ) {
            self.ssid = ssid
            self.networkSecurityType = networkSecurityType
            self.passphrase = passphrase
            self.hidden = hidden
        }

        /// Reads it from CXF JSON, with the specification's member names.
        public init(from decoder: any Decoder) throws { self = try Self.decodeFields(from: decoder) }
        /// Writes it as CXF JSON, with the specification's member names.
        public func encode(to encoder: any Encoder) throws { try encodeFields(to: encoder) }
    }
}

extension ASImportableCredential.WiFi: CXFFieldCredential {
    init() {}
    static let cxfFields = CXFFieldTable<Self, CXF.WiFi>([
        (\.ssid, \.ssid),
        (\.networkSecurityType, \.networkSecurityType),
        (\.passphrase, \.passphrase),
        (\.hidden, \.hidden),
    ])
}
