import Foundation

/// How a provider ends the request it was given: with a credential, with an error, or (for its
/// settings) done. Completing a request ends it: a second completion is not a second answer, and
/// its handler hears `expired: true`.
open class ASCredentialProviderExtensionContext: NSObject, @unchecked Sendable {
    /// What the provider ended the request with.
    enum Outcome: Sendable {
        case password(ASPasswordCredential)
        case oneTimeCode(ASOneTimeCodeCredential)
        case passkeyAssertion(ASPasskeyAssertionCredential)
        case passkeyRegistration(ASPasskeyRegistrationCredential)
        case configured
        case saved
        case canceled(ASExtensionError)
    }

    /// Takes the outcome; `false` once one was taken already.
    private let finish: @Sendable (Outcome) -> Bool

    init(finish: @escaping @Sendable (Outcome) -> Bool) {
        self.finish = finish
    }

    /// A context whose request is over already (a view controller made outside a request).
    static var ended: ASCredentialProviderExtensionContext { ASCredentialProviderExtensionContext { _ in false } }

    /// Answers a password request with `credential`; `completionHandler` hears whether the request
    /// had expired (ended already, or given up by keyportd) instead.
    public func completeRequest(
        withSelectedCredential credential: ASPasswordCredential,
        completionHandler: (@Sendable (Bool) -> Void)? = nil
    ) {
        let taken = finish(.password(credential))
        completionHandler?(!taken)
    }

    /// ``completeRequest(withSelectedCredential:completionHandler:)``; returns whether the request
    /// had expired.
    public func completeRequest(withSelectedCredential credential: ASPasswordCredential) async -> Bool {
        !finish(.password(credential))
    }

    /// Answers a one-time-code request with `credential`; `completionHandler` hears whether the
    /// request had expired.
    public func completeOneTimeCodeRequest(
        using credential: ASOneTimeCodeCredential,
        completionHandler: (@Sendable (Bool) -> Void)? = nil
    ) {
        let taken = finish(.oneTimeCode(credential))
        completionHandler?(!taken)
    }

    /// ``completeOneTimeCodeRequest(using:completionHandler:)``; returns whether the request had
    /// expired.
    public func completeOneTimeCodeRequest(using credential: ASOneTimeCodeCredential) async -> Bool {
        !finish(.oneTimeCode(credential))
    }

    /// Answers a passkey assertion request with `credential`; `completionHandler` hears whether
    /// the request had expired.
    public func completeAssertionRequest(
        using credential: ASPasskeyAssertionCredential,
        completionHandler: (@Sendable (Bool) -> Void)? = nil
    ) {
        let taken = finish(.passkeyAssertion(credential))
        completionHandler?(!taken)
    }

    /// ``completeAssertionRequest(using:completionHandler:)``; returns whether the request had
    /// expired.
    public func completeAssertionRequest(using credential: ASPasskeyAssertionCredential) async -> Bool {
        !finish(.passkeyAssertion(credential))
    }

    /// Answers a passkey registration request with the new passkey; `completionHandler` hears
    /// whether the request had expired. Save its identity in ``ASCredentialIdentityStore`` too,
    /// so that sign-ins find it.
    public func completeRegistrationRequest(
        using credential: ASPasskeyRegistrationCredential,
        completionHandler: (@Sendable (Bool) -> Void)? = nil
    ) {
        let taken = finish(.passkeyRegistration(credential))
        completionHandler?(!taken)
    }

    /// ``completeRegistrationRequest(using:completionHandler:)``; returns whether the request had
    /// expired.
    public func completeRegistrationRequest(using credential: ASPasskeyRegistrationCredential) async -> Bool {
        !finish(.passkeyRegistration(credential))
    }

    /// Says that the password of a save request (``ASSavePasswordRequest``) is saved; update
    /// ``ASCredentialIdentityStore`` as well, so AutoFill finds it. `completionHandler` hears whether
    /// the request had expired.
    public func completeSavePasswordRequest(completionHandler: (@Sendable (Bool) -> Void)? = nil) {
        let taken = finish(.saved)
        completionHandler?(!taken)
    }

    /// ``completeSavePasswordRequest(completionHandler:)``; returns whether the request had expired.
    public func completeSavePasswordRequest() async -> Bool {
        !finish(.saved)
    }

    /// Ends the request without a credential. An ``ASExtensionError`` says why — or an `NSError`
    /// of ``ASExtensionErrorDomain`` with one of its codes, as Apple's documentation writes it
    /// (``ASExtensionError/Code-swift.enum/userInteractionRequired`` leads to
    /// ``ASCredentialProviderViewController/prepareInterfaceToProvideCredential(for:)``); any other
    /// error ends it as ``ASExtensionError/Code-swift.enum/failed`` with its description.
    public func cancelRequest(withError error: any Error) {
        let reason = ASExtensionError(bridging: error) ?? ASExtensionError(.failed, reason: "\(error)")
        _ = finish(.canceled(reason))
    }

    /// Ends the request for the provider's settings
    /// (``ASCredentialProviderViewController/prepareInterfaceForExtensionConfiguration()``).
    public func completeExtensionConfigurationRequest() {
        _ = finish(.configured)
    }
}
