import ArgumentParser
import CredentialExchangeFormat
import Foundation
import KeyportCommandLine
import KeyportCrypto
import KeyportEncoding
import KeyportFormats
import KeyportInterfaces
import KeyportSystem
import KeyportVault
import KeyportVaultKeeper
import OneTimeCodes
import Synchronization
import Varlink

/// `keyport vault`: Keyport Vault, through its keeper (`keyport-vault keeper`), which holds the
/// unlocked vault; only `init` opens the file itself.
package struct VaultCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "vault",
        abstract: "Keyport Vault: an encrypted password manager (through its keeper, keyport-vault keeper).",
        discussion: """
            `keyport vault init` creates the vault; `unlock` starts the keeper when it is not running and \
            opens the vault in it, where it stays unlocked until `lock` or its idle time; the other \
            commands ask the keeper. Passphrases are read from the terminal without echo, or with \
            --passphrase-stdin from the first line of standard input; never from the arguments.
            """,
        subcommands: [
            Init.self, Unlock.self, Lock.self, Status.self, Add.self, Edit.self, List.self, Show.self, Remove.self,
            Import.self, Search.self, Export.self, Keygen.self, Passwd.self, Register.self,
        ]
    )

    package init() {}
}

/// Where the vault is, and how its passphrase is read.
struct VaultOptions: ParsableArguments {
    @Option(help: "The vault file (default: $XDG_DATA_HOME/keyport/vault.keyport).")
    var vault: String?

    @Flag(
        help:
            "Read the passphrase from the first line of standard input (scripts); a command that reads the vault unlocks it with it. add, edit and import read their own secrets from standard input instead."
    )
    var passphraseStdin = false

    /// Keyport's locations, with ``VaultLocations/vaultKeeper`` this vault's keeper.
    func locations() throws(CommandError) -> VaultLocations {
        try common().forVault(path())
    }

    /// The locations of this vault for a command that reads it (`list`, `show`, `search`,
    /// `export`, `rm`): with `--passphrase-stdin` the first line of standard input is the vault's
    /// passphrase, read always, and the vault is unlocked with it when it is not open (its keeper
    /// started if need be), as keepassxc-cli opens its database with the password it is given —
    /// for this command: it locks again a minute after its last request, not after the keeper's
    /// usual 15 minutes. A vault that was open already is unlocked again with it, keeping its lock
    /// time: the passphrase proves this terminal session the person's, which the keeper then lets
    /// read and change the vault (docs/protocol.md, "Keyport Vault's keeper").
    func openLocations() async throws -> VaultLocations {
        let locations = try locations()
        guard passphraseStdin else { return locations }
        try existing()
        let passphrase = try passphrase("Passphrase for \(try path()): ")
        let status = try? await VaultKeeperClient.call(locations, VaultKeeper.Status.name).decode(
            VaultKeeper.Status.Reply.self
        )
        _ = try await unlock(locations, with: passphrase, timeout: status?.unlocked == true ? nil : 60)
        return locations
    }

    /// Opens the vault in its keeper (started when it is not running) with `passphrase`: how many
    /// items it has.
    func unlock(_ locations: VaultLocations, with passphrase: SecretBytes, timeout: Int?) async throws -> Int {
        do {
            try await VaultKeeperClient.startIfNeeded(locations)
        } catch {
            throw CommandError.io("cannot start the vault's keeper: \(error)")
        }
        let input = passphrase.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        return try await callVaultKeeper(
            locations,
            VaultKeeper.Unlock.name,
            RawJSON(encoding: VaultKeeper.Unlock.Parameters(path: try path(), passphrase: input, timeout: timeout))
        ).decode(VaultKeeper.Unlock.Reply.self).items
    }

    private func common() throws(CommandError) -> VaultLocations {
        do {
            return try VaultLocations(environment: ProcessInfo.processInfo.environment)
        } catch {
            throw .io(error.description)
        }
    }

    /// The vault's absolute path.
    /// Throws unless the vault's file is there: said before a passphrase is asked for.
    func existing() throws(CommandError) {
        let path = try path()
        guard FileIdentity(path) == nil else { return }
        throw .invalid(
            "there is no vault at \(path); `keyport vault init\(vault == nil ? "" : " --vault '\(path)'")` makes one"
        )
    }

