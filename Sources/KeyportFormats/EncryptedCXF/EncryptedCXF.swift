import CredentialExchangeFormat
import Crypto
import Foundation
import KeyportEncoding
import KeyportErrors
import KeyportSystem

/// Keyport's encrypted CXF export: a CXF document sealed with HPKE (RFC 9180) to the importer's
/// public key, in the shape of the FIDO Credential Exchange Protocol draft's messages.
///
/// The importer makes a key pair and an export request (``Request``: CXP's ExportRequest, the
/// suites it takes and its public key as a JWK) and sends the request; the exporter answers with
/// a file shaped as CXP's ExportResponse (``seal(_:for:exporter:)``: the encapsulated key as the
/// chosen suite's `key`, the sealed document as `payload`); the importer opens it with its
/// private key (``open(_:with:)``). The draft defines no such file and leaves open where HPKE's
/// encapsulated key goes and what `info` and the associated data are, so this is Keyport's own
/// profile: docs/protocol.md, "Encrypted CXF export file", describes it byte for byte and says
/// why each choice was made. Pure: nothing here touches a file.
package enum EncryptedCXF {
    /// The version of CXP's messages: the draft publishes no level, so 0.
    package static let version = 0

    /// The one suite Keyport seals with: base mode, DHKEM(X25519, HKDF-SHA256), HKDF-SHA256,
    /// AES-256-GCM.
    package static let suite = Suite(mode: "base", kem: 0x0020, kdf: 0x0001, aead: 0x0002)

    /// ``suite`` as swift-crypto names it (it has no constant for this combination).
    static let ciphersuite = HPKE.Ciphersuite(kem: .Curve25519_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .AES_GCM_256)

    /// HPKE's `info` starts with the profile's name; the SHA-256 of the request's bytes follows.
    package static let infoLabel = Array("keyport-cxf-hpke-v1".utf8)

    /// The credential types Keyport Vault takes: every one of CXF 1.0's (it keeps what it does
    /// not show whole).
    package static let vaultCredentialTypes = CXF.Credential.knownTypes
    /// The extensions Keyport reads.
    package static let vaultExtensions = ["shared"]

    /// A public key's fingerprint for people to compare over another channel (the importer reads
    /// it to the exporter, who sees it when sealing): the first 128 bits of its SHA-256, in eight
    /// groups of four hexadecimal digits.
    package static func fingerprint(_ publicKey: [UInt8]) -> String {
        let digest = Array(SHA256.hash(data: publicKey).prefix(16))
        return stride(from: 0, to: 16, by: 2).map { Hex.encode(digest[$0..<$0 + 2]) }.joined(separator: " ")
    }

    /// `info` for the request whose SHA-256 is `requestDigest`.
    package static func info(requestDigest: [UInt8]) -> Data {
        Data(infoLabel + requestDigest)
    }

    /// An HPKE suite as CXP's HPKEParameters name it: the mode as text, the KEM, KDF and AEAD by
    /// their RFC 9180 identifiers.
    package struct Suite: Hashable, Sendable, CustomStringConvertible {
        package var mode: String
        package var kem: Int
        package var kdf: Int
        package var aead: Int

        package init(mode: String, kem: Int, kdf: Int, aead: Int) {
            self.mode = mode
            self.kem = kem
            self.kdf = kdf
            self.aead = aead
        }

        /// `mode "base", kem 32 (DHKEM(X25519, HKDF-SHA256)), …`, naming each identifier RFC 9180
        /// registers.
        package var description: String {
            func named(_ id: Int, _ names: [Int: String]) -> String {
                names[id].map { "\(id) (\($0))" } ?? "\(id)"
            }
            return #"mode "\#(DisplayText.escaping(mode))", kem \#(named(kem, Self.kems)), "#
                + "kdf \(named(kdf, Self.kdfs)), aead \(named(aead, Self.aeads))"
        }

        private static let kems = [
            0x10: "DHKEM(P-256, HKDF-SHA256)", 0x11: "DHKEM(P-384, HKDF-SHA384)", 0x12: "DHKEM(P-521, HKDF-SHA512)",
            0x20: "DHKEM(X25519, HKDF-SHA256)", 0x21: "DHKEM(X448, HKDF-SHA512)",
        ]
        private static let kdfs = [1: "HKDF-SHA256", 2: "HKDF-SHA384", 3: "HKDF-SHA512"]
        private static let aeads = [1: "AES-128-GCM", 2: "AES-256-GCM", 3: "ChaCha20-Poly1305", 0xFFFF: "export-only"]
    }
}

