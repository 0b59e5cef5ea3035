import Crypto
import Foundation

/// Makes one-time codes for one secret: HOTP (RFC 4226) for a counter, and through ``TOTP`` for a
/// time (RFC 6238).
///
/// The keyed HMAC is prepared once, when the generator is made; each code then copies that prepared
/// state and hashes only the eight counter bytes, so making many codes for one secret costs two
/// compression rounds each, not a new key schedule.
public struct OTPGenerator: Sendable {
    /// How the 31-bit truncated value becomes the code a person types.
    public enum Format: Hashable, Sendable, CustomStringConvertible {
        /// `digits` decimal digits (6 to 10), zero-padded.
        case decimal(digits: Int)
        /// Steam Guard: five characters of `23456789BCDFGHJKMNPQRTVWXY`.
        case steam

        /// `N digits`, or `Steam Guard`.
        public var description: String {
            switch self {
            case .decimal(let digits): "\(digits) digits"
            case .steam: "Steam Guard"
            }
        }

        /// The number of characters of a code.
        public var length: Int {
            switch self {
            case .decimal(let digits): digits
            case .steam: 5
            }
        }
    }

    /// The hash function of the HMAC.
    public let algorithm: OTPAlgorithm
    /// How codes are written.
    public let format: Format
    private let keyed: Keyed

    private enum Keyed: Sendable {
        case sha1(HMAC<Insecure.SHA1>)
        case sha256(HMAC<SHA256>)
        case sha512(HMAC<SHA512>)
    }

    /// The digit counts a decimal code may have.
    public static let digitRange = 6...10

    /// A generator for `secret`; the defaults are HOTP's (SHA-1, 6 digits).
    ///
    /// - Throws: ``OTPError`` (`invalidParameter`) for a decimal format outside
    ///   ``digitRange``.
    public init(
        secret: OTPSecret,
        algorithm: OTPAlgorithm = .sha1,
        format: Format = .decimal(digits: 6)
    ) throws(OTPError) {
        if case .decimal(let digits) = format, !Self.digitRange.contains(digits) {
            throw OTPError(.invalidParameter, "a code of \(digits) digits is not possible; use 6 to 10")
        }
        self.algorithm = algorithm
        self.format = format
        switch algorithm {
        case .sha1: keyed = .sha1(HMAC(key: secret.key))
        case .sha256: keyed = .sha256(HMAC(key: secret.key))
        case .sha512: keyed = .sha512(HMAC(key: secret.key))
        }
    }

    /// The RFC 4226 dynamically truncated 31-bit value for `counter`.
    public func truncatedValue(counter: UInt64) -> UInt32 {
        let message = CounterBytes(counter)
        switch keyed {
        case .sha1(var hmac):
            hmac.update(data: message)
            return hmac.finalize().withUnsafeBytes(Self.truncate)
        case .sha256(var hmac):
            hmac.update(data: message)
            return hmac.finalize().withUnsafeBytes(Self.truncate)
        case .sha512(var hmac):
            hmac.update(data: message)
            return hmac.finalize().withUnsafeBytes(Self.truncate)
        }
    }

    private static func truncate(_ mac: UnsafeRawBufferPointer) -> UInt32 {
        let offset = Int(mac[mac.count - 1] & 0x0F)
        return (UInt32(mac[offset]) & 0x7F) << 24 | UInt32(mac[offset + 1]) << 16 | UInt32(mac[offset + 2]) << 8
            | UInt32(mac[offset + 3])
    }

    /// The code for an HOTP counter (for TOTP, the time step).
    public func code(counter: UInt64) -> String {
        Self.render(truncatedValue(counter: counter), format)
    }

    static let steamAlphabet = Array("23456789BCDFGHJKMNPQRTVWXY".utf8)

