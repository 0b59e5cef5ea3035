import Foundation
import Synchronization
import Testing

import class KeyportSystem.PinnedProcess
// Only these: this file has an httpGet of its own, which also returns the body.
import class KeyportTestSupport.Program
import struct KeyportTestSupport.TemporaryDirectory

@testable import WebAuthentication

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Everything here runs for real: fake browsers are /bin/sh scripts started as processes, callbacks
// travel over loopback HTTP to a real `LoopbackReceiver`. Nothing of Keyport's is mocked.

// MARK: - State filter and form values

@Suite("Callback state filter and form values")
struct StateFilterTests {
    let sent = URL(string: "https://auth.example/authorize?response_type=code&client_id=app&state=xyz-123_A")!

    @Test("the state sent is required back, in the query or the fragment; another or none is refused")
    func filter() throws {
        let accepts = CallbackMatcher.stateFilter(for: sent)
        #expect(accepts(URL(string: "http://127.0.0.1:4711/callback?code=a&state=xyz-123_A")!))
        #expect(accepts(URL(string: "com.example.app:/callback#code=a&state=xyz-123_A")!))
        #expect(accepts(URL(string: "http://127.0.0.1:4711/callback#access_token=t&state=xyz-123_A")!))
        #expect(!accepts(URL(string: "http://127.0.0.1:4711/callback?code=a&state=xyz-123_B")!))
        #expect(!accepts(URL(string: "http://127.0.0.1:4711/callback?code=a&state=xyz-123_")!))
        #expect(!accepts(URL(string: "http://127.0.0.1:4711/callback?code=a&state=xyz-123_AA")!))
        #expect(!accepts(URL(string: "http://127.0.0.1:4711/callback?code=a&state=")!))
        #expect(!accepts(URL(string: "http://127.0.0.1:4711/callback?code=a")!))
        #expect(!accepts(URL(string: "http://127.0.0.1:4711/callback")!))
        // A wrong state in the query is not rescued by a right one in the fragment.
        #expect(!accepts(URL(string: "http://127.0.0.1:4711/callback?state=forged#state=xyz-123_A")!))
        // The state is compared decoded: `%2B` is `+`, a bare `+` is a space.
        let plus = CallbackMatcher.stateFilter(for: URL(string: "https://auth.example/authorize?state=a%2Bb")!)
        #expect(plus(URL(string: "http://127.0.0.1:4711/callback?state=a%2Bb")!))
        #expect(!plus(URL(string: "http://127.0.0.1:4711/callback?state=a+b")!))
    }

    @Test("a URL that sends no state accepts every callback")
    func noState() {
        let accepts = CallbackMatcher.stateFilter(
            for: URL(string: "https://auth.example/authorize?response_type=code&client_id=app")!
        )
        #expect(accepts(URL(string: "http://127.0.0.1:4711/callback?code=a&state=anything")!))
        #expect(accepts(URL(string: "http://127.0.0.1:4711/callback?code=a")!))
        #expect(accepts(URL(string: "com.example.app:/done")!))
    }

    @Test("a real loopback receiver with the filter answers 400 to a forged or missing state and keeps waiting")
    func onTheWire() async throws {
        let receiver = try await LoopbackReceiver.start(accept: CallbackMatcher.stateFilter(for: sent))
        let waiting = Task { try await receiver.waitForCallback(timeout: .seconds(10)) }
        let base = receiver.redirectURI.absoluteString
        #expect(try await httpGet(URL(string: base + "?code=1&state=forged")!).status == 400)
        #expect(try await httpGet(URL(string: base + "?code=1")!).status == 400)
        #expect(try await httpGet(URL(string: base + "?code=2&state=xyz-123_A")!).status == 200)
        #expect(try await waiting.value.absoluteString == base + "?code=2&state=xyz-123_A")
    }

