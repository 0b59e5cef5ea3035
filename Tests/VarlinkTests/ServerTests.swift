import Foundation
import KeyportSystem
import KeyportTestSupport
import Synchronization
import Testing
import Varlink

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What `Wait` calls went through: each start, and each cancellation (its client went away).
private final class Observations: Sendable {
    let started: AsyncStream<Void>
    let cancelled: AsyncStream<Void>
    let start: AsyncStream<Void>.Continuation
    let cancel: AsyncStream<Void>.Continuation

    init() {
        (started, start) = AsyncStream.makeStream(of: Void.self)
        (cancelled, cancel) = AsyncStream.makeStream(of: Void.self)
    }
}

/// Waits for the next element of `stream`, at most `limit`; `false` when none came.
private func next(_ stream: AsyncStream<Void>, within limit: Duration = .seconds(10)) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next() != nil
        }
        group.addTask {
            try? await Task.sleep(for: limit)
            return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
}

/// `org.keyport.test`, served.
private struct TestServer: TestService.Server {
    let observations: Observations

    func echo(_ input: consuming TestService.Echo.Parameters, request: VarlinkRequest) -> TestService.Echo.Reply {
        let times = input.times ?? 1
        return TestService.Echo.Reply(
            echoed: TestService.Echoed(text: String(repeating: input.text, count: times), times: times)
        )
    }

    func count(
        _ input: consuming TestService.Count.Parameters,
        request: VarlinkRequest
    ) async throws(VarlinkError) -> TestService.Count.Reply {
        guard request.call.more else { throw VarlinkError.expectedMore(request.call.method) }
        for n in 1..<max(input.to, 1) { try await request.send(TestService.Count.Reply(n: n)) }
        return TestService.Count.Reply(n: max(input.to, 1))
    }

    func caller(_: consuming TestService.Caller.Parameters, request: VarlinkRequest) -> TestService.Caller.Reply {
        let process = request.peer.process
        #expect(request.peer.credentials.pid == process.pid)
        return TestService.Caller.Reply(
            pid: Int(process.pid),
            bySocket: process.pinning == .socketPeer,
            program: (try? process.executable) ?? "unreadable"
        )
    }

    func reflect(
        _ input: consuming TestService.Reflect.Parameters,
        request: VarlinkRequest
    ) throws(VarlinkError) -> TestService.Reflect.Reply {
        guard let descriptor = request.descriptors.take(input.file) else {
            throw VarlinkError(TestService.Failed(message: "no descriptor \(input.file) came with the call"))
        }
        do {
            let file = try MemoryFile(checking: descriptor)
            let text = try file.withBytes { String(decoding: $0, as: UTF8.self) }
            return TestService.Reflect.Reply(text: text, file: request.attach(file))
        } catch {
            throw VarlinkError(TestService.Failed(message: "\(error)"))
        }
    }

    func wait(_: consuming TestService.Wait.Parameters, request: VarlinkRequest) async -> TestService.Wait.Reply {
        observations.start.yield()
        do {
            try await Task.sleep(for: .seconds(600))
        } catch {
            observations.cancel.yield()
        }
        return TestService.Wait.Reply()
    }

    func later(
        _: consuming TestService.Later.Parameters,
        request: VarlinkRequest
    ) throws(VarlinkError) -> TestService.Later.Reply {
        throw VarlinkError.methodNotImplemented(TestService.Later.name)
    }

    func fail(
        _: consuming TestService.Fail.Parameters,
        request: VarlinkRequest
    ) throws(VarlinkError) -> TestService.Fail.Reply {
        throw VarlinkError(TestService.Failed(message: "it always fails"))
    }

    func admit(_ method: String, request: VarlinkRequest) throws(VarlinkError) {
        if method == TestService.Guarded.name { throw VarlinkError(TestService.Failed(message: "not admitted")) }
    }

    func guarded(_: consuming TestService.Guarded.Parameters, request: VarlinkRequest) -> TestService.Guarded.Reply {
        Issue.record("a method its server did not admit ran")
        return .init()
    }
}

