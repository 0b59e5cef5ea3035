import CredentialExchangeFormat
import Foundation

// Conversion between Apple's types and the CXF model of `CredentialExchangeFormat` (a Linux addition).
//
// AS → CXF always succeeds and loses nothing: converting back gives an equal value, with one caveat,
// dates: CXF holds whole Unix seconds, so a date's fraction of a second is dropped (rounded toward
// zero). CXF → AS drops what Apple's types cannot hold; ``ASExportedCredentialData/init(cxf:omissions:)``
// says what, the per-type initialisers drop it silently.

// MARK: - What a conversion leaves out

extension ASExportedCredentialData {
    /// Something of a CXF document that Apple's types cannot hold and that a conversion left out or
    /// changed. (Linux addition.)
    ///
    /// Omissions never quote values from the document (they may be secrets), only member names, types
    /// and algorithm names.
    public struct CXFOmission: Hashable, Sendable, CustomStringConvertible {
        /// Where, as a JSON pointer (RFC 6901) into the CXF document: `/accounts/0/items/2/credentials/1`.
        /// For a document that is a single account, the pointer starts at the account: `/items/2/…`.
        public var path: String
        /// What was left out or changed, and why.
        public var reason: String

        /// Creates an omission.
        public init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }

        /// `path: reason`, the path `/` for the document itself.
        public var description: String { "\(path.isEmpty ? "/" : path): \(reason)" }
    }
}

// MARK: - CXF → AS entry points

extension ASExportedCredentialData {
    /// Converts a CXF document, and reports what Apple's types cannot hold. (Linux addition.)
    ///
    /// What is left out, each reported in `omissions` with a JSON pointer:
    /// - members CXF 1.0 does not define (kept by `CXF.Decoder` as unknown members), at every level;
    /// - `file` credentials and credentials `CXF.Decoder` could not read (unknown or malformed types),
    ///   TOTP credentials whose secret is not Base32 or whose period or digits exceed `UInt16`;
    /// - extensions on accounts, collections, fields and custom fields (Apple's types have none), and
    ///   item extensions other than `shared`; in `shared`, accessors of an unknown type, unknown
    ///   permissions, and accessors left with no permission;
    /// - a passkey's `credBlob` and `payments`, HMAC credentials whose algorithm has no
    ///   ``ASImportableFIDO2HMACCredential/Algorithm`` case, a large blob larger than `Int.max`;
    /// - URLs that `URL(string:)` cannot parse.
    ///
    /// One thing is changed rather than dropped: a field type Apple's ``ASImportableEditableField/FieldType``
    /// has no case for becomes ``ASImportableEditableField/FieldType/string``, keeping the value (also
    /// reported). Distinctions CXF makes and Apple does not, such as an absent versus an empty `tags`
    /// array or `favorite` absent versus `false`, are not reported.
    ///
    /// A document that is a single account, without a header, converts with these header values:
    /// format version ``FormatVersion/v1``, empty exporter identifier and name, and a `timestamp` of
    /// `Date(timeIntervalSince1970: 0)`, which stands for "unknown".
    ///
    /// - Throws: `DecodingError.dataCorrupted` when the document's major version is not 1, with the
    ///   same message as decoding with `JSONDecoder`.
    public init(cxf document: CXF.Document, omissions: inout [CXFOmission]) throws {
        var importer = CXFImporter()
        self = try importer.document(document)
        omissions.append(contentsOf: importer.omissions)
    }

    /// Converts a CXF document, leaving out silently what Apple's types cannot hold. (Linux addition.)
    ///
    /// See ``init(cxf:omissions:)`` for what is left out and for the errors.
    public init(cxf document: CXF.Document) throws {
        var ignored: [CXFOmission] = []
        try self.init(cxf: document, omissions: &ignored)
    }

    /// Converts a CXF header, leaving out silently what Apple's types cannot hold. (Linux addition.)
    ///
    /// See ``init(cxf:omissions:)`` for what is left out and for the errors.
    public init(_ header: CXF.Header) throws {
        try self.init(cxf: .header(header))
    }

