import CredentialExchangeFormat
import Foundation
import Testing

/// What a hostile or broken document may not do: lose data through `fmt`, pass the version gate,
/// get a secret quoted, or cost unbounded memory.
@Suite("Nothing lost, nothing printed, bounded cost")
struct NothingLostTests {
    static let login = #"{"type":"basic-auth","password":{"fieldType":"concealed-string","value":"hunter2-secret"}}"#

    /// Decodes, encodes and decodes again; returns the first decode, the canonical text and the
    /// second decode's diagnostics.
    func roundTrip(_ json: String) throws -> (CXF.DecodedDocument, String, [Diagnostic]) {
        let decoded = try decode(json)
        let text = String(decoding: CXF.Encoder().encode(decoded.document), as: UTF8.self)
        let again = try decode(text)
        #expect(again.document == decoded.document, "decode(encode(x)) differs for \(text)")
        return (decoded, text, again.diagnostics)
    }

    @Test(
        "a structural member of the wrong JSON type is an error, and fmt writes the original back",
        arguments: [
            // credentials as an object: the password must survive
            (
                #"{"id":"YQ","username":"","email":"","collections":[],"items":[{"id":"aQ","title":"t","credentials":{"0":\#(login)}}]}"#,
                "/items/0/credentials", #""credentials":{"0":\#(login)}"#
            ),
            // items as a string, accounts as an object, an id as a number
            (
                #"{"id":"YQ","username":"","email":"","collections":[],"items":"hunter2-secret"}"#, "/items",
                #""items":"hunter2-secret""#
            ),
            (
                #"{"version":{"major":1,"minor":0},"exporterRpId":"x","exporterDisplayName":"X","timestamp":1,"accounts":{"a":{"id":"YQ"}}}"#,
                "/accounts", #""accounts":{"a":{"id":"YQ"}}"#
            ),
            (#"{"id":12345,"username":"","email":"","collections":[],"items":[]}"#, "/id", #""id":12345"#),
            // an element that is not an object: the whole array is kept, the good elements too
            (
                #"{"id":"YQ","username":"","email":"","collections":[],"items":[{"id":"aQ","title":"kept","credentials":[]},7]}"#,
                "/items", #""items":[{"id":"aQ","title":"kept","credentials":[]},7]"#
            ),
            (
                #"{"id":"YQ","username":"","email":"","collections":[{"id":"Yw","title":"c","items":[true]}],"items":[]}"#,
                "/collections/0/items", #""items":[true]"#
            ),
        ] as [(String, String, String)]
    )
    func wrongTypedStructure(json: String, path: String, kept: String) throws {
        let (decoded, text, again) = try roundTrip(json)
        let finding = try #require(decoded.diagnostics.first { $0.path == path })
        #expect(finding.code == .wrongType)
        #expect(finding.severity == .error)
        #expect(text.contains(kept), "fmt lost \(kept): \(text)")
        // The stand-in is not written beside the original: the key appears as often as it came.
        let key = "\"\(path.split(separator: "/").last!)\":"
        #expect(text.components(separatedBy: key).count == json.components(separatedBy: key).count)
        // Decoding the output reports the same error again: fmt never launders a broken document.
        #expect(again.contains { $0.path == path && $0.severity == .error })
    }

    @Test("a field value of the wrong type keeps the whole credential, verbatim, with an error")
    func wrongTypedFieldValue() throws {
        let credential =
            #"{"type":"basic-auth","password":{"fieldType":"concealed-string","value":["hunter2-secret"]}}"#
        let (decoded, text, _) = try roundTrip(
            #"{"id":"YQ","username":"","email":"","collections":[],"items":[{"id":"aQ","title":"t","credentials":[\#(credential)]}]}"#
        )
        guard case .unrecognized(let kept) = decoded.document.accounts[0].items[0].credentials[0] else {
            Issue.record("the credential was typed")
            return
        }
        #expect(kept.reason.contains("'value'"))
        let finding = try #require(decoded.diagnostics.first(.malformedCredential))
        #expect(finding.severity == .error)
        #expect(text.contains(credential))
    }

    @Test("a repeated member inside a credential keeps the credential whole; a repeated type too")
    func repeatedCredentialMembers() throws {
        for credential in [
            #"{"type":"basic-auth","password":{"fieldType":"concealed-string","value":"a"},"password":{"fieldType":"concealed-string","value":"b"}}"#,
            #"{"type":"note","type":"basic-auth","content":{"fieldType":"string","value":"n"}}"#,
            #"{"type":"totp","secret":"JBSWY3DPEHPK3PXP","period":30,"digits":6,"algorithm":"sha1","issuer":"A","issuer":"B"}"#,
        ] {
            let (decoded, text, _) = try roundTrip(
                #"{"id":"YQ","username":"","email":"","collections":[],"items":[{"id":"aQ","title":"t","credentials":[\#(credential)]}]}"#
            )
            guard case .unrecognized(let kept) = decoded.document.accounts[0].items[0].credentials[0] else {
                Issue.record("\(credential) was typed")
                continue
            }
            #expect(kept.reason.contains("more than once"))
            #expect(decoded.diagnostics.first(.malformedCredential)?.severity == .error)
            #expect(text.contains(credential))
        }
    }

    @Test("a repeated structural member: the first is read, both are written back, an error")
    func repeatedStructure() throws {
        let json =
            #"{"id":"YQ","username":"","email":"","collections":[],"items":[{"id":"aQ","title":"first","credentials":[\#(Self.login)]}],"items":[{"id":"Yg","title":"second","credentials":[]}]}"#
        let (decoded, text, again) = try roundTrip(json)
        #expect(decoded.document.accounts[0].items.map(\.title) == ["first"])
        #expect(decoded.diagnostics.first(.duplicateMember)?.severity == .error)
        #expect(text.contains("first") && text.contains("second") && text.contains("hunter2-secret"))
        #expect(again.first(.duplicateMember) != nil)
    }

    @Test("a repeat whose first occurrence is empty stays a repeat: the first is not taken for a stand-in")
    func repeatAfterEmpty() throws {
        let json =
            #"{"id":"YQ","username":"","email":"","collections":[],"items":[],"collections":[{"id":"Yw","title":"c","items":[]}]}"#
        let (decoded, text, again) = try roundTrip(json)
        #expect(decoded.document.accounts[0].collections == [])
        #expect(text.components(separatedBy: #""collections":"#).count == 3)
        #expect(again.first(.duplicateMember)?.path == "/collections")
    }

    @Test("a repeat after a null keeps its place: the null is written back first")
    func repeatAfterNull() throws {
        let json =
            #"{"id":"YQ","username":"","email":"","collections":[],"items":[{"id":"aQ","title":"t","subtitle":null,"credentials":[],"subtitle":"yes"}]}"#
        let (decoded, text, again) = try roundTrip(json)
        #expect(decoded.document.accounts[0].items[0].subtitle == nil)
        #expect(text.contains(#""subtitle":null"#) && text.contains(#""subtitle":"yes""#))
        #expect(again.first(.duplicateMember)?.path == "/items/0/subtitle")
    }

    @Test(
        "the version gate cannot be bypassed: a major that cannot be read is never assumed",
        arguments: [
            (#"{"major":99999999999999999999,"minor":0}"#, #""major":99999999999999999999"#),
            (#"{"major":[2],"minor":0}"#, #""major":[2]"#),
            (#"{"major":-1,"minor":0}"#, #""major":-1"#),
            (#"{"major":4294967297,"minor":0}"#, #""major":4294967297"#),
            (#"{"major":1.5,"minor":0}"#, #""major":1.5"#),
            (#""1.0""#, #""version":"1.0""#),
            // null is absence: nothing to keep, and still no version assumed
            (#"{"major":null,"minor":0}"#, nil), (#"{"minor":0}"#, nil), (#"null"#, nil),
        ] as [(String, String?)]
    )
    func versionGate(version: String, kept: String?) throws {
        let json = #"{"version":\#(version),"exporterRpId":"x","exporterDisplayName":"X","timestamp":1,"accounts":[]}"#
        let (decoded, text, _) = try roundTrip(json)
        let findings = decoded.diagnostics + CXF.Validator().validate(decoded.document)
        #expect(findings.contains { $0.severity == .error && $0.path.hasPrefix("/version") })
        #expect(decoded.document.version?.major != 1)
        #expect(!text.contains(#""major":1,"#), "fmt rewrote the version to 1: \(text)")
        if let kept { #expect(text.contains(kept), "\(kept) is not in \(text)") }
    }

    @Test("secrets are never quoted, whatever field type the document declares for them")
    func secretsUnquoted() throws {
        let secret = "S3cr3t-Value-91"
        let credentials = [
            #"{"type":"basic-auth","password":{"fieldType":"email","value":"\#(secret)"}}"#,
            #"{"type":"credit-card","number":{"fieldType":"number","value":"\#(secret)"},"verificationNumber":{"fieldType":"boolean","value":"\#(secret)"},"pin":{"fieldType":"date","value":"\#(secret)"}}"#,
            #"{"type":"wifi","passphrase":{"fieldType":"country-code","value":"\#(secret)"}}"#,
            #"{"type":"api-key","key":{"fieldType":"year-month","value":"\#(secret)"}}"#,
            #"{"type":"custom-fields","fields":[{"fieldType":"subdivision-code","value":"\#(secret)","label":"PIN"}]}"#,
        ].joined(separator: ",")
        let decoded = try decode(
            #"{"id":"YQ","username":"","email":"","collections":[],"items":[{"id":"aQ","title":"t","credentials":[\#(credentials)]}]}"#
        )
        let findings = decoded.diagnostics + CXF.Validator().validate(decoded.document)
        #expect(findings.filter { $0.code == .invalidFieldValue }.count == 7)
        for finding in findings {
            #expect(!finding.message.contains(secret), "\(finding) quotes the secret")
            #expect(!finding.description.contains(secret))
        }
    }

    @Test("a value the member does not call for a secret is still quoted, so a person can find it")
    func plainValuesQuoted() throws {
        let decoded = try decode(
            #"{"id":"YQ","username":"","email":"","collections":[],"items":[{"id":"aQ","title":"t","credentials":[{"type":"drivers-license","birthDate":{"fieldType":"date","value":"1990-13-45"}}]}]}"#
        )
        let finding = try #require(CXF.Validator().validate(decoded.document).first(.invalidFieldValue))
        #expect(finding.message.contains("'1990-13-45'"))
    }

    @Test("findings of one kind are listed up to the limit, then counted; an error stays an error")
    func diagnosticCap() throws {
        let items = Array(repeating: "{}", count: 300).joined(separator: ",")
        let decoded = try CXF.Decoder(options: .init(maxDiagnosticsPerCode: 50)).decode(
            #"{"id":"YQ","username":"","email":"","collections":[],"items":[\#(items)]}"#
        )
        let missing = decoded.diagnostics.filter { $0.code == .missingMember }
        #expect(missing.count == 51)
        let summary = try #require(missing.last)
        #expect(summary.path == "")
        #expect(summary.message.contains("850 more"))
        #expect(summary.severity == .warning)

        let ids = (0..<120).map { _ in #"{"id":"aQ","title":"t","credentials":[]}"# }.joined(separator: ",")
        let doc = try decode(#"{"id":"YQ","username":"","email":"","collections":[],"items":[\#(ids)]}"#).document
        let findings = CXF.Validator(maxDiagnosticsPerCode: 10).validate(doc)
        let duplicates = findings.filter { $0.code == .duplicateID }
        #expect(duplicates.count == 11)
        #expect(duplicates.last?.severity == .error)
        #expect(duplicates.last?.message.contains("109 more") == true)
    }

    @Test("a rewound credential forgets its findings and their count")
    func rewindForgetsTallies() throws {
        // Each credential reports a coerced value, then is found malformed and kept verbatim: the
        // coerced-value findings must not count towards the limit or the summary.
        let credential = #"{"type":"note","content":"bare","content":"again"}"#
        let credentials = Array(repeating: credential, count: 20).joined(separator: ",")
        let decoded = try CXF.Decoder(options: .init(maxDiagnosticsPerCode: 5)).decode(
            #"{"id":"YQ","username":"","email":"","collections":[],"items":[{"id":"aQ","title":"t","credentials":[\#(credentials)]}]}"#
        )
        #expect(decoded.diagnostics.first(.coercedValue) == nil)
        #expect(decoded.diagnostics.filter { $0.code == .malformedCredential }.count == 6)
    }

    @Test("max depth is capped: a deep document is refused, never a crash")
    func depthCap() throws {
        let deep = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)
        let json = #"{"id":"YQ","username":"","email":"","collections":[],"items":[],"x":\#(deep)}"#
        let error = try #require(throws: CXFDecodingError.self) {
            try CXF.Decoder(options: .init(maxDepth: 1_000_000)).decode(json)
        }
        #expect(error.code == .tooDeep)
        #expect(error.message.contains("\(CXF.DecodingOptions.maxDepthLimit)"))
        // At the ceiling itself the decoder and encoder recurse fine on a 2 MiB thread stack.
        let atLimit = CXF.DecodingOptions.maxDepthLimit - 1
        let ok =
            #"{"id":"YQ","username":"","email":"","collections":[],"items":[],"x":\#(String(repeating: "[", count: atLimit))\#(String(repeating: "]", count: atLimit))}"#
        let decoded = try onSmallStack { try CXF.Decoder(options: .init(maxDepth: 1_000_000)).decode(ok) }
        #expect(decoded.document.accounts[0].unknownMembers.map(\.key) == ["x"])
        _ = try onSmallStack { CXF.Encoder().encode(decoded.document) }
    }

    @Test("a shared extension's name, given twice, is a repeat: an error, and fmt writes both back")
    func repeatedExtensionName() throws {
        let json =
            #"{"id":"YQ","username":"","email":"","collections":[],"items":[{"id":"aQ","title":"t","credentials":[],"#
            + #""extensions":[{"name":"shared","accessors":[],"name":"x"}]}]}"#
        let (decoded, text, _) = try roundTrip(json)
        let finding = try #require(decoded.diagnostics.first { $0.code == .duplicateMember })
        #expect(finding.path == "/items/0/extensions/0/name")
        #expect(finding.severity == .error)
        #expect(text.contains(#""name":"x""#), "fmt lost the second name: \(text)")
    }

    @Test("inside a credential a null counts as absent, in its nested objects too")
    func nullInCredentialPart() throws {
        let json =
            #"{"id":"YQ","username":"","email":"","collections":[],"items":[{"id":"aQ","title":"t","credentials":["#
            + #"{"type":"note","content":{"fieldType":"string","value":null}}]}]}"#
        let decoded = try decode(json)
        let finding = try #require(decoded.diagnostics.first { $0.code == .missingMember })
        #expect(finding.path == "/items/0/credentials/0/content")
        #expect(finding.message.contains("'value'"))
    }
}

/// Where a thread started by ``onSmallStack(_:)`` leaves its result.
private final class ThreadResult<T>: @unchecked Sendable {  // written before the semaphore, read after
    var result: Result<T, any Error>?
}

/// Runs `body` on a thread with a 2 MiB stack, a quarter of a Linux main thread's.
func onSmallStack<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
    let box = ThreadResult<T>()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        box.result = Result { try body() }
        done.signal()
    }
    thread.stackSize = 2 << 20
    thread.start()
    done.wait()
    return try box.result!.get()
}

@Suite("Real exports: deviations an importer can store are warnings")
struct RealExportTests {
    @Test("a shipping manager's deviations validate with warnings, not errors")
    func deviationsAreWarnings() throws {
        let decoded = try Fixture.decode("real-export-deviations.json")
        let findings = decoded.diagnostics + CXF.Validator(verifyKeyPairs: true).validate(decoded.document)
        #expect(!findings.contains { $0.severity == .error }, "\(findings.filter { $0.severity == .error })")
        let found = Set(findings.map { "\($0.code) \($0.path)" })
        #expect(
            found == [
                "invalid-field-value /accounts/0/items/0/credentials/0/territory/value",
                "invalid-field-value /accounts/0/items/1/credentials/0/networkSecurityType/value",
                "key-type-mismatch /accounts/0/items/2/credentials/0/privateKey",
                "invalid-integrity-hash /accounts/0/items/3/credentials/0/integrityHash",
                "invalid-totp-parameter /accounts/0/items/4/credentials/0/digits",
            ]
        )
        let territory = try #require(findings.first { $0.path.hasSuffix("territory/value") })
        #expect(territory.message.contains("without its country"))
        let wifi = try #require(findings.first { $0.path.hasSuffix("networkSecurityType/value") })
        #expect(wifi.message.contains("wpa2-personal"))
    }

    @Test(
        "Wi-Fi security types in the spellings exporters and QR codes use",
        arguments: [
            ("WPA2", CXF.WiFiNetworkSecurityType.wpa2Personal), ("WPA2-PSK", .wpa2Personal),
            ("wpa2_personal", .wpa2Personal),
            ("WPA", .wpaPersonal), ("SAE", .wpa3Personal), ("WPA3-Personal", .wpa3Personal), ("nopass", .unsecured),
            ("open", .unsecured), ("WEP", .wep),
        ]
    )
    func lenientWiFi(text: String, type: CXF.WiFiNetworkSecurityType) {
        #expect(CXF.WiFiNetworkSecurityType(lenient: text) == type)
    }

    @Test("enterprise and unknown Wi-Fi modes are not guessed")
    func lenientWiFiRefuses() {
        for text in ["WPA2-Enterprise", "802.1x", "", "personal"] {
            #expect(CXF.WiFiNetworkSecurityType(lenient: text) == nil, "\(text)")
        }
    }
}
