import CredentialExchangeFormat
import Crypto
import Foundation
import KeyportCrypto
import KeyportEncoding
import KeyportSystem
import OneTimeCodes

/// What an authenticator app's entry says about one account's codes, made into an entry: an
/// `otpauth://` URI when the kind has one (TOTP, HOTP, Steam), else every value as a labelled
/// field (mOTP, Yandex), so that nothing is lost.
private func authenticatorEntry(
    place: String,
    sourceID: [UInt8]?,
    kind: String,
    issuer: String?,
    account: String?,
    secret: String,
    algorithm: String?,
    digits: Int?,
    period: Int?,
    counter: Int?,
    pin: String? = nil,
    note: String? = nil,
    favorite: Bool? = nil,
    tags: [String] = []
) throws(ImportProblem) -> Entry {
    var entry = Entry(place: place, sourceID: sourceID, title: issuer ?? account ?? "", notes: note)
    entry.favorite = favorite == true ? true : nil
    entry.tags = tags
    let otpKind: OTPAuthURI.Kind
    var format = OTPGenerator.Format.decimal(digits: digits ?? 6)
    switch kind.lowercased() {
    case "totp": otpKind = .totp(period: Int64(period ?? 30))
    case "hotp": otpKind = .hotp(counter: UInt64(max(counter ?? 0, 0)))
    case "steam":
        otpKind = .totp(period: Int64(period ?? 30))
        format = .steam
    default:
        entry.fields = [("type", kind, false), ("secret", secret, true)]
        if let algorithm { entry.fields.append(("algorithm", algorithm, false)) }
        if let digits { entry.fields.append(("digits", "\(digits)", false)) }
        if let period { entry.fields.append(("period", "\(period)", false)) }
        if let pin { entry.fields.append(("pin", pin, true)) }
        return entry
    }
    do {
        let uri = OTPAuthURI(
            kind: otpKind,
            secret: try OTPSecret(base32: secret),
            issuer: issuer?.isEmpty == false ? issuer : nil,
            account: account ?? "",
            // Aegis writes MD5 only for mOTP (handled above); read any other as SHA-1, as Aegis does.
            algorithm: algorithm.flatMap(OTPAlgorithm.init(name:)) ?? .sha1,
            format: format
        )
        entry.otp = uri.uriString
    } catch {
        throw ImportProblem(place: place, message: "its secret cannot be read: \(error)")
    }
    return entry
}

/// Aegis Authenticator's JSON export, plain or encrypted (scrypt password slots, AES-256-GCM).
enum Aegis {
    private struct File: Decodable {
        var version: Int
        var header: Header
        var db: Database
    }

    private struct Header: Decodable {
        var slots: [Slot]?
        var params: Params?
    }

    private struct Slot: Decodable {
        var type: Int
        var key: String
        var key_params: Params
        var n: Int?
        var r: Int?
        var p: Int?
        var salt: String?
    }

    private struct Params: Decodable {
        var nonce: String
        var tag: String
    }