    /// Reads CXF JSON with the fast, tolerant `CXF.Decoder` and converts it, reporting what Apple's
    /// types cannot hold. (Linux addition.)
    ///
    /// Both top-level shapes are read: a header, and a single account. The decoder's own findings (what
    /// it had to tolerate) are not reported here; run `CXF.Decoder` yourself to see them.
    ///
    /// - Throws: `CXFDecodingError` when the bytes are not JSON or not a CXF document, and
    ///   `DecodingError.dataCorrupted` when the major version is not 1.
    public init(cxfJSON: Data, omissions: inout [CXFOmission]) throws {
        let decoded = try CXF.Decoder().decode(cxfJSON)
        try self.init(cxf: decoded.document, omissions: &omissions)
    }

    /// Reads CXF JSON with the fast, tolerant `CXF.Decoder` and converts it, leaving out silently
    /// what Apple's types cannot hold. (Linux addition.)
    public init(cxfJSON: Data) throws {
        var ignored: [CXFOmission] = []
        try self.init(cxfJSON: cxfJSON, omissions: &ignored)
    }

    /// The export as canonical CXF 1.0 JSON, written by `CXF.Encoder`. (Linux addition.)
    ///
    /// Dates are written as whole Unix seconds (rounded toward zero) whatever a `JSONEncoder` would do.
    public func cxfJSON() -> Data {
        CXF.Encoder().encodeData(CXF.Document(self))
    }
}

extension ASImportableAccount {
    /// Converts a CXF account; what Apple's types cannot hold is left out silently. (Linux addition.)
    /// ``ASExportedCredentialData/init(cxf:omissions:)`` reports what.
    public init(_ account: CXF.Account) {
        var importer = CXFImporter()
        self = importer.account(account)
    }
}

extension ASImportableCollection {
    /// Converts a CXF collection; what Apple's types cannot hold is left out silently. (Linux addition.)
    public init(_ collection: CXF.Collection) {
        var importer = CXFImporter()
        self = importer.collection(collection)
    }
}

extension ASImportableLinkedItem {
    /// Converts a CXF linked item. (Linux addition.)
    public init(_ linkedItem: CXF.LinkedItem) {
        var importer = CXFImporter()
        self = importer.linkedItem(linkedItem)
    }
}

extension ASImportableItem {
    /// Converts a CXF item; credentials and extensions Apple's types cannot hold are left out
    /// silently. (Linux addition.)
    public init(_ item: CXF.Item) {
        var importer = CXFImporter()
        self = importer.item(item)
    }
}

extension ASImportableCredentialScope {
    /// Converts a CXF scope; URLs `URL(string:)` cannot parse are left out. (Linux addition.)
    public init(_ scope: CXF.CredentialScope) {
        var importer = CXFImporter()
        self = importer.scope(scope)
    }
}

extension ASImportableCredentialScope.AndroidAppID {
    /// Converts a CXF Android app identifier. (Linux addition.)
    public init(_ app: CXF.AndroidAppIdentifier) {
        var importer = CXFImporter()
        self = importer.androidApp(app)
    }
}

extension ASImportableCredentialScope.AndroidAppCertificationFingerprint {
    /// Converts a CXF certificate fingerprint. (Linux addition.)
    public init(_ certificate: CXF.AndroidAppCertificateFingerprint) {
        self.init(fingerprint: certificate.fingerprint, hashAlgorithm: certificate.hashAlgorithm.rawValue)
    }
}

extension ASImportableCredential {
    /// Converts a CXF credential, or returns `nil` for one Apple's enum has no case for: a `file`
    /// credential, one `CXF.Decoder` could not read, or a TOTP whose secret is not Base32 or whose
    /// period or digits exceed `UInt16`. (Linux addition.)
    public init?(_ credential: CXF.Credential) {
        var importer = CXFImporter()
        guard let converted = importer.credential(credential) else { return nil }
        self = converted
    }
}

extension ASImportableEditableField {
    /// Converts a CXF editable field; an unknown field type becomes ``FieldType/string``. (Linux addition.)
    public init(_ field: CXF.EditableField) {
        var importer = CXFImporter()
        self = importer.field(field)
    }
}

