import Foundation
import OneTimeCodes

/// Codes per second on one core: one secret at many times, and many secrets.
func otpBenchmark(codes: Int) throws {
    let secret = OTPSecret(bytes: Array("12345678901234567890".utf8))
    let totp = try TOTP(secret: secret)
    var sink = 0
    let (oneSecret, _) = try measure(5) { () throws(OTPError) -> Int in
        for i in 0..<codes { sink &+= Int(try totp.code(at: Int64(i) * 30).utf8.first!) }
        return sink
    }
    print(String(format: "TOTP-SHA1, one secret:        %6.2f M codes/s", Double(codes) / oneSecret / 1e6))

    let secrets = (0..<10_000).map { i in OTPSecret(bytes: (0..<20).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ i) }) }
    let generators = try secrets.map { s throws(OTPError) in try OTPGenerator(secret: s) }
    let perSecret = codes / secrets.count
    let (manySecrets, _) = measure(5) { () -> Int in
        for g in generators {
            for step in 0..<perSecret { sink &+= Int(g.code(counter: UInt64(step)).utf8.first!) }
        }
        return sink
    }
    print(String(format: "TOTP-SHA1, 10 000 secrets:    %6.2f M codes/s (prepared once per secret)", Double(perSecret * secrets.count) / manySecrets / 1e6))
    let (fresh, _) = try measure(5) { () throws(OTPError) -> Int in
        for s in secrets { sink &+= Int(try TOTP(secret: s).code(at: 1_700_000_000).utf8.first!) }
        return sink
    }
    print(String(format: "TOTP-SHA1, 10 000 secrets:    %6.2f M codes/s (one code each, key prepared each time)", Double(secrets.count) / fresh / 1e6))
}
