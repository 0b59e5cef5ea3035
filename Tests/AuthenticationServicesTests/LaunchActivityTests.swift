import Foundation
import Testing

@testable import AuthenticationServices

/// NSUserActivity.launchActivity: the activity keyportd launched the app with, read from the
/// environment.
@Suite("The launch activity")
struct LaunchActivityTests {
    static let token = UUID(uuidString: "1B4E28BA-2FA1-11D2-883F-0016D3CCA427")!

    @Test("launchActivity: the credential-exchange activity with the token as a UUID")
    func launchActivity() throws {
        let activity = try #require(
            NSUserActivity.launchActivity(environment: [
                "KEYPORT_ACTIVITY_TYPE": ASCredentialExchangeActivity,
                "KEYPORT_IMPORT_TOKEN": "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
            ])
        )
        #expect(activity.activityType == ASCredentialExchangeActivityType)
        #expect(activity.userInfo?[ASCredentialImportToken] as? UUID == Self.token)
    }

    @Test(
        "launchActivity is nil, without a crash, when the process was not launched to import",
        arguments: [
            [:],
            ["KEYPORT_ACTIVITY_TYPE": ASCredentialExchangeActivity],
            ["KEYPORT_IMPORT_TOKEN": "1b4e28ba-2fa1-11d2-883f-0016d3cca427"],
            [
                "KEYPORT_ACTIVITY_TYPE": "org.example.other",
                "KEYPORT_IMPORT_TOKEN": "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
            ],
            ["KEYPORT_ACTIVITY_TYPE": ASCredentialExchangeActivity, "KEYPORT_IMPORT_TOKEN": "not-a-uuid"],
            ["KEYPORT_ACTIVITY_TYPE": ASCredentialExchangeActivity, "KEYPORT_IMPORT_TOKEN": ""],
            ["KEYPORT_ACTIVITY_TYPE": ASCredentialExchangeActivity, "KEYPORT_IMPORT_TOKEN": "1b4e28ba-2fa1-11d2-883f"],
        ] as [[String: String]]
    )
    func noLaunchActivity(environment: [String: String]) {
        #expect(NSUserActivity.launchActivity(environment: environment) == nil)
    }

    @Test("the constants: the type Apple's sample code names is the activity's type")
    func constants() {
        #expect(ASCredentialExchangeActivityType == ASCredentialExchangeActivity)
        #expect(ASCredentialImportToken != ASCredentialExchangeActivity)
    }
}
