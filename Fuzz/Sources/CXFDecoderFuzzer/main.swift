// libFuzzer entry point for CXF.Decoder. Build with
//   swift build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
// (see scripts/fuzz). Decoding errors are expected; any crash or broken property is a finding.
//
// Properties checked for every input the decoder accepts:
//   e1 = encode(decode(input)), e2 = encode(decode(e1))
//   - decoding e1 does not throw
//   - e1 == e2 (the canonical encoding is a fixed point)
//   - decode(e1).document == decode(e2).document
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

private func check(_ bytes: UnsafeRawBufferPointer) {
    _ = try? shallowDecoder.decode(bytes)

    let decoded: CXF.DecodedDocument
    do {
        decoded = try decoder.decode(bytes)
    } catch {
        _ = error.description  // render the error message too
        return
    }
    _ = validator.validate(decoded.document)
    for diagnostic in decoded.diagnostics { _ = diagnostic.description }

    let e1 = encoder.encode(decoded.document)
    let d1: CXF.DecodedDocument
    do {
        d1 = try decoder.decode(e1)
    } catch {
        fail("decoding the canonical encoding threw: \(error)", e1)
    }
    let e2 = encoder.encode(d1.document)
    guard e1 == e2 else { fail("encode(decode(e1)) != e1", e1, e2) }
    let d2: CXF.DecodedDocument
    do {
        d2 = try decoder.decode(e2)
    } catch {
        fail("decoding e2 threw: \(error)", e2)
    }
    guard d1.document == d2.document else { fail("decode(e1).document != decode(e2).document", e1, e2) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func cxfDecoderFuzzTestOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    check(UnsafeRawBufferPointer(start: start, count: count))
    return 0
}
