import CredentialExchangeFormat
import Crypto
import Foundation
import KeyportCrypto
import KeyportEncoding
import KeyportSystem
import KeyportTestSupport
import Testing

@testable import KeyportFormats

/// A CXF document of two logins, one with a TOTP secret, as Keyport Vault exports them.
private func sampleDocument() throws -> (bytes: [UInt8], items: [CXF.Item]) {
    let csv =
        "name,url,username,password,note\nexample.com,https://example.com/,alice,pw,a note\n"
        + "example.org,https://example.org/,bob,pw2,\n"
    let items = try Importer.read(Array(csv.utf8)).items
    return (Exporter.cxf(items, timestamp: 1_700_000_000), items)
}

/// A key pair, its request read back as the exporter reads it, and a document sealed to it.
private func sealedSample() throws -> (
    key: EncryptedCXF.RecipientKey, request: [UInt8], file: [UInt8], document: [UInt8]
) {
    let (key, request) = EncryptedCXF.RecipientKey.generate(importer: "importer.example")
    let document = try sampleDocument().bytes
    let file = try EncryptedCXF.seal(
        document,
        for: try EncryptedCXF.Request(parsing: request),
        exporter: "keyport.invalid"
    )
    return (key, request, file, document)
}

/// `file` with its first `old` replaced by `new`.
private func replacing(_ file: [UInt8], _ old: String, _ new: String) throws -> [UInt8] {
    let text = String(decoding: file, as: UTF8.self)
    let range = try #require(text.range(of: old), "the file has \(old)")
    return Array(text.replacingCharacters(in: range, with: new).utf8)
}

/// The code and message `body` throws, or `nil` when it throws nothing.
private func refusal<T>(_ body: () throws(EncryptedCXFError) -> T) -> EncryptedCXFError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

@Suite("Encrypted CXF export (HPKE)")
struct EncryptedCXFTests {
    @Test("a request made for a new key reads back; a document sealed to it opens equal, and imports item for item")
    func roundTrip() throws {
        let (key, request, file, document) = try sealedSample()
        let read = try EncryptedCXF.Request(parsing: request)
        #expect(read.importer == "importer.example" && read.chosen == 0)
        #expect(read.publicKey == key.publicKey && read.digest == key.requestDigest)
        #expect(read.credentialTypes == CXF.Credential.knownTypes && read.knownExtensions == ["shared"])
        #expect(try EncryptedCXF.open(file, with: key) == document)

        #expect(Importer.detect(file) == .encryptedCXF)
        let imported = try Importer.read(file, recipientKey: key)
        let expected = try sampleDocument().items
        #expect(imported.format == .encryptedCXF && imported.items == expected)
        #expect(throws: ImportError.self, "no key, nothing read") { try Importer.read(file) }

        let response = try EncryptedCXF.Response(parsing: file)
        #expect(response.exporter == "keyport.invalid" && response.suite == EncryptedCXF.suite)
        #expect(response.ciphertext.count == document.count + 16, "no compression: the document and the tag")
    }

    @Test("the response's associated data is RFC 8785's form of every member but the payload")
    func associatedData() throws {
        let response = try EncryptedCXF.Response(parsing: try sealedSample().file)
        let x = Base64URL.encode(response.encapsulatedKey)
        let expected =
            #"{"exporter":"keyport.invalid","hpke":{"aead":2,"kdf":1,"kem":32,"#
            + #""key":{"crv":"X25519","kty":"OKP","x":"\#(x)"},"mode":"base"},"version":0}"#
        #expect(String(decoding: response.associatedData, as: UTF8.self) == expected)
        var odd = response
        odd.exporter = "a \"quoted\"\n\u{1}name/é"
        #expect(
            String(decoding: odd.associatedData, as: UTF8.self).hasPrefix(#"{"exporter":"a \"quoted\"\n\u0001name/é","#)
        )
    }

