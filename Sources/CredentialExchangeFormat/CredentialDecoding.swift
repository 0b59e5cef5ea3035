import struct Foundation.Data

extension DocumentDecoder {
    static let totpRequired = RequiredMembers([
        (1, "period", "30 seconds is assumed"),
        (2, "digits", "6 digits are assumed"),
        (3, "algorithm", "sha1 is assumed"),
    ])

    /// One credential. The `type` is found first (it need not be the first member); a credential
    /// whose type is unknown, or that cannot be typed, is kept verbatim.
    mutating func credential() throws(ScanFailure) -> CXF.Credential {
        let start = s.pos
        let depth = s.depth
        let diagnosticsMark = diagnostics.count
        let unknownMark = pendingUnknown.count
        let pathMark = path.count
        let type = try peekString("type")
        do throws(ScanFailure) {
            switch type {
            case "basic-auth": return .basicAuth(try schemaCredential())
            case "passkey": return .passkey(try passkey())
            case "totp": return .totp(try totp())
            case "note": return .note(try schemaCredential())
            case "file": return .file(try file())
            case "credit-card": return .creditCard(try schemaCredential())
            case "address": return .address(try schemaCredential())
            case "api-key": return .apiKey(try schemaCredential())
            case "drivers-license": return .driversLicense(try schemaCredential())
            case "identity-document": return .identityDocument(try schemaCredential())
            case "passport": return .passport(try schemaCredential())
            case "person-name": return .personName(try schemaCredential())
            case "generated-password": return .generatedPassword(try schemaCredential())
            case "ssh-key": return .sshKey(try schemaCredential())
            case "wifi": return .wifi(try schemaCredential())
            case "custom-fields": return .customFields(try customFields())
            case "item-reference": return .itemReference(try itemReference())
            case nil:
                let object = try jsonValue(member: nil)
                report(.error, .malformedCredential, "a credential has no 'type'; it is kept as it was")
                return .unrecognized(CXF.UnrecognizedCredential(object: object, reason: "no type"))
            case let other?:
                let object = try jsonValue(member: nil)
                report(
                    .warning, .unknownCredentialType,
                    "the credential type '\(other)' is not part of CXF 1.0; it is kept as it was")
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
            diagnostics.removeSubrange(diagnosticsMark...)
            pendingUnknown.removeSubrange(unknownMark...)
            path.removeSubrange(pathMark...)
            let object = try jsonValue(member: nil)
            report(severity, code, "this \(type ?? "") credential \(reason); it is kept as it was")
            return .unrecognized(CXF.UnrecognizedCredential(object: object, reason: reason))
        }
    }

    /// A credential type described by a ``MemberSchema`` table.
    mutating func schemaCredential<C: SchemaCredential>() throws(ScanFailure) -> C {
        let mark = pendingUnknown.count
        var c = C.blank
        let members = C.members
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        keys: while try s.nextKey(&first) {
            if s.keyIs("type") {
                try s.skipValue()
                continue
            }
            for index in members.indices where s.keyIs(members[index].key) {
                note(index, &seen)
                let member = members[index]
                switch member.kind {
                case .field(let keyPath, let expected):
                    c[keyPath: keyPath] = try field(member.key, expected: expected)
                case .requiredField(let keyPath, let expected):
                    if let v = try field(member.key, expected: expected) { c[keyPath: keyPath] = v } else { seen &= ~(1 << index) }
                case .string(let keyPath):
                    c[keyPath: keyPath] = try stringValue()
                case .requiredString(let keyPath):
                    if let v = try stringValue() { c[keyPath: keyPath] = v } else { seen &= ~(1 << index) }
                case .requiredBytes(let keyPath):
                    if let v = try bytesValue(isID: false) { c[keyPath: keyPath] = v } else { seen &= ~(1 << index) }
                }
                continue keys
            }
            try keepUnknown()
        }
        for index in members.indices where members[index].kind.isRequired && seen & (1 << index) == 0 {
            throw .malformed("lacks a usable '\(members[index].key)'")
        }
        c.unknownMembers = takeUnknown(since: mark)
        return c
    }

    mutating func passkey() throws(ScanFailure) -> CXF.Passkey {
        let mark = pendingUnknown.count
        var p = CXF.Passkey(credentialId: Data(), rpId: "", username: "", userDisplayName: "", userHandle: Data(), key: Data())
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("type") {
                try s.skipValue()
            } else if s.keyIs("credentialId") {
                if let v = try bytesValue(isID: false) { p.credentialId = v; note(0, &seen) }
            } else if s.keyIs("rpId") {
                if let v = try stringValue() { p.rpId = v; note(1, &seen) }
            } else if s.keyIs("username") {
                if let v = try stringValue() { p.username = v; note(2, &seen) }
            } else if s.keyIs("userDisplayName") {
                if let v = try stringValue() { p.userDisplayName = v; note(3, &seen) }
            } else if s.keyIs("userHandle") {
                if let v = try bytesValue(isID: false) { p.userHandle = v; note(4, &seen) }
            } else if s.keyIs("key") {
                if let v = try bytesValue(isID: false) { p.key = v; note(5, &seen) }
            } else if s.keyIs("fido2Extensions") {
                p.fido2Extensions = try object("fido2Extensions", { d throws(ScanFailure) in try d.fido2Extensions() })
            } else {
                try keepUnknown()
            }
        }
        for (bit, name) in [(0, "credentialId"), (1, "rpId"), (2, "username"), (3, "userDisplayName"), (4, "userHandle"), (5, "key")]
        where seen & (1 << bit) == 0 {
            throw .malformed("lacks a usable '\(name)'")
        }
        p.unknownMembers = takeUnknown(since: mark)
        return p
    }

