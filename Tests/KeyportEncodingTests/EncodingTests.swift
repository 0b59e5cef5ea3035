import Foundation
import KeyportEncoding
import Testing

@Suite("base64url")
struct Base64URLTests {
    // RFC 4648 §10 vectors, in the URL-safe alphabet without padding.
    @Test(
        "RFC 4648 vectors",
        arguments: [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ]
    )
    func vectors(plain: String, encoded: String) throws {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(try Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test("decoding accepts padding and the standard alphabet; the URL alphabet is written")
    func lenient() throws {
        #expect(try Base64URL.decode("Zm9vYg==") == Array("foob".utf8))
        #expect(try Base64URL.decode("+/+/") == [0xFB, 0xFF, 0xBF])
        #expect(try Base64URL.decode("-_-_") == [0xFB, 0xFF, 0xBF])
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
    }

    @Test("random bytes round-trip, and agree with Foundation's base64")
    func roundTrip() throws {
        var rng = SystemRandomNumberGenerator()
        for count in 0..<200 {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let encoded = Base64URL.encode(bytes)
            #expect(try Base64URL.decode(encoded) == bytes)
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(encoded == foundation)
        }
    }

    @Test(
        "errors say where",
        arguments: [
            ("Zm9v!g", Base64URL.DecodingError.invalidCharacter(offset: 4)),
            ("Z", .invalidLength(1)),
            ("Zm=9", .misplacedPadding(offset: 2)),
            ("Zg===", .misplacedPadding(offset: 4)),
            ("Zm9v=", .misplacedPadding(offset: 4)),
        ]
    )
    func errors(text: String, expected: Base64URL.DecodingError) {
        #expect(throws: expected) { try Base64URL.decode(text) }
    }
}

@Suite("Base32")
struct Base32Tests {
    @Test(
        "RFC 4648 vectors",
        arguments: [
            ("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"), ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI"),
        ]
    )
    func vectors(plain: String, encoded: String) throws {
        #expect(Base32.encode(Array(plain.utf8)) == encoded)
        #expect(try Base32.decode(encoded) == Array(plain.utf8))
        #expect(try Base32.decode(encoded.lowercased()) == Array(plain.utf8))
    }

    @Test("what people paste: lowercase, spaces, hyphens, padding")
    func lenient() throws {
        #expect(try Base32.decode("jbsw y3dp ehpk 3pxp") == (try Base32.decode("JBSWY3DPEHPK3PXP")))
        #expect(try Base32.decode("JBSW-Y3DP-EHPK-3PXP") == (try Base32.decode("JBSWY3DPEHPK3PXP")))
        #expect(try Base32.decode("MZXW6===") == Array("foo".utf8))
        #expect(try Base32.decode("JBSWY3DPEHPK3PXP") == [0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x21, 0xDE, 0xAD, 0xBE, 0xEF])
    }

    @Test("errors name the character and its offset")
    func errors() {
        #expect(throws: Base32.DecodingError.invalidCharacter("1", offset: 3)) { try Base32.decode("ABC1") }
        #expect(throws: Base32.DecodingError.invalidCharacter("é", offset: 2)) { try Base32.decode("AAé") }
        #expect(throws: Base32.DecodingError.misplacedPadding(offset: 2)) { try Base32.decode("MY=A") }
        #expect(throws: Base32.DecodingError.invalidLength(symbols: 1)) { try Base32.decode("M") }
        #expect(Base32.DecodingError.invalidCharacter("1", offset: 3).description.contains("offset 3"))
    }
}

@Suite("percent-encoding")
struct PercentEncodingTests {
    @Test("RFC 3986's unreserved characters stay, every other UTF-8 byte is escaped, as Foundation escapes them")
    func sameAsFoundation() {
        let unreserved = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        )
        for text in ["", "plain-text_1.2~", "a b&c=d/e?f#g", "Bücher 😀", "%41+", "\u{0}\u{7F}\n", "100% \"quoted\""] {
            #expect(
                PercentEncoding.escape(text) == text.addingPercentEncoding(withAllowedCharacters: unreserved),
                "\(text)"
            )
        }
        #expect(PercentEncoding.escape("a b/ü") == "a%20b%2F%C3%BC")
    }

