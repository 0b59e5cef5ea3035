import Dispatch
import Foundation
import KeyportInterfaces
import Synchronization
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where a credential provider program starts (Linux addition: on Apple platforms the system
/// loads the extension).
///
/// ```swift
/// final class Provider: ASCredentialProviderViewController {
///     override func provideCredentialWithoutUserInteraction(for request: any ASCredentialRequest) { … }
/// }
/// ASCredentialProviderExtension.run(Provider.self)
/// ```
///
/// keyportd starts the program named in the provider's manifest with a connected socket as
/// descriptor 3 (`LISTEN_FDS=1`, `LISTEN_PID`: systemd's socket-activation convention, as
/// `varlinkctl`'s `exec:` addresses use it); a listening socket there (socket activation proper,
/// as PyPI's varlink client starts a service) is served too. ``run(_:)`` serves `org.keyport.CredentialProvider` on
/// it: each call makes a new view controller of the given class on the main actor and calls the
/// method the call names; the reply is how its ``ASCredentialProviderExtensionContext`` ends. The
/// program exits when keyportd closes the socket.
public enum ASCredentialProviderExtension {
    /// Serves keyportd's requests with view controllers of `type`, until keyportd is done with
    /// the provider; then exits. A program started otherwise (by hand, without the socket) says
    /// how it is meant to be started and exits with status 2.
    public static func run(_ type: ASCredentialProviderViewController.Type) -> Never {
        let environment = ProcessInfo.processInfo.environment
        guard environment["LISTEN_FDS"] == "1", environment["LISTEN_PID"] == "\(getpid())" else {
            FileHandle.standardError.write(
                Data(
                    "\(CommandLine.arguments.first ?? "this program") is a credential provider: keyportd starts it when AutoFill needs it (register it with a manifest in keyport/providers/ and enable it: keyport providers enable ID)\n"
                        .utf8
                )
            )
            exit(2)
        }
        // As sd_listen_fds(unset: true) does: what the provider starts inherits neither the
        // variables nor the socket.
        for name in ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"] { unsetenv(name) }
        _ = fcntl(3, F_SETFD, FD_CLOEXEC)
        let host = ProviderHost(type: type)
        // keyportd (and systemd's varlinkctl) hand over a connected socket; a client that starts
        // services the classic way (PyPI's varlink, systemd-socket-activate) a listening one.
        var accepting: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        let listening = getsockopt(3, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) == 0 && accepting != 0
        Task {
            do {
                if listening {
                    try await host.server.serve(listeningDescriptor: 3)
                } else {
                    try await host.server.serve(connectedDescriptor: 3)
                }
                exit(0)
            } catch {
                FileHandle.standardError.write(Data("cannot serve keyportd's requests: \(error)\n".utf8))
                exit(1)
            }
        }
        dispatchMain()
    }
}

/// Turns `org.keyport.CredentialProvider` calls into view-controller calls.
struct ProviderHost: CredentialProvider.Server {
    let type: ASCredentialProviderViewController.Type

    var server: VarlinkServer {
        VarlinkServer(
            info: VarlinkServiceInfo(
                vendor: "Keyport",
                product: "credential provider",
                version: "1",
                url: CommandLine.arguments.first ?? ""
            ),
            interfaces: [self],
            maximumMessageSize: 1 << 20
        )
    }

    func provideWithoutUserInteraction(
        _ input: consuming CredentialProvider.ProvideWithoutUserInteraction.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> CredentialProvider.ProvideWithoutUserInteraction.Reply {
        let asked = Self.credentialRequest(input.request)
        return try await credential(input.request.type) { $0.provideCredentialWithoutUserInteraction(for: asked) }
    }

    func provideWithUserInteraction(
        _ input: consuming CredentialProvider.ProvideWithUserInteraction.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> CredentialProvider.ProvideWithUserInteraction.Reply {
        let asked = Self.credentialRequest(input.request)
        return try await credential(input.request.type) { $0.prepareInterfaceToProvideCredential(for: asked) }
    }

    func provideFromList(
        _ input: consuming CredentialProvider.ProvideFromList.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> CredentialProvider.ProvideFromList.Reply {
        let services = input.serviceIdentifiers.map(IdentityWire.service)
        let passkeyParameters = input.passkey.map(PasskeyWire.parameters)
        return try await credential(input.type) { controller in
            switch (input.type, passkeyParameters) {
            case (_, let parameters?): controller.prepareCredentialList(for: services, requestParameters: parameters)
            case (.password, nil), (.passkey, nil): controller.prepareCredentialList(for: services)
            case (.oneTimeCode, nil): controller.prepareOneTimeCodeCredentialList(for: services)
            }
        }
    }

    func registerPasskeyWithoutUserInteraction(
        _ input: consuming CredentialProvider.RegisterPasskeyWithoutUserInteraction.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> CredentialProvider.RegisterPasskeyWithoutUserInteraction.Reply {
        let asked = try Self.registrationRequest(input.request)
        return .init(
            registration: try await registration {
                $0.performWithoutUserInteractionIfPossible(passkeyRegistration: asked)
            }
        )
    }

    func registerPasskey(
        _ input: consuming CredentialProvider.RegisterPasskey.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> CredentialProvider.RegisterPasskey.Reply {
        let asked = try Self.registrationRequest(input.request)
        return .init(registration: try await registration { $0.prepareInterface(forPasskeyRegistration: asked) })
    }

    func savePasswordWithoutUserInteraction(
        _ input: consuming CredentialProvider.SavePasswordWithoutUserInteraction.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> CredentialProvider.SavePasswordWithoutUserInteraction.Reply {
        let asked = Self.saveRequest(input.request)
        try await completion(.saved) { $0.performWithoutUserInteractionIfPossible(savePasswordRequest: asked) }
        return .init()
    }

    func savePasswordWithUserInteraction(
        _ input: consuming CredentialProvider.SavePasswordWithUserInteraction.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> CredentialProvider.SavePasswordWithUserInteraction.Reply {
        let asked = Self.saveRequest(input.request)
        try await completion(.saved) { $0.prepareInterface(for: asked) }
        return .init()
    }

    func configure(
        _: consuming CredentialProvider.Configure.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> CredentialProvider.Configure.Reply {
        try await completion(.configured) { $0.prepareInterfaceForExtensionConfiguration() }
        return .init()
    }

    /// The request Apple's view controller is given for `request`.
    private static func credentialRequest(_ request: CredentialProvider.CredentialRequest) -> any ASCredentialRequest {
        let identity = IdentityWire.identity(request.credentialIdentity)
        switch request.type {
        case .password:
            return ASPasswordCredentialRequest(
                credentialIdentity: identity as? ASPasswordCredentialIdentity
                    ?? ASPasswordCredentialIdentity(
                        serviceIdentifier: identity.serviceIdentifier,
                        user: identity.user,
                        recordIdentifier: identity.recordIdentifier
                    )
            )
        case .oneTimeCode:
            return ASOneTimeCodeCredentialRequest(
                credentialIdentity: identity as? ASOneTimeCodeCredentialIdentity
                    ?? ASOneTimeCodeCredentialIdentity(
                        serviceIdentifier: identity.serviceIdentifier,
                        label: identity.user,
                        recordIdentifier: identity.recordIdentifier ?? ""
                    )
            )
        case .passkey:
            return PasskeyWire.request(.passkeyAssertion, identity, request.passkey)
        }
    }

    /// The registration request a view controller is given; keyportd always sends its WebAuthn parts.
    private static func registrationRequest(
        _ request: CredentialProvider.CredentialRequest
    ) throws(VarlinkError) -> ASPasskeyCredentialRequest {
        guard request.type == .passkey, request.passkey != nil else {
            throw .invalidParameter("request", "a passkey registration names a passkey and carries its WebAuthn parts")
        }
        return PasskeyWire.request(
            .passkeyRegistration,
            IdentityWire.identity(request.credentialIdentity),
            request.passkey
        )
    }

    /// The new passkey `body`, run on a new view controller, completes its request with.
    private func registration(
        _ body: @escaping @MainActor @Sendable (ASCredentialProviderViewController) -> Void
    ) async throws(VarlinkError) -> CredentialProvider.PasskeyRegistration {
        switch await outcome(of: body) {
        case .passkeyRegistration(let credential): return PasskeyWire.registration(credential)
        case .canceled(let error): throw Self.canceled(error)
        default: throw Self.otherKind
        }
    }

    private static func saveRequest(_ request: CredentialProvider.SavePasswordRequest) -> ASSavePasswordRequest {
        let event: ASSavePasswordRequest.Event =
            switch request.event {
            case .userInitiated: .userInitiated
            case .formDidDisappear: .formDidDisappear
            case .generatedPasswordFilled: .generatedPasswordFilled
            }
        return ASSavePasswordRequest(
            serviceIdentifier: IdentityWire.service(request.serviceIdentifier),
            credential: ASPasswordCredential(user: request.user, password: request.password),
            title: request.title,
            sessionID: request.sessionID,
            event: event
        )
    }

    /// The credential of `kind` that `body`, run on a new view controller, completes its request
    /// with; an error when it cancels, or completes it otherwise.
    private func credential(
        _ kind: CredentialProvider.CredentialType,
        _ body: @escaping @MainActor @Sendable (ASCredentialProviderViewController) -> Void
    ) async throws(VarlinkError) -> CredentialProvider.ProvideWithoutUserInteraction.Reply {
        switch (await outcome(of: body), kind) {
        case (.password(let credential), .password):
            return .init(
                credential: CredentialProvider.Credential(user: credential.user, password: credential.password)
            )
        case (.oneTimeCode(let credential), .oneTimeCode):
            return .init(credential: CredentialProvider.Credential(code: credential.code))
        case (.passkeyAssertion(let credential), .passkey), (.passkeyAssertion(let credential), .password):
            // A passkey list (prepareCredentialList(for:requestParameters:)) may be answered with either.
            return .init(credential: CredentialProvider.Credential(passkey: PasskeyWire.assertion(credential)))
        case (.canceled(let error), _):
            throw Self.canceled(error)
        default:
            throw Self.otherKind
        }
    }

    /// What a request that ends without a credential needs from `body`'s view controller.
    private enum Completion {
        case saved
        case configured
    }

    /// Returns once `body`, run on a new view controller, completed its request as `expected`;
    /// an error when it cancels, or completes it otherwise.
    private func completion(
        _ expected: Completion,
        _ body: @escaping @MainActor @Sendable (ASCredentialProviderViewController) -> Void
    ) async throws(VarlinkError) {
        switch (await outcome(of: body), expected) {
        case (.saved, .saved), (.configured, .configured): return
        case (.canceled(let error), _): throw Self.canceled(error)
        default: throw Self.otherKind
        }
    }

    private static func canceled(_ error: ASExtensionError) -> VarlinkError {
        VarlinkError(
            CredentialProvider.Canceled(code: error.code.rawValue, message: error.failureReason ?? "\(error.code)")
        )
    }

    private static var otherKind: VarlinkError {
        canceled(ASExtensionError(.failed, reason: "the provider completed the request as another kind of request"))
    }

    /// Makes a view controller for one call, runs `body` on it on the main actor, and waits for
    /// its context to end: how it ended.
    private func outcome(
        of body: @escaping @MainActor @Sendable (ASCredentialProviderViewController) -> Void
    ) async -> ASCredentialProviderExtensionContext.Outcome {
        let type = self.type
        let result = OneOutcome()
        let context = ASCredentialProviderExtensionContext { result.deliver($0) }
        Task { @MainActor in
            let controller = type.init()
            controller.context = context
            body(controller)
        }
        // keyportd closing the connection (it gave up, or is stopping) cancels this call: the
        // request ends then, whether or not the provider ever completes it.
        return await withTaskCancellationHandler {
            await result.wait()
        } onCancel: {
            _ = result.deliver(.canceled(ASExtensionError(.failed, reason: "keyportd withdrew the request")))
        }
    }
}

/// A request's outcome, taken once: from its context, or from keyportd withdrawing the request.
private final class OneOutcome: Sendable {
    private let state = Mutex<
        (
            waiter: CheckedContinuation<ASCredentialProviderExtensionContext.Outcome, Never>?,
            outcome: ASCredentialProviderExtensionContext.Outcome?
        )
    >((nil, nil))

    /// Takes `outcome` unless one was taken already; whether it was.
    func deliver(_ outcome: ASCredentialProviderExtensionContext.Outcome) -> Bool {
        let (taken, waiter) = state.withLock {
            state -> (Bool, CheckedContinuation<ASCredentialProviderExtensionContext.Outcome, Never>?) in
            guard state.outcome == nil else { return (false, nil) }
            state.outcome = outcome
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume(returning: outcome)
        return taken
    }

    /// The outcome, once there is one.
    func wait() async -> ASCredentialProviderExtensionContext.Outcome {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> ASCredentialProviderExtensionContext.Outcome? in
                if let outcome = state.outcome { return outcome }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