/// Why an encrypted export, its request or its key file was refused: a stable code (CXP's own
/// error codes where the draft has one) and a sentence that says what is wrong, where (a JSON
/// pointer), and what to do.
package struct EncryptedCXFError: RecordedError {
    /// A stable name for why, for scripts and tests.
    package typealias Code = ErrorCodeOf<EncryptedCXFError>

    package var record: ErrorRecord<Code>

    package init(_ code: Code, _ message: String, file: String = #fileID, line: UInt = #line) {
        record = ErrorRecord(code, message, file: file, line: line)
    }

    /// The message, and the code CXP names it by.
    package var description: String { "\(message) [\(code)]" }

    /// What an export that does not open says: the two causes cannot be told apart.
    static let tampered = EncryptedCXFError(
        .tampered,
        "the export does not open: it was changed after it was sealed, or it was not sealed for this key (the file, "
            + "or the request it answers, belongs to another key pair); nothing was imported"
    )
}

extension ErrorCodeOf<EncryptedCXFError> {
    /// Not JSON at all (CXP's `invalid-json`).
    package static let invalidJSON = Self(rawValue: "invalid-json")
    /// JSON, but a member is missing, repeated, unknown or of the wrong type.
    package static let malformed = Self(rawValue: "malformed")
    /// A version of CXP's messages Keyport does not speak (CXP's `unsupported-version`).
    package static let unsupportedVersion = Self(rawValue: "unsupported-version")
    /// No HPKE suite Keyport seals or opens with (CXP's `incompatible-hpke-parameters`).
    package static let incompatibleHPKEParameters = Self(rawValue: "incompatible-hpke-parameters")
    /// The suite Keyport would choose has no key (CXP's `missing-importer-key`).
    package static let missingImporterKey = Self(rawValue: "missing-importer-key")
    /// The importer's key is not an X25519 public key as RFC 8037 writes one (CXP's
    /// `incorrect-importer-key-encoding`).
    package static let incorrectImporterKeyEncoding = Self(rawValue: "incorrect-importer-key-encoding")
    /// The sealed export does not open: changed after it was sealed, or sealed to another key.
    package static let tampered = Self(rawValue: "tampered")
    /// Another of the three files where this one was expected (a request given to import).
    package static let wrongFile = Self(rawValue: "wrong-file")
    /// The passphrase does not open the key file (or its sealed part was changed).
    package static let wrongPassphrase = Self(rawValue: "wrong-passphrase")
    /// Key-derivation parameters in the key file outside what Keyport accepts (an attacker
    /// may have written them).
    package static let unsafeParameters = Self(rawValue: "unsafe-parameters")
}

// MARK: - X25519 keys as JWKs

extension EncryptedCXF {
    /// An X25519 public key as RFC 8037 writes it in a JWK: `{"kty":"OKP","crv":"X25519","x":…}`.
    static func jwk(x publicKey: [UInt8]) -> JSONValue {
        .object([
            JSONMember(key: "kty", value: .string("OKP")),
            JSONMember(key: "crv", value: .string("X25519")),
            JSONMember(key: "x", value: .string(Base64URL.encode(publicKey))),
        ])
    }

    /// The 32 bytes of the X25519 key in the JWK `value` at `pointer`, checked: `kty` "OKP",
    /// `crv` "X25519", `x` strict base64url of 32 bytes, not a point of small order. Other
    /// members are ignored, as RFC 7517 asks (unless `known` lists the only ones allowed: in
    /// Keyport's own files), except a private part `d` unless `allowPrivate`.
    static func x25519(
        _ value: JSONValue,
        at pointer: String,
        code: EncryptedCXFError.Code,
        known: [String]? = nil,
        allowPrivate: Bool = false
    ) throws(EncryptedCXFError) -> (x: [UInt8], d: String?) {
        let key = try StrictObject(value, at: pointer, what: "a JWK", known: known, code: code)
        let kty = try key.string("kty")!
        guard kty == "OKP" else {
            throw EncryptedCXFError(
                code,
                #"\#(key.path("kty")) is "\#(DisplayText.escaping(kty))"; an X25519 key's is "OKP" (RFC 8037)"#
            )
        }
        let crv = try key.string("crv")!
        guard crv == "X25519" else {
            throw EncryptedCXFError(
                code,
                #"\#(key.path("crv")) is "\#(DisplayText.escaping(crv))"; Keyport takes "X25519" keys only"#
            )
        }
        let text = try key.string("x")!
        guard let x = StrictBase64URL.decode(text), x.count == 32 else {
            throw EncryptedCXFError(
                code,
                "\(key.path("x")) is not an X25519 public key: 32 bytes in unpadded base64url (RFC 7515 §2) are "
                    + "43 characters of A–Z, a–z, 0–9, - and _"
            )
        }
        let d = try key.string("d", required: false)
        if d != nil, !allowPrivate {
            throw EncryptedCXFError(
                code,
                "\(key.path("d")) is a private key, which must never leave its owner: make a new key pair "
                    + "(keyport vault keygen) and send only its request"
            )
        }
        try checkOrder(x, at: key.path("x"), code: code)
        return (x, d)
    }

