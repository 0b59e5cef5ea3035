import CredentialExchangeFormat
import Foundation
import KeyportInterfaces
import KeyportSystem
import Logging
import Synchronization
import Varlink

/// `org.keyport.Exchange`: credential exchange between apps, with the person's consent, through
/// keyportd's memory only.
///
/// 1. `RequestExport`: the caller must be a registered app that supports exchange (recognised by
///    the program it runs, never by what it says), or keyport's own file exporter. The agent shows
///    the person the risk and the apps that could import (registered, not the exporter, a CXF
///    version in common); their choice, with the newest common version, is kept under a new export
///    id bound to the caller's process.
/// 2. `ExportCredentials`: the data must decode as a CXF document an importer can use (keyportd
///    refuses only that; findings an importer can live with pass on). keyportd starts the chosen
///    app with `KEYPORT_ACTIVITY_TYPE` and a new `KEYPORT_IMPORT_TOKEN` in its environment (never
///    its arguments, which every user can read) and waits.
/// 3. `ImportCredentials`: the token is single use, expires, and is honoured only for the process
///    keyportd started or one it started. The data is handed over and keyportd's copy is wiped.
///    An importer that does not redeem its token in time is stopped.
/// 4. `ReportImport`: the importer says what it kept; the exporter's call returns with that, or
///    without it once the importer has ended or gone quiet. Called with `more`, the exporter hears
///    each step on the way.
package final class ExchangeService: Exchange.Server {
    /// How long a started importer has to redeem its token.
    package let tokenLifetime: Duration
    /// How long the exporter waits, once the importer has the data, for it to say what it kept
    /// (the person may be typing the importer's passphrase).
    package let reportTime: Duration

    private let registry: ProviderRegistry
    private let agents: AgentHub
    private let logger: Logger
    /// The keyport command line beside this keyportd (`keyport-cli`, which `keyport exchange
    /// export` runs as): the built-in file exporter.
    private let builtInExporter: String?

    private struct Export {
        var exporter: PinnedProcess
        var exporterName: String
        var importer: ProviderManifest
        var formatVersion: String
        /// An export whose data does not come within the token lifetime is dropped.
        var expires: ContinuousClock.Instant
    }

    private struct Pending {
        /// The process started for the token; `nil` until it is pinned, which `ready` announces.
        var importer: PinnedProcess?
        /// The importer's app id.
        var app: String
        var ready: Latch
        var document: HeldDocument
        var exporterName: String
        var expires: ContinuousClock.Instant
        var delivered: CheckedContinuation<Result<Void, VarlinkError>, Never>
        /// Opened when the importer took the data.
        var redeemed: Latch
        /// Opened when the hand-over ended either way (taken, or failed).
        var settled: Latch
    }

    /// An import whose outcome the exporter waits for, by token.
    private struct Reporting {
        /// The process that redeemed the token.
        var importer: PinnedProcess
        /// The importer's app id.
        var app: String
        var report: Exchange.ReportImport.Parameters?
        var waiter: CheckedContinuation<Void, Never>?
    }

    private struct State {
        var exports: [String: Export] = [:]
        var pending: [String: Pending] = [:]
        var reports: [String: Reporting] = [:]
        var stopping = false
    }

    private let state = Mutex(State())

    package init(
        registry: ProviderRegistry,
        agents: AgentHub,
        tokenLifetime: Duration,
        reportTime: Duration,
        logger: Logger
    ) {
        self.registry = registry
        self.agents = agents
        self.tokenLifetime = tokenLifetime
        self.reportTime = reportTime
        self.logger = logger
        builtInExporter = KeyportDaemon.keyportCLI
    }

    // MARK: - RequestExport

    package func requestExport(
        _ input: consuming Exchange.RequestExport.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> Exchange.RequestExport.Reply {
        try refuseWhenStopping()
        let caller = request.peer.process
        let manifests = registry.scan().manifests
        let (exporterID, exporterName, declared) = try identifyExporter(caller, among: manifests)
        let offered = input.formatVersions ?? declared
        let eligible = manifests.filter { manifest in
            manifest.id != exporterID && manifest.capabilities.SupportsCredentialExchange
                && manifest.capabilities.ImportsCredentials == true
                && Self.newestCommon(offered, manifest.capabilities.SupportedCredentialExchangeVersions) != nil
        }
        guard !eligible.isEmpty else {
            throw VarlinkError(
                Exchange.NoImporter(
                    message:
                        "no other registered app can import credentials in CXF \(offered.joined(separator: ", ")); install one that supports credential exchange"
                )
            )
        }
        let question = Agent.Request(
            id: UUID().uuidString,
            kind: .export,
            app: exporterName,
            message: """
                \(exporterName) wants to export your credentials: passwords, passkeys, one-time-code \
                secrets and the rest of what it holds for you. The app you choose receives all of \
                them and can use them as its own. Choose an app only if you trust it with your \
                accounts.
                """,
            choices: eligible.map { Agent.Choice(id: $0.id, name: $0.name) }
        )
        let answer: Agent.Answer.Parameters
        do {
            answer = try await agents.ask(question)
        } catch {
            switch error {
            case .noAgent:
                throw VarlinkError(
                    Exchange.NoAgent(
                        message: AgentHub.nobodyToAsk() + ", and try again"
                    )
                )
            case .unshown(let reason):
                throw VarlinkError(Exchange.NoAgent(message: AgentHub.notShown(because: reason)))
            // (An export's question waits for the person as long as the exporter does.)
            case .withdrawn, .timedOut:
                throw VarlinkError(Exchange.Declined(message: "the request was withdrawn before it was answered"))
            case .stopping:
                throw VarlinkError(Exchange.ShuttingDown(message: "keyportd is stopping; nothing was exported"))
            }
        }
        guard let choice = answer.choice else {
            throw VarlinkError(Exchange.Declined(message: "the export was declined"))
        }
        guard let importer = eligible.first(where: { $0.id == choice }),
            let version = Self.newestCommon(offered, importer.capabilities.SupportedCredentialExchangeVersions)
        else {
            throw VarlinkError(Exchange.NoImporter(message: "the chosen app \(choice) is no longer registered"))
        }
        let export = UUID().uuidString
        let expires = ContinuousClock.now + tokenLifetime
        state.withLock { state in
            // Exports whose data never came (the exporter gave up) go, so the table stays small.
            state.exports = state.exports.filter { $0.value.expires > .now && $0.value.exporter.isAlive }
            state.exports[export] = Export(
                exporter: caller,
                exporterName: exporterName,
                importer: importer,
                formatVersion: version,
                expires: expires
            )
        }
        logger.info(
            "export approved",
            metadata: ["exporter": "\(exporterName)", "importer": "\(importer.id)", "version": "\(version)"]
        )
        return Exchange.RequestExport.Reply(export: export, formatVersion: version)
    }

    /// Which registered app that supports exchange the caller is (``AppResolver``), or keyport's
    /// own file exporter.
    private func identifyExporter(
        _ caller: PinnedProcess,
        among manifests: [ProviderManifest]
    ) throws(VarlinkError) -> (id: String?, name: String, versions: [String]) {
        let identity: AppResolver.Identity
        do {
            identity = try AppResolver.identify(caller, among: manifests)
        } catch {
            throw VarlinkError(Exchange.NotAllowed(message: "keyportd cannot tell which app is asking: \(error)"))
        }
        switch identity {
        case .app(let manifest, let recognisedBy):
            guard manifest.capabilities.SupportsCredentialExchange else {
                throw VarlinkError(
                    Exchange.NotAllowed(
                        message:
                            "\(manifest.name) (\(manifest.id), recognised by \(recognisedBy)) does not declare SupportsCredentialExchange in its manifest"
                    )
                )
            }
            return (manifest.id, manifest.name, manifest.capabilities.SupportedCredentialExchangeVersions)
        case .unregistered(let program, _) where program != nil && program == builtInExporter:
            return (nil, "keyport (a CXF file)", ["1.0"])
        case .unregistered(_, let description):
            throw VarlinkError(
                Exchange.NotAllowed(
                    message:
                        "the caller is not a registered app: it is \(description); an app that exports needs a manifest (keyport/providers/*.json) with SupportsCredentialExchange"
                )
            )
        }
    }

    // MARK: - ExportCredentials

    package func exportCredentials(
        _ input: consuming Exchange.ExportCredentials.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> Exchange.ExportCredentials.Reply {
        try refuseWhenStopping()
        let exportID = input.export
        let descriptorIndex = input.dataDescriptor
        // Taken out of the parameters, which are this call's own: the held document is then the
        // only reference to the bytes that came in the message (they can be 50 MB), so that
        // wiping it reaches them.
        var inline = input.data?.bytes
        input.data = nil
        var document = try Self.document(inline: inline.take(), descriptor: descriptorIndex, of: request)
        let caller = request.peer.process
        let export = state.withLock { state -> Export? in
            guard let export = state.exports[exportID], export.exporter.pid == caller.pid, export.exporter.isAlive,
                export.expires > .now
            else {
                return nil
            }
            state.exports.removeValue(forKey: exportID)
            return export
        }
        guard let export else {
            throw VarlinkError(
                Exchange.UnknownExport(
                    message: "no export \(exportID) of this app is waiting for its data; call RequestExport first"
                )
            )
        }
        try check(document)
        // Lowercase, as UUIDs are written in text (RFC 9562); tokens are compared as UUIDs.
        let token = UUID().uuidString.lowercased()
        var environment = ProcessInfo.processInfo.environment
        environment[Exchange.activityTypeVariable] = Exchange.activityType
        environment[Exchange.importTokenVariable] = token
        let lifetime = tokenLifetime
        let ready = Latch()
        let redeemed = Latch()
        let settled = Latch()
        let name = export.importer.name
        let started = Mutex<ChildProcess?>(nil)
        // Told to the exporter (called with `more`) as soon as the importer runs.
        let toldStarted = Mutex<Task<Void, Never>?>(nil)
        let result: Result<Void, VarlinkError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (delivered: CheckedContinuation<Result<Void, VarlinkError>, Never>) in
                // The token is known before the importer starts, so however fast it asks, it is
                // found; it waits on `ready` until its process is pinned.
                let stopping = state.withLock { state -> Bool in
                    guard !state.stopping else { return true }
                    state.pending[token] = Pending(
                        importer: nil,
                        app: export.importer.id,
                        ready: ready,
                        document: document,
                        exporterName: export.exporterName,
                        expires: .now + lifetime,
                        delivered: delivered,
                        redeemed: redeemed,
                        settled: settled
                    )
                    return false
                }
                // The pending hand-over now holds the only reference to the document's bytes, so
                // wiping them there reaches the buffer itself, not a copy made on write.
                document = .bytes([])
                guard !stopping else {
                    ready.open()
                    let error = VarlinkError(
                        Exchange.ShuttingDown(message: "keyportd is stopping; nothing was handed over")
                    )
                    delivered.resume(returning: .failure(error))
                    return
                }
                let child: ChildProcess
                do {
                    child = try ChildProcess(
                        executable: export.importer.exec[0],
                        arguments: Array(export.importer.exec.dropFirst()),
                        environment: environment
                    )
                } catch {
                    ready.open()
                    let reason = "\(name) could not be started (\(export.importer.exec[0])): \(error)"
                    fail(token, VarlinkError(Exchange.ImporterFailed(message: reason)))
                    return
                }
                started.withLock { $0 = child }
                if request.call.more {
                    toldStarted.withLock {
                        $0 = Task {
                            try? await request.send(Exchange.ExportCredentials.Reply(state: .started, importer: name))
                        }
                    }
                }
                // A process that has already ended cannot be pinned; it could not redeem the
                // token either, and the watch below reports how it ended.
                if let pinned = try? PinnedProcess(pid: child.pid) {
                    state.withLock { $0.pending[token]?.importer = pinned }
                }
                ready.open()
                logger.info("importer started", metadata: ["importer": "\(export.importer.id)", "pid": "\(child.pid)"])
                // Whichever comes first ends the wait: the importer takes the data, ends without
                // taking it, the token expires, or the exporter gives up — and unless the data was
                // taken, the importer keyportd started for it is stopped, not left running.
                Task {
                    await withTaskGroup(of: Void.self) { group in
                        group.addTask { await child.waitForExit() }
                        group.addTask { try? await Task.sleep(for: lifetime) }
                        group.addTask { await settled.wait() }
                        await group.next()
                        group.cancelAll()
                    }
                    guard !redeemed.isOpen else { return }
                    let reason =
                        child.isRunning
                        ? "\(name) did not take the credentials within \(lifetime.components.seconds) seconds of being started; it was stopped, and nothing was handed over"
                        : "\(name) ended (\(child.termination.map { "\($0)" } ?? "exited")) without importing"
                    self.fail(token, VarlinkError(Exchange.ImporterFailed(message: reason)))
                    if child.isRunning { await Self.stop(child) }
                }
            }
        } onCancel: {
            self.fail(token, VarlinkError(Exchange.ShuttingDown(message: "the export was cancelled")))
        }
        await toldStarted.withLock { $0 }?.value
        try result.get()
        logger.info("export handed over", metadata: ["importer": "\(export.importer.id)"])
        if request.call.more {
            try await request.send(Exchange.ExportCredentials.Reply(state: .handed, importer: name))
        }
        let report = await awaitReport(token, from: started.withLock { $0 })
        logger.info(
            report == nil ? "import not reported" : "import reported",
            metadata: ["importer": "\(export.importer.id)", "imported": "\(report?.imported ?? -1)"]
        )
        return Exchange.ExportCredentials.Reply(
            state: report == nil ? .unreported : .reported,
            importer: name,
            report: report
        )
    }

    /// Stops an importer keyportd started that did not take its data: SIGTERM to its process
    /// group, SIGKILL if it has not ended 3 seconds later.
    private static func stop(_ child: ChildProcess) async {
        child.signalGroup(SIGTERM)
        let ended = await within(.seconds(3)) { () -> Bool? in
            await child.waitForExit()
            return child.isRunning ? nil : true
        }
        if ended == nil { child.signalGroup(SIGKILL) }
    }

    /// Waits for the importer's report of the import `token`: until it comes, the importer
    /// (`child`, when keyportd started it) has ended, or ``reportTime`` has passed. `nil` when it
    /// did not say.
    private func awaitReport(_ token: String, from child: ChildProcess?) async -> Exchange.ReportImport.Parameters? {
        let limit = reportTime
        return await withTaskGroup(of: Void.self) { group -> Exchange.ReportImport.Parameters? in
            group.addTask {
                await withCheckedContinuation { (reported: CheckedContinuation<Void, Never>) in
                    let now = self.state.withLock { state -> Bool in
                        guard var slot = state.reports[token], slot.report == nil else { return true }
                        slot.waiter = reported
                        state.reports[token] = slot
                        return false
                    }
                    if now { reported.resume() }
                }
            }
            group.addTask {
                guard let child else {
                    try? await Task.sleep(for: limit)
                    return
                }
                await child.waitForExit()
                // A report sent just before the importer ended may still be on its way.
                try? await Task.sleep(for: .milliseconds(500))
            }
            group.addTask { try? await Task.sleep(for: limit) }
            await group.next()
            group.cancelAll()
            // The waiter, if still waiting, is let go; what the importer said so far is the answer.
            let slot = self.state.withLock { $0.reports.removeValue(forKey: token) }
            slot?.waiter?.resume()
            return slot?.report
        }
    }

    /// keyportd is stopping: exchanges waiting for their importer end with `ShuttingDown` (their
    /// data wiped, nothing handed over), and no new one starts.
    package func shutDown() {
        let tokens = state.withLock { state in
            state.stopping = true
            state.exports = [:]
            return Array(state.pending.keys)
        }
        for token in tokens {
            fail(
                token,
                VarlinkError(Exchange.ShuttingDown(message: "keyportd is stopping; nothing was handed over"))
            )
        }
    }

    /// Ends a pending hand-over that has not happened, wiping its data.
    private func fail(_ token: String, _ error: VarlinkError) {
        guard var pending = state.withLock({ $0.pending.removeValue(forKey: token) }) else { return }
        pending.document.wipe()
        pending.delivered.resume(returning: .failure(error))
        pending.settled.open()
    }

    /// The document as the call gave it: `data` in the message, or the memory file whose index
    /// is `dataDescriptor` — exactly one of them — checked to be sealed.
    private static func document(
        inline: [UInt8]?,
        descriptor index: Int?,
        of request: VarlinkRequest
    ) throws(VarlinkError) -> HeldDocument {
        func invalid(_ message: String, _ problem: String) -> VarlinkError {
            VarlinkError(Exchange.InvalidData(message: message, problems: [problem]))
        }
        switch (inline, index) {
        case (let bytes?, nil):
            return .bytes(bytes)
        case (nil, let index?):
            guard let descriptor = request.descriptors.take(index) else {
                let how =
                    request.passesDescriptors
                    ? "\(request.descriptors.count) came with the call, and only memory files are kept"
                    : "descriptors pass only on keyportd's descriptor socket, beside this one (keyportd-fd.sock by default)"
                throw invalid("the data did not come", "no descriptor \(index): \(how)")
            }
            do {
                return .file(try MemoryFile(checking: descriptor, maximumSize: CXF.DecodingOptions().maxDocumentSize))
            } catch {
                throw invalid("the data's descriptor cannot be trusted to hold still", error.description)
            }
        default:
            throw invalid(
                "the data must come once",
                "give either \"data\" or \"dataDescriptor\", not \(inline == nil ? "neither" : "both")"
            )
        }
    }

    /// Refuses only what an importer cannot use at all: bytes that are not a CXF document, or a
    /// version it does not read. Other findings pass on with the data.
    private func check(_ document: HeldDocument) throws(VarlinkError) {
        // What no importer can use: not a CXF document's header, or a major version other than 1.
        // One pass over the top level, which stops at `accounts` once the version is known
        // (exporters write it first): the full decode would cost an importer's decode again, on
        // the critical path, to find problems keyportd passes on anyway. A memory file is read
        // where it is mapped, not copied.
        let header: PeekedHeader
        do {
            header = try document.withBytes { bytes in try CXF.Decoder().peekHeader(bytes) }
        } catch {
            throw VarlinkError(
                Exchange.InvalidData(message: "the data is not a CXF document", problems: ["\(error)"])
            )
        }
        guard header.hasAccounts, let major = header.major else {
            throw VarlinkError(
                Exchange.InvalidData(
                    message:
                        "the data is not a CXF document's header",
                    problems: [header.hasAccounts ? "it has no version with a major number" : "it has no \"accounts\""]
                )
            )
        }
        guard major == 1 else {
            throw VarlinkError(
                Exchange.InvalidData(
                    message:
                        "no importer can read CXF \(major).x",
                    problems: ["version \(major) is not 1"]
                )
            )
        }
    }

    /// The CXF validator's verdict on an export, for the log, once the importer has it: it never
    /// holds the hand-over up (what an importer can live with passes on as it came). It runs in a
    /// process of its own (``ExchangeReview``: keyportd's own program, reading the memory file) so
    /// that keyportd never builds a whole document's model (several times the document in memory)
    /// and a flaw in the decoder cannot reach keyportd. Bytes that came in a message are put in a
    /// memory file for it and wiped. When no review can run, the log says why.
    private func review(_ document: consuming HeldDocument, from exporter: String) {
        let logger = logger
        func notReviewed(_ why: String) {
            logger.info("export not reviewed", metadata: ["exporter": "\(exporter)", "why": "\(why)"])
        }
        let file: MemoryFile
        do {
            file = try document.sealed(name: "keyport-review")
        } catch {
            document.wipe()
            return notReviewed("the document could not be put in a memory file: \(error)")
        }
        Task.detached(priority: .background) {
            let child: ChildProcess
            do {
                child = try ChildProcess(
                    executable: Executable.running,
                    arguments: [ExchangeReview.argument],
                    environment: [:],
                    streams: .captured(input: nil),
                    descriptor3: file.descriptor
                )
            } catch {
                return notReviewed("the review could not start: \(error)")
            }
            withExtendedLifetime(file) {}
            await child.waitForExit()
            // Its output may still be on its way when it has exited.
            await child.output?.waitForEnd()
            switch ExchangeReview.outcome(
                of: child.termination,
                output: Array(child.output?.standardOutput ?? Data()),
                errors: Array(child.output?.standardError ?? Data())
            ) {
            case .verdict(let verdict):
                var metadata: Logger.Metadata = [
                    "exporter": "\(exporter)", "errors": "\(verdict.errors)", "warnings": "\(verdict.warnings)",
                ]
                if let unreadable = verdict.unreadable { metadata["unreadable"] = "\(unreadable)" }
                logger.info("export reviewed", metadata: metadata)
            case .notReviewed(let why):
                notReviewed(why)
            }
        }
    }

    // MARK: - ImportCredentials

    /// The app whose importer keyportd started as `process` (or that redeemed a token for it),
    /// while the exchange lasts; `nil` for any other process.
    package func importer(startedAs process: PinnedProcess) -> String? {
        state.withLock { state in
            let importers =
                state.pending.values.compactMap { pending in pending.importer.map { ($0, pending.app) } }
                + state.reports.values.map { ($0.importer, $0.app) }
            return importers.first { $0.0.isSameProcess(as: process) }?.1
        }
    }

    package func importCredentials(
        _ input: consuming Exchange.ImportCredentials.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> Exchange.ImportCredentials.Reply {
        let given = input.token
        // A token is a UUID: compared as one, whatever the case of its letters.
        let token = UUID(uuidString: given)?.uuidString.lowercased() ?? given
        let caller = request.peer.process
        func invalid(_ message: String) -> VarlinkError {
            VarlinkError(Exchange.InvalidToken(message: message))
        }
        guard let ready = state.withLock({ $0.pending[token]?.ready }) else {
            throw invalid("the token is unknown or was used already; tokens are single use")
        }
        await ready.wait()
        guard let pending = state.withLock({ $0.pending[token] }), let importer = pending.importer else {
            throw invalid("the token is unknown or was used already; tokens are single use")
        }
        guard ContinuousClock.now < pending.expires else {
            fail(token, VarlinkError(Exchange.ImporterFailed(message: "the importer's token expired")))
            throw invalid("the token has expired")
        }
        // The process keyportd started for this token, or one it started.
        let authorised = caller.pid == importer.pid || (try? caller.isDescendant(of: importer)) == true
        guard authorised else {
            logger.warning(
                "a process keyportd did not start presented an import token",
                metadata: ["pid": "\(caller.pid)"]
            )
            throw invalid("this token was given to another process; only the app keyportd started for it can redeem it")
        }
        guard
            var taken = state.withLock({ state -> Pending? in
                guard let taken = state.pending.removeValue(forKey: token) else { return nil }
                // From now on the exporter waits for this process to say what it kept.
                state.reports[token] = Reporting(importer: caller, app: pending.app)
                return taken
            })
        else {
            throw invalid("the token is unknown or was used already; tokens are single use")
        }
        taken.redeemed.open()
        taken.settled.open()
        // Moved out, so the reply and then the review hold the document's only reference, and
        // the review's wipe reaches the bytes themselves.
        var document = HeldDocument.bytes([])
        swap(&document, &taken.document)
        let reply: Exchange.ImportCredentials.Reply
        do {
            reply = try Self.reply(handing: &document, to: request)
        } catch {
            document.wipe()
            _ = state.withLock { $0.reports.removeValue(forKey: token) }
            taken.delivered.resume(
                returning: .failure(VarlinkError(Exchange.ImporterFailed(message: "the data could not be handed over")))
            )
            throw error
        }
        taken.delivered.resume(returning: .success(()))
        // The review starts once the reply is written, so its model is not built beside the
        // reply's buffers.
        let exporter = taken.exporterName
        let held = Mutex(Optional(consume document))
        request.afterReply { [self] in
            if let document = held.withLock({ $0.take() }) { review(document, from: exporter) }
        }
        return reply
    }

    /// `ImportCredentials`' reply handing `document` over as the connection can: a descriptor to
    /// the memory file where descriptors pass (bytes that came in a message are first put in a
    /// sealed one, and wiped), else the document's bytes in the message.
    private static func reply(
        handing document: inout HeldDocument,
        to request: VarlinkRequest
    ) throws(VarlinkError) -> Exchange.ImportCredentials.Reply {
        if request.passesDescriptors {
            let file: MemoryFile
            do {
                file = try document.sealed(name: "keyport-exchange")
            } catch {
                throw VarlinkError(Exchange.ImporterFailed(message: "the data could not be handed over: \(error)"))
            }
            document = .file(file)
            let index = request.attach(file)
            return Exchange.ImportCredentials.Reply(data: nil, dataDescriptor: index)
        }
        // Into a message: bytes that came in one were checked as it was read; a memory file's
        // were only peeked at, and are checked to be one JSON object before they are written in,
        // so that they cannot add members to the reply or end the message early.
        do {
            switch document {
            case .bytes(let bytes):
                // The reply shares the document's buffer until it is written: it is gone by the
                // time the review (after the reply) wipes the document, whose wipe then reaches
                // the bytes themselves. Nothing may keep the reply longer.
                return Exchange.ImportCredentials.Reply(data: RawJSON(bytes: bytes))
            case .file(let file):
                let bytes = try file.withBytes { Array($0) }
                try JSONText.checkObject(bytes)
                return Exchange.ImportCredentials.Reply(data: RawJSON(bytes: bytes))
            }
        } catch {
            throw VarlinkError(Exchange.ImporterFailed(message: "the data could not be handed over: \(error)"))
        }
    }

    // MARK: - ReportImport

    package func reportImport(
        _ input: consuming Exchange.ReportImport.Parameters,
        request: VarlinkRequest
    ) throws(VarlinkError) -> Exchange.ReportImport.Reply {
        let token = UUID(uuidString: input.token)?.uuidString.lowercased() ?? input.token
        let caller = request.peer.process
        func invalid(_ message: String) -> VarlinkError {
            VarlinkError(Exchange.InvalidToken(message: message))
        }
        guard let importer = state.withLock({ $0.reports[token]?.importer }) else {
            throw invalid(
                "no export waits for a report of this token: it was never redeemed, was reported already, or the exporter stopped waiting"
            )
        }
        guard caller.pid == importer.pid || (try? caller.isDescendant(of: importer)) == true else {
            throw invalid("only the app that imported with this token can report on it")
        }
        guard input.imported >= 0 else { throw .invalidParameter("imported", "a count of items is never negative") }
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>?? in
            guard var slot = state.reports[token], slot.report == nil else { return nil }
            slot.report = input
            defer {
                slot.waiter = nil
                state.reports[token] = slot
            }
            return .some(slot.waiter)
        }
        guard let waiter else { throw invalid("this import was reported already") }
        waiter?.resume()
        return .init()
    }

    // MARK: - Helpers

    private func refuseWhenStopping() throws(VarlinkError) {
        if state.withLock({ $0.stopping }) {
            throw VarlinkError(Exchange.ShuttingDown(message: "keyportd is stopping; try again once it runs"))
        }
    }

    /// The newest version in both lists ("1.0" < "1.2" < "2.0"), or `nil`.
    static func newestCommon(_ offered: [String], _ supported: [String]) -> String? {
        func key(_ version: String) -> (Int, Int) {
            let parts = version.split(separator: ".").compactMap { Int($0) }
            return (parts.first ?? 0, parts.dropFirst().first ?? 0)
        }
        return Set(offered).intersection(supported).max { key($0) < key($1) }
    }
}

