import BuildToolSupport
import VarlinkIDL

/// Writes the Swift for one Varlink interface: a namespace named after the interface's last label
/// (`org.keyport.Exchange` → `Exchange`) holding its name, its definition as written (what
/// `GetInterfaceDescription` returns) and parsed, and one declaration per member:
///
/// - `type Name (…)` → `struct Name` (or `enum Name: String` for an enumeration);
/// - `method Name(…) -> (…)` → `enum Name` with `name` (the full method name), `Parameters` and
///   `Reply`;
/// - `error Name (…)` → `struct Name` of its parameters, with `name` (the full error name);
/// - and `protocol Server`, what a server of the interface implements: a requirement per method
///   (`func name(_: Name.Parameters, request:) async throws(VarlinkError) -> Name.Reply`), with
///   `dispatch` written for it (``VarlinkInterfaceServer``).
///
/// A type that an earlier interface of the same module (by name) defines alike — same name, same
/// fields, and the types they name alike too — is that interface's Swift type: here a typealias.
/// Varlink has no imports, so `org.keyport.AutoFill` and `org.keyport.IdentityStore` each define
/// `ServiceIdentifier`; in Swift they are one type, and keyportd passes one on without copying it
/// field by field.
///
/// A field whose type is written inline (`kind: (password, oneTimeCode)`) gets a type nested in
/// its struct, named after the field (`Kind`). Every value type reads and writes its own JSON
/// (`VarlinkCodable`), so the programs that use it need no Foundation. The code names every type by
/// its module (`Swift.String`, `VarlinkCore.RawJSON`, `Module.Namespace.Name`), so no name an
/// interface defines can capture another.
package struct SwiftGenerator {
    /// Why an interface cannot be written as Swift (the generator refuses rather than guess).
    package struct DefinitionError: Error, CustomStringConvertible {
        package var description: String
    }

    package let interface: VarlinkInterface
    /// The module the code is compiled into: named types are qualified by it.
    package let module: String
    /// The interface's Swift name.
    package let namespace: String
    /// Each member's documentation: the `#` comment right above it in the definition.
    private let comments: [String: [String]]
    /// The types another interface of the module defines alike, by name: the Swift type to name.
    private var aliases: [String: String] = [:]

    /// `fileName` is the definition's file name without `.varlink`: when it is not the interface's
    /// name (it has no dot: `VarlinkService.varlink`), it names the namespace instead of the
    /// interface's last label, for an interface whose label would clash with another name.
    package init(definition: String, fileName: String, module: String) throws {
        do {
            interface = try VarlinkInterface(definition)
        } catch {
            throw DefinitionError(description: "the definition does not parse: \(error)")
        }
        self.module = module
        if fileName.contains(".") {
            guard fileName == interface.name else {
                throw DefinitionError(
                    description:
                        "the file defines \(interface.name): name it \(interface.name).varlink, or give it the Swift name of its namespace"
                )
            }
            namespace = Self.typeName(String(interface.name.split(separator: ".").last ?? ""))
        } else {
            guard Self.isIdentifier(fileName) else {
                throw DefinitionError(description: "the file's name \(fileName) is not a Swift name for the namespace")
            }
            namespace = fileName
        }
        guard namespace != module else {
            throw DefinitionError(
                description:
                    "the interface's Swift name \(namespace) is the module's own name: the generated code could not name its types by module; rename the target"
            )
        }
        guard Self.isIdentifier(namespace) else {
            throw DefinitionError(
                description: "the interface's Swift name \(namespace) cannot name a type; give the file another name"
            )
        }
        // The generated code names types by module: a member with a module's name would capture
        // those names.
        for member in interface.memberNames where ["Swift", "VarlinkCore", "VarlinkIDL", module].contains(member) {
            throw DefinitionError(
                description: "the member \(member) has a module's name, which the generated code must be able to use"
            )
        }
        if interface.memberNames.contains("Server") {
            throw DefinitionError(description: "the member Server has the name of the generated servers' protocol")
        }
        var functions: [String: String] = [:]
        for method in interface.memberNames where interface.methods[method] != nil {
            if let other = functions.updateValue(method, forKey: Self.functionName(method)) {
                throw DefinitionError(
                    description:
                        "the methods \(other) and \(method) would both be the server's function \(Self.functionName(method))"
                )
            }
        }
        comments = Self.comments(in: definition)
    }

    /// The Swift of several definitions (each a file name without `.varlink`, and its text) compiled
    /// into `module`, by file name: types they define alike are one.
    package static func sources(
        of definitions: [(fileName: String, text: String)],
        module: String
    ) throws -> [(fileName: String, source: String)] {
        var generators: [SwiftGenerator] = []
        for definition in definitions {
            do {
                generators.append(
                    try SwiftGenerator(definition: definition.text, fileName: definition.fileName, module: module)
                )
            } catch {
                throw DefinitionError(description: "\(definition.fileName).varlink: \(error)")
            }
        }
        var namespaces: [String: String] = [:]
        for generator in generators {
            if let other = namespaces.updateValue(generator.interface.name, forKey: generator.namespace) {
                throw DefinitionError(
                    description:
                        "\(other) and \(generator.interface.name) would both be \(generator.namespace) in Swift; give one's file another name"
                )
            }
        }
        // The first interface, by name, to define a type owns it; the others name it.
        var owners: [String: String] = [:]
        for index in generators.indices.sorted(by: { generators[$0].interface.name < generators[$1].interface.name }) {
            let generator = generators[index]
            for name in generator.interface.memberNames where generator.interface.types[name] != nil {
                let key = name + " " + generator.shape(of: .named(name), visiting: [])
                if let owner = owners[key] {
                    generators[index].aliases[name] = "\(module).\(owner).\(escaped(name))"
                } else {
                    owners[key] = generator.namespace
                }
            }
        }
        return try zip(definitions, generators).map { ($0.fileName, try $1.source()) }
    }

    /// A type written out whole: the types it names replaced by their definitions (a type that
    /// names itself, by its name), so that two interfaces' types compare by what they are.
    private func shape(of type: VarlinkType, visiting: Set<String>) -> String {
        switch type {
        case .named(let name):
            guard !visiting.contains(name), let defined = interface.types[name] else { return name }
            return "\(name)=\(shape(of: defined, visiting: visiting.union([name])))"
        case .optional(let inner): return "?" + shape(of: inner, visiting: visiting)
        case .array(let inner): return "[]" + shape(of: inner, visiting: visiting)
        case .dictionary(let inner): return "[string]" + shape(of: inner, visiting: visiting)
        case .structure(let fields):
            return "(" + fields.map { "\($0.name): \(shape(of: $0.type, visiting: visiting))" }.joined(separator: ", ")
                + ")"
        case .bool, .int, .float, .string, .object, .enumeration: return type.description
        }
    }

    /// The file's text.
    package func source() throws -> String {
        var out = """
            // Generated from \(interface.name).varlink by VarlinkGenerate (the VarlinkInterfaces
            // build-tool plugin). Edit the definition, not this file.

            """
        if module != "VarlinkCore" { out += "import VarlinkCore\n" }
        out += "\n"
        out += "/// `\(interface.name)`, generated from its definition.\n"
        if let comment = comments[""], !comment.isEmpty {
            out += "///\n"
            for line in comment { out += "///\(line.isEmpty ? "" : " ")\(line)\n" }
        }
        out += "package enum \(namespace) {\n"
        out += "    /// The interface's name.\n"
        out += "    package static let name = \(Self.quoted(interface.name))\n\n"
        out += "    /// The definition as written: what `GetInterfaceDescription` returns.\n"
        out += "    package static let definition = \(rawStringLiteral(interface.description, indent: "    "))\n\n"
        out += "    /// The definition, parsed: what calls are checked against.\n"
        out += "    package static let interface = VarlinkCore.VarlinkInterface(checkedDefinition: definition)\n"
        for member in interface.memberNames {
            out += "\n"
            if let alias = aliases[member] {
                out += documentation(member, indent: "    ")
                out += "    package typealias \(Self.escaped(member)) = \(alias)\n"
            } else if let type = interface.types[member] {
                out += try declaration(named: member, of: type, path: member, indent: "    ", documented: member)
            } else if let method = interface.methods[member] {
                out += try methodDeclaration(method)
            } else if let fields = interface.errors[member] {
                out += documentation(member, indent: "    ")
                out += try structure(
                    named: member,
                    fields: fields,
                    path: member,
                    indent: "    ",
                    conformances: "VarlinkCore.VarlinkErrorType, Swift.Hashable",
                    header: [
                        "/// `\(interface.name).\(member)`.",
                        "package static let name = \(Self.quoted("\(interface.name).\(member)"))",
                    ]
                )
            }
        }
        out += serverProtocol()
        out += "}\n"
        out += serverDispatch()
        return out
    }

    // MARK: Servers

    /// The methods, in the definition's order.
    private var methods: [VarlinkMethod] { interface.memberNames.compactMap { interface.methods[$0] } }

    /// `protocol Server`, in the namespace: a requirement per method. The parameters are the
    /// method's to keep (`consuming`): one that holds a large document can take the only
    /// reference to its bytes, and wipe them.
    private func serverProtocol() -> String {
        var out = "\n    /// What a server of `\(interface.name)` implements: each method, with its parameters and\n"
        out += "    /// reply typed. A method the definition adds and a server leaves out does not compile.\n"
        out += "    package protocol Server: VarlinkCore.VarlinkInterfaceServer {\n"
        // Restated, so that a server's methods tell what it is (a requirement only of the
        // protocol above would not).
        out += "        associatedtype Request\n\n"
        for (index, method) in methods.enumerated() {
            if index > 0 { out += "\n" }
            out += documentation(method.name, indent: "        ")
            out += "        func \(Self.escaped(Self.functionName(method.name)))(\n"
            out += "            _ parameters: consuming \(qualified(method)).Parameters,\n"
            out += "            request: Request\n"
            out += "        ) async throws(VarlinkCore.VarlinkError) -> \(qualified(method)).Reply\n"
        }
        out += "    }\n"
        return out
    }

    /// `dispatch` for `Server`: each method admitted (``VarlinkInterfaceServer/admit(_:request:)``),
    /// its parameters read, its requirement called, its reply written.
    private func serverDispatch() -> String {
        let server = "\(module).\(namespace).Server"
        var out = "\nextension \(server) {\n"
        out += "    package static var interface: VarlinkCore.VarlinkInterface { \(module).\(namespace).interface }\n\n"
        out += "    package func dispatch(\n"
        out += "        method: Swift.String,\n"
        out += "        parameters: VarlinkCore.RawJSON,\n"
        out += "        request: Request\n"
        out += "    ) async throws(VarlinkCore.VarlinkError) -> VarlinkCore.RawJSON {\n"
        out += "        switch method {\n"
        for method in methods {
            out += "        case \(Self.quoted(method.name)):\n"
            out += "            try await admit(\(qualified(method)).name, request: request)\n"
            out += "            return VarlinkCore.RawJSON(\n"
            out += "                encoding: try await \(Self.escaped(Self.functionName(method.name)))(\n"
            out += "                    try Self.parameters(parameters, as: \(qualified(method)).Parameters.self),\n"
            out += "                    request: request\n"
            out += "                )\n"
            out += "            )\n"
        }
        out += "        default:\n"
        out +=
            "            throw VarlinkCore.VarlinkError.methodNotFound(\(module).\(namespace).name + \".\" + method)\n"
        out += "        }\n"
        out += "    }\n"
        out += "}\n"
        return out
    }

    /// A method's enum, by module.
    private func qualified(_ method: VarlinkMethod) -> String {
        "\(module).\(namespace).\(Self.escaped(method.name))"
    }

    // MARK: Members

    /// A method's enum. Methods that take the same fields share one `Parameters` type (the first
    /// one's; the others name it with a typealias), and those that reply the same fields one
    /// `Reply`, so code can handle `Save`, `Remove` and `Replace` alike.
    private func methodDeclaration(_ method: VarlinkMethod) throws -> String {
        let full = "\(interface.name).\(method.name)"
        var out = documentation(method.name, indent: "    ")
        out += "    package enum \(Self.escaped(method.name)): VarlinkCore.VarlinkMethodType {\n"
        out += "        /// `\(full)`.\n"
        out += "        package static let name = \(Self.quoted(full))\n\n"
        out += "        /// What `\(method.name)` takes.\n"
        out += try shared("Parameters", of: method, fields: method.input)
        out += "\n        /// What `\(method.name)` replies.\n"
        out += try shared("Reply", of: method, fields: method.output)
        out += "    }\n"
        return out
    }

    /// `Parameters` or `Reply`: a typealias to the first method's with the same fields, else a
    /// struct.
    private func shared(_ name: String, of method: VarlinkMethod, fields: [VarlinkField]) throws -> String {
        let key = VarlinkType.structure(fields).description
        let first = interface.memberNames.compactMap { interface.methods[$0] }.first {
            VarlinkType.structure(name == "Parameters" ? $0.input : $0.output).description == key
        }
        if let first, first.name != method.name {
            return "        package typealias \(name) = \(module).\(namespace).\(Self.escaped(first.name)).\(name)\n"
        }
        return try structure(
            named: name,
            fields: fields,
            path: "\(method.name).\(name)",
            indent: "        ",
            conformances: "VarlinkCore.VarlinkCodable, Swift.Hashable",
            header: []
        )
    }

    /// A named or inline type: a struct, or an enum for an enumeration.
    private func declaration(
        named name: String,
        of type: VarlinkType,
        path: String,
        indent: String,
        documented member: String?
    ) throws -> String {
        var out = member.map { documentation($0, indent: indent) } ?? ""
        switch type {
        case .structure(let fields):
            out += try structure(
                named: name,
                fields: fields,
                path: path,
                indent: indent,
                conformances: "VarlinkCore.VarlinkCodable, Swift.Hashable",
                header: []
            )
        case .enumeration(let values):
            out += enumeration(named: name, values: values, indent: indent)
        default:
            throw DefinitionError(description: "\(path): a type definition is a structure or an enumeration")
        }
        return out
    }

    private func enumeration(named name: String, values: [String], indent: String) -> String {
        var out =
            "\(indent)package enum \(Self.escaped(name)): Swift.String, VarlinkCore.VarlinkCodable, Swift.Hashable, Swift.CaseIterable {\n"
        for value in values { out += "\(indent)    case \(Self.escaped(value))\n" }
        let listed = values.joined(separator: ", ")
        out += """

            \(indent)    package init(varlink cursor: inout VarlinkCore.JSONCursor) throws(VarlinkCore.VarlinkDecodingError) {
            \(indent)        let value = try Swift.String(varlink: &cursor)
            \(indent)        guard let known = Self(rawValue: value) else {
            \(indent)            throw VarlinkCore.VarlinkDecodingError(
            \(indent)                .invalidValue,
            \(indent)                "\\"\\(VarlinkCore.VarlinkDecodingError.shown(value))\\" is not one of \(listed)"
            \(indent)            )
            \(indent)        }
            \(indent)        self = known
            \(indent)    }

            \(indent)    package func write(varlink json: inout [Swift.UInt8]) { rawValue.write(varlink: &json) }
            \(indent)}

            """
        return out
    }

    private func structure(
        named name: String,
        fields: [VarlinkField],
        path: String,
        indent: String,
        conformances: String,
        header: [String]
    ) throws -> String {
        let inner = indent + "    "
        // The types written inline in the fields, nested here under the fields' names.
        var nested: [(name: String, type: VarlinkType, field: String)] = []
        var types: [String] = []
        for field in fields {
            let (swift, inline) = try swiftType(field.type, field: field.name, path: "\(path).\(field.name)")
            types.append(swift)
            if let inline {
                // Its name is its field's, capitalised: it could only meet another field's name
                // (two inline types of one name would need a field of that name too).
                if fields.contains(where: { $0.name == inline.name }) {
                    throw DefinitionError(
                        description:
                            "\(path): the field \(inline.name) and the inline type of the field \(field.name) would have one name"
                    )
                }
                nested.append((inline.name, inline.type, field.name))
            }
        }
        var out = "\(indent)package struct \(Self.escaped(name)): \(conformances) {\n"
        for line in header { out += "\(inner)\(line)\n" }
        if !header.isEmpty { out += "\n" }
        for item in nested {
            out += try declaration(
                named: item.name,
                of: item.type,
                path: "\(path).\(item.field)",
                indent: inner,
                documented: nil
            )
            out += "\n"
        }
        for (field, type) in zip(fields, types) {
            out += "\(inner)package var \(Self.escaped(field.name)): \(type)\n"
        }
        if !fields.isEmpty { out += "\n" }
        // The memberwise initializer; optional fields default to nil. Each parameter has an inner
        // name of its own, so a field named `self` does not hide the instance.
        let parameters = zip(fields, types).map { field, type in
            "\(Self.label(field.name)) v_\(field.name): \(type)\(field.type.isOptional ? " = nil" : "")"
        }
        out += "\(inner)package init(\(parameters.joined(separator: ", "))) {\n"
        for field in fields { out += "\(inner)    self.\(Self.escaped(field.name)) = v_\(field.name)\n" }
        out += "\(inner)}\n\n"
        // Reading: every member into a local, then the required ones checked.
        out +=
            "\(inner)package init(varlink cursor: inout VarlinkCore.JSONCursor) throws(VarlinkCore.VarlinkDecodingError) {\n"
        for (field, type) in zip(fields, types) {
            let local = type.hasSuffix("?") ? type : "\(type)?"
            out += "\(inner)    var v_\(field.name): \(local) = nil\n"
        }
        out += "\(inner)    try cursor.decodeMembers { cursor, member throws(VarlinkCore.VarlinkDecodingError) in\n"
        out += "\(inner)        switch member {\n"
        for (field, type) in zip(fields, types) {
            out +=
                "\(inner)        case \(Self.quoted(field.name)): v_\(field.name) = try cursor.decode((\(type)).self, member: member)\n"
        }
        out += "\(inner)        default: try cursor.skipMember()\n"
        out += "\(inner)        }\n"
        out += "\(inner)    }\n"
        for field in fields where !field.type.isOptional {
            out += "\(inner)    guard let v_\(field.name) else {\n"
            out +=
                "\(inner)        throw VarlinkCore.VarlinkDecodingError(.missing, path: \(Self.quoted(field.name)), \"missing\")\n"
            out += "\(inner)    }\n"
        }
        out +=
            "\(inner)    self.init(\(fields.map { "\(Self.label($0.name)): v_\($0.name)" }.joined(separator: ", ")))\n"
        out += "\(inner)}\n\n"
        // Writing, in the definition's order.
        out += "\(inner)package func write(varlink json: inout [Swift.UInt8]) {\n"
        out += "\(inner)    \(fields.isEmpty ? "let" : "var") object = VarlinkCore.JSONObjectWriter(into: &json)\n"
        for field in fields {
            let key = Self.quoted("\"\(field.name)\":")
            out += "\(inner)    object.member(\(key), self.\(Self.escaped(field.name)), into: &json)\n"
        }
        out += "\(inner)    object.end(into: &json)\n"
        out += "\(inner)}\n"
        out += "\(indent)}\n"
        return out
    }

    // MARK: Types

    /// The Swift type of `type`, and the inline type it needs nested beside it (named after
    /// `field`), if any.
    private func swiftType(
        _ type: VarlinkType,
        field: String,
        path: String
    ) throws -> (String, (name: String, type: VarlinkType)?) {
        switch type {
        case .bool: return ("Swift.Bool", nil)
        case .int: return ("Swift.Int", nil)
        case .float: return ("Swift.Double", nil)
        case .string: return ("Swift.String", nil)
        case .object: return ("VarlinkCore.RawJSON", nil)
        case .optional(let inner):
            let (swift, inline) = try swiftType(inner, field: field, path: path)
            return ("\(swift)?", inline)
        case .array(let inner):
            let (swift, inline) = try swiftType(inner, field: field, path: path)
            return ("[\(swift)]", inline)
        case .dictionary(let inner):
            let (swift, inline) = try swiftType(inner, field: field, path: path)
            return ("[Swift.String: \(swift)]", inline)
        case .named(let name):
            return ("\(module).\(namespace).\(Self.escaped(name))", nil)
        case .structure, .enumeration:
            let name = Self.inlineTypeName(field)
            return ("Self.\(name)", (name, type))
        }
    }

    // MARK: Names and text

    /// An inline type's name: its field's, capitalised; a few names Swift reserves after `Self.`
    /// get an underscore.
    static func inlineTypeName(_ field: String) -> String {
        let name = typeName(field)
        return ["Type", "Protocol", "Self", "Any"].contains(name) ? name + "_" : name
    }

    /// `word` with its first letter capitalised, each `-` dropped and the letter after it
    /// capitalised; an underscore first when it would start with a digit.
    static func typeName(_ word: String) -> String {
        var out = ""
        var upper = true
        for character in word {
            if character == "-" {
                upper = true
                continue
            }
            out += upper ? character.uppercased() : String(character)
            upper = false
        }
        if let first = out.first, first.isNumber { out = "_" + out }
        return out
    }

    /// A method's Swift function name: its leading capitals lowercased, but for the one that
    /// begins the next word (`RequestCredential` → `requestCredential`, `URLFor` → `urlFor`).
    package static func functionName(_ method: String) -> String {
        let letters = Array(method)
        var upper = 0
        while upper < letters.count, letters[upper].isUppercase { upper += 1 }
        let lowered = upper == letters.count || upper <= 1 ? upper : upper - 1
        return String(letters[..<lowered]).lowercased() + String(letters[lowered...])
    }

    /// Swift's keywords, written in backquotes where a field, value or member has their name.
    private static let keywords: Set<String> = [
        "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension", "fileprivate", "func",
        "import", "init", "inout", "internal", "let", "nonisolated", "open", "operator", "private",
        "precedencegroup", "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var",
        "break", "case", "catch", "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if",
        "in", "repeat", "return", "throw", "switch", "where", "while", "Any", "as", "await", "false", "is", "nil",
        "self", "Self", "super", "throws", "true", "try", "Type", "Protocol", "package",
    ]

    /// Whether `name` can name a type as it is: ASCII letters, digits and underscores, not a digit
    /// first, not a keyword.
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first), !keywords.contains(name) else {
            return false
        }
        return name.unicodeScalars.allSatisfy {
            $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_")
        }
    }

    /// An argument label: keywords need no backquotes there, but for these three.
    static func label(_ name: String) -> String { ["inout", "var", "let"].contains(name) ? "`\(name)`" : name }

    static func escaped(_ name: String) -> String { keywords.contains(name) ? "`\(name)`" : name }

    /// A Swift string literal of `text`.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// The member's documentation as `///` lines.
    private func documentation(_ member: String, indent: String) -> String {
        (comments[member] ?? []).map { "\(indent)///\($0.isEmpty ? "" : " ")\($0)\n" }.joined()
    }

    /// The comment block right above each member (keyed by its name) and above `interface` (key
    /// ""), without the `#`s.
    static func comments(in definition: String) -> [String: [String]] {
        var found: [String: [String]] = [:]
        var block: [String] = []
        for line in definition.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.hasPrefix("#") {
                var text = trimmed.dropFirst()
                if text.first == " " { text = text.dropFirst() }
                block.append(String(text))
                continue
            }
            let words = trimmed.split(whereSeparator: { $0 == " " || $0 == "(" || $0 == "\t" })
            if words.count >= 2, ["type", "method", "error"].contains(words[0]) {
                found[String(words[1])] = block
            } else if words.first == "interface" {
                found[""] = block
            }
            block = []
        }
        return found
    }
}

extension VarlinkType {
    /// `?T`: the member may be left out.
    var isOptional: Bool {
        if case .optional = self { return true }
        return false
    }
}