extension ASImportableEditableField.FieldType {
    /// The field type for a CXF one; a type this enum has no case for is ``string``, because Apple's enum
    /// cannot keep an unknown type and text is what every field's value is. (Linux addition.)
    public init(_ type: CXF.FieldType) {
        switch type {
        case .string, .unknown: self = .string
        case .concealedString: self = .concealedString
        case .email: self = .email
        case .number: self = .number
        case .boolean: self = .boolean
        case .date: self = .date
        case .yearMonth: self = .yearMonth
        case .wifiNetworkSecurityType: self = .wifiNetworkSecurityType
        case .countryCode: self = .countryCode
        case .subdivisionCode: self = .subdivisionCode
        }
    }
}

extension ASImportableExtension {
    /// Converts a CXF extension, or returns `nil` for one other than `shared`. Accessors and permissions
    /// Apple's enums have no case for are left out. (Linux addition.)
    public init?(_ extension: CXF.Extension) {
        var importer = CXFImporter()
        guard let converted = importer.itemExtension(`extension`) else { return nil }
        self = converted
    }
}

// MARK: - CXF → AS

/// Converts the CXF model to Apple's types, keeping the JSON pointer of where it is so that what it
/// leaves out can be reported.
struct CXFImporter {
    private(set) var omissions: [ASExportedCredentialData.CXFOmission] = []
    private var path: [String] = []

    private var pointer: String {
        var out = ""
        for token in path {
            out += "/"
            out += JSONPointer.escape(token)
        }
        return out
    }

    mutating func omit(_ reason: String) {
        omissions.append(.init(path: pointer, reason: reason))
    }

    mutating func at<T, E: Error>(_ tokens: String..., body: (inout CXFImporter) throws(E) -> T) throws(E) -> T {
        path.append(contentsOf: tokens)
        defer { path.removeLast(tokens.count) }
        return try body(&self)
    }

