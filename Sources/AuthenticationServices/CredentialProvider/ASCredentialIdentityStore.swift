import Foundation
import KeyportInterfaces
import Varlink

/// The domain of ``ASCredentialIdentityStoreError``, Apple's.
public let ASCredentialIdentityStoreErrorDomain = "com.apple.AuthenticationServices.CredentialIdentityStoreErrorDomain"

/// An error of ``ASCredentialIdentityStore``, with Apple's domain and codes; the reason is in
/// ``userInfo`` under `NSLocalizedFailureReasonErrorKey`.
///
/// | What happened | Code |
/// |---|---|
/// | The provider is not enabled for AutoFill in Settings (`keyport providers enable ID`) | ``Code-swift.enum/storeDisabled`` |
/// | keyportd is not running, the caller is not a registered provider, an identity names no host or is of a kind the manifest does not declare, the store could not be written | ``Code-swift.enum/internalError`` |
///
/// Errors are equal when their codes are.
public struct ASCredentialIdentityStoreError: Error, Hashable, Sendable, CustomNSError, CustomStringConvertible {
    /// Apple's codes.
    public enum Code: Int, Hashable, Sendable {
        /// The store failed; the reason says why.
        case internalError = 0
        /// The provider is not enabled for AutoFill in Settings.
        case storeDisabled = 1
        /// The store is busy (Apple platforms; keyportd orders changes instead).
        case storeBusy = 2
    }

    /// What kind of failure this is.
    public let code: Code
    /// The details: the reason under `NSLocalizedFailureReasonErrorKey`, a sentence under
    /// `NSLocalizedDescriptionKey`. Never changed once made (hence not checked for `Sendable`).
    public nonisolated(unsafe) let userInfo: [String: Any]

    /// ``Code-swift.enum/internalError``.
    public static var internalError: Code { .internalError }
    /// ``Code-swift.enum/storeDisabled``.
    public static var storeDisabled: Code { .storeDisabled }
    /// ``Code-swift.enum/storeBusy``.
    public static var storeBusy: Code { .storeBusy }

    /// An error with `code` and the details in `userInfo`.
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        self.userInfo = userInfo
    }

    /// An error with `code` whose reason is `reason` (Linux addition).
    public init(_ code: Code, reason: String) {
        self.init(
            code,
            userInfo: [
                NSLocalizedFailureReasonErrorKey: reason,
                NSLocalizedDescriptionKey: "The credential identity store refused the change: \(reason)",
            ]
        )
    }

    /// The reason under `NSLocalizedFailureReasonErrorKey`, when there is one (Linux addition).
    public var failureReason: String? { userInfo[NSLocalizedFailureReasonErrorKey] as? String }
    /// ``ASCredentialIdentityStoreErrorDomain``.
    public static var errorDomain: String { ASCredentialIdentityStoreErrorDomain }
    /// The code's raw value.
    public var errorCode: Int { code.rawValue }
    /// ``userInfo``.
    public var errorUserInfo: [String: Any] { userInfo }
    /// The sentence under `NSLocalizedDescriptionKey`, else the code.
    public var description: String {
        userInfo[NSLocalizedDescriptionKey] as? String ?? "The credential identity store failed (\(code))."
    }

    /// Equal when the codes are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    /// Hashes the code.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}

/// Whether AutoFill uses the calling provider's identities.
open class ASCredentialIdentityStoreState: NSObject, @unchecked Sendable {
    /// The provider is enabled for AutoFill in Settings.
    public let isEnabled: Bool
    /// The store takes changes one by one (always, with keyportd).
    public let supportsIncrementalUpdates: Bool

    init(isEnabled: Bool, supportsIncrementalUpdates: Bool) {
        self.isEnabled = isEnabled
        self.supportsIncrementalUpdates = supportsIncrementalUpdates
    }
}

/// The identities this provider offers for AutoFill, kept by keyportd (`org.keyport.IdentityStore`)
/// for this app alone: only identities, never a secret.
///
/// keyportd recognises the calling app as it recognises an exporter (its Flatpak or desktop app
/// id, else its program), so this works from the provider's app and from the provider extension
/// keyportd starts alike. Every change is all or nothing.
open class ASCredentialIdentityStore: NSObject, @unchecked Sendable {
    /// The store.
    public static let shared = ASCredentialIdentityStore()

    private let environment: [String: String]

    /// A store reached through keyportd as `environment` places it (Linux addition, for tests).
    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    // MARK: - State

    /// Whether AutoFill uses this provider's identities; not enabled when keyportd cannot be asked.
    public func state() async -> ASCredentialIdentityStoreState {
        let state = try? await call(IdentityStore.State.self, .init())
        return ASCredentialIdentityStoreState(
            isEnabled: state?.isEnabled ?? false,
            supportsIncrementalUpdates: state?.supportsIncrementalUpdates ?? true
        )
    }

    /// ``state()`` with a completion handler.
    public func getState(_ completion: @escaping @Sendable (ASCredentialIdentityStoreState) -> Void) {
        Task { completion(await state()) }
    }

    // MARK: - Changes

    /// Adds identities; one that matches a stored identity replaces it.
    public func saveCredentialIdentities(_ credentialIdentities: [any ASCredentialIdentity]) async throws {
        try await change(IdentityStore.Save.self, credentialIdentities)
    }

    /// ``saveCredentialIdentities(_:)-(_)`` with a completion handler (Apple's form for password
    /// identities).
    public func saveCredentialIdentities(
        _ credentialIdentities: [ASPasswordCredentialIdentity],
        completion: (@Sendable (Bool, (any Error)?) -> Void)? = nil
    ) {
        complete(completion) {
            try await self.saveCredentialIdentities(credentialIdentities as [any ASCredentialIdentity])
        }
    }

