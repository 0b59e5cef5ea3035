import CredentialExchangeFormat
import Foundation
import KeyportSystem

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// `keyport vault import` of a CXF file as a person runs it, end to end, beside `keyport cxf
// validate` of the same file (the peer: one read of the document, the codec's own pace) in the
// same run, round by round: the CXF benchmark's `items` items (every credential type, two per
// site; the sites spread over domains or nearly all under one), written as one document; each round imports it into a new vault, unlocked in its keeper.
// Peak memory is each process's VmHWM (the command's, sampled every 10 ms, and the keeper's own
// high-water mark once the import is done).
func vaultImportBenchmark(items count: Int, rounds: Int, shape: SiteShape) async throws {
    let keyport = buildDirectory.appendingPathComponent("keyport").path
    let bytes = vaultImportDocument(items: count, shape: shape)
    let files = privateDirectory("kp-vault-import")
    defer { try? FileManager.default.removeItem(at: files) }
    let file = files.appendingPathComponent("items.cxf.json").path
    try Data(bytes).write(to: URL(fileURLWithPath: file))
    print(
        "\(count) items (sites \(shape.rawValue)), CXF \(bytes.count / 1_000_000) MB (\(bytes.count) bytes), \(rounds) rounds"
    )

    var validates: [Timed] = []
    var imports: [Timed] = []
    var keeperPeaks: [Int] = []
    var ratios: [Double] = []
    let passphrase = "bench passphrase\n"
    for round in 0..<rounds {
        let root = try benchSandbox("kp-vault-import-round")
        defer {
            for pid in keepers(of: root) { kill(pid, SIGTERM) }
            try? FileManager.default.removeItem(at: root)
        }
        let environment = benchEnvironment(root)
        _ = try await timed(
            keyport,
            ["vault", "init", "--passphrase-stdin"],
            environment: environment,
            input: passphrase
        )
        _ = try await timed(
            keyport,
            ["vault", "unlock", "--passphrase-stdin"],
            environment: environment,
            input: passphrase
        )
        let validate = try await timed(keyport, ["cxf", "validate", file], environment: environment, input: nil)
        let imported = try await timed(keyport, ["vault", "import", file], environment: environment, input: nil)
        let keeperPeak = keepers(of: root).map { memory(of: $0).peak }.max() ?? 0
        validates.append(validate)
        imports.append(imported)
        keeperPeaks.append(keeperPeak)
        ratios.append(imported.ms / validate.ms)
        print(
            String(
                format: "round %d: validate %.2f s (peak %d MB), import %.2f s (peak %d MB; keeper peak %d MB), %.1f×",
                round + 1,
                validate.ms / 1000,
                validate.peak / 1_000_000,
                imported.ms / 1000,
                imported.peak / 1_000_000,
                keeperPeak / 1_000_000,
                imported.ms / validate.ms
            )
        )
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    print(
        String(
            format:
                "median: `keyport vault import` %.2f s, peak %d MB (%.1f× the file); keeper peak %d MB; `keyport cxf validate` %.2f s, peak %d MB; import / validate %.1f× (median of the rounds' ratios)",
            median(imports.map(\.ms)) / 1000,
            Int(median(imports.map { Double($0.peak) })) / 1_000_000,
            median(imports.map { Double($0.peak) }) / Double(bytes.count),
            Int(median(keeperPeaks.map(Double.init))) / 1_000_000,
            median(validates.map(\.ms)) / 1000,
            Int(median(validates.map { Double($0.peak) })) / 1_000_000,
            median(ratios)
        )
    )
}

/// The benchmark's document: the vault benchmark's items (two per site) in one CXF header.
func vaultImportDocument(items count: Int, shape: SiteShape) -> [UInt8] {
    let (header, items) = vaultItems(count, shape: shape)
    var document = header
    document.accounts[0].items = items
    for index in document.accounts.indices.dropFirst() { document.accounts[index].items = [] }
    return CXF.Encoder().encode(.header(document))
}
