import Foundation
import KeyportEncoding

/// Google Authenticator's export format: `otpauth-migration://offline?data=…`, the URL-encoded
/// base64 of a protobuf `MigrationPayload`. A large export is split into several URIs (batches).
///
/// Decoding reads every batch given, reports batches missing from a split export, and reports
/// entries it cannot turn into codes honestly (MD5, or an algorithm, digit count or type left
/// unspecified) instead of guessing. Encoding splits accounts into batches; accounts the format
/// cannot express (Steam, a period other than 30 seconds, digits other than 6 or 8) are refused.
public enum GoogleAuthenticatorMigration {
    /// What a set of migration URIs held.
    public struct Decoded: Sendable {
        /// The accounts that convert faithfully.
        public var accounts: [OTPAuthURI]
        /// One entry per account left out, or per batch missing, saying why.
        public var problems: [Problem]
    }

    /// An account or batch left out of the result, and why.
    public struct Problem: Hashable, Sendable, CustomStringConvertible {
        /// The batch (0-based) and entry (0-based, nil for a whole batch) concerned.
        public var batch: Int
        /// The entry (0-based) in the batch, or `nil` when the whole batch is missing.
        public var entry: Int?
        /// Why, for a person; never a secret.
        public var message: String

        /// `batch B, entry E: message`, counting from 1.
        public var description: String {
            "batch \(batch + 1)\(entry.map { ", entry \($0 + 1)" } ?? ""): \(message)"
        }
    }

    static let scheme = "otpauth-migration://offline?"

    // MARK: Decoding

    /// Decodes every URI of an export (in any order).
    public static func decode(_ uris: [String]) throws(OTPError) -> Decoded {
        var accounts: [OTPAuthURI] = []
        var problems: [Problem] = []
        var seen: [Int32: (size: Int32, indices: Set<Int32>)] = [:]
        for (position, uri) in uris.enumerated() {
            let payload = try parsePayload(uri, position: position)
            let index = Int(payload.batchIndex)
            seen[payload.batchID, default: (payload.batchSize, [])].indices.insert(payload.batchIndex)
            for (entry, parameters) in payload.entries.enumerated() {
                do {
                    accounts.append(try parameters.uri())
                } catch {
                    problems.append(Problem(batch: index, entry: entry, message: error.message))
                }
            }
        }
        for (_, batch) in seen where batch.size > 1 {
            for missing in 0..<batch.size where !batch.indices.contains(missing) {
                problems.append(
                    Problem(
                        batch: Int(missing),
                        entry: nil,
                        message:
                            "this batch of the \(batch.size)-part export was not given; scan every QR code of the export"
                    )
                )
            }
        }
        return Decoded(accounts: accounts, problems: problems)
    }

    struct Payload {
        var entries: [OTPParameters] = []
        var version: Int32 = 0
        var batchSize: Int32 = 1
        var batchIndex: Int32 = 0
        var batchID: Int32 = 0
    }

    /// One `OtpParameters` message.
    struct OTPParameters {
        var secret: [UInt8] = []
        var name = ""
        var issuer = ""
        var algorithm: Int64 = 0
        var digits: Int64 = 0
        var type: Int64 = 0
        var counter: UInt64 = 0

        func uri() throws(OTPError) -> OTPAuthURI {
            guard !secret.isEmpty else { throw OTPError(.invalidSecret, "the account has no secret") }
            let algorithm: OTPAlgorithm
            switch self.algorithm {
            case 1: algorithm = .sha1
            case 2: algorithm = .sha256
            case 3: algorithm = .sha512
            case 4: throw OTPError(.unsupported, "the account uses MD5, which no code generator here supports")
            case 0: throw OTPError(.unsupported, "the account's algorithm is unspecified; it is not guessed")
            default: throw OTPError(.unsupported, "the account's algorithm \(self.algorithm) is unknown")
            }
            let digits: Int
            switch self.digits {
            case 1: digits = 6
            case 2: digits = 8
            case 0: throw OTPError(.unsupported, "the account's digit count is unspecified; it is not guessed")
            default: throw OTPError(.unsupported, "the account's digit count \(self.digits) is unknown")
            }
            let kind: OTPAuthURI.Kind
            switch type {
            case 1: kind = .hotp(counter: counter)
            case 2: kind = .totp(period: 30)
            case 0: throw OTPError(.unsupported, "the account's type (HOTP or TOTP) is unspecified; it is not guessed")
            default: throw OTPError(.unsupported, "the account's type \(type) is unknown")
            }
            // Google writes the label "issuer:account" into name, or just the account.
            var account = name
            var labelIssuer: String? = nil
            if let colon = name.firstIndex(of: ":") {
                labelIssuer = String(name[..<colon])
                account = name[name.index(after: colon)...].trimmingWhitespace(newlines: false)
            }
            // An empty prefix (":account") only protects the account's own colon: no issuer.
            if labelIssuer?.isEmpty == true { labelIssuer = nil }
            return OTPAuthURI(
                kind: kind,
                secret: OTPSecret(bytes: secret),
                issuer: issuer.isEmpty ? labelIssuer : issuer,
                account: account,
                algorithm: algorithm,
                format: .decimal(digits: digits)
            )
        }
    }

