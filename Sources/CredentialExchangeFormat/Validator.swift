import KeyportEncoding

import struct Foundation.Data

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
        /// How many diagnostics of one code are listed (default 100); the rest are counted in one
        /// summary diagnostic per code.
        public var maxDiagnosticsPerCode: Int

        /// A validator; by default key pairs are not proven.
        public init(verifyKeyPairs: Bool = false, maxDiagnosticsPerCode: Int = 100) {
            self.verifyKeyPairs = verifyKeyPairs
            self.maxDiagnosticsPerCode = maxDiagnosticsPerCode
        }

        /// Checks `document` against the rules of CXF 1.0 and returns the findings. Their paths index the
        /// model, which follows the source element for element.
        public func validate(_ document: Document) -> [Diagnostic] {
            var run = ValidationRun(verifyKeyPairs: verifyKeyPairs, diagnosticLimit: maxDiagnosticsPerCode)
            run.document(document)
            return run.diagnostics.finish()
        }
    }
}

/// One validation pass: the path to where we are and what was found.
struct ValidationRun {
    let verifyKeyPairs: Bool
    var diagnostics: DiagnosticList
    var path: [PathComponent] = []
    /// Item ids per account id, gathered before the pass so links resolve across accounts.
    var itemsByAccount: [Data: Set<Data>] = [:]
    /// Per account (in document order), the indices of items whose id repeats an earlier one.
    var duplicateItems: [Set<Int>] = []
    var accountIndex = 0

    init(verifyKeyPairs: Bool, diagnosticLimit: Int) {
        self.verifyKeyPairs = verifyKeyPairs
        diagnostics = DiagnosticList(limit: diagnosticLimit)
    }

    static let minTimestamp: Int64 = 0
    static let maxTimestamp: Int64 = 32_503_680_000  // 3000-01-01

    func pointer(_ member: StaticString? = nil) -> String {
        var out = ""
        for component in path { component.render(into: &out) }
        if let member { PathComponent.key(member).render(into: &out) }
        return out
    }

    mutating func report(
        _ severity: Diagnostic.Severity,
        _ code: Diagnostic.Code,
        _ member: StaticString?,
        _ message: String
    ) {
        let path = diagnostics.wants(code) ? pointer(member) : ""
        diagnostics.append(severity, code, path: path, message: message)
    }

    // Loops below index the arrays instead of iterating them: a `for element in array` copy
    // would retain all of an element's members. The two largest (items, and their credentials)
    // go through the array's buffer, whose elements are passed borrowed: `array[i]` passed to a
    // function was still copied there (measured; docs/performance.md).

    // MARK: Structure

    mutating func document(_ document: CXF.Document) {
        for account in document.accounts {
            // Taken out while it grows, so that the dictionary's reference does not make it copy.
            var ids = itemsByAccount.removeValue(forKey: account.id) ?? Set(minimumCapacity: account.items.count)
            var duplicates = Set<Int>()
            for index in account.items.indices where !account.items[index].id.isEmpty {
                if !ids.insert(account.items[index].id).inserted { duplicates.insert(index) }
            }
            itemsByAccount[account.id] = ids
            duplicateItems.append(duplicates)
        }
        switch document {
        case .header(let header):
            if header.version.major != 1 {
                report(
                    .error,
                    .unsupportedVersion,
                    "version",
                    "CXF version \(header.version) is not supported: this reader understands major version 1 (1.x); a new major version changes the format incompatibly"
                )
            }
            timestamp(header.timestamp, "timestamp")
            path.append(.key("accounts"))
            for index in header.accounts.indices {
                path.append(.index(index))
                account(header.accounts[index])
                path.removeLast()
            }
            path.removeLast()
        case .account(let account):
            self.account(account)
        }
    }

