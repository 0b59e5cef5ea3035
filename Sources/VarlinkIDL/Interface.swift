/// A Varlink type, as the interface definition language writes it.
package indirect enum VarlinkType: Hashable, Sendable, CustomStringConvertible {
    case bool
    case int
    case float
    case string
    /// Any JSON object, not described further (`object`).
    case object
    /// `?T`: the value may be `null`, and a field of this type may be left out.
    case optional(VarlinkType)
    /// `[]T`.
    case array(VarlinkType)
    /// `[string]T`: an object whose members all have type T.
    case dictionary(VarlinkType)
    /// A type the interface defines with `type Name …`.
    case named(String)
    /// `(name: T, …)`.
    case structure([VarlinkField])
    /// `(a, b, c)`: one of these strings.
    case enumeration([String])

    package var description: String {
        switch self {
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .string: "string"
        case .object: "object"
        case .optional(let type): "?\(type)"
        case .array(let type): "[]\(type)"
        case .dictionary(let type): "[string]\(type)"
        case .named(let name): name
        case .structure(let fields): "(\(fields.map { "\($0.name): \($0.type)" }.joined(separator: ", ")))"
        case .enumeration(let names): "(\(names.joined(separator: ", ")))"
        }
    }
}

/// A named member of a structure, a method's input or output, or an error.
package struct VarlinkField: Hashable, Sendable {
    package var name: String
    package var type: VarlinkType

    package init(name: String, type: VarlinkType) {
        self.name = name
        self.type = type
    }
}

/// A method: what it takes and what it returns.
package struct VarlinkMethod: Hashable, Sendable {
    package var name: String
    package var input: [VarlinkField]
    package var output: [VarlinkField]
}

/// One interface, read from its definition in Varlink's interface definition language.
///
/// The definition text is kept as written: it is what `GetInterfaceDescription` returns, and the
/// documentation of the interface (its `#` comments). The parsed form is what calls are checked
/// against, so a call with a missing, extra or mistyped parameter gets `InvalidParameter` before any
/// code of ours sees it.
package struct VarlinkInterface: Hashable, Sendable {
    /// The reverse-domain name, `org.keyport.Exchange`.
    package var name: String
    /// The definition, as written.
    package var description: String
    package var types: [String: VarlinkType]
    package var methods: [String: VarlinkMethod]
    package var errors: [String: [VarlinkField]]
    /// The members' names (types, methods and errors) in the order the definition gives them.
    package var memberNames: [String]

    /// Parses `definition`.
    ///
    /// - Throws: ``VarlinkInterfaceSyntaxError`` naming the line and what was expected.
    package init(_ definition: String) throws(VarlinkInterfaceSyntaxError) {
        var parser = InterfaceParser(definition)
        description = definition
        name = try parser.interfaceName()
        types = [:]
        methods = [:]
        errors = [:]
        memberNames = []
        while let keyword = try parser.keyword() {
            let member = try parser.memberName()
            guard types[member] == nil, methods[member] == nil, errors[member] == nil else {
                throw parser.error("'\(member)' is defined twice")
            }
            memberNames.append(member)
            switch keyword {
            case "type":
                types[member] = try parser.typeDefinition()
            case "method":
                let input = try parser.fields()
                try parser.arrow()
                let output = try parser.fields()
                methods[member] = VarlinkMethod(name: member, input: input, output: output)
            case "error":
                errors[member] = try parser.fields()
            default:
                throw parser.error("'type', 'method' or 'error' was expected, found '\(keyword)'")
            }
        }
        for type in types.values { try check(type, parser) }
        for method in methods.values { for field in method.input + method.output { try check(field.type, parser) } }
        for fields in errors.values { for field in fields { try check(field.type, parser) } }
    }

    /// Every named type must be defined in the interface.
    private func check(_ type: VarlinkType, _ parser: InterfaceParser) throws(VarlinkInterfaceSyntaxError) {
        switch type {
        case .named(let name):
            guard types[name] != nil else {
                throw parser.error("the type '\(name)' is used but not defined", atEnd: true)
            }
        case .optional(let inner), .array(let inner), .dictionary(let inner): try check(inner, parser)
        case .structure(let fields): for field in fields { try check(field.type, parser) }
        case .bool, .int, .float, .string, .object, .enumeration: break
        }
    }
}

extension VarlinkInterface {
    /// Parses a definition that was checked when the program was built (the Varlink generator
    /// parsed it to write the code that carries it): one that does not parse is a bug in the
    /// build, not something a user can meet, so it stops the program with the reason.
    package init(checkedDefinition definition: String) {
        do {
            try self.init(definition)
        } catch {
            preconditionFailure("an interface definition that the build checked does not parse: \(error)")
        }
    }
}

/// Where an interface definition is not valid.
package struct VarlinkInterfaceSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    package var line: Int
    package var message: String

    package var description: String { line > 0 ? "line \(line): \(message)" : message }
}

/// Reads the interface definition language: `#` comments, `interface NAME`, then `type`, `method`
/// and `error` members.
private struct InterfaceParser {
    private let text: [Unicode.Scalar]
    private var position = 0

    init(_ definition: String) {
        text = Array(definition.unicodeScalars)
    }

    func error(_ message: String, atEnd: Bool = false) -> VarlinkInterfaceSyntaxError {
        let upTo = atEnd ? text.count : min(position, text.count)
        let line = 1 + text[..<upTo].lazy.filter { $0 == "\n" }.count
        return VarlinkInterfaceSyntaxError(line: atEnd ? 0 : line, message: message)
    }

