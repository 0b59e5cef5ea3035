import Foundation

/// A credential provider: subclass it, override what your provider does, and start it with
/// ``ASCredentialProviderExtension/run(_:)``. keyportd makes one for each request and calls one
/// method; the request ends when the method's ``extensionContext`` is completed or cancelled.
///
/// On Apple platforms this is a view controller. On Linux a provider has no window of its own:
/// when it needs the person (to unlock, or to choose among several), it asks through keyportd's
/// agent, in ``prepareInterfaceToProvideCredential(for:)`` and the list methods. As on Apple
/// platforms,
/// ``provideCredentialWithoutUserInteraction(for:)`` must not ask the person anything: it answers,
/// or cancels with ``ASExtensionError/Code-swift.enum/userInteractionRequired``.
@MainActor
open class ASCredentialProviderViewController: NSObject {
    /// How this request ends.
    public var extensionContext: ASCredentialProviderExtensionContext { context }

    var context = ASCredentialProviderExtensionContext.ended

    /// A provider for one request; keyportd's launcher makes it (Linux: no nib, no bundle).
    public required override init() {
        super.init()
    }

    /// The person wants to pick one of the provider's passwords for these services (most specific
    /// first; possibly none). Complete with the chosen credential. By default the request fails:
    /// override it to offer a list.
    open func prepareCredentialList(for serviceIdentifiers: [ASCredentialServiceIdentifier]) {
        extensionContext.cancelRequest(
            withError: ASExtensionError(.failed, reason: "this provider offers no list of passwords")
        )
    }

    /// The person wants to pick one of the provider's one-time codes for these services. By
    /// default the request fails: override it to offer a list.
    open func prepareOneTimeCodeCredentialList(for serviceIdentifiers: [ASCredentialServiceIdentifier]) {
        extensionContext.cancelRequest(
            withError: ASExtensionError(.failed, reason: "this provider offers no list of one-time codes")
        )
    }

    /// The person wants to sign in to the relying party of `requestParameters` with one of the
    /// provider's passkeys (or a password for `serviceIdentifiers`): complete with
    /// ``ASCredentialProviderExtensionContext/completeAssertionRequest(using:completionHandler:)``
    /// (or a password). By default the request fails: override it to offer a list.
    open func prepareCredentialList(
        for serviceIdentifiers: [ASCredentialServiceIdentifier],
        requestParameters: ASPasskeyCredentialRequestParameters
    ) {
        extensionContext.cancelRequest(
            withError: ASExtensionError(.failed, reason: "this provider offers no list of passkeys")
        )
    }

    /// Make a passkey for the account `registrationRequest` names (an ``ASPasskeyCredentialRequest``
    /// of type ``ASCredentialRequestType/passkeyRegistration``), asking the person what you must;
    /// complete with
    /// ``ASCredentialProviderExtensionContext/completeRegistrationRequest(using:completionHandler:)``.
    /// By default the request fails.
    open func prepareInterface(forPasskeyRegistration registrationRequest: any ASCredentialRequest) {
        extensionContext.cancelRequest(
            withError: ASExtensionError(.failed, reason: "this provider does not make passkeys")
        )
    }

    /// Make a passkey without the person, or cancel with
    /// ``ASExtensionError/Code-swift.enum/userInteractionRequired`` (what it does by default) so that
    /// ``prepareInterface(forPasskeyRegistration:)`` is called next.
    open func performWithoutUserInteractionIfPossible(
        passkeyRegistration registrationRequest: ASPasskeyCredentialRequest
    ) {
        extensionContext.cancelRequest(withError: ASExtensionError(.userInteractionRequired))
    }

    /// Answer `credentialRequest` without the person: complete it, or cancel it with
    /// ``ASExtensionError/Code-swift.enum/userInteractionRequired`` (which is what it does by default)
    /// so that ``prepareInterfaceToProvideCredential(for:)`` is called next.
    open func provideCredentialWithoutUserInteraction(for credentialRequest: any ASCredentialRequest) {
        extensionContext.cancelRequest(withError: ASExtensionError(.userInteractionRequired))
    }

    /// Answer `credentialRequest`, asking the person what you must. By default the request fails.
    open func prepareInterfaceToProvideCredential(for credentialRequest: any ASCredentialRequest) {
        extensionContext.cancelRequest(
            withError: ASExtensionError(.failed, reason: "this provider cannot ask the person")
        )
    }

    /// Save the password of `savePasswordRequest` without the person: complete with
    /// ``ASCredentialProviderExtensionContext/completeSavePasswordRequest(completionHandler:)``, or
    /// cancel with ``ASExtensionError/Code-swift.enum/userInteractionRequired`` (what it does by
    /// default) so that ``prepareInterface(for:)`` is called next. Only providers whose manifest
    /// declares `SavesPasswords` are asked.
    open func performWithoutUserInteractionIfPossible(savePasswordRequest: ASSavePasswordRequest) {
        extensionContext.cancelRequest(withError: ASExtensionError(.userInteractionRequired))
    }

    /// Save the password of `savePasswordRequest`, asking the person what you must (through
    /// ``ASCredentialProviderPrompt``). By default the request fails.
    open func prepareInterface(for savePasswordRequest: ASSavePasswordRequest) {
        extensionContext.cancelRequest(
            withError: ASExtensionError(.failed, reason: "this provider does not save passwords")
        )
    }

    /// Show the provider's settings; complete with
    /// ``ASCredentialProviderExtensionContext/completeExtensionConfigurationRequest()``, which is
    /// what it does by default.
    open func prepareInterfaceForExtensionConfiguration() {
        extensionContext.completeExtensionConfigurationRequest()
    }
}
