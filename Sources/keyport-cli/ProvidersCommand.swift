import ArgumentParser
import Foundation
import KeyportCommandLine
import KeyportEncoding
import KeyportInterfaces
import Varlink

/// `keyport providers`: the registered apps and the Settings AutoFill follows, through keyportd.
struct ProvidersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "providers",
        abstract: "List the registered apps; enable, disable and order the providers AutoFill asks.",
        discussion: """
            Apps register with a manifest in keyport/providers/ under $XDG_DATA_HOME or $XDG_DATA_DIRS. \
            Credential exchange offers every registered app that supports it; AutoFill asks only the \
            enabled providers, in order. These commands talk to keyportd, which must be running.
            """,
        subcommands: [List.self, Enable.self, Disable.self, Order.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the registered apps, enabled ones first in order, and manifests that were skipped."
        )

        @Flag(name: .long, help: "Print JSON: {\"providers\": […], \"problems\": […]}.")
        var json = false

        func run() async throws {
            let reply = try await withKeyportd { connection in
                try await connection.call(Providers.List.name)
            }
            if json {
                // keyportd's reply as it came: the interface's definition documents it.
                FileHandle.write(reply.description + "\n", to: .standardOutput)
                return
            }
            let list = try reply.decode(Providers.List.Reply.self)
            var text = ""
            if list.providers.isEmpty { text += "No app is registered.\n" }
            for provider in list.providers {
                let place = provider.position.map { "\($0 + 1)." } ?? "-"
                var can: [String] = []
                if provider.capabilities.SupportsCredentialExchange {
                    let versions = provider.capabilities.SupportedCredentialExchangeVersions.joined(separator: ",")
                    let exportOnly = provider.capabilities.ImportsCredentials == false
                    can.append("exchange \(versions)\(exportOnly ? " (exports only)" : "")")
                }
                can += provider.capabilities.providedKinds.map(\.plural)
                if provider.capabilities.SavesPasswords { can.append("saving passwords") }
                if let domains = provider.associatedDomains {
                    // A client of keyportd's, not a provider: nothing to enable.
                    can.append(
                        "signing in at \(domains.map(DisplayText.escaping).joined(separator: ", ")) (passkeys and saved passwords, once each site names it)"
                    )
                }
                text += "\(place) \(DisplayText.escaping(provider.id))  \(DisplayText.escaping(provider.name))"
                text +=
                    "  [\(provider.enabled ? "enabled" : "disabled")]  \(can.isEmpty ? "nothing" : can.joined(separator: ", "))\n"
                if let count = provider.identities {
                    text += "   \(count) \(count == 1 ? "identity" : "identities")"
                    if let domains = provider.domainIdentities, domains > 0 {
                        text +=
                            "; \(domains) saved as a domain, given without asking only to https://DOMAIN itself (its subdomains are offered in the agent)"
                    }
                    text += "\n"
                }
            }
            for problem in list.problems {
                text += "skipped \(DisplayText.escaping(problem.manifest)): \(DisplayText.escaping(problem.message))\n"
            }
            FileHandle.write(text, to: .standardOutput)
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Let AutoFill ask this provider (it goes last).")

        @Argument(help: "The provider's id, as `keyport providers list` shows it.")
        var id: String

        func run() async throws {
            _ = try await call(Providers.Enable.self, .init(id: id))
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop AutoFill asking this provider.")

        @Argument(help: "The provider's id.")
        var id: String

        func run() async throws {
            _ = try await call(Providers.Disable.self, .init(id: id))
        }
    }

    struct Order: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enable exactly these providers, in this order (the others are disabled)."
        )

        @Argument(help: "Provider ids, the one AutoFill asks first first.")
        var ids: [String] = []

        func run() async throws {
            _ = try await call(Providers.Order.self, .init(ids: ids))
        }
    }
}

/// Calls `method` of org.keyport.Providers on keyportd; failures become the CLI's: exit 1 for
/// what keyportd refused (with its message), 2 when keyportd cannot be reached.
private func call<Method: VarlinkMethodType>(
    _ method: Method.Type,
    _ parameters: Method.Parameters
) async throws -> Method.Reply {
    try await withKeyportd { connection in try await connection.call(method, parameters) }
}