    func path() throws(CommandError) -> String {
        guard let vault else { return try common().defaultVault }
        return FilePaths.standardized(
            vault.hasPrefix("/") ? vault : FileManager.default.currentDirectoryPath + "/" + vault
        )
    }

    /// The passphrase: typed without echo, or the first line of standard input.
    func passphrase(_ prompt: String) throws(CommandError) -> SecretBytes {
        try readPassphrase(prompt, fromStandardInput: passphraseStdin)
    }
}

/// A passphrase: typed without echo after `prompt`, or the next line of standard input.
func readPassphrase(_ prompt: String, fromStandardInput: Bool) throws(CommandError) -> SecretBytes {
    let line = fromStandardInput ? readLine(strippingNewline: true) : Terminal.readSecret(prompt: prompt)
    guard let line, !line.isEmpty else {
        throw .invalid(
            fromStandardInput
                ? "no passphrase was given: standard input's first line is empty, or there is none"
                : "no passphrase was typed (where there is no terminal to type it in, give it on standard input with --passphrase-stdin)"
        )
    }
    return SecretBytes(line)
}

/// Calls the vault's keeper; its refusals become failures that say why.
func callVaultKeeper(
    _ locations: VaultLocations,
    _ method: String,
    _ parameters: RawJSON = .emptyObject,
    more: Bool = false,
    each: ((RawJSON) throws -> Void)? = nil
) async throws -> RawJSON {
    try await vaultKeeper { () async throws in
        try await VaultKeeperClient.call(locations, method, parameters, more: more, each: each)
    }
}

/// Runs `body`, which asks the vault's keeper; its refusals become failures that say why.
func vaultKeeper<Result>(_ body: () async throws -> Result) async throws -> Result {
    do {
        return try await body()
    } catch {
        throw keeperFailure(error)
    }
}

/// ``vaultKeeper(_:)`` for a body that blocks on the keeper (`import`'s blocking connection).
func vaultKeeperNow<Result>(_ body: () throws -> Result) throws -> Result {
    do {
        return try body()
    } catch {
        throw keeperFailure(error)
    }
}

/// The failure that says why the vault's keeper refused (`error` itself when it did not).
private func keeperFailure(_ error: any Error) -> any Error {
    guard let refusal = VaultKeeperClient.refusal(error) else { return error }
    return CommandError(message: refusal.message, exitCode: refusal.exitCode)
}

