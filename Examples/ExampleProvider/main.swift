// A credential provider written with Apple's API, as seed 003 shows one: it answers AutoFill's
// requests for one-time codes and passwords of one account, alice at example.com.
//
//   ExampleProvider save [SERVICE]   saves its identities in the identity store, and exits
//   ExampleProvider [MODE]           what keyportd starts (it says so when started by hand)
//
// MODE shows the four ways a provider behaves, for Keyport's tests and for trying AutoFill out:
// quiet (answers without the person), interactive (locked: needs the person, who unlocks it
// with the passphrase "open sesame" through keyportd's agent), hang (never answers), crash (dies
// when asked). Examples/manifests/ registers each under its own id.

import AuthenticationServices
import Foundation
import OneTimeCodes

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The one account: its one-time-code secret (otpauth) and its password.
let account = (
    user: "alice",
    password: "correct horse battery staple",
    otpauth: "otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example"
)
let arguments = Array(CommandLine.arguments.dropFirst())
let mode = arguments.first ?? "quiet"

final class ExampleProviderViewController: ASCredentialProviderViewController {
    override func provideCredentialWithoutUserInteraction(for credentialRequest: any ASCredentialRequest) {
        switch mode {
        case "interactive":
            // Locked, as a vault is until the person unlocks it.
            extensionContext.cancelRequest(withError: ASExtensionError(.userInteractionRequired))
        case "hang":
            return  // never completes: keyportd gives up after its time limit
        case "crash":
            kill(getpid(), SIGSEGV)
        default:
            answer(credentialRequest)
        }
    }

    override func prepareInterfaceToProvideCredential(for credentialRequest: any ASCredentialRequest) {
        guard mode == "interactive" else {
            answer(credentialRequest)
            return
        }
        // Unlocking, as a vault would: the passphrase comes through keyportd's agent.
        Task {
            do {
                guard
                    let passphrase = try await ASCredentialProviderPrompt.secret(
                        "Unlock to fill \(account.user)'s credential"
                    )
                else {
                    extensionContext.cancelRequest(withError: ASExtensionError(.userCanceled))
                    return
                }
                guard passphrase == "open sesame" else {
                    extensionContext.cancelRequest(withError: ASExtensionError(.failed, reason: "wrong passphrase"))
                    return
                }
                answer(credentialRequest)
            } catch {
                extensionContext.cancelRequest(withError: error)
            }
        }
    }

    override func prepareOneTimeCodeCredentialList(for serviceIdentifiers: [ASCredentialServiceIdentifier]) {
        answer(oneTimeCode: true)
    }

    override func prepareCredentialList(for serviceIdentifiers: [ASCredentialServiceIdentifier]) {
        answer(oneTimeCode: false)
    }

    private func answer(_ request: any ASCredentialRequest) {
        guard request.credentialIdentity.recordIdentifier == account.user else {
            extensionContext.cancelRequest(withError: ASExtensionError(.credentialIdentityNotFound))
            return
        }
        answer(oneTimeCode: request.type == .oneTimeCode)
    }

    private func answer(oneTimeCode: Bool) {
        guard oneTimeCode else {
            extensionContext.completeRequest(
                withSelectedCredential: ASPasswordCredential(user: account.user, password: account.password)
            )
            return
        }
        do {
            let code = try OTPAuthURI(parsing: account.otpauth).code(at: Int64(Date().timeIntervalSince1970))
            extensionContext.completeOneTimeCodeRequest(using: ASOneTimeCodeCredential(code: code))
        } catch {
            extensionContext.cancelRequest(withError: ASExtensionError(.failed, reason: "\(error)"))
        }
    }
}

if mode == "save" {
    // What the provider's app does whenever its accounts change.
    let service = ASCredentialServiceIdentifier(identifier: arguments.dropFirst().first ?? "example.com", type: .domain)
    do {
        try await ASCredentialIdentityStore.shared.replaceCredentialIdentities([
            ASPasswordCredentialIdentity(
                serviceIdentifier: service,
                user: account.user,
                recordIdentifier: account.user
            ),
            ASOneTimeCodeCredentialIdentity(
                serviceIdentifier: service,
                label: "Example (\(account.user))",
                recordIdentifier: account.user
            ),
        ])
        print("saved the identities of \(account.user) for \(service.identifier)")
    } catch {
        FileHandle.standardError.write(Data("ExampleProvider: \(error)\n".utf8))
        exit(1)
    }
} else {
    ASCredentialProviderExtension.run(ExampleProviderViewController.self)
}
