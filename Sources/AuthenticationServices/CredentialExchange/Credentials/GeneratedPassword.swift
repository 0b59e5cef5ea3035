import CredentialExchangeFormat
import Foundation

extension ASImportableCredential {
    /// A password the exporter generated, not yet tied to a login. Its description hides the password.
    public struct GeneratedPassword: Codable, Hashable, Sendable {
        /// The password.
        public var password: String

        /// Creates a generated password credential.
        public init(password: String) {
            self.password = password
        }
    }
}

extension ASImportableCredential.GeneratedPassword: CustomStringConvertible, CustomDebugStringConvertible {
    /// The credential without the password.
    public var description: String { "GeneratedPassword(‹redacted, \(password.count) characters›)" }
    /// The same text as `description`: debugging output shows no secret either.
    public var debugDescription: String { description }
}

// MARK: - CXF → AS, AS → CXF

extension CXFImporter {
    mutating func generatedPassword(_ c: CXF.GeneratedPassword) -> ASImportableCredential.GeneratedPassword {
        unknown(c.unknownMembers, in: "ASImportableCredential.GeneratedPassword")
        return .init(password: c.password)
    }
}

extension CXF.GeneratedPassword {
    init(_ c: ASImportableCredential.GeneratedPassword) {
        self.init(password: c.password)
    }
}
