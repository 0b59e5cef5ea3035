import struct Foundation.Data

extension CXF {
    /// How ``Encoder`` lays out its output.
    public struct EncodingOptions: Hashable, Sendable {
        /// Indent with two spaces and a newline per member. The default is the compact canonical form.
        public var prettyPrinted: Bool

        /// Options; the default is the compact canonical form.
        public init(prettyPrinted: Bool = false) {
            self.prettyPrinted = prettyPrinted
        }
    }

    /// The canonical CXF encoder.
    ///
    /// The output is a function of the model alone: members in the order the specification lists
    /// them, then unknown members in the order they were read; absent optionals omitted; binary values as unpadded
    /// base64url; timestamps as integer seconds; no insignificant whitespace (unless
    /// ``EncodingOptions/prettyPrinted``). Decoding the output gives back an equal model.
    public struct Encoder: Sendable {
        /// How the output is laid out.
        public var options: EncodingOptions

        /// An encoder; compact output unless `options` asks for pretty printing.
        public init(options: EncodingOptions = EncodingOptions()) {
            self.options = options
        }

        /// The document as UTF-8 JSON bytes.
        public func encode(_ document: Document) -> [UInt8] {
            var w = JSONWriter(pretty: options.prettyPrinted, capacity: 1 << 16)
            switch document {
            case .header(let header): w.header(header)
            case .account(let account): w.account(account)
            }
            if options.prettyPrinted { w.out.append(0x0A) }
            return w.out
        }

        /// `value` as UTF-8 JSON: members in the order given, numbers as their text, strings
        /// escaped as RFC 8259 requires and nothing more (quote, backslash, and the controls
        /// below U+0020 — `\b \f \n \r \t` short, the rest `\u00xx`), which is also RFC 8785's
        /// rule: a value whose members are sorted comes out as its JCS serialization when compact.
        package func encodeJSON(_ value: JSONValue) -> [UInt8] {
            var w = JSONWriter(pretty: options.prettyPrinted, capacity: 1024)
            w.value(value)
            if options.prettyPrinted { w.out.append(0x0A) }
            return w.out
        }

        /// The document as UTF-8 JSON `Data`.
        public func encodeData(_ document: Document) -> Data { Data(encode(document)) }
    }
}

extension CXF.Item {
    /// The item on its own in the canonical encoding (for a store that keeps items one by one);
    /// `CXF.Decoder().decode(.item, from:)` reads it back equal.
    package var json: [UInt8] {
        var out: [UInt8] = []
        appendJSON(to: &out)
        return out
    }

    /// Appends ``json`` to `buffer`: many items written into one message without an array each
    /// (a writer's own buffer starts at 4 KiB, which for 100 000 items kept apart was 400 MB).
    package func appendJSON(to buffer: inout [UInt8]) {
        var w = JSONWriter(pretty: false, capacity: 0)
        swap(&w.out, &buffer)
        w.item(self)
        swap(&w.out, &buffer)
    }
}

extension JSONWriter {
    mutating func header(_ h: CXF.Header) {
        beginObject()
        if !replaces("version", standIn: h.version == .unknown, in: h.unknownMembers) {
            key("version")
            version(h.version)
        }
        if !replaces("exporterRpId", standIn: h.exporterRpId.isEmpty, in: h.unknownMembers) {
            key("exporterRpId")
            string(h.exporterRpId)
        }
        if !replaces("exporterDisplayName", standIn: h.exporterDisplayName.isEmpty, in: h.unknownMembers) {
            key("exporterDisplayName")
            string(h.exporterDisplayName)
        }
        if !replaces("timestamp", standIn: h.timestamp == 0, in: h.unknownMembers) {
            key("timestamp")
            int(h.timestamp)
        }
        if !replaces("accounts", standIn: h.accounts.isEmpty, in: h.unknownMembers) {
            key("accounts")
            array(h.accounts) { $0.account($1) }
        }
        unknownMembers(h.unknownMembers)
        endObject()
    }

    mutating func version(_ v: CXF.Version) {
        beginObject()
        if !replaces("major", standIn: v.major == 0, in: v.unknownMembers) {
            key("major")
            int(Int64(v.major))
        }
        if !replaces("minor", standIn: v.minor == 0, in: v.unknownMembers) {
            key("minor")
            int(Int64(v.minor))
        }
        unknownMembers(v.unknownMembers)
        endObject()
    }

