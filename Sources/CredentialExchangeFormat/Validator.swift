import struct Foundation.Data
import KeyportEncoding

extension CXF {
    /// Checks a decoded document against the rules of CXF 1.0, separately from decoding, and returns
    /// what it finds as ``Diagnostic``s. A document is valid when none has severity error.
    ///
    /// Rules: the version gate (major 1, any minor); ids at most 64 bytes and unique within an
    /// account; linked items that point at nothing; TOTP secrets that are Base32 with usable
    /// parameters; every editable field's value against its field type (date, year-month,
    /// boolean, country and subdivision codes, Wi-Fi security types) and its type against the one
    /// the member calls for; passkey and SSH keys that really are PKCS#8 DER of a supported
    /// algorithm matching `keyType`; file integrity hashes that are SHA-256 sized; timestamps
    /// outside 1970…3000; `shared` accessors that the specification says to ignore.
    public struct Validator: Sendable {
        /// Also prove that a key's embedded public key belongs to its private key. This costs a
        /// scalar multiplication per key; without it the public point is still checked to be on
        /// its curve.
        public var verifyKeyPairs: Bool

        public init(verifyKeyPairs: Bool = false) {
            self.verifyKeyPairs = verifyKeyPairs
        }

        public func validate(_ document: Document) -> [Diagnostic] {
            var run = ValidationRun(verifyKeyPairs: verifyKeyPairs)
            run.document(document)
            return run.diagnostics
        }
    }
}

/// One validation pass: the path to where we are and what was found.
struct ValidationRun {
    let verifyKeyPairs: Bool
    var diagnostics: [Diagnostic] = []
    var path: [PathComponent] = []
    /// Item ids per account id, gathered before the pass so links resolve across accounts.
    var itemsByAccount: [Data: Set<Data>] = [:]

    init(verifyKeyPairs: Bool) {
        self.verifyKeyPairs = verifyKeyPairs
    }

    static let minTimestamp: Int64 = 0
    static let maxTimestamp: Int64 = 32_503_680_000  // 3000-01-01

    func pointer(_ member: StaticString? = nil) -> String {
        var out = ""
        for component in path { component.render(into: &out) }
        if let member { PathComponent.key(member).render(into: &out) }
        return out
    }

    mutating func report(_ severity: Diagnostic.Severity, _ code: Diagnostic.Code, _ member: StaticString?, _ message: String) {
        diagnostics.append(Diagnostic(severity: severity, code: code, path: pointer(member), message: message))
    }

    @inline(__always) mutating func descend(_ key: StaticString, _ body: (inout ValidationRun) -> Void) {
        path.append(.key(key))
        body(&self)
        path.removeLast()
    }

    @inline(__always) mutating func each<T>(_ key: StaticString, _ elements: [T], _ body: (inout ValidationRun, T) -> Void) {
        path.append(.key(key))
        for (index, element) in elements.enumerated() {
            path.append(.index(index))
            body(&self, element)
            path.removeLast()
        }
        path.removeLast()
    }

    // MARK: Structure

    mutating func document(_ document: CXF.Document) {
        for account in document.accounts {
            itemsByAccount[account.id, default: []].formUnion(account.items.lazy.map(\.id))
        }
        switch document {
        case .header(let header):
            if header.version.major != 1 {
                report(
                    .error, .unsupportedVersion, "version",
                    "CXF version \(header.version) is not supported: this reader understands major version 1 (1.x); a new major version changes the format incompatibly")
            }
            timestamp(header.timestamp, "timestamp")
            each("accounts", header.accounts) { $0.account($1) }
        case .account(let account):
            self.account(account)
        }
    }

    mutating func account(_ a: CXF.Account) {
        id(a.id, "id")
        var ids = Set<Data>()
        ids.reserveCapacity(a.items.count + a.collections.count)
        each("items", a.items) { run, item in
            run.unique(item.id, in: &ids)
            run.item(item, account: a.id)
        }
        each("collections", a.collections) { run, c in run.collection(c, account: a.id, ids: &ids) }
        extensions(a.extensions)
    }

    mutating func unique(_ id: Data, in ids: inout Set<Data>) {
        if !id.isEmpty && !ids.insert(id).inserted {
            report(.error, .duplicateID, "id", "the id \(Base64URL.encode(id)) is used twice in this account")
        }
    }

    mutating func id(_ id: Data, _ member: StaticString) {
        if id.isEmpty {
            report(.warning, .emptyID, member, "the id is empty, so nothing can refer to this")
        } else if id.count > 64 {
            report(.error, .idTooLong, member, "the id is \(id.count) bytes; CXF allows at most 64")
        }
    }

    mutating func timestamp(_ t: Int64?, _ member: StaticString) {
        guard let t, t < Self.minTimestamp || t > Self.maxTimestamp else { return }
        let hint = t > 1_000_000_000_000 ? " (it looks like milliseconds; CXF counts seconds)" : ""
        report(.warning, .timestampOutOfRange, member, "the timestamp \(t) is outside 1970…3000\(hint)")
    }

