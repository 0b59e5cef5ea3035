import struct Foundation.Data

/// The CXF objects, one reader each. Every reader starts with the cursor on the object's `{`.
extension DocumentDecoder {
    static let headerRequired = RequiredMembers(
        [
            (0, "version", "the document's version is unknown, so it cannot be read as CXF 1.x"),
            (1, "exporterRpId", "it is read as empty"),
            (2, "exporterDisplayName", "it is read as empty"),
            (3, "timestamp", "it is read as 0"),
            (4, "accounts", "it is read as an empty list"),
        ],
        errors: [0]
    )
    static let versionRequired = RequiredMembers(
        [
            (0, "major", "the document's version is unknown, so it cannot be read as CXF 1.x"),
            (1, "minor", "0 is assumed"),
        ],
        errors: [0]
    )
    static let accountRequired = RequiredMembers([
        (0, "id", "it is read as empty"),
        (1, "username", "it is read as empty"),
        (2, "email", "it is read as empty"),
        (3, "collections", "it is read as an empty list"),
        (4, "items", "it is read as an empty list"),
    ])
    static let collectionRequired = RequiredMembers([
        (0, "id", "it is read as empty"),
        (1, "title", "it is read as empty"),
        (2, "items", "it is read as an empty list"),
    ])
    static let linkedItemRequired = RequiredMembers([(0, "item", "it is read as empty")])
    static let itemRequired = RequiredMembers([
        (0, "id", "it is read as empty"),
        (1, "title", "it is read as empty"),
        (2, "credentials", "it is read as an empty list"),
    ])
    static let scopeRequired = RequiredMembers([
        (0, "urls", "it is read as an empty list"),
        (1, "androidApps", "it is read as an empty list"),
    ])
    static let androidAppRequired = RequiredMembers([(0, "bundleId", "it is read as empty")])
    static let certificateRequired = RequiredMembers([
        (0, "fingerprint", "it is read as empty"),
        (1, "hashAlg", "sha256 is assumed"),
    ])
    static let fieldObjectRequired = RequiredMembers([
        (0, "value", "it is read as empty"),
        (1, "fieldType", "the type the member calls for is assumed"),
    ])
    static let sharedExtensionRequired = RequiredMembers([(0, "accessors", "it is read as an empty list")])
    static let accessorRequired = RequiredMembers([
        (0, "type", "the accessor is ignored"),
        (1, "accountId", "it is read as empty"),
        (2, "name", "it is read as empty"),
        (3, "permissions", "the accessor is ignored"),
    ])

    mutating func document() throws(ScanFailure) -> CXF.Document {
        // A UTF-8 byte-order mark is not JSON, but editors on some systems write one.
        if s.count >= 3 && s.base[0] == 0xEF && s.base[1] == 0xBB && s.base[2] == 0xBF { s.pos = 3 }
        s.skipWhitespace()
        guard s.kind == .object else {
            if s.kind == .invalid { throw s.syntax("expected a JSON object but found \(s.describeCurrent())") }
            throw ScanFailure.fatal(
                .notCXF,
                offset: s.pos,
                message: "the top level must be an object (a CXF header or account)"
            )
        }
        let document: CXF.Document
        switch try topLevelShape() {
        case .header?: document = .header(try header())
        case .account?: document = .account(try account())
        case nil:
            throw ScanFailure.fatal(
                .notCXF,
                offset: s.pos,
                message: "the object is neither a CXF header (version, accounts, …) nor an account (id, items, …)"
            )
        }
        s.skipWhitespace()
        guard s.pos == s.count else { throw s.syntax("unexpected \(s.describeCurrent()) after the document") }
        return document
    }

    enum Shape { case header, account }

    /// Tells a header from an account by the members only one of them has, whatever their order:
    /// a member only a header has makes it a header (so its version is checked), even beside
    /// members only an account has, which are then the header's unknown members. Order must not
    /// decide: a coder that keeps no order (`JSONDecoder`) would then pick either shape at random,
    /// and a relay that peeks at the version would see another shape than the importer.
    mutating func topLevelShape() throws(ScanFailure) -> Shape? {
        let start = s.pos
        defer {
            s.pos = start
            s.depth = 0
        }
        try s.enterObject()
        var first = true
        var account = false
        while try s.nextKey(&first) {
            if s.keyIs("version") || s.keyIs("accounts") || s.keyIs("exporterRpId") || s.keyIs("exporterDisplayName")
                || s.keyIs("timestamp")
            {
                return .header
            }
            if s.keyIs("items") || s.keyIs("collections") || s.keyIs("username") || s.keyIs("email")
                || s.keyIs("fullName")
            {
                account = true
            }
            try s.skipValue()
        }
        return account ? .account : nil
    }