    @inline(__always) mutating func array<T>(_ elements: [T], _ body: (inout JSONWriter, T) -> Void) {
        beginArray()
        for e in elements {
            element()
            body(&self, e)
        }
        endArray()
    }

    mutating func account(_ a: CXF.Account) {
        beginObject()
        if !replaces("id", standIn: a.id.isEmpty, in: a.unknownMembers) {
            key("id")
            bytes(a.id)
        }
        if !replaces("username", standIn: a.username.isEmpty, in: a.unknownMembers) {
            key("username")
            string(a.username)
        }
        if !replaces("email", standIn: a.email.isEmpty, in: a.unknownMembers) {
            key("email")
            string(a.email)
        }
        optional("fullName", a.fullName, unknown: a.unknownMembers) { $0.string($1) }
        if !replaces("collections", standIn: a.collections.isEmpty, in: a.unknownMembers) {
            key("collections")
            array(a.collections) { $0.collection($1) }
        }
        if !replaces("items", standIn: a.items.isEmpty, in: a.unknownMembers) {
            key("items")
            array(a.items) { $0.item($1) }
        }
        extensions(a.extensions, unknown: a.unknownMembers)
        unknownMembers(a.unknownMembers)
        endObject()
    }

    mutating func collection(_ c: CXF.Collection) {
        beginObject()
        if !replaces("id", standIn: c.id.isEmpty, in: c.unknownMembers) {
            key("id")
            bytes(c.id)
        }
        optional("creationAt", c.creationAt, unknown: c.unknownMembers) { $0.int($1) }
        optional("modifiedAt", c.modifiedAt, unknown: c.unknownMembers) { $0.int($1) }
        if !replaces("title", standIn: c.title.isEmpty, in: c.unknownMembers) {
            key("title")
            string(c.title)
        }
        optional("subtitle", c.subtitle, unknown: c.unknownMembers) { $0.string($1) }
        if !replaces("items", standIn: c.items.isEmpty, in: c.unknownMembers) {
            key("items")
            array(c.items) { $0.linkedItem($1) }
        }
        optional("subCollections", c.subCollections, unknown: c.unknownMembers) { $0.array($1) { $0.collection($1) } }
        extensions(c.extensions, unknown: c.unknownMembers)
        unknownMembers(c.unknownMembers)
        endObject()
    }

    mutating func linkedItem(_ l: CXF.LinkedItem) {
        beginObject()
        if !replaces("item", standIn: l.item.isEmpty, in: l.unknownMembers) {
            key("item")
            bytes(l.item)
        }
        optional("account", l.account, unknown: l.unknownMembers) { $0.bytes($1) }
        unknownMembers(l.unknownMembers)
        endObject()
    }

    mutating func item(_ item: CXF.Item) {
        beginObject()
        if !replaces("id", standIn: item.id.isEmpty, in: item.unknownMembers) {
            key("id")
            bytes(item.id)
        }
        optional("creationAt", item.creationAt, unknown: item.unknownMembers) { $0.int($1) }
        optional("modifiedAt", item.modifiedAt, unknown: item.unknownMembers) { $0.int($1) }
        if !replaces("title", standIn: item.title.isEmpty, in: item.unknownMembers) {
            key("title")
            string(item.title)
        }
        optional("subtitle", item.subtitle, unknown: item.unknownMembers) { $0.string($1) }
        optional("favorite", item.favorite, unknown: item.unknownMembers) { $0.bool($1) }
        optional("scope", item.scope, unknown: item.unknownMembers) { $0.scope($1) }
        if !replaces("credentials", standIn: item.credentials.isEmpty, in: item.unknownMembers) {
            key("credentials")
            array(item.credentials) { $0.credential($1) }
        }
        optional("tags", item.tags, unknown: item.unknownMembers) { $0.array($1) { $0.string($1) } }
        extensions(item.extensions, unknown: item.unknownMembers)
        unknownMembers(item.unknownMembers)
        endObject()
    }

    mutating func scope(_ scope: CXF.CredentialScope) {
        beginObject()
        if !replaces("urls", standIn: scope.urls.isEmpty, in: scope.unknownMembers) {
            key("urls")
            array(scope.urls) { $0.string($1) }
        }
        if !replaces("androidApps", standIn: scope.androidApps.isEmpty, in: scope.unknownMembers) {
            key("androidApps")
            array(scope.androidApps) { $0.androidApp($1) }
        }
        unknownMembers(scope.unknownMembers)
        endObject()
    }

