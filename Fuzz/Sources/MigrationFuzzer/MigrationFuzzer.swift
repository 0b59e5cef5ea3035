// libFuzzer entry point for Google Authenticator migration payloads (see scripts/fuzz). The input
// is the protobuf payload itself, wrapped into an otpauth-migration:// URI as an export carries it.
// A refused payload is expected; a crash or a broken property is a finding.
//
// Properties checked for every payload that decodes:
//   - every problem has a message
//   - the accounts it gave, encoded again and decoded, are the same accounts

import Foundation
import OneTimeCodes

private func fail(_ message: String) -> Never {
    fatalError("migration fuzz property violated: \(message)")
}

private func check(_ payload: Data) {
    let data = payload.base64EncodedString().addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    let decoded: GoogleAuthenticatorMigration.Decoded
    do {
        decoded = try GoogleAuthenticatorMigration.decode(["otpauth-migration://offline?data=\(data)"])
    } catch {
        if error.message.isEmpty { fail("an empty error message") }
        return
    }
    if decoded.problems.contains(where: { $0.message.isEmpty }) { fail("a problem without a message") }
    guard !decoded.accounts.isEmpty else { return }
    do {
        let again = try GoogleAuthenticatorMigration.decode(try GoogleAuthenticatorMigration.encode(decoded.accounts))
        if again.accounts != decoded.accounts || !again.problems.isEmpty {
            fail(
                "accounts encoded again decode differently: \(decoded.accounts) → \(again.accounts), \(again.problems)"
            )
        }
    } catch {
        fail("accounts that decoded cannot be encoded and decoded again: \(error.message)")
    }
}

/// libFuzzer calls this with each input (see main.swift).
func migrationFuzzTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    check(Data(UnsafeRawBufferPointer(start: UnsafeRawPointer(start), count: count)))
    return 0
}
