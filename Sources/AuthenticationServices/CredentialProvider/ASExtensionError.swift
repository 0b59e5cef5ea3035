import Foundation

/// The domain of ``ASExtensionError``, Apple's.
public let ASExtensionErrorDomain = "com.apple.AuthenticationServices.ExtensionErrorDomain"

/// Why a provider ended a request without a credential
/// (``ASCredentialProviderExtensionContext/cancelRequest(withError:)``), with Apple's codes.
///
/// The code is what AutoFill acts on: ``Code-swift.enum/userInteractionRequired`` from
/// ``ASCredentialProviderViewController/provideCredentialWithoutUserInteraction(for:)`` makes
/// keyportd call ``ASCredentialProviderViewController/prepareInterfaceToProvideCredential(for:)``
/// next, as on Apple platforms; the others end the request with that reason.
public struct ASExtensionError: Error, Hashable, Sendable, CustomNSError, CustomStringConvertible {
    /// Apple's codes.
    public enum Code: Int, Hashable, Sendable {
        /// The request failed.
        case failed = 0
        /// The person cancelled.
        case userCanceled = 1
        /// The provider needs the person (to unlock, or to choose).
        case userInteractionRequired = 100
        /// The identity asked for is not (any longer) the provider's.
        case credentialIdentityNotFound = 101
        /// A passkey registration matched an excluded credential (Apple platforms).
        case matchedExcludedCredential = 102
    }

    /// What kind of failure this is.
    public let code: Code
    /// The details; the reason under `NSLocalizedFailureReasonErrorKey`. Never changed once made.
    public nonisolated(unsafe) let userInfo: [String: Any]

    /// ``Code-swift.enum/failed``.
    public static var failed: Code { .failed }
    /// ``Code-swift.enum/userCanceled``.
    public static var userCanceled: Code { .userCanceled }
    /// ``Code-swift.enum/userInteractionRequired``.
    public static var userInteractionRequired: Code { .userInteractionRequired }
    /// ``Code-swift.enum/credentialIdentityNotFound``.
    public static var credentialIdentityNotFound: Code { .credentialIdentityNotFound }
    /// ``Code-swift.enum/matchedExcludedCredential``.
    public static var matchedExcludedCredential: Code { .matchedExcludedCredential }

    /// An error with `code` and the details in `userInfo`.
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        self.userInfo = userInfo
    }

    /// An error with `code` whose reason is `reason` (Linux addition).
    public init(_ code: Code, reason: String) {
        self.init(code, userInfo: [NSLocalizedFailureReasonErrorKey: reason])
    }

    /// The reason under `NSLocalizedFailureReasonErrorKey`, when there is one (Linux addition).
    public var failureReason: String? { userInfo[NSLocalizedFailureReasonErrorKey] as? String }
    /// ``ASExtensionErrorDomain``.
    public static var errorDomain: String { ASExtensionErrorDomain }
    /// The code's raw value.
    public var errorCode: Int { code.rawValue }
    /// ``userInfo``.
    public var errorUserInfo: [String: Any] { userInfo }
    /// The code, and the reason when there is one.
    public var description: String { "ASExtensionError \(code)" + (failureReason.map { ": \($0)" } ?? "") }

    /// Equal when the codes are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    /// Hashes the code.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// `error` as an ``ASExtensionError``: the Swift error itself, or an `NSError` of
    /// ``ASExtensionErrorDomain`` with one of its codes — the two mean the same, as they bridge on
    /// Apple platforms (Apple's documentation cancels with
    /// `NSError(domain: ASExtensionErrorDomain, code: …)`; on Linux `as? ASExtensionError` does not
    /// bridge it). `nil` for anything else.
    package init?(bridging error: any Error) {
        if let error = error as? ASExtensionError {
            self = error
            return
        }
        let bridged = error as NSError
        guard bridged.domain == ASExtensionErrorDomain, let code = Code(rawValue: bridged.code) else { return nil }
        self.init(code, userInfo: bridged.userInfo)
    }
}