    /// Refuses a point of small order, whose shared secret is zero whatever the other key is
    /// (RFC 9180 §7.1.4 says to abort then; swift-crypto's X25519 does not check): a key
    /// agreement with a key made here for the purpose tells, with no arithmetic of Keyport's.
    static func checkOrder(_ x: [UInt8], at pointer: String, code: EncryptedCXFError.Code) throws(EncryptedCXFError) {
        let zero: Bool
        do {
            let shared = try Curve25519.KeyAgreement.PrivateKey().sharedSecretFromKeyAgreement(
                with: Curve25519.KeyAgreement.PublicKey(rawRepresentation: x)
            )
            zero = shared.withUnsafeBytes { $0.allSatisfy { $0 == 0 } }
        } catch {
            zero = true
        }
        guard !zero else {
            throw EncryptedCXFError(
                code,
                "\(pointer) is a point of small order, with which anyone could open what is sealed (RFC 9180 §7.1.4)"
            )
        }
    }
}

// MARK: - The request

extension EncryptedCXF {
    /// CXP's export request, as the importer sends it to the exporter: its version, the HPKE
    /// suites it takes in the order it prefers them (each with its public key as a JWK), its RP
    /// ID, and the credential types and extensions it knows.
    package struct Request: Sendable {
        /// The request's bytes exactly as they came: HPKE's `info` binds their SHA-256.
        package var bytes: [UInt8]
        /// The importer's RP ID, as it says (nothing proves it).
        package var importer: String
        /// The credential types the importer takes, when it says.
        package var credentialTypes: [String]?
        /// The extensions the importer knows, when it says.
        package var knownExtensions: [String]?
        /// Which of `hpke`'s suites Keyport chose: the first it seals with.
        package var chosen: Int
        /// That suite's key.
        package var publicKey: [UInt8]

        /// The SHA-256 of ``bytes``.
        package var digest: [UInt8] { Array(SHA256.hash(data: bytes)) }

        /// The members Keyport reads; others (the draft's `archive`, `mode`) are left alone.
        private static let hpkeMembers = ["mode", "kem", "kdf", "aead", "key"]

        /// Reads and checks a request: each member Keyport uses of its type, `version` 0, a suite
        /// Keyport seals with among `hpke`, and that suite's key an X25519 public key.
        package init(parsing bytes: [UInt8]) throws(EncryptedCXFError) {
            let root = try StrictObject(
                try EncryptedCXF.json(bytes, what: "an export request"),
                at: "",
                what: "an export request",
                known: nil
            )
            if root.has("keyport") {
                throw EncryptedCXFError(
                    .wrongFile,
                    "this is a private key file, which never leaves its owner: send the exporter the request "
                        + "keyport vault keygen wrote beside it"
                )
            }
            if root.has("payload") {
                throw EncryptedCXFError(
                    .wrongFile,
                    "this is an encrypted export, not an export request: import it with keyport vault import --key"
                )
            }
            try EncryptedCXF.checkVersion(root)
            let hpke = try root.array("hpke")!
            guard !hpke.isEmpty else {
                throw EncryptedCXFError(.malformed, "/hpke is empty; a request offers at least one HPKE suite")
            }
            var offered: [String] = []
            var found: (index: Int, key: [UInt8])?
            for (index, value) in hpke.enumerated() {
                let entry = try StrictObject(
                    value,
                    at: "/hpke/\(index)",
                    what: "an HPKE suite",
                    known: Self.hpkeMembers
                )
                let suite = try EncryptedCXF.suite(entry)
                offered.append(suite.description)
                guard found == nil, suite == EncryptedCXF.suite else { continue }
                guard entry.has("key") else {
                    throw EncryptedCXFError(
                        .missingImporterKey,
                        "\(entry.path("key")) is missing: the importer's public key for \(suite) must be there"
                    )
                }
                let key = try entry.required("key")
                found = (
                    index, try EncryptedCXF.x25519(key, at: entry.path("key"), code: .incorrectImporterKeyEncoding).x
                )
            }
            guard let found else {
                // A request of thousands of suites is named by its first few.
                let named =
                    offered.prefix(4).joined(separator: "; ")
                    + (offered.count > 4 ? " and \(offered.count - 4) more" : "")
                throw EncryptedCXFError(
                    .incompatibleHPKEParameters,
                    "the request offers \(named); Keyport seals with \(EncryptedCXF.suite) only: ask the importer "
                        + "for a request with that suite"
                )
            }
            let importer = try root.string("importer")!
            guard !importer.isEmpty else {
                throw EncryptedCXFError(.malformed, "/importer is empty; it is the importer's RP ID")
            }
            self.bytes = bytes
            self.importer = importer
            self.credentialTypes = try root.strings("credentialTypes")
            self.knownExtensions = try root.strings("knownExtensions")
            self.chosen = found.index
            self.publicKey = found.key
        }

        /// A request for `publicKey` (what `keyport vault keygen` writes): the one suite, the
        /// importer's RP ID, the types and extensions Keyport Vault takes; pretty-printed, since
        /// people send it and look at it.
        package static func make(
            publicKey: [UInt8],
            importer: String,
            credentialTypes: [String] = EncryptedCXF.vaultCredentialTypes,
            knownExtensions: [String] = EncryptedCXF.vaultExtensions
        ) -> [UInt8] {
            let suite = EncryptedCXF.suiteJSON(EncryptedCXF.suite, key: EncryptedCXF.jwk(x: publicKey), sorted: false)
            let request = JSONValue.object([
                JSONMember(key: "version", value: .number("\(EncryptedCXF.version)")),
                JSONMember(key: "hpke", value: .array([suite])),
                JSONMember(key: "importer", value: .string(importer)),
                JSONMember(key: "credentialTypes", value: .array(credentialTypes.map(JSONValue.string))),
                JSONMember(key: "knownExtensions", value: .array(knownExtensions.map(JSONValue.string))),
            ])
            return CXF.Encoder(options: CXF.EncodingOptions(prettyPrinted: true)).encodeJSON(request)
        }
    }
}