    @Test("form values: + is a space, %XX is decoded, a bare name is empty, an absent one is nil")
    func formValues() {
        let text =
            "error=access_denied&error_description=The+person+said+no&pct=%41%2B%20b%3D&flag&eq=a=b&dup=1&dup=2&my+name=v"
        #expect(CallbackMatcher.formValue("error_description", in: text) == "The person said no")
        #expect(CallbackMatcher.formValue("pct", in: text) == "A+ b=")
        #expect(CallbackMatcher.formValue("flag", in: text) == "")
        #expect(CallbackMatcher.formValue("eq", in: text) == "a=b")
        #expect(CallbackMatcher.formValue("dup", in: text) == "1")
        #expect(CallbackMatcher.formValue("my name", in: text) == "v")
        #expect(CallbackMatcher.formValue("missing", in: text) == nil)
        #expect(CallbackMatcher.formValue("err", in: text) == nil)
        #expect(CallbackMatcher.formValue("error", in: nil) == nil)
        #expect(CallbackMatcher.formValue("error", in: "") == nil)

        let url = URL(string: "com.example.app:/cb?code=q+1#code=f%201&state=s")!
        #expect(CallbackMatcher.queryValue("code", in: url) == "q 1")
        #expect(CallbackMatcher.fragmentValue("code", in: url) == "f 1")
        #expect(CallbackMatcher.queryValue("state", in: url) == nil)
        #expect(CallbackMatcher.fragmentValue("state", in: url) == "s")
    }
}

// MARK: - Authorization response, ID token, transport

@Suite("OAuth checks: error text, ID token claims, transport")
struct OAuthCheckTests {
    let matcher = CallbackMatcher.loopback(host: "127.0.0.1", port: 50123, path: "/callback")
    var request: AuthorizationRequest {
        AuthorizationRequest(
            authorizationEndpoint: URL(string: "https://auth.example/authorize")!,
            clientID: "app",
            redirectURI: URL(string: "http://127.0.0.1:50123/callback")!,
            state: OAuthSecretValue(rawValue: "st-1")
        )
    }

