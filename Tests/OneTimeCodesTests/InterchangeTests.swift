import CredentialExchangeFormat
import OneTimeCodes
import Testing

@Suite("KeePassXC and CXF")
struct InterchangeTests {
    @Test("KeePassXC's otp attribute, the KeeOtp form and the legacy pair")
    func keePassXC() throws {
        let uri = try OTPAuthURI(keePassXCAttributes: [
            "otp": "otpauth://totp/E:a?secret=JBSWY3DPEHPK3PXP&period=45&digits=8"
        ])
        #expect(uri.kind == .totp(period: 45))
        #expect(uri.format == .decimal(digits: 8))
        let keeOtp = try OTPAuthURI(keePassXCAttributes: [
            "otp": "key=JBSWY3DPEHPK3PXP&step=60&size=7&otpHashMode=Sha256"
        ])
        #expect(keeOtp.kind == .totp(period: 60))
        #expect(keeOtp.algorithm == .sha256)
        #expect(keeOtp.format == .decimal(digits: 7))
        let legacy = try OTPAuthURI(keePassXCAttributes: ["TOTP Seed": "JBSWY3DPEHPK3PXP", "TOTP Settings": "30;S"])
        #expect(legacy.format == .steam)
        let plain = try OTPAuthURI(keePassXCAttributes: ["TOTP Seed": "JBSWY3DPEHPK3PXP", "TOTP Settings": "30;8"])
        #expect(plain.format == .decimal(digits: 8))
        #expect(try OTPAuthURI(keePassXCAttributes: plain.keePassXCAttributes) == plain)
    }

    @Test(
        "KeePassXC errors name the attribute",
        arguments: [
            (["TOTP Seed": "JBSWY3DP", "TOTP Settings": "thirty"], "TOTP Settings"),
            (["TOTP Seed": "JBSWY3DP", "TOTP Settings": "30;4"], "digits"),
            (["Title": "no otp"], "neither"),
            (["otp": "step=30"], "no key"),
        ]
    )
    func keePassXCErrors(attributes: [String: String], expected: String) {
        do {
            _ = try OTPAuthURI(keePassXCAttributes: attributes)
            Issue.record("expected an error")
        } catch {
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    @Test("CXF totp credentials convert both ways")
    func cxf() throws {
        let credential = CXF.TOTP(
            secret: "jbsw y3dp ehpk 3pxp",
            period: 60,
            digits: 8,
            username: "alice",
            algorithm: .sha512,
            issuer: "Example"
        )
        let uri = try OTPAuthURI(cxf: credential)
        #expect(uri.kind == .totp(period: 60))
        #expect(uri.algorithm == .sha512)
        #expect(uri.account == "alice")
        let back = try CXF.TOTP(uri)
        #expect(back.secret == "JBSWY3DPEHPK3PXP")
        #expect(back.period == 60 && back.digits == 8 && back.algorithm == .sha512)
        #expect(back.username == "alice" && back.issuer == "Example")
        #expect(throws: OTPError.self) { try CXF.TOTP(try OTPAuthURI(parsing: "steam://JBSWY3DPEHPK3PXP")) }
        #expect(throws: OTPError.self) {
            try CXF.TOTP(try OTPAuthURI(parsing: "otpauth://hotp/x?secret=JBSWY3DP&counter=1"))
        }
        #expect(throws: OTPError.self) { try OTPAuthURI(cxf: CXF.TOTP(secret: "JBSWY3DP", digits: 4)) }
    }
}