// MARK: - The response: the sealed file

extension EncryptedCXF {
    /// The encrypted export as a file: CXP's export response, `{version, hpke, exporter,
    /// payload}`, with HPKE's encapsulated key as `hpke.key` (an X25519 JWK, as the importer's
    /// is in the request) and the sealed CXF document, base64url, as `payload`.
    package struct Response: Sendable {
        /// The exporter's RP ID, as it says (sealed with the rest, but base mode proves nothing
        /// about who sealed).
        package var exporter: String
        /// The suite it was sealed with.
        package var suite: Suite
        /// HPKE's encapsulated key (`enc`): the sender's ephemeral X25519 public key.
        package var encapsulatedKey: [UInt8]
        /// The sealed document and its tag.
        package var ciphertext: [UInt8]

        private static let members = ["version", "hpke", "exporter", "payload"]
        private static let hpkeMembers = ["mode", "kem", "kdf", "aead", "key"]

        package init(exporter: String, suite: Suite, encapsulatedKey: [UInt8], ciphertext: [UInt8]) {
            self.exporter = exporter
            self.suite = suite
            self.encapsulatedKey = encapsulatedKey
            self.ciphertext = ciphertext
        }

        /// Reads a file strictly: every member of the profile, no other, each of its type.
        package init(parsing bytes: [UInt8]) throws(EncryptedCXFError) {
            let value = try EncryptedCXF.json(bytes, what: "an encrypted export")
            if case .object(let members) = value {
                let names = Set(members.map(\.key))
                if names.contains("keyport") {
                    throw EncryptedCXFError(
                        .wrongFile,
                        "this is a private key file (name it with --key), not an encrypted export"
                    )
                }
                if members.contains(where: { member in
                    if member.key == "hpke", case .array = member.value { return true } else { return false }
                }) {
                    throw EncryptedCXFError(
                        .wrongFile,
                        "this is an export request (what keyport vault keygen writes for the exporter), not an "
                            + "export: import the file the exporter made from it"
                    )
                }
                if !names.contains("hpke") && !names.contains("payload") {
                    throw EncryptedCXFError(
                        .wrongFile,
                        "this is not an encrypted CXF export: it has neither hpke nor payload"
                    )
                }
                if names.contains("archive") {
                    throw EncryptedCXFError(
                        .incompatibleHPKEParameters,
                        "/archive names a compression; Keyport's encrypted exports are never compressed, and "
                            + "Keyport does not decompress (no DEFLATE): export again without it"
                    )
                }
            }
            let root = try StrictObject(value, at: "", what: "an encrypted export", known: Self.members)
            try EncryptedCXF.checkVersion(root)
            let hpke = try StrictObject(
                try root.required("hpke"),
                at: "/hpke",
                what: "the HPKE suite",
                known: Self.hpkeMembers
            )
            let suite = try EncryptedCXF.suite(hpke)
            guard suite == EncryptedCXF.suite else {
                throw EncryptedCXFError(
                    .incompatibleHPKEParameters,
                    "the export was sealed with \(suite); Keyport opens \(EncryptedCXF.suite) only (or the file "
                        + "was changed)"
                )
            }
            // Exactly the members the associated data holds.
            let enc = try EncryptedCXF.x25519(
                try hpke.required("key"),
                at: "/hpke/key",
                code: .malformed,
                known: ["kty", "crv", "x"]
            ).x
            let exporter = try root.string("exporter")!
            let payload = try root.string("payload")!
            guard let ciphertext = StrictBase64URL.decode(payload), ciphertext.count >= 16 else {
                throw EncryptedCXFError(
                    .malformed,
                    "/payload is not a sealed document in unpadded base64url (A–Z, a–z, 0–9, - and _; 22 "
                        + "characters at least): the file was changed or cut short"
                )
            }
            self.init(exporter: exporter, suite: suite, encapsulatedKey: enc, ciphertext: ciphertext)
        }

        /// The associated data the payload is sealed with: RFC 8785's canonical form (JCS) of the
        /// file's members but `payload`. Every member the file has but the payload is in it, so
        /// none can change without the payload failing to open.
        package var associatedData: [UInt8] {
            CXF.Encoder().encodeJSON(
                .object([
                    JSONMember(key: "exporter", value: .string(exporter)),
                    JSONMember(
                        key: "hpke",
                        value: EncryptedCXF.suiteJSON(suite, key: jwk(x: encapsulatedKey), sorted: true)
                    ),
                    JSONMember(key: "version", value: .number("\(EncryptedCXF.version)")),
                ])
            )
        }

        /// The file: pretty-printed, in CXP's order of members, ending in a line break.
        package var bytes: [UInt8] {
            var payload: [UInt8] = [UInt8(ascii: "\"")]
            payload.reserveCapacity(Base64URL.encodedLength(ciphertext.count) + 2)
            ciphertext.withUnsafeBytes { Base64URL.append(contentsOf: $0, to: &payload) }
            payload.append(UInt8(ascii: "\""))
            // The payload is spliced in rather than made a `String` member: it may be hundreds of
            // megabytes, and one copy is enough.
            let marker = "\u{1}payload\u{1}"
            let text = CXF.Encoder(options: CXF.EncodingOptions(prettyPrinted: true)).encodeJSON(
                .object([
                    JSONMember(key: "version", value: .number("\(EncryptedCXF.version)")),
                    JSONMember(
                        key: "hpke",
                        value: EncryptedCXF.suiteJSON(suite, key: jwk(x: encapsulatedKey), sorted: false)
                    ),
                    JSONMember(key: "exporter", value: .string(exporter)),
                    JSONMember(key: "payload", value: .string(marker)),
                ])
            )
            let quoted = CXF.Encoder().encodeJSON(.string(marker))
            let start = text.firstRange(of: quoted)!
            return Array(text[..<start.lowerBound]) + payload + Array(text[start.upperBound...])
        }
    }