extension VaultCommand {
    struct Init: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a vault, protected by a new passphrase.",
            discussion: """
                The default vault is registered with keyportd as it is created (org.keyport.vault, as \
                `keyport vault register` does), so that a manifest never names a vault that does not exist; \
                another vault is registered with `keyport vault register --vault PATH --id ID`.
                """
        )

        @OptionGroup var options: VaultOptions

        func run() async throws {
            let path = try options.path()
            guard !FileManager.default.fileExists(atPath: path) else {
                throw CommandError.invalid("\(path) exists already; Keyport will not overwrite it")
            }
            let passphrase = try options.passphrase("New passphrase for \(path): ")
            if !options.passphraseStdin {
                let again = try options.passphrase("The same passphrase again: ")
                guard again.isEqual(to: passphrase) else { throw CommandError.invalid("the two passphrases differ") }
            }
            let directory = (path as NSString).deletingLastPathComponent
            try? FileManager.default.createDirectory(
                atPath: directory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
            let kdf = ScryptParameters.calibrated()
            do {
                _ = try Vault.create(at: path, passphrase: passphrase, kdf: kdf)
            } catch {
                throw CommandError.invalid("\(error.message) [\(error.code)]")
            }
            FileHandle.write(
                "created \(path) (scrypt N=2^\(kdf.logN), r=\(kdf.r), p=\(kdf.p)); open it with `keyport vault unlock\(options.vault == nil ? "" : " --vault \(path)")`\n"
            )
            guard options.vault == nil else { return }
            let id = "org.keyport.vault"
            let file = try Register.writeManifest(options: options, id: id, name: "Keyport Vault")
            FileHandle.write(
                "registered it as \(id) (\(file)); `keyport providers enable \(id)` lets AutoFill ask it\n"
            )
        }
    }

    struct Unlock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Open the vault in its keeper (started when it is not running) until `lock` or its idle time."
        )

        @OptionGroup var options: VaultOptions

        @Option(help: "Lock again after this many seconds without a request (default: the keeper's, 900).")
        var timeout: Int?

        func run() async throws {
            let locations = try options.locations()
            let path = try options.path()
            try options.existing()
            let items = try await options.unlock(
                locations,
                with: try options.passphrase("Passphrase for \(path): "),
                timeout: timeout
            )
            FileHandle.write("unlocked \(path): \(items) \(items == 1 ? "item" : "items")\n")
        }
    }

    struct Lock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make the keeper forget the vault's key now.")
        @OptionGroup var options: VaultOptions

        func run() async throws {
            _ = try await callVaultKeeper(try options.locations(), VaultKeeper.Lock.name)
            FileHandle.write("locked\n")
        }
    }

    struct Passwd: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change the vault's passphrase (its key is wrapped again; the items are not touched).",
            discussion: "With --passphrase-stdin: the current passphrase on the first line, the new one on the second."
        )
        @OptionGroup var options: VaultOptions

        func run() async throws {
            let current = try options.passphrase("Current passphrase: ")
            let new = try options.passphrase("New passphrase: ")
            if !options.passphraseStdin {
                guard try options.passphrase("The new passphrase again: ").isEqual(to: new) else {
                    throw CommandError.invalid("the two new passphrases differ")
                }
            }
            func text(_ secret: SecretBytes) -> String {
                secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            }
            _ = try await callVaultKeeper(
                try options.locations(),
                VaultKeeper.ChangePassphrase.name,
                RawJSON(
                    encoding: VaultKeeper.ChangePassphrase.Parameters(
                        passphrase: text(current),
                        newPassphrase: text(new)
                    )
                )
            )
            FileHandle.write("the passphrase is changed\n")
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Whether the vault is unlocked, for how long, and whether AutoFill has its identities."
        )
        @OptionGroup var options: VaultOptions

        func run() async throws {
            let status = try await callVaultKeeper(try options.locations(), VaultKeeper.Status.name)
                .decode(VaultKeeper.Status.Reply.self)
            if status.unlocked {
                let items = status.items ?? 0
                FileHandle.write(
                    "unlocked \(status.path): \(items) \(items == 1 ? "item" : "items"); locks in \(status.locksIn ?? 0) s\n"
                )
            } else {
                FileHandle.write("locked\n")
            }
            // Said even while locked: AutoFill keeps the identities of a locked vault.
            if let autoFill = status.autoFill { FileHandle.write(DisplayText.escaping(autoFill.message) + "\n") }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the items: id, title, user name, site.")
        @OptionGroup var options: VaultOptions
        @Argument(help: "Only the items whose title, user name or site contains this.") var search: String?

        func run() async throws {
            let items = try await vaultItems(options)
            let wanted = search?.lowercased()
            for item in items {
                let summary = ItemSummary(item)
                guard wanted.map({ summary.searchable.contains($0) }) ?? true else { continue }
                FileHandle.write(summary.line + "\n")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Show an item, with its current one-time code and its passkeys; passwords and secrets (a passkey's private key) hidden unless --reveal.",
            discussion: """
                The item is named by its id; else by a site, as AutoFill matches one (the items saved \
                for the same scheme, host and port, else for another port or host of the site); else \
                by its title, in any case. When several items fit, they are listed one per line (id, \
                title, user, site) and the exit status is 1. An id that begins with `-` (an \
                imported item's can) follows `--`: `keyport vault show -- -Ab3…`.
                """
        )
        @OptionGroup var options: VaultOptions
        @Argument(help: "An item id, a site (a domain or URL), or a title.") var target: String
        @Flag(help: "Show passwords and secrets too.") var reveal = false

        func run() async throws {
            let locations = try await options.openLocations()
            let reply = try await vaultKeeper { () async throws in
                try await VaultKeeperClient.call(
                    locations,
                    VaultKeeper.Show.self,
                    .init(target: target, reveal: reveal)
                )
            }
            let (output, failure) = VaultTargetWords.shown(reply, target: target)
            FileHandle.write(output)
            if let failure { throw CommandError.invalid(failure) }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Remove an item, named as `show` names one.",
            discussion: """
                It asks before removing, on the terminal (--yes: without asking, for scripts). When \
                several items fit, they are listed and nothing is removed (exit status 1).
                """
        )
        @OptionGroup var options: VaultOptions
        @Flag(help: "Remove without asking (scripts).") var yes = false
        @Argument(help: "An item id, a site (a domain or URL), or a title.") var target: String

        func run() async throws {
            let locations = try await options.openLocations()
            let item = try await FoundItems.find(target, locations).one(target, otherwise: "nothing was removed")
            if !yes { try Self.confirm(ItemSummary(item).line) }
            let id = Base64URL.encode(item.id)
            _ = try await callVaultKeeper(
                locations,
                VaultKeeper.Remove.name,
                RawJSON(encoding: VaultKeeper.Remove.Parameters(id: id))
            )
            FileHandle.write("removed \(DisplayText.escaping(item.title)) (\(id))\n")
        }

        /// Asks on the terminal whether to remove the item `line` describes; anything but yes, or
        /// no terminal to ask on, removes nothing.
        static func confirm(_ line: String) throws(CommandError) {
            guard Terminal.isTerminal(STDIN_FILENO) else {
                throw CommandError.invalid(
                    "keyport vault rm asks before it removes an item, and there is no terminal to ask on: give --yes to remove \(line) without asking; nothing was removed"
                )
            }
            FileHandle.write("Remove \(line)? [y/N] ", to: .standardError)
            Terminal.discardTypedAhead(STDIN_FILENO)
            guard case .line(let answer) = Terminal.readAnswer(from: STDIN_FILENO, echo: true, unless: -1),
                answer.trimmingWhitespace().lowercased().hasPrefix("y")
            else { throw CommandError.invalid("nothing was removed") }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Import another manager's export (CXF plain or encrypted, Bitwarden, KeePassXC, KeePass XML, browsers, Aegis, 2FAS, otpauth).",
            discussion: """
                The format is recognised from the file's content, or named with --format. All or \
                nothing: a file with an entry that cannot be read (each is listed, with its line or \
                number) imports nothing, nor does one that is not valid JSON, XML or UTF-8 CSV. What \
                the vault has already (the same id, or the same user and password on the same site) \
                is merged into its item. An encrypted CXF export opens with --key, the private key \
                `keyport vault keygen` made for its request.
                """
        )
        @OptionGroup var options: VaultOptions
        @Argument(help: "The export file.") var file: String
        @Option(help: "The format: \(ImportFormat.allCases.map(\.rawValue).joined(separator: ", ")).")
        var format: String?
        @Option(
            help: ArgumentHelp(
                """
                The private key an encrypted CXF export was sealed to (what `keyport vault keygen` \
                wrote); its passphrase is asked for.
                """,
                valueName: "KEYFILE"
            )
        )
        var key: String?

        func run() async throws {
            let chosen = try format.map { name throws(CommandError) in
                guard let format = ImportFormat(rawValue: name) else {
                    throw CommandError.invalid(
                        "--format takes \(ImportFormat.allCases.map(\.rawValue).joined(separator: ", ")), not '\(name)'"
                    )
                }
                return format
            }
            if key != nil, chosen.map({ $0 != .encryptedCXF }) ?? false {
                throw CommandError.invalid("--key opens an encrypted CXF export (--format cxf-hpke), not \(format!)")
            }
            let locations = try options.locations()
            // Ctrl-C (SIGTERM, SIGHUP) is never silence: before the keeper has the import, the
            // command ends saying that nothing was imported; while the keeper imports, the call's
            // sending side is closed, the keeper rolls its transaction back, and its answer says
            // how the import ended, which is said here.
            let arrived = Mutex<Int32>(SIGINT)
            let cancellation = ImportCancellation {
                // The signals' thread; nothing was sent to the keeper, and nothing will be.
                let signal = arrived.withLock { $0 }
                FileHandle.write(
                    "\(isatty(STDERR_FILENO) == 1 ? "\r\u{1B}[K" : "")keyport: interrupted by \(TerminationSignals.name(signal)) before the import began; nothing was imported\n",
                    to: .standardError
                )
                TerminationSignals.end(by: signal)
            }
            let onSignal: @Sendable (Int32) -> Void = { signal in
                arrived.withLock { $0 = signal }
                cancellation.cancel()
            }
            let (outcome, signal) = TerminationSignals.handling(onSignal) { () throws -> String in
                try importFile(chosen, into: locations, cancellation: cancellation)
            }
            switch outcome {
            case .success(let report):
                FileHandle.write(report)
                if let signal {
                    FileHandle.write(
                        "keyport: interrupted by \(TerminationSignals.name(signal)) after the vault's keeper had committed the import (above)\n",
                        to: .standardError
                    )
                    TerminationSignals.end(by: signal)
                }
            case .failure(let error as ImportCancelled):
                _ = error
                FileHandle.write(
                    "keyport: interrupted by \(TerminationSignals.name(signal ?? SIGINT)); the vault's keeper cancelled the import: nothing was imported\n",
                    to: .standardError
                )
                TerminationSignals.end(by: signal ?? SIGINT)
            case .failure(let error):
                throw error
            }
        }

        /// Reads the file and has the keeper import it; returns the report's line.
        private func importFile(
            _ chosen: ImportFormat?,
            into locations: VaultLocations,
            cancellation: ImportCancellation
        ) throws -> String {
            let text = try readInput(file, limit: 256 << 20)
            let format = chosen ?? Importer.detect(text)
            let payload: ImportPayload
            let formatName: String
            var count: Int? = nil
            if format == .cxf, key == nil {
                // A plain CXF document goes to the keeper as the file holds it, read there once:
                // this command builds no item of it (docs/performance.md).
                payload = .document(text)
                formatName = ImportFormat.cxf.name
            } else {
                let imported = try read(text, format: chosen, detected: format)
                // All or nothing: an entry that cannot be read is not left behind while the rest comes in.
                guard imported.problems.isEmpty else {
                    for problem in imported.problems {
                        FileHandle.write("\(file): \(DisplayText.escaping(problem.description))\n", to: .standardError)
                    }
                    let problems = imported.problems.count
                    throw CommandError.invalid(
                        "\(file): \(problems) \(problems == 1 ? "entry" : "entries") of the \(imported.format.name) file cannot be read (above); nothing was imported"
                    )
                }
                payload = .items(imported.items)
                formatName = imported.format.name
                count = imported.items.count
            }
            let report = try vaultKeeperNow { () throws -> VaultKeeper.Import.Reply in
                let bar = ProgressBar("importing", total: count)
                defer { bar?.finish() }
                do {
                    return try VaultKeeperClient.importBlocking(payload, locations, cancellation: cancellation) {
                        bar?.update($0.imported + $0.merged + $0.unchanged)
                    }
                } catch is JSONSyntaxError {
                    // Not one JSON object: the importer says where, as for any other file.
                    _ = try read(text, format: .cxf, detected: .cxf)
                    throw CommandError.invalid("\(file): the file is not a JSON object")
                } catch let error as VarlinkError where error.name == VarlinkService.InvalidParameter.name {
                    throw CommandError.invalid("\(file): \(error.message ?? error.sentence)")
                }
            }
            return
                "\(file) (\(formatName)): \(report.imported) new, \(report.merged) merged into items the vault had, \(report.unchanged) it had already\n"
        }

        /// Reads `text` as `chosen` (or as it was recognised, `detected`) into items.
        private func read(_ text: [UInt8], format chosen: ImportFormat?, detected: ImportFormat?) throws -> Imported {
            // A key is for a sealed file: read as one, a damaged file says what is wrong with it.
            guard key == nil, detected != .encryptedCXF else {
                // The file is checked before the key's passphrase is asked for.
                let response: EncryptedCXF.Response
                do {
                    response = try EncryptedCXF.Response(parsing: text)
                } catch {
                    throw CommandError.invalid("\(file): \(error)")
                }
                guard let key else {
                    throw CommandError.invalid(
                        "\(file) is an encrypted CXF export: name the private key it was sealed to with --key KEYFILE (what keyport vault keygen wrote beside the request)"
                    )
                }
                let recipientKey = try readRecipientKey(key, options: options)
                do {
                    return try Importer.read(response, key: recipientKey)
                } catch {
                    throw CommandError.invalid("\(file): \(error.message)")
                }
            }
            let reading = ProgressBar("reading \(DisplayText.escaping(file))")
            defer { reading?.finish() }
            do {
                return try Importer.read(text, format: chosen ?? detected) {
                    reading?.finish()
                    return try? options.passphrase("Password of the export: ")
                }
            } catch {
                throw CommandError.invalid("\(file): \(error.message)")
            }
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Write every item as a CXF document (plain, or sealed to an importer's key), or the one-time-code secrets as otpauth:// URIs.",
            discussion: """
                With --request, the CXF document is sealed with HPKE (X25519, HKDF-SHA256, \
                AES-256-GCM) to the public key of an export request (`keyport vault keygen` makes \
                one): only the holder of its private key can open the file, with `keyport vault \
                import FILE --key KEYFILE`.
                """
        )
        @OptionGroup var options: VaultOptions
        @Option(help: "cxf (the default), cxf-hpke (sealed to --request's key; the default with --request) or otpauth.")
        var format: String?
        @Option(
            help: ArgumentHelp(
                "An export request (what `keyport vault keygen` writes): seal the export to its public key.",
                valueName: "REQUEST"
            )
        )
        var request: String?
        @Option(name: .shortAndLong, help: "The file to write (0600); standard output when absent.") var output: String?
        @Flag(
            help: """
                Export to an app you choose instead, through keyportd (credential exchange): the \
                vault must be registered (`keyport vault register`).
                """
        )
        var toApp = false
        @Option(name: .customLong("item"), help: "Only this item (its id, as `list` shows it); repeat for several.")
        var only: [String] = []

        func validate() throws {
            if toApp && (output != nil || format != nil || request != nil) {
                throw ValidationError(
                    "--to-app hands the items to an app: it takes neither --output, --format nor --request"
                )
            }
            if format == "cxf-hpke" ? request == nil : request != nil && format != nil {
                throw ValidationError(
                    "--format cxf-hpke seals the export to the key of an export request: give both, or --request alone"
                )
            }
        }

        func run() async throws {
            if toApp {
                // Unlocked here when the passphrase is given; the exporter asks through keyportd's
                // keeper otherwise.
                _ = try await options.openLocations()
                // The vault's own program exports, so that keyportd knows it as the vault's app.
                let command = try options.appCommand() + ["export"] + only
                let reason = ProcessImage.replace(with: command[0], arguments: command)
                throw CommandError.io("cannot run \(command[0]) (\(reason)); install it beside keyport-cli")
            }
            let format = format ?? (request == nil ? "cxf" : "cxf-hpke")
            guard ["cxf", "cxf-hpke", "otpauth"].contains(format) else {
                throw CommandError.invalid("--format takes cxf, cxf-hpke or otpauth, not '\(format)'")
            }
            // The request is read and checked before the vault is asked for anything.
            let sealTo = try request.map { path throws(CommandError) in try readExportRequest(path) }
            let items = try VaultSelection.items(try await vaultItems(options, progress: "exporting"), only: only)
            let bytes: [UInt8]
            if let sealTo {
                var document = Exporter.cxf(items)
                defer { Wipe.bytes(&document) }
                do {
                    bytes = try EncryptedCXF.seal(document, for: sealTo, exporter: Exporter.rpID)
                } catch {
                    throw CommandError.invalid("\(request!): \(error)")
                }
                reportSealed(items, to: sealTo, output: output)
            } else if format == "otpauth" {
                bytes = Array(Exporter.otpauthList(items).text.utf8)
            } else {
                bytes = Exporter.cxf(items)
            }
            if let output {
                do {
                    try AtomicFile.write(Data(bytes), to: output, private: true)
                } catch {
                    throw CommandError.io("cannot write \(output): \(error)", code: .unwritableOutput)
                }
            } else {
                FileHandle.write(Data(bytes))
            }
        }
    }
}

extension VaultCommand {
    struct Keygen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Make a key pair to receive an encrypted CXF export, and the export request to send to the exporter.",
            discussion: """
                Writes the private key (KEYFILE, mode 0600, sealed under a passphrase unless \
                --no-passphrase; never overwritten) and the export request (public: the suite, \
                X25519 / HKDF-SHA256 / AES-256-GCM, and the public key as a JWK). The exporter \
                seals to the request (`keyport vault export --request REQUEST -o FILE`); you open \
                the file with `keyport vault import FILE --key KEYFILE`. Use a new key pair for \
                each export, and delete the key once the file is imported.
                """
        )

        @Option(name: .shortAndLong, help: ArgumentHelp("The private key file to write.", valueName: "KEYFILE"))
        var output = "keyport-import.key"
        @Option(
            help: ArgumentHelp(
                "The export request to write (default: KEYFILE's name with .request.json for .key).",
                valueName: "REQUEST"
            )
        )
        var request: String?
        @Option(
            help: ArgumentHelp("Your RP ID, which the request names as the importer (a domain).", valueName: "RPID")
        )
        var importer = Exporter.rpID
        @Flag(help: "Write the private key unsealed, protected only by its mode (0600).") var noPassphrase = false
        @Flag(help: "Read the passphrase from the first line of standard input (scripts).")
        var passphraseStdin = false

        /// The request's path: KEYFILE's with `.request.json` in place of `.key`.
        var requestPath: String {
            request ?? ((output.hasSuffix(".key") ? String(output.dropLast(4)) : output) + ".request.json")
        }

        func validate() throws {
            let labels = importer.split(separator: ".", omittingEmptySubsequences: false)
            guard importer.utf8.count <= 253, !labels.isEmpty,
                labels.allSatisfy({ label in
                    // A DNS label as RP IDs are written: ASCII letters, digits and inner hyphens.
                    !label.isEmpty && label.count <= 63 && label.first != "-" && label.last != "-"
                        && label.utf8.allSatisfy {
                            (0x61...0x7A).contains($0 | 0x20) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "-")
                        }
                })
            else {
                throw ValidationError(
                    "--importer takes a domain name, your RP ID (such as example.com), not '\(DisplayText.escaping(importer))'"
                )
            }
            guard FilePaths.standardized(absolute(requestPath)) != FilePaths.standardized(absolute(output)) else {
                throw ValidationError("the key and the request must be two files")
            }
        }

        func run() async throws {
            let requestPath = requestPath
            // Checked before the passphrase is asked; the creation itself checks again, at once.
            for path in [output, requestPath] where FileManager.default.fileExists(atPath: path) {
                throw CommandError.invalid("\(path) exists already; Keyport will not overwrite it")
            }
            let passphrase: SecretBytes?
            if noPassphrase {
                passphrase = nil
            } else {
                passphrase = try readPassphrase(
                    "Passphrase for the key \(output): ",
                    fromStandardInput: passphraseStdin
                )
                if !passphraseStdin {
                    let again = try readPassphrase("The same passphrase again: ", fromStandardInput: false)
                    guard again.isEqual(to: passphrase!) else {
                        throw CommandError.invalid("the two passphrases differ")
                    }
                }
            }
            let sealing = passphrase.map { ($0, ScryptParameters.calibrated()) }
            let (key, request) = EncryptedCXF.RecipientKey.generate(importer: importer)
            let file: SecretBytes
            do {
                file = try EncryptedCXF.KeyFile.encode(key, sealing: sealing)
            } catch {
                throw CommandError.invalid("\(error)")
            }
            do {
                try file.withUnsafeBytes { bytes throws(AtomicFile.WriteError) in
                    try AtomicFile.create(bytes, at: output, mode: 0o600)
                }
            } catch {
                throw CommandError.io(error.message, code: .unwritableOutput)
            }
            do {
                try AtomicFile.create(request, at: requestPath, mode: 0o644)
            } catch {
                // A key without its request is of no use: remove the one just made.
                unlink(output)
                throw CommandError.io(error.message, code: .unwritableOutput)
            }
            let protection =
                sealing.map { "sealed under your passphrase, scrypt N=2^\($0.1.logN), r=\($0.1.r), p=\($0.1.p)" }
                ?? "unsealed, mode 0600"
            FileHandle.write(
                """
                wrote the private key \(output) (\(protection)): keep it, and delete it once the export is imported
                wrote the export request \(requestPath) (public): send it to the exporter, who seals to it with
                  keyport vault export --request \(requestPath) -o export.cxf-hpke.json
                and check with them, by another way than the one the request took, that they seal to the key
                  \(EncryptedCXF.fingerprint(key.publicKey))
                then import what comes back with
                  keyport vault import export.cxf-hpke.json --key \(output)

                """
            )
        }

        private func absolute(_ path: String) -> String {
            path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        }
    }
}