    /// ``saveCredentialIdentities(_:)-(_)`` with a completion handler, for identities of any kind.
    public func saveCredentialIdentityEntries(
        _ credentialIdentities: [any ASCredentialIdentity],
        completion: (@Sendable (Bool, (any Error)?) -> Void)? = nil
    ) {
        complete(completion) { try await self.saveCredentialIdentities(credentialIdentities) }
    }

    /// Removes the stored identities that match these.
    public func removeCredentialIdentities(_ credentialIdentities: [any ASCredentialIdentity]) async throws {
        try await change(IdentityStore.Remove.self, credentialIdentities)
    }

    /// ``removeCredentialIdentities(_:)-(_)`` with a completion handler (Apple's form for password
    /// identities).
    public func removeCredentialIdentities(
        _ credentialIdentities: [ASPasswordCredentialIdentity],
        completion: (@Sendable (Bool, (any Error)?) -> Void)? = nil
    ) {
        complete(completion) {
            try await self.removeCredentialIdentities(credentialIdentities as [any ASCredentialIdentity])
        }
    }

    /// ``removeCredentialIdentities(_:)-(_)`` with a completion handler, for identities of any kind.
    public func removeCredentialIdentityEntries(
        _ credentialIdentities: [any ASCredentialIdentity],
        completion: (@Sendable (Bool, (any Error)?) -> Void)? = nil
    ) {
        complete(completion) { try await self.removeCredentialIdentities(credentialIdentities) }
    }

    /// Replaces every identity of this provider, of every kind, with these.
    public func replaceCredentialIdentities(_ newCredentialIdentities: [any ASCredentialIdentity]) async throws {
        try await change(IdentityStore.Replace.self, newCredentialIdentities)
    }

    /// ``replaceCredentialIdentities(_:)`` with a completion handler (Apple's form for password
    /// identities).
    public func replaceCredentialIdentities(
        with newCredentialIdentities: [ASPasswordCredentialIdentity],
        completion: (@Sendable (Bool, (any Error)?) -> Void)? = nil
    ) {
        complete(completion) {
            try await self.replaceCredentialIdentities(newCredentialIdentities as [any ASCredentialIdentity])
        }
    }

    /// ``replaceCredentialIdentities(_:)`` with a completion handler, for identities of any kind.
    public func replaceCredentialIdentityEntries(
        _ newCredentialIdentities: [any ASCredentialIdentity],
        completion: (@Sendable (Bool, (any Error)?) -> Void)? = nil
    ) {
        complete(completion) { try await self.replaceCredentialIdentities(newCredentialIdentities) }
    }

    /// Removes every identity of this provider.
    public func removeAllCredentialIdentities() async throws {
        _ = try await call(IdentityStore.RemoveAll.self, .init())
    }

    /// ``removeAllCredentialIdentities()`` with a completion handler.
    public func removeAllCredentialIdentities(_ completion: (@Sendable (Bool, (any Error)?) -> Void)?) {
        complete(completion) { try await self.removeAllCredentialIdentities() }
    }

    // MARK: - Reading

    /// This provider's identities: all of them, or those whose service fits `serviceIdentifier`
    /// as AutoFill matches services (by registrable domain), best first; of `credentialIdentityTypes`.
    /// None when keyportd cannot be asked.
    public func credentialIdentities(
        forService serviceIdentifier: ASCredentialServiceIdentifier?,
        credentialIdentityTypes: ASCredentialIdentityTypes
    ) async -> [any ASCredentialIdentity] {
        let input = IdentityStore.List.Parameters(
            service: serviceIdentifier.map(IdentityWire.service),
            kinds: IdentityWire.kinds(credentialIdentityTypes)
        )
        guard let listed = try? await call(IdentityStore.List.self, input) else { return [] }
        return listed.identities.map(IdentityWire.identity)
    }

    // MARK: - keyportd

    private func change<Method: VarlinkMethodType>(
        _ method: Method.Type,
        _ identities: [any ASCredentialIdentity]
    ) async throws where Method.Parameters == IdentityStore.Save.Parameters {
        var wire: [IdentityStore.CredentialIdentity] = []
        for identity in identities {
            guard let converted = IdentityWire.identity(identity) else {
                throw ASCredentialIdentityStoreError(
                    .internalError,
                    reason: "\(type(of: identity)) identities cannot be stored here (passwords and one-time codes can)"
                )
            }
            wire.append(converted)
        }
        _ = try await call(method, IdentityStore.Save.Parameters(identities: wire))
    }

    /// Calls `method` of org.keyport.IdentityStore; keyportd's refusals become the store's errors.
    private func call<Method: VarlinkMethodType>(
        _ method: Method.Type,
        _ parameters: Method.Parameters
    ) async throws -> Method.Reply {
        do {
            return try await DaemonClient.withConnection(environment: environment) { connection in
                try await connection.call(method, parameters)
            }
        } catch let error as VarlinkError {
            let reason = error.sentence
            let code: ASCredentialIdentityStoreError.Code =
                error.name == IdentityStore.StoreDisabled.name ? .storeDisabled : .internalError
            throw ASCredentialIdentityStoreError(code, reason: reason)
        } catch {
            throw ASCredentialIdentityStoreError(.internalError, reason: "\(error)")
        }
    }

    private func complete(
        _ completion: (@Sendable (Bool, (any Error)?) -> Void)?,
        _ body: @escaping @Sendable () async throws -> Void
    ) {
        Task {
            do {
                try await body()
                completion?(true, nil)
            } catch {
                completion?(false, error)
            }
        }
    }
}