    mutating func collection(_ c: CXF.Collection, account: Data, ids: inout Set<Data>) {
        id(c.id, "id")
        unique(c.id, in: &ids)
        timestamp(c.creationAt, "creationAt")
        timestamp(c.modifiedAt, "modifiedAt")
        each("items", c.items) { run, link in run.link(link, account: account) }
        if let sub = c.subCollections {
            each("subCollections", sub) { run, child in run.collection(child, account: account, ids: &ids) }
        }
        extensions(c.extensions)
    }

    mutating func link(_ link: CXF.LinkedItem, account: Data) {
        let target = link.account ?? account
        guard let items = itemsByAccount[target] else {
            report(.warning, .danglingLinkedItem, "account", "the link names account \(Base64URL.encode(target)), which is not in this document")
            return
        }
        if !items.contains(link.item) {
            report(.warning, .danglingLinkedItem, "item", "the link names item \(Base64URL.encode(link.item)), which is not in its account")
        }
    }

    mutating func item(_ item: CXF.Item, account: Data) {
        id(item.id, "id")
        timestamp(item.creationAt, "creationAt")
        timestamp(item.modifiedAt, "modifiedAt")
        each("credentials", item.credentials) { run, c in run.credential(c, account: account) }
        extensions(item.extensions)
    }

    mutating func extensions(_ extensions: [CXF.Extension]?) {
        guard let extensions else { return }
        each("extensions", extensions) { run, ext in
            guard case .shared(let shared) = ext else { return }
            run.each("accessors", shared.accessors) { run, accessor in
                if case .unknown(let type) = accessor.type {
                    run.report(.warning, .ignoredAccessor, "type", "the accessor type '\(type)' is unknown; this accessor is ignored")
                    return
                }
                let unknown = accessor.permissions.compactMap { if case .unknown(let p) = $0 { p } else { nil } }
                if !unknown.isEmpty {
                    run.report(.warning, .ignoredAccessor, "permissions", "unknown permissions are ignored: \(unknown.joined(separator: ", "))")
                }
                if accessor.permissions.count == unknown.count {
                    run.report(.warning, .ignoredAccessor, "permissions", "the accessor has no known permission; it is ignored")
                }
            }
        }
    }

    // MARK: Credentials

    mutating func credential(_ credential: CXF.Credential, account: Data) {
        switch credential {
        case .basicAuth(let c): schema(c)
        case .note(let c): schema(c)
        case .creditCard(let c): schema(c)
        case .address(let c): schema(c)
        case .apiKey(let c): schema(c)
        case .driversLicense(let c): schema(c)
        case .identityDocument(let c): schema(c)
        case .passport(let c): schema(c)
        case .personName(let c): schema(c)
        case .wifi(let c): schema(c)
        case .generatedPassword(let c):
            if c.password.isEmpty { report(.warning, .emptyRequiredValue, "password", "the generated password is empty") }
        case .sshKey(let c):
            schema(c)
            key(c.privateKey, "privateKey", sshKeyType: c.keyType)
        case .passkey(let p):
            if p.credentialId.isEmpty { report(.error, .emptyRequiredValue, "credentialId", "the credential id is empty") }
            if p.rpId.isEmpty { report(.error, .emptyRequiredValue, "rpId", "the relying party id is empty") }
            if p.userHandle.isEmpty || p.userHandle.count > 64 {
                report(.error, .invalidFieldValue, "userHandle", "the user handle is \(p.userHandle.count) bytes; WebAuthn requires 1 to 64")
            }
            key(p.key, "key", sshKeyType: nil)
        case .totp(let t): totp(t)
        case .file(let f):
            id(f.id, "id")
            if f.integrityHash.count != 32 {
                report(.error, .invalidIntegrityHash, "integrityHash", "the integrity hash is \(f.integrityHash.count) bytes; a SHA-256 hash is 32")
            }
        case .customFields(let c):
            if let id = c.id, id.count > 64 { report(.error, .idTooLong, "id", "the id is \(id.count) bytes; CXF allows at most 64") }
            each("fields", c.fields) { run, f in run.field(f, expected: nil, required: false) }
        case .itemReference(let r):
            descend("reference") { $0.link(r.reference, account: account) }
        case .unrecognized:
            break  // reported by the decoder
        }
    }

    mutating func schema<C: SchemaCredential>(_ c: C) {
        for member in C.members {
            switch member.kind {
            case .field(let keyPath, let expected):
                if let f = c[keyPath: keyPath] { descend(member.key) { $0.field(f, expected: expected, required: false) } }
            case .requiredField(let keyPath, let expected):
                descend(member.key) { $0.field(c[keyPath: keyPath], expected: expected, required: true) }
            case .string, .requiredString, .requiredBytes:
                break
            }
        }
    }