    /// Seals `document` (CXF JSON) for the importer that made `request`: the response file's
    /// bytes.
    ///
    /// HPKE base mode with the suite ``suite``, `info` the profile's label and the SHA-256 of the
    /// request's bytes, the associated data ``Response/associatedData``.
    package static func seal(
        _ document: [UInt8],
        for request: Request,
        exporter: String
    ) throws(EncryptedCXFError) -> [UInt8] {
        do {
            var sender = try HPKE.Sender(
                recipientKey: try Curve25519.KeyAgreement.PublicKey(rawRepresentation: request.publicKey),
                ciphersuite: ciphersuite,
                info: info(requestDigest: request.digest)
            )
            var response = Response(
                exporter: exporter,
                suite: suite,
                encapsulatedKey: Array(sender.encapsulatedKey),
                ciphertext: []
            )
            response.ciphertext = Array(try sender.seal(document, authenticating: response.associatedData))
            return response.bytes
        } catch {
            // The key was checked as the request was read; swift-crypto has no other cause.
            throw EncryptedCXFError(.incorrectImporterKeyEncoding, "the importer's key cannot be sealed to: \(error)")
        }
    }

    /// The CXF document sealed in the file `bytes`, opened with `key`.
    ///
    /// - Throws: ``EncryptedCXFError``: ``EncryptedCXFError/Code-swift.struct/tampered`` when the
    ///   file is well-formed but does not open (any byte of it changed, or sealed to another key
    ///   or another request); another code, naming the member, when it is not the profile's file.
    package static func open(_ bytes: [UInt8], with key: RecipientKey) throws(EncryptedCXFError) -> [UInt8] {
        try open(try Response(parsing: bytes), with: key)
    }