    /// The database: an object, or (encrypted) Base64 text.
    private enum Database: Decodable {
        case plain(Content)
        case sealed(String)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                self = .sealed(text)
            } else {
                self = .plain(try container.decode(Content.self))
            }
        }
    }

    private struct Content: Decodable {
        var version: Int
        var entries: [AegisEntry]
        var groups: [Group]?
    }

    private struct Group: Decodable {
        var uuid: String
        var name: String
    }

    private struct AegisEntry: Decodable {
        var type: String
        var uuid: String?
        var name: String?
        var issuer: String?
        var note: String?
        var favorite: Bool?
        var info: Info
        var groups: [String]?
        var group: String?
    }

    private struct Info: Decodable {
        var secret: String
        var algo: String?
        var digits: Int?
        var period: Int?
        var counter: Int?
        var pin: String?
    }

    static func read(_ text: [UInt8], passphrase: (() -> SecretBytes?)?) throws(ImportError) -> Imported {
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: Data(text))
        } catch {
            throw ImportError(.malformed, "the file is not an Aegis export: \(error)")
        }
        let content: Content
        switch file.db {
        case .plain(let plain): content = plain
        case .sealed(let sealed): content = try open(sealed, header: file.header, passphrase: passphrase)
        }
        guard content.version <= 3 else {
            throw ImportError(
                .unsupportedVersion,
                "the Aegis vault is of version \(content.version); Keyport reads versions up to 3"
            )
        }
        let groups = Dictionary(
            (content.groups ?? []).map { ($0.uuid, $0.name) },
            uniquingKeysWith: { first, _ in first }
        )
        var imported = Imported(format: .aegis, items: [], problems: [])
        for (index, entry) in content.entries.enumerated() {
            let place = "entry \(index + 1)"
            do {
                let made = try authenticatorEntry(
                    place: place,
                    sourceID: entry.uuid.flatMap(UUIDBytes.parse),
                    kind: entry.type,
                    issuer: entry.issuer,
                    account: entry.name,
                    secret: entry.info.secret,
                    algorithm: entry.info.algo,
                    digits: entry.info.digits,
                    period: entry.info.period,
                    counter: entry.info.counter,
                    pin: entry.info.pin,
                    note: entry.note,
                    favorite: entry.favorite,
                    tags: (entry.groups ?? []).compactMap { groups[$0] } + (entry.group.map { [$0] } ?? [])
                )
                imported.items.append(try made.item(format: .aegis))
            } catch {
                imported.problems.append(error)
            }
        }
        return imported
    }

    /// The database of an encrypted export: the first password slot the passphrase opens gives
    /// the master key.
    private static func open(
        _ sealed: String,
        header: Header,
        passphrase: (() -> SecretBytes?)?
    ) throws(ImportError) -> Content {
        // Each slot may ask for scrypt's most: a file of many would be hours of work. Aegis writes
        // one password slot (and a backup one), so four are enough.
        let slots = (header.slots ?? []).filter { $0.type == 1 }.prefix(4)
        guard let params = header.params, !slots.isEmpty else {
            throw ImportError(.encrypted, "the Aegis export is encrypted but has no password slot Keyport can open")
        }
        guard let passphrase = passphrase?() else {
            throw ImportError(.encrypted, "the Aegis export is encrypted: Keyport needs its password")
        }
        var masterKey: SymmetricKey?
        for slot in slots {
            guard let salt = Hex.decode(slot.salt ?? ""), let n = slot.n, n > 0, n & (n - 1) == 0 else { continue }
            let parameters = ScryptParameters(logN: n.trailingZeroBitCount, r: slot.r ?? 8, p: slot.p ?? 1, salt: salt)
            let key: SymmetricKey
            do {
                key = try parameters.deriveKey(from: passphrase)
            } catch {
                throw ImportError(.unsafeParameters, "the Aegis export's password slot asks for \(error.message)")
            }
            if let opened = openBox(slot.key, nonce: slot.key_params.nonce, tag: slot.key_params.tag, key: key) {
                masterKey = SymmetricKey(data: opened)
                break
            }
        }
        guard let masterKey else { throw ImportError(.wrongPassword, "the password does not open the Aegis export") }
        guard let ciphertext = Data(base64Encoded: sealed),
            let plaintext = openBox(ciphertext, nonce: params.nonce, tag: params.tag, key: masterKey)
        else {
            throw ImportError(
                .tampered,
                "the Aegis export's database does not open with its own key: the file was changed"
            )
        }
        do {
            return try JSONDecoder().decode(Content.self, from: Data(plaintext))
        } catch {
            throw ImportError(.malformed, "the Aegis export's database opened but is not Aegis's: \(error)")
        }
    }

    private static func openBox(_ hexCiphertext: String, nonce: String, tag: String, key: SymmetricKey) -> [UInt8]? {
        Hex.decode(hexCiphertext).flatMap { openBox(Data($0), nonce: nonce, tag: tag, key: key) }
    }

    private static func openBox(_ ciphertext: Data, nonce: String, tag: String, key: SymmetricKey) -> [UInt8]? {
        guard let nonce = Hex.decode(nonce), let tag = Hex.decode(tag),
            let box = try? AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag),
            let plaintext = try? AES.GCM.open(box, using: key)
        else { return nil }
        return Array(plaintext)
    }
}

/// 2FAS Authenticator's JSON backup (unencrypted; an encrypted one says so).
enum TwoFAS {
    private struct Backup: Decodable {
        var services: [Service]
        var groups: [Group]?
        var schemaVersion: Int?
        var servicesEncrypted: String?
        var reference: String?
    }

    private struct Group: Decodable {
        var id: String
        var name: String
    }

    private struct Service: Decodable {
        var name: String?
        var secret: String
        var otp: OTP?
        var groupId: String?
    }

    private struct OTP: Decodable {
        var account: String?
        var issuer: String?
        var digits: Int?
        var period: Int?
        var algorithm: String?
        var tokenType: String?
        var counter: Int?
    }

    static func read(_ text: [UInt8]) throws(ImportError) -> Imported {
        let backup: Backup
        do {
            backup = try JSONDecoder().decode(Backup.self, from: Data(text))
        } catch {
            throw ImportError(.malformed, "the file is not a 2FAS backup: \(error)")
        }
        guard backup.servicesEncrypted?.isEmpty != false, backup.reference?.isEmpty != false else {
            throw ImportError(.encrypted, "the 2FAS backup is encrypted; export it again from 2FAS without a password")
        }
        guard (backup.schemaVersion ?? 1) <= 4 else {
            throw ImportError(
                .unsupportedVersion,
                "the 2FAS backup is of schema \(backup.schemaVersion ?? 0); Keyport reads schemas up to 4"
            )
        }
        let groups = Dictionary((backup.groups ?? []).map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
        var imported = Imported(format: .twoFAS, items: [], problems: [])
        for (index, service) in backup.services.enumerated() {
            let place = "service \(index + 1)"
            do {
                let made = try authenticatorEntry(
                    place: place,
                    sourceID: nil,
                    kind: service.otp?.tokenType ?? "TOTP",
                    issuer: service.name ?? service.otp?.issuer,
                    account: service.otp?.account,
                    secret: service.secret,
                    algorithm: service.otp?.algorithm,
                    digits: service.otp?.digits,
                    period: service.otp?.period,
                    counter: service.otp?.counter,
                    tags: service.groupId.flatMap { groups[$0] }.map { [$0] } ?? []
                )
                imported.items.append(try made.item(format: .twoFAS))
            } catch {
                imported.problems.append(error)
            }
        }
        return imported
    }
}
