import CredentialExchangeFormat
import Crypto
import Foundation

/// Builds a mixed document: items cycle through all 17 credential types, with scopes, tags,
/// collections and links, in proportions like a real vault's.
enum Generator {
    static func document(items count: Int) -> CXF.Document {
        var rng = SplitMix(seed: 42)
        let p256Keys = (0..<8).map { _ in P256.Signing.PrivateKey().derRepresentation }
        let ed25519Keys = (0..<8).map { _ -> Data in
            let seed = Curve25519.Signing.PrivateKey().rawRepresentation
            return Data([
                0x30, 0x2E, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
            ]) + seed
        }
        func id(_ n: Int, _ tag: UInt8) -> Data {
            var d = Data([tag])
            withUnsafeBytes(of: UInt64(n).bigEndian) { d.append(contentsOf: $0) }
            d.append(contentsOf: (0..<7).map { _ in UInt8.random(in: 0...255, using: &rng) })
            return d
        }
        func word() -> String { words[Int.random(in: 0..<words.count, using: &rng)] }
        func field(_ type: CXF.FieldType, _ value: String) -> CXF.EditableField { .init(fieldType: type, value: value) }
        let accountID = Data("benchmark-account".utf8)
        var items: [CXF.Item] = []
        items.reserveCapacity(count)
        for n in 0..<count {
            let itemID = id(n, 1)
            let host = "\(word())\(n % 997).example.com"
            var credentials: [CXF.Credential] = []
            switch n % 17 {
            case 0:
                credentials.append(
                    .basicAuth(
                        .init(
                            username: field(.string, "\(word()).\(word())@mail.example"),
                            password: field(.concealedString, "\(word())-\(word())-\(n)!")
                        )
                    )
                )
                credentials.append(.totp(.init(secret: "JBSWY3DPEHPK3PXPJBSWY3DP", username: word(), issuer: host)))
            case 1:
                credentials.append(
                    .passkey(
                        .init(
                            credentialId: id(n, 2),
                            rpId: host,
                            username: word(),
                            userDisplayName: "\(word()) \(word())",
                            userHandle: id(n, 3),
                            key: p256Keys[n % p256Keys.count]
                        )
                    )
                )
            case 2:
                credentials.append(
                    .totp(
                        .init(secret: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", digits: 8, algorithm: .sha256, issuer: host)
                    )
                )
            case 3:
                credentials.append(
                    .note(.init(content: field(.string, (0..<20).map { _ in word() }.joined(separator: " "))))
                )
            case 4:
                credentials.append(
                    .file(
                        .init(
                            id: id(n, 4),
                            name: "\(word()).pdf",
                            decryptedSize: UInt64(n * 31 + 1),
                            integrityHash: Data(SHA256.hash(data: itemID))
                        )
                    )
                )
            case 5:
                credentials.append(
                    .creditCard(
                        .init(
                            number: field(.concealedString, "4111111111111111"),
                            fullName: field(.string, "\(word()) \(word())"),
                            cardType: field(.string, "Visa"),
                            verificationNumber: field(.concealedString, "123"),
                            expiryDate: field(.yearMonth, "2030-12")
                        )
                    )
                )
            case 6:
                credentials.append(
                    .address(
                        .init(
                            streetAddress: field(.string, "\(n) \(word()) Street"),
                            postalCode: field(.string, "94\(n % 1000)"),
                            city: field(.string, word()),
                            territory: field(.subdivisionCode, "US-CA"),
                            country: field(.countryCode, "US"),
                            tel: field(.string, "+1 555 0100")
                        )
                    )
                )
            case 7:
                credentials.append(
                    .apiKey(
                        .init(
                            key: field(.concealedString, "sk_\(itemID.base64EncodedString())"),
                            username: field(.string, word()),
                            keyType: field(.string, "bearer"),
                            url: field(.string, "https://\(host)/api"),
                            expiryDate: field(.date, "2027-06-30")
                        )
                    )
                )
            case 8:
                credentials.append(
                    .driversLicense(
                        .init(
                            fullName: field(.string, "\(word()) \(word())"),
                            birthDate: field(.date, "1990-01-31"),
                            expiryDate: field(.date, "2030-01-31"),
                            territory: field(.subdivisionCode, "US-NY"),
                            country: field(.countryCode, "US"),
                            licenseNumber: field(.string, "D\(n)")
                        )
                    )
                )
            case 9:
                credentials.append(
                    .identityDocument(
                        .init(
                            issuingCountry: field(.countryCode, "FR"),
                            documentNumber: field(.string, "X\(n)"),
                            fullName: field(.string, "\(word()) \(word())"),
                            birthDate: field(.date, "1985-07-14"),
                            expiryDate: field(.date, "2031-07-14")
                        )
                    )
                )
            case 10:
                credentials.append(
                    .passport(
                        .init(
                            issuingCountry: field(.countryCode, "DE"),
                            passportType: field(.string, "P"),
                            passportNumber: field(.string, "C\(n)"),
                            fullName: field(.string, "\(word()) \(word())"),
                            birthDate: field(.date, "1979-02-28"),
                            issueDate: field(.date, "2020-03-01"),
                            expiryDate: field(.date, "2030-03-01")
                        )
                    )
                )
            case 11:
                credentials.append(
                    .personName(
                        .init(
                            title: field(.string, "Dr"),
                            given: field(.string, word()),
                            surname: field(.string, word())
                        )
                    )
                )
            case 12: credentials.append(.generatedPassword(.init(password: "\(word())\(n)\(word())!")))
            case 13:
                let ed = n % 2 == 0
                credentials.append(
                    .sshKey(
                        .init(
                            keyType: ed ? "ssh-ed25519" : "ecdsa-sha2-nistp256",
                            privateKey: ed ? ed25519Keys[n % 8] : p256Keys[n % 8],
                            keyComment: "\(word())@\(word())",
                            creationDate: field(.date, "2024-01-01")
                        )
                    )
                )
            case 14:
                credentials.append(
                    .wifi(
                        .init(
                            ssid: field(.string, word()),
                            networkSecurityType: field(.wifiNetworkSecurityType, "wpa2-personal"),
                            passphrase: field(.concealedString, "\(word()) \(word())"),
                            hidden: field(.boolean, "false")
                        )
                    )
                )
            case 15:
                credentials.append(
                    .customFields(
                        .init(
                            label: word(),
                            fields: [
                                field(.string, word()), field(.number, "\(n)"),
                                field(.email, "\(word())@mail.example"), field(.concealedString, word()),
                            ]
                        )
                    )
                )
            default:
                credentials.append(.itemReference(.init(reference: .init(item: items.last?.id ?? itemID))))
            }
            items.append(
                CXF.Item(
                    id: itemID,
                    creationAt: 1_600_000_000 + Int64(n),
                    modifiedAt: 1_700_000_000 + Int64(n),
                    title: "\(word()) \(word())",
                    subtitle: n % 3 == 0 ? word() : nil,
                    favorite: n % 10 == 0 ? true : nil,
                    scope: n % 17 < 3 ? .init(urls: ["https://\(host)/login"]) : nil,
                    credentials: credentials,
                    tags: n % 4 == 0 ? [word(), word()] : nil
                )
            )
        }
        let collections = (0..<100).map { c in
            CXF.Collection(
                id: id(c, 5),
                title: word(),
                items: stride(from: c, to: count, by: 100).prefix(50).map { .init(item: items[$0].id) }
            )
        }
        return .header(
            CXF.Header(
                exporterRpId: "bench.example",
                exporterDisplayName: "Keyport benchmark",
                timestamp: 1_731_000_000,
                accounts: [
                    CXF.Account(
                        id: accountID,
                        username: "bench",
                        email: "bench@example.com",
                        collections: collections,
                        items: items
                    )
                ]
            )
        )
    }

    static let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima",
        "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform", "victor", "whiskey",
        "xray", "yankee", "zulu", "garden", "bank", "mail", "forum", "shop", "cloud", "router", "printer", "école",
    ]
}

/// A small deterministic generator, so every run measures the same document.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
