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
