// Writes the Swift of the CXF credential types made only of editable fields, from their one
// definition (`*.cxftypes`, whose header says how it reads). Run by the CXFTypes build-tool plugin:
//
//   CXFTypesGenerate cxf|apple OUTPUT.swift INPUT.cxftypes
//
// `cxf`, in CredentialExchangeFormat: each type's `CXF` struct and its list of members (the
// decoder, the encoder and the validator walk it). `apple`, in AuthenticationServices:
// Apple's `ASImportableCredential` struct of each credential, Codable through its table of pairs
// with the CXF members. The standard library only: it runs in every build of AuthenticationServices,
// app authors' too.
import BuildToolSupport

/// CXF 1.0's field types (`CXF.FieldType`), as the definition writes them.
let fieldTypes = [
    "string", "concealed-string", "email", "number", "boolean", "date", "year-month", "wifi-network-security-type",
    "subdivision-code", "country-code",
]

struct Member {
    var key: String
    var appleName: String
    var fieldType: String
    var doc = ""
}

struct CredentialType {
    var wireType: String
    var cxfName: String
    var appleName: String
    var defaulted: Set<String>
    var allDefaulted: Bool
    var doc = ""
    var members: [Member] = []
}

/// Reads the definition; a line it cannot read fails the build, naming the line.
func parse(_ text: String, path: String) -> [CredentialType] {
    var types: [CredentialType] = []
    for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let line = String(raw.trimmingWhitespace)
        if line.isEmpty || line.hasPrefix("#") { continue }
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        let place = "\(path):\(index + 1)"
        switch words[0] {
        case "credential":
            guard words.count == 4 || words.count == 5 else {
                fail("\(place): expected `credential WIRE-TYPE CXF-NAME APPLE-NAME [defaults:…]`")
            }
            var defaulted: [String] = []
            if words.count == 5 {
                guard words[4].hasPrefix("defaults:") else { fail("\(place): expected `defaults:` after the names") }
                defaulted = words[4].dropFirst("defaults:".count).split(separator: ",").map(String.init)
            }
            types.append(
                CredentialType(
                    wireType: words[1],
                    cxfName: words[2],
                    appleName: words[3],
                    defaulted: Set(defaulted),
                    allDefaulted: defaulted == ["*"]
                )
            )
        case "member":
            guard words.count == 3 else { fail("\(place): expected `member KEY[:APPLE-NAME] FIELD-TYPE`") }
            // A type the codec does not know would leave the member's values unchecked, and a
            // misspelt `concealed-string` would stop treating them as secrets.
            guard fieldTypes.contains(words[2]) else {
                fail("\(place): `\(words[2])` is not a CXF field type (\(fieldTypes.joined(separator: ", ")))")
            }
            guard !types.isEmpty else { fail("\(place): a member before any `credential`") }
            let names = words[1].split(separator: ":").map(String.init)
            guard names.count == 1 || names.count == 2 else { fail("\(place): expected KEY or KEY:APPLE-NAME") }
            types[types.count - 1].members.append(
                Member(key: names[0], appleName: names.last ?? names[0], fieldType: words[2])
            )
        default:
            guard !types.isEmpty else { fail("\(place): text before any `credential`") }
            // A description never starts with a keyword: such a line is a misspelt declaration.
            guard !["credential", "member"].contains(words[0].lowercased()) else {
                fail("\(place): `\(words[0])` must be the line's first word, in lower case")
            }
            let last = types.count - 1
            if types[last].members.isEmpty {
                types[last].doc += types[last].doc.isEmpty ? line : " " + line
            } else {
                let member = types[last].members.count - 1
                let doc = types[last].members[member].doc
                types[last].members[member].doc = doc.isEmpty ? line : doc + " " + line
            }
        }
    }
    for type in types {
        guard !type.doc.isEmpty, type.members.allSatisfy({ !$0.doc.isEmpty }) else {
            fail("\(path): every credential and member of `\(type.wireType)` needs its description")
        }
        let unknown = type.defaulted.subtracting(type.members.map(\.appleName) + ["*"])
        guard unknown.isEmpty else {
            fail("\(path): `\(type.wireType)` defaults \(unknown.sorted()), which it has not")
        }
    }
    return types
}

extension Substring {
    var trimmingWhitespace: Substring {
        var s = self
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" || s.last == "\r" { s.removeLast() }
        return s
    }
}

extension String {
    /// `concealed-string` → `concealedString`: the Swift case of a field type.
    var camelCased: String {
        let parts = split(separator: "-")
        return parts.enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.capitalizedFirst }.joined()
    }
}

extension StringProtocol {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}

