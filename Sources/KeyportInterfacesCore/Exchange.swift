import VarlinkCore

// What the exchange's programs share beside Interfaces/org.keyport.Exchange.varlink: how keyportd
// starts an importer and the states of an export.
extension Exchange {
    /// The environment variable that holds the activity type for an app keyportd starts to import.
    package static let activityTypeVariable = "KEYPORT_ACTIVITY_TYPE"
    /// Its value: the string of `ASCredentialExchangeActivity` (and `ASCredentialExchangeActivityType`)
    /// in `AuthenticationServices`. Apple's own value is not public; this is the symbol's name.
    package static let activityType = "ASCredentialExchangeActivity"
    /// The environment variable that holds the import token (a UUID) for that app.
    package static let importTokenVariable = "KEYPORT_IMPORT_TOKEN"

    /// Where an export is, in `ExportCredentials`'s replies (`state`).
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
}

extension Exchange.ExportCredentials.Reply {
    /// A reply in `state`, with the importer's report once there is one.
    package init(state: Exchange.State, importer: String, report: Exchange.ReportImport.Parameters? = nil) {
        self.init(
            state: state.rawValue,
            importer: importer,
            imported: report?.imported,
            declined: report?.declined,
            message: report?.message
        )
    }
}