/// An export request, read and checked (`keyport vault export --request`).
func readExportRequest(_ path: String) throws(CommandError) -> EncryptedCXF.Request {
    let bytes = try readInput(path, limit: 1 << 20)
    do {
        return try EncryptedCXF.Request(parsing: bytes)
    } catch {
        throw .invalid("\(path): \(error)")
    }
}

/// The private key of an encrypted export (`keyport vault import --key`), its passphrase asked
/// for when it is sealed.
func readRecipientKey(_ path: String, options: VaultOptions) throws(CommandError) -> EncryptedCXF.RecipientKey {
    var bytes = try readInput(path, limit: 64 << 10)
    defer { Wipe.bytes(&bytes) }
    do {
        let parsed = try EncryptedCXF.KeyFile.read(bytes)
        var status = stat()
        if !parsed.needsPassphrase, stat(path, &status) == 0, status.st_mode & 0o077 != 0 {
            FileHandle.write(
                "keyport: warning: \(path) holds an unsealed private key that others may read (mode \(String(status.st_mode & 0o777, radix: 8))): chmod 600 it\n",
                to: .standardError
            )
        }
        let passphrase =
            parsed.needsPassphrase
            ? try readPassphrase("Passphrase of the key \(path): ", fromStandardInput: options.passphraseStdin) : nil
        return try parsed.open(passphrase: passphrase)
    } catch let error as EncryptedCXFError {
        throw .invalid("\(path): \(error)")
    } catch let error as CommandError {
        throw error
    } catch {
        throw .invalid("\(path): \(error)")
    }
}

