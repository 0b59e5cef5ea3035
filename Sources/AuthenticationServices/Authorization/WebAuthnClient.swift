import Crypto
import Foundation
import KeyportEncoding
import KeyportInterfaces
import Varlink

/// An app's passkey request, asked of keyportd (org.keyport.WebAuthn) as WebAuthn's JSON, and its
/// answer as Apple's credential types. keyportd decides whether the app may speak for the origin;
/// the request says only which origin it means: the web browser app's client data's, else
/// `https://` and the relying party id.
enum WebAuthnClient {
    static func perform(
        _ request: ASAuthorizationRequest,
        environment: [String: String]
    ) async throws(ASAuthorizationError) -> ASAuthorization {
        do {
            return try await DaemonClient.withConnection(environment: environment) { connection in
                if let registration = request as? ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest {
                    return try await register(registration, connection)
                }
                guard let assertion = request as? ASAuthorizationPlatformPublicKeyCredentialAssertionRequest else {
                    throw ASAuthorizationError(.notHandled, reason: "keyportd performs passkey requests only")
                }
                return try await assert(assertion, connection)
            }
        } catch {
            throw Self.error(error)
        }
    }

    /// Whether keyportd lists a passkey that `request` could use (its relying party's, among its
    /// allowed credentials), without asking anyone.
    static func hasPasskeys(
        for request: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest,
        environment: [String: String]
    ) async throws(ASAuthorizationError) -> Bool {
        let rpID = request.relyingPartyIdentifier
        do {
            return try await DaemonClient.withConnection(environment: environment) { connection in
                let reply = try await connection.call(
                    WebAuthn.ListPasskeys.self,
                    .init(
                        origin: origin(request.clientData, rpID),
                        topOrigin: request.clientData?.topOrigin,
                        rpId: rpID,
                        allowCredentials: request.allowedCredentials.isEmpty
                            ? nil : request.allowedCredentials.map { text($0.credentialID) }
                    )
                )
                return !reply.passkeys.isEmpty
            }
        } catch {
            throw Self.error(error)
        }
    }

    private static func register(
        _ request: ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest,
        _ connection: VarlinkConnection
    ) async throws -> ASAuthorization {
        let rpID = request.relyingPartyIdentifier
        let options = WebAuthn.CreationOptions(
            rp: WebAuthn.RelyingParty(id: rpID, name: rpID),
            user: WebAuthn.User(
                id: text(request.userID),
                name: request.name,
                displayName: request.displayName ?? request.name
            ),
            challenge: text(request.challenge),
            pubKeyCredParams: [-7, -8, -257].map { WebAuthn.CredentialParameters(type: "public-key", alg: $0) },
            excludeCredentials: request.excludedCredentials?.map {
                WebAuthn.CredentialDescriptor(type: "public-key", id: text($0.credentialID))
            },
            authenticatorSelection: WebAuthn.AuthenticatorSelection(
                residentKey: "required",
                requireResidentKey: true,
                userVerification: request.userVerificationPreference.rawValue
            ),
            attestation: request.attestationPreference.rawValue,
            extensions: request.prf.map { prf in
                RawJSON(
                    encoding: WebAuthn.ExtensionInputs(
                        prf: WebAuthn.PRFInputs(eval: prf.inputValues.map(values))
                    )
                )
            }
        )
        let reply = try await connection.call(
            WebAuthn.Create.self,
            .init(origin: origin(request.clientData, rpID), topOrigin: request.clientData?.topOrigin, options: options)
        )
        guard let credential = reply.credential else {
            throw ASAuthorizationError(.invalidResponse, reason: "keyportd answered no credential")
        }
        let prf = credential.clientExtensionResults.prf
        return ASAuthorization(
            provider: request.provider,
            credential: ASAuthorizationPlatformPublicKeyCredentialRegistration(
                rawClientDataJSON: try data(credential.response.clientDataJSON),
                credentialID: try data(credential.rawId),
                rawAttestationObject: try data(credential.response.attestationObject),
                prf: try prf.map { prf in
                    if let results = prf.results {
                        return ASAuthorizationPublicKeyCredentialPRFRegistrationOutput(
                            first: try key(results.first),
                            second: try results.second.map(key)
                        )
                    }
                    return prf.enabled == true ? .supported : .unsupported
                }
            )
        )
    }