    mutating func account(_ a: CXF.Account) {
        id(a.id, "id")
        let duplicates = duplicateItems[accountIndex]
        accountIndex += 1
        path.append(.key("items"))
        // Through the buffer: its elements are passed borrowed, where `a.items[index]` is copied
        // (every member of every item retained and released again).
        a.items.withUnsafeBufferPointer { items in
            for index in items.indices {
                path.append(.index(index))
                if duplicates.contains(index) { reportDuplicate(items[index].id) }
                item(items[index], account: a.id)
                path.removeLast()
            }
        }
        path.removeLast()
        // Collections share the account's id space with its items: a collection's id may repeat
        // neither an item's nor an earlier collection's (kept apart, so the items' set is only
        // read, never copied to be added to).
        var collectionIDs = Set<Data>()
        collections(
            "collections",
            a.collections,
            account: a.id,
            itemIDs: itemsByAccount[a.id] ?? [],
            ids: &collectionIDs
        )
        extensions(a.extensions)
    }

    mutating func collections(
        _ key: StaticString,
        _ collections: [CXF.Collection],
        account: Data,
        itemIDs: Set<Data>,
        ids: inout Set<Data>
    ) {
        path.append(.key(key))
        for index in collections.indices {
            path.append(.index(index))
            collection(collections[index], account: account, itemIDs: itemIDs, ids: &ids)
            path.removeLast()
        }
        path.removeLast()
    }

    mutating func reportDuplicate(_ id: Data) {
        report(.error, .duplicateID, "id", "the id \(Base64URL.encode(id)) is used twice in this account")
    }

    mutating func id(_ id: Data, _ member: StaticString) {
        if id.isEmpty {
            report(.warning, .emptyID, member, "the id is empty, so nothing can refer to this")
        } else if id.count > 64 {
            report(
                .warning,
                .idTooLong,
                member,
                "the id is \(id.count) bytes; CXF allows at most 64, so an importer may give it a new one"
            )
        }
    }

    mutating func timestamp(_ t: Int64?, _ member: StaticString) {
        guard let t, t < Self.minTimestamp || t > Self.maxTimestamp else { return }
        let hint = t > 1_000_000_000_000 ? " (it looks like milliseconds; CXF counts seconds)" : ""
        report(.warning, .timestampOutOfRange, member, "the timestamp \(t) is outside 1970…3000\(hint)")
    }

    mutating func collection(_ c: CXF.Collection, account: Data, itemIDs: Set<Data>, ids: inout Set<Data>) {
        id(c.id, "id")
        if !c.id.isEmpty && (itemIDs.contains(c.id) || !ids.insert(c.id).inserted) { reportDuplicate(c.id) }
        timestamp(c.creationAt, "creationAt")
        timestamp(c.modifiedAt, "modifiedAt")
        path.append(.key("items"))
        for index in c.items.indices {
            path.append(.index(index))
            link(c.items[index], account: account)
            path.removeLast()
        }
        path.removeLast()
        if let sub = c.subCollections {
            collections("subCollections", sub, account: account, itemIDs: itemIDs, ids: &ids)
        }
        extensions(c.extensions)
    }

    mutating func link(_ link: CXF.LinkedItem, account: Data) {
        let target = link.account ?? account
        guard let items = itemsByAccount[target] else {
            report(
                .warning,
                .danglingLinkedItem,
                "account",
                "the link names account \(Base64URL.encode(target)), which is not in this document"
            )
            return
        }
        if !items.contains(link.item) {
            report(
                .warning,
                .danglingLinkedItem,
                "item",
                "the link names item \(Base64URL.encode(link.item)), which is not in its account"
            )
        }
    }

    mutating func item(_ item: CXF.Item, account: Data) {
        id(item.id, "id")
        timestamp(item.creationAt, "creationAt")
        timestamp(item.modifiedAt, "modifiedAt")
        path.append(.key("credentials"))
        item.credentials.withUnsafeBufferPointer { credentials in
            for index in credentials.indices {
                path.append(.index(index))
                credential(credentials[index], account: account)
                path.removeLast()
            }
        }
        path.removeLast()
        extensions(item.extensions)
    }