    mutating func totp(_ t: CXF.TOTP) {
        do {
            let secret = try Base32.decode(t.secret)
            if secret.isEmpty { report(.error, .invalidTOTPSecret, "secret", "the secret is empty") }
        } catch {
            report(.error, .invalidTOTPSecret, "secret", "the secret is not Base32: \(error)")
        }
        if t.period == 0 { report(.error, .invalidTOTPParameter, "period", "the period is 0 seconds") }
        if !(6...10).contains(t.digits) {
            report(.error, .invalidTOTPParameter, "digits", "\(t.digits) digits cannot be a one-time code (6 to 10)")
        }
    }

    mutating func key(_ der: Data, _ member: StaticString, sshKeyType: String?) {
        do {
            let info = try PrivateKeyInfo(derEncoded: der, verifyPublicKey: verifyKeyPairs)
            if let sshKeyType, !info.algorithm.sshKeyTypes.contains(sshKeyType) {
                report(
                    .error, .keyTypeMismatch, member,
                    "the key is \(info.algorithm) but keyType says '\(sshKeyType)' (expected \(info.algorithm.sshKeyTypes.joined(separator: " or ")))")
            }
        } catch {
            report(.error, .invalidPrivateKey, member, "\(error)")
        }
    }

    // MARK: Fields

    mutating func field(_ f: CXF.EditableField, expected: CXF.FieldType?, required: Bool) {
        if let id = f.id, id.count > 64 { report(.error, .idTooLong, "id", "the id is \(id.count) bytes; CXF allows at most 64") }
        if case .unknown(let name) = f.fieldType {
            report(.warning, .unknownFieldType, "fieldType", "the field type '\(name)' is not part of CXF 1.0; the value is kept as text")
            return
        }
        if let expected, expected != f.fieldType {
            report(.warning, .unexpectedFieldType, "fieldType", "this member should be a \(expected.rawValue) field, not \(f.fieldType.rawValue)")
        }
        if f.value.isEmpty {
            if required || f.fieldType != .string && f.fieldType != .concealedString {
                report(.warning, .emptyFieldValue, "value", "the \(f.fieldType.rawValue) value is empty")
            }
            return
        }
        if let problem = FieldValueRules.problem(with: f.value, as: f.fieldType) {
            report(.error, .invalidFieldValue, "value", problem)
        }
    }
}

/// What the values of each field type must look like.
enum FieldValueRules {
    static func problem(with value: String, as type: CXF.FieldType) -> String? {
        let u = Array(value.utf8)
        switch type {
        case .string, .concealedString, .unknown: return nil
        case .email:
            return u.contains(UInt8(ascii: "@")) ? nil : "'\(value)' is not an email address (no @)"
        case .number:
            return Double(value) != nil && !value.contains(where: { $0.isLetter }) ? nil : "'\(value)' is not a number"
        case .boolean:
            return value == "true" || value == "false" ? nil : "'\(value)' is not a boolean (true or false)"
        case .date:
            return isDate(u) ? nil : "'\(value)' is not a date (YYYY-MM-DD)"
        case .yearMonth:
            return u.count == 7 && isYearMonth(u[...]) ? nil : "'\(value)' is not a year and month (YYYY-MM)"
        case .countryCode:
            return u.count == 2 && u.allSatisfy(isUpper) ? nil : "'\(value)' is not an ISO 3166-1 alpha-2 country code (two capital letters)"
        case .subdivisionCode:
            let dash = u.firstIndex(of: UInt8(ascii: "-"))
            let ok = dash == 2 && u.count >= 4 && u.count <= 6 && u[..<2].allSatisfy(isUpper)
                && u[3...].allSatisfy { isUpper($0) || isDigit($0) }
            return ok ? nil : "'\(value)' is not an ISO 3166-2 subdivision code (like US-CA)"
        case .wifiNetworkSecurityType:
            return CXF.WiFiNetworkSecurityType(rawValue: value) != nil
                ? nil
                : "'\(value)' is not a Wi-Fi security type (\(CXF.WiFiNetworkSecurityType.allCases.map(\.rawValue).joined(separator: ", ")))"
        }
    }

    static func isUpper(_ c: UInt8) -> Bool { c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") }
    static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    static func number(_ u: ArraySlice<UInt8>) -> Int? {
        guard !u.isEmpty, u.allSatisfy(isDigit) else { return nil }
        return u.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    static func isYearMonth(_ u: ArraySlice<UInt8>) -> Bool {
        let s = u.startIndex
        guard u[s + 4] == UInt8(ascii: "-"), number(u[s..<s + 4]) != nil, let month = number(u[(s + 5)...]) else { return false }
        return (1...12).contains(month)
    }

    static func isDate(_ u: [UInt8]) -> Bool {
        guard u.count == 10, u[7] == UInt8(ascii: "-"), isYearMonth(u[0..<7]), let year = number(u[0..<4]),
            let month = number(u[5..<7]), let day = number(u[8...])
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day)
    }
}
