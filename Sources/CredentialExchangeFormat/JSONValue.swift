/// A JSON value kept verbatim where the CXF model has no typed place for it: unknown members,
/// unknown extensions and credentials of an unknown or malformed type.
///
/// Numbers keep their source text, so nothing is rounded on the way back out.
///
/// Not `indirect`: arrays and objects already hold their elements out of line, and an unboxed
/// scalar costs no allocation of its own (`[1,1,…]` takes a third of the memory it took boxed).
public enum JSONValue: Hashable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// The number exactly as written in the source (for example `"1.50"` or `"12345678901234567890"`).
    case number(String)
    /// A string, unescaped.
    case string(String)
    /// An array, its elements in order.
    case array([JSONValue])
    /// Members in source order, which the encoder keeps.
    case object([JSONMember])

    /// The member named `key` of an object value, if any (the last one when a key repeats).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last(where: { $0.key == key })?.value
    }

    /// The string, when this is a string value.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// A one-word name for the kind of value, used in diagnostics ("a string", "an array", ...).
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// One `"key": value` pair of a JSON object.
public struct JSONMember: Hashable, Sendable {
    /// The member's name, unescaped.
    public var key: String
    /// The member's value.
    public var value: JSONValue
    /// Whether this is the value of a member the model types, which the decoder could not read as
    /// its type (wrong JSON type, out of range, not base64url). The typed member then holds only a
    /// stand-in, and the encoder writes this value in its place, so the document's value survives
    /// and the key appears once. A repeated member or a member the model does not know is not
    /// unreadable: it is written as well as the typed member.
    public var unreadable: Bool

    /// A member; set `unreadable` for the value of a typed member that could not be read as its type.
    public init(key: String, value: JSONValue, unreadable: Bool = false) {
        self.key = key
        self.value = value
        self.unreadable = unreadable
    }
}

// MARK: - Any coder

/// A `JSONValue` reads from and writes to any `Decoder` and `Encoder` (`JSONDecoder`, a property
/// list coder, a coder of an app's own), which is how Apple-shaped types reach the CXF codec from
/// `Codable`.
///
/// Reading asks the decoder for each kind in turn: null, string, boolean, integer, floating point,
/// object, array. A number comes back as the text of the Swift value it decoded to (an integer that
/// fits `Int64` or `UInt64` exactly, else a `Double`), so a coder that rounds numbers rounds them
/// here too. Writing gives a number the first of `Int64`, `UInt64` and `Double` its text parses as.
extension JSONValue: Codable {
    private struct MemberKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Reads any value the decoder holds.
    ///
    /// - Throws: `DecodingError.dataCorrupted` for a value that is none of JSON's kinds, a number
    ///   that is not finite, or nesting deeper than ``CXF/DecodingOptions/maxDepthLimit``.
    public init(from decoder: any Decoder) throws {
        // A coder may nest as deep as it likes; this reads (and later writes) one level per call.
        guard decoder.codingPath.count <= CXF.DecodingOptions.maxDepthLimit else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "objects and arrays nest deeper than \(CXF.DecodingOptions.maxDepthLimit) levels"
                )
            )
        }
        if let single = try? decoder.singleValueContainer() {
            if single.decodeNil() {
                self = .null
                return
            }
            if let string = try? single.decode(String.self) {
                self = .string(string)
                return
            }
            if let bool = try? single.decode(Bool.self) {
                self = .bool(bool)
                return
            }
            if let integer = try? single.decode(Int64.self) {
                self = .number(String(integer))
                return
            }
            if let integer = try? single.decode(UInt64.self) {
                self = .number(String(integer))
                return
            }
            if let double = try? single.decode(Double.self) {
                guard double.isFinite else {
                    throw DecodingError.dataCorrupted(
                        .init(codingPath: decoder.codingPath, debugDescription: "\(double) is not a JSON number")
                    )
                }
                self = .number("\(double)")
                return
            }
        }
        if let object = try? decoder.container(keyedBy: MemberKey.self) {
            var members: [JSONMember] = []
            members.reserveCapacity(object.allKeys.count)
            for key in object.allKeys {
                members.append(JSONMember(key: key.stringValue, value: try object.decode(JSONValue.self, forKey: key)))
            }
            self = .object(members)
            return
        }
        if var array = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        throw DecodingError.dataCorrupted(
            .init(codingPath: decoder.codingPath, debugDescription: "the value is none of JSON's kinds")
        )
    }

    /// Writes the value; members in their order, each once (a repeated key's last value wins in
    /// coders that keep one value per key).
    ///
    /// - Throws: `EncodingError.invalidValue` for a number whose text is not a number.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let bool):
            var single = encoder.singleValueContainer()
            try single.encode(bool)
        case .number(let text):
            var single = encoder.singleValueContainer()
            if let integer = Int64(text) {
                try single.encode(integer)
            } else if let integer = UInt64(text) {
                try single.encode(integer)
            } else if let double = Double(text), double.isFinite {
                try single.encode(double)
            } else {
                throw EncodingError.invalidValue(
                    self,
                    .init(codingPath: encoder.codingPath, debugDescription: "'\(text)' is not a number")
                )
            }
        case .string(let string):
            var single = encoder.singleValueContainer()
            try single.encode(string)
        case .array(let elements):
            var array = encoder.unkeyedContainer()
            for element in elements { try array.encode(element) }
        case .object(let members):
            var object = encoder.container(keyedBy: MemberKey.self)
            for member in members { try object.encode(member.value, forKey: MemberKey(stringValue: member.key)) }
        }
    }
}