/// `///` lines of `text`, wrapped before 120 columns at `indent`.
func docComment(_ text: String, indent: String) -> String {
    var lines: [String] = []
    var line = ""
    for word in text.split(separator: " ") {
        if !line.isEmpty && indent.count + 4 + line.count + 1 + word.count > 120 {
            lines.append(line)
            line = ""
        }
        line += line.isEmpty ? String(word) : " " + word
    }
    lines.append(line)
    return lines.map { "\(indent)/// \($0)\n" }.joined()
}

func cxfSource(_ types: [CredentialType]) -> String {
    var out = "// Generated by CXFTypesGenerate from FieldCredentials.cxftypes: edit that file instead.\n\n"
    out += "extension CXF {\n"
    for type in types {
        out += docComment("`\(type.wireType)`: \(type.doc)", indent: "    ")
        out += "    public struct \(type.cxfName): Hashable, Sendable {\n"
        for member in type.members {
            out += docComment("`\(member.key)`: \(member.doc)", indent: "        ")
            out += "        public var \(member.key): EditableField?\n"
        }
        out += docComment(
            "Members this library does not know, in the order they were read. ``CXF/Encoder`` writes them back after the known ones.",
            indent: "        "
        )
        out += "        public var unknownMembers: [JSONMember]\n\n"
        let article = "aeiou".contains(type.wireType.prefix(1)) ? "An" : "A"
        out += docComment("\(article) `\(type.wireType)` credential; every member is optional.", indent: "        ")
        out += "        public init(\n"
        for member in type.members { out += "            \(member.key): EditableField? = nil,\n" }
        out += "            unknownMembers: [JSONMember] = []\n        ) {\n"
        for member in type.members { out += "            self.\(member.key) = \(member.key)\n" }
        out += "            self.unknownMembers = unknownMembers\n        }\n    }\n\n"
    }
    out.removeLast()
    out += "}\n"
    for type in types {
        out += "\nextension CXF.\(type.cxfName): SchemaObject {\n"
        out += "    package static let schema = ObjectSchema(credential: \"\(type.wireType)\", of: Self.self)\n"
        out += "    package static var blank: Self { Self() }\n\n"
        out +=
            "    package mutating func members<V: MemberVisitor>(_ v: inout V, _ c: inout V.Context) throws(V.VisitError) {\n"
        for member in type.members {
            out +=
                "        try v.optional(\"\(member.key)\", &\(member.key), .field(.\(member.fieldType.camelCased)), &c)\n"
        }
        out += "    }\n}\n"
    }
    return out
}

func appleSource(_ types: [CredentialType]) -> String {
    var out = "// Generated by CXFTypesGenerate from FieldCredentials.cxftypes: edit that file instead.\n\n"
    out += "import CredentialExchangeFormat\n\nextension ASImportableCredential {\n"
    for type in types {
        let renames = type.members.filter { $0.appleName != $0.key }
            .map { "`\($0.appleName)` is the member `\($0.key)`" }
        let renamed = renames.isEmpty ? "" : " In CXF JSON \(renames.joined(separator: ", and "))."
        out += docComment(type.doc.capitalizedFirst + renamed, indent: "    ")
        out += "    public struct \(type.appleName): Codable, Hashable, Sendable {\n"
        for member in type.members {
            out += docComment(member.doc.capitalizedFirst, indent: "        ")
            out += "        public var \(member.appleName): ASImportableEditableField?\n"
        }
        out += "\n" + docComment("Creates the credential from its fields.", indent: "        ")
        out += "        public init(\n"
        out += type.members.map { member in
            let defaulted = type.allDefaulted || type.defaulted.contains(member.appleName)
            return "            \(member.appleName): ASImportableEditableField?\(defaulted ? " = nil" : "")"
        }.joined(separator: ",\n")
        out += "\n        ) {\n"
        for member in type.members { out += "            self.\(member.appleName) = \(member.appleName)\n" }
        out += "        }\n"
        out += "    }\n\n"
    }
    out.removeLast()
    out += "}\n"
    for type in types {
        out += "\nextension ASImportableCredential.\(type.appleName): CXFFieldCredential {\n"
        out += "    init() {}\n"
        out += "    static let cxfFields = CXFFieldTable<Self, CXF.\(type.cxfName)>([\n"
        for member in type.members {
            out += "        (\"\(member.key)\", \\.\(member.appleName), \\.\(member.key)),\n"
        }
        out += "    ])\n}\n"
    }
    return out
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 3, arguments[0] == "cxf" || arguments[0] == "apple" else {
    fail("usage: CXFTypesGenerate cxf|apple OUTPUT.swift INPUT.cxftypes")
}
guard let text = readText(arguments[2]) else { fail("cannot open \(arguments[2])") }
let types = parse(text, path: arguments[2])
writeText(arguments[0] == "cxf" ? cxfSource(types) : appleSource(types), to: arguments[1])
