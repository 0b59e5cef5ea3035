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
            case .header(let header): w.object(header)
            case .account(let account): w.object(account)
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
    /// `CXF.Decoder().decode(CXF.Part<CXF.Item>.object, from:)` reads it back equal.
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
        w.object(self)
        swap(&w.out, &buffer)
    }
}

extension JSONWriter {
    /// An object written by its ``SchemaObject/members(_:_:)``: the discriminator, the members in
    /// that order, then the unknown members in the order they were read.
    mutating func object<O: SchemaObject>(_ object: O) {
        beginObject()
        if let discriminator = O.schema.discriminator {
            key(discriminator.key)
            out.append(UInt8(ascii: "\""))
            let value = discriminator.value
            out.append(contentsOf: UnsafeBufferPointer(start: value.utf8Start, count: value.utf8CodeUnitCount))
            out.append(UInt8(ascii: "\""))
        }
        var writer = MemberWriter(unknown: object.unknownMembers)
        // The walk takes the object `inout` and the writer leaves it as it was.
        var object = object
        object.members(&writer, &self)
        unknownMembers(writer.unknown)
        endObject()
    }

    /// Writes each member (its key and value), or nothing when it is absent or an unreadable value
    /// kept among the unknown members stands in its place.
    struct MemberWriter: MemberVisitor {
        typealias Context = JSONWriter
        typealias VisitError = Never
        let unknown: [JSONMember]

        @inline(__always) func required<C: ValueCoder>(
            _ key: StaticString,
            _ value: inout C.Value,
            _ coder: C,
            _ missing: ObjectSchema.Missing,
            _ w: inout JSONWriter
        ) {
            if !unknown.isEmpty, w.replaces(key, standIn: coder.isStandIn(value), in: unknown) { return }
            w.key(key)
            coder.write(&w, value)
        }

        @inline(__always) func optional<C: ValueCoder>(
            _ key: StaticString,
            _ value: inout C.Value?,
            _ coder: C,
            _ w: inout JSONWriter
        ) {
            w.optional(key, value, unknown: unknown) { coder.write(&$0, $1) }
        }
    }

    @inline(__always) mutating func array<T>(_ elements: [T], _ body: (inout JSONWriter, T) -> Void) {
        beginArray()
        // Through the buffer: each element is lent to `body`, not copied (a copy retains its members).
        elements.withUnsafeBufferPointer { elements in
            for index in elements.indices {
                element()
                body(&self, elements[index])
            }
        }
        endArray()
    }

    mutating func extensionArray(_ extensions: [CXF.Extension]) {
        array(extensions) { $0.extensionObject($1) }
    }

    mutating func extensionObject(_ ext: CXF.Extension) {
        switch ext {
        case .unknown(_, let object): value(object)
        case .shared(let shared): object(shared)
        }
    }

    // MARK: Credentials

    mutating func credential(_ credential: CXF.Credential) {
        switch credential {
        case .basicAuth(let c): object(c)
        case .passkey(let c): object(c)
        case .totp(let c): object(c)
        case .note(let c): object(c)
        case .file(let c): object(c)
        case .creditCard(let c): object(c)
        case .address(let c): object(c)
        case .apiKey(let c): object(c)
        case .driversLicense(let c): object(c)
        case .identityDocument(let c): object(c)
        case .passport(let c): object(c)
        case .personName(let c): object(c)
        case .generatedPassword(let c): object(c)
        case .sshKey(let c): object(c)
        case .wifi(let c): object(c)
        case .customFields(let c): object(c)
        case .itemReference(let c): object(c)
        case .unrecognized(let c): value(c.object)
        }
    }
}
