import KeyportEncoding
import KeyportErrors
// VarlinkCore is the interface definition language (VarlinkIDL) with the protocol around it: users
// of VarlinkCore see both.
@_exported import VarlinkIDL

/// A value that reads and writes itself as the JSON of a Varlink message, without Foundation.
///
/// The types of Keyport's interfaces are generated from their definitions (`*.varlink`, by the
/// VarlinkInterfaces build-tool plugin) and conform to it, as do the types the definition
/// language names: `bool`, `int`, `float`, `string`, `object` (``RawJSON``), `?T`, `[]T` and
/// `[string]T`. Members a newer peer adds are passed over when reading; an optional member that is
/// `nil` is left out when writing.
package protocol VarlinkCodable: Sendable {
    /// Reads one value at the cursor.
    ///
    /// - Throws: ``VarlinkDecodingError`` naming the member (a path such as `items[2].name`) and
    ///   what is wrong with it.
    init(varlink cursor: inout JSONCursor) throws(VarlinkDecodingError)

    /// Appends the value's JSON to `json`.
    func write(varlink json: inout [UInt8])
}

extension VarlinkCodable {
    /// Reads the value from `json`, which must hold that value and nothing after it.
    package init(json: RawJSON) throws(VarlinkDecodingError) {
        var cursor = JSONCursor(json.bytes)
        try self.init(varlink: &cursor)
        guard cursor.isAtEnd else { throw VarlinkDecodingError(.syntax, "there is more after the value") }
    }
}

extension RawJSON {
    /// `value`'s JSON.
    package init(encoding value: some VarlinkCodable) {
        var bytes: [UInt8] = []
        value.write(varlink: &bytes)
        self.init(bytes: bytes)
    }

    /// The value as `T`.
    package func decode<T: VarlinkCodable>(_ type: T.Type) throws(VarlinkDecodingError) -> T {
        try T(json: self)
    }
}

/// Why a value is not what its type says: where (a member path) and what is wrong.
package struct VarlinkDecodingError: RecordedError {
    /// A stable name for why.
    package typealias Code = ErrorCodeOf<VarlinkDecodingError>

    package var record: ErrorRecord<Code>
    /// The member it is about, `credential.user` or `items[2]`; empty for the value itself.
    package var path: String

    package init(_ code: Code, path: String = "", _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
        self.path = path
    }

    /// The same error, one level further out: inside member (or element) `step`.
    package func within(_ step: String) -> VarlinkDecodingError {
        var outer = self
        outer.path = path.isEmpty ? step : (path.hasPrefix("[") ? step + path : "\(step).\(path)")
        return outer
    }

    package var description: String { path.isEmpty ? message : "\(path): \(message)" }

    /// A peer's text as an error repeats it: at most 64 characters, so that a huge value does not
    /// travel on into replies and logs.
    package static func shown(_ text: String) -> String {
        text.count <= 64 ? text : String(text.prefix(64)) + "…"
    }
}

extension ErrorCodeOf<VarlinkDecodingError> {
    /// The text is not JSON, or more follows the value.
    package static let syntax = Self(rawValue: "syntax")
    /// A value of another kind than the type's (a string for a number, …).
    package static let wrongKind = Self(rawValue: "wrong-kind")
    /// A value of the right kind that the type cannot hold (out of range, not one of an enum's).
    package static let invalidValue = Self(rawValue: "invalid-value")
    /// A member the type requires is absent.
    package static let missing = Self(rawValue: "missing")
}

extension JSONCursor {
    /// Reads the value of member `member` as `T`, errors naming the member.
    package mutating func decode<T: VarlinkCodable>(
        _ type: T.Type,
        member: String
    ) throws(VarlinkDecodingError) -> T {
        do {
            return try T(varlink: &self)
        } catch {
            throw error.within(member)
        }
    }

