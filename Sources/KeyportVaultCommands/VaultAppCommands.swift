import ArgumentParser
import Foundation
import KeyportCommandLine
import KeyportInterfaces
import KeyportSystem
import KeyportVaultKeeper

extension VaultCommand {
    /// `keyport vault register`: the manifest that makes a vault an app keyportd knows.
    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register the vault with keyportd as an app: an AutoFill provider that exchanges credentials.",
            discussion: """
                Writes the manifest $XDG_DATA_HOME/keyport/providers/ID.json, whose exec is \
                keyport-vault beside this program with the vault's path, and whose helper is that \
                vault's keeper, so that each vault is an app of its own: AutoFill can ask it (enable it \
                with `keyport providers enable ID`), its keeper keeps AutoFill's identities the vault's, \
                and other apps can export to it. keyportd reads the manifest at once. Registering \
                again with the same id replaces the manifest.
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
            else { throw CommandError.invalid("--id takes a reverse-DNS name such as org.keyport.vault, not '\(id)'") }
            let path = try options.path()
            guard FileManager.default.fileExists(atPath: path) else {
                throw CommandError.invalid(
                    "there is no vault at \(path): `keyport vault init` creates it (and registers the default vault itself)"
                )
            }
            let file = try Self.writeManifest(options: options, id: id, name: name)
            FileHandle.write(
                "registered \(try options.path()) as \(id) (\(file)); `keyport providers enable \(id)` lets AutoFill ask it\n"
            )
        }

        /// Writes the manifest of the vault `options` name as the app `id`: its file.
        static func writeManifest(options: VaultOptions, id: String, name: String) throws(CommandError) -> String {
            let manifest = Manifest(
                id: id,
                name: name,
                exec: try options.appCommand(),
                helpers: [try options.keeperCommand()],
                capabilities: Manifest.Capabilities(
                    SupportsCredentialExchange: true,
                    SupportedCredentialExchangeVersions: ["1.0"],
                    ProvidesPasswords: true,
                    ProvidesOneTimeCodes: true,
                    ProvidesPasskeys: true,
                    SavesPasswords: true
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
                throw CommandError.io("cannot write \(file): \(error)", code: .unwritableOutput)
            }
            return file
        }

        /// A manifest as keyportd reads it (`keyport/providers/*.json`; docs/protocol.md,
        /// "Manifests"): a file format of its own, not a Varlink message.
        struct Manifest: Encodable {
            var id: String
            var name: String
            var exec: [String]
            var helpers: [[String]]
            var capabilities: Capabilities

            /// The keys of Apple's Info.plist for credential providers (ProvidesPasskeys: the vault
            /// is a passkey authenticator), and Keyport's SavesPasswords.
            struct Capabilities: Encodable {
                var SupportsCredentialExchange: Bool
                var SupportedCredentialExchangeVersions: [String]
                var ProvidesPasswords: Bool
                var ProvidesOneTimeCodes: Bool
                var ProvidesPasskeys: Bool
                var SavesPasswords: Bool
            }
        }
    }
}

extension VaultOptions {
    /// The command keyportd starts for this vault, which its manifest's `exec` names: keyport-vault
    /// beside this program, as the provider of this vault. keyportd tells vaults apart by these
    /// arguments (they all run one program), so `export --to-app` runs the same ones. The path is
    /// given even for the default vault: a process of another vault must not fit its line.
    func appCommand() throws(CommandError) -> [String] {
        [try Self.vaultProgram(), "provider", "--vault", try path()]
    }

    /// The command line of this vault's keeper, its manifest's helper: keyportd then knows the
    /// keeper, which keeps AutoFill's identities current, as this vault's app.
    func keeperCommand() throws(CommandError) -> [String] {
        [try Self.vaultProgram()] + VaultKeeperClient.keeperArguments(for: try path())
    }

    /// keyport-vault beside this program (named so even when it is missing: the manifest says
    /// where it is to be).
    private static func vaultProgram() throws(CommandError) -> String {
        guard let directory = Executable.directory else {
            throw .io("\(Executable.unknown), and keyport-vault beside it")
        }
        return FilePaths.join(directory, "keyport-vault")
    }
}
