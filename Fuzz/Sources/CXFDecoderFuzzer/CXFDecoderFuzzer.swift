// libFuzzer entry point for CXF.Decoder (see scripts/fuzz). Decoding errors are expected; any
// crash or broken property is a finding.
//
// Properties checked for every input the decoder accepts:
//   e1 = encode(decode(input)), e2 = encode(decode(e1))
//   - nothing lost: decode(e1).document == decode(input).document — every unknown member, every
//     value that could not be read as its type and every repeat survives the canonical encoding
//   - e1 == e2 (the canonical encoding is a fixed point)
//   - no diagnostic quotes a secret field (one whose member calls for concealed-string, or a
//     custom field) that appears exactly once in the input (so it cannot be quoted from elsewhere)
//   - no diagnostic's description carries a raw control or bidi character to a terminal
// The input is also decoded with a tiny depth limit to exercise the depth error path.

import CredentialExchangeFormat

private let decoder = CXF.Decoder(options: CXF.DecodingOptions(maxDocumentSize: 1 << 20))
private let shallowDecoder = CXF.Decoder(options: CXF.DecodingOptions(maxDocumentSize: 1 << 20, maxDepth: 4))
private let validator = CXF.Validator()
private let encoder = CXF.Encoder()

private func fail(_ message: String, _ e1: [UInt8]? = nil, _ e2: [UInt8]? = nil) -> Never {
    if let e1 { print("e1: \(String(decoding: e1, as: UTF8.self))") }
    if let e2 { print("e2: \(String(decoding: e2, as: UTF8.self))") }
    fatalError("CXF fuzz property violated: \(message)")
}

/// How often `needle` occurs in `haystack`, counting overlaps.
private func occurrences(of needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Int {
    guard !needle.isEmpty, haystack.count >= needle.count else { return 0 }
    var count = 0
    for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
        if (1..<needle.count).allSatisfy({ haystack[start + $0] == needle[$0] }) { count += 1 }
    }
    return count
}

private func unescapedControl(_ text: String) -> Bool {
    text.unicodeScalars.contains { scalar in
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: true
        default: false
        }
    }
}

private func checkSecrets(_ decoded: CXF.DecodedDocument, _ findings: [Diagnostic], _ input: UnsafeRawBufferPointer) {
    var secrets: [String] = []
    for account in decoded.document.accounts {
        for item in account.items {
            for credential in item.credentials {
                for field in credential.secretFields where field.value.utf8.count >= 8 {
                    if occurrences(of: Array(field.value.utf8), in: input) == 1 { secrets.append(field.value) }
                }
            }
        }
    }
    for finding in findings {
        if unescapedControl(finding.description) {
            fail("a diagnostic prints a raw control character: \(finding.description.debugDescription)")
        }
        // Values are quoted in single quotes; a long secret without spaces cannot be part of a
        // message's own wording either.
        for secret in secrets
        where finding.message.contains("'\(secret)'")
            || secret.utf8.count >= 16 && !secret.contains(" ") && finding.message.contains(secret)
        {
            fail("a diagnostic quotes a secret field: \(finding.description)")
        }
    }
}

private func check(_ bytes: UnsafeRawBufferPointer) {
    _ = try? shallowDecoder.decode(bytes)

    let decoded: CXF.DecodedDocument
    do {
        decoded = try decoder.decode(bytes)
    } catch {
        _ = error.description  // render the error message too
        return
    }
    checkSecrets(decoded, decoded.diagnostics + validator.validate(decoded.document), bytes)

    let e1 = encoder.encode(decoded.document)
    let d1: CXF.DecodedDocument
    do {
        d1 = try decoder.decode(e1)
    } catch {
        fail("decoding the canonical encoding threw: \(error)", e1)
    }
    guard d1.document == decoded.document else { fail("decode(encode(decode(input))) lost or changed something", e1) }
    let e2 = encoder.encode(d1.document)
    guard e1 == e2 else { fail("encode(decode(e1)) != e1", e1, e2) }
}

/// libFuzzer calls this with each input (see main.swift).
func cxfDecoderFuzzTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    check(UnsafeRawBufferPointer(start: UnsafeRawPointer(start), count: count))
    return 0
}
