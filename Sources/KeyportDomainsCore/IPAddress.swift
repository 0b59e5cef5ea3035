import KeyportEncoding

/// IP addresses as the WHATWG URL standard reads and writes a URL's host (its "IPv4 parser",
/// "IPv6 parser" and their serializers), so Keyport reads `https://0x7f.1/` as browsers do
/// (`127.0.0.1`) and writes an address one way (`::ffff:102:304`, never `::ffff:1.2.3.4`).
package enum IPAddress {
    /// Whether a host's last label is a number, in which case the host is an IPv4 address or
    /// nothing (the standard's "ends in a number": `example.1` is no domain name).
    package static func endsInNumber(_ host: some StringProtocol) -> Bool {
        var parts = host.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        if parts.last?.isEmpty == true {
            guard parts.count > 1 else { return false }
            parts.removeLast()
        }
        guard let last = parts.last else { return false }
        if !last.isEmpty, last.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) { return true }
        return number(last) != nil
    }

    /// The IPv4 address `host` writes (`192.168.0.1` for `0300.0250.0.1`, `127.0.0.1` for
    /// `2130706433`), or why it is none.
    package static func ipv4(_ host: some StringProtocol) -> Result<String, HostError> {
        var parts = host.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        if parts.last?.isEmpty == true, parts.count > 1 { parts.removeLast() }
        guard parts.count <= 4 else { return .failure(.init("an IPv4 address has at most four parts")) }
        var numbers: [UInt64] = []
        for part in parts {
            guard let value = number(part) else {
                return .failure(.init("'\(String(decoding: part, as: UTF8.self))' is not a number of an IPv4 address"))
            }
            numbers.append(value)
        }
        let last = numbers.removeLast()
        guard numbers.allSatisfy({ $0 <= 255 }), last < (1 << (8 * UInt64(5 - parts.count))) else {
            return .failure(.init("a part of the IPv4 address is too large"))
        }
        var address = last
        for (index, value) in numbers.enumerated() { address += value << (8 * UInt64(3 - index)) }
        let bytes = (0..<4).map { String((address >> (8 * UInt64(3 - $0))) & 0xFF) }
        return .success(bytes.joined(separator: "."))
    }

    /// One part: decimal, `0x` hexadecimal, or octal with a leading zero; `nil` when it is none
    /// of them (or beyond any address, which the caller reports as too large all the same).
    private static func number(_ part: some Collection<UInt8>) -> UInt64? {
        guard !part.isEmpty else { return nil }
        var digits = Array(part)[...]
        var radix: UInt64 = 10
        if digits.count >= 2, digits.first == UInt8(ascii: "0"),
            digits.dropFirst().first == UInt8(ascii: "x") || digits.dropFirst().first == UInt8(ascii: "X")
        {
            radix = 16
            digits = digits.dropFirst(2)
        } else if digits.count >= 2, digits.first == UInt8(ascii: "0") {
            radix = 8
            digits = digits.dropFirst()
        }
        var value: UInt64 = 0
        for byte in digits {
            guard let digit = hexValue(byte), digit < radix else { return nil }
            // Past 2^32 it is too large whatever follows; stop growing so nothing overflows.
            value = min(value * radix + digit, 1 << 33)
        }
        return value
    }

    private static func hexValue(_ byte: UInt8) -> UInt64? { Hex.value(byte).map(UInt64.init) }

    /// The IPv6 address between a URL's brackets, written as the standard serializes it
    /// (lowercase, no leading zeros, the first longest run of two or more zero pieces as `::`),
    /// or why it is none.
    package static func ipv6(_ text: some StringProtocol) -> Result<String, HostError> {
        let input = Array(text.utf8)
        var pieces = [UInt16](repeating: 0, count: 8)
        var pieceIndex = 0
        var compress: Int?
        var pointer = 0
        func fail(_ why: String) -> Result<String, HostError> { .failure(.init("the IPv6 address \(why)")) }
        func at(_ index: Int) -> UInt8? { index < input.count ? input[index] : nil }

        if at(0) == UInt8(ascii: ":") {
            guard at(1) == UInt8(ascii: ":") else { return fail("begins with a single ':'") }
            pointer = 2
            pieceIndex = 1
            compress = 1
        }
        while let byte = at(pointer) {
            guard pieceIndex < 8 else { return fail("has more than eight pieces") }
            if byte == UInt8(ascii: ":") {
                guard compress == nil else { return fail("has '::' twice") }
                pointer += 1
                pieceIndex += 1
                compress = pieceIndex
                continue
            }
            var value: UInt64 = 0
            var length = 0
            while length < 4, let next = at(pointer), let digit = hexValue(next) {
                value = value * 16 + digit
                pointer += 1
                length += 1
            }
            if at(pointer) == UInt8(ascii: ".") {
                // An IPv4 address in the last two pieces (`::ffff:1.2.3.4`).
                guard length > 0 else { return fail("has a '.' where a number belongs") }
                pointer -= length
                guard pieceIndex <= 6 else { return fail("has an IPv4 part too late") }
                var numbersSeen = 0
                while at(pointer) != nil {
                    var ipv4Piece: UInt64?
                    if numbersSeen > 0 {
                        guard at(pointer) == UInt8(ascii: "."), numbersSeen < 4 else {
                            return fail("has a malformed IPv4 part")
                        }
                        pointer += 1
                    }
                    guard let first = at(pointer), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
                        return fail("has a malformed IPv4 part")
                    }
                    while let next = at(pointer), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(next) {
                        let number = UInt64(next - UInt8(ascii: "0"))
                        if let piece = ipv4Piece {
                            guard piece != 0 else { return fail("has a leading zero in its IPv4 part") }
                            ipv4Piece = piece * 10 + number
                        } else {
                            ipv4Piece = number
                        }
                        guard ipv4Piece! <= 255 else { return fail("has an IPv4 number above 255") }
                        pointer += 1
                    }
                    pieces[pieceIndex] = pieces[pieceIndex] * 0x100 + UInt16(ipv4Piece!)
                    numbersSeen += 1
                    if numbersSeen == 2 || numbersSeen == 4 { pieceIndex += 1 }
                }
                guard numbersSeen == 4 else { return fail("has an IPv4 part of fewer than four numbers") }
                break
            } else if at(pointer) == UInt8(ascii: ":") {
                pointer += 1
                guard at(pointer) != nil else { return fail("ends with a single ':'") }
            } else if at(pointer) != nil {
                return fail("has a character that is not a hexadecimal digit")
            }
            pieces[pieceIndex] = UInt16(value)
            pieceIndex += 1
        }
        if let compress {
            var swaps = pieceIndex - compress
            pieceIndex = 7
            while pieceIndex != 0, swaps > 0 {
                pieces.swapAt(pieceIndex, compress + swaps - 1)
                pieceIndex -= 1
                swaps -= 1
            }
        } else if pieceIndex != 8 {
            return fail("has fewer than eight pieces and no '::'")
        }
        return .success(serialize(pieces))
    }

    /// The standard's IPv6 serializer.
    private static func serialize(_ pieces: [UInt16]) -> String {
        // The first longest run of two or more zero pieces is written `::`.
        var best: (start: Int, length: Int)?
        var index = 0
        while index < 8 {
            guard pieces[index] == 0 else {
                index += 1
                continue
            }
            let start = index
            while index < 8, pieces[index] == 0 { index += 1 }
            let length = index - start
            if length >= 2, length > (best?.length ?? 0) { best = (start, length) }
        }
        var output = ""
        var ignore0 = false
        for index in 0..<8 {
            if ignore0, pieces[index] == 0 { continue }
            ignore0 = false
            if let best, best.start == index {
                output += index == 0 ? "::" : ":"
                ignore0 = true
                continue
            }
            output += String(pieces[index], radix: 16)
            if index != 7 { output += ":" }
        }
        return output
    }
}

/// Why a host or a service identifier could not be read; ``ServiceOrigin/parse(_:)`` says where.
package struct HostError: Error, Sendable, Equatable, CustomStringConvertible {
    package var reason: String

    package init(_ reason: String) { self.reason = reason }

    package var description: String { reason }
}
