import Foundation
import KeyportInterfaces
import Varlink

/// A kind of credential an app can ask for: passwords, platform passkeys.
public protocol ASAuthorizationProvider: NSObjectProtocol, Sendable {}

/// A request for one kind of credential, made by its provider.
open class ASAuthorizationRequest: NSObject, NSCopying, @unchecked Sendable {
    /// The provider that made the request.
    public let provider: any ASAuthorizationProvider

    init(provider: any ASAuthorizationProvider) {
        self.provider = provider
    }

    /// This request (a copy shares its values).
    public func copy(with zone: NSZone? = nil) -> Any { self }
}

/// What a successful authorization hands the app: the credential, and the provider of its kind.
open class ASAuthorization: NSObject, @unchecked Sendable {
    /// The provider of the request that succeeded.
    public let provider: any ASAuthorizationProvider
    /// The credential.
    public let credential: any ASAuthorizationCredential

    init(provider: any ASAuthorizationProvider, credential: any ASAuthorizationCredential) {
        self.provider = provider
        self.credential = credential
    }
}

/// Hears how a controller's requests ended. Both methods do nothing by default, as Apple's are
/// optional.
@MainActor
public protocol ASAuthorizationControllerDelegate: NSObjectProtocol {
    /// The request succeeded with `authorization`.
    func authorizationController(
        controller: ASAuthorizationController,
        didCompleteWithAuthorization authorization: ASAuthorization
    )
    /// The request failed: an ``ASAuthorizationError`` says why.
    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error)
}

extension ASAuthorizationControllerDelegate {
    /// Does nothing.
    public func authorizationController(
        controller: ASAuthorizationController,
        didCompleteWithAuthorization authorization: ASAuthorization
    ) {}

    /// Does nothing.
    public func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {}
}

/// Where the system shows its sign-in sheet. On Linux the person answers in keyportd's agent, so
/// the anchor is asked for, as on Apple platforms, but not drawn on.
@MainActor
public protocol ASAuthorizationControllerPresentationContextProviding: NSObjectProtocol {
    /// The window to present over.
    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor
}

/// Performs an app's authorization requests: a platform passkey's registration or assertion
/// through keyportd (org.keyport.WebAuthn), which checks that the app may speak for the relying
/// party — its manifest associates the domain, and the site confirms it — asks the person in the
/// agent, and asks the person's passkey provider; or a saved password for the app's confirmed
/// domains (org.keyport.AutoFill), which the person chooses in the agent. The delegate hears the result on the main actor.
@MainActor
open class ASAuthorizationController: NSObject {
    /// Options for ``performRequests(options:)``.
    public struct RequestOptions: OptionSet, Sendable {
        /// The bits.
        public let rawValue: UInt
        /// Options with these bits.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Fail at once when no credential is at hand rather than offer other ways (here: when
        /// keyportd has no passkey for an assertion, nothing else is offered either way).
        public static let preferImmediatelyAvailableCredentials = RequestOptions(rawValue: 1 << 0)
    }

    /// The requests this controller performs.
    public let authorizationRequests: [ASAuthorizationRequest]
    /// Hears how the requests ended.
    open weak var delegate: (any ASAuthorizationControllerDelegate)?
    /// Gives the window to present over.
    open weak var presentationContextProvider: (any ASAuthorizationControllerPresentationContextProviding)?

    private var running: Task<Void, Never>?

    /// A controller for `authorizationRequests`.
    public init(authorizationRequests: [ASAuthorizationRequest]) {
        self.authorizationRequests = authorizationRequests
    }

    /// Performs the requests through keyportd (a platform passkey's registration or assertion, a
    /// saved password), in the order given, as one sign-in: a passkey assertion for which keyportd
    /// lists no passkey, or a password request with none saved, gives way to the next request;
    /// the last is performed whatever it finds. Requests of other kinds are passed over.
    ///
    /// The controller is held until its delegate has heard, so an app may make it in a function
    /// and let it go, as on Apple platforms.
    open func performRequests() {
        performRequests(options: [])
    }

    /// Performs the requests with `options`.
    open func performRequests(options: RequestOptions) {
        let environment = ProcessInfo.processInfo.environment
        let requests = authorizationRequests.filter {
            $0 is ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest
                || $0 is ASAuthorizationPlatformPublicKeyCredentialAssertionRequest
                || $0 is ASAuthorizationPasswordRequest
        }
        guard !requests.isEmpty else {
            finish(.failure(ASAuthorizationError(.notHandled, reason: "none of the requests is one keyportd performs")))
            return
        }
        _ = presentationContextProvider?.presentationAnchor(for: self)
        // `self` is held by the task until `finish`, which lets the task go.
        running = Task {
            let result: Result<ASAuthorization, ASAuthorizationError>
            do throws(ASAuthorizationError) {
                result = .success(try await Self.perform(requests, environment: environment))
            } catch {
                result = .failure(error)
            }
            self.finish(result)
        }
    }

    /// The first of `requests` with a credential to give (see ``performRequests()``).
    private nonisolated static func perform(
        _ requests: [ASAuthorizationRequest],
        environment: [String: String]
    ) async throws(ASAuthorizationError) -> ASAuthorization {
        for (index, request) in requests.enumerated() {
            if Task.isCancelled { throw ASAuthorizationError(.canceled, reason: "the request was cancelled") }
            let last = index == requests.count - 1
            if let password = request as? ASAuthorizationPasswordRequest {
                if let given = try await PasswordClient.perform(
                    password,
                    environment: environment,
                    passingOverNone: !last
                ) {
                    return given
                }
                continue
            }
            if !last, let assertion = request as? ASAuthorizationPlatformPublicKeyCredentialAssertionRequest,
                try await !WebAuthnClient.hasPasskeys(for: assertion, environment: environment)
            {
                continue
            }
            return try await WebAuthnClient.perform(request, environment: environment)
        }
        throw ASAuthorizationError(.notHandled, reason: "none of the requests is one keyportd performs")
    }

    /// Stops the requests; the delegate hears ``ASAuthorizationError/Code-swift.enum/canceled``.
    open func cancel() {
        running?.cancel()
    }

    private func finish(_ result: Result<ASAuthorization, ASAuthorizationError>) {
        running = nil
        switch result {
        case .success(let authorization):
            delegate?.authorizationController(controller: self, didCompleteWithAuthorization: authorization)
        case .failure(let error):
            delegate?.authorizationController(controller: self, didCompleteWithError: error)
        }
    }
}