    mutating func androidApp(_ app: CXF.AndroidAppIdentifier) {
        beginObject()
        if !replaces("bundleId", standIn: app.bundleId.isEmpty, in: app.unknownMembers) {
            key("bundleId")
            string(app.bundleId)
        }
        optional("certificate", app.certificate, unknown: app.unknownMembers) { $0.certificate($1) }
        optional("name", app.name, unknown: app.unknownMembers) { $0.string($1) }
        unknownMembers(app.unknownMembers)
        endObject()
    }

    mutating func certificate(_ cert: CXF.AndroidAppCertificateFingerprint) {
        beginObject()
        if !replaces("fingerprint", standIn: cert.fingerprint.isEmpty, in: cert.unknownMembers) {
            key("fingerprint")
            bytes(cert.fingerprint)
        }
        if !replaces("hashAlg", standIn: cert.hashAlgorithm == .sha256, in: cert.unknownMembers) {
            key("hashAlg")
            string(cert.hashAlgorithm.rawValue)
        }
        unknownMembers(cert.unknownMembers)
        endObject()
    }

    mutating func field(_ f: CXF.EditableField) {
        beginObject()
        optional("id", f.id, unknown: f.unknownMembers) { $0.bytes($1) }
        key("fieldType")
        string(f.fieldType.rawValue)
        key("value")
        string(f.value)
        optional("label", f.label, unknown: f.unknownMembers) { $0.string($1) }
        extensions(f.extensions, unknown: f.unknownMembers)
        unknownMembers(f.unknownMembers)
        endObject()
    }

    mutating func extensions(_ extensions: [CXF.Extension]?, unknown: [JSONMember]) {
        optional("extensions", extensions, unknown: unknown) { $0.extensionArray($1) }
    }

    mutating func extensionArray(_ extensions: [CXF.Extension]) {
        array(extensions) { $0.extensionObject($1) }
    }

    mutating func extensionObject(_ ext: CXF.Extension) {
        switch ext {
        case .unknown(_, let object): value(object)
        case .shared(let shared): sharedExtension(shared)
        }
    }

    mutating func sharedExtension(_ shared: CXF.SharedExtension) {
        beginObject()
        key("name")
        string(CXF.SharedExtension.name)
        if !replaces("accessors", standIn: shared.accessors.isEmpty, in: shared.unknownMembers) {
            key("accessors")
            array(shared.accessors) { $0.accessor($1) }
        }
        unknownMembers(shared.unknownMembers)
        endObject()
    }

    mutating func accessor(_ a: CXF.SharedExtension.Accessor) {
        beginObject()
        if !replaces("type", standIn: a.type.rawValue.isEmpty, in: a.unknownMembers) {
            key("type")
            string(a.type.rawValue)
        }
        if !replaces("accountId", standIn: a.accountId.isEmpty, in: a.unknownMembers) {
            key("accountId")
            bytes(a.accountId)
        }
        if !replaces("name", standIn: a.name.isEmpty, in: a.unknownMembers) {
            key("name")
            string(a.name)
        }
        if !replaces("permissions", standIn: a.permissions.isEmpty, in: a.unknownMembers) {
            key("permissions")
            array(a.permissions) { $0.string($1.rawValue) }
        }
        unknownMembers(a.unknownMembers)
        endObject()
    }

    // MARK: Credentials

    mutating func credential(_ credential: CXF.Credential) {
        switch credential {
        case .basicAuth(let c): schemaCredential(c)
        case .passkey(let c): passkey(c)
        case .totp(let c): totp(c)
        case .note(let c): schemaCredential(c)
        case .file(let c): file(c)
        case .creditCard(let c): schemaCredential(c)
        case .address(let c): schemaCredential(c)
        case .apiKey(let c): schemaCredential(c)
        case .driversLicense(let c): schemaCredential(c)
        case .identityDocument(let c): schemaCredential(c)
        case .passport(let c): schemaCredential(c)
        case .personName(let c): schemaCredential(c)
        case .generatedPassword(let c): schemaCredential(c)
        case .sshKey(let c): schemaCredential(c)
        case .wifi(let c): schemaCredential(c)
        case .customFields(let c): customFields(c)
        case .itemReference(let c): itemReference(c)
        case .unrecognized(let c): value(c.object)
        }
    }