    mutating func extensions(_ extensions: [CXF.Extension]?) {
        guard let extensions else { return }
        path.append(.key("extensions"))
        for index in extensions.indices {
            guard case .shared(let shared) = extensions[index] else { continue }
            path.append(.index(index))
            path.append(.key("accessors"))
            for (position, accessor) in shared.accessors.enumerated() {
                path.append(.index(position))
                self.accessor(accessor)
                path.removeLast()
            }
            path.removeLast(2)
        }
        path.removeLast()
    }

    mutating func accessor(_ accessor: CXF.SharedExtension.Accessor) {
        if case .unknown(let type) = accessor.type {
            report(
                .warning,
                .ignoredAccessor,
                "type",
                "the accessor type '\(type)' is unknown; this accessor is ignored"
            )
            return
        }
        let unknown = accessor.permissions.compactMap { if case .unknown(let p) = $0 { p } else { nil } }
        let names = unknown.isEmpty ? "" : " (unknown: \(unknown.joined(separator: ", ")))"
        if accessor.permissions.count == unknown.count {
            report(
                .warning,
                .ignoredAccessor,
                "permissions",
                "the accessor has no known permission\(names); it is ignored"
            )
        } else if !unknown.isEmpty {
            report(
                .warning,
                .ignoredAccessor,
                "permissions",
                "unknown permissions are ignored: \(unknown.joined(separator: ", "))"
            )
        }
    }

    // MARK: Credentials

    mutating func credential(_ credential: CXF.Credential, account: Data) {
        switch credential {
        case .basicAuth(let c): fields(c)
        case .note(let c): fields(c)
        case .creditCard(let c): fields(c)
        case .address(let c): fields(c)
        case .apiKey(let c): fields(c)
        case .driversLicense(let c): fields(c)
        case .identityDocument(let c): fields(c)
        case .passport(let c): fields(c)
        case .personName(let c): fields(c)
        case .wifi(let c): fields(c)
        case .generatedPassword(let c):
            if c.password.isEmpty {
                report(.warning, .emptyRequiredValue, "password", "the generated password is empty")
            }
        case .sshKey(let c):
            fields(c)
            key(c.privateKey, "privateKey", sshKeyType: c.keyType)
        case .passkey(let p):
            if p.credentialId.isEmpty {
                report(.error, .emptyRequiredValue, "credentialId", "the credential id is empty")
            }
            if p.rpId.isEmpty { report(.error, .emptyRequiredValue, "rpId", "the relying party id is empty") }
            if p.userHandle.isEmpty || p.userHandle.count > 64 {
                report(
                    .error,
                    .invalidFieldValue,
                    "userHandle",
                    "the user handle is \(p.userHandle.count) bytes; WebAuthn requires 1 to 64"
                )
            }
            key(p.key, "key", sshKeyType: nil)
        case .totp(let t): totp(t)
        case .file(let f):
            id(f.id, "id")
            if f.integrityHash.count != 32 {
                report(
                    .warning,
                    .invalidIntegrityHash,
                    "integrityHash",
                    "the integrity hash is \(f.integrityHash.count) bytes; a SHA-256 hash is 32, so the file's contents cannot be checked against it"
                )
            }
        case .customFields(let c):
            if let id = c.id { self.id(id, "id") }
            path.append(.key("fields"))
            for index in c.fields.indices {
                path.append(.index(index))
                field(c.fields[index], expected: nil, required: false)
                path.removeLast()
            }
            path.removeLast()
        case .itemReference(let r):
            path.append(.key("reference"))
            link(r.reference, account: account)
            path.removeLast()
        case .unrecognized:
            break  // reported by the decoder
        }
    }

    /// The editable fields of a credential, walked by its ``SchemaObject/members(_:_:)``.
    mutating func fields<C: SchemaObject>(_ c: C) {
        var checker = FieldChecker()
        var c = c
        c.members(&checker, &self)
    }