    /// Reads an object member by member: `body` gets each member's name and must consume its
    /// value. Syntax errors become ``VarlinkDecodingError``s.
    package mutating func decodeMembers(
        _ body: (inout JSONCursor, String) throws(VarlinkDecodingError) -> Void
    ) throws(VarlinkDecodingError) {
        try expect(.object, "an object")
        do {
            try forEachMember { cursor, name in try body(&cursor, name) }
        } catch let error as VarlinkDecodingError {
            throw error
        } catch {
            throw VarlinkDecodingError(.syntax, "\(error)")
        }
    }

    /// Passes over a member this type does not know (a newer peer's).
    package mutating func skipMember() throws(VarlinkDecodingError) {
        try reading { cursor throws(JSONSyntaxError) in try cursor.skipValue() }
    }

    /// Runs a syntax-level read, its error becoming a ``VarlinkDecodingError``.
    fileprivate mutating func reading<T>(
        _ read: (inout JSONCursor) throws(JSONSyntaxError) -> T
    ) throws(VarlinkDecodingError) -> T {
        do {
            return try read(&self)
        } catch {
            throw VarlinkDecodingError(.syntax, error.description)
        }
    }

    /// Checks that the next value is of `kind` (`expected` says it as a person reads it).
    fileprivate mutating func expect(_ kind: Kind, _ expected: String) throws(VarlinkDecodingError) {
        let found = try reading { cursor throws(JSONSyntaxError) in try cursor.peekKind() }
        guard found == kind else { throw VarlinkDecodingError(.wrongKind, "\(expected) was expected, not \(found)") }
    }
}

/// Writes a JSON object member by member (the generated types' `write(varlink:)`).
package struct JSONObjectWriter {
    private var first = true

    /// Opens the object.
    package init(into json: inout [UInt8]) {
        json.append(UInt8(ascii: "{"))
    }

    /// Writes a member, `"key":` already quoted (generated names need no escaping); `nil` is left
    /// out.
    package mutating func member<T: VarlinkCodable>(_ key: StaticString, _ value: T?, into json: inout [UInt8]) {
        guard let value else { return }
        if !first { json.append(UInt8(ascii: ",")) }
        first = false
        key.withUTF8Buffer { json.append(contentsOf: $0) }
        value.write(varlink: &json)
    }

    /// Closes the object.
    package func end(into json: inout [UInt8]) {
        json.append(UInt8(ascii: "}"))
    }
}

/// A method of a generated interface: its full name, what it takes and what it replies.
package protocol VarlinkMethodType {
    associatedtype Parameters: VarlinkCodable
    associatedtype Reply: VarlinkCodable
    /// `org.example.Interface.Method`.
    static var name: String { get }
}

/// An error of a generated interface: its full name; the value is its parameters.
package protocol VarlinkErrorType: VarlinkCodable {
    /// `org.example.Interface.Error`.
    static var name: String { get }
}

extension VarlinkError {
    /// The error reply for `error`.
    package init(_ error: some VarlinkErrorType) {
        self.init(name: type(of: error).name, parameters: RawJSON(encoding: error))
    }

    /// Whether this is an `E`.
    package func `is`<E: VarlinkErrorType>(_ type: E.Type) -> Bool { name == E.name }

    /// The parameters as `E`, when this is an `E` whose parameters read as such.
    package func parameters<E: VarlinkErrorType>(as type: E.Type) -> E? {
        guard name == E.name else { return nil }
        return try? E(json: parameters)
    }
}

extension String: VarlinkCodable {
    package init(varlink cursor: inout JSONCursor) throws(VarlinkDecodingError) {
        try cursor.expect(.string, "a string")
        self = try cursor.reading { cursor throws(JSONSyntaxError) in try cursor.string() }
    }

    package func write(varlink json: inout [UInt8]) { JSONString.append(self, to: &json) }
}

extension Bool: VarlinkCodable {
    package init(varlink cursor: inout JSONCursor) throws(VarlinkDecodingError) {
        try cursor.expect(.bool, "true or false")
        self = try cursor.reading { cursor throws(JSONSyntaxError) in try cursor.bool() }
    }

    package func write(varlink json: inout [UInt8]) { json += (self ? "true" : "false").utf8 }
}