    /// The format version; another major version throws `DecodingError.dataCorrupted`.
    mutating func version(_ version: CXF.Version) throws -> ASExportedCredentialData.FormatVersion {
        guard let known = ASExportedCredentialData.FormatVersion(major: version.major) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: [],
                    debugDescription: ASExportedCredentialData.FormatVersion.unsupportedMessage(
                        major: version.major,
                        minor: version.minor
                    )
                )
            )
        }
        unknown(version.unknownMembers, in: "ASExportedCredentialData.FormatVersion")
        return known
    }

    /// Converts the elements of the array member `key`, leaving out those that convert to `nil`.
    mutating func each<E, T>(_ key: String, _ elements: [E], _ body: (inout CXFImporter, E) -> T?) -> [T] {
        var out: [T] = []
        out.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            if let converted = at(key, String(index), body: { body(&$0, element) }) { out.append(converted) }
        }
        return out
    }

    mutating func unknown(_ members: [JSONMember], in typeName: String) {
        for member in members {
            let what = member.unreadable ? "could not be read as its type" : "is not in CXF 1.0, or repeats a member"
            at(member.key) {
                $0.omit("the member '\(member.key)' \(what) and is left out: \(typeName) has no place for it")
            }
        }
    }

    mutating func extensions(_ extensions: [CXF.Extension]?, on typeName: String) {
        guard let extensions else { return }
        for (index, ext) in extensions.enumerated() {
            at("extensions", String(index)) {
                $0.omit("the '\(ext.name)' extension is left out: \(typeName) has no extensions")
            }
        }
    }

    mutating func document(_ document: CXF.Document) throws -> ASExportedCredentialData {
        switch document {
        case .header(let header):
            return try self.header(header)
        case .account(let account):
            return ASExportedCredentialData(
                accounts: [self.account(account)],
                formatVersion: .v1,
                exporterRelyingPartyIdentifier: "",
                exporterDisplayName: "",
                timestamp: Date(timeIntervalSince1970: 0)
            )
        }
    }

    mutating func header(_ header: CXF.Header) throws -> ASExportedCredentialData {
        let version = try at("version") { try $0.version(header.version) }
        unknown(header.unknownMembers, in: "ASExportedCredentialData")
        return ASExportedCredentialData(
            accounts: each("accounts", header.accounts) { $0.account($1) },
            formatVersion: version,
            exporterRelyingPartyIdentifier: header.exporterRpId,
            exporterDisplayName: header.exporterDisplayName,
            timestamp: UnixTime.date(header.timestamp)
        )
    }

    mutating func account(_ account: CXF.Account) -> ASImportableAccount {
        extensions(account.extensions, on: "ASImportableAccount")
        unknown(account.unknownMembers, in: "ASImportableAccount")
        return ASImportableAccount(
            id: account.id,
            userName: account.username,
            email: account.email,
            fullName: account.fullName,
            collections: each("collections", account.collections) { $0.collection($1) },
            items: each("items", account.items) { $0.item($1) }
        )
    }

    mutating func collection(_ collection: CXF.Collection) -> ASImportableCollection {
        extensions(collection.extensions, on: "ASImportableCollection")
        unknown(collection.unknownMembers, in: "ASImportableCollection")
        return ASImportableCollection(
            id: collection.id,
            created: collection.creationAt.map(UnixTime.date),
            lastModified: collection.modifiedAt.map(UnixTime.date),
            title: collection.title,
            subtitle: collection.subtitle,
            items: each("items", collection.items) { $0.linkedItem($1) },
            subcollections: each("subCollections", collection.subCollections ?? []) { $0.collection($1) }
        )
    }

    mutating func linkedItem(_ linkedItem: CXF.LinkedItem) -> ASImportableLinkedItem {
        unknown(linkedItem.unknownMembers, in: "ASImportableLinkedItem")
        return ASImportableLinkedItem(item: linkedItem.item, account: linkedItem.account)
    }

    mutating func item(_ item: CXF.Item) -> ASImportableItem {
        unknown(item.unknownMembers, in: "ASImportableItem")
        return ASImportableItem(
            id: item.id,
            created: item.creationAt.map(UnixTime.date),
            lastModified: item.modifiedAt.map(UnixTime.date),
            title: item.title,
            subtitle: item.subtitle,
            favorite: item.favorite ?? false,
            scope: item.scope.map { scope in at("scope") { $0.scope(scope) } },
            credentials: each("credentials", item.credentials) { $0.credential($1) },
            tags: item.tags ?? [],
            extensions: each("extensions", item.extensions ?? []) { $0.itemExtension($1) }
        )
    }

    mutating func scope(_ scope: CXF.CredentialScope) -> ASImportableCredentialScope {
        unknown(scope.unknownMembers, in: "ASImportableCredentialScope")
        let urls: [URL] = each("urls", scope.urls) { importer, text in
            guard let url = URL(string: text) else {
                importer.omit(
                    "this URL cannot be parsed; ASImportableCredentialScope holds URL values, so it is left out"
                )
                return nil
            }
            return url
        }
        return ASImportableCredentialScope(
            urls: urls,
            androidApps: each("androidApps", scope.androidApps) { $0.androidApp($1) }
        )
    }

    mutating func androidApp(_ app: CXF.AndroidAppIdentifier) -> ASImportableCredentialScope.AndroidAppID {
        unknown(app.unknownMembers, in: "ASImportableCredentialScope.AndroidAppID")
        return ASImportableCredentialScope.AndroidAppID(
            bundleID: app.bundleId,
            certificate: app.certificate.map { certificate in at("certificate") { $0.certificate(certificate) } },
            name: app.name
        )
    }

    mutating func certificate(
        _ certificate: CXF.AndroidAppCertificateFingerprint
    ) -> ASImportableCredentialScope.AndroidAppCertificationFingerprint {
        unknown(certificate.unknownMembers, in: "ASImportableCredentialScope.AndroidAppCertificationFingerprint")
        return ASImportableCredentialScope.AndroidAppCertificationFingerprint(certificate)
    }

    mutating func field(_ field: CXF.EditableField) -> ASImportableEditableField {
        if case .unknown(let name) = field.fieldType {
            at("fieldType") {
                $0.omit(
                    "the field type '\(name)' has no ASImportableEditableField.FieldType case; "
                        + "the field is read as 'string'"
                )
            }
        }
        extensions(field.extensions, on: "ASImportableEditableField")
        unknown(field.unknownMembers, in: "ASImportableEditableField")
        return ASImportableEditableField(
            id: field.id,
            fieldType: .init(field.fieldType),
            value: field.value,
            label: field.label
        )
    }

    /// The optional field member `key`.
    mutating func field(_ field: CXF.EditableField?, _ key: String) -> ASImportableEditableField? {
        guard let field else { return nil }
        return at(key) { $0.field(field) }
    }

    mutating func itemExtension(_ ext: CXF.Extension) -> ASImportableExtension? {
        switch ext {
        case .unknown(let name, _):
            omit("the extension '\(name)' has no ASImportableExtension case; it is left out")
            return nil
        case .shared(let shared):
            return .shared(sharedExtension(shared))
        }
    }

    mutating func sharedExtension(_ shared: CXF.SharedExtension) -> ASImportableExtension.Shared {
        unknown(shared.unknownMembers, in: "ASImportableExtension.Shared")
        return ASImportableExtension.Shared(accessors: each("accessors", shared.accessors) { $0.accessor($1) })
    }

    /// An accessor as CXF asks importers to read it: unknown types and permissions ignored.
    mutating func accessor(
        _ accessor: CXF.SharedExtension.Accessor
    ) -> ASImportableExtension.Shared.SharingAccessor? {
        guard case .known(let kind) = accessor.type,
            let type = ASImportableExtension.Shared.SharingAccessor.AccessorType(rawValue: kind.rawValue)
        else {
            omit("an accessor of type '\(accessor.type.rawValue)' (neither user nor group) is left out")
            return nil
        }
        let permissions: [ASImportableExtension.Shared.SharingAccessor.Permission] = each(
            "permissions",
            accessor.permissions
        ) { importer, permission in
            guard let known = ASImportableExtension.Shared.SharingAccessor.Permission(rawValue: permission.rawValue)
            else {
                importer.omit("the permission '\(permission.rawValue)' is not a CXF 1.0 permission; it is left out")
                return nil
            }
            return known
        }
        guard !permissions.isEmpty else {
            omit("an accessor with no known permission is left out")
            return nil
        }
        unknown(accessor.unknownMembers, in: "ASImportableExtension.Shared.SharingAccessor")
        return .init(type: type, accountID: accessor.accountId, name: accessor.name, permissions: permissions)
    }
}

