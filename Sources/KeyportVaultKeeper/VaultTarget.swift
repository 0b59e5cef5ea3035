import CredentialExchangeFormat
import Foundation
import KeyportDomains
import KeyportEncoding
import KeyportVault

/// What `keyport vault show`, `edit` and `rm` name (`Find` and `Show`), resolved in the keeper in
/// one order: an item id; else the items saved for that site, by AutoFill's rule (those of the
/// same scheme, host and port; else, among the wider fits — another port, another host of the
/// site — those titled exactly so; else the wider fits); else the items with that title, in any
/// case. Looking a site up opens only the items filed under it; only a title reads them all.
///
/// Every id `list` prints names its item. An id of Keyport's own shape (16 bytes, 22 characters,
/// as `add` makes them and UUIDs are) names its item at once. Any other can also be a word
/// (`router`, `aws-production-root-keys`, which an imported file could make an item's id): it
/// names its item alone only when it names nothing else; beside a site or a title it names, all
/// are listed, so that a word never quietly picks an imported item over the ones it titles. (A
/// title of exactly 22 base64url characters that an imported item took as its id is still read
/// as that id.)
package struct VaultTarget {
    package var items: [CXF.Item]
    /// How the items were found, for a message: "saved for https://github.com", "titled GitHub".
    package var how: String
    /// Whether they were found by a wider fit (another port or host of the site), which `edit`
    /// and `rm` never act on without the person naming the item: AutoFill only offers those too.
    package var wider = false

    /// The items of `vault` that `target` names.
    package static func resolve(_ target: String, in vault: Vault) throws(VaultError) -> VaultTarget {
        var byID: CXF.Item?
        var ownShape = false
        if isBase64URL(target), let id = try? Base64URL.decode(target), !id.isEmpty {
            byID = try vault.item(id: Data(id))
            ownShape = id.count == 16 && Base64URL.encode(id) == target
        }
        if let byID, ownShape { return VaultTarget(items: [byID], how: "with the id \(target)") }
        var found = try bySiteOrTitle(target, in: vault)
        guard let byID else { return found }
        found.items.removeAll { $0.id == byID.id }
        guard !found.items.isEmpty else { return VaultTarget(items: [byID], how: "with the id \(target)") }
        return VaultTarget(
            items: [byID] + found.items,
            how: "with the id \(target) or \(found.how)",
            wider: found.wider
        )
    }

    private static func bySiteOrTitle(_ target: String, in vault: Vault) throws(VaultError) -> VaultTarget {
        if let origin = ServiceOrigin(target) {
            let exact = try vault.items(forService: target, exact: true)
            if !exact.isEmpty { return VaultTarget(items: exact, how: "saved for \(origin)") }
            let list = PublicSuffixList.current
            let wider = try vault.items(forService: target)
                .compactMap { item -> (CXF.Item, ServiceFit)? in
                    let fit = (item.scope?.urls ?? []).compactMap { ServiceOrigin($0)?.fit(for: origin, in: list) }
                        .max()
                    guard let fit, fit != .none else { return nil }
                    return (item, fit)
                }
                .sorted { $0.1 > $1.1 }
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
        var titled: [CXF.Item] = []
        do {
            try vault.forEachItem { item in
                if item.title.caseInsensitiveCompare(target) == .orderedSame { titled.append(item) }
            }
        } catch let error as VaultError {
            throw error
        } catch {
            throw VaultError(.io, "\(error)")
        }
        return VaultTarget(items: titled, how: "titled \(target)")
    }

    /// Whether `text` is written in base64url, as `list` shows ids: no dot or colon, so never a
    /// site's host or URL.
    private static func isBase64URL(_ text: String) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy {
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-")
                    || $0 == UInt8(ascii: "_")
            }
    }
}
