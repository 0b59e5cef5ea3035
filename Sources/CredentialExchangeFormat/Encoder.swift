import struct Foundation.Data

extension CXF {
    public struct EncodingOptions: Hashable, Sendable {
        /// Indent with two spaces and a newline per member. The default is the compact canonical form.
        public var prettyPrinted: Bool

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
        public var options: EncodingOptions

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

        /// The document as UTF-8 JSON `Data`.
        public func encodeData(_ document: Document) -> Data { Data(encode(document)) }
    }
}

extension JSONWriter {
    mutating func header(_ h: CXF.Header) {
        let mark = beginObject()
        key("version")
        let v = beginObject()
        key("major")
        int(Int64(h.version.major))
        key("minor")
        int(Int64(h.version.minor))
        unknownMembers(h.version.unknownMembers, objectMark: v)
        endObject(v)
        key("exporterRpId")
        string(h.exporterRpId)
        key("exporterDisplayName")
        string(h.exporterDisplayName)
        key("timestamp")
        int(h.timestamp)
        key("accounts")
        array(h.accounts) { $0.account($1) }
        unknownMembers(h.unknownMembers, objectMark: mark)
        endObject(mark)
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
        let mark = beginObject()
        key("id")
        bytes(a.id)
        key("username")
        string(a.username)
        key("email")
        string(a.email)
        if let fullName = a.fullName {
            key("fullName")
            string(fullName)
        }
        key("collections")
        array(a.collections) { $0.collection($1) }
        key("items")
        array(a.items) { $0.item($1) }
        extensions(a.extensions)
        unknownMembers(a.unknownMembers, objectMark: mark)
        endObject(mark)
    }

    mutating func collection(_ c: CXF.Collection) {
        let mark = beginObject()
        key("id")
        bytes(c.id)
        if let creationAt = c.creationAt {
            key("creationAt")
            int(creationAt)
        }
        if let modifiedAt = c.modifiedAt {
            key("modifiedAt")
            int(modifiedAt)
        }
        key("title")
        string(c.title)
        if let subtitle = c.subtitle {
            key("subtitle")
            string(subtitle)
        }
        key("items")
        array(c.items) { $0.linkedItem($1) }
        if let sub = c.subCollections {
            key("subCollections")
            array(sub) { $0.collection($1) }
        }
        extensions(c.extensions)
        unknownMembers(c.unknownMembers, objectMark: mark)
        endObject(mark)
    }

    mutating func linkedItem(_ l: CXF.LinkedItem) {
        let mark = beginObject()
        key("item")
        bytes(l.item)
        if let account = l.account {
            key("account")
            bytes(account)
        }
        unknownMembers(l.unknownMembers, objectMark: mark)
        endObject(mark)
    }

    mutating func item(_ item: CXF.Item) {
        let mark = beginObject()
        key("id")
        bytes(item.id)
        if let creationAt = item.creationAt {
            key("creationAt")
            int(creationAt)
        }
        if let modifiedAt = item.modifiedAt {
            key("modifiedAt")
            int(modifiedAt)
        }
        key("title")
        string(item.title)
        if let subtitle = item.subtitle {
            key("subtitle")
            string(subtitle)
        }
        if let favorite = item.favorite {
            key("favorite")
            bool(favorite)
        }
        if let scope = item.scope {
            key("scope")
            self.scope(scope)
        }
        key("credentials")
        array(item.credentials) { $0.credential($1) }
        if let tags = item.tags {
            key("tags")
            array(tags) { $0.string($1) }
        }
        extensions(item.extensions)
        unknownMembers(item.unknownMembers, objectMark: mark)
        endObject(mark)
    }

    mutating func scope(_ scope: CXF.CredentialScope) {
        let mark = beginObject()
        key("urls")
        array(scope.urls) { $0.string($1) }
        key("androidApps")
        array(scope.androidApps) { w, app in
            let m = w.beginObject()
            w.key("bundleId")
            w.string(app.bundleId)
            if let cert = app.certificate {
                w.key("certificate")
                let c = w.beginObject()
                w.key("fingerprint")
                w.bytes(cert.fingerprint)
                w.key("hashAlg")
                w.string(cert.hashAlgorithm.rawValue)
                w.unknownMembers(cert.unknownMembers, objectMark: c)
                w.endObject(c)
            }
            if let name = app.name {
                w.key("name")
                w.string(name)
            }
            w.unknownMembers(app.unknownMembers, objectMark: m)
            w.endObject(m)
        }
        unknownMembers(scope.unknownMembers, objectMark: mark)
        endObject(mark)
    }