    /// Skips spaces, line ends and comments.
    private mutating func skipBlank() {
        while position < text.count {
            if text[position] == "#" {
                while position < text.count, text[position] != "\n" { position += 1 }
            } else if text[position].properties.isWhitespace {
                position += 1
            } else {
                return
            }
        }
    }

    private mutating func word() -> String {
        skipBlank()
        let start = position
        while position < text.count, Self.isWordCharacter(text[position]) { position += 1 }
        return String(String.UnicodeScalarView(text[start..<position]))
    }

    private static func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII
            && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "."
                || scalar == "-")
    }

    private mutating func take(_ scalar: Unicode.Scalar) -> Bool {
        skipBlank()
        guard position < text.count, text[position] == scalar else { return false }
        position += 1
        return true
    }

    private mutating func expect(_ scalar: Unicode.Scalar, _ what: String) throws(VarlinkInterfaceSyntaxError) {
        guard take(scalar) else { throw error("\(what) was expected") }
    }

    mutating func interfaceName() throws(VarlinkInterfaceSyntaxError) -> String {
        guard word() == "interface" else { throw error("a definition starts with 'interface NAME'") }
        let name = word()
        // Reverse-domain: at least two dot-separated labels of letters, digits and inner dashes, the
        // first starting with a letter (`org.varlink.service`, `io.systemd.Resolve`).
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        let valid =
            labels.count >= 2
            && labels.allSatisfy { label in
                !label.isEmpty && label.first != "-" && label.last != "-"
                    && label.unicodeScalars.allSatisfy {
                        $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-")
                    }
            } && labels[0].unicodeScalars.first.map { $0.isASCII && $0.properties.isAlphabetic } == true
        guard valid else { throw error("'\(name)' is not an interface name (reverse-domain: org.example.thing)") }
        return name
    }

    /// The next member's keyword, or `nil` at the end.
    mutating func keyword() throws(VarlinkInterfaceSyntaxError) -> String? {
        skipBlank()
        guard position < text.count else { return nil }
        let keyword = word()
        guard !keyword.isEmpty else {
            throw error("'type', 'method' or 'error' was expected, found '\(text[position])'")
        }
        return keyword
    }

    /// A member name: an uppercase letter, then letters and digits.
    mutating func memberName() throws(VarlinkInterfaceSyntaxError) -> String {
        let name = word()
        guard let first = name.unicodeScalars.first, ("A"..."Z").contains(first),
            name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) })
        else { throw error("'\(name)' is not a member name (it starts with an uppercase letter; letters and digits)") }
        return name
    }

    private mutating func fieldName() throws(VarlinkInterfaceSyntaxError) -> String {
        let name = word()
        guard let first = name.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
            name.unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_")
            }),
            !name.hasSuffix("_"), !name.contains("__")
        else { throw error("'\(name)' is not a field name (a letter, then letters, digits and single underscores)") }
        return name
    }

    mutating func arrow() throws(VarlinkInterfaceSyntaxError) {
        guard take("-"), take(">") else { throw error("'->' between a method's input and output was expected") }
    }

    /// `(name: type, …)`.
    mutating func fields() throws(VarlinkInterfaceSyntaxError) -> [VarlinkField] {
        guard case .structure(let fields) = try parenthesised(allowEnumeration: false) else {
            throw error("fields '(name: type, …)' were expected")
        }
        return fields
    }

    /// After `type Name`: a structure or an enumeration.
    mutating func typeDefinition() throws(VarlinkInterfaceSyntaxError) -> VarlinkType {
        try parenthesised(allowEnumeration: true)
    }

    private mutating func parenthesised(allowEnumeration: Bool) throws(VarlinkInterfaceSyntaxError) -> VarlinkType {
        try expect("(", "'('")
        if take(")") { return .structure([]) }
        var fields: [VarlinkField] = []
        var names: [String] = []
        repeat {
            let name = try fieldName()
            if take(":") {
                guard names.isEmpty else { throw error("an enumeration's values have no types") }
                guard !fields.contains(where: { $0.name == name }) else {
                    throw error("the field '\(name)' appears twice")
                }
                fields.append(VarlinkField(name: name, type: try type()))
            } else {
                guard fields.isEmpty else { throw error("':' and a type were expected after '\(name)'") }
                guard !names.contains(name) else { throw error("the value '\(name)' appears twice") }
                names.append(name)
            }
        } while take(",")
        try expect(")", "',' or ')'")
        if !names.isEmpty {
            guard allowEnumeration else { throw error("':' and a type were expected after '\(names[0])'") }
            return .enumeration(names)
        }
        return .structure(fields)
    }

    private mutating func type() throws(VarlinkInterfaceSyntaxError) -> VarlinkType {
        if take("?") {
            let inner = try type()
            if case .optional = inner { throw error("'??' is not a type") }
            return .optional(inner)
        }
        if take("[") {
            if take("]") { return .array(try type()) }
            guard word() == "string", take("]") else { throw error("'[]' or '[string]' was expected") }
            return .dictionary(try type())
        }
        skipBlank()
        if position < text.count, text[position] == "(" { return try parenthesised(allowEnumeration: true) }
        let name = word()
        switch name {
        case "bool": return .bool
        case "int": return .int
        case "float": return .float
        case "string": return .string
        case "object": return .object
        case "": throw error("a type was expected")
        default:
            guard let first = name.unicodeScalars.first, ("A"..."Z").contains(first) else {
                throw error("'\(name)' is not a type (bool, int, float, string, object, or a defined type's name)")
            }
            return .named(name)
        }
    }
}
