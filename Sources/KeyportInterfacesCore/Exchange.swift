import VarlinkCore

/// Parameter types of `org.keyport.Exchange` (Interfaces/org.keyport.Exchange.varlink).
package enum Exchange {
    /// The environment variable that holds the activity type for an app keyportd starts to import.
    package static let activityTypeVariable = "KEYPORT_ACTIVITY_TYPE"
    /// Its value: the string of `ASCredentialExchangeActivity` (and `ASCredentialExchangeActivityType`)
    /// in `AuthenticationServices`. Apple's own value is not public; this is the symbol's name.
    package static let activityType = "ASCredentialExchangeActivity"
    /// The environment variable that holds the import token (a UUID) for that app.
    package static let importTokenVariable = "KEYPORT_IMPORT_TOKEN"

    /// `RequestExport`'s input.
    package struct RequestExportIn: Codable, Hashable, Sendable {
        package var formatVersions: [String]?

        package init(formatVersions: [String]? = nil) { self.formatVersions = formatVersions }
    }

    /// `RequestExport`'s output.
    package struct RequestExportOut: Codable, Hashable, Sendable {
        package var export: String
        package var formatVersion: String

        package init(export: String, formatVersion: String) {
            self.export = export
            self.formatVersion = formatVersion
        }
    }

    /// The methods' full names.
    package enum Method {
        package static let requestExport = "org.keyport.Exchange.RequestExport"
        package static let exportCredentials = "org.keyport.Exchange.ExportCredentials"
        package static let importCredentials = "org.keyport.Exchange.ImportCredentials"
        package static let reportImport = "org.keyport.Exchange.ReportImport"
    }

    /// Where an export is, in `ExportCredentials`'s replies.
    package enum State: String, Sendable {
        /// The importer runs and has not taken the data yet.
        case started
        /// The importer has the data; its report is awaited.
        case handed
        /// The importer said what it kept (last reply).
        case reported
        /// The importer ended, or went quiet, without saying (last reply).
        case unreported
    }

    /// `ExportCredentials`'s replies.
    package struct ExportOut: Codable, Hashable, Sendable {
        package var state: String
        package var importer: String
        package var imported: Int?
        package var declined: Bool?
        package var message: String?

        package init(state: State, importer: String, report: ReportIn? = nil) {
            self.state = state.rawValue
            self.importer = importer
            imported = report?.imported
            declined = report?.declined
            message = report?.message
        }
    }

    /// `ReportImport`'s input: what came of an import.
    package struct ReportIn: Codable, Hashable, Sendable {
        package var token: String
        package var imported: Int
        package var declined: Bool
        package var message: String?

        package init(token: String, imported: Int, declined: Bool, message: String?) {
            self.token = token
            self.imported = imported
            self.declined = declined
            self.message = message
        }
    }

    /// `ImportCredentials`'s input.
    package struct ImportIn: Codable, Hashable, Sendable {
        package var token: String

        package init(token: String) { self.token = token }
    }

    /// The error names of the interface.
    package enum Error {
        package static let notAllowed = "org.keyport.Exchange.NotAllowed"
        package static let noAgent = "org.keyport.Exchange.NoAgent"
        package static let declined = "org.keyport.Exchange.Declined"
        package static let noImporter = "org.keyport.Exchange.NoImporter"
        package static let unknownExport = "org.keyport.Exchange.UnknownExport"
        package static let invalidData = "org.keyport.Exchange.InvalidData"
        package static let importerFailed = "org.keyport.Exchange.ImporterFailed"
        package static let invalidToken = "org.keyport.Exchange.InvalidToken"
        package static let shuttingDown = "org.keyport.Exchange.ShuttingDown"
    }

    /// `ExportCredentials`'s input, written around the document's bytes: the document is put in as
    /// it is, never decoded and re-encoded on the way.
    package static func exportCredentialsParameters(export: String, document: [UInt8]) -> RawJSON {
        var bytes = Array(#"{"export":"#.utf8)
        bytes += JSONText.quoted(export)
        bytes += Array(#","data":"#.utf8)
        bytes.reserveCapacity(bytes.count + document.count + 1)
        bytes += document
        bytes.append(UInt8(ascii: "}"))
        return RawJSON(bytes: bytes)
    }
}
