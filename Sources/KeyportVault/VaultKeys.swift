import Crypto
import Foundation
import KeyportSystem

/// The vault key and the keys made from it, one per use (HKDF-SHA256, each with its own `info`),
/// so that no key does two jobs: sealing items, tagging sites, sealing the vault's state, and
/// the index digest that notices rows removed, added back or replayed.
///
/// `SymmetricKey` keeps its bytes in storage that swift-crypto wipes when released; its pages are
/// kept out of core dumps and swap (``SecretMemory``), since the vault's keeper, which holds these
/// keys, stays dumpable for keyportd to identify it.
struct VaultKeys: Sendable {
    let vault: SymmetricKey
    let items: SymmetricKey
    let sites: SymmetricKey
    let state: SymmetricKey
    let index: SymmetricKey

    init(vault: SymmetricKey) {
        func derive(_ use: String) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: vault,
                info: Array("keyport-vault/1 \(use)".utf8),
                outputByteCount: 32
            )
        }
        self.vault = vault
        items = derive("items")
        sites = derive("sites")
        state = derive("state")
        index = derive("index")
        for key in [vault, items, sites, state, index] { key.withUnsafeBytes { SecretMemory.protect($0) } }
    }

    /// A new random vault key.
    static func random() -> VaultKeys { VaultKeys(vault: SymmetricKey(size: .bits256)) }

    // MARK: Associated data: what a sealed record says it is

    static func keyRecord(kdf: String) -> [UInt8] { Array("keyport-vault/1 key \(kdf)".utf8) }

    static let stateRecord = Array("keyport-vault/1 state".utf8)

    static func itemRecord(id: [UInt8], revision: Int64) -> [UInt8] {
        var out = Array("keyport-vault/1 item ".utf8)
        out += withUnsafeBytes(of: UInt32(id.count).bigEndian, Array.init)
        out += id
        out += withUnsafeBytes(of: UInt64(bitPattern: revision).bigEndian, Array.init)
        return out
    }

    // MARK: Sealing

    /// `plaintext` sealed with AES-256-GCM under `key`: a random nonce, the ciphertext and the tag.
    static func seal(_ plaintext: [UInt8], with key: SymmetricKey, record: [UInt8]) -> [UInt8] {
        // AES-GCM with a 256-bit key and a random nonce cannot fail.
        let box = try! AES.GCM.seal(plaintext, using: key, authenticating: record)
        return Array(box.combined!)
    }

    /// The plaintext of a sealed record, or `nil` when it does not open (another key, another
    /// record, a changed byte).
    static func open(_ sealed: [UInt8], with key: SymmetricKey, record: [UInt8]) -> [UInt8]? {
        guard let box = try? AES.GCM.SealedBox(combined: sealed),
            let plaintext = try? AES.GCM.open(box, using: key, authenticating: record)
        else { return nil }
        return Array(plaintext)
    }

    /// The tag a site (a registrable domain, or a host that has none) or an origin is looked up
    /// by: HMAC-SHA256 under the sites key, its first 16 bytes (format 2). A tag only finds
    /// candidates, which count only when their sealed URLs are on the site, so a collision would
    /// cost an item opened for nothing; shorter rows make the two B-trees an import writes to
    /// smaller.
    func tag(site: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(site.utf8), using: sites).prefix(16))
    }

    /// One item's share of the index digest: its id, its revision and (format 3) its sealed
    /// row's authentication tag — the last 16 bytes of the AES-GCM box, a different one for every
    /// sealing, so that an old row of the same id and revision (an item removed, then imported
    /// again) does not fit either. Format 2's shares had no tag.
    func indexShare(id: [UInt8], revision: Int64, tag: [UInt8]?) -> [UInt8] {
        Array(
            HMAC<SHA256>.authenticationCode(
                for: Self.itemRecord(id: id, revision: revision) + (tag ?? []),
                using: index
            )
        )
    }

    /// The bytes of a sealed row that its share covers: its authentication tag.
    static func sealTag(_ sealed: some Collection<UInt8>) -> [UInt8] { Array(sealed.suffix(16)) }
}

/// What the vault's sealed state holds: a generation counted up by every change, how many items
/// there are, and the index digest — the sum, modulo 2²⁵⁶, of every item's index share (an
/// incremental multiset hash, "MSet-Add-Hash"). Kept sealed, so that its values cannot be watched
/// and replayed.
///
/// A sum cannot cancel: a row added twice counts twice. Format 2's digest was the XOR of the shares,
/// in which a row written twice cancels out (an old row inserted twice into a table rebuilt
/// without its primary key left the digest unchanged); it is still read, once, to check a vault of
/// that format before it is brought to format 3 (``Vault/unlock(at:passphrase:list:)``).
struct VaultState: Equatable {
    var generation: UInt64
    var count: UInt64
    var digest: [UInt8]

    static let empty = VaultState(generation: 0, count: 0, digest: [UInt8](repeating: 0, count: 32))

    /// Counts an item's share in.
    mutating func add(_ share: [UInt8]) {
        count &+= 1
        Self.add(share, to: &digest)
    }

    /// Counts an item's share out.
    mutating func remove(_ share: [UInt8]) {
        count &-= 1
        // Subtracting x is adding its two's complement: (~x) + 1 modulo 2²⁵⁶.
        var negated = share.map { ~$0 }
        Self.add([UInt8](repeating: 0, count: 31) + [1], to: &negated)
        Self.add(negated, to: &digest)
    }

    /// `sum += share` modulo 2²⁵⁶, both big-endian.
    static func add(_ share: [UInt8], to sum: inout [UInt8]) {
        var carry: UInt16 = 0
        for index in sum.indices.reversed() {
            let total = UInt16(sum[index]) + UInt16(share[index]) + carry
            sum[index] = UInt8(truncatingIfNeeded: total)
            carry = total >> 8
        }
    }

    var bytes: [UInt8] {
        withUnsafeBytes(of: generation.bigEndian, Array.init) + withUnsafeBytes(of: count.bigEndian, Array.init)
            + digest
    }

    init(generation: UInt64, count: UInt64, digest: [UInt8]) {
        self.generation = generation
        self.count = count
        self.digest = digest
    }

    /// The state as format 3 seals it (48 bytes).
    init?(bytes: [UInt8]) {
        guard bytes.count == 48 else { return nil }
        generation = Self.number(bytes[0..<8])
        count = Self.number(bytes[8..<16])
        digest = Array(bytes[16...])
    }

    private static func number(_ bytes: ArraySlice<UInt8>) -> UInt64 { bytes.reduce(0) { $0 << 8 | UInt64($1) } }

    /// Format 2's state (40 bytes: the generation and the XOR of the shares), read only to check
    /// a vault of that format once before it is brought to format 3.
    struct Format2: Equatable {
        var generation: UInt64
        var digest: [UInt8]

        init?(bytes: [UInt8]) {
            guard bytes.count == 40 else { return nil }
            generation = VaultState.number(bytes[0..<8])
            digest = Array(bytes[8...])
        }

        static func digest(of shares: some Sequence<[UInt8]>) -> [UInt8] {
            var digest = [UInt8](repeating: 0, count: 32)
            for share in shares { for index in digest.indices { digest[index] ^= share[index] } }
            return digest
        }
    }
}