    /// The code text for a truncated value.
    static func render(_ value: UInt32, _ format: Format) -> String {
        switch format {
        case .decimal(let digits):
            var v = UInt64(value)
            return String(unsafeUninitializedCapacity: digits) { buffer in
                for i in stride(from: digits - 1, through: 0, by: -1) {
                    buffer[i] = UInt8(ascii: "0") + UInt8(v % 10)
                    v /= 10
                }
                return digits
            }
        case .steam:
            var v = value
            return String(unsafeUninitializedCapacity: 5) { buffer in
                for i in 0..<5 {
                    buffer[i] = steamAlphabet[Int(v % 26)]
                    v /= 26
                }
                return 5
            }
        }
    }
}

/// Time-based one-time codes (RFC 6238): the HOTP code of the number of `period`s since `t0`.
public struct TOTP: Sendable {
    /// The HOTP generator that makes the code of each time step.
    public let generator: OTPGenerator
    /// Seconds per code; positive.
    public let period: Int64
    /// The Unix time counting starts from (RFC 6238's T0), usually 0.
    public let t0: Int64

    /// A TOTP generator; the defaults are RFC 6238's (SHA-1, 6 digits, 30 seconds, counting from 1970).
    ///
    /// - Throws: ``OTPError`` (`invalidParameter`) for a period that is not positive or
    ///   digits outside ``OTPGenerator/digitRange``.
    public init(
        secret: OTPSecret,
        algorithm: OTPAlgorithm = .sha1,
        format: OTPGenerator.Format = .decimal(digits: 6),
        period: Int64 = 30,
        t0: Int64 = 0
    ) throws(OTPError) {
        guard period > 0 else {
            throw OTPError(.invalidParameter, "the period must be a positive number of seconds, not \(period)")
        }
        generator = try OTPGenerator(secret: secret, algorithm: algorithm, format: format)
        self.period = period
        self.t0 = t0
    }

    /// Steam Guard codes: SHA-1, 30 seconds, five characters.
    public static func steam(secret: OTPSecret) -> TOTP {
        // These parameters are always valid.
        try! TOTP(secret: secret, format: .steam)
    }

    /// The time step for Unix time `time`: ⌊(time − t0) / period⌋. Throws for a time before t0.
    public func counter(at time: Int64) throws(OTPError) -> UInt64 {
        let (elapsed, overflow) = time.subtractingReportingOverflow(t0)
        guard !overflow, elapsed >= 0 else {
            throw OTPError(.invalidParameter, "the time \(time) is before the start of counting (T0 = \(t0))")
        }
        return UInt64(elapsed / period)
    }

    /// The code at Unix time `time` (seconds).
    public func code(at time: Int64) throws(OTPError) -> String {
        generator.code(counter: try counter(at: time))
    }

    /// Seconds until the code at `time` changes.
    public func secondsRemaining(at time: Int64) -> Int64 {
        let elapsed = (time - t0) % period
        return period - (elapsed < 0 ? elapsed + period : elapsed)
    }
}

/// The eight big-endian counter bytes HOTP hashes, as `DataProtocol` built only of non-generic
/// types. swift-crypto's `HMAC.update(data:)` is generic and, across the module boundary, runs
/// unspecialised: with `Data` or a buffer pointer it looks up generic metadata (the `regions`
/// collection, its iterator) on every code, which cost more than the hashing itself.
struct CounterBytes: DataProtocol, ContiguousBytes {
    private let storage: UInt64

    init(_ counter: UInt64) { storage = counter.bigEndian }

    var startIndex: Int { 0 }
    var endIndex: Int { 8 }
    subscript(position: Int) -> UInt8 { withUnsafeBytes { $0[position] } }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try Swift.withUnsafeBytes(of: storage, body)
    }

    var regions: Regions { Regions(bytes: self) }

    /// The one region: these bytes.
    struct Regions: BidirectionalCollection {
        let bytes: CounterBytes
        var startIndex: Int { 0 }
        var endIndex: Int { 1 }
        subscript(position: Int) -> CounterBytes { bytes }
        func index(after i: Int) -> Int { i + 1 }
        func index(before i: Int) -> Int { i - 1 }
        func makeIterator() -> Iterator { Iterator(bytes: bytes) }

        struct Iterator: IteratorProtocol {
            var bytes: CounterBytes?
            mutating func next() -> CounterBytes? {
                defer { bytes = nil }
                return bytes
            }
        }
    }
}
