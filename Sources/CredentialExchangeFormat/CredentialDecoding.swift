import struct Foundation.Data

extension DocumentDecoder {
    /// One credential. The `type` is found first (it need not be the first member); a credential
    /// whose type is unknown, or that cannot be typed, is kept verbatim.
    mutating func credential() throws(ScanFailure) -> CXF.Credential {
        let start = s.pos
        let depth = s.depth
        let diagnosticsMark = diagnostics.mark
        let unknownMark = pendingUnknown.count
        let pathMark = path.count
        let type = try peekString("type")
        // The box that holds the payload: up to twelve field references and the unknown members.
        try spend(128)
        inCredential = true
        defer { inCredential = false }
        do throws(ScanFailure) {
            switch type {
            case "basic-auth": return .basicAuth(try object())
            case "passkey": return .passkey(try object())
            case "totp": return .totp(try object())
            case "note": return .note(try object())
            case "file": return .file(try object())
            case "credit-card": return .creditCard(try object())
            case "address": return .address(try object())
            case "api-key": return .apiKey(try object())
            case "drivers-license": return .driversLicense(try object())
            case "identity-document": return .identityDocument(try object())
            case "passport": return .passport(try object())
            case "person-name": return .personName(try object())
            case "generated-password": return .generatedPassword(try object())
            case "ssh-key": return .sshKey(try object())
            case "wifi": return .wifi(try object())
            case "custom-fields": return .customFields(try object())
            case "item-reference": return .itemReference(try object())
            case nil:
                let object = try jsonValue(member: nil)
                report(.error, .malformedCredential, "a credential has no 'type'; it is kept as it was")
                return .unrecognized(CXF.UnrecognizedCredential(object: object, reason: "no type"))
            case let other?:
                let object = try jsonValue(member: nil)
                report(
                    .warning,
                    .unknownCredentialType,
                    "the credential type '\(other)' is not part of CXF 1.0; it is kept as it was"
                )
                return .unrecognized(CXF.UnrecognizedCredential(object: object, reason: "unknown type"))
            }
        } catch {
            let (severity, code, reason): (Diagnostic.Severity, Diagnostic.Code, String)
            switch error {
            case .fatal: throw error
            case .malformed(let why): (severity, code, reason) = (.error, .malformedCredential, why)
            case .unsupported(let why): (severity, code, reason) = (.warning, .unknownCredentialType, why)
            }
            // Forget what the typed attempt found and keep the credential whole.
            s.pos = start
            s.depth = depth
            diagnostics.rewind(to: diagnosticsMark)
            pendingUnknown.removeSubrange(unknownMark...)
            path.removeSubrange(pathMark...)
            let object = try jsonValue(member: nil)
            report(severity, code, "this \(type ?? "") credential \(reason); it is kept as it was")
            return .unrecognized(CXF.UnrecognizedCredential(object: object, reason: reason))
        }
    }
}
