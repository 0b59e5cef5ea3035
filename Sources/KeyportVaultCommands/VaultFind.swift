import CredentialExchangeFormat
import Foundation
import KeyportCommandLine
import KeyportDomains
import KeyportEncoding
import KeyportInterfaces
import KeyportVaultKeeper
import Varlink

/// What `keyport vault edit` and `rm` name, as the vault's keeper resolves it (`Find`,
/// ``VaultTarget``'s order).
struct FoundItems {
    var items: [CXF.Item]
    var how: String
    var wider: Bool

    static func find(_ target: String, _ locations: VaultLocations) async throws -> FoundItems {
        try await vaultKeeper { () async throws in
            let reply = try await VaultKeeperClient.call(locations, VaultKeeper.Find.self, .init(target: target))
            return FoundItems(
                items: try reply.items.map { try CXF.Decoder().decode(CXF.Part<CXF.Item>.object, from: $0.bytes) },
                how: reply.how,
                wider: reply.wider
            )
        }
    }

    /// The one item, or a failure that lists them (one line each: id, title, user, site) or
    /// says that nothing fits, ending with `outcome` ("nothing changed"). A change is never made
    /// to an item found by a wider fit, even alone: it is listed for the person to name by its id.
    func one(_ target: String, otherwise outcome: String) throws -> CXF.Item {
        if items.count == 1 && !wider { return items[0] }
        for item in items { FileHandle.write(ItemSummary(item).line + "\n") }
        throw CommandError.invalid(VaultTargetWords.notOne(items.count, how, target: target, outcome: outcome))
    }
}

/// Item ids on the command line.
package enum ItemArguments {
    /// The `keyport vault` subcommands that take item ids as arguments.
    static let commandsTakingIDs: Set<String> = ["show", "rm", "edit", "export"]

    /// An argument of `keyport vault show|rm|edit|export` before `--` that begins with one `-`
    /// and is longer than an option's letter, or with `--` and a name no option has (a capital, a
    /// digit, `_`): an item id as `list` prints it (ids are base64url,
    /// so an imported item's can begin with `-`), which the parser would read as a cluster of
    /// short options — one with an `h` in it printed the whole help and exited 0. No option of
    /// these commands is written so, so the command line is refused with the way to write it.
    package static func optionLikeID(in arguments: [String]) -> String? {
        guard arguments.count > 2, arguments[0] == "vault", commandsTakingIDs.contains(arguments[1]) else {
            return nil
        }
        for argument in arguments.dropFirst(2) {
            if argument == "--" { return nil }
            if argument.hasPrefix("--") {
                // An option's name is lowercase words joined by '-' (`--reveal`, `--title=X`).
                let name = argument.dropFirst(2).prefix { $0 != "=" }
                if name.contains(where: { !("a"..."z").contains($0) && $0 != "-" }) { return argument }
            } else if argument.hasPrefix("-"), argument.utf8.count > 2 {
                return argument
            }
        }
        return nil
    }

    /// What is said of such an argument, `argument`, given to `keyport vault COMMAND`.
    package static func optionLikeIDMessage(_ argument: String, command: String) -> String {
        let shown = DisplayText.escaping(argument)
        return
            "'\(shown)' begins with '-', so it would be read as options, and `keyport vault \(command)` has none written so; an item id that begins with '-' follows `--`: keyport vault \(command) -- \(shown)"
    }
}
