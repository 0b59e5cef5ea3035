import CredentialExchangeFormat
import KeyportErrors

/// The exports Keyport reads.
package enum ImportFormat: String, CaseIterable, Sendable {
    /// A CXF document: a header, or one account.
    case cxf
    /// A CXF document sealed with HPKE to the importer's key (``EncryptedCXF``): Keyport's
    /// encrypted export, in the shape of the Credential Exchange Protocol's export response.
    case encryptedCXF = "cxf-hpke"
    /// Bitwarden's unencrypted JSON export.
    case bitwarden
    /// KeePassXC's CSV export (`keepassxc-cli export --format csv`).
    case keepassxcCSV = "keepassxc-csv"
    /// KeePass 2's XML export (KeePass, `keepassxc-cli export --format xml`).
    case keepassXML = "keepass-xml"
    /// Google Chrome's password CSV.
    case chromeCSV = "chrome-csv"
    /// Firefox's password CSV.
    case firefoxCSV = "firefox-csv"
    /// Safari's and Apple Passwords' CSV.
    case safariCSV = "safari-csv"
    /// Aegis Authenticator's JSON export, plain or encrypted.
    case aegis
    /// 2FAS Authenticator's JSON backup (unencrypted).
    case twoFAS = "2fas"
    /// `otpauth://` and `otpauth-migration://` URIs, one per line (Google Authenticator's export
    /// QR codes read as text, or any authenticator's list).
    case otpauth

    /// What a person calls it, for messages.
    package var name: String {
        switch self {
        case .cxf: "CXF"
        case .encryptedCXF: "encrypted CXF"
        case .bitwarden: "Bitwarden JSON"
        case .keepassxcCSV: "KeePassXC CSV"
        case .keepassXML: "KeePass XML"
        case .chromeCSV: "Chrome CSV"
        case .firefoxCSV: "Firefox CSV"
        case .safariCSV: "Safari CSV"
        case .aegis: "Aegis JSON"
        case .twoFAS: "2FAS backup"
        case .otpauth: "otpauth URI list"
        }
    }
}

/// An entry of an export that cannot be read, and why. The file is then not imported at all
/// (`keyport vault import` lists every problem): nothing is left behind silently.
package struct ImportProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// Where in the file ("line 12", "entry 3").
    package var place: String
    package var message: String

    package init(place: String, message: String) {
        self.place = place
        self.message = message
    }

    package var description: String { "\(place): \(message)" }
}

/// Why a file cannot be read at all.
package struct ImportError: RecordedError {
    /// A stable name for why.
    package typealias Code = ErrorCodeOf<ImportError>

    package var record: ErrorRecord<Code>

    package init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
    }
}

extension ErrorCodeOf<ImportError> {
    /// The file is in no format Keyport recognises.
    package static let unrecognised = Self(rawValue: "unrecognised")
    /// The file is not what its format says (not JSON, XML or CSV; another shape; cut short; empty).
    package static let malformed = Self(rawValue: "malformed")
    /// A version of the format Keyport does not read.
    package static let unsupportedVersion = Self(rawValue: "unsupported-version")
    /// The file is encrypted, and Keyport lacks, or cannot use, what opens it.
    package static let encrypted = Self(rawValue: "encrypted")
    /// The password given does not open the file.
    package static let wrongPassword = Self(rawValue: "wrong-password")
    /// The file's key-derivation parameters are outside Keyport's caps.
    package static let unsafeParameters = Self(rawValue: "unsafe-parameters")
    /// The encrypted export does not open with the key given, or was changed.
    package static let cannotOpen = Self(rawValue: "cannot-open")
    /// What the file's own key protects was changed.
    package static let tampered = Self(rawValue: "tampered")
}

/// What a file held: the items, and the entries that could not be read (a file with any is not
/// imported).
package struct Imported: Sendable {
    package var format: ImportFormat
    package var items: [CXF.Item]
    package var problems: [ImportProblem]
}
