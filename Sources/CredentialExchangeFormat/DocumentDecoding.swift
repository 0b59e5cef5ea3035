import struct Foundation.Data

/// The CXF objects, one reader each. Every reader starts with the cursor on the object's `{`.
extension DocumentDecoder {
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
        case .header?: document = .header(try object())
        case .account?: document = .account(try object())
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

    /// The bit of an object's discriminator in its `seen` mask; members take the bits below it.
    static let discriminatorBit = 63

    /// An object read by its ``SchemaObject/members(_:_:)``, starting from `start` (its blank by
    /// default).
    ///
    /// A member that repeats, or whose value cannot be read as its type, is kept verbatim among the
    /// unknown members with a finding (in a credential, the credential is kept whole instead). A
    /// required member that is absent is reported with what its stand-in means — in a credential, a
    /// null counts as absent — or, for one the object cannot do without, keeps the credential whole.
    mutating func object<O: SchemaObject>(_ start: consuming O = O.blank) throws(ScanFailure) -> O {
        let schema = O.schema
        let discriminator = schema.discriminator
        let mark = pendingUnknown.count
        var object = start
        var reader = MemberReader()
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if let discriminator, s.keyIs(discriminator.key) {
                if try claim(Self.discriminatorBit, &reader.seen) { try s.skipValue() }
                continue
            }
            reader.index = 0
            reader.matched = false
            try object.members(&reader, &self)
            if !reader.matched { try keepUnknown() }
        }
        let present = inCredential ? reader.have : reader.seen
        let required = schema.requiredMask
        if present & required != required {
            try reportMissing(present, reader.have, schema.members)
        }
        object.unknownMembers = takeUnknown(since: mark)
        return object
    }

    /// Refuses the object for the first member it cannot do without, else reports each absent
    /// member whose stand-in serves.
    private mutating func reportMissing(
        _ present: UInt64,
        _ have: UInt64,
        _ members: [ObjectSchema.Member]
    ) throws(ScanFailure) {
        for (index, member) in members.enumerated() where have & (1 << index) == 0 {
            guard case .refused? = member.missing else { continue }
            // A nested part of a credential says which: "has 'largeBlob' that lacks …".
            var within = ""
            if case .key(let key)? = path.last { within = "has '\(key)' that " }
            throw .malformed("\(within)lacks a usable '\(member.key)'")
        }
        for (index, member) in members.enumerated() where present & (1 << index) == 0 {
            guard case .reported(let severity, let consequence)? = member.missing else { continue }
            report(severity, .missingMember, "the required member '\(member.key)' is missing; \(consequence)")
        }
    }

    /// Reads the member that the key at the cursor names, if the object has one: each call of a
    /// ``SchemaObject/members(_:_:)`` walk is one member, the bits of `seen` and `have` its index.
    struct MemberReader: MemberVisitor {
        typealias Context = DocumentDecoder
        typealias VisitError = ScanFailure
        /// The index of the member being visited.
        var index = 0
        /// Whether a member of this walk had the key.
        var matched = false
        /// The members met, repeats excepted.
        var seen: UInt64 = 0
        /// The members that gave a usable value.
        var have: UInt64 = 0

        @inline(__always) mutating func required<C: ValueCoder>(
            _ key: StaticString,
            _ value: inout C.Value,
            _ coder: C,
            _ missing: ObjectSchema.Missing,
            _ d: inout DocumentDecoder
        ) throws(ScanFailure) {
            defer { index += 1 }
            guard !matched, d.s.keyIs(key) else { return }
            matched = true
            guard try d.claim(index, &seen), let read = try coder.read(&d, key) else { return }
            value = read
            have |= 1 << index
        }

        @inline(__always) mutating func optional<C: ValueCoder>(
            _ key: StaticString,
            _ value: inout C.Value?,
            _ coder: C,
            _ d: inout DocumentDecoder
        ) throws(ScanFailure) {
            defer { index += 1 }
            guard !matched, d.s.keyIs(key) else { return }
            matched = true
            guard try d.claim(index, &seen) else { return }
            value = try coder.read(&d, key)
            if value != nil { have |= 1 << index }
        }
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
        return CXF.EditableField(try object(CXF.EditableField.Members(fieldType: expected, value: "")))
    }

    /// A field's `value`: text, or a boolean read as its text.
    mutating func fieldValue() throws(ScanFailure) -> String? {
        guard s.kind == .bool else { return try stringValue() }
        // Not quoted back, as with numbers: the field may hold a secret.
        let value = try s.scanBool() ? "true" : "false"
        report(
            .warning,
            .coercedValue,
            "'value' should be text but is a JSON boolean; read as its text",
            member: "value"
        )
        return value
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
        if name == CXF.SharedExtension.name { return .shared(try object()) }
        let object = try jsonValue(member: nil)
        if name == nil {
            report(.warning, .missingMember, "an extension has no 'name'; it is kept as it was")
        }
        return .unknown(name: name ?? "", object: object)
    }
}
