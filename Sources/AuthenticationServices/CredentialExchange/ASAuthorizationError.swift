import Foundation

/// The domain of ``ASAuthorizationError``, Apple's: `NSError` shows it for errors of the import and
/// export managers.
public let ASAuthorizationErrorDomain = "com.apple.AuthenticationServices.AuthorizationError"

/// An error of the credential import and export managers, with Apple's domain, codes and `userInfo`.
///
/// Code written for Apple platforms keeps working: `error.code == .credentialExport`,
/// `catch ASAuthorizationError.canceled`, `(error as NSError).code == 1008`. As on Apple platforms,
/// the details are in ``userInfo``: the reason under `NSLocalizedFailureReasonErrorKey`, and on
/// Linux also a sentence under `NSLocalizedDescriptionKey` that includes it, so
/// `localizedDescription` says what happened and what to do.
///
/// ## How keyportd's answers map to codes
///
/// The managers talk to keyportd (the `org.keyport.Exchange` Varlink interface). keyportd's
/// message is always the reason in ``userInfo``, followed, when the data is not a CXF document an
/// importer could use, by the first ten problems keyportd found. The codes:
///
/// | What happened | Code |
/// |---|---|
/// | The person declined in the system's dialog (`Declined`), or the awaiting task was cancelled | ``Code-swift.enum/canceled`` |
/// | No agent is running to ask the person (`NoAgent`) | ``Code-swift.enum/notInteractive`` |
/// | The app may not export, no app can import, the data is not CXF, the importer failed, keyportd is stopping, no export was requested (`NotAllowed`, `NoImporter`, `InvalidData`, `ImporterFailed`, `ShuttingDown`, `UnknownExport`, any other error); and, found before asking keyportd, `exportCredentials` without `requestExport`, a CXF version this module cannot write | ``Code-swift.enum/credentialExport`` when exporting |
/// | The token is unknown, expired, used or not this process's; the exporter went away; keyportd is stopping; the data is not CXF this module reads (`InvalidToken`, `ImporterFailed`, `ShuttingDown`, any other error) | ``Code-swift.enum/credentialImport`` when importing |
/// | keyportd is not running, its directory is not private, or the connection to it broke | ``Code-swift.enum/failed`` |
/// | keyportd's reply is not what the interface defines | ``Code-swift.enum/invalidResponse`` |
///
/// Why: Apple documents ``Code-swift.enum/canceled`` as "the user canceled the authorization
/// attempt", and apps treat it as "show no error", which is right when the person said no.
/// ``Code-swift.enum/notInteractive`` is Apple's code for a request that needed the person but
/// could not ask them, which is what a missing agent is; the reason says to start one
/// (`keyport agent`). Apple says of ``Code-swift.enum/credentialImport`` and
/// ``Code-swift.enum/credentialExport`` only that the request failed with details in `userInfo`,
/// and nothing public tells a bad token from an expired or reused one, so every failure of the
/// exchange itself is one of these two. A keyportd that cannot be reached is not a failure of the
/// exchange but of the system under it: ``Code-swift.enum/failed``, with the reason saying how
/// to start keyportd.
///
/// Errors are equal when their codes are: the reason is for people, not for comparisons.
public struct ASAuthorizationError: Error, Hashable, Sendable, CustomNSError, CustomStringConvertible {
    /// Apple's codes.
    public enum Code: Int, Hashable, Sendable {
        /// The request failed for a reason nobody knows.
        case unknown = 1000
        /// The person declined, or the request was cancelled.
        case canceled = 1001
        /// The request received a response it cannot use.
        case invalidResponse = 1002
        /// The request was not handled.
        case notHandled = 1003
        /// The request failed; on Linux, keyportd could not be reached.
        case failed = 1004
        /// The request needed the person but could not ask them.
        case notInteractive = 1005
        /// A passkey registration matched an excluded credential (Apple platforms; Keyport never
        /// throws it).
        case matchedExcludedCredential = 1006
        /// The credential import failed; ``ASAuthorizationError/userInfo`` says why.
        case credentialImport = 1007
        /// The credential export failed; ``ASAuthorizationError/userInfo`` says why.
        case credentialExport = 1008
        /// The person would rather use Sign in with Apple (Apple platforms; Keyport never throws it).
        case preferSignInWithApple = 1009
        /// The device is not set up to create passkeys (Apple platforms; Keyport never throws it).
        case deviceNotConfiguredForPasskeyCreation = 1010

