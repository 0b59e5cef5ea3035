import KeyportEncoding

/// A JSON value kept as the bytes it arrived in (or will be sent as).
///
/// Parameters travel as `RawJSON` so that the envelope of a message can be read and written without
/// parsing or re-encoding what it carries; typed code decodes them with `decode(_:)` when it needs
/// them, and a large payload (a CXF document) can be handed on as it came.
package struct RawJSON: Hashable, Sendable, CustomStringConvertible {
    package var bytes: [UInt8] {
        didSet { members = nil }
    }
    /// For an object read out of a message (``JSONCursor/object()``, whose syntax it checked):
    /// each member and where its value lies in ``bytes``. `nil` for values built here.
    package private(set) var members: [Member]?

    /// A member of an object, and the range of its value.
    package struct Member: Sendable {
        package var name: String
        package var range: Range<Int>
    }

    /// Bytes that must already be one JSON value (callers that build text check nothing else).
    package init(bytes: some Sequence<UInt8>) {
        self.bytes = Array(bytes)
    }

    /// An object read and checked by a ``JSONCursor``, with where its members are.
    init(bytes: some Sequence<UInt8>, members: [Member]) {
        self.bytes = Array(bytes)
        self.members = members
    }

    /// The same bytes are the same value, however they were read.
    package static func == (left: RawJSON, right: RawJSON) -> Bool { left.bytes == right.bytes }

    package func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    /// `{}`.
    package static let emptyObject = RawJSON(bytes: Array("{}".utf8))

    /// The raw bytes of member `name` of this object (the first, if it is there twice), or `nil`
    /// when it has none. An object read out of a message is not read again: its members are known.
    package func member(_ name: String) throws -> RawJSON? {
        if let members {
            return members.first { $0.name == name }.map { RawJSON(bytes: bytes[$0.range]) }
        }
        var cursor = JSONCursor(bytes)
        var found: RawJSON?
        try cursor.forEachMember { cursor, key in
            let value = try cursor.rawValue()
            if key == name, found == nil { found = RawJSON(bytes: value) }
        }
        return found
    }

    package var description: String { String(decoding: bytes, as: UTF8.self) }
}