    @Test("the server's error_description is form-decoded: + is a space")
    func errorDescription() throws {
        let denied = URL(
            string:
                "http://127.0.0.1:50123/callback?error=access_denied&error_description=The+person+said+no&state=st-1"
        )!
        #expect {
            try request.authorizationCode(from: denied, matching: matcher)
        } throws: { error in
            let e = error as? OAuthError
            return e?.code == .accessDenied && e?.message.contains("The person said no") == true
        }
        let other = URL(
            string:
                "http://127.0.0.1:50123/callback?state=st-1&error=temporarily_unavailable&error_description=Try+again%2C+later"
        )!
        #expect {
            try request.authorizationCode(from: other, matching: matcher)
        } throws: { error in
            let e = error as? OAuthError
            return e?.code == .server && e?.serverError == "temporarily_unavailable"
                && e?.message.contains("Try again, later") == true
        }
        let code = try request.authorizationCode(
            from: URL(string: "http://127.0.0.1:50123/callback?code=ab%2Fcd&state=st-1")!,
            matching: matcher
        )
        #expect(code.rawValue == "ab/cd")
    }

    let now = Date(timeIntervalSince1970: 1_700_000_000)
    let issuer = "https://issuer.example"

    func claims(_ changes: [String: Any?] = [:]) -> [String: Any] {
        var claims: [String: Any] = [
            "iss": issuer, "sub": "user-42", "aud": "app", "exp": 1_700_000_600, "iat": 1_700_000_000,
            "nonce": "n-0123456789",
        ]
        for (key, value) in changes { claims[key] = value }
        return claims
    }

    /// Checks `token` and returns the error's code, making sure its description does not give the token away.
    func failure(_ token: OAuthSecretValue, nonce: String? = "n-0123456789") -> OAuthError.Code? {
        do throws(OAuthError) {
            try IDTokenClaims(token: token).check(
                issuer: issuer,
                clientID: "app",
                nonce: nonce.map(OAuthSecretValue.init(rawValue:)),
                now: now
            )
            return nil
        } catch {
            let text = "\(error) \(String(reflecting: error)) \(error.message)"
            #expect(!text.contains(token.rawValue))
            let parts = token.rawValue.split(separator: ".")
            if parts.count > 1 { #expect(!text.contains(parts[1])) }
            #expect(!text.contains("n-0123456789"))
            return error.code
        }
    }

    @Test("ID token claims: the right issuer, audience (string or array), nonce and an unexpired exp pass")
    func idTokenGood() throws {
        let token = jwt(claims())
        let parsed = try IDTokenClaims(token: token)
        #expect(parsed.issuer == issuer)
        #expect(parsed.subject == "user-42")
        #expect(parsed.audience == ["app"])
        #expect(parsed.expiresAt == Date(timeIntervalSince1970: 1_700_000_600))
        #expect(parsed.nonce == OAuthSecretValue(rawValue: "n-0123456789"))
        #expect(failure(token) == nil)
        #expect(failure(jwt(claims(["aud": ["other-app", "app"]]))) == nil)
        // No nonce sent: none is checked.
        #expect(failure(jwt(claims(["nonce": nil])), nonce: nil) == nil)
        #expect(failure(jwt(claims()), nonce: nil) == nil)
        // Real ID tokens have padding-free base64url segments of every length.
        #expect(failure(jwt(claims(["sub": "u"]))) == nil)
        #expect(failure(jwt(claims(["sub": "us"]))) == nil)
        #expect(failure(jwt(claims(["sub": "use"]))) == nil)
    }

    @Test("ID token claims: wrong issuer, audience, expiry or nonce each fail with their kind")
    func idTokenBad() {
        #expect(failure(jwt(claims(["iss": "https://evil.example"]))) == .issuerMismatch)
        #expect(failure(jwt(claims(["iss": issuer + "/"]))) == .issuerMismatch)
        #expect(failure(jwt(claims(["aud": "other-app"]))) == .invalidResponse)
        #expect(failure(jwt(claims(["aud": ["other-app", "app2"]]))) == .invalidResponse)
        #expect(failure(jwt(claims(["exp": 1_699_999_999]))) == .invalidResponse)
        #expect(failure(jwt(claims(["exp": 1_700_000_000]))) == .invalidResponse)  // exp must be after now
        #expect(failure(jwt(claims(["nonce": "n-other"]))) == .invalidResponse)
        #expect(failure(jwt(claims(["nonce": nil]))) == .invalidResponse)  // sent one, got none

        do throws(OAuthError) {
            try IDTokenClaims(token: jwt(claims(["iss": "https://evil.example"]))).check(
                issuer: issuer,
                clientID: "app",
                nonce: nil,
                now: now
            )
            Issue.record("a token from another issuer passed")
        } catch {
            #expect(error.message.contains("https://evil.example"))
            #expect(error.message.contains(issuer))
        }
    }

    @Test("malformed ID tokens are invalid responses")
    func idTokenMalformed() {
        let header = base64url(Data(#"{"alg":"none"}"#.utf8))
        let payload = base64url(try! JSONSerialization.data(withJSONObject: claims()))
        #expect(failure(OAuthSecretValue(rawValue: "\(header).\(payload)")) == .invalidResponse)  // 2 parts
        #expect(failure(OAuthSecretValue(rawValue: "\(header).\(payload).sig.extra")) == .invalidResponse)
        #expect(
            failure(OAuthSecretValue(rawValue: "\(header).\(base64url(Data("not json at all".utf8))).sig"))
                == .invalidResponse
        )
        #expect(
            failure(OAuthSecretValue(rawValue: "\(header).\(base64url(Data("[1,2]".utf8))).sig")) == .invalidResponse
        )
        #expect(failure(OAuthSecretValue(rawValue: "\(header).!!not-base64!!.sig")) == .invalidResponse)
        #expect(failure(OAuthSecretValue(rawValue: "")) == .invalidResponse)
        #expect(failure(jwt(claims(["sub": nil]))) == .invalidResponse)
        #expect(failure(jwt(claims(["iss": nil]))) == .invalidResponse)
        #expect(failure(jwt(claims(["exp": nil]))) == .invalidResponse)
        #expect(failure(jwt(claims(["exp": "tomorrow"]))) == .invalidResponse)
        #expect(failure(jwt(claims(["aud": nil]))) == .invalidResponse)
        #expect(failure(jwt(claims(["aud": 7]))) == .invalidResponse)
    }

    @Test("transport: https anywhere, plain http only on a loopback address")
    func transport() throws {
        for allowed in [
            "https://auth.example/token", "HTTPS://auth.example/token", "http://127.0.0.1:8080/token",
            "http://localhost:8080/token",
            "http://[::1]:8080/token", "http://127.0.0.1/",
        ] {
            #expect(throws: Never.self, "\(allowed)") {
                try OAuthClient.checkTransport(URL(string: allowed)!, "token endpoint")
            }
        }
        for refused in [
            "http://auth.example/token", "http://127.0.0.1.nip.io/token", "http://localhost.evil.example/token",
            "http://10.0.0.1/token",
            "ftp://127.0.0.1/token", "file:///etc/passwd",
        ] {
            #expect("\(refused)") {
                try OAuthClient.checkTransport(URL(string: refused)!, "token endpoint")
            } throws: { error in
                let e = error as? OAuthError
                return e?.code == .invalidResponse && e?.message.contains(URL(string: refused)!.absoluteString) == true
                    && e?.message.contains("token endpoint") == true
            }
        }
    }
}