        /// Matches an error of this code, for `catch ASAuthorizationError.canceled`.
        public static func ~= (match: Code, error: any Error) -> Bool {
            (error as? ASAuthorizationError)?.code == match
        }
    }

    /// What kind of failure this is.
    public let code: Code
    /// The details, as `NSError.userInfo` holds them: the reason under
    /// `NSLocalizedFailureReasonErrorKey` and a sentence under `NSLocalizedDescriptionKey` for the
    /// errors Keyport makes; whatever the creator gave for others.
    ///
    /// Not checked for `Sendable`: the dictionary is never changed after the error is made, and its
    /// values are what the creator put in, as with `NSError.userInfo` (Foundation marks `NSError`
    /// unchecked `Sendable` for the same reason).
    public nonisolated(unsafe) let userInfo: [String: Any]

    /// ``Code-swift.enum/unknown``.
    public static var unknown: Code { .unknown }
    /// ``Code-swift.enum/canceled``.
    public static var canceled: Code { .canceled }
    /// ``Code-swift.enum/invalidResponse``.
    public static var invalidResponse: Code { .invalidResponse }
    /// ``Code-swift.enum/notHandled``.
    public static var notHandled: Code { .notHandled }
    /// ``Code-swift.enum/failed``.
    public static var failed: Code { .failed }
    /// ``Code-swift.enum/notInteractive``.
    public static var notInteractive: Code { .notInteractive }
    /// ``Code-swift.enum/matchedExcludedCredential``.
    public static var matchedExcludedCredential: Code { .matchedExcludedCredential }
    /// ``Code-swift.enum/credentialImport``.
    public static var credentialImport: Code { .credentialImport }
    /// ``Code-swift.enum/credentialExport``.
    public static var credentialExport: Code { .credentialExport }
    /// ``Code-swift.enum/preferSignInWithApple``.
    public static var preferSignInWithApple: Code { .preferSignInWithApple }
    /// ``Code-swift.enum/deviceNotConfiguredForPasskeyCreation``.
    public static var deviceNotConfiguredForPasskeyCreation: Code { .deviceNotConfiguredForPasskeyCreation }

    /// An error with `code` and the details in `userInfo`, as Apple's initialiser makes one.
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.code = code
        self.userInfo = userInfo
    }

    /// An error with `code` whose reason is `reason` (Linux addition).
    ///
    /// `userInfo` gets `reason` under `NSLocalizedFailureReasonErrorKey`, and under
    /// `NSLocalizedDescriptionKey` a sentence made of what the code means and the reason.
    public init(_ code: Code, reason: String) {
        self.init(
            code,
            userInfo: [
                NSLocalizedFailureReasonErrorKey: reason,
                NSLocalizedDescriptionKey: "\(Self.summary(of: code)): \(reason)",
            ]
        )
    }

    /// The reason under `NSLocalizedFailureReasonErrorKey`, when there is one (Linux addition).
    public var failureReason: String? { userInfo[NSLocalizedFailureReasonErrorKey] as? String }

    /// ``ASAuthorizationErrorDomain``, Apple's domain.
    public static var errorDomain: String { ASAuthorizationErrorDomain }
    /// The code's raw value, as `NSError.code` shows it.
    public var errorCode: Int { code.rawValue }
    /// ``userInfo``, as `NSError.userInfo` shows it.
    public var errorUserInfo: [String: Any] { userInfo }

    /// The sentence under `NSLocalizedDescriptionKey`, else what the code means and the reason.
    public var description: String {
        if let sentence = userInfo[NSLocalizedDescriptionKey] as? String { return sentence }
        if let failureReason { return "\(Self.summary(of: code)): \(failureReason)" }
        return "\(Self.summary(of: code))."
    }

    /// Equal when the codes are.
    public static func == (lhs: ASAuthorizationError, rhs: ASAuthorizationError) -> Bool {
        lhs.code == rhs.code
    }

    /// Hashes the code, the only part ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }

    private static func summary(of code: Code) -> String {
        switch code {
        case .unknown: "The request failed"
        case .canceled: "The request was cancelled"
        case .invalidResponse: "The request received a response it cannot use"
        case .notHandled: "The request was not handled"
        case .failed: "The request failed"
        case .notInteractive: "The request needs the person, who could not be asked"
        case .matchedExcludedCredential: "The request matched an excluded credential"
        case .credentialImport: "The credential import failed"
        case .credentialExport: "The credential export failed"
        case .preferSignInWithApple: "The person would rather use Sign in with Apple"
        case .deviceNotConfiguredForPasskeyCreation: "The device is not set up to create passkeys"
        }
    }
}