    mutating func field(_ f: CXF.EditableField) {
        let mark = beginObject()
        if let id = f.id {
            key("id")
            bytes(id)
        }
        key("fieldType")
        string(f.fieldType.rawValue)
        key("value")
        string(f.value)
        if let label = f.label {
            key("label")
            string(label)
        }
        extensions(f.extensions)
        unknownMembers(f.unknownMembers, objectMark: mark)
        endObject(mark)
    }

    mutating func extensions(_ extensions: [CXF.Extension]?) {
        guard let extensions else { return }
        key("extensions")
        array(extensions) { w, ext in
            switch ext {
            case .unknown(_, let object): w.value(object)
            case .shared(let shared):
                let mark = w.beginObject()
                w.key("name")
                w.string(CXF.SharedExtension.name)
                w.key("accessors")
                w.array(shared.accessors) { w, a in
                    let m = w.beginObject()
                    w.key("type")
                    w.string(a.type.rawValue)
                    w.key("accountId")
                    w.bytes(a.accountId)
                    w.key("name")
                    w.string(a.name)
                    w.key("permissions")
                    w.array(a.permissions) { $0.string($1.rawValue) }
                    w.unknownMembers(a.unknownMembers, objectMark: m)
                    w.endObject(m)
                }
                w.unknownMembers(shared.unknownMembers, objectMark: mark)
                w.endObject(mark)
            }
        }
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

    @inline(__always) private mutating func typeMember(_ type: StaticString) -> Int {
        let mark = beginObject()
        key("type")
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: type.utf8Start, count: type.utf8CodeUnitCount))
        out.append(UInt8(ascii: "\""))
        return mark
    }

    mutating func schemaCredential<C: SchemaCredential>(_ c: C) {
        let mark = typeMember(C.type)
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
        unknownMembers(c.unknownMembers, objectMark: mark)
        endObject(mark)
    }

    mutating func passkey(_ p: CXF.Passkey) {
        let mark = typeMember("passkey")
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
            let m = beginObject()
            if let h = e.hmacCredentials {
                key("hmacCredentials")
                let hm = beginObject()
                key("algorithm")
                string(h.algorithm)
                key("credWithUV")
                bytes(h.credWithUV)
                key("credWithoutUV")
                bytes(h.credWithoutUV)
                unknownMembers(h.unknownMembers, objectMark: hm)
                endObject(hm)
            }
            if let blob = e.credBlob {
                key("credBlob")
                bytes(blob)
            }
            if let large = e.largeBlob {
                key("largeBlob")
                let lm = beginObject()
                key("uncompressedSize")
                uint(large.uncompressedSize)
                key("data")
                bytes(large.data)
                unknownMembers(large.unknownMembers, objectMark: lm)
                endObject(lm)
            }
            if let payments = e.payments {
                key("payments")
                bool(payments)
            }
            unknownMembers(e.unknownMembers, objectMark: m)
            endObject(m)
        }
        unknownMembers(p.unknownMembers, objectMark: mark)
        endObject(mark)
    }

    mutating func totp(_ t: CXF.TOTP) {
        let mark = typeMember("totp")
        key("secret")
        string(t.secret)
        key("period")
        uint(UInt64(t.period))
        key("digits")
        uint(UInt64(t.digits))
        if let username = t.username {
            key("username")
            string(username)
        }
        key("algorithm")
        string(t.algorithm.rawValue)
        if let issuer = t.issuer {
            key("issuer")
            string(issuer)
        }
        unknownMembers(t.unknownMembers, objectMark: mark)
        endObject(mark)
    }

    mutating func file(_ f: CXF.File) {
        let mark = typeMember("file")
        key("id")
        bytes(f.id)
        key("name")
        string(f.name)
        key("decryptedSize")
        uint(f.decryptedSize)
        key("integrityHash")
        bytes(f.integrityHash)
        unknownMembers(f.unknownMembers, objectMark: mark)
        endObject(mark)
    }

    mutating func customFields(_ c: CXF.CustomFields) {
        let mark = typeMember("custom-fields")
        if let id = c.id {
            key("id")
            bytes(id)
        }
        if let label = c.label {
            key("label")
            string(label)
        }
        key("fields")
        array(c.fields) { $0.field($1) }
        extensions(c.extensions)
        unknownMembers(c.unknownMembers, objectMark: mark)
        endObject(mark)
    }

    mutating func itemReference(_ r: CXF.ItemReference) {
        let mark = typeMember("item-reference")
        key("reference")
        linkedItem(r.reference)
        unknownMembers(r.unknownMembers, objectMark: mark)
        endObject(mark)
    }
}
