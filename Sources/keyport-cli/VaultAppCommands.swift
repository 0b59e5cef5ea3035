import ArgumentParser
import Foundation
import KeyportInterfaces
import KeyportSystem

extension VaultCommand {
    /// `keyport vault register`: the manifest that makes a vault an app keyportd knows.
    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register the vault with keyportd as an app: an AutoFill provider that exchanges credentials.",
            discussion: """
                Writes the manifest $XDG_DATA_HOME/keyport/providers/ID.json, whose exec is \
                keyport-vault beside this program with the vault's path (unless it is the default \
                vault), so that each vault is an app of its own: AutoFill can ask it (enable it with \
                `keyport providers enable ID`), and other apps can export to it. keyportd reads the \
                manifest at once. Registering again with the same id replaces the manifest.
                """
        )
        @OptionGroup var options: VaultOptions
        @Option(help: "The app's id, reverse-DNS (default: org.keyport.vault).") var id = "org.keyport.vault"
        @Option(help: "The name people see (default: Keyport Vault).") var name = "Keyport Vault"

        func run() async throws {
            let labels = id.split(separator: ".", omittingEmptySubsequences: false)
            guard labels.count >= 2,
                labels.allSatisfy({
                    !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
                })
            else { throw Failure.invalid("--id takes a reverse-DNS name such as org.keyport.vault, not '\(id)'") }
            let manifest = Manifest(
                id: id,
                name: name,
                exec: try options.appCommand(),
                capabilities: Providers.Capabilities(
                    SupportsCredentialExchange: true,
                    SupportedCredentialExchangeVersions: ["1.0"],
                    ProvidesPasswords: true,
                    ProvidesOneTimeCodes: true
                )
            )
            let directory =
                BaseDirectories(environment: ProcessInfo.processInfo.environment).dataHome + "/keyport/providers"
            let file = "\(directory)/\(id).json"
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                try AtomicFile.write(try encoder.encode(manifest), to: file)
            } catch {
                throw Failure.io("cannot write \(file): \(error)", code: .unwritableOutput)
            }
            FileHandle.write(
                "registered \(try options.path()) as \(id) (\(file)); `keyport providers enable \(id)` lets AutoFill ask it\n"
            )
        }

        /// A manifest as keyportd reads it (`keyport/providers/*.json`).
        struct Manifest: Encodable {
            var id: String
            var name: String
            var exec: [String]
            var capabilities: Providers.Capabilities
        }
    }
}

extension VaultOptions {
    /// The command keyportd starts for this vault, which its manifest's `exec` names: keyport-vault
    /// beside this program, as the provider of this vault. keyportd tells vaults apart by these
    /// arguments (they all run one program), so `export --to-app` runs the same ones.
    func appCommand() throws(Failure) -> [String] {
        let program = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("keyport-vault").path
        let path = try path()
        let isDefault = (try? DaemonLocations(environment: ProcessInfo.processInfo.environment))?.defaultVault == path
        return [program, "provider"] + (isDefault ? [] : ["--vault", path])
    }
}
