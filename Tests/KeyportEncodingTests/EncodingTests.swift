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