/// A method call: `{"method": "org.example.Interface.Method", "parameters": {…}, "more": true}`.
package struct VarlinkCall: Hashable, Sendable {
    /// The fully qualified method name: the interface name, a dot, the method name.
    package var method: String
    /// An object; `{}` when the call sent none.
    package var parameters: RawJSON
    /// The caller accepts several replies, each but the last with `continues: true`.
    package var more: Bool
    /// The caller wants no reply at all.
    package var oneway: Bool
    /// The caller asks to leave Varlink for another protocol on this connection (not served here).
    package var upgrade: Bool

    package init(
        method: String,
        parameters: RawJSON = .emptyObject,
        more: Bool = false,
        oneway: Bool = false,
        upgrade: Bool = false
    ) {
        self.method = method
        self.parameters = parameters
        self.more = more
        self.oneway = oneway
        self.upgrade = upgrade
    }

    /// The interface part of ``method``: everything before the last dot.
    package var interface: String {
        guard let dot = method.lastIndex(of: ".") else { return "" }
        return String(method[..<dot])
    }

    /// The method's own name: everything after the last dot.
    package var methodName: String {
        guard let dot = method.lastIndex(of: ".") else { return method }
        return String(method[method.index(after: dot)...])
    }

    /// Reads a call from one message (without its terminating NUL).
    package init(message: [UInt8]) throws(VarlinkMessageError) {
        var method: String?
        var parameters = RawJSON.emptyObject
        var flags = (more: false, oneway: false, upgrade: false)
        var cursor = JSONCursor(message)
        var seen = Set<String>()
        do {
            try cursor.forEachMember { cursor, key in
                // A member given twice is refused: which one counts must not be a reader's guess.
                guard seen.insert(key).inserted else { throw cursor.error("\"\(key)\" is given twice") }
                switch key {
                case "method":
                    guard try cursor.peekKind() == .string else { throw cursor.error("\"method\" must be a string") }
                    method = try cursor.string()
                case "parameters":
                    switch try cursor.peekKind() {
                    case .object: parameters = try cursor.object()
                    case .null: try cursor.null()
                    default: throw cursor.error("\"parameters\" must be an object")
                    }
                case "more", "oneway", "upgrade":
                    let value: Bool
                    switch try cursor.peekKind() {
                    case .bool: value = try cursor.bool()
                    case .null:
                        try cursor.null()
                        value = false
                    default: throw cursor.error("\"\(key)\" must be true or false")
                    }
                    if key == "more" {
                        flags.more = value
                    } else if key == "oneway" {
                        flags.oneway = value
                    } else {
                        flags.upgrade = value
                    }
                default:
                    // Members a later version of the protocol may add are passed over.
                    try cursor.skipValue()
                }
            }
            guard cursor.isAtEnd else { throw cursor.error("only one JSON object may be in a message") }
        } catch {
            throw VarlinkMessageError(.notACall, "the message is not a Varlink call: \(error)")
        }
        guard let method, !method.isEmpty else {
            throw VarlinkMessageError(.notACall, "the message is not a Varlink call: it names no \"method\"")
        }
        self.init(
            method: method,
            parameters: parameters,
            more: flags.more,
            oneway: flags.oneway,
            upgrade: flags.upgrade
        )
    }

    /// The message's bytes, without the terminating NUL.
    package var message: [UInt8] { outgoing.joined }

    /// The message as it is written: the envelope around the parameters, which are not copied.
    package var outgoing: OutgoingMessage {
        outgoing(parameterPieces: parameters == .emptyObject ? nil : [parameters.bytes])
    }

    /// The message as it is written with `pieces` for its parameters (``parameters`` unused):
    /// pieces whose joining is one JSON object, such as ``JSONText/wrappingInPieces(_:object:)``
    /// makes around a document, which is then never copied into a message of its own.
    package func outgoing(parameterPieces pieces: [[UInt8]]?) -> OutgoingMessage {
        var head = Array(#"{"method":"#.utf8)
        head += JSONString.quoted(method)
        var tail: [UInt8] = []
        if more { tail += Array(#","more":true"#.utf8) }
        if oneway { tail += Array(#","oneway":true"#.utf8) }
        if upgrade { tail += Array(#","upgrade":true"#.utf8) }
        tail.append(UInt8(ascii: "}"))
        guard let pieces else { return OutgoingMessage([head + tail]) }
        head += Array(#","parameters":"#.utf8)
        return OutgoingMessage([head] + pieces + [tail])
    }
}

/// A reply: parameters (perhaps one of several, `continues: true`), or an error.
package struct VarlinkReply: Hashable, Sendable {
    /// The method's output parameters, or the error's parameters.
    package var parameters: RawJSON
    /// Another reply follows (only for a call with `more`).
    package var continues: Bool
    /// The error's fully qualified name; `nil` for a successful reply.
    package var error: String?

    package init(parameters: RawJSON = .emptyObject, continues: Bool = false) {
        self.parameters = parameters
        self.continues = continues
        self.error = nil
    }

    package init(error: VarlinkError) {
        self.parameters = error.parameters
        self.continues = false
        self.error = error.name
    }

    /// Reads a reply from one message (without its terminating NUL).
    package init(message: [UInt8]) throws(VarlinkMessageError) {
        var parameters = RawJSON.emptyObject
        var continues = false
        var error: String?
        var cursor = JSONCursor(message)
        do {
            try cursor.forEachMember { cursor, key in
                switch key {
                case "parameters":
                    switch try cursor.peekKind() {
                    case .object: parameters = try cursor.object()
                    case .null: try cursor.null()
                    default: throw cursor.error("\"parameters\" must be an object")
                    }
                case "continues":
                    guard try cursor.peekKind() == .bool else {
                        throw cursor.error("\"continues\" must be true or false")
                    }
                    continues = try cursor.bool()
                case "error":
                    guard try cursor.peekKind() == .string else { throw cursor.error("\"error\" must be a string") }
                    error = try cursor.string()
                default:
                    try cursor.skipValue()
                }
            }
            guard cursor.isAtEnd else { throw cursor.error("only one JSON object may be in a message") }
        } catch {
            throw VarlinkMessageError(.notAReply, "the message is not a Varlink reply: \(error)")
        }
        self.parameters = parameters
        self.continues = continues
        self.error = error
    }

    /// The message's bytes, without the terminating NUL.
    package var message: [UInt8] { outgoing.joined }

    /// The message as it is written: the envelope around the parameters, which are not copied.
    package var outgoing: OutgoingMessage {
        var tail: [UInt8] = []
        if continues { tail += Array(#","continues":true"#.utf8) }
        if let error {
            tail += Array(#","error":"#.utf8)
            tail += JSONString.quoted(error)
        }
        tail.append(UInt8(ascii: "}"))
        return OutgoingMessage([Array(#"{"parameters":"#.utf8), parameters.bytes, tail])
    }
}

/// A message on its way out, in the pieces it was made of (the envelope's text around parameters
/// that may be 50 MB), so that joining them is left to the one copy into the socket's buffer.
package struct OutgoingMessage: Sendable {
    package var parts: [[UInt8]]

    package init(_ parts: [[UInt8]]) {
        self.parts = parts
    }

    /// The message's bytes, without the terminating NUL.
    package var joined: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        for part in parts { bytes += part }
        return bytes
    }

    /// Its length, without the NUL.
    package var count: Int { parts.reduce(0) { $0 + $1.count } }
}

/// JSON text for the few strings the envelope writes itself.
package enum JSONText {
    /// `{"NAME":VALUE}` around `value`, the bytes of a JSON object put in as they are (a CXF
    /// document, never decoded and encoded again on its way), once one pass has checked that
    /// they are exactly one object: bytes that closed it early could add members of their own to
    /// the message they are put in.
    ///
    /// - Throws: ``JSONSyntaxError`` when `value` is not one JSON object.
    package static func wrapping(_ name: StaticString, object value: [UInt8]) throws(JSONSyntaxError) -> RawJSON {
        try checkObject(value)
        var bytes = [UInt8(ascii: "{")]
        bytes.reserveCapacity(value.count + name.utf8CodeUnitCount + 4)
        JSONString.append(name.description, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        bytes += value
        bytes.append(UInt8(ascii: "}"))
        return RawJSON(bytes: bytes)
    }

    /// `{"NAME":VALUE}` as ``wrapping(_:object:)`` makes it, in three pieces — the head, `value`
    /// itself, `}` — for a message written in pieces (``VarlinkCall/outgoing(parameterPieces:)``):
    /// a 45 MB document is not copied.
    ///
    /// - Throws: ``JSONSyntaxError`` when `value` is not one JSON object.
    package static func wrappingInPieces(
        _ name: StaticString,
        object value: [UInt8]
    ) throws(JSONSyntaxError) -> [[UInt8]] {
        try checkObject(value)
        var head = [UInt8(ascii: "{")]
        JSONString.append(name.description, to: &head)
        head.append(UInt8(ascii: ":"))
        return [head, value, [UInt8(ascii: "}")]]
    }

    /// Checks, in one pass, that `value` is exactly one JSON object, before it is put into a
    /// message as it is.
    package static func checkObject(_ value: [UInt8]) throws(JSONSyntaxError) {
        var cursor = JSONCursor(value)
        guard try cursor.peekKind() == .object else { throw cursor.error("a JSON object was expected") }
        try cursor.skipValue()
        guard cursor.isAtEnd else { throw cursor.error("there is more after the object") }
    }

    /// An object of `members` (names and their values' JSON), in the order given.
    package static func object(_ members: [(name: String, value: [UInt8])]) -> RawJSON {
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (index, member) in members.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONString.append(member.name, to: &out)
            out.append(UInt8(ascii: ":"))
            out += member.value
        }
        out.append(UInt8(ascii: "}"))
        return RawJSON(bytes: out)
    }
}
