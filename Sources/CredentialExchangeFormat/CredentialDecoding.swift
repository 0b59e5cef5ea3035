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

    /// The `seen` bit of a credential's `type` member, which may not repeat either.
    static let typeBit = 63

    /// A credential type described by a ``MemberSchema`` table.
    mutating func schemaCredential<C: SchemaCredential>() throws(ScanFailure) -> C {
        let mark = pendingUnknown.count
        var c = C.blank
        let members = C.members
        var seen: UInt64 = 0
        var have: UInt64 = 0
        try s.enterObject()
        var first = true
        keys: while try s.nextKey(&first) {
            if s.keyIs("type") {
                _ = try claim(Self.typeBit, &seen)
                try s.skipValue()
                continue
            }
            for index in members.indices where s.keyIs(members[index].key) {
                _ = try claim(index, &seen)
                let member = members[index]
                switch member.kind {
                case .field(let keyPath, let expected):
                    c[keyPath: keyPath] = try field(member.key, expected: expected)
                case .requiredField(let keyPath, let expected):
                    if let v = try field(member.key, expected: expected) {
                        c[keyPath: keyPath] = v
                        have |= 1 << index
                    }
                case .string(let keyPath):
                    c[keyPath: keyPath] = try stringValue()
                case .requiredString(let keyPath):
                    if let v = try stringValue() {
                        c[keyPath: keyPath] = v
                        have |= 1 << index
                    }
                case .requiredBytes(let keyPath):
                    if let v = try bytesValue(isID: false) {
                        c[keyPath: keyPath] = v
                        have |= 1 << index
                    }
                }
                continue keys
            }
            try keepUnknown()
        }
        for index in members.indices where members[index].kind.isRequired && have & (1 << index) == 0 {
            throw .malformed("lacks a usable '\(members[index].key)'")
        }
        c.unknownMembers = takeUnknown(since: mark)
        return c
    }

    /// Throws for each member of `names` (bit, name) that `have` lacks.
    private func requireAll(_ have: UInt64, _ names: [(Int, String)], _ what: String = "") throws(ScanFailure) {
        for (bit, name) in names where have & (1 << bit) == 0 {
            throw .malformed("\(what)lacks a usable '\(name)'")
        }
    }

    // Inside a credential, `claim` throws on a repeat and the readers throw on a value they cannot
    // read, so each reader below only records which required members it got (`have`).

    mutating func passkey() throws(ScanFailure) -> CXF.Passkey {
        let mark = pendingUnknown.count
        var p = CXF.Passkey(
            credentialId: Data(),
            rpId: "",
            username: "",
            userDisplayName: "",
            userHandle: Data(),
            key: Data()
        )
        var seen: UInt64 = 0
        var have: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("type") {
                _ = try claim(Self.typeBit, &seen)
                try s.skipValue()
            } else if s.keyIs("credentialId") {
                _ = try claim(0, &seen)
                if let v = try bytesValue(isID: false) {
                    p.credentialId = v
                    have |= 1 << 0
                }
            } else if s.keyIs("rpId") {
                _ = try claim(1, &seen)
                if let v = try stringValue() {
                    p.rpId = v
                    have |= 1 << 1
                }
            } else if s.keyIs("username") {
                _ = try claim(2, &seen)
                if let v = try stringValue() {
                    p.username = v
                    have |= 1 << 2
                }
            } else if s.keyIs("userDisplayName") {
                _ = try claim(3, &seen)
                if let v = try stringValue() {
                    p.userDisplayName = v
                    have |= 1 << 3
                }
            } else if s.keyIs("userHandle") {
                _ = try claim(4, &seen)
                if let v = try bytesValue(isID: false) {
                    p.userHandle = v
                    have |= 1 << 4
                }
            } else if s.keyIs("key") {
                _ = try claim(5, &seen)
                if let v = try bytesValue(isID: false) {
                    p.key = v
                    have |= 1 << 5
                }
            } else if s.keyIs("fido2Extensions") {
                _ = try claim(6, &seen)
                p.fido2Extensions = try object("fido2Extensions", { d throws(ScanFailure) in try d.fido2Extensions() })
            } else {
                try keepUnknown()
            }
        }
        try requireAll(
            have,
            [(0, "credentialId"), (1, "rpId"), (2, "username"), (3, "userDisplayName"), (4, "userHandle"), (5, "key")]
        )
        p.unknownMembers = takeUnknown(since: mark)
        return p
    }

    mutating func fido2Extensions() throws(ScanFailure) -> CXF.FIDO2Extensions {
        let mark = pendingUnknown.count
        var e = CXF.FIDO2Extensions()
        var seen: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("hmacCredentials") {
                _ = try claim(0, &seen)
                e.hmacCredentials = try object("hmacCredentials", { d throws(ScanFailure) in try d.hmacCredentials() })
            } else if s.keyIs("credBlob") {
                _ = try claim(1, &seen)
                e.credBlob = try bytesValue(isID: false)
            } else if s.keyIs("largeBlob") {
                _ = try claim(2, &seen)
                e.largeBlob = try object("largeBlob", { d throws(ScanFailure) in try d.largeBlob() })
            } else if s.keyIs("payments") {
                _ = try claim(3, &seen)
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
        var have: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("algorithm") {
                _ = try claim(0, &seen)
                if let v = try stringValue() {
                    h.algorithm = v
                    have |= 1 << 0
                }
            } else if s.keyIs("credWithUV") {
                _ = try claim(1, &seen)
                if let v = try bytesValue(isID: false) {
                    h.credWithUV = v
                    have |= 1 << 1
                }
            } else if s.keyIs("credWithoutUV") {
                _ = try claim(2, &seen)
                if let v = try bytesValue(isID: false) {
                    h.credWithoutUV = v
                    have |= 1 << 2
                }
            } else {
                try keepUnknown()
            }
        }
        try requireAll(have, [(0, "algorithm"), (1, "credWithUV"), (2, "credWithoutUV")], "has hmacCredentials that ")
        h.unknownMembers = takeUnknown(since: mark)
        return h
    }

    mutating func largeBlob() throws(ScanFailure) -> CXF.FIDO2Extensions.LargeBlob {
        let mark = pendingUnknown.count
        var b = CXF.FIDO2Extensions.LargeBlob(uncompressedSize: 0, data: Data())
        var seen: UInt64 = 0
        var have: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("uncompressedSize") {
                _ = try claim(0, &seen)
                if let v = try unsignedValue(UInt64.self) {
                    b.uncompressedSize = v
                    have |= 1 << 0
                }
            } else if s.keyIs("data") {
                _ = try claim(1, &seen)
                if let v = try bytesValue(isID: false) {
                    b.data = v
                    have |= 1 << 1
                }
            } else {
                try keepUnknown()
            }
        }
        try requireAll(have, [(0, "uncompressedSize"), (1, "data")], "has a largeBlob that ")
        b.unknownMembers = takeUnknown(since: mark)
        return b
    }

    mutating func totp() throws(ScanFailure) -> CXF.TOTP {
        let mark = pendingUnknown.count
        var t = CXF.TOTP(secret: "")
        var seen: UInt64 = 0
        var have: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("type") {
                _ = try claim(Self.typeBit, &seen)
                try s.skipValue()
            } else if s.keyIs("secret") {
                _ = try claim(0, &seen)
                if let v = try stringValue() {
                    t.secret = v
                    have |= 1 << 0
                }
            } else if s.keyIs("period") {
                _ = try claim(1, &seen)
                if let v = try unsignedValue(UInt32.self) {
                    t.period = v
                    have |= 1 << 1
                }
            } else if s.keyIs("digits") {
                _ = try claim(2, &seen)
                if let v = try unsignedValue(UInt32.self) {
                    t.digits = v
                    have |= 1 << 2
                }
            } else if s.keyIs("algorithm") {
                _ = try claim(3, &seen)
                guard let name = try stringValue() else { continue }
                have |= 1 << 3
                // Exporters write the names in either case.
                guard let algorithm = CXF.TOTP.Algorithm(rawValue: name.lowercased()) else {
                    throw .unsupported("uses the algorithm '\(name)', which CXF 1.0 does not define")
                }
                t.algorithm = algorithm
            } else if s.keyIs("username") {
                _ = try claim(4, &seen)
                t.username = try stringValue()
            } else if s.keyIs("issuer") {
                _ = try claim(5, &seen)
                t.issuer = try stringValue()
            } else {
                try keepUnknown()
            }
        }
        try requireAll(have, [(0, "secret")])
        reportMissing(have, Self.totpRequired)
        t.unknownMembers = takeUnknown(since: mark)
        return t
    }

    mutating func file() throws(ScanFailure) -> CXF.File {
        let mark = pendingUnknown.count
        var f = CXF.File(id: Data(), name: "", decryptedSize: 0, integrityHash: Data())
        var seen: UInt64 = 0
        var have: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("type") {
                _ = try claim(Self.typeBit, &seen)
                try s.skipValue()
            } else if s.keyIs("id") {
                _ = try claim(0, &seen)
                if let v = try bytesValue(isID: true) {
                    f.id = v
                    have |= 1 << 0
                }
            } else if s.keyIs("name") {
                _ = try claim(1, &seen)
                if let v = try stringValue() {
                    f.name = v
                    have |= 1 << 1
                }
            } else if s.keyIs("decryptedSize") {
                _ = try claim(2, &seen)
                if let v = try unsignedValue(UInt64.self) {
                    f.decryptedSize = v
                    have |= 1 << 2
                }
            } else if s.keyIs("integrityHash") {
                _ = try claim(3, &seen)
                if let v = try bytesValue(isID: false) {
                    f.integrityHash = v
                    have |= 1 << 3
                }
            } else {
                try keepUnknown()
            }
        }
        try requireAll(have, [(0, "id"), (1, "name"), (2, "decryptedSize"), (3, "integrityHash")])
        f.unknownMembers = takeUnknown(since: mark)
        return f
    }

    mutating func customFields() throws(ScanFailure) -> CXF.CustomFields {
        let mark = pendingUnknown.count
        var c = CXF.CustomFields(fields: [])
        var seen: UInt64 = 0
        var have: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("type") {
                _ = try claim(Self.typeBit, &seen)
                try s.skipValue()
            } else if s.keyIs("fields") {
                _ = try claim(0, &seen)
                if let v = try objectArray("fields", { d throws(ScanFailure) in try d.fieldObject(expected: .string) })
                {
                    c.fields = v
                    have |= 1 << 0
                }
            } else if s.keyIs("id") {
                _ = try claim(1, &seen)
                c.id = try bytesValue(isID: true)
            } else if s.keyIs("label") {
                _ = try claim(2, &seen)
                c.label = try stringValue()
            } else if s.keyIs("extensions") {
                _ = try claim(3, &seen)
                c.extensions = try extensions()
            } else {
                try keepUnknown()
            }
        }
        if have & 1 == 0 { throw .malformed("lacks a usable 'fields' array") }
        c.unknownMembers = takeUnknown(since: mark)
        return c
    }

    mutating func itemReference() throws(ScanFailure) -> CXF.ItemReference {
        let mark = pendingUnknown.count
        var r = CXF.ItemReference(reference: CXF.LinkedItem(item: Data()))
        var seen: UInt64 = 0
        var have: UInt64 = 0
        try s.enterObject()
        var first = true
        while try s.nextKey(&first) {
            if s.keyIs("type") {
                _ = try claim(Self.typeBit, &seen)
                try s.skipValue()
            } else if s.keyIs("reference") {
                _ = try claim(0, &seen)
                if let v = try object("reference", { d throws(ScanFailure) in try d.linkedItem() }) {
                    r.reference = v
                    have |= 1 << 0
                }
            } else {
                try keepUnknown()
            }
        }
        if have & 1 == 0 { throw .malformed("lacks a usable 'reference'") }
        r.unknownMembers = takeUnknown(since: mark)
        return r
    }
}