    /// The CXF document sealed in `response`, a file already read, opened with `key`.
    ///
    /// - Throws: ``EncryptedCXFError`` with the code `tampered` when it does not open.
    package static func open(_ response: Response, with key: RecipientKey) throws(EncryptedCXFError) -> [UInt8] {
        do {
            try checkOrder(response.encapsulatedKey, at: "/hpke/key/x", code: .tampered)
            var recipient = try HPKE.Recipient(
                privateKey: key.privateKey,
                ciphersuite: ciphersuite,
                info: info(requestDigest: key.requestDigest),
                encapsulatedKey: Data(response.encapsulatedKey)
            )
            // The opened document is the caller's to wipe; swift-crypto's own copy is wiped here.
            var opened = try recipient.open(response.ciphertext, authenticating: response.associatedData)
            defer { Wipe.data(&opened) }
            return Array(opened)
        } catch {
            throw .tampered
        }
    }
}

// MARK: - Shared readings

extension EncryptedCXF {
    /// `bytes` as one JSON value, with the CXF decoder's limits.
    static func json(_ bytes: [UInt8], what: String) throws(EncryptedCXFError) -> JSONValue {
        do {
            return try CXF.Decoder().decodeJSON(bytes)
        } catch {
            throw EncryptedCXFError(.invalidJSON, "the file is not \(what): it is not JSON (\(error))")
        }
    }

    /// Refuses a `version` other than 0.
    static func checkVersion(_ root: StrictObject) throws(EncryptedCXFError) {
        let version = try root.integer("version", in: 0...Int(Int32.max))!
        guard version == EncryptedCXF.version else {
            throw EncryptedCXFError(
                .unsupportedVersion,
                "/version is \(version); Keyport speaks version \(EncryptedCXF.version) of the Credential "
                    + "Exchange Protocol's messages"
            )
        }
    }

    /// The suite an HPKEParameters object names.
    static func suite(_ entry: StrictObject) throws(EncryptedCXFError) -> Suite {
        Suite(
            mode: try entry.string("mode")!,
            kem: try entry.integer("kem", in: 0...0xFFFF)!,
            kdf: try entry.integer("kdf", in: 0...0xFFFF)!,
            aead: try entry.integer("aead", in: 0...0xFFFF)!
        )
    }

    /// An HPKEParameters object: in CXP's order of members, or sorted as JCS wants them.
    static func suiteJSON(_ suite: Suite, key: JSONValue, sorted: Bool) -> JSONValue {
        var members = [
            JSONMember(key: "mode", value: .string(suite.mode)),
            JSONMember(key: "kem", value: .number("\(suite.kem)")),
            JSONMember(key: "kdf", value: .number("\(suite.kdf)")),
            JSONMember(key: "aead", value: .number("\(suite.aead)")),
            JSONMember(key: "key", value: key),
        ]
        guard sorted else { return .object(members) }
        members.sort { $0.key < $1.key }
        // The JWK's members too: crv, kty, x.
        if case .object(var inner) = key {
            inner.sort { $0.key < $1.key }
            members[members.firstIndex { $0.key == "key" }!].value = .object(inner)
        }
        return .object(members)
    }
}