    mutating func fido2Extensions() throws(ScanFailure) -> CXF.FIDO2Extensions {
        let mark = pendingUnknown.count
        var e = CXF.FIDO2Extensions()
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("hmacCredentials") {
                e.hmacCredentials = try object("hmacCredentials", { d throws(ScanFailure) in try d.hmacCredentials() })
            } else if s.keyIs("credBlob") {
                e.credBlob = try bytesValue(isID: false)
            } else if s.keyIs("largeBlob") {
                e.largeBlob = try object("largeBlob", { d throws(ScanFailure) in try d.largeBlob() })
            } else if s.keyIs("payments") {
                e.payments = try boolValue()
            } else {
                try keepUnknown()
            }
        }
        e.unknownMembers = takeUnknown(since: mark)
        return e
    }

    mutating func hmacCredentials() throws(ScanFailure) -> CXF.FIDO2Extensions.HMACCredentials {
        let mark = pendingUnknown.count
        var h = CXF.FIDO2Extensions.HMACCredentials(algorithm: "", credWithUV: Data(), credWithoutUV: Data())
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("algorithm") {
                if let v = try stringValue() { h.algorithm = v; note(0, &seen) }
            } else if s.keyIs("credWithUV") {
                if let v = try bytesValue(isID: false) { h.credWithUV = v; note(1, &seen) }
            } else if s.keyIs("credWithoutUV") {
                if let v = try bytesValue(isID: false) { h.credWithoutUV = v; note(2, &seen) }
            } else {
                try keepUnknown()
            }
        }
        for (bit, name) in [(0, "algorithm"), (1, "credWithUV"), (2, "credWithoutUV")] where seen & (1 << bit) == 0 {
            throw .malformed("has hmacCredentials that lack a usable '\(name)'")
        }
        h.unknownMembers = takeUnknown(since: mark)
        return h
    }

    mutating func largeBlob() throws(ScanFailure) -> CXF.FIDO2Extensions.LargeBlob {
        let mark = pendingUnknown.count
        var b = CXF.FIDO2Extensions.LargeBlob(uncompressedSize: 0, data: Data())
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("uncompressedSize") {
                if let v = try unsignedValue(UInt64.self) { b.uncompressedSize = v; note(0, &seen) }
            } else if s.keyIs("data") {
                if let v = try bytesValue(isID: false) { b.data = v; note(1, &seen) }
            } else {
                try keepUnknown()
            }
        }
        for (bit, name) in [(0, "uncompressedSize"), (1, "data")] where seen & (1 << bit) == 0 {
            throw .malformed("has a largeBlob that lacks a usable '\(name)'")
        }
        b.unknownMembers = takeUnknown(since: mark)
        return b
    }

    mutating func totp() throws(ScanFailure) -> CXF.TOTP {
        let mark = pendingUnknown.count
        var t = CXF.TOTP(secret: "")
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("type") {
                try s.skipValue()
            } else if s.keyIs("secret") {
                if let v = try stringValue() { t.secret = v; note(0, &seen) }
            } else if s.keyIs("period") {
                if let v = try unsignedValue(UInt32.self) { t.period = v; note(1, &seen) }
            } else if s.keyIs("digits") {
                if let v = try unsignedValue(UInt32.self) { t.digits = v; note(2, &seen) }
            } else if s.keyIs("algorithm") {
                guard let name = try stringValue() else { continue }
                note(3, &seen)
                // Exporters write the names in either case.
                guard let algorithm = CXF.TOTP.Algorithm(rawValue: name.lowercased()) else {
                    throw .unsupported("uses the algorithm '\(name)', which CXF 1.0 does not define")
                }
                t.algorithm = algorithm
            } else if s.keyIs("username") {
                t.username = try stringValue()
            } else if s.keyIs("issuer") {
                t.issuer = try stringValue()
            } else {
                try keepUnknown()
            }
        }
        if seen & 1 == 0 { throw .malformed("lacks a usable 'secret'") }
        reportMissing(seen, Self.totpRequired)
        t.unknownMembers = takeUnknown(since: mark)
        return t
    }

    mutating func file() throws(ScanFailure) -> CXF.File {
        let mark = pendingUnknown.count
        var f = CXF.File(id: Data(), name: "", decryptedSize: 0, integrityHash: Data())
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("type") {
                try s.skipValue()
            } else if s.keyIs("id") {
                if let v = try bytesValue(isID: true) { f.id = v; note(0, &seen) }
            } else if s.keyIs("name") {
                if let v = try stringValue() { f.name = v; note(1, &seen) }
            } else if s.keyIs("decryptedSize") {
                if let v = try unsignedValue(UInt64.self) { f.decryptedSize = v; note(2, &seen) }
            } else if s.keyIs("integrityHash") {
                if let v = try bytesValue(isID: false) { f.integrityHash = v; note(3, &seen) }
            } else {
                try keepUnknown()
            }
        }
        for (bit, name) in [(0, "id"), (1, "name"), (2, "decryptedSize"), (3, "integrityHash")] where seen & (1 << bit) == 0 {
            throw .malformed("lacks a usable '\(name)'")
        }
        f.unknownMembers = takeUnknown(since: mark)
        return f
    }

    mutating func customFields() throws(ScanFailure) -> CXF.CustomFields {
        let mark = pendingUnknown.count
        var c = CXF.CustomFields(fields: [])
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("type") {
                try s.skipValue()
            } else if s.keyIs("fields") {
                if let v = try objectArray("fields", { d throws(ScanFailure) in try d.fieldObject(expected: .string) }) {
                    c.fields = v
                    note(0, &seen)
                }
            } else if s.keyIs("id") {
                c.id = try bytesValue(isID: true)
            } else if s.keyIs("label") {
                c.label = try stringValue()
            } else if s.keyIs("extensions") {
                c.extensions = try extensions()
            } else {
                try keepUnknown()
            }
        }
        if seen & 1 == 0 { throw .malformed("lacks a usable 'fields' array") }
        c.unknownMembers = takeUnknown(since: mark)
        return c
    }

    mutating func itemReference() throws(ScanFailure) -> CXF.ItemReference {
        let mark = pendingUnknown.count
        var r = CXF.ItemReference(reference: CXF.LinkedItem(item: Data()))
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("type") {
                try s.skipValue()
            } else if s.keyIs("reference") {
                if let v = try object("reference", { d throws(ScanFailure) in try d.linkedItem() }) {
                    r.reference = v
                    note(0, &seen)
                }
            } else {
                try keepUnknown()
            }
        }
        if seen & 1 == 0 { throw .malformed("lacks a usable 'reference'") }
        r.unknownMembers = takeUnknown(since: mark)
        return r
    }
}
