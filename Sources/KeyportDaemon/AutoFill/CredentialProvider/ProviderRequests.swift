import KeyportInterfaces
import Logging
import Varlink

/// Why a provider's request ended without its answer, in no interface's words: AutoFill and
/// WebAuthn each say it as their own error.
package enum ProviderRequestFailure: Error {
    /// The provider needs the person, and the request was not to involve them.
    case interactionRequired
    /// The provider needs the person though it was given the chance to ask them.
    case interactionRefused
    /// The person did not answer the provider's question in the agent within this time.
    case personTimedOut(Duration)
    /// The person declined what the provider asked (`userCanceled`).
    case declinedByPerson
    /// The provider ended the request with this `ASExtensionError` code and reason.
    case canceled(code: Int, reason: String)
    /// The provider could not start, crashed, hung past its time, or answered what its interface
    /// does not allow.
    case failed(String)

    /// `ASExtensionError.Code.matchedExcludedCredential`.
    package static let matchedExcludedCredential = 102
}

/// How keyportd asks a provider, for every interface that does (AutoFill, WebAuthn): seed 003's
/// dance — without the person first, with them when the provider needs them — on the pool's
/// connection, with the pool's time limits, a client that leaves taking its provider's questions
/// off the agent's screen.
package struct ProviderRequests: Sendable {
    let pool: ProviderPool
    /// How long a provider has to answer without the person, and with them (its clock stopped
    /// while the person is asked).
    let quickTime: Duration
    let interactiveTime: Duration
    let logger: Logger

    /// `quick` without the person first; when the provider answers `userInteractionRequired`,
    /// `withPerson` (unless the request is not to involve them).
    package func ask(
        _ provider: ProviderManifest,
        _ quick: String,
        then withPerson: String,
        _ parameters: RawJSON,
        interactive: Bool,
        as call: ProviderPool.Call
    ) async throws(ProviderRequestFailure) -> RawJSON {
        do {
            return try await ask(provider, quick, parameters, quickTime, passingOnInteraction: true)
        } catch .interactionRequired {
            guard interactive else { throw .interactionRequired }
            logger.info("provider needs the person", metadata: ["provider": "\(provider.id)"])
            return try await ask(provider, withPerson, parameters, interactiveTime, as: call)
        }
    }

    /// Calls `method` of the provider with the person's time limit.
    package func askWithPerson(
        _ provider: ProviderManifest,
        _ method: String,
        _ parameters: RawJSON,
        as call: ProviderPool.Call
    ) async throws(ProviderRequestFailure) -> RawJSON {
        try await ask(provider, method, parameters, interactiveTime, as: call)
    }

    /// Calls the provider; `userInteractionRequired` is ``ProviderRequestFailure/interactionRequired``
    /// when `passingOnInteraction` (the caller asks again with the person), else
    /// ``ProviderRequestFailure/interactionRefused``.
    private func ask(
        _ provider: ProviderManifest,
        _ method: String,
        _ parameters: RawJSON,
        _ timeout: Duration,
        passingOnInteraction: Bool = false,
        as call: ProviderPool.Call = ProviderPool.Call()
    ) async throws(ProviderRequestFailure) -> RawJSON {
        do {
            // A client that leaves takes its provider's questions off the agent's screen.
            return try await withTaskCancellationHandler {
                try await pool.call(provider, method, parameters, timeout: timeout, as: call)
            } onCancel: {
                call.callerLeft()
            }
        } catch let error as VarlinkError where error.name == CredentialProvider.Canceled.name {
            if let limit = call.personTimedOut { throw .personTimedOut(limit) }
            let code = error.parameters(as: CredentialProvider.Canceled.self)?.code
            switch code {
            case 100: throw passingOnInteraction ? .interactionRequired : .interactionRefused
            case 1: throw .declinedByPerson
            default: throw .canceled(code: code ?? 0, reason: error.message ?? "it gave no reason")
            }
        } catch let error as VarlinkError {
            throw .failed("it answered with an error its interface does not have: \(error.name)")
        } catch let error as ProviderPool.CallError {
            throw .failed(error.description)
        } catch {
            throw .failed("it ended without answering (\(error))")
        }
    }
}
