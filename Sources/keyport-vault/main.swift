// Keyport Vault's programs.
//
//   keyport-vault keeper --vault PATH [--timeout SECONDS]
//                                            holds the vault PATH (and no other) unlocked for
//                                            `keyport vault` and the vault's provider
//                                            (org.keyport.Vault on vault.sock), locking it
//                                            SECONDS (default 900) after its last request
//   keyport-vault provider --vault PATH      the app keyportd starts (its manifest's exec): the
//                                            AutoFill provider, answering from the vault's keeper
//                                            and unlocking through keyportd's agent when the vault
//                                            is locked; or, launched with an import's activity,
//                                            the importer of a credential exchange
//   keyport-vault provider --vault PATH export [ID...]
//                                            exports the vault (or the items ID...) to an app
//                                            the person chooses
//                                            (`keyport vault export --to-app` runs it); the
//                                            arguments before `export` are its manifest's, by
//                                            which keyportd tells vaults apart
import AuthenticationServices
import Foundation
import KeyportInterfaces
import KeyportSystem
import KeyportVaultKeeper
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

func fail(_ message: String, status: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data("keyport-vault: \(message)\n".utf8))
    exit(status)
}

let usage = """
    usage: keyport-vault keeper --vault PATH [--timeout SECONDS] | keyport-vault provider --vault PATH [export [ID...]]
           keyport-vault --version
    Holds the Keyport vault PATH, and no other, unlocked (org.keyport.Vault on
    $XDG_RUNTIME_DIR/keyport/vault.sock, or $KEYPORT_VAULT_SOCKET) until SIGTERM or SIGINT;
    `keyport vault unlock` starts it when it is not running. The vault locks itself SECONDS
    (default 900) after its last request.
    """
var arguments = Array(CommandLine.arguments.dropFirst())
if arguments == ["--version"] {
    print(KeyportRelease.version)
    exit(0)
}
if arguments.first == "provider" {
    var rest = arguments.dropFirst()
    // The vault's path is always given: keyportd tells which vault's app a process is by these
    // arguments, and a line without it would fit every vault's (a manifest `keyport vault
    // register` wrote before it gave the path is refused here, saying how to fix it).
    guard rest.first == "--vault", rest.count >= 2 else {
        fail("the vault's app runs as `provider --vault PATH`; register the vault again (keyport vault register)")
    }
    let path: String? = rest[rest.startIndex + 1]
    rest = rest.dropFirst(2)
    let exporting = rest.first == "export"
    guard exporting || rest.isEmpty else { fail("unexpected '\(rest.first ?? "")'\n\(usage)") }
    let vault: VaultInstance
    do {
        vault = try VaultInstance(path: path, environment: ProcessInfo.processInfo.environment)
    } catch {
        fail("\(error)")
    }
    if exporting { exit(await VaultExchange.export(vault, only: Array(rest.dropFirst()))) }
    if let activity = NSUserActivity.launchActivity, activity.activityType == ASCredentialExchangeActivity,
        let token = activity.userInfo?[ASCredentialImportToken] as? UUID
    {
        exit(await VaultExchange.importCredentials(token: token, into: vault))
    }
    VaultProviderViewController.vault = vault
    ASCredentialProviderExtension.run(VaultProviderViewController.self)
}
guard arguments.first == "keeper" else {
    fail(arguments.contains("--help") ? usage : "expected `keeper` or `provider`\n\(usage)")
}
arguments.removeFirst()
var timeout = 900
var served: String?
while let argument = arguments.first {
    arguments.removeFirst()
    switch argument {
    case "--timeout":
        guard let value = arguments.first.flatMap(Int.init), value > 0 else {
            fail("--timeout takes seconds\n\(usage)")
        }
        timeout = value
    case "--vault":
        guard let value = arguments.first, value.hasPrefix("/") else {
            fail("--vault takes an absolute path\n\(usage)")
        }
        // Once: keyportd and the vault's clients read the first, and must read the one it serves.
        guard served == nil else { fail("--vault is given once\n\(usage)") }
        served = value
    default:
        fail("unexpected '\(argument)'\n\(usage)")
    }
    arguments.removeFirst()
}
guard let served else { fail("the keeper serves one vault: --vault PATH\n\(usage)") }

