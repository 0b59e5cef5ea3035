import CredentialExchangeFormat
import Foundation
import KeyportDomains
import KeyportEncoding
import KeyportInterfaces
import KeyportVaultKeeper
import Varlink

/// What `keyport vault show`, `edit` and `rm` name, resolved in one order: an item id; else the
/// items saved for that site, by AutoFill's rule (those of the same scheme, host and port; else,
/// among the wider fits — another port, another host of the site — those titled exactly so; else
/// the wider fits); else the items with that title, in any case. Looking a site up opens only the
/// items filed under it.
struct VaultTarget {
    var items: [CXF.Item]
    /// How the items were found, for a message: "saved for https://github.com", "titled GitHub".
    var how: String
    /// Whether they were found by a wider fit (another port or host of the site), which `edit`
    /// and `rm` never act on without the person naming the item: AutoFill only offers those too.
    var wider = false

    static func resolve(_ target: String, _ locations: VaultLocations) async throws -> VaultTarget {
        try await vaultKeeper { () async throws in
            if isID(target) {
                let reply = try await VaultKeeperClient.call(locations, VaultKeeper.Get.self, .init(id: target))
                if let raw = reply.item {
                    return VaultTarget(
                        items: [try CXF.Decoder().decode(.item, from: raw.bytes)],
                        how: "with the id \(target)"
                    )
                }
            }
            if let origin = ServiceOrigin(target) {
                let exact = try await VaultKeeperClient.items(locations, forService: target, exact: true)
                if !exact.isEmpty { return VaultTarget(items: exact, how: "saved for \(origin)") }
                let list = PublicSuffixList.current
                let wider = try await VaultKeeperClient.items(locations, forService: target)
                    .map { item in
                        (
                            item,
                            (item.scope?.urls ?? []).compactMap { ServiceOrigin($0)?.fit(for: origin, in: list) }.max()
                        )
                    }
                    .filter { ($0.1 ?? .none) != .none }
                    .sorted { ($0.1 ?? .none) > ($1.1 ?? .none) }
                    .map(\.0)
                // A title that is the name exactly names the item, before any wider fit: git saves
                // items titled by their host, which reads as a site too (`127.0.0.1` fits every
                // port's item of that host).
                let titled = wider.filter { $0.title == target }
                if !titled.isEmpty { return VaultTarget(items: titled, how: "titled \(target)") }
                if !wider.isEmpty {
                    return VaultTarget(items: wider, how: "saved for other sites of \(origin)", wider: true)
                }
            }
            let titled = try await VaultKeeperClient.items(locations).filter {
                $0.title.caseInsensitiveCompare(target) == .orderedSame
            }
            return VaultTarget(items: titled, how: "titled \(target)")
        }
    }

    /// The one item, or a failure that lists them (one line each: id, title, user, site) or
    /// says that nothing fits, ending with `outcome` ("nothing changed"). A change (`edit`, `rm`)
    /// is never made to an item found by a wider fit, even alone: it is listed for the person to
    /// name by its id.
    func one(_ target: String, otherwise outcome: String? = nil, changing: Bool = false) throws -> CXF.Item {
        if items.count == 1 && !(changing && wider) { return items[0] }
        let end = outcome.map { "; \($0)" } ?? ""
        guard !items.isEmpty else {
            throw Failure.invalid(
                "the vault has no item with the id \(DisplayText.escaping(target)), nothing saved for that site, and nothing titled so\(end)"
            )
        }
        for item in items { FileHandle.write(ItemSummary(item).line + "\n") }
        let what = items.count == 1 ? "1 item is" : "\(items.count) items are"
        throw Failure.invalid("\(what) \(DisplayText.escaping(how)): name one by its id\(end)")
    }

    /// An id as `list` shows it: base64url of 16 bytes or more (Keyport's ids and the UUIDs
    /// managers use), without the dots and colons of a site. A short word that happens to be
    /// base64url (`facebook`, which an imported file could make an item's id) is no id here.
    private static func isID(_ text: String) -> Bool {
        text.utf8.count >= 22
            && text.utf8.allSatisfy {
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-")
                    || $0 == UInt8(ascii: "_")
            }
    }
}

extension VaultTarget {
    /// The `keyport vault` subcommands that take item ids as arguments.
    static let commandsTakingIDs: Set<String> = ["show", "rm", "edit", "export"]

    /// An argument of `keyport vault show|rm|edit|export` before `--` that begins with one `-`
    /// and is longer than an option's letter: an item id as `list` prints it (ids are base64url,
    /// so an imported item's can begin with `-`), which the parser would read as a cluster of
    /// short options — one with an `h` in it printed the whole help and exited 0. No option of
    /// these commands is written so, so the command line is refused with the way to write it.
    static func optionLikeID(in arguments: [String]) -> String? {
        guard arguments.count > 2, arguments[0] == "vault", commandsTakingIDs.contains(arguments[1]) else {
            return nil
        }
        for argument in arguments.dropFirst(2) {
            if argument == "--" { return nil }
            if argument.hasPrefix("-"), !argument.hasPrefix("--"), argument.utf8.count > 2 { return argument }
        }
        return nil
    }

    /// What is said of such an argument, `argument`, given to `keyport vault COMMAND`.
    static func optionLikeIDMessage(_ argument: String, command: String) -> String {
        let shown = DisplayText.escaping(argument)
        return
            "'\(shown)' begins with '-', so it would be read as options, and `keyport vault \(command)` has none written so; an item id that begins with '-' follows `--`: keyport vault \(command) -- \(shown)"
    }
}
