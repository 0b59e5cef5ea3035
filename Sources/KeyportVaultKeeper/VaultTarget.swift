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
package struct VaultTarget {
    package var items: [CXF.Item]
    /// How the items were found, for a message: "saved for https://github.com", "titled GitHub".
    package var how: String
    /// Whether they were found by a wider fit (another port or host of the site), which `edit`
    /// and `rm` never act on without the person naming the item: AutoFill only offers those too.
    package var wider = false

    /// The items of `vault` that `target` names.
    package static func resolve(_ target: String, in vault: Vault) throws(VaultError) -> VaultTarget {
        if isID(target), let id = try? Base64URL.decode(target), let item = try vault.item(id: Data(id)) {
            return VaultTarget(items: [item], how: "with the id \(target)")
        }
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