    /// Checks each editable field member against the field type it calls for.
    struct FieldChecker: MemberVisitor {
        typealias Context = ValidationRun
        typealias VisitError = Never
        func required<C: ValueCoder>(
            _ key: StaticString,
            _ value: inout C.Value,
            _ coder: C,
            _ missing: ObjectSchema.Missing,
            _ v: inout ValidationRun
        ) {
            check(key, value as? CXF.EditableField, coder, required: true, &v)
        }

        func optional<C: ValueCoder>(_ key: StaticString, _ value: inout C.Value?, _ coder: C, _ v: inout ValidationRun)
        {
            check(key, value as? CXF.EditableField, coder, required: false, &v)
        }

        private func check<C: ValueCoder>(
            _ key: StaticString,
            _ field: CXF.EditableField?,
            _ coder: C,
            required: Bool,
            _ v: inout ValidationRun
        ) {
            guard let expected = coder.fieldType, let field else { return }
            v.path.append(.key(key))
            v.field(field, expected: expected, required: required)
            v.path.removeLast()
        }
    }

    mutating func totp(_ t: CXF.TOTP) {
        do {
            let secret = try Base32.decode(t.secret)
            if secret.isEmpty { report(.error, .invalidTOTPSecret, "secret", "the secret is empty") }
        } catch {
            report(.error, .invalidTOTPSecret, "secret", "the secret is not Base32: \(error.redactedDescription)")
        }
        if t.period == 0 {
            report(.error, .invalidTOTPParameter, "period", "the period is 0 seconds, so no code can be computed")
        }
        if t.digits == 0 || t.digits > 10 {
            report(
                .error,
                .invalidTOTPParameter,
                "digits",
                "\(t.digits) digits cannot be a one-time code (HOTP gives 1 to 10)"
            )
        } else if t.digits < 6 {
            report(
                .warning,
                .invalidTOTPParameter,
                "digits",
                "\(t.digits) digits are fewer than the 6 RFC 4226 asks for"
            )
        }
    }

    mutating func key(_ der: Data, _ member: StaticString, sshKeyType: String?) {
        do {
            let algorithm = try PrivateKeyInfo.check(der, verifyPublicKey: verifyKeyPairs)
            if let sshKeyType, !algorithm.sshKeyTypes.contains(sshKeyType) {
                report(
                    .warning,
                    .keyTypeMismatch,
                    member,
                    "the key is \(algorithm) but keyType says '\(sshKeyType)' (expected \(algorithm.sshKeyTypes.joined(separator: " or ")))"
                )
            }
        } catch {
            report(.error, .invalidPrivateKey, member, "\(error)")
        }
    }

    // MARK: Fields

    mutating func field(_ f: CXF.EditableField, expected: CXF.FieldType?, required: Bool) {
        if let id = f.id, id.count > 64 {
            report(
                .warning,
                .idTooLong,
                "id",
                "the id is \(id.count) bytes; CXF allows at most 64, so an importer may give it a new one"
            )
        }
        if case .unknown(let name) = f.fieldType {
            report(
                .warning,
                .unknownFieldType,
                "fieldType",
                "the field type '\(name)' is not part of CXF 1.0; the value is kept as text"
            )
            return
        }
        if let expected, expected != f.fieldType {
            report(
                .warning,
                .unexpectedFieldType,
                "fieldType",
                "this member should be a \(expected.rawValue) field, not \(f.fieldType.rawValue)"
            )
        }
        if f.value.isEmpty {
            if required || f.fieldType != .string && f.fieldType != .concealedString {
                report(.warning, .emptyFieldValue, "value", "the \(f.fieldType.rawValue) value is empty")
            }
            return
        }
        // Whether the value may be quoted is decided by what the member calls for, not by the
        // type the document declares: a password labelled `email` stays unquoted. A custom field
        // calls for nothing, so its value is never quoted either.
        let secret = CXF.Credential.maySecret(expected: expected, declared: f.fieldType)
        if let problem = FieldValueRules.problem(with: f.value, as: f.fieldType, quoting: !secret) {
            report(.warning, .invalidFieldValue, "value", problem)
        }
    }
}

