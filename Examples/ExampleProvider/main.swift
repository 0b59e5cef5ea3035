// A credential provider written with Apple's API, as seed 003 shows one: it answers AutoFill's
// requests for one-time codes and passwords of one account, alice at example.com, and saves the
// passwords it is given (ASSavePasswordRequest: `git credential approve`) in a file of its own,
// $XDG_STATE_HOME/keyport-example-provider/MODE.json (an example: a real provider encrypts).
//
//   ExampleProvider MODE save [SERVICE…]
//                                    saves its identities for each service (example.com when none)
//                                    in the identity store, and exits; MODE first, as in its
//                                    manifest's exec, since keyportd tells which registration a
//                                    process of a shared program acts for by its first arguments
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

/// The passwords saved through AutoFill, by record identifier (`saved:SERVICE|USER`).
enum SavedPasswords {
    struct Entry: Codable {
        var service: String
        var user: String
        var password: String
    }

    static var file: URL {
        let environment = ProcessInfo.processInfo.environment
        let state =
            environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : nil }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/state")
        return state.appendingPathComponent("keyport-example-provider/\(mode).json")
    }

    static func load() -> [String: Entry] {
        guard let data = try? Data(contentsOf: file) else { return [:] }
        return (try? JSONDecoder().decode([String: Entry].self, from: data)) ?? [:]
    }

    static func record(_ service: String, _ user: String) -> String { "saved:\(service)|\(user)" }

    static func save(_ entry: Entry) throws -> String {
        var entries = load()
        let record = record(entry.service, entry.user)
        entries[record] = entry
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try JSONEncoder().encode(entries).write(to: file, options: .atomic)
        return record
    }
}

final class ExampleProviderViewController: ASCredentialProviderViewController {
    override func provideCredentialWithoutUserInteraction(for credentialRequest: any ASCredentialRequest) {
        switch mode {
        case "interactive":
            // Locked, as a vault is until the person unlocks it. Written as Apple's documentation
            // and sample code write it: an NSError of the extension error domain.
            extensionContext.cancelRequest(
                withError: NSError(
                    domain: ASExtensionErrorDomain,
                    code: ASExtensionError.Code.userInteractionRequired.rawValue
                )
            )
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
        unlock("Unlock to fill \(account.user)'s credential") { self.answer(credentialRequest) }
    }

    /// Unlocking, as a vault would: the passphrase comes through keyportd's agent; `then` runs
    /// once it is right, and the request is cancelled otherwise.
    private func unlock(_ message: String, then: @escaping @MainActor () -> Void) {
        Task {
            do {
                guard let passphrase = try await ASCredentialProviderPrompt.secret(message) else {
                    extensionContext.cancelRequest(withError: ASExtensionError(.userCanceled))
                    return
                }
                guard passphrase == "open sesame" else {
                    extensionContext.cancelRequest(withError: ASExtensionError(.failed, reason: "wrong passphrase"))
                    return
                }
                then()
            } catch {
                extensionContext.cancelRequest(withError: error)
            }
        }
    }

    override func performWithoutUserInteractionIfPossible(savePasswordRequest: ASSavePasswordRequest) {
        switch mode {
        case "interactive": extensionContext.cancelRequest(withError: ASExtensionError(.userInteractionRequired))
        case "hang": return
        case "crash": kill(getpid(), SIGSEGV)
        default: save(savePasswordRequest)
        }
    }

    override func prepareInterface(for savePasswordRequest: ASSavePasswordRequest) {
        guard mode == "interactive" else {
            save(savePasswordRequest)
            return
        }
        unlock("Unlock to save the password of \(savePasswordRequest.credential.user)") {
            self.save(savePasswordRequest)
        }
    }

    /// Keeps the password, tells AutoFill about the account (Apple: the provider keeps the identity
    /// store current), then completes the request.
    private func save(_ request: ASSavePasswordRequest) {
        Task {
            do {
                let record = try SavedPasswords.save(
                    .init(
                        service: request.serviceIdentifier.identifier,
                        user: request.credential.user,
                        password: request.credential.password
                    )
                )
                try await ASCredentialIdentityStore.shared.saveCredentialIdentities([
                    ASPasswordCredentialIdentity(
                        serviceIdentifier: request.serviceIdentifier,
                        user: request.credential.user,
                        recordIdentifier: record
                    )
                ])
                _ = await extensionContext.completeSavePasswordRequest()
            } catch {
                extensionContext.cancelRequest(withError: ASExtensionError(.failed, reason: "cannot save: \(error)"))
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
        if request.type == .password, let record = request.credentialIdentity.recordIdentifier,
            let saved = SavedPasswords.load()[record]
        {
            extensionContext.completeRequest(
                withSelectedCredential: ASPasswordCredential(user: saved.user, password: saved.password)
            )
            return
        }
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

if arguments.dropFirst().first == "save" {
    // What the provider's app does whenever its accounts change.
    let named = Array(arguments.dropFirst(2))
    let services = (named.isEmpty ? ["example.com"] : named).map {
        ASCredentialServiceIdentifier(identifier: $0, type: $0.contains("://") ? .URL : .domain)
    }
    do {
        try await ASCredentialIdentityStore.shared.replaceCredentialIdentities(
            services.flatMap { service -> [any ASCredentialIdentity] in
                [
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
                ]
            }
        )
        print("saved the identities of \(account.user) for \(services.map(\.identifier).joined(separator: ", "))")
    } catch {
        FileHandle.standardError.write(Data("ExampleProvider: \(error)\n".utf8))
        exit(1)
    }
} else {
    ASCredentialProviderExtension.run(ExampleProviderViewController.self)
}
