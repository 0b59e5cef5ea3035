// An app that signs its person up and in with passkeys, written with Apple's API alone, as on Apple
// platforms: ASAuthorizationController with ASAuthorizationPlatformPublicKeyCredentialProvider.
// On Linux its manifest names the domains it is associated with ("associatedDomains":
// ["webcredentials:example.com"]), and each site confirms it in its apple-app-site-association.
//
//   ExamplePasskeyApp register RPID CHALLENGE USERID NAME [ORIGIN]
//   ExamplePasskeyApp signin RPID CHALLENGE [ORIGIN]    (a passkey, else a saved password)
//   ExamplePasskeyApp password
//
// CHALLENGE and USERID are base64url, as a relying party's options carry them; ORIGIN, when the
// app's associated domain has a port, is that site's origin (the app's client data). Prints
// PublicKeyCredential.toJSON() for the relying party to verify (for `password`, the saved
// password the person chose, as {"user", "password"}), or the error, and exits 1.

import AuthenticationServices
import Foundation

func bytes(_ text: String) -> Data {
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    return Data(base64Encoded: base64) ?? Data()
}

func text(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

@MainActor
final class SignIn: NSObject, ASAuthorizationControllerDelegate, ASAuthorizationControllerPresentationContextProviding {
    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor {
        ASPresentationAnchor()
    }

    func authorizationController(
        controller: ASAuthorizationController,
        didCompleteWithAuthorization authorization: ASAuthorization
    ) {
        if let password = authorization.credential as? ASPasswordCredential {
            let json = try? JSONSerialization.data(withJSONObject: [
                "user": password.user, "password": password.password,
            ])
            print(String(decoding: json ?? Data(), as: UTF8.self))
            exit(0)
        }
        var response: [String: Any] = [:]
        var id = Data()
        if let registration = authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialRegistration {
            id = registration.credentialID
            response = [
                "clientDataJSON": text(registration.rawClientDataJSON),
                "attestationObject": text(registration.rawAttestationObject ?? Data()),
            ]
        } else if let assertion = authorization.credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion {
            id = assertion.credentialID
            response = [
                "clientDataJSON": text(assertion.rawClientDataJSON),
                "authenticatorData": text(assertion.rawAuthenticatorData),
                "signature": text(assertion.signature),
                "userHandle": text(assertion.userID),
            ]
        }
        let credential: [String: Any] = [
            "id": text(id), "rawId": text(id), "type": "public-key", "authenticatorAttachment": "platform",
            "response": response, "clientExtensionResults": [String: Any](),
        ]
        let json = (try? JSONSerialization.data(withJSONObject: credential)) ?? Data()
        print(String(decoding: json, as: UTF8.self))
        exit(0)
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
let delegate = SignIn()
/// The requests the command line asks for.
func requests(_ arguments: [String]) -> [ASAuthorizationRequest]? {
    switch arguments.first {
    case "register" where arguments.count >= 5:
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: arguments[1])
        let registration = provider.createCredentialRegistrationRequest(
            challenge: bytes(arguments[2]),
            name: arguments[4],
            userID: bytes(arguments[3])
        )
        if arguments.count > 5 {
            registration.clientData = ASPublicKeyCredentialClientData(
                challenge: bytes(arguments[2]),
                origin: arguments[5]
            )
        }
        return [registration]
    case "signin" where arguments.count >= 3:
        // A passkey if the person has one here, else a saved password: the usual sign-in sheet.
        let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: arguments[1])
        let assertion = provider.createCredentialAssertionRequest(challenge: bytes(arguments[2]))
        if arguments.count > 3 {
            assertion.clientData = ASPublicKeyCredentialClientData(challenge: bytes(arguments[2]), origin: arguments[3])
        }
        return [assertion, ASAuthorizationPasswordProvider().createRequest()]
    case "password":
        return [ASAuthorizationPasswordProvider().createRequest()]
    default:
        return nil
    }
}

/// Signs in as an app's sign-in button does: the controller made here and let go, the delegate
/// told how it ended.
@MainActor
func signIn(with requests: [ASAuthorizationRequest], delegate: SignIn) {
    let controller = ASAuthorizationController(authorizationRequests: requests)
    controller.delegate = delegate
    controller.presentationContextProvider = delegate
    controller.performRequests()
}

guard let asked = requests(arguments) else {
    FileHandle.standardError.write(
        Data(
            "usage: ExamplePasskeyApp register RPID CHALLENGE USERID NAME [ORIGIN] | signin RPID CHALLENGE [ORIGIN] | password\n"
                .utf8
        )
    )
    exit(2)
}
signIn(with: asked, delegate: delegate)
dispatchMain()
