import AuthenticationServices
import Foundation
import Testing

/// ASAuthorizationError has Apple's shape: domain, codes, the reason in userInfo.
@Suite("ASAuthorizationError")
struct ASAuthorizationErrorTests {
    @Test(
        "Apple's codes and domain",
        arguments: [
            (ASAuthorizationError.unknown, 1000), (.canceled, 1001), (.invalidResponse, 1002), (.notHandled, 1003),
            (.failed, 1004), (.notInteractive, 1005), (.matchedExcludedCredential, 1006), (.credentialImport, 1007),
            (.credentialExport, 1008), (.preferSignInWithApple, 1009), (.deviceNotConfiguredForPasskeyCreation, 1010),
        ] as [(ASAuthorizationError.Code, Int)]
    )
    func codes(code: ASAuthorizationError.Code, value: Int) {
        #expect(code.rawValue == value)
        let error = ASAuthorizationError(code) as NSError
        #expect(error.domain == "com.apple.AuthenticationServices.AuthorizationError")
        #expect(error.domain == ASAuthorizationErrorDomain)
        #expect(error.code == value)
    }

    @Test("the reason is in userInfo as on Apple platforms, and localizedDescription includes it")
    func userInfo() {
        let error = ASAuthorizationError(.credentialImport, reason: "the token has expired")
        let bridged = error as NSError
        #expect(bridged.userInfo[NSLocalizedFailureReasonErrorKey] as? String == "the token has expired")
        #expect(bridged.localizedFailureReason == "the token has expired")
        #expect(bridged.localizedDescription == "The credential import failed: the token has expired")
        #expect(error.description == "The credential import failed: the token has expired")
        #expect(error.failureReason == "the token has expired")
    }

    @Test("Apple's initialiser keeps userInfo as given; errors compare by code")
    func appleInitialiser() {
        let error = ASAuthorizationError(.canceled, userInfo: ["custom": 7])
        #expect(error.userInfo["custom"] as? Int == 7)
        #expect(error.failureReason == nil)
        #expect(error.description == "The request was cancelled.")
        #expect(error == ASAuthorizationError(.canceled, reason: "another reason"))
        #expect(error != ASAuthorizationError(.failed))
    }

    @Test("catch ASAuthorizationError.canceled matches by code")
    func catchPattern() {
        func outcome(_ code: ASAuthorizationError.Code) -> String {
            do {
                throw ASAuthorizationError(code)
            } catch ASAuthorizationError.canceled {
                return "canceled"
            } catch {
                return "other"
            }
        }
        #expect(outcome(.canceled) == "canceled")
        #expect(outcome(.credentialExport) == "other")
    }
}

@Suite("ASExtensionError read as it bridges on Apple platforms")
struct ASExtensionErrorBridgingTests {
    @Test("an NSError of ASExtensionErrorDomain means the same as the Swift error; other errors are not it")
    func bridging() {
        let apple = NSError(
            domain: ASExtensionErrorDomain,
            code: ASExtensionError.Code.userInteractionRequired.rawValue
        )
        #expect(ASExtensionError(bridging: apple)?.code == .userInteractionRequired)
        #expect(ASExtensionError(bridging: ASExtensionError(.userCanceled))?.code == .userCanceled)
        let withReason = NSError(
            domain: ASExtensionErrorDomain,
            code: 101,
            userInfo: [NSLocalizedFailureReasonErrorKey: "gone"]
        )
        #expect(ASExtensionError(bridging: withReason)?.failureReason == "gone")
        #expect(ASExtensionError(bridging: NSError(domain: ASExtensionErrorDomain, code: 7)) == nil)
        #expect(ASExtensionError(bridging: NSError(domain: NSCocoaErrorDomain, code: 100)) == nil)
    }
}