// MARK: - Choosing the ephemeral browser

@Suite("Ephemeral browser: choosing the command")
struct EphemeralBrowserChoiceTests {
    @Test("a given command must place the profile (%p), be non-empty and exist")
    func givenCommand() throws {
        #expect { try EphemeralBrowser(command: ["/bin/sh", "%s"]) } throws: { "\($0)".contains("profile") }
        #expect { try EphemeralBrowser(command: []) } throws: { "\($0)".contains("empty") }
        #expect { try EphemeralBrowser(command: ["", "%p"]) } throws: { "\($0)".contains("empty") }
        #expect {
            try EphemeralBrowser(
                command: ["keyport-no-such-browser", "--profile=%p", "%s"],
                environment: ["PATH": "/usr/bin:/bin"]
            )
        } throws: { "\($0)".contains("not found") }

        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let program = try sandbox.script("my-browser", "exit 0")
        let byName = try EphemeralBrowser(
            command: ["my-browser", "--profile=%p", "%s"],
            environment: ["PATH": "/nonexistent:\(sandbox.path)"]
        )
        #expect(byName.command == [program, "--profile=%p", "%s"])
        let byPath = try EphemeralBrowser(command: [program, "%p", "%s"], environment: [:])
        #expect(byPath.command == [program, "%p", "%s"])
    }

    @Test("the automatic choice needs a display")
    func noDisplay() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        _ = try sandbox.script("chromium", "exit 0")
        #expect {
            try EphemeralBrowser(environment: ["PATH": sandbox.path])
        } throws: { "\($0)".contains("no display") }
        #expect {
            try EphemeralBrowser(environment: ["PATH": sandbox.path, "DISPLAY": "", "WAYLAND_DISPLAY": ""])
        } throws: { "\($0)".contains("no display") }
    }

    @Test("with a display, the first known browser on PATH is chosen, with %p and %s in its arguments")
    func automatic() throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let chromium = try sandbox.script("chromium", "exit 0")
        _ = try sandbox.script("firefox", "exit 0")
        let browser = try EphemeralBrowser(environment: ["DISPLAY": ":0", "PATH": sandbox.path])
        #expect(browser.command.first == chromium)
        #expect(browser.command.dropFirst().contains { $0.contains("%p") })
        #expect(browser.command.dropFirst().contains("%s"))

        let wayland = try EphemeralBrowser(environment: ["WAYLAND_DISPLAY": "wayland-0", "PATH": sandbox.path])
        #expect(wayland.command.first == chromium)

        try FileManager.default.removeItem(atPath: chromium)
        let firefox = try EphemeralBrowser(environment: ["DISPLAY": ":0", "PATH": sandbox.path])
        #expect(firefox.command.first == sandbox.path + "/firefox")
        #expect(firefox.command.contains("%p"))

        let empty = try Sandbox()
        defer { empty.remove() }
        #expect {
            try EphemeralBrowser(environment: ["DISPLAY": ":0", "PATH": empty.path])
        } throws: { "\($0)".contains("no browser") }
    }
}

// MARK: - The whole flow with real processes