    mutating func header() throws(ScanFailure) -> CXF.Header {
        let mark = pendingUnknown.count
        var h = CXF.Header(exporterRpId: "", exporterDisplayName: "", timestamp: 0, accounts: [])
        // The version is never assumed: a document that does not say which major version it is
        // keeps major 0, which no reader accepts.
        h.version = .unknown
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("version") {
                guard try claim(0, &seen) else { continue }
                if let v = try object("version", { d throws(ScanFailure) in try d.version() }) { h.version = v }
            } else if s.keyIs("exporterRpId") {
                guard try claim(1, &seen) else { continue }
                if let v = try stringValue() { h.exporterRpId = v }
            } else if s.keyIs("exporterDisplayName") {
                guard try claim(2, &seen) else { continue }
                if let v = try stringValue() { h.exporterDisplayName = v }
            } else if s.keyIs("timestamp") {
                guard try claim(3, &seen) else { continue }
                if let v = try int64Value() { h.timestamp = v }
            } else if s.keyIs("accounts") {
                guard try claim(4, &seen) else { continue }
                if let v = try objectArray("accounts", { d throws(ScanFailure) in try d.account() }) { h.accounts = v }
            } else {
                try keepUnknown()
            }
        }
        reportMissing(seen, Self.headerRequired)
        h.unknownMembers = takeUnknown(since: mark)
        return h
    }

    mutating func version() throws(ScanFailure) -> CXF.Version {
        let mark = pendingUnknown.count
        var v = CXF.Version.unknown
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("major") {
                guard try claim(0, &seen) else { continue }
                if let n = try unsignedValue(UInt32.self) { v.major = n }
            } else if s.keyIs("minor") {
                guard try claim(1, &seen) else { continue }
                if let n = try unsignedValue(UInt32.self) { v.minor = n }
            } else {
                try keepUnknown()
            }
        }
        reportMissing(seen, Self.versionRequired)
        v.unknownMembers = takeUnknown(since: mark)
        return v
    }

    mutating func account() throws(ScanFailure) -> CXF.Account {
        let mark = pendingUnknown.count
        var a = CXF.Account(id: Data())
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("id") {
                guard try claim(0, &seen) else { continue }
                if let v = try bytesValue(isID: true) { a.id = v }
            } else if s.keyIs("username") {
                guard try claim(1, &seen) else { continue }
                if let v = try stringValue() { a.username = v }
            } else if s.keyIs("email") {
                guard try claim(2, &seen) else { continue }
                if let v = try stringValue() { a.email = v }
            } else if s.keyIs("collections") {
                guard try claim(3, &seen) else { continue }
                if let v = try objectArray("collections", { d throws(ScanFailure) in try d.collection() }) {
                    a.collections = v
                }
            } else if s.keyIs("items") {
                guard try claim(4, &seen) else { continue }
                if let v = try objectArray("items", { d throws(ScanFailure) in try d.item() }) { a.items = v }
            } else if s.keyIs("fullName") {
                guard try claim(5, &seen) else { continue }
                a.fullName = try stringValue()
            } else if s.keyIs("extensions") {
                guard try claim(6, &seen) else { continue }
                a.extensions = try extensions()
            } else {
                try keepUnknown()
            }
        }
        reportMissing(seen, Self.accountRequired)
        a.unknownMembers = takeUnknown(since: mark)
        return a
    }

    mutating func collection() throws(ScanFailure) -> CXF.Collection {
        let mark = pendingUnknown.count
        var c = CXF.Collection(id: Data(), title: "")
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("id") {
                guard try claim(0, &seen) else { continue }
                if let v = try bytesValue(isID: true) { c.id = v }
            } else if s.keyIs("title") {
                guard try claim(1, &seen) else { continue }
                if let v = try stringValue() { c.title = v }
            } else if s.keyIs("items") {
                guard try claim(2, &seen) else { continue }
                if let v = try objectArray("items", { d throws(ScanFailure) in try d.linkedItem() }) { c.items = v }
            } else if s.keyIs("creationAt") {
                guard try claim(3, &seen) else { continue }
                c.creationAt = try int64Value()
            } else if s.keyIs("modifiedAt") {
                guard try claim(4, &seen) else { continue }
                c.modifiedAt = try int64Value()
            } else if s.keyIs("subtitle") {
                guard try claim(5, &seen) else { continue }
                c.subtitle = try stringValue()
            } else if s.keyIs("subCollections") {
                guard try claim(6, &seen) else { continue }
                c.subCollections = try objectArray("subCollections", { d throws(ScanFailure) in try d.collection() })
            } else if s.keyIs("extensions") {
                guard try claim(7, &seen) else { continue }
                c.extensions = try extensions()
            } else {
                try keepUnknown()
            }
        }
        reportMissing(seen, Self.collectionRequired)
        c.unknownMembers = takeUnknown(since: mark)
        return c
    }

    mutating func linkedItem() throws(ScanFailure) -> CXF.LinkedItem {
        let mark = pendingUnknown.count
        var l = CXF.LinkedItem(item: Data())
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("item") {
                guard try claim(0, &seen) else { continue }
                if let v = try bytesValue(isID: true) { l.item = v }
            } else if s.keyIs("account") {
                guard try claim(1, &seen) else { continue }
                l.account = try bytesValue(isID: true)
            } else {
                try keepUnknown()
            }
        }
        reportMissing(seen, Self.linkedItemRequired)
        l.unknownMembers = takeUnknown(since: mark)
        return l
    }

    mutating func item() throws(ScanFailure) -> CXF.Item {
        let mark = pendingUnknown.count
        var item = CXF.Item(id: Data(), title: "")
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("id") {
                guard try claim(0, &seen) else { continue }
                if let v = try bytesValue(isID: true) { item.id = v }
            } else if s.keyIs("title") {
                guard try claim(1, &seen) else { continue }
                if let v = try stringValue() { item.title = v }
            } else if s.keyIs("credentials") {
                guard try claim(2, &seen) else { continue }
                let credentials = try objectArray(
                    "credentials",
                    { d throws(ScanFailure) in try d.credential() },
                    keep: { d, value in
                        d.report(
                            .error,
                            .malformedCredential,
                            "a credential must be an object but is \(value.kindDescription); it is kept as it was"
                        )
                        return .unrecognized(CXF.UnrecognizedCredential(object: value, reason: "not an object"))
                    }
                )
                if let credentials { item.credentials = credentials }
            } else if s.keyIs("creationAt") {
                guard try claim(3, &seen) else { continue }
                item.creationAt = try int64Value()
            } else if s.keyIs("modifiedAt") {
                guard try claim(4, &seen) else { continue }
                item.modifiedAt = try int64Value()
            } else if s.keyIs("subtitle") {
                guard try claim(5, &seen) else { continue }
                item.subtitle = try stringValue()
            } else if s.keyIs("favorite") {
                guard try claim(6, &seen) else { continue }
                item.favorite = try boolValue()
            } else if s.keyIs("scope") {
                guard try claim(7, &seen) else { continue }
                item.scope = try object("scope", { d throws(ScanFailure) in try d.scope() })
            } else if s.keyIs("tags") {
                guard try claim(8, &seen) else { continue }
                item.tags = try stringArray()
            } else if s.keyIs("extensions") {
                guard try claim(9, &seen) else { continue }
                item.extensions = try extensions()
            } else {
                try keepUnknown()
            }
        }
        reportMissing(seen, Self.itemRequired)
        item.unknownMembers = takeUnknown(since: mark)
        return item
    }

    mutating func scope() throws(ScanFailure) -> CXF.CredentialScope {
        let mark = pendingUnknown.count
        var scope = CXF.CredentialScope()
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("urls") {
                guard try claim(0, &seen) else { continue }
                if let v = try stringArray() { scope.urls = v }
            } else if s.keyIs("androidApps") {
                guard try claim(1, &seen) else { continue }
                if let v = try objectArray("androidApps", { d throws(ScanFailure) in try d.androidApp() }) {
                    scope.androidApps = v
                }
            } else {
                try keepUnknown()
            }
        }
        reportMissing(seen, Self.scopeRequired)
        scope.unknownMembers = takeUnknown(since: mark)
        return scope
    }

    mutating func androidApp() throws(ScanFailure) -> CXF.AndroidAppIdentifier {
        let mark = pendingUnknown.count
        var app = CXF.AndroidAppIdentifier(bundleId: "")
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("bundleId") {
                guard try claim(0, &seen) else { continue }
                if let v = try stringValue() { app.bundleId = v }
            } else if s.keyIs("certificate") {
                guard try claim(1, &seen) else { continue }
                app.certificate = try object("certificate", { d throws(ScanFailure) in try d.certificate() })
            } else if s.keyIs("name") {
                guard try claim(2, &seen) else { continue }
                app.name = try stringValue()
            } else {
                try keepUnknown()
            }
        }
        reportMissing(seen, Self.androidAppRequired)
        app.unknownMembers = takeUnknown(since: mark)
        return app
    }

    mutating func certificate() throws(ScanFailure) -> CXF.AndroidAppCertificateFingerprint {
        let mark = pendingUnknown.count
        var cert = CXF.AndroidAppCertificateFingerprint(fingerprint: Data(), hashAlgorithm: .sha256)
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("fingerprint") {
                guard try claim(0, &seen) else { continue }
                if let v = try bytesValue(isID: false) { cert.fingerprint = v }
            } else if s.keyIs("hashAlg") {
                guard try claim(1, &seen) else { continue }
                if let v = try stringValue() { cert.hashAlgorithm = .init(rawValue: v) }
            } else {
                try keepUnknown()
            }
        }
        reportMissing(seen, Self.certificateRequired)
        cert.unknownMembers = takeUnknown(since: mark)
        return cert
    }

    // MARK: Fields

    /// An editable field member. A bare string, number or boolean where the field object belongs is
    /// read as a field of the expected type, with a warning.
    mutating func field(_ key: StaticString, expected: CXF.FieldType) throws(ScanFailure) -> CXF.EditableField? {
        switch s.kind {
        case .object:
            path.append(.key(key))
            defer { path.removeLast() }
            return try fieldObject(expected: expected)
        case .string, .number, .bool:
            let value: String
            if s.kind == .bool {
                value = try s.scanBool() ? "true" : "false"
            } else if s.kind == .number {
                value = s.text(try s.scanNumber())
            } else {
                guard let v = try stringValue() else { return nil }
                value = v
            }
            try spend(Self.fieldCost)
            report(
                .warning,
                .coercedValue,
                "'\(key)' should be an editable field object but is a bare value; read as a \(expected.rawValue) field",
                member: key.description
            )
            return CXF.EditableField(fieldType: expected, value: value)
        case .null:
            try s.scanNull()
            return nil
        default:
            try keepWrongType(expected: "an editable field object")
            return nil
        }
    }

    /// What one editable field costs besides its strings: its copy-on-write storage object.
    static let fieldCost = 128

    mutating func fieldObject(expected: CXF.FieldType) throws(ScanFailure) -> CXF.EditableField {
        try spend(Self.fieldCost)
        let mark = pendingUnknown.count
        var f = CXF.EditableField(fieldType: expected, value: "")
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("value") {
                guard try claim(0, &seen) else { continue }
                switch s.kind {
                case .bool:
                    // Not quoted back, as with numbers: the field may hold a secret.
                    f.value = try s.scanBool() ? "true" : "false"
                    report(
                        .warning,
                        .coercedValue,
                        "'value' should be text but is a JSON boolean; read as its text",
                        member: "value"
                    )
                default:
                    if let v = try stringValue() { f.value = v }
                }
            } else if s.keyIs("fieldType") {
                guard try claim(1, &seen) else { continue }
                if let v = try fieldType() { f.fieldType = v }
            } else if s.keyIs("id") {
                guard try claim(2, &seen) else { continue }
                f.id = try bytesValue(isID: true)
            } else if s.keyIs("label") {
                guard try claim(3, &seen) else { continue }
                f.label = try stringValue()
            } else if s.keyIs("extensions") {
                guard try claim(4, &seen) else { continue }
                f.extensions = try extensions()
            } else {
                try keepUnknown()
            }
        }
        reportMissing(seen, Self.fieldObjectRequired)
        f.unknownMembers = takeUnknown(since: mark)
        return f
    }

    /// A `fieldType`, matched on the raw bytes: this runs for every field of a document.
    mutating func fieldType() throws(ScanFailure) -> CXF.FieldType? {
        guard s.kind == .string else {
            if s.kind == .null {
                try s.scanNull()
                return nil
            }
            try keepWrongType(expected: "a string")
            return nil
        }
        let start = s.pos
        let span = try s.scanString()
        if !span.escaped {
            let p = s.base + span.start
            switch span.end - span.start {
            case 6 where memcmpEqual(p, "string"): return .string
            case 16 where memcmpEqual(p, "concealed-string"): return .concealedString
            case 5 where memcmpEqual(p, "email"): return .email
            case 6 where memcmpEqual(p, "number"): return .number
            case 7 where memcmpEqual(p, "boolean"): return .boolean
            case 4 where memcmpEqual(p, "date"): return .date
            case 10 where memcmpEqual(p, "year-month"): return .yearMonth
            case 26 where memcmpEqual(p, "wifi-network-security-type"): return .wifiNetworkSecurityType
            case 16 where memcmpEqual(p, "subdivision-code"): return .subdivisionCode
            case 12 where memcmpEqual(p, "country-code"): return .countryCode
            default: break
            }
        }
        s.pos = start
        guard let name = try stringValue() else { return nil }
        return CXF.FieldType(rawValue: name)
    }

    // MARK: Extensions

    mutating func extensions() throws(ScanFailure) -> [CXF.Extension]? {
        try objectArray(
            "extensions",
            { d throws(ScanFailure) in try d.extensionObject() },
            keep: { d, value in
                d.report(
                    .warning,
                    .wrongType,
                    "an extension must be an object but is \(value.kindDescription); it is kept as it was"
                )
                return .unknown(name: "", object: value)
            }
        )
    }

    mutating func extensionObject() throws(ScanFailure) -> CXF.Extension {
        let name = try peekString("name")
        if name == CXF.SharedExtension.name { return .shared(try sharedExtension()) }
        let object = try jsonValue(member: nil)
        if name == nil {
            report(.warning, .missingMember, "an extension has no 'name'; it is kept as it was")
        }
        return .unknown(name: name ?? "", object: object)
    }

    mutating func sharedExtension() throws(ScanFailure) -> CXF.SharedExtension {
        let mark = pendingUnknown.count
        var shared = CXF.SharedExtension(accessors: [])
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("name") {
                try s.skipValue()
            } else if s.keyIs("accessors") {
                guard try claim(0, &seen) else { continue }
                if let v = try objectArray("accessors", { d throws(ScanFailure) in try d.accessor() }) {
                    shared.accessors = v
                }
            } else {
                try keepUnknown()
            }
        }
        reportMissing(seen, Self.sharedExtensionRequired)
        shared.unknownMembers = takeUnknown(since: mark)
        return shared
    }

    mutating func accessor() throws(ScanFailure) -> CXF.SharedExtension.Accessor {
        let mark = pendingUnknown.count
        // The type's stand-in is no type at all: an accessor is never granted by default.
        var a = CXF.SharedExtension.Accessor(type: .unknown(""), accountId: Data(), name: "", permissions: [])
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("type") {
                guard try claim(0, &seen) else { continue }
                if let v = try stringValue() { a.type = .init(rawValue: v) }
            } else if s.keyIs("accountId") {
                guard try claim(1, &seen) else { continue }
                if let v = try bytesValue(isID: true) { a.accountId = v }
            } else if s.keyIs("name") {
                guard try claim(2, &seen) else { continue }
                if let v = try stringValue() { a.name = v }
            } else if s.keyIs("permissions") {
                guard try claim(3, &seen) else { continue }
                if let v = try stringArray() { a.permissions = v.map(CXF.SharedExtension.Permission.init(rawValue:)) }
            } else {
                try keepUnknown()
            }
        }
        reportMissing(seen, Self.accessorRequired)
        a.unknownMembers = takeUnknown(since: mark)
        return a
    }
}
