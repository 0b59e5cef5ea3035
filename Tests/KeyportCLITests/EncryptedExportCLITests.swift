import Foundation
import KeyportTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The permission bits of `path`.
private func mode(_ path: String) -> mode_t? {
    var info = stat()
    return stat(path, &info) == 0 ? info.st_mode & 0o777 : nil
}

/// The items of the CXF document at `path`, by id (JSON objects compared as Foundation reads them).
private func items(_ path: String) throws -> [String: NSDictionary] {
    let document = try #require(
        try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
    )
    let accounts = try #require(document["accounts"] as? [[String: Any]])
    var byID: [String: NSDictionary] = [:]
    for case let item as [String: Any] in accounts.flatMap({ $0["items"] as? [Any] ?? [] }) {
        byID[try #require(item["id"] as? String)] = item as NSDictionary
    }
    return byID
}

@Suite("keyport vault keygen, export --request, import --key", .serialized)
struct EncryptedExportCLITests {
    @Test(
        "keygen makes a 0600 key and a request; export seals a real vault's items to it; another vault imports every one equal; tampered files, another key and a wrong passphrase import nothing"
    )
    func roundTrip() async throws {
        let directory = try TemporaryDirectory("kp-hpke-cli")
        let data = directory.url.appendingPathComponent("data").path
        defer {
            // Both vaults' keepers: started by `unlock`, with this test's data directory.
            Started.stop(running: "keyport-vault", withEnvironment: "XDG_DATA_HOME=\(data)")
            directory.remove()
        }
        var environment = ProcessInfo.processInfo.environment
        environment["KEYPORT_VAULT_SOCKET"] = directory.url.appendingPathComponent("run/vault.sock").path
        environment["XDG_DATA_HOME"] = data
        func path(_ name: String) -> String { directory.url.appendingPathComponent(name).path }
        func keyport(_ arguments: [String], _ input: String? = nil) async throws -> CLI.Result {
            try await runProgram(
                CLI.executable.path,
                ["vault"] + arguments,
                environment: environment,
                input: input.map { Data($0.utf8) }
            )
        }
        let second = ["--vault", path("second.keyport")]
        func itemCount() async throws -> String {
            try await keyport(["status"] + second).stdout
        }

        // The exporter: a vault with every kind of credential the CLI fixture has.
        #expect(try await keyport(["init", "--passphrase-stdin"], "first\n").status == 0)
        #expect(try await keyport(["unlock", "--passphrase-stdin"], "first\n").status == 0)
        let fixture = try await keyport(["import", try CLI.fixture("valid.json")])
        #expect(fixture.stdout.contains("15 new"), "\(fixture.stdout)\(fixture.stderr)")
        #expect(try await keyport(["export", "-o", path("plain.cxf.json")]).status == 0)

        // The importer's key pair and request.
        let made = try await keyport(
            ["keygen", "-o", path("import.key"), "--importer", "importer.example", "--passphrase-stdin"],
            "key passphrase\n"
        )
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.contains("import.request.json (public)"), "\(made.stdout)")
        #expect(mode(path("import.key")) == 0o600)
        let key = try Data(contentsOf: URL(fileURLWithPath: path("import.key")))
        #expect(!String(decoding: key, as: UTF8.self).contains(#""d""#), "the private part is sealed")
        let request = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path("import.request.json"))))
                as? [String: Any]
        )
        #expect(request["importer"] as? String == "importer.example" && request["version"] as? Int == 0)
        let suite = try #require((request["hpke"] as? [[String: Any]])?.first)
        #expect(suite["mode"] as? String == "base" && suite["kem"] as? Int == 32)
        #expect(suite["kdf"] as? Int == 1 && suite["aead"] as? Int == 2)
        #expect((suite["key"] as? [String: String])?["crv"] == "X25519")

        // Never overwritten: neither the key nor, through another key's name, the request.
        let again = try await keyport(["keygen", "-o", path("import.key"), "--no-passphrase"])
        #expect(again.status == 1 && again.stderr.contains("exists already"), "\(again.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path("import.key"))) == key)
        let clash = try await keyport([
            "keygen", "-o", path("other.key"), "--request", path("import.request.json"), "--no-passphrase",
        ])
        #expect(clash.status == 1 && clash.stderr.contains("exists already"), "\(clash.stderr)")
        #expect(mode(path("other.key")) == nil, "nothing made")

        // The exporter seals to the request.
        let sealed = try await keyport(["export", "--request", path("import.request.json"), "-o", path("sealed.json")])
        #expect(sealed.status == 0, "\(sealed.stderr)")
        #expect(sealed.stderr.contains("sealed 15 items to the key of importer.example's request"), "\(sealed.stderr)")
        // The fingerprint keygen shows is the one the exporter sees: 8 groups of 4 hex digits.
        let fingerprint = try #require(
            made.stdout.split(separator: "\n").first { $0.hasPrefix("  ") && $0.split(separator: " ").count == 8 }
        ).trimmingCharacters(in: .whitespaces)
        #expect(fingerprint.count == 39 && sealed.stderr.contains("fingerprint is \(fingerprint):"), "\(sealed.stderr)")
        // A request keygen made without --importer names Keyport's placeholder, no one's name:
        // the exporter says whose it is.
        #expect(try await keyport(["keygen", "-o", path("own.key"), "--no-passphrase"]).status == 0)
        let own = try await keyport(["export", "--request", path("own.request.json"), "-o", path("own.json")])
        #expect(
            own.status == 0 && own.stderr.contains("to the key of a Keyport Vault's request")
                && !own.stderr.contains("keyport.invalid"),
            "\(own.stderr)"
        )
        #expect(mode(path("sealed.json")) == 0o600)
        let file = try String(contentsOfFile: path("sealed.json"), encoding: .utf8)
        #expect(!file.contains("alice") && !file.contains("basic-auth"), "nothing in the clear")

        // The importer: a second vault, its own keeper.
        #expect(try await keyport(["init", "--passphrase-stdin"] + second, "second\n").status == 0)
        #expect(try await keyport(["unlock", "--passphrase-stdin"] + second, "second\n").status == 0)

        // A changed byte anywhere — payload, encapsulated key, exporter — imports nothing.
        let response = try #require(
            try JSONSerialization.jsonObject(with: Data(file.utf8)) as? [String: Any]
        )
        let payload = try #require(response["payload"] as? String)
        let x = try #require(((response["hpke"] as? [String: Any])?["key"] as? [String: String])?["x"])
        // One character in the middle of the payload, flipped; the index is the file's, not the payload's.
        let payloadRange = try #require(file.range(of: payload))
        let middle = file.index(payloadRange.lowerBound, offsetBy: payload.count / 2)
        let otherKey = try #require(suite["key"] as? [String: String])["x"]!  // a valid key, not the one sealed with
        let changes: [(String, String, String)] = [
            (
                "payload", file.replacingCharacters(in: middle...middle, with: file[middle] == "A" ? "B" : "A"),
                "[tampered]"
            ),
            ("encapsulated key", file.replacingOccurrences(of: x, with: otherKey), "[tampered]"),
            ("exporter", file.replacingOccurrences(of: "keyport.invalid", with: "keyport.invalie"), "[tampered]"),
            (
                "version", file.replacingOccurrences(of: #""version": 0"#, with: #""version": 1"#),
                "[unsupported-version]"
            ),
            (
                "kem", file.replacingOccurrences(of: #""kem": 32"#, with: #""kem": 33"#),
                "[incompatible-hpke-parameters]"
            ),
            ("cut short", String(file.dropLast(40)), "[invalid-json]"),
        ]
        for (what, changed, code) in changes {
            try changed.write(toFile: path("changed.json"), atomically: true, encoding: .utf8)
            let refused = try await keyport(
                ["import", path("changed.json"), "--key", path("import.key"), "--passphrase-stdin"] + second,
                "key passphrase\n"
            )
            #expect(refused.status == 1 && refused.stderr.contains(code), "\(what): \(refused.stderr)")
            if code == "[tampered]" {
                #expect(
                    refused.stderr.contains("not sealed for this key")
                        && refused.stderr.contains("nothing was imported")
                )
            }
        }
        #expect(try await itemCount().contains(": 0 items"), "nothing came in")

        // Another key (unsealed, this time) does not open it; nor does the right key with a wrong passphrase.
        #expect(try await keyport(["keygen", "-o", path("stranger.key"), "--no-passphrase"]).status == 0)
        #expect(mode(path("stranger.key")) == 0o600)
        let stranger = try await keyport(["import", path("sealed.json"), "--key", path("stranger.key")] + second)
        #expect(stranger.status == 1 && stranger.stderr.contains("[tampered]"), "\(stranger.stderr)")
        let wrong = try await keyport(
            ["import", path("sealed.json"), "--key", path("import.key"), "--passphrase-stdin"] + second,
            "not the passphrase\n"
        )
        #expect(wrong.status == 1 && wrong.stderr.contains("[wrong-passphrase]"), "\(wrong.stderr)")
        let keyless = try await keyport(["import", path("sealed.json")] + second)
        #expect(keyless.status == 1 && keyless.stderr.contains("--key KEYFILE"), "\(keyless.stderr)")
        let request2 = try await keyport(["import", path("import.request.json"), "--key", path("import.key")] + second)
        #expect(request2.status == 1 && request2.stderr.contains("[wrong-file]"), "\(request2.stderr)")
        #expect(try await itemCount().contains(": 0 items"))

        // The right key: every item, equal.
        let imported = try await keyport(
            ["import", path("sealed.json"), "--key", path("import.key"), "--passphrase-stdin"] + second,
            "key passphrase\n"
        )
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(
            imported.stdout.contains("(encrypted CXF): 15 new, 0 merged into items the vault had, 0 it had already"),
            "\(imported.stdout)"
        )
        #expect(try await keyport(["export", "-o", path("second.cxf.json")] + second).status == 0)
        let before = try items(path("plain.cxf.json"))
        #expect(before.count == 15)
        #expect(try items(path("second.cxf.json")) == before)
    }

    @Test(
        "a malformed request is refused before the vault is asked, naming what is wrong and where; no file is written",
        arguments: [
            (
                #"{"version":0,"hpke":[{"mode":"base","kem":32,"kdf":1,"aead":2,"key":{"kty":"EC","crv":"P-256","x":"AA","y":"AA"}}],"importer":"a.example"}"#,
                #"/hpke/0/key/kty is "EC"; an X25519 key's is "OKP" (RFC 8037) [incorrect-importer-key-encoding]"#
            ),
            (
                #"{"version":0,"hpke":[{"mode":"base","kem":16,"kdf":1,"aead":1,"key":{}}],"importer":"a.example"}"#,
                #"Keyport seals with mode "base", kem 32 (DHKEM(X25519, HKDF-SHA256)), kdf 1 (HKDF-SHA256), aead 2 (AES-256-GCM) only"#
            ),
            (
                #"{"version":0,"hpke":[{"mode":"base","kem":32,"kdf":1,"aead":2,"key":{"kty":"OKP","crv":"X25519","x":"AAAA"}}],"importer":"a.example"}"#,
                "/hpke/0/key/x is not an X25519 public key"
            ),
            (#"{"version":2}"#, "/version is 2; Keyport speaks version 0"),
        ]
    )
    func malformedRequest(request: String, message: String) async throws {
        let directory = try TemporaryDirectory("kp-hpke-request")
        defer { directory.remove() }
        let requestPath = directory.url.appendingPathComponent("request.json").path
        let output = directory.url.appendingPathComponent("out.json").path
        try request.write(toFile: requestPath, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["KEYPORT_VAULT_SOCKET"] = directory.url.appendingPathComponent("run/vault.sock").path
        environment["XDG_DATA_HOME"] = directory.url.appendingPathComponent("data").path
        let refused = try await runProgram(
            CLI.executable.path,
            ["vault", "export", "--request", requestPath, "-o", output],
            environment: environment
        )
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("\(requestPath): ") && refused.stderr.contains(message), "\(refused.stderr)")
        #expect(mode(output) == nil)
    }
}