extension Int: VarlinkCodable {
    package init(varlink cursor: inout JSONCursor) throws(VarlinkDecodingError) {
        try cursor.expect(.number, "an integer")
        let number = try cursor.reading { cursor throws(JSONSyntaxError) in try cursor.number() }
        guard number.isInteger, let value = Int(number.text) else {
            throw VarlinkDecodingError(
                .invalidValue,
                "\(VarlinkDecodingError.shown(number.text)) is not an integer of 64 bits"
            )
        }
        self = value
    }

    package func write(varlink json: inout [UInt8]) { json += String(self).utf8 }
}

extension Double: VarlinkCodable {
    package init(varlink cursor: inout JSONCursor) throws(VarlinkDecodingError) {
        try cursor.expect(.number, "a number")
        let number = try cursor.reading { cursor throws(JSONSyntaxError) in try cursor.number() }
        guard let value = Double(number.text), value.isFinite else {
            throw VarlinkDecodingError(
                .invalidValue,
                "\(VarlinkDecodingError.shown(number.text)) is not a number of 64 bits"
            )
        }
        self = value
    }

    /// JSON has no infinity or NaN: they are written as `null`, which reads back as an error.
    package func write(varlink json: inout [UInt8]) { json += (isFinite ? description : "null").utf8 }
}

extension RawJSON: VarlinkCodable {
    /// An `object`: kept as its bytes, with where its members are.
    package init(varlink cursor: inout JSONCursor) throws(VarlinkDecodingError) {
        try cursor.expect(.object, "an object")
        do {
            self = try cursor.object()
        } catch {
            throw VarlinkDecodingError(.syntax, "\(error)")
        }
    }

    package func write(varlink json: inout [UInt8]) { json += bytes }
}

extension Optional: VarlinkCodable where Wrapped: VarlinkCodable {
    package init(varlink cursor: inout JSONCursor) throws(VarlinkDecodingError) {
        if try cursor.reading({ cursor throws(JSONSyntaxError) in try cursor.peekKind() }) == .null {
            try cursor.reading { cursor throws(JSONSyntaxError) in try cursor.null() }
            self = nil
        } else {
            self = try Wrapped(varlink: &cursor)
        }
    }

    package func write(varlink json: inout [UInt8]) {
        if let self { self.write(varlink: &json) } else { json += "null".utf8 }
    }
}

extension Array: VarlinkCodable where Element: VarlinkCodable {
    package init(varlink cursor: inout JSONCursor) throws(VarlinkDecodingError) {
        try cursor.expect(.array, "an array")
        var elements: [Element] = []
        do {
            try cursor.forEachElement { cursor in
                do {
                    elements.append(try Element(varlink: &cursor))
                } catch let error as VarlinkDecodingError {
                    throw error.within("[\(elements.count)]")
                }
            }
        } catch let error as VarlinkDecodingError {
            throw error
        } catch {
            throw VarlinkDecodingError(.syntax, "\(error)")
        }
        self = elements
    }

    package func write(varlink json: inout [UInt8]) {
        json.append(UInt8(ascii: "["))
        for (index, element) in enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            element.write(varlink: &json)
        }
        json.append(UInt8(ascii: "]"))
    }
}

extension Dictionary: VarlinkCodable where Key == String, Value: VarlinkCodable {
    /// `[string]T`; a key given twice keeps its last value.
    package init(varlink cursor: inout JSONCursor) throws(VarlinkDecodingError) {
        var values: [String: Value] = [:]
        try cursor.decodeMembers { cursor, key throws(VarlinkDecodingError) in
            values[key] = try cursor.decode(Value.self, member: key)
        }
        self = values
    }

    /// Keys sorted, so equal dictionaries give equal bytes.
    package func write(varlink json: inout [UInt8]) {
        json.append(UInt8(ascii: "{"))
        for (index, key) in keys.sorted().enumerated() {
            if index > 0 { json.append(UInt8(ascii: ",")) }
            json += JSONString.quoted(key)
            json.append(UInt8(ascii: ":"))
            self[key]!.write(varlink: &json)
        }
        json.append(UInt8(ascii: "}"))
    }
}