// MARK: - AS → CXF

extension CXF.Document {
    /// The CXF document of an export: a header. (Linux addition.)
    public init(_ data: ASExportedCredentialData) {
        self = .header(CXF.Header(data))
    }
}

extension CXF.Header {
    /// The CXF header of an export; the timestamp is whole seconds, rounded toward zero. (Linux addition.)
    public init(_ data: ASExportedCredentialData) {
        self.init(
            version: CXF.Version(data.formatVersion),
            exporterRpId: data.exporterRelyingPartyIdentifier,
            exporterDisplayName: data.exporterDisplayName,
            timestamp: UnixTime.seconds(data.timestamp),
            accounts: data.accounts.map { CXF.Account($0) }
        )
    }
}

extension CXF.Account {
    /// The CXF form of an account. (Linux addition.)
    public init(_ account: ASImportableAccount) {
        self.init(
            id: account.id,
            username: account.userName,
            email: account.email,
            fullName: account.fullName,
            collections: account.collections.map { CXF.Collection($0) },
            items: account.items.map { CXF.Item($0) }
        )
    }
}

extension CXF.Collection {
    /// The CXF form of a collection; dates are whole seconds, rounded toward zero, and no sub-collections
    /// are written as an absent `subCollections`. (Linux addition.)
    public init(_ collection: ASImportableCollection) {
        self.init(
            id: collection.id,
            creationAt: collection.created.map(UnixTime.seconds),
            modifiedAt: collection.lastModified.map(UnixTime.seconds),
            title: collection.title,
            subtitle: collection.subtitle,
            items: collection.items.map { CXF.LinkedItem($0) },
            subCollections: collection.subcollections.isEmpty
                ? nil : collection.subcollections.map { CXF.Collection($0) }
        )
    }
}

extension CXF.LinkedItem {
    /// The CXF form of a linked item. (Linux addition.)
    public init(_ linkedItem: ASImportableLinkedItem) {
        self.init(item: linkedItem.item, account: linkedItem.account)
    }
}

extension CXF.Item {
    /// The CXF form of an item. Dates are whole seconds, rounded toward zero; `favorite` is written only
    /// when `true`, `tags` and `extensions` only when not empty. (Linux addition.)
    public init(_ item: ASImportableItem) {
        self.init(
            id: item.id,
            creationAt: item.created.map(UnixTime.seconds),
            modifiedAt: item.lastModified.map(UnixTime.seconds),
            title: item.title,
            subtitle: item.subtitle,
            favorite: item.favorite ? true : nil,
            scope: item.scope.map { CXF.CredentialScope($0) },
            credentials: item.credentials.map { CXF.Credential($0) },
            tags: item.tags.isEmpty ? nil : item.tags,
            extensions: item.extensions.isEmpty ? nil : item.extensions.map { CXF.Extension($0) }
        )
    }
}

