/// Punycode (RFC 3492): the Bootstring encoding IDNA uses to write a Unicode label in ASCII
/// (`bücher` ↔ `bcher-kva`), with the parameters RFC 3492 §5 fixes for it.
package enum Punycode {
    private static let base = 36
    private static let tMin = 1
    private static let tMax = 26
    private static let skew = 38
    private static let damp = 700
    private static let initialBias = 72
    private static let initialN = 0x80
    private static let delimiter = UInt8(ascii: "-")

    /// Encodes a label's code points; `nil` when a count would overflow (RFC 3492 §6.4), which no
    /// label of a real domain name (63 bytes at most once encoded) comes near.
    package static func encode(_ label: String) -> String? {
        let input = label.unicodeScalars.map { Int($0.value) }
        var output = input.filter { $0 < 0x80 }.map { UInt8($0) }
        let basicCount = output.count
        var handled = basicCount
        if basicCount > 0 { output.append(delimiter) }
        var n = initialN
        var delta = 0
        var bias = initialBias
        while handled < input.count {
            guard let next = input.filter({ $0 >= n }).min() else { break }
            let (grown, overflow) = (next - n).multipliedReportingOverflow(by: handled + 1)
            guard !overflow, delta <= Int(Int32.max) - grown else { return nil }
            delta += grown
            n = next
            for code in input {
                if code < n {
                    delta += 1
                    guard delta <= Int(Int32.max) else { return nil }
                }
                guard code == n else { continue }
                var q = delta
                var k = base
                while true {
                    let t = threshold(k, bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                output.append(digit(q))
                bias = adapt(delta, handled + 1, firstTime: handled == basicCount)
                delta = 0
                handled += 1
            }
            delta += 1
            n += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes an encoded label (without its `xn--` prefix); `nil` when it is not valid Punycode.
    package static func decode(_ encoded: String) -> String? {
        let bytes = Array(encoded.utf8)
        var output: [Int] = []
        var start = 0
        if let last = bytes.lastIndex(of: delimiter) {
            for byte in bytes[..<last] {
                guard byte < 0x80 else { return nil }
                output.append(Int(byte))
            }
            start = last + 1
        }
        var n = initialN
        var i = 0
        var bias = initialBias
        var position = start
        while position < bytes.count {
            let oldI = i
            var w = 1
            var k = base
            while true {
                guard position < bytes.count, let value = value(of: bytes[position]) else { return nil }
                position += 1
                let (step, overflow) = value.multipliedReportingOverflow(by: w)
                guard !overflow, i <= Int(Int32.max) - step else { return nil }
                i += step
                let t = threshold(k, bias)
                if value < t { break }
                let (weight, weightOverflow) = w.multipliedReportingOverflow(by: base - t)
                guard !weightOverflow, weight <= Int(Int32.max) else { return nil }
                w = weight
                k += base
            }
            bias = adapt(i - oldI, output.count + 1, firstTime: oldI == 0)
            n += i / (output.count + 1)
            i %= output.count + 1
            guard n <= 0x10FFFF, !(0xD800...0xDFFF).contains(n) else { return nil }
            output.insert(n, at: i)
            i += 1
        }
        var scalars = String.UnicodeScalarView()
        for code in output {
            guard let scalar = Unicode.Scalar(UInt32(code)) else { return nil }
            scalars.append(scalar)
        }
        return String(scalars)
    }

    private static func threshold(_ k: Int, _ bias: Int) -> Int {
        k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
    }

    private static func adapt(_ delta: Int, _ count: Int, firstTime: Bool) -> Int {
        var delta = firstTime ? delta / damp : delta / 2
        delta += delta / count
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }

    /// 0–25 → a–z, 26–35 → 0–9.
    private static func digit(_ value: Int) -> UInt8 {
        value < 26 ? UInt8(ascii: "a") + UInt8(value) : UInt8(ascii: "0") + UInt8(value - 26)
    }

    private static func value(of byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"): Int(byte - UInt8(ascii: "a"))
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): Int(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0")) + 26
        default: nil
        }
    }
}