    @inline(__always) private mutating func typeMember(_ type: StaticString) {
        beginObject()
        key("type")
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: type.utf8Start, count: type.utf8CodeUnitCount))
        out.append(UInt8(ascii: "\""))
    }

    mutating func schemaCredential<C: SchemaCredential>(_ c: C) {
        typeMember(C.type)
        for member in C.members {
            switch member.kind {
            case .field(let keyPath, _):
                if let f = c[keyPath: keyPath] {
                    key(member.key)
                    field(f)
                }
            case .requiredField(let keyPath, _):
                key(member.key)
                field(c[keyPath: keyPath])
            case .string(let keyPath):
                if let s = c[keyPath: keyPath] {
                    key(member.key)
                    string(s)
                }
            case .requiredString(let keyPath):
                key(member.key)
                string(c[keyPath: keyPath])
            case .requiredBytes(let keyPath):
                key(member.key)
                bytes(c[keyPath: keyPath])
            }
        }
        unknownMembers(c.unknownMembers)
        endObject()
    }

    mutating func passkey(_ p: CXF.Passkey) {
        typeMember("passkey")
        key("credentialId")
        bytes(p.credentialId)
        key("rpId")
        string(p.rpId)
        key("username")
        string(p.username)
        key("userDisplayName")
        string(p.userDisplayName)
        key("userHandle")
        bytes(p.userHandle)
        key("key")
        bytes(p.key)
        if let e = p.fido2Extensions {
            key("fido2Extensions")
            fido2Extensions(e)
        }
        unknownMembers(p.unknownMembers)
        endObject()
    }

    mutating func fido2Extensions(_ e: CXF.FIDO2Extensions) {
        beginObject()
        if let h = e.hmacCredentials {
            key("hmacCredentials")
            hmacCredentials(h)
        }
        optional("credBlob", e.credBlob, unknown: e.unknownMembers) { $0.bytes($1) }
        if let large = e.largeBlob {
            key("largeBlob")
            largeBlob(large)
        }
        optional("payments", e.payments, unknown: e.unknownMembers) { $0.bool($1) }
        unknownMembers(e.unknownMembers)
        endObject()
    }

    mutating func hmacCredentials(_ h: CXF.FIDO2Extensions.HMACCredentials) {
        beginObject()
        key("algorithm")
        string(h.algorithm)
        key("credWithUV")
        bytes(h.credWithUV)
        key("credWithoutUV")
        bytes(h.credWithoutUV)
        unknownMembers(h.unknownMembers)
        endObject()
    }

    mutating func largeBlob(_ large: CXF.FIDO2Extensions.LargeBlob) {
        beginObject()
        key("uncompressedSize")
        uint(large.uncompressedSize)
        key("data")
        bytes(large.data)
        unknownMembers(large.unknownMembers)
        endObject()
    }

    mutating func totp(_ t: CXF.TOTP) {
        typeMember("totp")
        key("secret")
        string(t.secret)
        key("period")
        uint(UInt64(t.period))
        key("digits")
        uint(UInt64(t.digits))
        optional("username", t.username, unknown: t.unknownMembers) { $0.string($1) }
        key("algorithm")
        string(t.algorithm.rawValue)
        optional("issuer", t.issuer, unknown: t.unknownMembers) { $0.string($1) }
        unknownMembers(t.unknownMembers)
        endObject()
    }

    mutating func file(_ f: CXF.File) {
        typeMember("file")
        key("id")
        bytes(f.id)
        key("name")
        string(f.name)
        key("decryptedSize")
        uint(f.decryptedSize)
        key("integrityHash")
        bytes(f.integrityHash)
        unknownMembers(f.unknownMembers)
        endObject()
    }

    mutating func customFields(_ c: CXF.CustomFields) {
        typeMember("custom-fields")
        optional("id", c.id, unknown: c.unknownMembers) { $0.bytes($1) }
        optional("label", c.label, unknown: c.unknownMembers) { $0.string($1) }
        key("fields")
        array(c.fields) { $0.field($1) }
        extensions(c.extensions, unknown: c.unknownMembers)
        unknownMembers(c.unknownMembers)
        endObject()
    }

    mutating func itemReference(_ r: CXF.ItemReference) {
        typeMember("item-reference")
        key("reference")
        linkedItem(r.reference)
        unknownMembers(r.unknownMembers)
        endObject()
    }
}
