import KeyportEncoding

/// Checks codes people type, for servers and tests: within a window of steps, in constant time,
/// and refusing a code whose step was already used.
public struct OTPVerifier: Sendable {
    /// The generator and time steps codes are checked against.
    public let totp: TOTP
    /// Steps accepted before and after the current one (clock drift, slow typing). 1 is usual.
    public let window: Int

    /// A verifier accepting codes `window` steps either side of the current one.
    ///
    /// - Throws: ``OTPError`` (`invalidParameter`) for a window outside 0 to 100.
    public init(totp: TOTP, window: Int = 1) throws(OTPError) {
        guard (0...100).contains(window) else {
            throw OTPError(.invalidParameter, "a window of \(window) steps is not sensible; use 0 to 100")
        }
        self.totp = totp
        self.window = window
    }

    /// The step `code` matches at `time`, or nil. A step at or before `lastUsedStep` never matches,
    /// so a code cannot be used twice; store the returned step as the next `lastUsedStep`.
    ///
    /// Every candidate step is computed and compared, whatever matches, and each comparison takes
    /// the same time for a code of the right length, so timing does not tell an attacker how close
    /// a guess was.
    public func verify(_ code: String, at time: Int64, lastUsedStep: UInt64? = nil) -> UInt64? {
        guard let current = try? totp.counter(at: time) else { return nil }
        return Self.match(
            code,
            generator: totp.generator,
            around: current,
            before: window,
            after: window,
            lastUsed: lastUsedStep
        )
    }

    /// HOTP: the counter `code` matches among `counter` … `counter + lookAhead`, or nil.
    public static func verifyHOTP(
        _ code: String,
        generator: OTPGenerator,
        counter: UInt64,
        lookAhead: Int = 0
    ) -> UInt64? {
        match(code, generator: generator, around: counter, before: 0, after: max(0, lookAhead), lastUsed: nil)
    }

    static func match(
        _ code: String,
        generator: OTPGenerator,
        around center: UInt64,
        before: Int,
        after: Int,
        lastUsed: UInt64?
    ) -> UInt64? {
        guard code.utf8.count == generator.format.length else { return nil }
        var found: UInt64? = nil
        let low = center >= UInt64(before) ? center - UInt64(before) : 0
        let (high, overflow) = center.addingReportingOverflow(UInt64(after))
        for step in low...(overflow ? UInt64.max : high) {
            let matches = ConstantTime.equal(code, generator.code(counter: step))
            let fresh = lastUsed.map { step > $0 } ?? true
            if matches && fresh && found == nil { found = step }
        }
        return found
    }
}
