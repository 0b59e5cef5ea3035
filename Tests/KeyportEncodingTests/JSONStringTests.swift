import Foundation
import KeyportEncoding
import Testing

@Suite("JSON strings")
struct JSONStringTests {
    @Test("escaped as RFC 8785 writes them, and read back the same by Foundation")
    func escapes() throws {
        #expect(String(decoding: JSONString.quoted("plain / ü 😀"), as: UTF8.self) == #""plain / ü 😀""#)
        #expect(
            String(decoding: JSONString.quoted("\"\\\u{8}\u{C}\n\r\t\u{1}\u{1F}"), as: UTF8.self)
                == #""\"\\\b\f\n\r\t\u0001\u001f""#
        )
        // Every control character, the quote and the backslash, among other text.
        let every = String(String.UnicodeScalarView((0..<0x80).compactMap(Unicode.Scalar.init))) + "é\u{2028}𝄞"
        var out = Array("[".utf8)
        JSONString.append(every, to: &out)
        out.append(UInt8(ascii: "]"))
        let read = try #require(try JSONSerialization.jsonObject(with: Data(out)) as? [String])
        #expect(read == [every])
    }
}
