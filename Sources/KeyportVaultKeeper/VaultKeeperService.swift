import CredentialExchangeFormat
import Foundation
import KeyportCrypto
import KeyportDomains
import KeyportEncoding
import KeyportInterfaces
import KeyportSystem
import KeyportVault
import Synchronization
import Varlink

/// `org.keyport.Vault`: holds one vault unlocked, and forgets its key `timeout` after the last
/// request, or on `Lock`.
///
/// The vault's calls are synchronous SQLite work (unlocking runs scrypt for half a second, an
/// import of 100 000 items a few seconds); they run on the request's task, which holds one of
/// the cooperative threads meanwhile. An agent serves one person's few clients, so that is
/// acceptable, and no request waits on another's.
package final class VaultKeeperService: VaultKeeper.Server {
    private struct State {
        var vault: Vault?
        var timeout: Duration
        var deadline: ContinuousClock.Instant?
        /// Counted up by every request: a lock timer that finds it changed was overtaken.
        var generation = 0
    }

    /// What changed in the vault, for whoever keeps a copy of what it holds (the identity store
    /// AutoFill matches against, which must know the vault's logins even while it is locked).
    package enum Change: Sendable {
        /// These items are new or changed.
        case saved([CXF.Item])
        /// These items are gone.
        case removed([CXF.Item])
        /// Anything may have changed (a vault was unlocked, or imported into): read them all
        /// again (``forEachItem(_:)``) when this change's turn comes.
        case everything
    }

    private let state: Mutex<State>
    private let autoFillState = Mutex<VaultKeeper.AutoFillState?>(nil)

    /// What the keeper's identity sync last heard from AutoFill, which `Status` reports.
    package var autoFill: VaultKeeper.AutoFillState? {
        get { autoFillState.withLock { $0 } }
        set { autoFillState.withLock { $0 = newValue } }
    }
    /// Held across each change and its report, so that `changed` hears changes in the order
    /// they were written.
    private let writing = Mutex(())
    private let defaultTimeout: Duration

    /// The longest a vault may stay unlocked without a request: a week.
    package static let maximumTimeout = 7 * 24 * 3600
    private let changed: @Sendable (Change) -> Void
    /// Who may read, export and change the unlocked vault without asking the person.
    private let access: VaultKeeperAccess

    /// The vault this keeper serves: `Unlock` opens this file and no other, so no process can
    /// switch the agent to a file of its own and catch what the person adds next.
    package let vaultPath: String
    /// The file ``vaultPath`` named when the keeper first saw it (at its start, or once `keyport
    /// vault init` made it): a path can be made to name another file at any time — a link
    /// repointed, a file renamed over it — and a permission given for one file must not reach
    /// another. ``reasonToEnd()`` tells the keeper to end when the path moves on.
    private let servedFile: Mutex<FileIdentity?>
    /// The ``Vault/fingerprint`` of the vault this keeper first opened: a file swapped in for a
    /// moment while the path was opened, or written over in place, holds another vault, which
    /// this keeper never serves under this one's name and permissions.
    private let servedVault = Mutex<[UInt8]?>(nil)
    /// Why this keeper must end, once something showed it no longer serves its vault.
    private let ending = Mutex<String?>(nil)

    /// A keeper for the vault at `vault` (an absolute path), which locks `defaultTimeout` after
    /// its last request unless `Unlock` asks for another time; `access` decides which callers may
    /// read, export and change it without asking the person; `changed` hears every change, in
    /// order, as soon as it is written (it must not block: queue the work).
    package init(
        vault: String,
        defaultTimeout: Duration,
        access: VaultKeeperAccess,
        changed: @escaping @Sendable (Change) -> Void = { _ in }
    ) {
        self.vaultPath = FilePaths.standardized(vault)
        servedFile = Mutex(FileIdentity(vaultPath))
        self.defaultTimeout = defaultTimeout
        self.access = access
        self.changed = changed
        state = Mutex(State(vault: nil, timeout: defaultTimeout))
    }

    // MARK: - Methods

    /// The imports' parameters can be as large as a message (512 MiB, and an item read apart is an
    /// allocation of its own): their callers are authorized before anything they sent is read.
    package func admit(_ method: String, request: VarlinkRequest) async throws(VarlinkError) {
        switch method {
        case VaultKeeper.Import.name:
            try await authorize(request, to: "import items into the vault \(vaultPath)")
        case VaultKeeper.ImportDocument.name:
            try await authorize(request, to: "import a credential exchange's items into the vault \(vaultPath)")
        default:
            return
        }
    }

    package func status(_: consuming VaultKeeper.Status.Parameters, request: VarlinkRequest) -> VaultKeeper.Status.Reply
    {
        status()
    }

    package func changePassphrase(
        _ input: consuming VaultKeeper.ChangePassphrase.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> VaultKeeper.ChangePassphrase.Reply {
        guard !input.newPassphrase.isEmpty else {
            throw .invalidParameter("newPassphrase", "the new passphrase is empty")
        }
        try await authorize(request, to: "change the passphrase of the vault \(vaultPath)")
        // The current passphrase must open the open vault itself (its own connection, not the
        // path): proof, not just an unlocked keeper. Only a proof moves the lock's deadline.
        let open = try unlockedVault()
        let proven: Bool
        do throws(VaultError) {
            proven = try open.opens(with: SecretBytes(input.passphrase))
        } catch {
            throw Self.failure(error)
        }
        guard proven else {
            throw Self.failure(
                VaultError(
                    .wrongPassphrase,
                    "the passphrase does not open \(vaultPath); its passphrase was not changed"
                )
            )
        }
        try using { vault throws(VaultError) in
            try vault.changePassphrase(to: SecretBytes(input.newPassphrase), kdf: ScryptParameters.calibrated())
        }
        return .init()
    }

    package func lock(_: consuming VaultKeeper.Lock.Parameters, request: VarlinkRequest) -> VaultKeeper.Lock.Reply {
        lock()
        return .init()
    }

    package func add(
        _ input: consuming VaultKeeper.Add.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> VaultKeeper.Add.Reply {
        let item = try Self.item(input.item)
        try await authorize(request, to: "add an item to the vault \(vaultPath)")
        let revision = try change { vault throws(VaultError) in
            (try vault.add(item), [.saved([item])])
        }
        return VaultKeeper.Add.Reply(revision: Int(revision))
    }

    package func update(
        _ input: consuming VaultKeeper.Update.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> VaultKeeper.Update.Reply {
        let item = try Self.item(input.item)
        try await authorize(request, to: "change an item of the vault \(vaultPath)")
        let revision = try change { vault throws(VaultError) in
            let old = try vault.item(id: item.id)
            // The old identities go first: a changed user name or site leaves none behind.
            return (try vault.update(item), (old.map { [.removed([$0])] } ?? []) + [.saved([item])])
        }
        return VaultKeeper.Update.Reply(revision: Int(revision))
    }

    package func remove(
        _ input: consuming VaultKeeper.Remove.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> VaultKeeper.Remove.Reply {
        let id = try Self.id(input.id)
        try await authorize(request, to: "remove an item from the vault \(vaultPath)")
        try change { vault throws(VaultError) in
            let item = try vault.item(id: id)
            try vault.remove(id: id)
            return ((), item.map { [.removed([$0])] } ?? [])
        }
        return .init()
    }

    package func get(
        _ input: consuming VaultKeeper.Get.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> VaultKeeper.Get.Reply {
        let id = try Self.id(input.id)
        try await authorize(request, to: "read an item of the vault \(vaultPath), with its secrets")
        let item = try using { vault throws(VaultError) in try vault.item(id: id) }
        return VaultKeeper.Get.Reply(item: item.map { RawJSON(bytes: $0.json) })
    }

    package func lookup(
        _ input: consuming VaultKeeper.Lookup.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> VaultKeeper.Lookup.Reply {
        try await authorize(
            request,
            to: "read the items of the vault \(vaultPath) saved for \(input.service), with their secrets"
        )
        let items = try using { vault throws(VaultError) in
            try vault.items(forService: input.service, exact: input.exact ?? false)
        }
        // The items' JSON passed on as it is, not read and written again.
        return VaultKeeper.Lookup.Reply(items: items.map { RawJSON(bytes: $0.json) })
    }

    package func find(
        _ input: consuming VaultKeeper.Find.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> VaultKeeper.Find.Reply {
        let found = try await find(input.target, for: request)
        return VaultKeeper.Find.Reply(
            items: found.items.map { RawJSON(bytes: $0.json) },
            how: found.how,
            wider: found.wider
        )
    }

    package func show(
        _ input: consuming VaultKeeper.Show.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> VaultKeeper.Show.Reply {
        let found = try await find(input.target, for: request)
        let now = Int64(Date().timeIntervalSince1970)
        let shown = found.items.map { item in
            let summary = ItemSummary(item)
            return VaultKeeper.ShownItem(
                id: Base64URL.encode(item.id),
                line: summary.line,
                details: summary.details(reveal: input.reveal ?? false, at: now)
            )
        }
        return VaultKeeper.Show.Reply(items: shown, how: found.how, wider: found.wider)
    }

    package func list(
        _: consuming VaultKeeper.List.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> VaultKeeper.List.Reply {
        try await authorize(request, to: "read every item of the vault \(vaultPath), with its secrets")
        return try await list(request)
    }

    package func `import`(
        _ input: consuming VaultKeeper.Import.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> VaultKeeper.Import.Reply {
        // Authorized before its items were read (admit).
        var items: [CXF.Item] = []
        items.reserveCapacity(input.items.count)
        for (index, raw) in input.items.enumerated() {
            do {
                items.append(try CXF.Decoder().decode(CXF.Part<CXF.Item>.object, from: raw.bytes))
            } catch {
                throw .invalidParameter("items", "item \(index + 1) is not a CXF item: \(error)")
            }
        }
        return try await importing(items, for: request)
    }

    /// `ImportDocument`: the document's items, decoded once here.
    package func importDocument(
        _ input: consuming VaultKeeper.ImportDocument.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> VaultKeeper.ImportDocument.Reply {
        // Authorized before the document was read (admit). As large as a message the keeper
        // takes: a document that came whole is read whole.
        let decoder = CXF.Decoder(options: CXF.DecodingOptions(maxDocumentSize: VaultKeeper.maximumMessageSize))
        let items: [CXF.Item]
        do {
            items =
                switch try decoder.decode(input.document.bytes).document {
                case .header(let header): header.accounts.flatMap(\.items)
                case .account(let account): account.items
                }
        } catch {
            throw .invalidParameter("document", "the document is not CXF: \(error)")
        }
        return try await importing(items, for: request)
    }

    // MARK: - Locking

    private func status() -> VaultKeeper.Status.Reply {
        let (vault, deadline) = state.withLock { ($0.vault, $0.deadline) }
        // AutoFill was behind (the vault not yet registered or enabled): the person asking is
        // likely to have just fixed that, so everything is sent again, in its turn.
        if vault != nil, autoFill?.current == false { changed(.everything) }
        // Counted outside the lock: a count waits for SQLite, and nothing else should wait for it.
        return VaultKeeper.Status.Reply(
            path: vaultPath,
            unlocked: vault != nil,
            locksIn: deadline.map { Int(max(($0 - .now).components.seconds, 0)) },
            items: try? vault?.count,
            autoFill: autoFill
        )
    }

    package func unlock(
        _ input: consuming VaultKeeper.Unlock.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> VaultKeeper.Unlock.Reply {
        guard input.path.hasPrefix("/") else {
            throw .invalidParameter("path", "the vault's path must be absolute, not '\(input.path)'")
        }
        guard FilePaths.sameFile(input.path, vaultPath) else {
            throw VarlinkError(
                VaultKeeper.WrongVault(
                    vault: vaultPath,
                    message:
                        "this keeper serves \(vaultPath), not \(input.path); each vault has a keeper of its own (`keyport vault unlock --vault \(input.path)` starts it)"
                )
            )
        }
        if let timeout = input.timeout, !(1...Self.maximumTimeout).contains(timeout) {
            throw .invalidParameter(
                "timeout",
                "a vault stays unlocked for 1 to \(Self.maximumTimeout) seconds (a week), not \(timeout)"
            )
        }
        // The file this keeper serves, checked before and after it is opened: the path may have
        // been pointed at another file meanwhile. What was opened is then known by its key: a
        // file swapped in for the moment of opening holds another vault, and a keeper that met
        // one ends rather than serve it under this vault's name and permissions.
        func ends(_ reason: String) -> VarlinkError {
            VarlinkError(
                VaultKeeper.WrongVault(
                    vault: vaultPath,
                    message:
                        "\(reason); this keeper ends, and `keyport vault unlock` then starts one for the file there"
                )
            )
        }
        if let reason = reasonToEnd() { throw ends(reason) }
        let vault: Vault
        do {
            vault = try Vault.unlock(at: vaultPath, passphrase: SecretBytes(input.passphrase))
        } catch {
            throw Self.failure(error)
        }
        if let reason = reasonToEnd() { throw ends(reason) }
        let fingerprint = vault.fingerprint
        let other = servedVault.withLock { served -> Bool in
            guard let known = served else {
                served = fingerprint
                return false
            }
            return !ConstantTime.equal(known, fingerprint)
        }
        if other {
            let reason = "the passphrase opened another vault at \(vaultPath) than the one this keeper serves"
            end(reason)
            throw ends(reason)
        }
        // The vault, its timeout and its deadline in one step: a timer of the previous vault that
        // fires meanwhile finds the generation moved on.
        touch { state in
            // Unlocked again without a timeout (a client proving its session), the open vault
            // keeps the one it had.
            state.timeout = input.timeout.map { .seconds($0) } ?? (state.vault != nil ? state.timeout : defaultTimeout)
            state.vault = vault
        }
        writing.withLock { _ in changed(.everything) }
        // It gave the passphrase: its terminal session may use the vault for a while.
        await access.grant(to: request.peer.process)
        return VaultKeeper.Unlock.Reply(items: (try? vault.count) ?? 0)
    }

    /// Why this keeper must end (its program ends it within seconds): ``vaultPath`` no longer
    /// names the file it serves — the file is gone, or another file is there now — or a
    /// passphrase opened another vault there; once said, said until the end. `nil` while the
    /// path names that file, or no file yet (a keeper may start before `keyport vault init` makes
    /// its vault); the first file seen is the one served. Only "no such file" counts as gone: a
    /// disk that answers with another error may come back.
    package func reasonToEnd() -> String? {
        if let reason = ending.withLock({ $0 }) { return reason }
        let now = FileIdentity(vaultPath)
        let gone = now == nil && errno == ENOENT
        let reason = servedFile.withLock { served -> String? in
            guard let pinned = served else {
                served = now
                return nil
            }
            if let now {
                return now == pinned ? nil : "\(vaultPath) names another file than the one this keeper was started for"
            }
            return gone ? "\(vaultPath) is gone" : nil
        }
        if let reason { end(reason) }
        return reason
    }

    /// Locks the vault and marks the keeper to end, for `reason`.
    private func end(_ reason: String) {
        ending.withLock { $0 = $0 ?? reason }
        lock()
    }

    /// Forgets the vault and its key, and every terminal session's permission.
    package func lock() {
        state.withLock { state in
            state.vault = nil
            state.deadline = nil
            state.generation += 1
        }
        access.revokeAll()
    }

    /// Moves the lock's deadline to `timeout` from now, after `update` (in the same critical
    /// section). Each call starts a timer; only the latest one's generation still matches when it
    /// fires.
    private func touch(_ update: (inout State) -> Void = { _ in }) {
        let (generation, timeout) = state.withLock { state -> (Int, Duration) in
            update(&state)
            state.generation += 1
            state.deadline = .now + state.timeout
            return (state.generation, state.timeout)
        }
        Task { [self] in
            try? await Task.sleep(for: timeout)
            let locked = state.withLock { state in
                guard state.generation == generation else { return false }
                state.vault = nil
                state.deadline = nil
                return true
            }
            if locked { access.revokeAll() }
        }
    }

    /// Lets `request`'s caller do `what` when ``VaultKeeperAccess`` allows it. The vault must be
    /// unlocked first: nobody is asked about a locked vault.
    ///
    /// Only an allowed request counts for the lock's deadline: a refused one, repeated, must not
    /// keep the vault open.
    private func authorize(_ request: VarlinkRequest, to what: String) async throws(VarlinkError) {
        _ = try unlockedVault()
        try await access.authorize(request.peer.process, to: what)
    }

    /// Runs `body`, a change, with the unlocked vault, and reports what it returns for `changed`
    /// before another change can start.
    private func change<T: Sendable>(_ body: (Vault) throws(VaultError) -> (T, [Change])) throws(VarlinkError) -> T {
        try writing.withLock { _ throws(VarlinkError) -> T in
            let (result, changes) = try using(body)
            for change in changes { changed(change) }
            return result
        }
    }

    /// Runs `body` with the unlocked vault, and counts as a request for the lock's deadline.
    private func using<T>(_ body: (Vault) throws(VaultError) -> T) throws(VarlinkError) -> T {
        let vault = try unlockedVault()
        touch()
        do {
            return try body(vault)
        } catch {
            throw Self.failure(error)
        }
    }

    /// The open vault, without counting as a request; `Locked` when there is none.
    private func unlockedVault() throws(VarlinkError) -> Vault {
        guard let vault = state.withLock({ $0.vault }) else {
            throw VarlinkError(
                VaultKeeper.Locked(message: "the vault is locked; unlock it with `keyport vault unlock`")
            )
        }
        return vault
    }

    // MARK: - Items

    /// The items `target` names (``VaultTarget``), once `request`'s caller may read them.
    private func find(_ target: String, for request: VarlinkRequest) async throws(VarlinkError) -> VaultTarget {
        guard !target.isEmpty else {
            throw .invalidParameter("target", "the target is empty: name an item by its id, a site or a title")
        }
        guard target.utf8.count <= VaultKeeper.maximumTargetLength else {
            throw .invalidParameter(
                "target",
                "a target is an id, a site or a title of at most \(VaultKeeper.maximumTargetLength) bytes, not \(target.utf8.count)"
            )
        }
        // The caller wrote the target: a site is named as it is read (its origin: no user name,
        // no padding that pushes the host out of sight); anything else is quoted as JSON (a quote
        // in it cannot end it), escaped and cut short, so it cannot write the rest of the question.
        let shown = ServiceOrigin(target).map { "\($0)" } ?? DisplayText.excerpt(target, bytes: 100)
        let named = DisplayText.escaping(String(decoding: JSONString.quoted(shown), as: UTF8.self))
        try await authorize(
            request,
            to: "read the items of the vault \(vaultPath) that \(named) names, with their secrets"
        )
        return try using { vault throws(VaultError) in try VaultTarget.resolve(target, in: vault) }
    }

    private func list(_ request: VarlinkRequest) async throws(VarlinkError) -> VaultKeeper.List.Reply {
        guard request.call.more else { throw .expectedMore(request.call.method) }
        var items: [CXF.Item] = []
        try using { vault throws(VaultError) in
            do {
                try vault.forEachItem { items.append($0) }
            } catch let error as VaultError {
                throw error
            } catch {
                throw VaultError(.io, "\(error)")
            }
        }
        guard let last = items.popLast() else { return VaultKeeper.List.Reply(item: nil) }
        for item in items {
            try await request.send(VaultKeeper.List.Reply(item: RawJSON(bytes: item.json)))
        }
        return VaultKeeper.List.Reply(item: RawJSON(bytes: last.json))
    }

    /// Imports `items` in one transaction, for `request` (Import or ImportDocument).
    private func importing(
        _ items: [CXF.Item],
        for request: VarlinkRequest
    ) async throws(VarlinkError) -> VaultKeeper.Import.Reply {
        // Called with `more`, the counts so far go out as the import runs (for a progress bar),
        // in order, by a task of their own: the import holds this thread until it commits.
        let (counts, sender) = AsyncStream.makeStream(of: ImportReport.self, bufferingPolicy: .bufferingNewest(1))
        let sending = Task {
            for await report in counts {
                try? await request.send(
                    VaultKeeper.Import.Reply(
                        imported: report.imported,
                        merged: report.merged,
                        unchanged: report.unchanged
                    )
                )
            }
        }
        let report: ImportReport
        do {
            report = try change { vault throws(VaultError) in
                let progress: ((ImportReport) -> Void)? = request.call.more ? { sender.yield($0) } : nil
                // A client that goes away (Ctrl-C in `keyport vault import`) cancels this call's
                // task: the import then rolls back, rather than finishing for nobody.
                return (try vault.importItems(items, progress: progress) { Task.isCancelled }, [.everything])
            }
        } catch {
            sender.finish()
            await sending.value
            throw error
        }
        sender.finish()
        await sending.value
        // What the import decoded and sealed (several times the message) is freed by now; given
        // back to the system, so the keeper stays the size of what it looks up.
        request.afterReply { Memory.releaseFreed() }
        return VaultKeeper.Import.Reply(imported: report.imported, merged: report.merged, unchanged: report.unchanged)
    }

    /// Calls `body` with every item of the unlocked vault, one at a time (so that 100 000 items
    /// are never all in memory); `false` when it is locked or cannot be read (its own failures are
    /// its callers' to meet, not a copy's).
    package func forEachItem(_ body: (CXF.Item) -> Void) -> Bool {
        guard let vault = state.withLock({ $0.vault }) else { return false }
        do {
            try vault.forEachItem(body)
            return true
        } catch {
            return false
        }
    }

    private static func item(_ raw: RawJSON) throws(VarlinkError) -> CXF.Item {
        do {
            return try CXF.Decoder().decode(CXF.Part<CXF.Item>.object, from: raw.bytes)
        } catch {
            throw .invalidParameter("item", "the item is not a CXF item: \(error)")
        }
    }

    private static func id(_ text: String) throws(VarlinkError) -> Data {
        guard let bytes = try? Base64URL.decode(text), !bytes.isEmpty else {
            throw .invalidParameter("id", "'\(text)' is not an item id (base64url)")
        }
        return Data(bytes)
    }

    private static func failure(_ error: VaultError) -> VarlinkError {
        VarlinkError(VaultKeeper.Failed(code: error.code.rawValue, message: error.message))
    }
}