@Suite("Authentication flow with real browser processes", .timeLimit(.minutes(1)))
struct AuthenticationFlowTests {
    @Test("an ephemeral browser gets a fresh 0700 profile and the URL; its callback ends the flow; the profile goes")
    func ephemeralCallback() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let script = try sandbox.script(
            "browser",
            """
            trap "echo TERM > '\(sandbox.path)/terminated'; exit 0" TERM
            printf '%s\\n' "$@" > '\(sandbox.path)/args'
            echo $$ > '\(sandbox.path)/pid'
            if [ -d "$1" ] && [ "$(stat -c %a "$1")" = 700 ] && [ -z "$(ls -A "$1")" ]; then echo ok; else echo "bad: $(stat -c %a "$1" 2>&1)"; fi > '\(sandbox.path)/profile-check'
            while [ ! -e '\(sandbox.path)/pinned' ]; do sleep 0.05; done
            \(fetch("$2"))
            sleep 30 &
            wait
            """
        )
        let receiver = try await LoopbackReceiver.start()
        let url = URL(string: receiver.redirectURI.absoluteString + "?code=c0de&state=s1")!
        let presented = Presented()
        let browser = try EphemeralBrowser(command: [script, "%p", "%s"])
        let flow = Task {
            await runFlow(
                url: url,
                receiver: receiver,
                browser: .ephemeral(browser),
                timeout: .seconds(10),
                presented: presented
            )
        }
        let process = try await sandbox.pin("pid")
        try sandbox.mark("pinned")
        let result = await flow.value
        #expect(result == .success(url))
        #expect(presented.calls.isEmpty)

