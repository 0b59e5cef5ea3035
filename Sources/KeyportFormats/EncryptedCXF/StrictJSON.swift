import CredentialExchangeFormat
import KeyportEncoding

/// A JSON object of the encrypted export's files, read strictly: no member twice, none the
/// format does not have (where it says so), every value of its type; each refusal names the
/// value by its JSON pointer (RFC 6901), as CXF's findings do.
struct StrictObject {
    /// Where the object is: `""` for the whole document, `/hpke/0` inside it.
    let pointer: String
    /// What the format calls it ("an HPKE suite"), for messages.
    let what: String
    /// The code a refusal carries.
    let code: EncryptedCXFError.Code
    private let members: [String: JSONValue]

    /// `value` as an object; `known` lists the members it may have (`nil`: any, as a JWK).
    init(
        _ value: JSONValue,
        at pointer: String,
        what: String,
        known: [String]?,
        code: EncryptedCXFError.Code = .malformed
    ) throws(EncryptedCXFError) {
        self.pointer = pointer
        self.what = what
        self.code = code
        guard case .object(let list) = value else {
            throw EncryptedCXFError(
                code,
                "\(Self.place(pointer)) is \(value.kindDescription); \(what) is a JSON object"
            )
        }
        var members: [String: JSONValue] = [:]
        for member in list {
            let path = Self.path(pointer, member.key)
            guard members[member.key] == nil else {
                throw EncryptedCXFError(code, "\(path) appears twice; a member may appear once")
            }
            if let known, !known.contains(member.key) {
                throw EncryptedCXFError(
                    code,
                    "\(path) is not a member of \(what), which has \(known.joined(separator: ", "))"
                )
            }
            members[member.key] = member.value
        }
        self.members = members
    }

    /// The pointer of member `name`.
    func path(_ name: String) -> String { Self.path(pointer, name) }

    /// Whether the object has member `name`.
    func has(_ name: String) -> Bool { members[name] != nil }

    /// Member `name`, which must be there.
    func required(_ name: String) throws(EncryptedCXFError) -> JSONValue {
        guard let value = members[name] else {
            throw EncryptedCXFError(code, "\(Self.place(pointer)) has no \(name); \(what) must have one")
        }
        return value
    }

    /// Member `name` as text; `nil` when it is absent and not `required`.
    func string(_ name: String, required: Bool = true) throws(EncryptedCXFError) -> String? {
        guard let value = members[name] else {
            if required { _ = try self.required(name) }
            return nil
        }
        guard case .string(let text) = value else {
            throw EncryptedCXFError(code, "\(path(name)) is \(value.kindDescription); it must be a string")
        }
        return text
    }

    /// Member `name` as an integer in `range`, written as JSON integers are (digits, no sign, no
    /// fraction or exponent, no leading zero); `nil` when absent and not `required`.
    func integer(
        _ name: String,
        in range: ClosedRange<Int>,
        required: Bool = true
    ) throws(EncryptedCXFError) -> Int? {
        guard let value = members[name] else {
            if required { _ = try self.required(name) }
            return nil
        }
        guard case .number(let text) = value else {
            throw EncryptedCXFError(code, "\(path(name)) is \(value.kindDescription); it must be an integer")
        }
        let digits = text.utf8
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ (0x30...0x39).contains($0) }),
            digits.first != 0x30 || digits.count == 1, let number = Int(text), range.contains(number)
        else {
            throw EncryptedCXFError(
                code,
                "\(path(name)) is \(DisplayText.escaping(text)); it must be an integer from \(range.lowerBound) to \(range.upperBound)"
            )
        }
        return number
    }

    /// Member `name` as an array; `nil` when absent and not `required`.
    func array(_ name: String, required: Bool = true) throws(EncryptedCXFError) -> [JSONValue]? {
        guard let value = members[name] else {
            if required { _ = try self.required(name) }
            return nil
        }
        guard case .array(let elements) = value else {
            throw EncryptedCXFError(code, "\(path(name)) is \(value.kindDescription); it must be an array")
        }
        return elements
    }

    /// Member `name` as an array of strings; `nil` when absent.
    func strings(_ name: String) throws(EncryptedCXFError) -> [String]? {
        guard let elements = try array(name, required: false) else { return nil }
        var strings: [String] = []
        for (index, element) in elements.enumerated() {
            guard case .string(let text) = element else {
                throw EncryptedCXFError(
                    code,
                    "\(path(name))/\(index) is \(element.kindDescription); \(name) holds strings"
                )
            }
            strings.append(text)
        }
        return strings
    }

    /// `pointer` for a person: the pointer, or "the document" for the whole of it.
    static func place(_ pointer: String) -> String { pointer.isEmpty ? "the document" : pointer }

    /// The pointer of member `name` of the object at `pointer`: `~` and `/` escaped as RFC 6901
    /// says, and anything that could act on a terminal as `DisplayText` shows it.
    static func path(_ pointer: String, _ name: String) -> String {
        let escaped = name.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
        return pointer + "/" + DisplayText.escaping(escaped)
    }
}

/// Base64url as RFC 7515 §2 has JOSE write it, read strictly: the URL-safe alphabet only, no
/// padding, and the one encoding of the bytes (the unused bits of the last character zero), so
/// that each value has one spelling and a changed character is always a changed value.
enum StrictBase64URL {
    /// The bytes of `text`, or `nil` when it is not strict base64url.
    static func decode(_ text: String) -> [UInt8]? {
        var last: UInt8 = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): last = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): last = byte - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): last = byte - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"): last = 62
            case UInt8(ascii: "_"): last = 63
            default: return nil
            }
        }
        // Two characters carry one byte and four spare bits; three carry two bytes and two.
        switch text.utf8.count % 4 {
        case 1: return nil
        case 2: guard last & 0x0F == 0 else { return nil }
        case 3: guard last & 0x03 == 0 else { return nil }
        default: break
        }
        return try? Base64URL.decode(text)
    }
}