/// What the values of each field type must look like. Every problem is a warning: the value is
/// text, and an importer can store it as it came.
enum FieldValueRules {
    /// What is wrong with `value` as a `type` value, or `nil`. The value is quoted only when
    /// `quoting`; otherwise the text says what is wrong without repeating it.
    static func problem(with value: String, as type: CXF.FieldType, quoting: Bool) -> String? {
        // Made only for a problem: most values have none, and a document has hundreds of
        // thousands of them.
        var it: String { quoting ? "'\(value)'" : "the value" }
        switch type {
        case .string, .concealedString, .unknown: return nil
        case .email:
            return value.utf8.contains(UInt8(ascii: "@")) ? nil : "\(it) is not an email address (no @)"
        case .number:
            return Double(value) != nil && !value.contains(where: { $0.isLetter }) ? nil : "\(it) is not a number"
        case .boolean:
            return value == "true" || value == "false" ? nil : "\(it) is not a boolean (true or false)"
        case .wifiNetworkSecurityType:
            if CXF.WiFiNetworkSecurityType(rawValue: value) != nil { return nil }
            let known = CXF.WiFiNetworkSecurityType.allCases.map(\.rawValue).joined(separator: ", ")
            if let meant = CXF.WiFiNetworkSecurityType(lenient: value) {
                return
                    "\(it) is not written as CXF writes Wi-Fi security types; it reads as \(meant.rawValue) (CXF: \(known))"
            }
            return "\(it) is not a Wi-Fi security type (\(known))"
        case .date, .yearMonth, .countryCode, .subdivisionCode:
            var text = value
            let ok = text.withUTF8 { u in
                switch type {
                case .date: isDate(u)
                case .yearMonth: u.count == 7 && isYearMonth(u[...])
                case .countryCode: u.count == 2 && u.allSatisfy(isUpper)
                default: isSubdivision(u)
                }
            }
            if ok { return nil }
            switch type {
            case .date: return "\(it) is not a date (YYYY-MM-DD)"
            case .yearMonth: return "\(it) is not a year and month (YYYY-MM)"
            case .countryCode: return "\(it) is not an ISO 3166-1 alpha-2 country code (two capital letters)"
            default:
                let bare = text.utf8.count <= 3 && text.utf8.allSatisfy { isUpper($0) || isDigit($0) }
                return bare
                    ? "\(it) is a subdivision without its country; ISO 3166-2 writes the country first (like US-CA)"
                    : "\(it) is not an ISO 3166-2 subdivision code (like US-CA)"
            }
        }
    }

    static func isUpper(_ c: UInt8) -> Bool { c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") }
    static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    static func number(_ u: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
        guard !u.isEmpty, u.allSatisfy(isDigit) else { return nil }
        return u.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    static func isSubdivision(_ u: UnsafeBufferPointer<UInt8>) -> Bool {
        u.count >= 4 && u.count <= 6 && u[2] == UInt8(ascii: "-") && u[..<2].allSatisfy(isUpper)
            && u[3...].allSatisfy { isUpper($0) || isDigit($0) }
    }

    static func isYearMonth(_ u: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        let s = u.startIndex
        guard u[s + 4] == UInt8(ascii: "-"), number(u[s..<s + 4]) != nil, let month = number(u[(s + 5)...]) else {
            return false
        }
        return (1...12).contains(month)
    }

    static func isDate(_ u: UnsafeBufferPointer<UInt8>) -> Bool {
        guard u.count == 10, u[7] == UInt8(ascii: "-"), isYearMonth(u[0..<7]), let year = number(u[0..<4]),
            let month = number(u[5..<7]), let day = number(u[8...])
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day)
    }
}
