import Crypto
import Foundation
import KeyportEncoding
import KeyportInterfaces

/// Between Apple's passkey types and org.keyport.CredentialProvider's, whose bytes are base64url.
enum PasskeyWire {
    static func data(_ text: String?) -> Data {
        Data((try? text.map(Base64URL.decode)) ?? [])
    }

    static func text(_ data: Data) -> String { Base64URL.encode(data) }

    static func text(_ key: SymmetricKey) -> String { key.withUnsafeBytes { Base64URL.encode($0) } }

    static func values(
        _ values: CredentialProvider.PRFValues
    ) -> ASAuthorizationPublicKeyCredentialPRFAssertionInput.InputValues {
        .init(saltInput1: data(values.first), saltInput2: values.second.map { data($0) })
    }

    static func assertionInput(_ input: CredentialProvider.PRFInput?) -> ASPasskeyAssertionCredentialExtensionInput? {
        guard let input else { return nil }
        let byCredential = input.evalByCredential.map { table in
            Dictionary(table.map { (data($0.key), values($0.value)) }, uniquingKeysWith: { first, _ in first })
        }
        return ASPasskeyAssertionCredentialExtensionInput(
            prf: ASAuthorizationPublicKeyCredentialPRFAssertionInput(
                inputValues: input.eval.map(values),
                perCredentialInputValues: byCredential
            )
        )
    }

    /// The request a view controller is given for a passkey's `parts`.
    static func request(
        _ type: ASCredentialRequestType,
        _ identity: any ASCredentialIdentity,
        _ parts: CredentialProvider.PasskeyRequest?
    ) -> ASPasskeyCredentialRequest {
        let passkey =
            identity as? ASPasskeyCredentialIdentity
            ?? ASPasskeyCredentialIdentity(
                relyingPartyIdentifier: identity.serviceIdentifier.identifier,
                userName: identity.user,
                credentialID: Data(),
                userHandle: Data(),
                recordIdentifier: identity.recordIdentifier
            )
        let extensionInput: ASPasskeyCredentialExtensionInput
        if type == .passkeyRegistration {
            extensionInput = .registration(
                ASPasskeyRegistrationCredentialExtensionInput(
                    prf: parts?.prf.map { input in
                        input.eval.map { .inputValues(values($0)) } ?? .checkForSupport
                    }
                )
            )
        } else {
            extensionInput = assertionInput(parts?.prf).map { .assertion($0) } ?? .none
        }
        return ASPasskeyCredentialRequest(
            type: type,
            credentialIdentity: passkey,
            clientDataHash: data(parts?.clientDataHash),
            userVerificationPreference: .init(parts?.userVerificationPreference ?? "preferred"),
            supportedAlgorithms: (parts?.supportedAlgorithms ?? []).map { ASCOSEAlgorithmIdentifier($0) },
            excludedCredentials: parts?.excludedCredentials?.map {
                ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: data($0))
            },
            extensionInput: extensionInput
        )
    }

    static func parameters(
        _ parameters: CredentialProvider.PasskeyListParameters
    ) -> ASPasskeyCredentialRequestParameters {
        ASPasskeyCredentialRequestParameters(
            relyingPartyIdentifier: parameters.relyingParty,
            clientDataHash: data(parameters.clientDataHash),
            userVerificationPreference: .init(parameters.userVerificationPreference),
            allowedCredentials: parameters.allowedCredentials.map { data($0) },
            extensionInput: assertionInput(parameters.prf)
        )
    }

    static func assertion(_ credential: ASPasskeyAssertionCredential) -> CredentialProvider.PasskeyAssertion {
        CredentialProvider.PasskeyAssertion(
            userHandle: text(credential.userHandle),
            relyingParty: credential.relyingParty,
            signature: text(credential.signature),
            clientDataHash: text(credential.clientDataHash),
            authenticatorData: text(credential.authenticatorData),
            credentialID: text(credential.credentialID),
            prf: credential.extensionOutput?.prf.map {
                CredentialProvider.PRFOutput(first: text($0.first), second: $0.second.map { text($0) })
            }
        )
    }

    static func registration(_ credential: ASPasskeyRegistrationCredential) -> CredentialProvider.PasskeyRegistration {
        let prf = credential.extensionOutput?.prf
        return CredentialProvider.PasskeyRegistration(
            relyingParty: credential.relyingParty,
            clientDataHash: text(credential.clientDataHash),
            credentialID: text(credential.credentialID),
            attestationObject: text(credential.attestationObject),
            prfSupported: prf?.isSupported,
            prf: prf?.first.map { CredentialProvider.PRFOutput(first: text($0), second: prf?.second.map { text($0) }) }
        )
    }
}