    @Test("every single-bit change anywhere in the file is refused, and nothing opens")
    func everyBit() throws {
        let (key, _, file, _) = try sealedSample()
        var refused = 0
        for index in file.indices {
            for bit in [0, 5, 7] {
                var changed = file
                changed[index] ^= 1 << bit
                if refusal({ () throws(EncryptedCXFError) in try EncryptedCXF.open(changed, with: key) }) != nil {
                    refused += 1
                } else {
                    Issue.record("a change of bit \(bit) of byte \(index) (\(UnicodeScalar(file[index]))) opened")
                }
            }
        }
        #expect(refused == file.count * 3)
    }

    @Test("a changed payload, encapsulated key or exporter, another key, another request: tampered, nothing opens")
    func tampered() throws {
        let (key, _, file, _) = try sealedSample()
        let response = try EncryptedCXF.Response(parsing: file)
        var changes: [(String, [UInt8])] = []
        for position in [0, response.ciphertext.count / 2, response.ciphertext.count - 1] {
            var changed = response
            changed.ciphertext[position] ^= 0x01
            changes.append(("payload byte \(position)", changed.bytes))
        }
        var otherEnc = response
        otherEnc.encapsulatedKey = Array(Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation)
        changes.append(("hpke.key", otherEnc.bytes))
        changes.append(("exporter", try replacing(file, "keyport.invalid", "keyport.invalie")))
        var shorter = response
        shorter.ciphertext.removeLast()
        changes.append(("payload cut short", shorter.bytes))
        for (what, changed) in changes {
            let error = refusal { () throws(EncryptedCXFError) in try EncryptedCXF.open(changed, with: key) }
            #expect(error?.code == .tampered, "\(what): \(String(describing: error))")
            #expect(error?.message.contains("not sealed for this key") == true)
        }

        let stranger = EncryptedCXF.RecipientKey.generate(importer: "importer.example").key
        #expect(
            refusal { () throws(EncryptedCXFError) in try EncryptedCXF.open(file, with: stranger) }?.code == .tampered
        )
        let otherRequest = EncryptedCXF.RecipientKey(
            privateKey: key.privateKey,
            requestDigest: Array(repeating: 7, count: 32)
        )
        #expect(
            refusal { () throws(EncryptedCXFError) in try EncryptedCXF.open(file, with: otherRequest) }?.code
                == .tampered,
            "the same key, answering another request"
        )
    }

    @Test("a file that is not the profile's says what and where")
    func malformedResponses() throws {
        let (key, request, file, _) = try sealedSample()
        let cases: [(String, [UInt8], EncryptedCXFError.Code, String)] = [
            ("not JSON", Array("{\"version\":0,".utf8), .invalidJSON, "not JSON"),
            (
                "version 1", try replacing(file, #""version": 0"#, #""version": 1"#), .unsupportedVersion,
                "/version is 1"
            ),
            ("another KEM", try replacing(file, #""kem": 32"#, #""kem": 16"#), .incompatibleHPKEParameters, "kem 16"),
            ("a mode", try replacing(file, #""base""#, #""auth""#), .incompatibleHPKEParameters, #"mode "auth""#),
            (
                "compressed", try replacing(file, #""exporter""#, #""archive": "deflate", "exporter""#),
                .incompatibleHPKEParameters, "no DEFLATE"
            ),
            ("a member more", try replacing(file, #""exporter""#, #""note": 1, "exporter""#), .malformed, "/note"),
            (
                "a member twice", try replacing(file, #""exporter""#, #""exporter": "x", "exporter""#), .malformed,
                "/exporter appears twice"
            ),
            (
                "a JWK member more", try replacing(file, #""kty": "OKP""#, #""kid": "k", "kty": "OKP""#), .malformed,
                "/hpke/key/kid"
            ),
            ("no exporter", try replacing(file, #""exporter""#, #""exporters""#), .malformed, "/exporters"),
            ("the request", request, .wrongFile, "export request"),
            ("another format", Array(#"{"items":[]}"#.utf8), .wrongFile, "neither hpke nor payload"),
        ]
        for (what, changed, code, words) in cases {
            let error = refusal { () throws(EncryptedCXFError) in try EncryptedCXF.open(changed, with: key) }
            #expect(error?.code == code, "\(what): \(String(describing: error))")
            #expect(error?.message.contains(words) == true, "\(what): \(String(describing: error))")
        }
        // The payload is strict base64url: no padding, no other alphabet.
        for (old, new) in [("\"\n}", "=\"\n}"), ("\"payload\": \"", "\"payload\": \"+/")] {
            let changed = try replacing(file, old, new)
            let error = refusal { () throws(EncryptedCXFError) in try EncryptedCXF.open(changed, with: key) }
            #expect(
                error?.code == .malformed && error?.message.contains("/payload") == true,
                "\(String(describing: error))"
            )
        }
    }

    /// A request whose first suite's key is `key` (a JWK's text) and whose other members are `rest`.
    private static func request(key: String, suite: String = #""mode":"base","kem":32,"kdf":1,"aead":2"#) -> String {
        #"{"version":0,"hpke":[{\#(suite),"key":\#(key)}],"importer":"importer.example"}"#
    }

    private static let x = "hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo"

    @Test(
        "a malformed request or JWK is refused with a code and the JSON pointer of what is wrong",
        arguments: [
            ("[1]", EncryptedCXFError.Code.malformed, "the document is an array"),
            ("{\"version\":0,", .invalidJSON, "not JSON"),
            (#"{"version":1,"hpke":[],"importer":"a"}"#, .unsupportedVersion, "/version is 1"),
            (#"{"version":"0","hpke":[],"importer":"a"}"#, .malformed, "/version is a string"),
            (#"{"version":0,"importer":"a"}"#, .malformed, "has no hpke"),
            (#"{"version":0,"hpke":[],"importer":"a"}"#, .malformed, "/hpke is empty"),
            (#"{"version":0,"hpke":[7],"importer":"a"}"#, .malformed, "/hpke/0 is a number"),
            (
                request(key: "{}", suite: #""mode":"base","kem":32.0,"kdf":1,"aead":2"#), .malformed,
                "/hpke/0/kem is 32.0"
            ),
            (request(key: "{}", suite: #""mode":0,"kem":32,"kdf":1,"aead":2"#), .malformed, "/hpke/0/mode is a number"),
            (
                request(key: "{}", suite: #""mode":"base","kem":32,"kdf":1,"aead":2,"psk":1"#), .malformed,
                "/hpke/0/psk is not a member"
            ),
            (
                request(key: "{}", suite: #""mode":"base","kem":16,"kdf":1,"aead":2"#), .incompatibleHPKEParameters,
                #"Keyport seals with mode "base", kem 32 (DHKEM(X25519, HKDF-SHA256)), kdf 1 (HKDF-SHA256), aead 2 (AES-256-GCM)"#
            ),
            (
                request(key: "{}", suite: #""mode":"base","kem":32,"kdf":1,"aead":3"#), .incompatibleHPKEParameters,
                "aead 3 (ChaCha20-Poly1305)"
            ),
            (
                #"{"version":0,"hpke":[{"mode":"base","kem":32,"kdf":1,"aead":2}],"importer":"a"}"#,
                .missingImporterKey,
                "/hpke/0/key is missing"
            ),
            (request(key: "[]"), .incorrectImporterKeyEncoding, "/hpke/0/key is an array"),
            (
                request(key: #"{"kty":"EC","crv":"X25519","x":"\#(x)"}"#), .incorrectImporterKeyEncoding,
                #"/hpke/0/key/kty is "EC""#
            ),
            (
                request(key: #"{"kty":"OKP","crv":"X448","x":"\#(x)"}"#), .incorrectImporterKeyEncoding,
                #"/hpke/0/key/crv is "X448""#
            ),
            (request(key: #"{"kty":"OKP","crv":"X25519"}"#), .incorrectImporterKeyEncoding, "has no x"),
            (
                request(key: #"{"kty":"OKP","crv":"X25519","x":"\#(x)="}"#), .incorrectImporterKeyEncoding,
                "/hpke/0/key/x"
            ),
            (
                request(key: #"{"kty":"OKP","crv":"X25519","x":"hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo"}"#),
                .incorrectImporterKeyEncoding, "/hpke/0/key/x"
            ),
            (
                request(key: #"{"kty":"OKP","crv":"X25519","x":"hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmp"}"#),
                .incorrectImporterKeyEncoding, "/hpke/0/key/x"
            ),
            (
                request(key: #"{"kty":"OKP","crv":"X25519","x":"hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066Spjqqb"}"#),
                .incorrectImporterKeyEncoding, "/hpke/0/key/x"
            ),
            (
                request(key: #"{"kty":"OKP","crv":"X25519","x":"AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}"#),
                .incorrectImporterKeyEncoding, "/hpke/0/key/x is a point of small order"
            ),
            (
                request(key: #"{"kty":"OKP","crv":"X25519","x":"\#(x)","d":"\#(x)"}"#), .incorrectImporterKeyEncoding,
                "/hpke/0/key/d is a private key"
            ),
            (
                request(key: #"{"kty":"OKP","crv":"X25519","x":"\#(x)","x":"\#(x)"}"#), .incorrectImporterKeyEncoding,
                "/hpke/0/key/x appears twice"
            ),
            (
                #"{"version":0,"hpke":[{"mode":"base","kem":32,"kdf":1,"aead":2,"key":{"kty":"OKP","crv":"X25519","x":"\#(x)"}}]}"#,
                .malformed, "has no importer"
            ),
            (
                #"{"version":0,"hpke":[{"mode":"base","kem":32,"kdf":1,"aead":2,"key":{"kty":"OKP","crv":"X25519","x":"\#(x)"}}],"importer":"a","credentialTypes":["totp",1]}"#,
                .malformed, "/credentialTypes/1 is a number"
            ),
        ]
    )
    func malformedRequests(text: String, code: EncryptedCXFError.Code, words: String) {
        let error = refusal { () throws(EncryptedCXFError) in try EncryptedCXF.Request(parsing: Array(text.utf8)) }
        #expect(error?.code == code, "\(String(describing: error))")
        #expect(error?.message.contains(words) == true, "\(String(describing: error))")
    }

    @Test(
        "a request's first suite Keyport seals with is chosen; suites it does not know, and members it does not use, are passed over"
    )
    func choice() throws {
        let text = #"""
            {"version":0,"archive":["deflate"],"mode":"direct","importer":"importer.example",
             "hpke":[{"mode":"base","kem":16,"kdf":1,"aead":2,"key":{"kty":"EC","crv":"P-256","x":"a","y":"b"}},
                     {"mode":"base","kem":32,"kdf":1,"aead":2,"key":{"kty":"OKP","crv":"X25519","kid":"k1","x":"\#(Self.x)"}}]}
            """#
        let request = try EncryptedCXF.Request(parsing: Array(text.utf8))
        #expect(request.chosen == 1 && Base64URL.encode(request.publicKey) == Self.x)
        #expect(request.credentialTypes == nil && request.digest == Array(SHA256.hash(data: Array(text.utf8))))
    }

    @Test(
        "a key file, sealed under a passphrase or plain, opens to the same key; a wrong passphrase or a changed member does not"
    )
    func keyFiles() throws {
        let (key, _, file, document) = try sealedSample()
        let kdf = ScryptParameters(logN: 10)
        let sealed = try EncryptedCXF.KeyFile.encode(key, sealing: (SecretBytes("key pass"), kdf))
        let sealedText = sealed.withUnsafeBytes { Array($0) }
        #expect(!String(decoding: sealedText, as: UTF8.self).contains(#""d""#))
        let parsed = try EncryptedCXF.KeyFile.read(sealedText)
        #expect(parsed.needsPassphrase)
        #expect(try EncryptedCXF.open(file, with: try parsed.open(passphrase: SecretBytes("key pass"))) == document)
        #expect(
            refusal { () throws(EncryptedCXFError) in try parsed.open(passphrase: SecretBytes("not it")) }?.code
                == .wrongPassphrase
        )

        let plain = try EncryptedCXF.KeyFile.encode(key, sealing: nil).withUnsafeBytes { Array($0) }
        let plainParsed = try EncryptedCXF.KeyFile.read(plain)
        #expect(!plainParsed.needsPassphrase)
        let d = Base64URL.encode(key.privateKey.rawRepresentation)
        #expect(String(decoding: plain, as: UTF8.self).contains(#""d": "\#(d)""#))
        for shown in ["\(key)", String(reflecting: key), "\(try plainParsed.open(passphrase: nil))"] {
            #expect(!shown.contains(d) && shown.hasSuffix("hidden>"), "the private key is never printed")
        }
        #expect(try EncryptedCXF.open(file, with: try plainParsed.open(passphrase: nil)) == document)

        // The sealed part binds the public key, the request's digest and the scrypt record.
        let x = Base64URL.encode(key.publicKey)
        let other = Base64URL.encode(Curve25519.KeyAgreement.PrivateKey().publicKey.rawRepresentation)
        let digest = Base64URL.encode(key.requestDigest)
        let changes: [(String, [UInt8], EncryptedCXFError.Code)] = [
            ("x", try replacing(sealedText, x, other), .wrongPassphrase),
            (
                "request", try replacing(sealedText, digest, Base64URL.encode([UInt8](repeating: 1, count: 32))),
                .wrongPassphrase
            ),
            ("logN", try replacing(sealedText, #""logN": 10"#, #""logN": 11"#), .wrongPassphrase),
            ("logN past the cap", try replacing(sealedText, #""logN": 10"#, #""logN": 30"#), .unsafeParameters),
            ("r past the cap", try replacing(sealedText, #""r": 8"#, #""r": 4096"#), .unsafeParameters),
            ("plain x", try replacing(plain, x, other), .malformed),
        ]
        for (what, changed, code) in changes {
            let error = refusal { () throws(EncryptedCXFError) in
                try EncryptedCXF.KeyFile.read(changed).open(passphrase: SecretBytes("key pass"))
            }
            #expect(error?.code == code, "\(what): \(String(describing: error))")
        }
        #expect(
            refusal { () throws(EncryptedCXFError) in try EncryptedCXF.KeyFile.read(Array(#"{"version":0}"#.utf8)) }?
                .code == .wrongFile
        )
    }

    @Test("pyhpke opens what Keyport seals, and Keyport opens what pyhpke seals, from the profile as documented")
    func pyhpke() async throws {
        let python = try await Peers.python(importing: ["pyhpke"])
        let script = Peers.file("Tests/KeyportFormatsTests/Peers/hpke_peer.py")
        let directory = try TemporaryDirectory("kp-hpke")
        defer { directory.remove() }
        func path(_ name: String) -> String { directory.url.appendingPathComponent(name).path }

        let (key, request, file, document) = try sealedSample()
        let keyFile = try EncryptedCXF.KeyFile.encode(key, sealing: nil)
        try keyFile.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: path("key.json"))) }
        try Data(request).write(to: URL(fileURLWithPath: path("request.json")))
        try Data(file).write(to: URL(fileURLWithPath: path("export.json")))

        let opened = try await Program.run(
            python,
            [script, "open", path("key.json"), path("request.json"), path("export.json")],
            timeout: .seconds(60)
        )
        #expect(opened.status == 0, "\(opened.standardError)")
        #expect(Array(opened.standardOutput.utf8) == document)

        let theirs = try await Program.run(
            python,
            [script, "seal", path("request.json")],
            input: Data(document),
            timeout: .seconds(60)
        )
        #expect(theirs.status == 0, "\(theirs.standardError)")
        let sealed = Array(theirs.standardOutput.utf8)
        #expect(try EncryptedCXF.Response(parsing: sealed).exporter == "pyhpke.example")
        #expect(try EncryptedCXF.open(sealed, with: key) == document)
        let stranger = EncryptedCXF.RecipientKey.generate(importer: "importer.example").key
        #expect(
            refusal { () throws(EncryptedCXFError) in try EncryptedCXF.open(sealed, with: stranger) }?.code == .tampered
        )
    }
}
