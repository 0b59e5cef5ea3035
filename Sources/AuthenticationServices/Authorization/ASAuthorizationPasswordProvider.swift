import Foundation
import KeyportInterfaces
import Varlink

/// Makes requests for a password the person saved for the app's website, as an app asks on Apple
/// platforms to offer it at its sign-in.
///
/// On Linux, keyportd gives one only to a registered app whose manifest names associated domains
/// (`"associatedDomains": ["webcredentials:example.com"]`), for the domains whose sites name the
/// app in their `apple-app-site-association`; the person chooses the password in their agent.
open class ASAuthorizationPasswordProvider: NSObject, ASAuthorizationProvider, @unchecked Sendable {
    /// A provider.
    public override init() {
        super.init()
    }

    /// A request for one of the passwords saved for the app's associated domains.
    open func createRequest() -> ASAuthorizationPasswordRequest {
        ASAuthorizationPasswordRequest(provider: self)
    }
}

/// A request for a saved password, made by an ``ASAuthorizationPasswordProvider``. Performed, it
/// completes with an ``ASPasswordCredential``.
open class ASAuthorizationPasswordRequest: ASAuthorizationRequest, @unchecked Sendable {}

/// An app's password request, asked of keyportd (org.keyport.AutoFill's `RequestAppPassword`):
/// the request names nothing; keyportd knows the app, its domains and what the person chose.
enum PasswordClient {
    /// The password the person chose; `nil` when none is saved and `passingOverNone` (another
    /// request of the app's comes next).
    static func perform(
        _ request: ASAuthorizationPasswordRequest,
        environment: [String: String],
        passingOverNone: Bool = false
    ) async throws(ASAuthorizationError) -> ASAuthorization? {
        let reply: AutoFill.RequestAppPassword.Reply
        do {
            reply = try await DaemonClient.withConnection(environment: environment) { connection in
                try await connection.call(AutoFill.RequestAppPassword.self, .init())
            }
        } catch let error as VarlinkError {
            if passingOverNone && error.name == AutoFill.NoCredential.name { return nil }
            throw Self.error(error)
        } catch is CancellationError {
            throw ASAuthorizationError(.canceled, reason: "the request was cancelled")
        } catch {
            throw ASAuthorizationError(.failed, reason: "\(error)")
        }
        guard let user = reply.credential?.user, let password = reply.credential?.password else {
            throw ASAuthorizationError(.invalidResponse, reason: "keyportd answered no password")
        }
        return ASAuthorization(
            provider: request.provider,
            credential: ASPasswordCredential(user: user, password: password)
        )
    }

    /// keyportd's refusal as Apple's code: no password saved, or none chosen, is
    /// ``ASAuthorizationError/Code-swift.enum/canceled`` (on Apple platforms the request ends
    /// quietly when nothing is saved, and the app shows its own sign-in form); the rest
    /// ``ASAuthorizationError/Code-swift.enum/failed`` with keyportd's reason.
    private static func error(_ error: VarlinkError) -> ASAuthorizationError {
        let reason = error.message ?? error.name
        switch error.name {
        case AutoFill.NoCredential.name, AutoFill.Canceled.name: return ASAuthorizationError(.canceled, reason: reason)
        default: return ASAuthorizationError(.failed, reason: reason)
        }
    }
}