    @Test("unescaping agrees with Foundation's removingPercentEncoding, broken escapes and non-UTF-8 included")
    func unescape() {
        let cases = [
            "", "plain", "a%20b", "%C3%BCber%2f", "%e2%82%AC 5", "100%", "%4", "%zz", "%%41", "%C3", "%FF%FE",
            "%00x", "a+b", "Site%20%3A%20me", "ü%41",
        ]
        for text in cases {
            #expect(PercentEncoding.unescape(text) == text.removingPercentEncoding, "\(text)")
        }
        for _ in 0..<300 {
            let text = String(decoding: (0..<12).map { _ in Array("%A0fFzu €".utf8).randomElement()! }, as: UTF8.self)
            #expect(PercentEncoding.unescape(text) == text.removingPercentEncoding, "\(text)")
        }
    }
}

@Suite("white space at the ends")
struct TrimmingTests {
    @Test(
        "agrees with Foundation's trimmingCharacters over every scalar to U+30FF: its white space, line breaks only with newlines"
    )
    func agreesWithFoundation() {
        let cases = [
            "", " ", "\t x y \n", "\u{00A0}\u{3000}x\u{2009}", "\r\nx\u{85}", "\u{2028}x\u{2029}", "x\u{200B}",
            "\u{1680}é\u{202F}", " \u{1F600} ", "\u{0B}\u{0C}x", "a b",
        ]
        for text in cases {
            #expect(
                text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines),
                "\(text.debugDescription)"
            )
            #expect(
                text.trimmingWhitespace(newlines: false) == text.trimmingCharacters(in: .whitespaces),
                "\(text.debugDescription)"
            )
            #expect(text.dropFirst(0).trimmingWhitespace() == text.trimmingWhitespace())
        }
        for value in UInt32(0)..<0x3100 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "\(scalar)x\(scalar)"
            #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines), "U+\(value)")
            #expect(text.trimmingWhitespace(newlines: false) == text.trimmingCharacters(in: .whitespaces), "U+\(value)")
        }
    }
}

@Suite("hexadecimal")
struct HexTests {
    @Test("both cases read, lowercase written; odd lengths and other characters refused")
    func roundTrip() {
        #expect(Hex.decode("00ff7Fa0") == [0x00, 0xFF, 0x7F, 0xA0])
        #expect(Hex.encode([0x00, 0xFF, 0x7F, 0xA0]) == "00ff7fa0")
        #expect(Hex.decode("") == [])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
        let bytes = (0..<256).map { UInt8($0) }
        #expect(Hex.decode(Hex.encode(bytes)) == bytes)
    }
}

@Suite("text shown to a person")
struct DisplayTextTests {
    @Test(
        "escaping writes control, bidi and invisible format characters as \\u{…}, keeps letters and the ZWJ, and changes nothing it escaped"
    )
    func escaping() {
        let text = "a\u{1B}[2Jb\nc\u{202E}d\u{200B}é👩\u{200D}💻"
        let escaped = DisplayText.escaping(text)
        #expect(escaped == #"a\u{1B}[2Jb\u{A}c\u{202E}d\u{200B}é👩"# + "\u{200D}💻")
        #expect(DisplayText.escaping(escaped) == escaped)
    }

    @Test("an excerpt is cut by bytes at a scalar, even inside one long character, and says it was cut")
    func excerpt() {
        #expect(DisplayText.excerpt("short", bytes: 100) == "short")
        // 3 000 Hangul leading jamo are one Character of 9 000 bytes.
        let jamo = String(repeating: "\u{1100}", count: 3000) + "github.com"
        #expect(jamo.count < 20)
        let cut = DisplayText.excerpt(jamo, bytes: 100)
        #expect(cut.hasSuffix("…"))
        #expect(cut.utf8.count <= 100 + "…".utf8.count)
        #expect(cut.unicodeScalars.dropLast().allSatisfy { $0 == "\u{1100}" })
        #expect(DisplayText.excerpt("ééé", bytes: 5) == "éé…")
    }
}