private func makeServer(
    _ observations: Observations,
    maximumMessageSize: Int = 1 << 20,
    limits: VarlinkConnectionLimits? = nil
) throws -> VarlinkServer {
    VarlinkServer(
        info: VarlinkServiceInfo(vendor: "Keyport", product: "test", version: "1", url: "https://example.invalid"),
        interfaces: [TestServer(observations: observations)],
        maximumMessageSize: maximumMessageSize,
        limits: limits
    )
}

/// Whether the server closed the raw connection `descriptor` (it reads as the end), waiting up to
/// `seconds` for it.
private func closedByServer(_ descriptor: Int32, within seconds: Int) async throws -> Bool {
    try await onOwnThread {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, 0) == 0
    }
}

/// Runs `server` on a socket in a private directory while `body` runs.
private func withServer<T>(
    _ server: VarlinkServer,
    _ body: (String) async throws -> T
) async throws -> T {
    let directory = try TemporaryDirectory("kp-varlink")
    defer { directory.remove() }
    let path = directory.url.appendingPathComponent("test.sock").path
    let (ready, readiness) = AsyncStream.makeStream(of: Void.self)
    let serving = Task { try await server.serve(path: path) { readiness.yield() } }
    defer { serving.cancel() }
    for await _ in ready { break }
    return try await body(path)
}

/// Sends raw bytes on a new connection and returns what comes back until the server closes it,
/// or until a whole reply (ended by NUL) has come when `oneReply`. The blocking socket calls run
/// on a thread of their own: the server in this process needs the cooperative threads meanwhile.
/// The server shares them with every test running in parallel in this process, which on two busy
/// cores has kept it from running for over 10 s: it has 30.
private func rawExchange(_ path: String, _ bytes: [UInt8], oneReply: Bool = false) async throws -> [UInt8]? {
    try await onOwnThread {
        try RawUnixSocket.exchange(bytes, with: path, timeout: 30) { oneReply && $0.last == 0 }
    }
}