/// An export's document as keyportd holds it until its importer takes it.
enum HeldDocument: Sendable {
    /// The bytes that came in the call's message: wiped when done with.
    case bytes([UInt8])
    /// The sealed memory file the exporter passed: mapped to be read, never copied.
    case file(MemoryFile)

    /// Calls `body` with the document's bytes where they are.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        switch self {
        case .bytes(let bytes): try bytes.withUnsafeBytes(body)
        case .file(let file): try file.withBytes(body)
        }
    }

    /// The document as a sealed memory file: the file it is, or one made of its bytes, which are
    /// then wiped (the document holds nothing more).
    ///
    /// - Throws: ``MemoryFileError`` when the file cannot be made; the bytes are left as they were.
    mutating func sealed(name: String) throws(MemoryFileError) -> MemoryFile {
        let file: MemoryFile
        switch self {
        case .file(let held):
            return held
        case .bytes(let bytes):
            var made: Result<MemoryFile, MemoryFileError>!
            bytes.withUnsafeBytes { contents in
                made = Result { () throws(MemoryFileError) in try MemoryFile(name: name, contents: contents) }
            }
            file = try made.get()
        }
        wipe()
        return file
    }

    /// Wipes bytes keyportd holds; lets a memory file go (nothing of it is keyportd's to wipe:
    /// the pages are the kernel's, freed with the last descriptor).
    mutating func wipe() {
        if case .bytes(var bytes) = self {
            self = .bytes([])
            Wipe.bytes(&bytes)
        }
        self = .bytes([])
    }
}
