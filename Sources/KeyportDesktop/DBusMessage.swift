/// D-Bus values as the portals exchange them: what ``DBusConnection`` reads from any message,
/// and writes for the few calls Keyport makes. Marshalled little-endian, aligned as the
/// specification's "Marshaling (Wire Format)" says.
indirect enum DBusValue: Equatable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    case unixFD(UInt32)
    /// A variant: its value's signature, and the value.
    case variant(String, DBusValue)
    /// An array: its element type's signature, and the elements (dict entries are `.entry`).
    case array(String, [DBusValue])
    case structure([DBusValue])
    case entry(DBusValue, DBusValue)

    /// A string-keyed dictionary of variants (`a{sv}`), the portals' options and results.
    static func options(_ members: [(String, DBusValue)]) -> DBusValue {
        .array(
            "{sv}",
            members.map { .entry(.string($0.0), .variant(signature(of: $0.1), $0.1)) }
        )
    }

    /// The members of an `a{sv}` value, each variant unwrapped.
    var dictionary: [String: DBusValue] {
        guard case .array(_, let entries) = self else { return [:] }
        var members: [String: DBusValue] = [:]
        for case .entry(.string(let key), let value) in entries {
            if case .variant(_, let inner) = value { members[key] = inner } else { members[key] = value }
        }
        return members
    }

    var uint32: UInt32? { if case .uint32(let value) = self { value } else { nil } }
    var string: String? {
        switch self {
        case .string(let value), .objectPath(let value): value
        default: nil
        }
    }

    /// The signature of a value of one of the types Keyport writes.
    static func signature(of value: DBusValue) -> String {
        switch value {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .variant: "v"
        case .array(let element, _): "a" + element
        case .structure(let members): "(" + members.map(signature(of:)).joined() + ")"
        case .entry(let key, let value): "{" + signature(of: key) + signature(of: value) + "}"
        }
    }
}

/// Writes D-Bus values.
struct DBusWriter {
    private(set) var bytes: [UInt8] = []

    mutating func align(_ boundary: Int) {
        while bytes.count % boundary != 0 { bytes.append(0) }
    }

    mutating func write(_ value: DBusValue) {
        switch value {
        case .byte(let byte): bytes.append(byte)
        case .boolean(let flag): fixed(UInt64(flag ? 1 : 0), size: 4)
        case .int16(let number): fixed(UInt64(UInt16(bitPattern: number)), size: 2)
        case .uint16(let number): fixed(UInt64(number), size: 2)
        case .int32(let number): fixed(UInt64(UInt32(bitPattern: number)), size: 4)
        case .uint32(let number), .unixFD(let number): fixed(UInt64(number), size: 4)
        case .int64(let number): fixed(UInt64(bitPattern: number), size: 8)
        case .uint64(let number): fixed(number, size: 8)
        case .double(let number): fixed(number.bitPattern, size: 8)
        case .string(let text), .objectPath(let text):
            fixed(UInt64(text.utf8.count), size: 4)
            bytes += text.utf8
            bytes.append(0)
        case .signature(let text):
            bytes.append(UInt8(text.utf8.count))
            bytes += text.utf8
            bytes.append(0)
        case .variant(let signature, let inner):
            write(.signature(signature))
            write(inner)
        case .array(let element, let elements):
            align(4)
            let lengthAt = bytes.count
            bytes += [0, 0, 0, 0]
            align(DBusType.alignment(of: element.first ?? "y"))
            let start = bytes.count
            for element in elements { write(element) }
            let length = UInt32(bytes.count - start)
            for index in 0..<4 { bytes[lengthAt + index] = UInt8(truncatingIfNeeded: length >> UInt32(8 * index)) }
        case .structure(let members):
            align(8)
            for member in members { write(member) }
        case .entry(let key, let inner):
            align(8)
            write(key)
            write(inner)
        }
    }

    private mutating func fixed(_ value: UInt64, size: Int) {
        align(size)
        for index in 0..<size { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * index))) }
    }
}

/// Why a D-Bus message could not be read.
struct DBusFormatError: Error {
    var description: String
}

/// Reads D-Bus values of any type from a message's bytes (offsets count from the message's start,
/// as alignment does).
struct DBusReader {
    let bytes: [UInt8]
    var offset: Int
    /// How deep containers may nest (the specification's limit is 64 in all).
    private var depth = 0

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    /// The values of `signature`, one after the other.
    mutating func read(signature: String) throws(DBusFormatError) -> [DBusValue] {
        var types = Substring(signature)
        var values: [DBusValue] = []
        while !types.isEmpty {
            let type = try DBusType.next(&types)
            values.append(try read(type))
        }
        return values
    }

