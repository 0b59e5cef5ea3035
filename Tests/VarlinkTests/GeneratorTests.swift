import Foundation
import Testing
import Varlink
import VarlinkGeneration

@Suite("the Swift generated from interface definitions")
struct GeneratorTests {
    private static let everything = CornerCases.Everything(
        default: true,
        self: nil,
        json: "a \"quoted\" \\ value\n",
        name: "ünïcode 😀",
        Type: .b,
        nested: .init(inner: .init(deep: ["x", ""]), kind: .self),
        map: ["one": 1.5, "none": nil, "big": 1e300],
        list: [RawJSON(bytes: Array(#"{"any":[1,{"thing":null}]}"#.utf8))],
        text: CornerCases.String(value: "named String"),
        maybe: [[1, -2], []],
        count: Int.min
    )

    @Test("keywords, Swift's own names, inline and nested types, every container: written and read back")
    func roundTrip() throws {
        let json = RawJSON(encoding: Self.everything)
        #expect(try json.decode(CornerCases.Everything.self) == Self.everything, "\(json)")
        // Foundation reads the same JSON: keys as the definition names them, nil left out, a nil in
        // a map written as null.
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.bytes)) as? [String: Any])
        #expect(
            Set(object.keys) == ["default", "json", "name", "Type", "nested", "map", "list", "text", "maybe", "count"]
        )
        #expect(object["Type"] as? String == "b")
        #expect((object["nested"] as? [String: Any])?["kind"] as? String == "self")
        #expect((object["map"] as? [String: Any])?["none"] is NSNull)
        #expect(object["json"] as? String == "a \"quoted\" \\ value\n")
        #expect((object["count"] as? NSNumber)?.int64Value == Int64.min)
        #expect(CornerCases.Kind.allCases.map(\.rawValue) == ["default", "self", "Type", "case_2"])
    }

    @Test("methods that take or reply the same fields share one type; an error keeps its field named `name`")
    func sharedAndErrors() {
        #expect(CornerCases.Same.Parameters.self == CornerCases.Use.Parameters.self)
        #expect(CornerCases.Same.Reply.self == CornerCases.Use.Reply.self)
        #expect(CornerCases.Use.name == "org.example.corner-cases.Use")
        let failed = CornerCases.Failed(name: "the field", message: "went wrong")
        let error = VarlinkError(failed)
        #expect(error.name == "org.example.corner-cases.Failed" && error.is(CornerCases.Failed.self))
        #expect(error.parameters(as: CornerCases.Failed.self) == failed)
        #expect(error.message == "went wrong")
        #expect(RawJSON(encoding: CornerCases.Empty.Parameters()).description == "{}")
    }

    @Test("the embedded definition is the file, and it is what the parsed interface says")
    func definition() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "CornerCases.varlink"
        )
        #expect(CornerCases.definition == (try String(contentsOf: file, encoding: .utf8)))
        #expect(CornerCases.interface.name == CornerCases.name)
        #expect(CornerCases.interface.memberNames.first == "String")
    }

    /// A small valid `Everything`, member by member, as JSON text.
    private static let members: [(String, String)] = [
        ("default", "true"), ("json", #""j""#), ("name", #""n""#), ("Type", #""a""#),
        ("nested", #"{"inner":{},"kind":"default"}"#), ("map", "{}"), ("list", "[]"), ("text", #"{"value":"v"}"#),
        ("count", "0"),
    ]

    @Test(
        "what a peer sends that the type cannot hold is refused, saying where",
        arguments: [
            ("json", nil, "json: missing"),
            ("default", "1", "default: true or false was expected, not number"),
            (
                "nested", #"{"inner":{"deep":[1]},"kind":"self"}"#,
                "nested.inner.deep[0]: a string was expected, not number"
            ),
            ("nested", #"{"inner":{}}"#, "nested.kind: missing"),
            ("Type", #""c""#, #"Type: "c" is not one of a, b"#),
            ("count", "1.5", "count: 1.5 is not an integer of 64 bits"),
            ("count", "99999999999999999999", "count: 99999999999999999999 is not an integer of 64 bits"),
            ("list", "[[]]", "list[0]: an object was expected, not array"),
            ("maybe", #"[[1],["x"]]"#, "maybe[1][0]: an integer was expected, not string"),
            ("map", #"{"x":"y"}"#, "map.x: a number was expected, not string"),
        ] as [(String, String?, String)]
    )
    func refusals(member: String, value: String?, problem: String) throws {
        var members = Self.members.filter { $0.0 != member }
        if let value { members.append((member, value)) }
        let text = "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
        let valid = "{" + Self.members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
        #expect(throws: Never.self) { try RawJSON(bytes: Array(valid.utf8)).decode(CornerCases.Everything.self) }
        let error = #expect(throws: VarlinkDecodingError.self) {
            try RawJSON(bytes: Array(text.utf8)).decode(CornerCases.Everything.self)
        }
        #expect(error?.description == problem)
        // A missing member, a value of another kind and an impossible value each have their code.
        let code: VarlinkDecodingError.Code =
            problem.hasSuffix(": missing") ? .missing : problem.contains("was expected") ? .wrongKind : .invalidValue
        #expect(error?.code == code, "\(problem)")
    }

    @Test("every interface of Keyport's generates, and Swift names it as docs/protocol.md does")
    func keyportInterfaces() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let sources = root.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".varlink") }
        #expect(files.count >= 11, "\(files)")
        for path in files {
            let text = try String(contentsOf: sources.appendingPathComponent(path), encoding: .utf8)
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            let generator = try SwiftGenerator(definition: text, fileName: name, module: "Module")
            let source = try generator.source()
            #expect(source.contains("package enum \(generator.namespace) {"))
            for method in generator.interface.methods.keys {
                #expect(source.contains("package static let name = \"\(generator.interface.name).\(method)\""))
            }
        }
    }

    @Test(
        "a server's protocol has a requirement per method, named as Swift names functions, and a dispatch that calls each"
    )
    func serverProtocol() throws {
        let source = try SwiftGenerator(
            definition:
                "interface org.example.a\nmethod Import(x: int) -> ()\nmethod URLFor(x: int) -> (url: string)\nmethod Go() -> ()",
            fileName: "org.example.a",
            module: "Module"
        ).source()
        #expect(source.contains("package protocol Server: VarlinkCore.VarlinkInterfaceServer {"))
        for (function, method) in [("`import`", "Import"), ("urlFor", "URLFor"), ("go", "Go")] {
            #expect(
                source.contains("func \(function)(\n            _ parameters: consuming Module.A.\(method).Parameters,")
            )
            #expect(source.contains("case \"\(method)\":\n"))
            #expect(source.contains("encoding: try await \(function)(\n"))
        }
        #expect(SwiftGenerator.functionName("RequestCredential") == "requestCredential")
        #expect(SwiftGenerator.functionName("A") == "a")
    }

    @Test("a type two interfaces of a module define alike is one Swift type; one defined otherwise is not")
    func sharedAcrossInterfaces() throws {
        let sources = try SwiftGenerator.sources(
            of: [
                ("org.example.b", "interface org.example.b\ntype Id (value: string, kind: Kind)\ntype Kind (x, y)"),
                ("org.example.a", "interface org.example.a\ntype Kind (x, y)\ntype Id (value: string, kind: Kind)"),
                ("org.example.c", "interface org.example.c\ntype Kind (x, y, z)\ntype Id (value: string, kind: Kind)"),
            ],
            module: "Module"
        )
        let byFile = Dictionary(uniqueKeysWithValues: sources.map { ($0.fileName, $0.source) })
        // The first interface by name owns the type; B names it.
        #expect(byFile["org.example.a"]?.contains("package struct Id:") == true)
        #expect(byFile["org.example.b"]?.contains("package typealias Id = Module.A.Id") == true)
        #expect(byFile["org.example.b"]?.contains("package typealias Kind = Module.A.Kind") == true)
        // C's Kind has another value, so its Id (which names it) is not A's either.
        #expect(byFile["org.example.c"]?.contains("package struct Id:") == true)
        #expect(byFile["org.example.c"]?.contains("package enum Kind:") == true)

        let clash = #expect(throws: SwiftGenerator.DefinitionError.self) {
            try SwiftGenerator.sources(
                of: [
                    ("org.example.thing", "interface org.example.thing\nmethod M() -> ()"),
                    ("org.other.thing", "interface org.other.thing\nmethod M() -> ()"),
                ],
                module: "Module"
            )
        }
        #expect(clash?.description.contains("would both be Thing") == true)
    }

    @Test(
        "a definition the generator cannot write is refused, saying why",
        arguments: [
            (
                "interface org.example.a\ntype T (a: (x: int), A: (y: int))", "org.example.a",
                "would have one name"
            ),
            ("interface org.example.module\nmethod M() -> ()", "org.example.module", "the module's own name"),
            ("interface org.example.a\nmethod M() -> ()", "org.example.b", "name it org.example.a.varlink"),
            ("interface org.example.a\nmethod M() -> (", "org.example.a", "does not parse"),
            ("interface org.example.a\nmethod M() -> ()", "2fa", "not a Swift name"),
            ("interface org.example.self\nmethod M() -> ()", "org.example.self", "cannot name a type"),
            ("interface org.example.a\ntype Swift (x: int)", "org.example.a", "a module's name"),
            ("interface org.example.a\ntype T (Kind: int, kind: (x, y))", "org.example.a", "would have one name"),
            ("interface org.example.a\ntype Server (x: int)", "org.example.a", "the generated servers' protocol"),
            (
                "interface org.example.a\nmethod URLFor() -> ()\nmethod UrlFor() -> ()", "org.example.a",
                "would both be the server's function urlFor"
            ),
        ]
    )
    func generatorRefusals(definition: String, fileName: String, reason: String) {
        let error = #expect(throws: SwiftGenerator.DefinitionError.self) {
            try SwiftGenerator(definition: definition, fileName: fileName, module: "Module").source()
        }
        #expect(error?.description.contains(reason) == true, "\(error.map { "\($0)" } ?? "")")
    }
}
