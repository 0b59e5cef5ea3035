import Foundation
import KeyportInterfaces

/// What an app was launched to do, with Foundation's name and shape, as far as a credential import
/// needs it. (Linux addition: swift-corelibs-foundation has no `NSUserActivity`.)
///
/// On Apple platforms the system hands the app an activity of type ``ASCredentialExchangeActivity``
/// whose `userInfo` holds the import token; on Linux the app reads the same from
/// ``launchActivity``. Code written for Apple platforms reads it unchanged:
///
/// ```swift
/// guard let token = activity.userInfo?[ASCredentialImportToken] as? UUID else { return }
/// ```
///
/// Should a later Foundation on Linux declare `NSUserActivity`, name this one
/// `AuthenticationServices.NSUserActivity` where both are imported.
open class NSUserActivity: NSObject {
    /// The kind of activity, for example ``ASCredentialExchangeActivityType``.
    public let activityType: String
    /// What the activity carries, for example the import token under ``ASCredentialImportToken``.
    open var userInfo: [AnyHashable: Any]?

    /// An activity of `activityType`, with no `userInfo`.
    public init(activityType: String) {
        self.activityType = activityType
        super.init()
    }

    /// The activity keyportd launched this process with, or `nil` when it was not launched for one.
    /// (Linux addition.)
    ///
    /// keyportd starts an app chosen to import credentials with two environment variables:
    /// `KEYPORT_ACTIVITY_TYPE`, ``ASCredentialExchangeActivity``, and `KEYPORT_IMPORT_TOKEN`, a
    /// UUID. (The environment, unlike the command line, only the user's own processes can read.)
    /// This gives an activity of that type whose `userInfo` holds the token as a `UUID` under
    /// ``ASCredentialImportToken``; `nil` when either variable is missing, the type is another, or
    /// the token is not a UUID. Each read makes a new activity.
    public static var launchActivity: NSUserActivity? {
        launchActivity(environment: ProcessInfo.processInfo.environment)
    }

    /// The activity `environment` describes; see ``launchActivity``.
    static func launchActivity(environment: [String: String]) -> NSUserActivity? {
        guard environment[Exchange.activityTypeVariable] == ASCredentialExchangeActivity,
            let text = environment[Exchange.importTokenVariable], let token = UUID(uuidString: text)
        else { return nil }
        let activity = NSUserActivity(activityType: ASCredentialExchangeActivity)
        activity.userInfo = [ASCredentialImportToken: token]
        return activity
    }
}