    /// One value of the single complete type `type`.
    mutating func read(_ type: Substring) throws(DBusFormatError) -> DBusValue {
        guard let code = type.first else { throw DBusFormatError(description: "an empty type") }
        switch code {
        case "y": return .byte(try fixed(1).first!)
        case "b": return .boolean(try number(4) != 0)
        case "n": return .int16(Int16(truncatingIfNeeded: try number(2)))
        case "q": return .uint16(UInt16(truncatingIfNeeded: try number(2)))
        case "i": return .int32(Int32(truncatingIfNeeded: try number(4)))
        case "u": return .uint32(UInt32(truncatingIfNeeded: try number(4)))
        case "h": return .unixFD(UInt32(truncatingIfNeeded: try number(4)))
        case "x": return .int64(Int64(bitPattern: try number(8)))
        case "t": return .uint64(try number(8))
        case "d": return .double(Double(bitPattern: try number(8)))
        case "s", "o":
            let length = Int(try number(4))
            let text = String(decoding: try fixedBytes(length, alignment: 1), as: UTF8.self)
            _ = try fixedBytes(1, alignment: 1)
            return code == "s" ? .string(text) : .objectPath(text)
        case "g":
            let length = Int(try fixedBytes(1, alignment: 1).first!)
            let text = String(decoding: try fixedBytes(length, alignment: 1), as: UTF8.self)
            _ = try fixedBytes(1, alignment: 1)
            return .signature(text)
        case "v":
            guard case .signature(let signature) = try read("g") else { throw malformed() }
            var inner = Substring(signature)
            let innerType = try DBusType.next(&inner)
            guard inner.isEmpty else { throw DBusFormatError(description: "a variant of more than one type") }
            try enter()
            defer { depth -= 1 }
            return .variant(signature, try read(innerType))
        case "a":
            let length = Int(try number(4))
            let element = type.dropFirst()
            try align(DBusType.alignment(of: element.first!))
            let end = offset + length
            guard length <= 64 << 20, end <= bytes.count else { throw malformed() }
            try enter()
            defer { depth -= 1 }
            var elements: [DBusValue] = []
            while offset < end {
                let before = offset
                elements.append(try read(element))
                // An element that takes no bytes (an empty structure) would never reach the end.
                guard offset > before else { throw DBusFormatError(description: "an array of empty elements") }
            }
            guard offset == end else { throw malformed() }
            return .array(String(element), elements)
        case "(", "{":
            try align(8)
            var members = type.dropFirst().dropLast()
            try enter()
            defer { depth -= 1 }
            var values: [DBusValue] = []
            while !members.isEmpty { values.append(try read(try DBusType.next(&members))) }
            if code == "{" {
                guard values.count == 2 else { throw malformed() }
                return .entry(values[0], values[1])
            }
            return .structure(values)
        default:
            throw DBusFormatError(description: "the type \(code) is not a D-Bus type")
        }
    }

    mutating func align(_ boundary: Int) throws(DBusFormatError) {
        let aligned = (offset + boundary - 1) / boundary * boundary
        guard aligned <= bytes.count else { throw malformed() }
        offset = aligned
    }

    private mutating func enter() throws(DBusFormatError) {
        depth += 1
        guard depth <= 64 else { throw DBusFormatError(description: "values nested more than 64 deep") }
    }

    private mutating func number(_ size: Int) throws(DBusFormatError) -> UInt64 {
        try fixed(size).enumerated().reduce(0) { $0 | UInt64($1.element) << UInt64(8 * $1.offset) }
    }

    private mutating func fixed(_ size: Int) throws(DBusFormatError) -> ArraySlice<UInt8> {
        try fixedBytes(size, alignment: size)
    }

    private mutating func fixedBytes(_ count: Int, alignment: Int) throws(DBusFormatError) -> ArraySlice<UInt8> {
        try align(alignment)
        guard count >= 0, offset + count <= bytes.count else { throw malformed() }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    private func malformed() -> DBusFormatError {
        DBusFormatError(description: "a value runs past the message's end at byte \(offset)")
    }
}

/// D-Bus type signatures.
enum DBusType {
    /// Takes the first single complete type off `signature`.
    static func next(_ signature: inout Substring) throws(DBusFormatError) -> Substring {
        guard let first = signature.first else { throw DBusFormatError(description: "a signature ends early") }
        var end = signature.index(after: signature.startIndex)
        switch first {
        case "a":
            var rest = signature[end...]
            let element = try next(&rest)
            end = element.endIndex
        case "(", "{":
            var level = 0
            var index = signature.startIndex
            repeat {
                guard index < signature.endIndex else {
                    throw DBusFormatError(description: "a signature's \(first) is not closed")
                }
                switch signature[index] {
                case "(", "{": level += 1
                case ")", "}": level -= 1
                default: break
                }
                index = signature.index(after: index)
            } while level > 0
            end = index
        default:
            break
        }
        defer { signature = signature[end...] }
        return signature[..<end]
    }

    /// The boundary a type's values start on.
    static func alignment(of code: Character) -> Int {
        switch code {
        case "n", "q": 2
        case "b", "i", "u", "h", "s", "o", "a": 4
        case "x", "t", "d", "(", "{": 8
        default: 1
        }
    }
}