extension CXF.CredentialScope {
    /// The CXF form of a scope; each URL is its `absoluteString`. (Linux addition.)
    public init(_ scope: ASImportableCredentialScope) {
        self.init(
            urls: scope.urls.map(\.absoluteString),
            androidApps: scope.androidApps.map { CXF.AndroidAppIdentifier($0) }
        )
    }
}

extension CXF.AndroidAppIdentifier {
    /// The CXF form of an Android app identifier. (Linux addition.)
    public init(_ app: ASImportableCredentialScope.AndroidAppID) {
        self.init(
            bundleId: app.bundleID,
            certificate: app.certificate.map { CXF.AndroidAppCertificateFingerprint($0) },
            name: app.name
        )
    }
}

extension CXF.AndroidAppCertificateFingerprint {
    /// The CXF form of a certificate fingerprint. (Linux addition.)
    public init(_ certificate: ASImportableCredentialScope.AndroidAppCertificationFingerprint) {
        self.init(fingerprint: certificate.fingerprint, hashAlgorithm: .init(rawValue: certificate.hashAlgorithm))
    }
}

extension CXF.EditableField {
    /// The CXF form of an editable field. (Linux addition.)
    public init(_ field: ASImportableEditableField) {
        self.init(id: field.id, fieldType: CXF.FieldType(field.fieldType), value: field.value, label: field.label)
    }
}

extension CXF.FieldType {
    /// The CXF field type of one of Apple's. (Linux addition.)
    public init(_ type: ASImportableEditableField.FieldType) {
        switch type {
        case .string: self = .string
        case .concealedString: self = .concealedString
        case .email: self = .email
        case .number: self = .number
        case .boolean: self = .boolean
        case .date: self = .date
        case .yearMonth: self = .yearMonth
        case .wifiNetworkSecurityType: self = .wifiNetworkSecurityType
        case .countryCode: self = .countryCode
        case .subdivisionCode: self = .subdivisionCode
        }
    }
}

extension CXF.Extension {
    /// The CXF form of an item extension. (Linux addition.)
    public init(_ ext: ASImportableExtension) {
        switch ext {
        case .shared(let shared): self = .shared(CXF.SharedExtension(shared))
        }
    }
}

extension CXF.SharedExtension {
    /// The CXF form of a `shared` extension. (Linux addition.)
    public init(_ shared: ASImportableExtension.Shared) {
        self.init(accessors: shared.accessors.map { CXF.SharedExtension.Accessor($0) })
    }
}

extension CXF.SharedExtension.Accessor {
    /// The CXF form of an accessor. (Linux addition.)
    public init(_ accessor: ASImportableExtension.Shared.SharingAccessor) {
        let type: CXF.SharedExtension.AccessorType =
            switch accessor.type {
            case .user: .user
            case .group: .group
            }
        self.init(
            type: type,
            accountId: accessor.accountID,
            name: accessor.name,
            permissions: accessor.permissions.map { CXF.SharedExtension.Permission(rawValue: $0.rawValue) }
        )
    }
}

extension CXF.Version {
    /// The CXF version object of a format version. (Linux addition.)
    public init(_ version: ASExportedCredentialData.FormatVersion) {
        switch version {
        case .v1: self = .v1_0
        }
    }
}

/// Unix seconds (CXF) to and from `Date`.
enum UnixTime {
    static func date(_ seconds: Int64) -> Date { Date(timeIntervalSince1970: TimeInterval(seconds)) }

    /// Whole seconds, rounded toward zero; out-of-range and non-finite dates are clamped (NaN is 0).
    static func seconds(_ date: Date) -> Int64 {
        let t = date.timeIntervalSince1970.rounded(.towardZero)
        if t.isNaN { return 0 }
        if t >= 9_223_372_036_854_775_807.0 { return .max }  // 2^63 as a Double
        if t < -9_223_372_036_854_775_808.0 { return .min }
        return Int64(t)
    }
}
