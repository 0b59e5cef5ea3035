// libFuzzer entry point for OTPAuthURI parsing (see scripts/fuzz). A refused URI is expected;
// a crash or a broken property is a finding.
//
// Properties checked for every URI that parses:
//   - written back and parsed again, it gives the same account (uriString is lossless)
//   - its description never shows the secret, nor a raw control or bidi character
//   - computing a code does not crash (it may refuse the parameters)

import OneTimeCodes

private func fail(_ message: String) -> Never {
    fatalError("otpauth fuzz property violated: \(message)")
}

private func unescapedControl(_ text: String) -> Bool {
    text.unicodeScalars.contains { scalar in
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: true
        default: false
        }
    }
}

private func check(_ text: String) {
    let uri: OTPAuthURI
    do {
        uri = try OTPAuthURI(parsing: text)
    } catch {
        if error.message.isEmpty { fail("an empty error message for \(text.debugDescription)") }
        return
    }
    let written = uri.uriString
    do {
        let again = try OTPAuthURI(parsing: written)
        if again != uri {
            fail("\(written.debugDescription) parses to another account than the one it was written from")
        }
    } catch {
        fail("\(written.debugDescription), written from a parsed URI, does not parse: \(error.message)")
    }
    // The secret may be shown only where the URI's own text put it (an issuer or account that
    // happens to contain it).
    let secret = uri.secret.base32EncodedSecret()
    if secret.count >= 8 && uri.description.contains(secret) && !"\(uri.issuer ?? "")\(uri.account)".contains(secret) {
        fail("the description shows the secret")
    }
    if unescapedControl(uri.description) {
        fail("the description prints a raw control character: \(uri.description.debugDescription)")
    }
    _ = try? uri.code(at: 1_700_000_000)
}

/// libFuzzer calls this with each input (see main.swift).
func otpAuthURIFuzzTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    check(String(decoding: UnsafeRawBufferPointer(start: UnsafeRawPointer(start), count: count), as: UTF8.self))
    return 0
}
