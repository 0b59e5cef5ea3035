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
    print(
        String(
            format: "TOTP-SHA1, 10 000 secrets:    %6.2f M codes/s (prepared once per secret)",
            Double(perSecret * secrets.count) / manySecrets / 1e6
        )
    )
    let (fresh, _) = try measure(5) { () throws(OTPError) -> Int in
        for s in secrets { sink &+= Int(try TOTP(secret: s).code(at: 1_700_000_000).utf8.first!) }
        return sink
    }
    print(
        String(
            format: "TOTP-SHA1, 10 000 secrets:    %6.2f M codes/s (one code each, key prepared each time)",
            Double(secrets.count) / fresh / 1e6
        )
    )
}

/// Runs a peer command and returns its wall time in seconds (nil when it is not installed).
func timePeer(_ executable: String, _ arguments: [String]) -> Double? {
    guard FileManager.default.isExecutableFile(atPath: executable) else { return nil }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    let start = DispatchTime.now().uptimeNanoseconds
    guard (try? process.run()) != nil else { return nil }
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { return nil }
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// The same kind of work by the peers, in this run: oathtool making `codes` codes in one process
/// (`-w`), and pyotp making `codes / 10` in one Python process (from the venv scripts/test makes).
func otpPeers(codes: Int) {
    let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
    if let seconds = timePeer("/usr/bin/oathtool", ["--totp", "-w", "\(codes - 1)", "-N", "@1700000000", "-b", secret])
    {
        print(String(format: "oathtool --totp -w (one process): %6.2f M codes/s", Double(codes) / seconds / 1e6))
    } else {
        print("oathtool: not installed (scripts/test installs it)")
    }
    let pythonCodes = codes / 10
    let script = "import pyotp\nt = pyotp.TOTP('\(secret)')\nfor i in range(\(pythonCodes)): t.at(i * 30)\n"
    if let seconds = timePeer(".venv/bin/python3", ["-c", script]) {
        print(String(format: "pyotp (one process):              %6.2f M codes/s", Double(pythonCodes) / seconds / 1e6))
    } else {
        print("pyotp: no .venv with pyotp here (scripts/test makes one)")
    }
}
