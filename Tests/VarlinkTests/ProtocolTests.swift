import Foundation
import KeyportEncoding
import Testing
import Varlink

@Suite("Varlink messages")
struct MessageTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("a call is read with its flags and parameters kept as their bytes, and written back")
    func call() throws {
        let call = try VarlinkCall(
            message: bytes(
                #"{ "oneway": false, "parameters": {"b": [1, {"c": null}], "a": "x"}, "method": "org.example.ping.Ping", "more": true, "future": {"x": 1} }"#
            )
        )
        #expect(call.method == "org.example.ping.Ping")
        #expect(call.interface == "org.example.ping")
        #expect(call.methodName == "Ping")
        #expect(call.more && !call.oneway && !call.upgrade)
        #expect(call.parameters.description == #"{"b": [1, {"c": null}], "a": "x"}"#)
        #expect(try VarlinkCall(message: call.message) == call)
        #expect(String(decoding: VarlinkCall(method: "a.b.C").message, as: UTF8.self) == #"{"method":"a.b.C"}"#)
    }

    @Test(
        "what is not a call is refused with the reason",
        arguments: [
            ("", "ended"), ("[]", "an object"), (#"{"parameters":{}}"#, "no \"method\""),
            (#"{"method":1}"#, "must be a string"),
            (#"{"method":"a.b.C","parameters":[]}"#, "must be an object"),
            (#"{"method":"a.b.C","more":"yes"}"#, "true or false"),
            (#"{"method":"a.b.C"} {}"#, "only one JSON object"), (#"{"method":"a.b.C""#, "not closed"),
            (#"{"method":"a\u0"}"#, "four hex digits"), ("{\"method\":\"a\u{01}\"}", "control character"),
            (#"{"method":"a.b.C","parameters":{"x":{"y":"\q"}}}"#, "not a JSON escape"),
            (#"{"method":"a.b.C","parameters":{},"method":"a.b.D"}"#, "\"method\" is given twice"),
            (#"{"method":"a.b.C","parameters":{"x":1},"parameters":{}}"#, "\"parameters\" is given twice"),
        ]
    )
    func notACall(text: String, reason: String) {
        let error = #expect(throws: VarlinkMessageError.self) { try VarlinkCall(message: bytes(text)) }
        #expect(error?.code == .notACall)
        #expect(error?.description.contains(reason) == true, "\(error?.description ?? "")")
    }

    @Test("a document put into a message as it is must be exactly one object: nothing it holds can add members")
    func wrapping() throws {
        #expect(
            try JSONText.wrapping("document", object: bytes(#"{"a": [1]}"#)).description == #"{"document":{"a": [1]}}"#
        )
        for forged in [
            #"{"a":1}},"method":"org.keyport.Vault.Remove","parameters":{"id":"YQ""#, #"{} {}"#, "[]", #"{"a":"#,
        ] {
            let error = #expect(throws: JSONSyntaxError.self, "\(forged)") {
                try JSONText.wrapping("document", object: bytes(forged))
            }
            // Not JSON, or JSON that is not exactly one object.
            #expect(error?.code == .syntax || error?.code == .unexpected, "\(forged)")
        }
    }

    @Test("replies: parameters, continues, errors; written back equal")
    func replies() throws {
        let reply = try VarlinkReply(message: bytes(#"{"parameters":{"n":1},"continues":true}"#))
        #expect(reply.continues && reply.error == nil)
        #expect(try VarlinkReply(message: reply.message) == reply)
        let failure = VarlinkReply(
            error: .invalidParameter("items[2].name", "items[2].name must be a string, not null")
        )
        let read = try VarlinkReply(message: failure.message)
        #expect(read.error == "org.varlink.service.InvalidParameter")
        #expect(try read.parameters.member("parameter")?.description == #""items[2].name""#)
        #expect(
            VarlinkError(name: read.error!, parameters: read.parameters).message
                == "items[2].name must be a string, not null"
        )
    }

    @Test("strings: escapes, surrogate pairs and control characters both ways")
    func strings() throws {
        let text = "tab\t \"q\" back\\slash é 😀 \u{01}"
        var cursor = JSONCursor(JSONString.quoted(text))
        #expect(try cursor.string() == text)
        var escaped = JSONCursor(bytes(#""\ud83d\ude00 \u00e9 \/ \ud800x""#))
        #expect(try escaped.string() == "😀 é / \u{FFFD}x")
    }

    @Test("a member's raw bytes are taken without parsing the rest; nesting is bounded")
    func rawMembers() throws {
        let big =
            "[" + Array(repeating: #"{"a":"\u00e9","b":[1,2.5e3,true,null]}"#, count: 10_000).joined(separator: ",")
            + "]"
        let object = RawJSON(bytes: bytes(#"{"token":"t","data":\#(big)}"#))
        #expect(try object.member("data")?.bytes == bytes(big))
        #expect(try object.member("missing") == nil)
        let deep = RawJSON(bytes: bytes(String(repeating: "[", count: 200) + String(repeating: "]", count: 200)))
        var cursor = JSONCursor(deep.bytes, maximumDepth: 128)
        let tooDeep = #expect(throws: JSONSyntaxError.self) { try cursor.skipValue() }
        #expect(tooDeep?.code == .tooDeep)
    }
}

@Suite("Varlink errors as a person reads them")
struct VarlinkErrorSentenceTests {
    @Test(
        "a message is the sentence, after the parameter it is about; a service without messages is read from the specification's parameters"
    )
    func sentences() {
        #expect(
            VarlinkError(name: "org.keyport.AutoFill.NoCredential", ["message": "none here"]).sentence == "none here"
        )
        #expect(
            VarlinkError.invalidParameter("serviceIdentifiers[0]", "'x y' is not a site").sentence
                == "serviceIdentifiers[0]: 'x y' is not a site"
        )
        #expect(VarlinkError.invalidParameter("password", "password is empty").sentence == "password is empty")
        // What another implementation sends: the specification's parameters, no message.
        let bare: [(VarlinkError, String)] = [
            (
                VarlinkError(name: "org.varlink.service.MethodNotFound", ["method": "a.b.C"]),
                "the service has no method a.b.C"
            ),
            (
                VarlinkError(name: "org.varlink.service.InterfaceNotFound", ["interface": "a.b"]),
                "the service has no interface a.b"
            ),
            (
                VarlinkError(name: "org.varlink.service.InvalidParameter", ["parameter": "p"]),
                "the parameter p is not one the method takes"
            ),
            (
                VarlinkError(name: "org.varlink.service.PermissionDenied"),
                "the service refused the call (permission denied)"
            ),
            (VarlinkError(name: "org.example.Other"), "org.example.Other"),
        ]
        for (error, sentence) in bare { #expect(error.sentence == sentence) }
    }
}

@Suite("Varlink interface definitions")
struct InterfaceTests {
    static let example = """
        # A test interface.
        interface org.example.test-1

        type Kind (file, folder)
        # An entry.
        type Entry (
          name: string,
          kind: Kind,
          size: ?int,
          tags: []string,
          extra: [string]float,
          owner: (uid: int, name: ?string)
        )

        method List(path: string, recursive: ?bool) -> (entries: []Entry)
        method Put(data: object, mode: (read, write)) -> ()
        error NotFound (path: string, message: string)
        """

    @Test("org.varlink.service and an interface with every kind of type are read")
    func parses() throws {
        let service = VarlinkService.interface
        #expect(service.name == "org.varlink.service")
        #expect(Set(service.methods.keys) == ["GetInfo", "GetInterfaceDescription"])
        #expect(service.errors.count == 6)
        #expect(
            service.methods["GetInfo"]?.output.map(\.name) == ["vendor", "product", "version", "url", "interfaces"]
        )

        let test = try VarlinkInterface(Self.example)
        #expect(test.name == "org.example.test-1")
        #expect(test.description == Self.example)
        #expect(test.types["Kind"] == .enumeration(["file", "folder"]))
        #expect(test.methods["List"]?.output == [VarlinkField(name: "entries", type: .array(.named("Entry")))])
        #expect(test.methods["Put"]?.input[1].type == .enumeration(["read", "write"]))
        #expect(test.errors["NotFound"]?.map(\.name) == ["path", "message"])
        guard case .structure(let fields) = test.types["Entry"] else {
            Issue.record("Entry is not a structure")
            return
        }
        #expect(
            fields.map(\.type.description) == [
                "string", "Kind", "?int", "[]string", "[string]float", "(uid: int, name: ?string)",
            ]
        )
    }

    @Test(
        "a definition that is not valid is refused, saying where",
        arguments: [
            ("interface Example\nmethod A() -> ()", "line 1", "not an interface name"),
            ("interface org.example\nmethod A()", "line 2", "'->'"),
            ("interface org.example\nmethod a() -> ()", "line 2", "not a member name"),
            ("interface org.example\nmethod A(x: Missing) -> ()", "", "'Missing' is used but not defined"),
            ("interface org.example\ntype A (x: int)\nerror A ()", "line 3", "defined twice"),
            ("interface org.example\ntype A (x: int, x: string)", "line 2", "appears twice"),
            ("interface org.example\nmethod A(x: ??int) -> ()", "line 2", "'??'"),
            ("interface org.example\nmethod A(x, y) -> ()", "line 2", "':' and a type"),
            ("interface org.example\nfunc A() -> ()", "line 2", "'type', 'method' or 'error'"),
        ]
    )
    func refuses(definition: String, line: String, reason: String) {
        let error = #expect(throws: VarlinkInterfaceSyntaxError.self) { try VarlinkInterface(definition) }
        let text = error?.description ?? ""
        #expect(text.hasPrefix(line) && text.contains(reason), "\(text)")
    }

    @Test(
        "parameters are checked against the method's fields, naming the parameter and what is wrong",
        arguments: [
            (#"{"path":"/"}"#, nil),
            (#"{"path":"/","recursive":null}"#, nil),
            (#"{"recursive":true}"#, "path: path is missing (string)"),
            (#"{"path":1}"#, "path: path must be a string, not a number"),
            (#"{"path":"/","extra":1}"#, "extra: extra is not a parameter here"),
            (#"{"path":"/","path":"/"}"#, "path: path is given twice"),
            (#"[]"#, "parameters: the parameters must be an object, not an array"),
            (#"{"path":"/","recursive":"yes"}"#, "recursive: recursive must be true or false, not a string"),
        ] as [(String, String?)]
    )
    func checksInput(parameters: String, problem: String?) throws {
        let test = try VarlinkInterface(Self.example)
        for value in readBothWays(parameters) {
            try checkInput(test, value, problem: problem)
        }
    }

    private func checkInput(_ test: VarlinkInterface, _ value: RawJSON, problem: String?) throws {
        let error = test.check(value, against: test.methods["List"]!.input)
        if let problem {
            #expect(error?.name == "org.varlink.service.InvalidParameter")
            let parameter = try error?.parameters.member("parameter").map {
                var c = JSONCursor($0.bytes)
                return try c.string()
            }
            #expect("\(parameter ?? ""): \(error?.message ?? "")" == problem)
        } else {
            #expect(error == nil, "\(error.map { "\($0)" } ?? "")")
        }
    }

    @Test("nested values: named types, enums, arrays, maps, ints and floats")
    func checksNested() throws {
        let test = try VarlinkInterface(Self.example)
        let output = test.methods["List"]!.output
        func problem(_ entries: String) -> String? {
            let answers = readBothWays(#"{"entries":\#(entries)}"#).map { test.check($0, against: output)?.message }
            #expect(answers.count == 2 && answers[0] == answers[1], "\(answers)")
            return answers[0]
        }
        let good = #"{"name":"a","kind":"file","tags":[],"extra":{"x":1.5,"y":2},"owner":{"uid":0}}"#
        #expect(problem("[\(good),\(good)]") == nil)
        #expect(
            problem(#"[\#(good),{"name":"b","kind":"link","tags":[],"extra":{},"owner":{"uid":0}}]"#)
                == "entries[1].kind must be one of file, folder, not 'link'"
        )
        #expect(
            problem(#"[{"name":"b","kind":"file","tags":[1],"extra":{},"owner":{"uid":0}}]"#)
                == "entries[0].tags[0] must be a string, not a number"
        )
        #expect(
            problem(#"[{"name":"b","kind":"file","tags":[],"extra":{"x":"1"},"owner":{"uid":0}}]"#)
                == "entries[0].extra[x] must be a number, not a string"
        )
        #expect(
            problem(#"[{"name":"b","kind":"file","tags":[],"extra":{},"owner":{"uid":1.5}}]"#)
                == "entries[0].owner.uid must be a 64-bit whole number, not 1.5"
        )
        #expect(
            problem(#"[{"name":"b","kind":"file","tags":[],"extra":{},"owner":{"uid":99999999999999999999}}]"#)
                == "entries[0].owner.uid must be a 64-bit whole number, not 99999999999999999999"
        )
        #expect(
            problem(#"[{"name":"b","kind":"file","tags":[],"extra":{},"owner":{}}]"#)
                == "entries[0].owner.uid is missing (int)"
        )
        let put = test.methods["Put"]!.input
        for value in readBothWays(#"{"data":{"any":[1,{"deep":true}]},"mode":"read"}"#) {
            #expect(test.check(value, against: put) == nil)
        }
        for value in readBothWays(#"{"data":[],"mode":"read"}"#) {
            #expect(test.check(value, against: put)?.message == "data must be an object, not an array")
        }
        for value in readBothWays(#"{"data":null,"mode":"read"}"#) {
            #expect(test.check(value, against: put)?.message == "data must be an object, not null")
        }
        // A member is found alike either way: its bytes as sent, the first of two.
        for value in readBothWays(#"{ "data" : {"a": [1, "}"]} , "mode":"read","mode":"write"}"#) {
            #expect(try value.member("data")?.bytes == Array(#"{"a": [1, "}"]}"#.utf8))
            #expect(try value.member("mode")?.bytes == Array(#""read""#.utf8))
            #expect(try value.member("none") == nil)
        }
    }

    /// `parameters` as code builds them, and as read out of a call's message (with where each
    /// member lies, which the check then uses); the second only when they make a valid call.
    private func readBothWays(_ parameters: String) -> [RawJSON] {
        let built = RawJSON(bytes: Array(parameters.utf8))
        guard
            let call = try? VarlinkCall(
                message: Array(#"{"method":"org.example.Put","parameters":\#(parameters)}"#.utf8)
            )
        else { return [built] }
        #expect(call.parameters.members != nil)
        #expect(call.parameters == built)
        return [built, call.parameters]
    }
}
