import Foundation
import KeyportInterfaces
import KeyportTestSupport
import Varlink

/// keyportd, and the example provider registered four times (quiet, interactive, hang, crash), one
/// program with the mode as its first argument: `ExampleProvider MODE save …` acts for MODE's
/// registration, as keyportd tells a shared program's registrations apart by their arguments.
package struct AutoFillSandbox {
    package let directory: TemporaryDirectory
    package let environment: [String: String]
    package static let modes = ["quiet", "interactive", "hang", "crash"]

    /// `privateRuntime`: a runtime directory of the sandbox's own (`XDG_RUNTIME_DIR`), for tests
    /// whose vault keepers must be found and stopped (``runtime``).
    package init(timeout: Int = 3, idle: Int = 60, privateRuntime: Bool = false) throws {
        directory = try TemporaryDirectory("kp-fill")
        var environment = sandboxEnvironment(in: directory.url)
        environment["KEYPORT_PROVIDER_TIMEOUT"] = "\(timeout)"
        environment["KEYPORT_PROVIDER_IDLE"] = "\(idle)"
        if privateRuntime { environment["XDG_RUNTIME_DIR"] = try directory.subdirectory("run").path }
        self.environment = environment
        let providers = try directory.subdirectory("data/keyport/providers")
        for mode in Self.modes {
            let manifest: [String: Any] = [
                "id": "org.example.\(mode)", "name": "Example \(mode)", "exec": [program, mode],
                "capabilities": [
                    "ProvidesPasswords": true, "ProvidesOneTimeCodes": true,
                    "SavesPasswords": mode == "quiet" || mode == "interactive",
                ],
            ]
            try JSONSerialization.data(withJSONObject: manifest).write(
                to: providers.appendingPathComponent("\(mode).json")
            )
        }
    }

    /// `XDG_RUNTIME_DIR=…`, as the environment of the processes started in it shows it.
    package var runtime: String { "XDG_RUNTIME_DIR=" + (environment["XDG_RUNTIME_DIR"] ?? "") }

    /// The program of every mode's registration: the one example provider.
    package var program: String { builtProgram("ExampleProvider") }

    /// `keyport agent --auto`, answering a provider's request for a secret with `secret`, or
    /// declining everything without one.
    package func startAgent(secret: String?) async throws -> Program {
        var arguments = ["agent", "--auto", secret == nil ? "decline" : "accept-first"]
        if let secret {
            let file = directory.url.appendingPathComponent("secret-\(UUID().uuidString)").path
            try (secret + "\n").write(toFile: file, atomically: true, encoding: .utf8)
            arguments += ["--secret-file", file]
        }
        let agent = try Program(KeyportTestSupport.keyport, arguments, environment: environment)
        _ = try await agent.waitForLine(timeout: .seconds(30), onStandardError: true) { $0.contains("waiting") }
        return agent
    }

    package func keyport(_ arguments: [String]) async throws -> Program.Ran {
        try await runKeyport(arguments, environment: environment, timeout: .seconds(60))
    }

    /// Enables the providers in this order, then has each save its identities for `service`; throws
    /// when a step fails, saying which.
    package func setUp(order: [String], services: [String: String]) async throws {
        let ordered = try await keyport(["providers", "order"] + order.map { "org.example.\($0)" })
        guard ordered.status == 0 else {
            throw SupportFailure(description: "keyport providers order failed: \(ordered.standardError)")
        }
        for (mode, service) in services {
            let saved = try await Program.run(
                program,
                [mode, "save", service],
                environment: environment,
                timeout: .seconds(60)
            )
            guard saved.status == 0 else {
                throw SupportFailure(description: "\(mode) could not save for \(service): \(saved.standardError)")
            }
        }
    }

    /// `ListIdentities` through keyportd.
    package func list(
        _ kind: AutoFill.CredentialType,
        _ services: [String]
    ) async throws -> AutoFill.ListIdentities.Reply {
        try await DaemonClient.withConnection(environment: environment) { connection in
            try await connection.call(
                AutoFill.ListIdentities.self,
                .init(
                    type: kind,
                    serviceIdentifiers: services.map {
                        AutoFill.ServiceIdentifier(identifier: $0, type: $0.contains("://") ? .URL : .domain)
                    }
                )
            )
        }
    }

    /// `RequestCredential` through keyportd: the reply, or the error's name and message.
    package func request(
        _ kind: AutoFill.CredentialType,
        _ services: [String],
        interactive: Bool? = nil,
        identity: AutoFill.IdentityReference? = nil
    ) async throws -> Result<AutoFillClient.Answer, VarlinkError> {
        let input = AutoFill.RequestCredential.Parameters(
            type: kind,
            serviceIdentifiers: services.map {
                AutoFill.ServiceIdentifier(identifier: $0, type: $0.contains("://") ? .URL : .domain)
            },
            interactive: interactive,
            identity: identity
        )
        do {
            let reply = try await DaemonClient.withConnection(environment: environment) { connection in
                try await connection.call(AutoFill.RequestCredential.self, input)
            }
            guard let credential = reply.credential else {
                throw SupportFailure(description: "the last reply carries no credential")
            }
            return .success(AutoFillClient.Answer(credential: credential, provider: reply.provider, site: reply.site))
        } catch let error as VarlinkError {
            return .failure(error)
        }
    }
}