/// What `export --request` tells the person: whom the file is for, and which of its credentials
/// the importer did not say it takes (they are in the file all the same; CXF asks an importer to
/// skip what it does not know).
func reportSealed(_ items: [CXF.Item], to request: EncryptedCXF.Request, output: String?) {
    // A request `keyport vault keygen` made without --importer names Keyport's own placeholder,
    // which is no one's name: it is then another Keyport Vault's.
    let importer =
        request.importer == Exporter.rpID ? "a Keyport Vault" : DisplayText.escaping(request.importer)
    FileHandle.write(
        "sealed \(items.count) item\(items.count == 1 ? "" : "s") to the key of \(importer)'s request\(output.map { " in \($0)" } ?? ""); only that key opens it\n"
            + "the key's fingerprint is \(EncryptedCXF.fingerprint(request.publicKey)): check with the importer that it is theirs\n",
        to: .standardError
    )
    guard let taken = request.credentialTypes.map(Set.init) else { return }
    var others: [String: Int] = [:]
    for item in items {
        for credential in item.credentials where !taken.contains(credential.type) {
            others[credential.type, default: 0] += 1
        }
    }
    for (type, count) in others.sorted(by: { $0.key < $1.key }) {
        FileHandle.write(
            "keyport: note: \(importer) does not list \(DisplayText.escaping(type)) among the credential types it takes; the file holds \(count) all the same\n",
            to: .standardError
        )
    }
}

/// Every item of the unlocked vault, through the keeper; with a `progress` label, counted on a
/// progress bar as they come (on a terminal).
func vaultItems(_ options: VaultOptions, progress label: String? = nil) async throws -> [CXF.Item] {
    let locations = try await options.openLocations()
    return try await vaultKeeper { () async throws in
        guard let label, let bar = ProgressBar(label) else { return try await VaultKeeperClient.items(locations) }
        defer { bar.finish() }
        let status = try await VaultKeeperClient.call(locations, VaultKeeper.Status.name).decode(
            VaultKeeper.Status.Reply.self
        )
        return try await VaultKeeperClient.items(locations) { bar.update($0, of: status.items) }
    }
}