@Suite("Varlink service")
struct ServerTests {
    @Test("introspection: GetInfo lists the interfaces; GetInterfaceDescription returns each definition")
    func introspection() async throws {
        try await withServer(try makeServer(Observations())) { path in
            try await VarlinkConnection.withConnection(path: path, maximumMessageSize: 1 << 20) { connection in
                let info = try await connection.call(VarlinkService.GetInfo.self, .init())
                #expect(info.vendor == "Keyport")
                #expect(info.interfaces == ["org.keyport.test", "org.varlink.service"])
                let description = try await connection.call(
                    VarlinkService.GetInterfaceDescription.self,
                    .init(interface: "org.keyport.test")
                )
                // The definition the generated code embeds is the file, byte for byte.
                let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                    .appendingPathComponent("TestService.varlink")
                #expect(description.description == (try String(contentsOf: file, encoding: .utf8)))
                #expect(description.description == TestService.definition)
                let missing = await #expect(throws: VarlinkError.self) {
                    try await connection.call(VarlinkService.GetInterfaceDescription.self, .init(interface: "org.nope"))
                }
                #expect(missing?.name == "org.varlink.service.InterfaceNotFound")
            }
        }
    }

    @Test("calls are checked: unknown interface, unknown method, not implemented, invalid parameter, expected more")
    func errors() async throws {
        try await withServer(try makeServer(Observations())) { path in
            try await VarlinkConnection.withConnection(path: path, maximumMessageSize: 1 << 20) { connection in
                let echoed = try await connection.call(
                    "org.keyport.test.Echo",
                    RawJSON(bytes: Array(#"{"text":"ab","times":2}"#.utf8))
                )
                #expect(echoed.description == #"{"echoed":{"text":"abab","times":2}}"#)
                let cases: [(String, String, String)] = [
                    ("org.nope.Echo", "{}", "org.varlink.service.InterfaceNotFound"),
                    ("org.keyport.test.Nope", "{}", "org.varlink.service.MethodNotFound"),
                    ("org.keyport.test.Later", "{}", "org.varlink.service.MethodNotImplemented"),
                    ("org.keyport.test.Echo", #"{"text":1}"#, "org.varlink.service.InvalidParameter"),
                    ("org.keyport.test.Echo", #"{}"#, "org.varlink.service.InvalidParameter"),
                    ("org.keyport.test.Count", #"{"to":3}"#, "org.varlink.service.ExpectedMore"),
                    ("org.keyport.test.Fail", "{}", "org.keyport.test.Failed"),
                    // Refused by the server's admit, before its parameters are read.
                    ("org.keyport.test.Guarded", #"{"items":[{},{},{}]}"#, "org.keyport.test.Failed"),
                ]
                for (method, parameters, expected) in cases {
                    let error = await #expect(throws: VarlinkError.self) {
                        try await connection.call(method, RawJSON(bytes: Array(parameters.utf8)))
                    }
                    #expect(error?.name == expected, "\(method) \(parameters)")
                    #expect(error?.message?.isEmpty == false, "every error says what happened")
                }
                // The connection is still usable after all those errors.
                #expect(
                    try await connection.call("org.keyport.test.Echo", RawJSON(bytes: Array(#"{"text":"x"}"#.utf8)))
                        .description.contains("\"x\"")
                )
            }
        }
    }

    @Test(
        "a call with more gets every reply, each but the last marked continues; pipelined calls are answered in order"
    )
    func streaming() async throws {
        try await withServer(try makeServer(Observations())) { path in
            try await VarlinkConnection.withConnection(path: path, maximumMessageSize: 1 << 20) { connection in
                try await connection.send(
                    VarlinkCall(
                        method: "org.keyport.test.Count",
                        parameters: RawJSON(bytes: Array(#"{"to":3}"#.utf8)),
                        more: true
                    )
                )
                try await connection.send(
                    VarlinkCall(
                        method: "org.keyport.test.Echo",
                        parameters: RawJSON(bytes: Array(#"{"text":"after"}"#.utf8))
                    )
                )
                var replies: [String] = []
                while true {
                    let (parameters, continues) = try await connection.nextReply()
                    replies.append(parameters.description + (continues ? "+" : ""))
                    if !continues { break }
                }
                #expect(replies == [#"{"n":1}+"#, #"{"n":2}+"#, #"{"n":3}"#])
                #expect(try await connection.reply().description.contains("after"))
                try await connection.send(
                    VarlinkCall(
                        method: "org.keyport.test.Echo",
                        parameters: RawJSON(bytes: Array(#"{"text":"one-way"}"#.utf8)),
                        oneway: true
                    )
                )
                #expect(
                    try await connection.call("org.keyport.test.Echo", RawJSON(bytes: Array(#"{"text":"next"}"#.utf8)))
                        .description.contains("next")
                )
            }
        }
    }

    @Test("the blocking connection: calls, error replies, a reply over its limit, nothing listening")
    func blockingConnection() async throws {
        try await withServer(try makeServer(Observations())) { path in
            try await onOwnThread {
                let connection = try VarlinkBlockingConnection(path: path, maximumMessageSize: 128)
                let echoed = try connection.call("org.keyport.test.Echo", RawJSON(bytes: Array(#"{"text":"ab"}"#.utf8)))
                #expect(echoed.description == #"{"echoed":{"text":"ab","times":1}}"#)
                #expect(try echoed.member("echoed") != nil, "the reply's members are indexed as the NIO client's are")
                let failed = #expect(throws: VarlinkError.self) { try connection.call("org.keyport.test.Fail") }
                #expect(failed?.name == "org.keyport.test.Failed")
                #expect(failed?.message == "it always fails")
                // The same connection again, now with a reply longer than the 128 bytes it takes.
                let tooLong = #expect(throws: VarlinkConnectionError.self) {
                    try connection.call(
                        "org.keyport.test.Echo",
                        RawJSON(bytes: Array(#"{"text":"ab","times":100}"#.utf8))
                    )
                }
                #expect(tooLong?.description.contains("longer than 128 bytes") == true)
            }
        }
        let directory = try TemporaryDirectory("kp-varlink")
        defer { directory.remove() }
        let nobody = directory.url.appendingPathComponent("none.sock").path
        let refused = #expect(throws: VarlinkConnectionError.self) {
            try VarlinkBlockingConnection(path: nobody, maximumMessageSize: 64)
        }
        #expect(refused?.isRefused == true)
        #expect(refused?.description.contains(nobody) == true)
    }

    @Test("garbage, an unframed flood and an oversized message close only their own connection")
    func misbehavingClients() async throws {
        try await withServer(try makeServer(Observations(), maximumMessageSize: 4096)) { path in
            try await VarlinkConnection.withConnection(path: path, maximumMessageSize: 1 << 20) { healthy in
                let notJSON = try await rawExchange(path, Array("hello\u{0}".utf8))
                #expect(notJSON == [])
                let noMethod = try await rawExchange(path, Array("{\"parameters\":{}}\u{0}".utf8))
                #expect(noMethod == [])
                let flood = try await rawExchange(path, [UInt8](repeating: UInt8(ascii: "{"), count: 10_000))
                #expect(flood == [])
                let big = try await rawExchange(
                    path,
                    Array(
                        #"{"method":"org.keyport.test.Echo","parameters":{"text":"\#(String(repeating: "a", count: 5000))"}}"#
                            .utf8
                    ) + [0]
                )
                #expect(big == [])
                // A message before the limit is answered on the same kind of raw connection.
                let answered = try await rawExchange(
                    path,
                    Array(#"{"method":"org.keyport.test.Fail"}"#.utf8) + [0],
                    oneReply: true
                )
                #expect(String(decoding: answered ?? [], as: UTF8.self).contains(#""error":"org.keyport.test.Failed""#))
                #expect(
                    try await healthy.call(
                        "org.keyport.test.Echo",
                        RawJSON(bytes: Array(#"{"text":"still here"}"#.utf8))
                    ).description.contains("still here")
                )
            }
        }
    }

    @Test(
        "limits: a process's oldest idle connection makes room, one with a call in progress never does; an unfinished message has a deadline and a budget"
    )
    func connectionLimits() async throws {
        let observations = Observations()
        let limits = VarlinkConnectionLimits(
            perProcess: 3,
            total: 100,
            bufferedPerProcess: 10_000,
            messageDeadline: .seconds(2)
        )
        try await withServer(try makeServer(observations, limits: limits)) { path in
            // A connection with a call in progress (as an agent's Serve is).
            let busy = Task {
                try await VarlinkConnection.withConnection(path: path, maximumMessageSize: 1 << 20) {
                    _ = try await $0.call("org.keyport.test.Wait")
                }
            }
            defer { busy.cancel() }
            #expect(await next(observations.started))
            // Three idle ones: with the busy one that is four, so an idle one goes (the oldest, as
            // the server numbered them once set up: not necessarily the order they connected in).
            let idle = try (0..<3).map { _ in try RawUnixSocket.connected(to: path) }
            defer { for descriptor in idle { close(descriptor) } }
            var closed = 0
            for descriptor in idle where try await closedByServer(descriptor, within: closed == 0 ? 3 : 1) {
                closed += 1
            }
            #expect(closed == 1)
            // A new connection still gets in and is answered; the busy call goes on.
            let answered = try await rawExchange(
                path,
                Array(#"{"method":"org.keyport.test.Fail"}"#.utf8) + [0],
                oneReply: true
            )
            #expect(String(decoding: answered ?? [], as: UTF8.self).contains("org.keyport.test.Failed"))
            #expect(!(await next(observations.cancelled, within: .milliseconds(200))))
        }
        try await withServer(try makeServer(Observations(), limits: limits)) { (path: String) async throws in
            // An unfinished message is closed at its deadline.
            let started = ContinuousClock.now
            #expect(try await rawExchange(path, Array(#"{"method":"#.utf8)) == [])
            #expect(ContinuousClock.now - started < .seconds(8))
        }
        var generous = limits
        generous.messageDeadline = .seconds(60)
        try await withServer(try makeServer(Observations(), limits: generous)) { path in
            // A process may hold 10 000 bytes of unfinished messages across its connections: the
            // connection that passes it is closed at once, long before the deadline.
            let holding = try RawUnixSocket.connected(to: path)
            defer { close(holding) }
            let part = [UInt8](repeating: UInt8(ascii: "a"), count: 6000)
            #expect(part.withUnsafeBytes { send(holding, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == 6000)
            // Read by the server (in pieces) before the next connection's bytes come.
            try await Task.sleep(for: .milliseconds(500))
            let started = ContinuousClock.now
            #expect(try await rawExchange(path, Array(#"{"method":""#.utf8) + part) == [])
            #expect(ContinuousClock.now - started < .seconds(8))
        }
    }

    @Test("a client that sends call after call without reading the replies is closed, not read without bound")
    func unreadReplies() async throws {
        try await withServer(try makeServer(Observations())) { (path: String) async throws in
            // 24 calls of a 300 kB reply each (more than a socket buffers), sent before a byte is
            // read: past 16 waiting, the connection is closed.
            let call =
                Array(
                    #"{"method":"org.keyport.test.Echo","parameters":{"text":"\#(String(repeating: "a", count: 1000))","times":300}}"#
                        .utf8
                ) + [0]
            let received = try await rawExchange(path, Array((0..<24).map { _ in call }.joined()))
            let replies = received?.filter { $0 == 0 }.count ?? 0
            #expect(replies < 24, "all \(replies) calls were read and answered")
        }
    }

    @Test("a connection already made (a socketpair, as keyportd hands a provider): served until its client closes it")
    func connectedDescriptor() async throws {
        var ends: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        let server = try makeServer(Observations())
        let served = ends[0]
        let serving = Task { try await server.serve(connectedDescriptor: served) }
        let echoed = try await VarlinkConnection.withConnection(
            connectedDescriptor: ends[1],
            maximumMessageSize: 1 << 20
        ) { connection in
            try await connection.call("org.keyport.test.Echo", RawJSON(bytes: Array(#"{"text":"hi","times":2}"#.utf8)))
        }
        #expect(echoed.description == #"{"echoed":{"text":"hihi","times":2}}"#)
        // The client's end is closed: serving ends by itself.
        try await serving.value
    }

    @Test("a client that goes away mid-call has its call cancelled; others go on")
    func vanishingClient() async throws {
        let observations = Observations()
        try await withServer(try makeServer(observations)) { path in
            try await VarlinkConnection.withConnection(path: path, maximumMessageSize: 1 << 20) { connection in
                try await connection.send(VarlinkCall(method: "org.keyport.test.Wait"))
                // Leave (closing the connection) once the call runs.
                #expect(await next(observations.started), "the call did not start")
            }
            #expect(await next(observations.cancelled), "the call went on after its client left")
            let reply = try await VarlinkConnection.withConnection(path: path, maximumMessageSize: 1 << 20) {
                connection in
                try await connection.call("org.keyport.test.Echo", RawJSON(bytes: Array(#"{"text":"ok"}"#.utf8)))
            }
            #expect(reply.description.contains("ok"))
        }
    }

    @Test("a client that closes only its sending side has its call cancelled, and still reads the reply")
    func halfClosingClient() async throws {
        let observations = Observations()
        try await withServer(try makeServer(observations)) { path in
            let connection = try VarlinkBlockingConnection(path: path, maximumMessageSize: 1 << 20)
            try connection.send(VarlinkCall(method: "org.keyport.test.Wait"))
            #expect(await next(observations.started), "the call did not start")
            // Gives up on the call, as `keyport vault import` does on Ctrl-C, and waits for how it ended.
            #expect(shutdown(connection.socket, Int32(SHUT_WR)) == 0)
            #expect(await next(observations.cancelled), "the call went on after its client gave up")
            let (reply, _) = try connection.nextReply()
            #expect(reply.error == nil && reply.parameters == .emptyObject, "\(reply)")
        }
    }
}

@Suite("Varlink service with a client nobody here wrote")
struct ForeignClientTests {
    @Test("PyPI's varlink client introspects, calls, streams and reads errors")
    func pythonClient() async throws {
        let python = try await Peers.python(importing: ["varlink"])
        try await withServer(try makeServer(Observations())) { path in
            let ran = try await Program.run(
                python,
                [Peers.file("Tests/VarlinkTests/Peers/client.py"), path],
                timeout: .seconds(60)
            )
            #expect(ran.status == 0, "\(ran.standardError)")
            var steps: [String: Any] = [:]
            for line in ran.standardOutput.split(separator: "\n") {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                if let name = object?["step"] as? String { steps[name] = object?["value"] }
            }
            let info = steps["info"] as? [String: Any]
            #expect(info?["vendor"] as? String == "Keyport")
            #expect(info?["interfaces"] as? [String] == ["org.keyport.test", "org.varlink.service"])
            let echo = (steps["echo"] as? [String: Any])?["echoed"] as? [String: Any]
            #expect(echo?["text"] as? String == "ababab")
            #expect(steps["count"] as? [Int] == [1, 2, 3, 4])
            // The server pinned the client process itself, by the socket's pidfd where the kernel
            // has SO_PEERPIDFD (6.5).
            let caller = try #require(steps["caller"] as? [String: Any])
            let reported = try #require(caller["reported"] as? [String: Any])
            #expect(reported["pid"] as? Int == caller["pid"] as? Int)
            #expect(reported["program"] as? String == caller["program"] as? String)
            #expect(reported["bySocket"] as? Bool == Kernel.isAtLeast(6, 5))
            let fail = steps["fail"] as? [String: Any]
            #expect(fail?["error"] as? String == "org.keyport.test.Failed")
            #expect((fail?["parameters"] as? [String: Any])?["message"] as? String == "it always fails")
            let invalid = steps["invalid"] as? [String: Any]
            #expect(invalid?["error"] as? String == "org.varlink.service.InvalidParameter")
            #expect((invalid?["parameters"] as? [String: Any])?["parameter"] as? String == "text")
        }
    }
}

@Suite("Varlink service and other users")
struct OtherUserTests {
    @Test(
        "a peer of another user is refused even when the socket's mode would let it in",
        .enabled(if: geteuid() == 0, "needs root to run a client as another user")
    )
    func otherUser() async throws {
        let setpriv = try Peers.require("/usr/bin/setpriv", "setpriv (package util-linux)")
        try await withServer(try makeServer(Observations())) { path in
            // Open the way on purpose: the directory and the socket let anyone connect.
            #expect(chmod((path as NSString).deletingLastPathComponent, 0o755) == 0)
            #expect(chmod(path, 0o666) == 0)
            let script = """
                import socket, sys
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(sys.argv[1])
                try:
                    s.sendall(b'{"method":"org.varlink.service.GetInfo"}\\0')
                    print("closed" if s.recv(65536) == b"" else "answered")
                except (ConnectionResetError, BrokenPipeError):
                    print("closed")
                """
            let ran = try await Program.run(
                setpriv,
                ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, path],
                timeout: .seconds(20)
            )
            #expect(ran.status == 0, "\(ran.standardError)")
            #expect(ran.standardOutput == "closed\n")
            // The service goes on for its own user.
            let info = try await VarlinkConnection.withConnection(path: path, maximumMessageSize: 1 << 20) {
                try await $0.call("org.varlink.service.GetInfo")
            }
            #expect(info.description.contains("\"Keyport\""))
        }
    }
}

/// Runs `server` on a socket that passes descriptors, in a private directory, while `body` runs.
private func withDescriptorServer<T>(
    _ server: VarlinkServer,
    _ body: (String) async throws -> T
) async throws -> T {
    let directory = try TemporaryDirectory("kp-varlink-fd")
    defer { directory.remove() }
    let path = directory.url.appendingPathComponent("test-fd.sock").path
    let (ready, readiness) = AsyncStream.makeStream(of: Void.self)
    let serving = Task {
        try await server.serveWithDescriptors(
            path: path,
            interfaces: [TestService.name],
            maximumMessageSize: 1 << 20
        ) { readiness.yield() }
    }
    defer { serving.cancel() }
    for await _ in ready { break }
    return try await body(path)
}

/// A message as the Varlink framing sends it: its JSON and a NUL.
private func framed(_ text: String) -> [UInt8] { Array(text.utf8) + [0] }

@Suite("Varlink's transport that passes descriptors")
struct DescriptorTransportTests {
    @Test("a call's descriptor reaches the method and a reply's reaches the client; introspection works there too")
    func roundTrip() async throws {
        try await withDescriptorServer(try makeServer(Observations())) { path in
            try await onOwnThread {
                let file = try Array("a sealed document".utf8).withUnsafeBytes {
                    try MemoryFile(name: "test", contents: $0)
                }
                let connection = try VarlinkBlockingConnection(path: path, maximumMessageSize: 1 << 20)
                try connection.send(
                    VarlinkCall(
                        method: TestService.Reflect.name,
                        parameters: RawJSON(encoding: TestService.Reflect.Parameters(file: 0))
                    ),
                    descriptors: [file.descriptor]
                )
                let (reply, descriptors) = try connection.nextReply()
                let reflected = try reply.parameters.decode(TestService.Reflect.Reply.self)
                #expect(reflected.text == "a sealed document")
                #expect(descriptors.count == 1)
                let back = try MemoryFile(checking: try #require(descriptors.take(reflected.file)))
                #expect(try back.withBytes { String(decoding: $0, as: UTF8.self) } == "a sealed document")
                // The same connection goes on with calls that pass nothing.
                let info = try connection.call(VarlinkService.GetInfo.self, .init())
                #expect(info.interfaces.contains(TestService.name))
            }
        }
    }

    @Test("on swift-nio's socket a method gets no descriptors, and says so")
    func noneOnTheOtherSocket() async throws {
        try await withServer(try makeServer(Observations())) { path in
            let refused = await #expect(throws: VarlinkError.self) {
                try await VarlinkConnection.withConnection(path: path, maximumMessageSize: 1 << 20) {
                    try await $0.call(TestService.Reflect.self, .init(file: 0))
                }
            }
            #expect(refused?.message == "no descriptor 0 came with the call")
        }
    }

    @Test("a descriptor nobody takes is closed; a message with more descriptors than allowed closes the connection")
    func unusedAndTooMany() async throws {
        try await withDescriptorServer(try makeServer(Observations())) { path in
            try await onOwnThread {
                var pipe: [Int32] = [-1, -1]
                try #require(Glibc.pipe(&pipe) == 0)
                defer { close(pipe[1]) }
                // Sent with a call that takes none: answered, and the server's copy is closed.
                let connection = try VarlinkBlockingConnection(path: path, maximumMessageSize: 1 << 20)
                try connection.send(
                    VarlinkCall(
                        method: TestService.Echo.name,
                        parameters: RawJSON(encoding: TestService.Echo.Parameters(text: "x", times: nil))
                    ),
                    descriptors: [pipe[0]]
                )
                #expect(try connection.nextReply().reply.error == nil)
                close(pipe[0])
                var closed = false
                for _ in 0..<200 where !closed {
                    closed = Pipes.nobodyReads(pipe[1])
                    if !closed { usleep(10_000) }
                }
                #expect(closed, "the server still holds the descriptor it was sent")

                // A memory file (the kind the server keeps) with a call that takes none: closed
                // once the call is answered. Known in this process's descriptors by its name.
                let name = "unused-\(UInt64.random(in: 1...UInt64.max))"
                func held() -> Bool {
                    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
                    return descriptors.contains {
                        ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) ?? "")
                            .contains("memfd:\(name)")
                    }
                }
                do {
                    let file = try Array("x".utf8).withUnsafeBytes { try MemoryFile(name: name, contents: $0) }
                    try connection.send(
                        VarlinkCall(
                            method: TestService.Echo.name,
                            parameters: RawJSON(encoding: TestService.Echo.Parameters(text: "y", times: nil))
                        ),
                        descriptors: [file.descriptor]
                    )
                    #expect(try connection.nextReply().reply.error == nil)
                }
                var released = false
                for _ in 0..<200 where !released {
                    released = !held()
                    if !released { usleep(10_000) }
                }
                #expect(released, "the server still holds the memory file it was sent")

                // Five descriptors with one message: more than the one a message may carry.
                let crowded = try VarlinkBlockingConnection(path: path, maximumMessageSize: 1 << 20)
                try crowded.send(
                    VarlinkCall(method: VarlinkService.GetInfo.name),
                    descriptors: Array(repeating: pipe[1], count: 5)
                )
                #expect(throws: VarlinkConnectionError.self) { try crowded.nextReply() }
            }
        }
    }

    @Test(
        "its own connection limits: a process's ninth connection closes its oldest idle one, and a new call is answered"
    )
    func connectionLimits() async throws {
        try await withDescriptorServer(try makeServer(Observations())) { path in
            try await onOwnThread {
                // Nine connections, each with half a message sent: idle, in the limits' sense.
                var held: [Int32] = []
                defer { for descriptor in held { close(descriptor) } }
                for _ in 0..<9 {
                    let descriptor = try UnixSocketAddress.connect(path)
                    held.append(descriptor)
                    _ = Array(#"{"method":"org.varlink.service.GetInfo""#.utf8).withUnsafeBytes {
                        send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                    }
                }
                // A call on a new connection is still answered, past the limit of eight.
                let connection = try VarlinkBlockingConnection(path: path, maximumMessageSize: 1 << 20)
                #expect(try connection.call(VarlinkService.GetInfo.self, .init()).interfaces.contains(TestService.name))
                // The oldest were closed to make room: at most seven of the nine are left.
                var open = 0
                for descriptor in held {
                    var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
                    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                    var byte: UInt8 = 0
                    if recv(descriptor, &byte, 1, 0) < 0 { open += 1 }
                }
                #expect(open <= 7, "\(open) of 9 idle connections still open")
            }
        }
    }

    @Test("descriptors belong to the message they were sent with, however reads join and split messages")
    func attribution() throws {
        var ends: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { for end in ends { close(end) } }
        var pipe: [Int32] = [-1, -1]
        try #require(Glibc.pipe(&pipe) == 0)
        defer { for end in pipe { close(end) } }
        // Three messages sent back to back, the middle one with a descriptor and in two sends.
        let second = framed(#"{"method":"b.B"}"#)
        for (bytes, descriptors) in [
            (framed(#"{"method":"a.A"}"#), [Int32]()), (Array(second[..<5]), [pipe[0]]), (Array(second[5...]), []),
            (framed(#"{"method":"c.C"}"#), []),
        ] {
            _ = try bytes.withUnsafeBytes { try DescriptorPassing.send($0, descriptors: descriptors, on: ends[0]) }
        }
        // Read in pieces of 7 bytes: reads cross the messages' ends.
        let framing = DescriptorFraming(maximumMessageSize: 1 << 10, maximumDescriptors: 1)
        var messages: [(text: String, descriptors: Int)] = []
        var buffer = [UInt8](repeating: 0, count: 7)
        while messages.count < 3 {
            let (count, descriptors) = try buffer.withUnsafeMutableBytes {
                try DescriptorPassing.receive(into: $0, on: ends[1])
            }
            try #require(count > 0)
            for message in try buffer.withUnsafeBytes({
                try framing.append(UnsafeRawBufferPointer(rebasing: $0[..<count]), descriptors: descriptors)
            }) {
                messages.append((String(decoding: message.bytes, as: UTF8.self), message.descriptors.count))
            }
        }
        #expect(messages.map(\.text) == [#"{"method":"a.A"}"#, #"{"method":"b.B"}"#, #"{"method":"c.C"}"#])
        #expect(messages.map(\.descriptors) == [0, 1, 0])
    }
}