        let arguments = try #require(sandbox.read("args")).split(separator: "\n").map(String.init)
        try #require(arguments.count == 2)
        #expect(arguments[1] == url.absoluteString)
        let profile = URL(fileURLWithPath: arguments[0])
        #expect(profile.lastPathComponent.hasPrefix("keyport-browser-"))
        #expect(profile.deletingLastPathComponent().standardizedFileURL.path == profileBase)
        #expect(sandbox.read("profile-check") == "ok\n")
        #expect(!FileManager.default.fileExists(atPath: profile.path))
        // The browser is asked to quit (SIGTERM, not a kill after the grace time) once the callback is in.
        #expect(!process.isAlive)
        #expect(sandbox.read("terminated") == "TERM\n")
        #expect(await receiverIsClosed(receiver))
    }

    @Test("the ephemeral browser exiting before the callback ends the flow as browserClosed")
    func browserClosed() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let script = try sandbox.script("browser", "printf '%s\\n' \"$@\" > '\(sandbox.path)/args'\nexit 0")
        let receiver = try await LoopbackReceiver.start()
        let url = URL(string: receiver.redirectURI.absoluteString + "?code=x")!
        let result = await runFlow(
            url: url,
            receiver: receiver,
            browser: .ephemeral(try EphemeralBrowser(command: [script, "%p", "%s"])),
            timeout: .seconds(20)
        )
        #expect(result == .failure(.browserClosed))
        let profile = try #require(sandbox.read("args")?.split(separator: "\n").first.map(String.init))
        #expect(!FileManager.default.fileExists(atPath: profile))
        #expect(await receiverIsClosed(receiver))
    }

    @Test("no callback within the timeout: timedOut, the browser and its children are killed, the profile removed")
    func timeout() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let script = try sandbox.script("browser", sleepingBrowser(in: sandbox))
        let receiver = try await LoopbackReceiver.start()
        let browser = try EphemeralBrowser(command: [script, "%p", "%s"])
        let started = ContinuousClock.now
        // Long enough to pin the browser and its child while they surely live.
        let flow = Task {
            await runFlow(
                url: receiver.redirectURI,
                receiver: receiver,
                browser: .ephemeral(browser),
                timeout: .seconds(3)
            )
        }
        let process = try await sandbox.pin("pid")
        let child = try await sandbox.pin("child")
        let result = await flow.value
        let elapsed = ContinuousClock.now - started
        #expect(result == .failure(.timedOut(.seconds(3))))
        #expect(elapsed >= .seconds(3))  // not before the timeout
        #expect(sandbox.read("terminated") == "TERM\n")
        #expect(!process.isAlive)  // terminate() waits for the browser itself
        #expect(await eventually { !child.isAlive })  // its process group got the signal too
        let profile = try #require(sandbox.read("args")?.split(separator: "\n").first.map(String.init))
        #expect(!FileManager.default.fileExists(atPath: profile))
        #expect(await receiverIsClosed(receiver))
    }

    @Test("cancelling the task running the flow: cancelled, the browser terminated, the profile removed")
    func cancellation() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let script = try sandbox.script("browser", sleepingBrowser(in: sandbox))
        let receiver = try await LoopbackReceiver.start()
        let browser = try EphemeralBrowser(command: [script, "%p", "%s"])
        let flow = Task {
            await runFlow(url: receiver.redirectURI, receiver: receiver, browser: .ephemeral(browser), timeout: nil)
        }
        let process = try await sandbox.pin("pid")
        let child = try await sandbox.pin("child")
        flow.cancel()
        let result = await flow.value
        #expect(result == .failure(.cancelled))
        #expect(sandbox.read("terminated") == "TERM\n")
        #expect(await eventually { !process.isAlive && !child.isAlive })
        let profile = try #require(sandbox.read("args")?.split(separator: "\n").first.map(String.init))
        #expect(await eventually { !FileManager.default.fileExists(atPath: profile) })
        #expect(await receiverIsClosed(receiver))
    }

    @Test("a shared session runs $BROWSER with the URL, and its callback ends the flow")
    func sharedBrowser() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let script = try sandbox.script(
            "browser",
            """
            printf '%s\\n' "$@" > '\(sandbox.path)/args'
            \(fetch("$1"))
            """
        )
        let receiver = try await LoopbackReceiver.start()
        let url = URL(string: receiver.redirectURI.absoluteString + "?code=shared&state=s2")!
        let presented = Presented()
        let launcher = BrowserLauncher(environment: ["BROWSER": script, "PATH": "/usr/bin:/bin"])
        let result = await runFlow(
            url: url,
            receiver: receiver,
            browser: .shared(launcher),
            timeout: .seconds(10),
            presented: presented
        )
        #expect(result == .success(url))
        #expect(sandbox.read("args") == url.absoluteString + "\n")
        #expect(presented.calls.isEmpty)
        #expect(await receiverIsClosed(receiver))
    }

    @Test("no display and no $BROWSER: the URL is presented with a reason and the wait goes on")
    func headless() async throws {
        let receiver = try await LoopbackReceiver.start()
        let url = URL(string: receiver.redirectURI.absoluteString + "?code=by-hand")!
        let presented = Presented()
        let finished = Flag()
        let launcher = BrowserLauncher(environment: ["PATH": "/usr/bin:/bin"])
        let flow = Task {
            let result = await runFlow(
                url: url,
                receiver: receiver,
                browser: .shared(launcher),
                timeout: .seconds(10),
                presented: presented
            )
            finished.set()
            return result
        }
        try #require(await eventually { !presented.calls.isEmpty })
        let call = try #require(presented.calls.first)
        #expect(call.url == url)
        #expect(call.reason.contains("no display"))
        try await Task.sleep(for: .milliseconds(300))
        #expect(!finished.isSet)  // still waiting for the person

        // The person opens the URL elsewhere; the redirect reaches the receiver.
        let answer = try await httpGet(url)
        #expect(answer.status == 200)
        #expect(await flow.value == .success(url))
        #expect(presented.calls.count == 1)
        #expect(await receiverIsClosed(receiver))
    }

    @Test("a browser that cannot be started fails the flow and still closes the receiver")
    func cannotStart() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let script = try sandbox.script("browser", "exit 0")
        let browser = try EphemeralBrowser(command: [script, "%p", "%s"])
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: script)
        let receiver = try await LoopbackReceiver.start()
        let result = await runFlow(
            url: receiver.redirectURI,
            receiver: receiver,
            browser: .ephemeral(browser),
            timeout: .seconds(10)
        )
        guard case .failure(let ending) = result, ending.code == .failed else {
            Issue.record("expected a failure to start, got \(result)")
            return
        }
        #expect(ending.message.contains(script))
        #expect(await receiverIsClosed(receiver))
    }
}

// MARK: - Stale profiles

