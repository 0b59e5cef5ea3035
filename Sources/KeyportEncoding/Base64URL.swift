/// Base64url (RFC 4648 §5) as CXF writes binary values: encoded without padding; decoded leniently.
///
/// Decoding accepts what real exporters write: with or without `=` padding, and the standard alphabet
/// (`+`, `/`) as well as the URL-safe one (`-`, `_`). Anything else is an error that names the offset.
package enum Base64URL {
    /// Why a string is not base64url.
    package enum DecodingError: Error, Equatable, Sendable, CustomStringConvertible {
        /// A character outside both base64 alphabets, at this UTF-8 offset.
        case invalidCharacter(offset: Int)
        /// A length that no encoding produces (one character left over).
        case invalidLength(Int)
        /// Padding in the middle of the text, or more than two `=`.
        case misplacedPadding(offset: Int)

        package var description: String {
            switch self {
            case .invalidCharacter(let offset): "character at offset \(offset) is not in the base64url alphabet"
            case .invalidLength(let length): "a length of \(length) characters is not a possible base64url length"
            case .misplacedPadding(let offset): "padding '=' at offset \(offset) is not at the end"
            }
        }
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// 0xFF marks a byte outside both alphabets.
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, char) in alphabet.enumerated() { table[Int(char)] = UInt8(value) }
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    /// The number of characters `encode` writes for `count` bytes.
    @inlinable
    package static func encodedLength(_ count: Int) -> Int { (count * 4 + 2) / 3 }

    /// Encodes `bytes` without padding.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out = [UInt8]()
        let array = Array(bytes)
        out.reserveCapacity(encodedLength(array.count))
        array.withUnsafeBufferPointer { append(contentsOf: UnsafeRawBufferPointer($0), to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the unpadded encoding of `bytes` to `out` (the encoder's fast path).
    package static func append(contentsOf bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        alphabet.withUnsafeBufferPointer { table in
            var i = 0
            let n = bytes.count
            while i + 3 <= n {
                let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
                out.append(table[Int(v >> 18)])
                out.append(table[Int((v >> 12) & 63)])
                out.append(table[Int((v >> 6) & 63)])
                out.append(table[Int(v & 63)])
                i += 3
            }
            if n - i == 1 {
                let v = UInt32(bytes[i]) << 16
                out.append(table[Int(v >> 18)])
                out.append(table[Int((v >> 12) & 63)])
            } else if n - i == 2 {
                let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
                out.append(table[Int(v >> 18)])
                out.append(table[Int((v >> 12) & 63)])
                out.append(table[Int((v >> 6) & 63)])
            }
        }
    }

    /// Decodes base64url or base64 text, padded or not.
    package static func decode(_ text: String) throws(DecodingError) -> [UInt8] {
        var text = text
        let result = text.withUTF8 { utf8 in
            Result { () throws(DecodingError) in try decode(UnsafeRawBufferPointer(utf8)) }
        }
        return try result.get()
    }

    /// Decodes base64url or base64 bytes, padded or not.
    package static func decode(_ input: UnsafeRawBufferPointer) throws(DecodingError) -> [UInt8] {
        let (symbols, count) = try measure(input)
        var failure: DecodingError? = nil
        let out = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            failure = decode(symbols, into: UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
        if let failure { throw failure }
        return out
    }

    /// How many bytes base64url or base64 `input`, padded or not, decodes to; with
    /// ``decode(_:into:)``, a caller decodes straight into storage of its own (CXF's `Data`).
    package static func decodedCount(_ input: UnsafeRawBufferPointer) throws(DecodingError) -> Int {
        try measure(input).1
    }

    /// Decodes base64url or base64 `input` into `out`, which has room for exactly
    /// ``decodedCount(_:)`` bytes.
    package static func decode(
        _ input: UnsafeRawBufferPointer,
        into out: UnsafeMutableRawBufferPointer
    ) throws(DecodingError) {
        let (symbols, count) = try measure(input)
        precondition(out.count == count, "the output must have room for exactly the decoded bytes")
        if let failure = decode(symbols, into: out) { throw failure }
    }

    /// The input without its padding, and the number of bytes it decodes to.
    private static func measure(_ input: UnsafeRawBufferPointer) throws(DecodingError) -> (UnsafeRawBufferPointer, Int)
    {
        var n = input.count
        var padding = 0
        while n > 0 && input[n - 1] == UInt8(ascii: "=") {
            n -= 1
            padding += 1
        }
        if padding > 2 { throw .misplacedPadding(offset: n + 2) }
        if n % 4 == 1 { throw .invalidLength(input.count) }
        if padding > 0 && (n + padding) % 4 != 0 { throw .misplacedPadding(offset: n) }
        return (UnsafeRawBufferPointer(rebasing: input[..<n]), n / 4 * 3 + max(0, n % 4 - 1))
    }

    /// Decodes unpadded symbols into `out`, which has exactly the room they need.
    private static func decode(
        _ input: UnsafeRawBufferPointer,
        into out: UnsafeMutableRawBufferPointer
    ) -> DecodingError? {
        decodeTable.withUnsafeBufferPointer { table in
            let n = input.count
            var i = 0
            var o = 0
            while i + 4 <= n {
                let a = table[Int(input[i])]
                let b = table[Int(input[i + 1])]
                let c = table[Int(input[i + 2])]
                let d = table[Int(input[i + 3])]
                if (a | b | c | d) & 0xC0 != 0 { return invalid(input, from: i) }
                let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                out[o] = UInt8(truncatingIfNeeded: v >> 16)
                out[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                out[o + 2] = UInt8(truncatingIfNeeded: v)
                i += 4
                o += 3
            }
            let rest = n - i
            if rest >= 2 {
                let a = table[Int(input[i])]
                let b = table[Int(input[i + 1])]
                let c = rest == 3 ? table[Int(input[i + 2])] : 0
                if (a | b | c) & 0xC0 != 0 { return invalid(input, from: i) }
                let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                out[o] = UInt8(truncatingIfNeeded: v >> 16)
                if rest == 3 { out[o + 1] = UInt8(truncatingIfNeeded: v >> 8) }
            }
            return nil
        }
    }

    private static func invalid(_ input: UnsafeRawBufferPointer, from start: Int) -> DecodingError {
        var i = start
        while i < input.count && decodeTable[Int(input[i])] != 0xFF { i += 1 }
        if i < input.count && input[i] == UInt8(ascii: "=") { return .misplacedPadding(offset: i) }
        return .invalidCharacter(offset: i)
    }
}
