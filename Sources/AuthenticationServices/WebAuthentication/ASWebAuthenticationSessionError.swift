import Foundation

/// The domain of ``ASWebAuthenticationSessionError``, as on Apple platforms.
public let ASWebAuthenticationSessionErrorDomain = "com.apple.AuthenticationServices.WebAuthenticationSession"

/// The error a web authentication session ends with, with Apple's domain and codes.
///
/// Code written for Apple platforms checks `error.code == .canceledLogin`; that keeps working. On
/// Linux a session can end without a callback for more reasons than a person cancelling (the
/// browser closed, the timeout passed); all of them are `canceledLogin`, as on Apple platforms,
/// and ``cause`` (a Linux addition) tells them apart.
public struct ASWebAuthenticationSessionError: Error, Hashable, Sendable, CustomNSError, CustomStringConvertible {
    /// Apple's error codes.
    public enum Code: Int, Hashable, Sendable {
        /// The person cancelled, or the session ended without a callback.
        case canceledLogin = 1
        /// No presentation context provider was set (Apple platforms; on Linux none is needed).
        case presentationContextNotProvided = 2
        /// The provider's anchor could not show the browser (Apple platforms).
        case presentationContextInvalid = 3
    }

    /// Why a session ended without a callback (Linux addition).
    public enum Cause: Hashable, Sendable {
        /// `cancel()`, or the task awaiting ``WebAuthenticationSession`` was cancelled.
        case cancelled
        /// No callback arrived within ``ASWebAuthenticationSession/timeout``.
        case timedOut
        /// The browser Keyport launched for an ephemeral session exited before the callback.
        case browserClosed
        /// The browser or the callback channel failed; the text says how.
        case failed(String)
    }

    /// What kind of failure this is; Apple's codes.
    public let code: Code
    /// Why the session ended (Linux addition); `nil` when the error was made by other code.
    public let cause: Cause?

    /// ``Code-swift.enum/canceledLogin``, for `catch ASWebAuthenticationSessionError.canceledLogin`.
    public static var canceledLogin: Code { .canceledLogin }
    /// ``Code-swift.enum/presentationContextNotProvided``.
    public static var presentationContextNotProvided: Code { .presentationContextNotProvided }
    /// ``Code-swift.enum/presentationContextInvalid``.
    public static var presentationContextInvalid: Code { .presentationContextInvalid }

    /// An error with `code` and no cause, as other code makes one.
    public init(_ code: Code) {
        self.code = code
        self.cause = nil
    }

    /// An error with the reason the session ended (Linux addition).
    public init(_ code: Code, cause: Cause) {
        self.code = code
        self.cause = cause
    }

    /// ``ASWebAuthenticationSessionErrorDomain``, Apple's domain.
    public static var errorDomain: String { ASWebAuthenticationSessionErrorDomain }
    /// The code's raw value, as `NSError.code` shows it.
    public var errorCode: Int { code.rawValue }
    /// ``description`` under `NSLocalizedDescriptionKey`.
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: description] }

    /// What happened, in a sentence: from the cause when there is one, else from the code.
    public var description: String {
        switch cause {
        case .cancelled: return "The sign-in was cancelled."
        case .timedOut: return "No sign-in callback arrived before the timeout."
        case .browserClosed: return "The browser was closed before the sign-in finished."
        case .failed(let reason): return "The sign-in could not go on: \(reason)."
        case nil:
            switch code {
            case .canceledLogin: return "The sign-in was cancelled."
            case .presentationContextNotProvided: return "No presentation context was provided."
            case .presentationContextInvalid: return "The presentation context is invalid."
            }
        }
    }
}