@Suite("Ephemeral browser: profiles left behind")
struct StaleProfileTests {
    /// Starts a real process that holds `directory` locked, as a running Keyport holds its
    /// profile, and returns once the lock is taken.
    func lockHolder(_ directory: String) async throws -> Program {
        let holder = try Program(
            "/usr/bin/python3",
            [
                "-c",
                "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(300)",
                directory,
            ]
        )
        _ = try await holder.waitForLine(timeout: .seconds(60)) { $0 == "locked" }
        return holder
    }

    @Test("launching removes this user's profile directories nobody holds, and keeps those a live process holds")
    func sweep() async throws {
        let sandbox = try Sandbox()
        defer { sandbox.remove() }
        let environment = ["XDG_RUNTIME_DIR": sandbox.path, "PATH": "/usr/bin:/bin"]
        let fm = FileManager.default
        // Left by a Keyport that was killed: a profile with cookies in it, and nobody holding it.
        let stale = "\(sandbox.path)/keyport-browser-Stale1"
        try fm.createDirectory(atPath: stale + "/Default", withIntermediateDirectories: true)
        try "cookies".write(toFile: stale + "/Default/Cookies", atomically: true, encoding: .utf8)
        // In use by a running process.
        let live = "\(sandbox.path)/keyport-browser-Live01"
        try fm.createDirectory(atPath: live, withIntermediateDirectories: true)
        let holder = try await lockHolder(live)
        // Not profiles: left alone.
        try fm.createDirectory(atPath: "\(sandbox.path)/other-directory", withIntermediateDirectories: true)
        try "x".write(toFile: "\(sandbox.path)/keyport-browser-file", atomically: true, encoding: .utf8)

        let script = try sandbox.script("browser", "exit 0")
        let browser = try EphemeralBrowser(command: [script, "%p", "%s"])
        let first = try browser.launch(URL(string: "http://127.0.0.1:1/")!, environment: environment)
        #expect(!fm.fileExists(atPath: stale))
        #expect(fm.fileExists(atPath: live))
        #expect(fm.fileExists(atPath: "\(sandbox.path)/other-directory"))
        #expect(fm.fileExists(atPath: "\(sandbox.path)/keyport-browser-file"))
        #expect(fm.fileExists(atPath: first.profile.path))

        // A second launch while the first still runs keeps the first's profile, which this process holds.
        let second = try browser.launch(URL(string: "http://127.0.0.1:1/")!, environment: environment)
        #expect(fm.fileExists(atPath: first.profile.path))
        await second.terminate()
        #expect(!fm.fileExists(atPath: second.profile.path))

        // The holder is killed, as a Keyport can be: its profile goes at the next launch.
        holder.signal(SIGKILL)
        try #require(await holder.waitForExit(timeout: .seconds(30)) != nil)
        let third = try browser.launch(URL(string: "http://127.0.0.1:1/")!, environment: environment)
        #expect(!fm.fileExists(atPath: live))
        #expect(fm.fileExists(atPath: first.profile.path))
        await third.terminate()
        await first.terminate()
        #expect(!fm.fileExists(atPath: first.profile.path))
    }
}

// MARK: - Helpers

/// A browser that records its arguments and pid, starts a child, and waits: it never calls back.
/// It quits on SIGTERM, noting that it was asked (a browser started with SIGTERM blocked could
/// only be killed).
private func sleepingBrowser(in sandbox: Sandbox) -> String {
    """
    trap "echo TERM > '\(sandbox.path)/terminated'; exit 0" TERM
    printf '%s\\n' "$@" > '\(sandbox.path)/args'
    echo $$ > '\(sandbox.path)/pid'
    sleep 60 &
    echo $! > '\(sandbox.path)/child'
    wait
    """
}

/// Shell text that GETs `argument` (a shell word such as `"$2"`) directly, bypassing any proxy.
private func fetch(_ argument: String) -> String {
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") {
        return "/usr/bin/curl --noproxy '*' -s -o /dev/null --max-time 5 \"\(argument)\""
    }
    return """
        /usr/bin/python3 -c 'import sys, urllib.request as u; u.build_opener(u.ProxyHandler({})).open(sys.argv[1], timeout=5)' "\(argument)"
        """
}

