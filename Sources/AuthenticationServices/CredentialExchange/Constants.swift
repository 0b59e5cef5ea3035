import KeyportInterfaces

/// The activity type of the user activity that launches an app to import credentials.
///
/// On Apple platforms the system starts the importing app with an `NSUserActivity` of this type; its
/// `userInfo[ASCredentialImportToken]` holds the `UUID` to pass to the import manager. On Linux
/// keyportd starts the app with this type in `KEYPORT_ACTIVITY_TYPE`, which
/// ``NSUserActivity/launchActivity`` reads.
///
/// Apple does not document the string's value; this implementation uses the symbol's name, which is
/// what apps that support older systems fall back to.
public let ASCredentialExchangeActivity: String = Exchange.activityType

/// ``ASCredentialExchangeActivity`` under the name Apple's sample code uses
/// (`onContinueUserActivity(ASCredentialExchangeActivityType)`, `NSUserActivityTypes`); the same
/// value.
public let ASCredentialExchangeActivityType: String = ASCredentialExchangeActivity

/// The `userInfo` key under which a credential-exchange user activity holds the import token, a `UUID`.
///
/// Apple does not document the string's value; this implementation uses the symbol's name.
public let ASCredentialImportToken: String = "ASCredentialImportToken"