    private static func assert(
        _ request: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest,
        _ connection: VarlinkConnection
    ) async throws -> ASAuthorization {
        let rpID = request.relyingPartyIdentifier
        let options = WebAuthn.RequestOptions(
            challenge: text(request.challenge),
            rpId: rpID,
            allowCredentials: request.allowedCredentials.isEmpty
                ? nil
                : request.allowedCredentials.map {
                    WebAuthn.CredentialDescriptor(type: "public-key", id: text($0.credentialID))
                },
            userVerification: request.userVerificationPreference.rawValue,
            extensions: request.prf.map { prf in
                RawJSON(
                    encoding: WebAuthn.ExtensionInputs(
                        prf: WebAuthn.PRFInputs(
                            eval: prf.inputValues.map(values),
                            evalByCredential: prf.perCredentialInputValues.map { table in
                                Dictionary(
                                    table.map { (text($0.key), values($0.value)) },
                                    uniquingKeysWith: { first, _ in first }
                                )
                            }
                        )
                    )
                )
            }
        )
        let reply = try await connection.call(
            WebAuthn.Get.self,
            .init(origin: origin(request.clientData, rpID), topOrigin: request.clientData?.topOrigin, options: options)
        )
        guard let credential = reply.credential else {
            throw ASAuthorizationError(.invalidResponse, reason: "keyportd answered no credential")
        }
        let results = credential.clientExtensionResults.prf?.results
        return ASAuthorization(
            provider: request.provider,
            credential: ASAuthorizationPlatformPublicKeyCredentialAssertion(
                rawClientDataJSON: try data(credential.response.clientDataJSON),
                credentialID: try data(credential.rawId),
                rawAuthenticatorData: try data(credential.response.authenticatorData),
                userID: try data(credential.response.userHandle ?? ""),
                signature: try data(credential.response.signature),
                prf: try results.map { results in
                    ASAuthorizationPublicKeyCredentialPRFAssertionOutput(
                        first: try key(results.first),
                        second: try results.second.map(key)
                    )
                }
            )
        )
    }

    /// The origin the request means: a web browser app's page's, else the relying party's site.
    private static func origin(_ clientData: ASPublicKeyCredentialClientData?, _ rpID: String) -> String {
        clientData?.origin ?? "https://\(rpID)"
    }

    private static func values(
        _ values: ASAuthorizationPublicKeyCredentialPRFAssertionInput.InputValues
    ) -> WebAuthn.PRFValues {
        WebAuthn.PRFValues(first: text(values.saltInput1), second: values.saltInput2.map(text))
    }

    private static func text(_ data: Data) -> String { Base64URL.encode(data) }

    private static func data(_ text: String) throws -> Data {
        do {
            return Data(try Base64URL.decode(text))
        } catch {
            throw ASAuthorizationError(
                .invalidResponse,
                reason: "keyportd's answer holds a value that is not base64url"
            )
        }
    }

    private static func key(_ text: String) throws -> SymmetricKey { SymmetricKey(data: try data(text)) }

    /// A failure as Apple's code: a cancelled task is ``ASAuthorizationError/Code-swift.enum/canceled``;
    /// keyportd's refusal: what the person declined or let pass is
    /// ``ASAuthorizationError/Code-swift.enum/canceled``, a passkey the relying party excluded
    /// ``ASAuthorizationError/Code-swift.enum/matchedExcludedCredential``, the rest
    /// ``ASAuthorizationError/Code-swift.enum/failed`` with keyportd's reason.
    private static func error(_ error: any Error) -> ASAuthorizationError {
        if let error = error as? ASAuthorizationError { return error }
        if error is CancellationError { return ASAuthorizationError(.canceled, reason: "the request was cancelled") }
        guard let error = error as? VarlinkError else { return ASAuthorizationError(.failed, reason: "\(error)") }
        let reason = error.message ?? error.name
        switch error.name {
        case WebAuthn.NotAllowedError.name: return ASAuthorizationError(.canceled, reason: reason)
        case WebAuthn.InvalidStateError.name: return ASAuthorizationError(.matchedExcludedCredential, reason: reason)
        default: return ASAuthorizationError(.failed, reason: reason)
        }
    }
}