/// Runs the flow and keeps its typed outcome.
private func runFlow(
    url: URL,
    receiver: LoopbackReceiver,
    browser: BrowserChoice,
    timeout: Duration?,
    presented: Presented = Presented()
) async -> Result<URL, FlowEnding> {
    do {
        return .success(
            try await AuthenticationFlow.run(url: url, receiver: receiver, browser: browser, timeout: timeout) {
                url,
                reason in
                presented.record(url, reason)
            }
        )
    } catch {
        return .failure(error)
    }
}

/// What `presentURL` was called with.
private final class Presented: Sendable {
    private let state = Mutex<[(url: URL, reason: String)]>([])
    func record(_ url: URL, _ reason: String) { state.withLock { $0.append((url, reason)) } }
    var calls: [(url: URL, reason: String)] { state.withLock { $0 } }
}

private final class Flag: Sendable {
    private let state = Mutex(false)
    func set() { state.withLock { $0 = true } }
    var isSet: Bool { state.withLock { $0 } }
}

/// A temporary directory for scripts and what they record.
private struct Sandbox {
    let path: String

    init() throws {
        path = try TemporaryDirectory("keyport-flow").url.standardizedFileURL.path
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// Writes an executable /bin/sh script and returns its path.
    func script(_ name: String, _ body: String) throws -> String {
        let file = "\(path)/\(name)"
        try "#!/bin/sh\n\(body)\n".write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: file)
        return file
    }

    func read(_ name: String) -> String? { try? String(contentsOfFile: "\(path)/\(name)", encoding: .utf8) }

    /// Creates the empty file `name`: a signal a script waits for.
    func mark(_ name: String) throws {
        try Data().write(to: URL(fileURLWithPath: "\(path)/\(name)"))
    }

    /// Waits for a script to write a pid to `name`, and holds that process by a pidfd while it
    /// still runs. Checked by the pidfd, not the number: another test hands out recycled pid
    /// numbers on purpose (`ns_last_pid`), and any busy machine may reuse one.
    func pin(_ name: String) async throws -> PinnedProcess {
        try #require(await eventually(within: .seconds(20)) { read(name)?.hasSuffix("\n") == true })
        let pid = try #require(read(name).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        return try PinnedProcess(pid: pid)
    }
}

/// Where profile directories are made: `$XDG_RUNTIME_DIR`, else the temporary directory.
private var profileBase: String {
    let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? ""
    return URL(fileURLWithPath: runtime.isEmpty ? FileManager.default.temporaryDirectory.path : runtime)
        .standardizedFileURL.path
}

/// Polls `condition` until it holds or `limit` passes.
private func eventually(within limit: Duration = .seconds(3), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return true
}

private let session: URLSession = {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.timeoutIntervalForRequest = 3
    configuration.connectionProxyDictionary = [:]
    return URLSession(configuration: configuration)
}()

/// A real HTTP GET, as a browser sends the redirect.
private func httpGet(_ url: URL) async throws -> (status: Int, body: String) {
    let (data, response) = try await session.data(from: url)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
}

/// Whether a GET to the receiver's redirect URI fails to connect (allowing the close a moment).
private func receiverIsClosed(_ receiver: LoopbackReceiver) async -> Bool {
    let probe = URL(string: receiver.redirectURI.absoluteString + "?probe=1")!
    for _ in 0..<20 {
        do {
            _ = try await httpGet(probe)
        } catch {
            return true
        }
        try? await Task.sleep(for: .milliseconds(25))
    }
    return false
}

private func base64url(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// An unsigned compact JWS: `header.payload.signature`, as an ID token arrives.
private func jwt(_ claims: [String: Any]) -> OAuthSecretValue {
    let header = base64url(
        try! JSONSerialization.data(withJSONObject: ["alg": "RS256", "typ": "JWT", "kid": "k1"], options: .sortedKeys)
    )
    let payload = base64url(try! JSONSerialization.data(withJSONObject: claims, options: .sortedKeys))
    return OAuthSecretValue(rawValue: "\(header).\(payload).\(base64url(Data("not-a-real-signature".utf8)))")
}
