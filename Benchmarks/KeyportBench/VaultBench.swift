import CredentialExchangeFormat
import Foundation
import KeyportCrypto
import KeyportSystem
import KeyportVault

// Keyport Vault's store on `items` items of every credential type (the CXF benchmark's
// generator): import, unlock, look-ups by site, adding one item, and exporting everything as a CXF
// document. scrypt is calibrated to about half a second here, as `keyport vault init` does.
func vaultBenchmark(items count: Int, shape: SiteShape) throws {
    let (header, items) = vaultItems(count, shape: shape)

    let directory = privateDirectory("kp-vault-bench")
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("vault.keyport").path
    let passphrase = SecretBytes("correct horse battery staple")

    let kdf = ScryptParameters.calibrated()
    let (created, vault) = try measure(1) { try Vault.create(at: path, passphrase: passphrase, kdf: kdf) }
    let (imported, report) = try measure(1) { try vault.importItems(items) }
    precondition(report.imported == items.count, "\(report)")
    let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    let (unlocked, reopened) = try measure(3) { try Vault.unlock(at: path, passphrase: passphrase) }

    // Exact look-ups (what `show SITE`, AutoFill's provider and saving do), then by site.
    let sites = items.compactMap { $0.scope?.urls.first }
    var lookups: [Double] = []
    var found = 0
    for index in 0..<1000 {
        let site = sites[(index * 7919) % sites.count]
        let (seconds, result) = try measure(1) { try reopened.items(forService: site, exact: true) }
        lookups.append(seconds)
        found += result.count
    }
    lookups.sort()
    let (bySite, siteItems) = try measure(1) { try reopened.items(forService: sites[0]) }

    var adds: [Double] = []
    for index in 0..<21 {
        var item = items[index]
        item.id = Data("bench-added-\(index)".utf8)
        adds.append(try measure(1) { try reopened.add(item) }.seconds)
    }
    adds.sort()

    let (exported, bytes) = try measure(1) { () throws -> Int in
        var all: [CXF.Item] = []
        try reopened.forEachItem { all.append($0) }
        var account = header.accounts[0]
        account.items = all
        var copy = header
        copy.accounts = [account]
        return CXF.Encoder().encode(.header(copy)).count
    }

    print(
        "vault: \(items.count) items, sites \(shape.rawValue), scrypt N=2^\(kdf.logN) r=\(kdf.r) p=\(kdf.p), file \(size / 1_000_000) MB"
    )
    print(String(format: "create (scrypt):            %8.1f ms", created * 1000))
    print(String(format: "import %6d items:        %8.1f ms", items.count, imported * 1000))
    print(String(format: "unlock (scrypt + index):    %8.1f ms", unlocked * 1000))
    print(
        String(
            format: "exact look-up:              %8.3f ms p50, %.3f ms p99 (%.1f items per look-up)",
            lookups[500] * 1000,
            lookups[990] * 1000,
            Double(found) / 1000
        )
    )
    print(String(format: "look-up by site:            %8.1f ms (%d items of the site)", bySite * 1000, siteItems.count))
    print(String(format: "add one item:               %8.2f ms p50, %.2f ms max", adds[10] * 1000, adds[20] * 1000))
    print(String(format: "export all (CXF, %3d MB):   %8.1f ms", bytes / 1_000_000, exported * 1000))
}

/// The benchmark's items: the CXF generator's, two per site (as in a vault where most sites have
/// one account and some a second), the sites in `shape`.
func vaultItems(_ count: Int, shape: SiteShape = .spread) -> (CXF.Header, [CXF.Item]) {
    guard case .header(let header) = Generator.document(items: count) else { fatalError("a header") }
    let items = header.accounts.flatMap(\.items).enumerated().map { index, item in
        var item = item
        item.scope = CXF.CredentialScope(urls: ["https://\(shape.host(index / 2))/"])
        return item
    }
    return (header, items)
}

/// Only the import, with the cheapest scrypt, for a profiler.
func vaultImportProfile(items count: Int) throws {
    let (_, items) = vaultItems(count)
    let directory = privateDirectory("kp-vault-profile")
    defer { try? FileManager.default.removeItem(at: directory) }
    let vault = try Vault.create(
        at: directory.appendingPathComponent("vault.keyport").path,
        passphrase: SecretBytes("x"),
        kdf: ScryptParameters(logN: 10)
    )
    let (seconds, _) = try measure(1) { try vault.importItems(items) }
    print(String(format: "import %d items: %.1f ms", count, seconds * 1000))
}