let locations: VaultLocations
do {
    locations = try VaultLocations(environment: ProcessInfo.processInfo.environment)
    _ = try PrivateDirectory.prepare(
        FilePaths.parent(locations.keeperSocket),
        contents: "the vault's key",
        create: true
    )
} catch {
    fail("\(error)")
}
// Changes reach AutoFill's identity store one after another, in the order they were made.
let (changes, queue) = AsyncStream.makeStream(of: VaultKeeperService.Change.self)
// A process that may not read or change the vault on its own is asked about through keyportd's
// agent, in the vault's name (its manifest names this keeper among its helpers); keyportd says
// which processes it launched as the vault's app.
let access = VaultKeeperAccess(
    program: Executable.beside("keyport-vault"),
    launched: { pid in
        let answer = try? await DaemonClient.withConnection(environment: ProcessInfo.processInfo.environment) {
            try await $0.call(Providers.Launched.self, .init(pid: Int(pid)))
        }
        return answer?.launched == true
    },
    ask: { question, requester in
        var choices = [ASCredentialProviderPrompt.Choice(id: "once", name: "Allow it this once")]
        if let requester {
            choices.append(
                ASCredentialProviderPrompt.Choice(
                    id: "requester",
                    name: "Allow \(requester) for 10 minutes after its last use"
                )
            )
        }
        do {
            switch try await ASCredentialProviderPrompt.choose(question, from: choices) {
            case "once": return .once
            case "requester": return .requester
            default: return .refused("you did not allow it")
            }
        } catch {
            // The reason alone, as keyportd said it (it says how to start an agent).
            return .refused("keyportd could not ask you: \((error as? ASExtensionError)?.failureReason ?? "\(error)")")
        }
    }
)
let service = VaultKeeperService(vault: served, defaultTimeout: .seconds(timeout), access: access) {
    queue.yield($0)
}
Task {
    // A change that did not reach AutoFill leaves it behind: the next one sends everything.
    var behind = false
    for await change in changes {
        guard let state = await IdentitySync.apply(behind ? .everything : change, of: service) else { continue }
        behind = !state.current
        service.autoFill = state
    }
}
// While AutoFill is behind, everything is offered again every 30 seconds: enabling the vault in
// Settings, or registering it, is nothing the keeper hears of.
Task {
    while !Task.isCancelled {
        try? await Task.sleep(for: .seconds(30))
        if service.autoFill?.current == false { queue.yield(.everything) }
    }
}
// A keeper whose vault file is gone (removed, moved away, its folder deleted), or whose path now
// names another file (a link repointed, a file renamed over it), ends as if stopped: it would
// otherwise go on serving the old file's items to whoever reaches its socket until its idle time,
// or serve a file it was not started for to the permissions given for the old one.
Task {
    while !Task.isCancelled {
        if let reason = service.reasonToEnd() {
            FileHandle.standardError.write(Data("keyport-vault: \(reason): the keeper ends\n".utf8))
            kill(getpid(), SIGTERM)
            return
        }
        try? await Task.sleep(for: .seconds(5))
    }
}
let server = VarlinkServer(
    info: VarlinkServiceInfo(
        vendor: "Keyport",
        product: "keyport-vault keeper",
        version: "1",
        url: "https://keyport.invalid"
    ),
    interfaces: [service],
    maximumMessageSize: VaultKeeper.maximumMessageSize
)
let path = locations.keeperSocket
let (result, signal) = await TerminationSignals.cancelling {
    try await server.serve(path: path) {
        FileHandle.standardError.write(Data("keyport-vault: keeper listening on \(path)\n".utf8))
    }
}
service.lock()
if let signal { TerminationSignals.end(by: signal) }
if case .failure(let error) = result { fail("cannot serve \(path): \(error)", status: 1) }
