import Foundation
import KeyportTestSupport
import Testing

@testable import AuthenticationServices

/// Apple's `ASCredentialIdentityStore` API against a real keyportd, with this test process as the
/// registered provider (its manifest names this program).
@Suite("ASCredentialIdentityStore through keyportd", .serialized)
struct IdentityStoreAPITests {
    @Test("state, save, replace, remove and read, with Apple's types and codes")
    func apple() async throws {
        let directory = try TemporaryDirectory("kp-asids")
        defer { directory.remove() }
        let environment = sandboxEnvironment(in: directory.url)
        let program = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let manifest: [String: Any] = [
            "id": "org.example.tests", "name": "Keyport's tests", "exec": [program],
            "capabilities": ["ProvidesPasswords": true, "ProvidesOneTimeCodes": true],
        ]
        let providers = try directory.subdirectory("data/keyport/providers")
        try JSONSerialization.data(withJSONObject: manifest).write(to: providers.appendingPathComponent("t.json"))
        let store = ASCredentialIdentityStore(environment: environment)

        // keyportd is not running: disabled, and changes fail with the reason.
        #expect(await store.state().isEnabled == false)
        let example = ASCredentialServiceIdentifier(identifier: "example.com", type: .domain)
        let alice = ASPasswordCredentialIdentity(serviceIdentifier: example, user: "alice", recordIdentifier: "r1")
        let notRunning = await #expect(throws: ASCredentialIdentityStoreError.self) {
            try await store.saveCredentialIdentities([alice])
        }
        #expect(notRunning?.code == .internalError)
        #expect(notRunning?.failureReason?.contains("keyportd is not running") == true)

        let daemon = try await startKeyportd(environment)
        defer { daemon.stop() }
        let disabled = await #expect(throws: ASCredentialIdentityStoreError.self) {
            try await store.saveCredentialIdentities([alice])
        }
        #expect(disabled?.code == .storeDisabled)
        #expect(disabled?.errorCode == 1)
        #expect(ASCredentialIdentityStoreError.errorDomain == ASCredentialIdentityStoreErrorDomain)

        let enabled = try await Program.run(
            keyport,
            ["providers", "enable", "org.example.tests"],
            environment: environment,
            timeout: .seconds(60)
        )
        #expect(enabled.status == 0, "\(enabled.standardError)")
        let state = await store.state()
        #expect(state.isEnabled && state.supportsIncrementalUpdates)

        let login = ASCredentialServiceIdentifier(identifier: "https://login.example.com/", type: .URL)
        let bob = ASPasswordCredentialIdentity(serviceIdentifier: login, user: "bob", recordIdentifier: "r2")
        bob.rank = 3
        let code = ASOneTimeCodeCredentialIdentity(serviceIdentifier: example, label: "Example", recordIdentifier: "r3")
        try await store.saveCredentialIdentities([alice, bob, code])

        let passwords = await store.credentialIdentities(
            forService: ASCredentialServiceIdentifier(identifier: "https://www.example.com/", type: .URL),
            credentialIdentityTypes: .password
        )
        #expect(passwords.map(\.user) == ["bob", "alice"])  // best rank first
        #expect((passwords.first as? ASPasswordCredentialIdentity)?.isEqual(bob) == true)
        let codes = await store.credentialIdentities(forService: example, credentialIdentityTypes: .oneTimeCode)
        #expect((codes.first as? ASOneTimeCodeCredentialIdentity)?.label == "Example")
        #expect(await store.credentialIdentities(forService: nil, credentialIdentityTypes: .all).count == 3)

        // Replace takes every kind at once, as on Apple platforms.
        try await store.replaceCredentialIdentities([bob])
        #expect(await store.credentialIdentities(forService: nil, credentialIdentityTypes: .all).map(\.user) == ["bob"])
        // The completion-handler forms.
        let removed: Bool = await withCheckedContinuation { continuation in
            store.removeCredentialIdentities([bob]) { success, _ in continuation.resume(returning: success) }
        }
        #expect(removed)
        #expect(await store.credentialIdentities(forService: nil, credentialIdentityTypes: .all).isEmpty)

        // All or nothing: one identity without a host changes nothing.
        let nowhere = ASPasswordCredentialIdentity(
            serviceIdentifier: ASCredentialServiceIdentifier(identifier: "not a host", type: .domain),
            user: "x",
            recordIdentifier: nil
        )
        let invalid = await #expect(throws: ASCredentialIdentityStoreError.self) {
            try await store.saveCredentialIdentities([alice, nowhere])
        }
        #expect(invalid?.code == .internalError)
        #expect(await store.credentialIdentities(forService: nil, credentialIdentityTypes: .all).isEmpty)
    }
}
