import KeyportEncoding
import Testing

@Suite("CBOR, as WebAuthn uses it")
struct CBORTests {
    private static func hex(_ text: String) -> [UInt8] {
        stride(from: 0, to: text.count, by: 2).map {
            let start = text.index(text.startIndex, offsetBy: $0)
            return UInt8(text[start..<text.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    // RFC 8949 appendix A, the examples in the canonical form's profile.
    @Test(
        "RFC 8949's examples read and write back byte for byte",
        arguments: [
            (CBOR.unsigned(0), "00"), (.unsigned(23), "17"), (.unsigned(24), "1818"), (.unsigned(100), "1864"),
            (.unsigned(1000), "1903e8"), (.unsigned(1_000_000), "1a000f4240"),
            (.unsigned(1_000_000_000_000), "1b000000e8d4a51000"), (.unsigned(UInt64.max), "1bffffffffffffffff"),
            (.int(-1), "20"), (.int(-10), "29"), (.int(-100), "3863"), (.int(-1000), "3903e7"),
            (.negative(UInt64.max), "3bffffffffffffffff"), (.bytes([]), "40"), (.bytes([1, 2, 3, 4]), "4401020304"),
            (.text(""), "60"), (.text("a"), "6161"), (.text("IETF"), "6449455446"), (.text("\u{00FC}"), "62c3bc"),
            (.text("\u{6C34}"), "63e6b0b4"), (.array([]), "80"),
            (.array([.unsigned(1), .unsigned(2), .unsigned(3)]), "83010203"),
            (
                .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])]),
                "8301820203820405"
            ),
            (.map([]), "a0"),
            (.map([.init(.unsigned(1), .unsigned(2)), .init(.unsigned(3), .unsigned(4))]), "a201020304"),
            (.bool(false), "f4"), (.bool(true), "f5"), (.null, "f6"), (.float(1.1), "fb3ff199999999999a"),
        ]
    )
    func vectors(item: CBOR, encoding: String) throws {
        #expect(item.encoded == Self.hex(encoding))
        #expect(try CBORReader.read(Self.hex(encoding)) == item)
    }

    @Test("floats of every width read; 25 items in an array take the one-byte count")
    func widths() throws {
        #expect(try CBORReader.read(Self.hex("f93c00")) == .float(1.0))
        #expect(try CBORReader.read(Self.hex("f90001")) == .float(5.960464477539063e-8))
        #expect(try CBORReader.read(Self.hex("f9c400")) == .float(-4.0))
        #expect(try CBORReader.read(Self.hex("fa47c35000")) == .float(100000.0))
        let items = [CBOR](repeating: .unsigned(1), count: 25)
        #expect(CBOR.array(items).encoded.prefix(2) == [0x98, 0x19])
        // A head wider than needed reads (relying parties accept it) and writes back in the shortest form.
        #expect(try CBORReader.read(Self.hex("1900ff")) == .unsigned(255))
    }

    @Test("map keys are written in CTAP2's order: by length, then byte by byte, whatever order they came in")
    func canonicalOrder() throws {
        let cose = CBOR.map([
            .init(.int(-3), .bytes([3])), .init(.int(-1), .unsigned(1)), .init(.unsigned(3), .int(-7)),
            .init(.int(-2), .bytes([2])), .init(.unsigned(1), .unsigned(2)),
        ])
        #expect(cose.encoded == Self.hex("a5010203262001214102224103"))
        let keys = try CBORReader.read(cose.encoded).entries!.map(\.key)
        #expect(keys == [.unsigned(1), .unsigned(3), .int(-1), .int(-2), .int(-3)])
        let attestation = CBOR.map([
            .init(.text("authData"), .bytes([])), .init(.text("attStmt"), .map([])), .init(.text("fmt"), .text("none")),
        ])
        #expect(
            try CBORReader.read(attestation.encoded).entries!.map(\.key) == [
                .text("fmt"), .text("attStmt"), .text("authData"),
            ]
        )
        #expect(attestation.encoded == Self.hex("a363666d74646e6f6e656761747453746d74a068617574684461746140"))
    }

    @Test(
        "what canonical CBOR rules out is refused with where it stands",
        arguments: [
            ("5f4101ff", "an indefinite length, which canonical CBOR forbids", 0),
            ("c11a514b67b0", "a tag (major type 6), which WebAuthn's CBOR does not use", 0),
            ("a2010201ff", "the map key 1 is repeated", 3),
            ("a2616101616102", "the map key \"a\" is repeated", 4),
            ("", "the data ends where an item was expected", 0),
            ("81", "an array of 1 items where 0 bytes are left", 0),
            ("440102", "a byte string of 4 bytes where 2 bytes are left", 0),
            ("44010203", "a byte string of 4 bytes where 3 bytes are left", 0),
            ("62c3", "a text string of 2 bytes where 1 bytes are left", 0),
            ("a201", "a map of 2 pairs where 1 bytes are left", 0),
            ("8201", "an array of 2 items where 1 bytes are left", 0),
            ("824100", "the data ends where an item was expected", 3),
            ("1a0001", "the data ends inside an item's head", 0),
            ("1c", "the reserved additional information 28", 0),
            ("f7", "the simple value 23, which WebAuthn's CBOR does not use", 0),
            ("ff", "a break where no indefinite length is open", 0),
            ("62c328", "a text string that is not UTF-8", 0),
            ("9bffffffffffffffff", "an array of 18446744073709551615 items where 0 bytes are left", 0),
            ("0000", "1 bytes follow the item", 1),
        ]
    )
    func refusals(input: String, message: String, offset: Int) {
        #expect(throws: CBORReadFailure(message, at: offset)) { try CBORReader.read(Self.hex(input)) }
    }

    @Test("nesting past the limit is refused, at the limit it reads")
    func depth() throws {
        let deepest = [UInt8](repeating: 0x81, count: CBORReader.maximumDepth) + [0x00]
        #expect(throws: Never.self) { try CBORReader.read(deepest) }
        let tooDeep = [UInt8](repeating: 0x81, count: CBORReader.maximumDepth + 1) + [0x00]
        #expect(throws: CBORReadFailure("arrays and maps nested deeper than 16", at: 16)) {
            try CBORReader.read(tooDeep)
        }
    }

    @Test("an item followed by more is read by next(), leaving the rest")
    func sequence() throws {
        var reader = CBORReader([0x01, 0xA1, 0x01, 0x02])
        #expect(try reader.next() == .unsigned(1))
        #expect(reader.offset == 1)
        #expect(try reader.next() == .map([.init(.unsigned(1), .unsigned(2))]))
        #expect(reader.isAtEnd)
    }
}