    static func parsePayload(_ uri: String, position: Int) throws(OTPError) -> Payload {
        let trimmed = uri.trimmingWhitespace()
        guard trimmed.lowercased().hasPrefix(scheme) else {
            throw OTPError(.invalidMigration, "URI \(position + 1) does not start with otpauth-migration://offline?")
        }
        let query = trimmed.dropFirst(scheme.count)
        guard let data = query.split(separator: "&").first(where: { $0.hasPrefix("data=") }) else {
            throw OTPError(.invalidMigration, "URI \(position + 1) has no data parameter")
        }
        guard let unescaped = PercentEncoding.unescape(data.dropFirst(5)) else {
            throw OTPError(.invalidMigration, "URI \(position + 1): the data parameter has a broken percent escape")
        }
        // Base64 as Google writes it; some tools hand it on URL-safe or without padding.
        var base64 = unescaped.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            .replacingOccurrences(of: " ", with: "+")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let bytes = Data(base64Encoded: base64) else {
            throw OTPError(.invalidMigration, "URI \(position + 1): the data parameter is not base64")
        }
        do {
            return try decodePayload([UInt8](bytes))
        } catch {
            throw OTPError(.invalidMigration, "URI \(position + 1): \(error.message)")
        }
    }

    static func decodePayload(_ bytes: [UInt8]) throws(OTPError) -> Payload {
        var payload = Payload()
        var reader = ProtobufReader(bytes[...])
        while let (field, wire) = try reader.nextField() {
            switch (field, wire) {
            case (1, 2):
                var entry = OTPParameters()
                var inner = ProtobufReader(try reader.lengthDelimited())
                while let (f, w) = try inner.nextField() {
                    switch (f, w) {
                    case (1, 2): entry.secret = Array(try inner.lengthDelimited())
                    case (2, 2): entry.name = String(decoding: try inner.lengthDelimited(), as: UTF8.self)
                    case (3, 2): entry.issuer = String(decoding: try inner.lengthDelimited(), as: UTF8.self)
                    case (4, 0): entry.algorithm = Int64(bitPattern: try inner.varint())
                    case (5, 0): entry.digits = Int64(bitPattern: try inner.varint())
                    case (6, 0): entry.type = Int64(bitPattern: try inner.varint())
                    case (7, 0): entry.counter = try inner.varint()
                    default: try inner.skip(wire: w)
                    }
                }
                payload.entries.append(entry)
            case (2, 0): payload.version = Int32(truncatingIfNeeded: try reader.varint())
            case (3, 0): payload.batchSize = Int32(truncatingIfNeeded: try reader.varint())
            case (4, 0): payload.batchIndex = Int32(truncatingIfNeeded: try reader.varint())
            case (5, 0): payload.batchID = Int32(truncatingIfNeeded: try reader.varint())
            default: try reader.skip(wire: wire)
            }
        }
        guard payload.batchSize >= 1, payload.batchIndex >= 0, payload.batchIndex < payload.batchSize,
            payload.batchSize <= 1000
        else {
            throw OTPError(
                .invalidMigration,
                "batch \(payload.batchIndex) of \(payload.batchSize) is not a possible batch"
            )
        }
        return payload
    }

    // MARK: Encoding

