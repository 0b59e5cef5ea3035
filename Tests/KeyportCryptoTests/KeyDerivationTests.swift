import Crypto
import KeyportCrypto
import KeyportEncoding
import KeyportSystemCore
import Testing

@Suite("Keys from passphrases: scrypt and PBKDF2 within Keyport's caps")
struct KeyDerivationTests {
    private static func hex(_ key: SymmetricKey) -> String { key.withUnsafeBytes { Hex.encode($0) } }

    @Test("PBKDF2-HMAC-SHA256 gives RFC 7914's §11 vector (P \"passwd\", S \"salt\", c 1)")
    func pbkdf2Vector() throws {
        let key = try PBKDF2SHA256.deriveKey(
            from: SecretBytes("passwd"),
            salt: Array("salt".utf8),
            rounds: 1,
            outputByteCount: 64
        )
        #expect(
            Self.hex(key)
                == "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"
        )
    }

    @Test("a round count a file asks for outside 1 to 10 million is refused before any work")
    func pbkdf2Caps() {
        for rounds in [0, -1, PBKDF2SHA256.maximumRounds + 1] {
            #expect(throws: KDFError.self) {
                try PBKDF2SHA256.deriveKey(from: SecretBytes("p"), salt: Array("salt".utf8), rounds: rounds)
            }
        }
    }

    @Test(
        "scrypt's parameters outside the caps are refused, saying which; within them a key is the same for the same record"
    )
    func scryptCaps() throws {
        let salt = [UInt8](repeating: 7, count: 16)
        for (parameters, problem) in [
            (ScryptParameters(logN: 9, salt: salt), "2^9"),
            (ScryptParameters(logN: ScryptParameters.maximumLogN + 1, salt: salt), "2^21"),
            (ScryptParameters(logN: 10, r: 33, salt: salt), "r is 33"),
            (ScryptParameters(logN: 10, p: 17, salt: salt), "p 17"),
            (ScryptParameters(logN: 20, r: 16, salt: salt), "MiB of memory"),
            (ScryptParameters(logN: 20, r: 8, p: 16, salt: salt), "work"),
            (ScryptParameters(logN: 10, salt: Array(salt.prefix(15))), "salt is 15 bytes"),
        ] {
            let error = #expect(throws: KDFError.self) { try parameters.deriveKey(from: SecretBytes("p")) }
            #expect(error?.code == .outsideCaps)
            #expect(error?.message.contains(problem) == true, "\(error?.message ?? "no error")")
        }
        let parameters = ScryptParameters(logN: 10, salt: salt)
        let key = try parameters.deriveKey(from: SecretBytes("correct horse"))
        let again = try ScryptParameters(text: parameters.text).deriveKey(from: SecretBytes("correct horse"))
        #expect(Self.hex(key) == Self.hex(again))
        #expect(Self.hex(key) != Self.hex(try parameters.withNewSalt().deriveKey(from: SecretBytes("correct horse"))))
    }

    @Test("a stored record that is not Keyport's is refused, quoted")
    func storedForm() {
        let salt = "AAAAAAAAAAAAAAAAAAAAAA"
        for text in [
            #"{"kdf":"argon2","logN":10,"r":8,"p":1,"salt":"\#(salt)"}"#, "not json", "{}",
            // A member repeated, unknown, of the wrong kind or missing; a number that is not an
            // integer; a salt that is not base64url; text after the record.
            #"{"kdf":"scrypt","logN":10,"logN":20,"r":8,"p":1,"salt":"\#(salt)"}"#,
            #"{"kdf":"scrypt","logN":10,"r":8,"p":1,"salt":"\#(salt)","n":1}"#,
            #"{"kdf":"scrypt","logN":"10","r":8,"p":1,"salt":"\#(salt)"}"#,
            #"{"kdf":"scrypt","logN":10,"r":8,"salt":"\#(salt)"}"#,
            #"{"kdf":"scrypt","logN":10.5,"r":8,"p":1,"salt":"\#(salt)"}"#,
            #"{"kdf":"scrypt","logN":10,"r":8,"p":1,"salt":"*"}"#,
            #"{"kdf":"scrypt","logN":10,"r":8,"p":1,"salt":"\#(salt)"} {}"#,
        ] {
            let error = #expect(throws: KDFError.self, "\(text)") { try ScryptParameters(text: text) }
            #expect(error?.code == .notParameters)
            #expect(error?.message.contains("not what Keyport writes") == true)
        }
        // Members in any order and whitespace are read.
        let parameters = try? ScryptParameters(
            text: #" { "salt": "\#(salt)", "p": 1, "r": 8, "logN": 10, "kdf": "scrypt" } "#
        )
        #expect(parameters == ScryptParameters(logN: 10, r: 8, p: 1, salt: [UInt8](repeating: 0, count: 16)))
    }

    @Test("calibration picks N so that deriving takes about the target; caps hold")
    func calibration() throws {
        let parameters = ScryptParameters.calibrated(target: .milliseconds(100))
        try parameters.check()
        #expect(parameters.logN >= 14 && parameters.logN <= ScryptParameters.maximumLogN)
        #expect(parameters.salt.count == 32)
        #expect(try ScryptParameters(text: parameters.text) == parameters)
    }
}