    /// Encodes accounts as migration URIs of at most `perBatch` accounts each.
    public static func encode(
        _ accounts: [OTPAuthURI],
        perBatch: Int = 10,
        batchID: Int32 = 0
    ) throws(OTPError) -> [String] {
        guard perBatch > 0 else { throw OTPError(.invalidParameter, "a batch must hold at least one account") }
        // The messages hold secrets: they are wiped once the URIs are written.
        var entries: [ProtobufWriter] = []
        defer { for i in entries.indices { entries[i].wipe() } }
        for (index, account) in accounts.enumerated() {
            var message = ProtobufWriter()
            account.secret.withUnsafeBytes { message.bytes(1, $0) }
            let label =
                OTPAuthURI.labelPrefix(account.issuer, account: account.account).map { "\($0):\(account.account)" }
                ?? account.account
            message.bytes(2, Array(label.utf8))
            if let issuer = account.issuer { message.bytes(3, Array(issuer.utf8)) }
            message.varint(4, UInt64([OTPAlgorithm.sha1: 1, .sha256: 2, .sha512: 3][account.algorithm]!))
            switch account.format {
            case .decimal(6): message.varint(5, 1)
            case .decimal(8): message.varint(5, 2)
            default:
                throw OTPError(
                    .unsupported,
                    "account \(index + 1) (\(account.account)): Google Authenticator codes have 6 or 8 digits, not \(account.format)"
                )
            }
            switch account.kind {
            case .hotp(let counter):
                message.varint(6, 1)
                message.varint(7, counter)
            case .totp(30):
                message.varint(6, 2)
            case .totp(let period):
                throw OTPError(
                    .unsupported,
                    "account \(index + 1) (\(account.account)): Google Authenticator codes change every 30 s, not \(period) s"
                )
            }
            entries.append(message)
        }
        let batches = stride(from: 0, to: max(entries.count, 1), by: perBatch).map {
            Array(entries[$0..<min($0 + perBatch, entries.count)])
        }
        return batches.enumerated().map { index, batch in
            var payload = ProtobufWriter()
            defer { payload.wipe() }
            for entry in batch { entry.out.withUnsafeBytes { payload.bytes(1, $0) } }
            payload.varint(2, 1)
            payload.varint(3, UInt64(batches.count))
            payload.varint(4, UInt64(index))
            payload.varint(5, UInt64(UInt32(bitPattern: batchID)))
            return scheme + "data=" + PercentEncoding.escape(Data(payload.out).base64EncodedString())
        }
    }
}

/// Reads the protobuf wire format: varints and length-delimited fields, bounds-checked.
struct ProtobufReader {
    var bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    mutating func varint() throws(OTPError) -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 70, by: 7) {
            guard let byte = bytes.popFirst() else {
                throw OTPError(.invalidMigration, "the data ends inside a number")
            }
            guard shift < 64 else { throw OTPError(.invalidMigration, "a number is longer than 64 bits") }
            value |= UInt64(byte & 0x7F) << UInt64(shift)
            if byte & 0x80 == 0 { return value }
        }
        throw OTPError(.invalidMigration, "a number is longer than 64 bits")
    }

    mutating func nextField() throws(OTPError) -> (Int, Int)? {
        guard !bytes.isEmpty else { return nil }
        let key = try varint()
        guard key >> 3 > 0, key >> 3 < (1 << 29) else {
            throw OTPError(.invalidMigration, "a field number is not valid")
        }
        return (Int(key >> 3), Int(key & 7))
    }

    mutating func lengthDelimited() throws(OTPError) -> ArraySlice<UInt8> {
        let length = try varint()
        guard length <= UInt64(bytes.count) else {
            throw OTPError(.invalidMigration, "a field is longer than the data")
        }
        let value = bytes.prefix(Int(length))
        bytes = bytes.dropFirst(Int(length))
        return value
    }

    mutating func skip(wire: Int) throws(OTPError) {
        switch wire {
        case 0: _ = try varint()
        case 1:
            guard bytes.count >= 8 else { throw OTPError(.invalidMigration, "the data ends inside a field") }
            bytes = bytes.dropFirst(8)
        case 2: _ = try lengthDelimited()
        case 5:
            guard bytes.count >= 4 else { throw OTPError(.invalidMigration, "the data ends inside a field") }
            bytes = bytes.dropFirst(4)
        default: throw OTPError(.invalidMigration, "wire type \(wire) is not valid here")
        }
    }
}

/// Writes the protobuf wire format.
struct ProtobufWriter {
    var out: [UInt8] = []

    mutating func rawVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    mutating func varint(_ field: Int, _ value: UInt64) {
        rawVarint(UInt64(field << 3))
        rawVarint(value)
    }

    mutating func bytes(_ field: Int, _ value: [UInt8]) {
        value.withUnsafeBytes { bytes(field, $0) }
    }

    mutating func bytes(_ field: Int, _ value: UnsafeRawBufferPointer) {
        rawVarint(UInt64(field << 3 | 2))
        rawVarint(UInt64(value.count))
        out.append(contentsOf: value)
    }

    /// Overwrites what was written (it may hold a secret).
    mutating func wipe() {
        for i in out.indices { out[i] = 0 }
    }
}
