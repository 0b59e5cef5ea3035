import AuthenticationServices
import CredentialExchangeFormat
import Foundation
import Testing

/// An export built with Apple's initialisers that uses every credential case, every field type and
/// every optional member. Key bytes are arbitrary: conversion does not look inside them.
enum Sample {
    /// Bytes whose base64url, `-----_8`, has `-` and `_` (base64 would have `+`, `/` and padding).
    static let awkwardBytes = Data([0xFB, 0xEF, 0xBE, 0xFB, 0xFF])

    static func field(
        _ value: String,
        _ type: ASImportableEditableField.FieldType = .string,
        id: String
    ) -> ASImportableEditableField {
        ASImportableEditableField(id: Data(id.utf8), fieldType: type, value: value, label: "label of \(id)")
    }

    /// RFC 6238's test secret, "12345678901234567890", whose Base32 is `GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ`.
    static let totpSecret = Data("12345678901234567890".utf8)

    static let fido2Extensions = ASImportableFIDO2Extensions(
        hmacCredentials: ASImportableFIDO2HMACCredential(
            algorithm: .hmacSHA256,
            credentialWithUV: Data(repeating: 0xA1, count: 32),
            credentialWithoutUV: Data(repeating: 0xB2, count: 32)
        ),
        largeBlob: ASImportableFIDO2LargeBlob(uncompressedSize: 100, data: Data([0x78, 0x9C, 0x01, 0x02]))
    )

    static let credentials: [ASImportableCredential] = [
        .address(
            .init(
                streetAddress: field("1 Main St\nFlat 2", id: "street"),
                postalCode: field("94016", id: "postal"),
                city: field("San Francisco", id: "city"),
                territory: field("US-CA", .subdivisionCode, id: "territory"),
                country: field("US", .countryCode, id: "country"),
                telephone: field("+1 555 0100", id: "tel")
            )
        ),
        .apiKey(
            .init(
                key: field("sk_live_123", .concealedString, id: "apikey"),
                userName: field("svc", id: "apiuser"),
                keyType: field("bearer", id: "keytype"),
                url: field("https://api.example.com", id: "apiurl"),
                validFrom: field("2024-01-01", .date, id: "apifrom"),
                expiryDate: field("2026-01-01", .date, id: "apito")
            )
        ),
        .basicAuthentication(
            .init(
                userName: field("alice@example.com", .email, id: "user"),
                password: field("hunter2", .concealedString, id: "pw")
            )
        ),
        .creditCard(
            .init(
                number: field("4111111111111111", .concealedString, id: "ccnum"),
                fullName: field("Alice Doe", id: "ccname"),
                cardType: field("Visa", id: "cctype"),
                verificationNumber: field("123", .concealedString, id: "cvv"),
                pin: field("0000", .concealedString, id: "pin"),
                expiryDate: field("2030-12", .yearMonth, id: "ccexp"),
                validFrom: field("2025-01", .yearMonth, id: "ccfrom")
            )
        ),
        .customFields(
            .init(
                id: Data("custom".utf8),
                label: "Extra",
                fields: [field("42", .number, id: "num"), field("true", .boolean, id: "bool"), field("x", id: "plain")]
            )
        ),
        .driversLicense(
            .init(
                fullName: field("Alice Doe", id: "dlname"),
                birthDate: field("1990-01-01", .date, id: "dlbirth"),
                issueDate: field("2020-01-01", .date, id: "dlissue"),
                expiryDate: field("2030-01-01", .date, id: "dlexp"),
                issuingAuthority: field("DMV", id: "dlauth"),
                territory: field("US-CA", .subdivisionCode, id: "dlterr"),
                country: field("US", .countryCode, id: "dlcountry"),
                licenseNumber: field("D123", id: "dlnum"),
                licenseClass: field("C", id: "dlclass")
            )
        ),
        .generatedPassword(.init(password: "G3n3r4ted!")),
        .identityDocument(
            .init(
                issuingCountry: field("FR", .countryCode, id: "idcountry"),
                documentNumber: field("X1", id: "iddoc"),
                identificationNumber: field("N1", id: "idnum"),
                nationality: field("French", id: "idnat"),
                fullName: field("Alice Doe", id: "idname"),
                birthDate: field("1990-01-01", .date, id: "idbirth"),
                birthPlace: field("Paris", id: "idplace"),
                sex: field("F", id: "idsex"),
                issueDate: field("2020-01-01", .date, id: "idissue"),
                expiryDate: field("2030-01-01", .date, id: "idexp"),
                issuingAuthority: field("Préfecture", id: "idauth")
            )
        ),
        .itemReference(
            .init(reference: ASImportableLinkedItem(item: Data("item-2".utf8), account: Data("acct-2".utf8)))
        ),
        .note(.init(content: field("line one\nline two \"quoted\" é中", id: "note"))),
        .passkey(
            .init(
                credentialID: awkwardBytes,
                relyingPartyIdentifier: "example.com",
                userName: "alice",
                userDisplayName: "Alice Doe",
                userHandle: Data([0, 1, 2, 3]),
                key: Data(repeating: 0x30, count: 67),
                fido2Extensions: fido2Extensions
            )
        ),
        .passport(
            .init(
                issuingCountry: field("DE", .countryCode, id: "ppcountry"),
                passportType: field("P", id: "pptype"),
                passportNumber: field("C01X00T47", id: "ppnum"),
                nationalIdentificationNumber: field("NI1", id: "ppni"),
                nationality: field("German", id: "ppnat"),
                fullName: field("Alice Doe", id: "ppname"),
                birthDate: field("1990-01-01", .date, id: "ppbirth"),
                birthPlace: field("Berlin", id: "ppplace"),
                sex: field("F", id: "ppsex"),
                issueDate: field("2020-01-01", .date, id: "ppissue"),
                expiryDate: field("2030-01-01", .date, id: "ppexp"),
                issuingAuthority: field("Berlin", id: "ppauth")
            )
        ),
        .personName(
            .init(
                title: field("Dr.", id: "title"),
                given: field("Alice", id: "given"),
                givenInformal: field("Ali", id: "informal"),
                given2: field("Beth", id: "given2"),
                surnamePrefix: field("van", id: "prefix"),
                surname: field("Doe", id: "surname"),
                surname2: field("Roe", id: "surname2"),
                credentials: field("PhD", id: "creds"),
                generation: field("Jr.", id: "gen")
            )
        ),
        .sshKey(
            .init(
                keyType: "ssh-ed25519",
                privateKey: Data(repeating: 0x04, count: 48),
                keyComment: "alice@laptop",
                creationDate: field("2024-05-01", .date, id: "sshmade"),
                expiryDate: field("2027-05-01", .date, id: "sshexp"),
                keyGenerationSource: field("ssh-keygen", id: "sshsrc")
            )
        ),
        .totp(
            .init(
                secret: totpSecret,
                period: 30,
                digits: 8,
                userName: "alice",
                algorithm: .sha256,
                issuer: "Example"
            )
        ),
        .wifi(
            .init(
                ssid: field("Home", id: "ssid"),
                networkSecurityType: field("wpa3-personal", .wifiNetworkSecurityType, id: "sec"),
                passphrase: field("correct horse", .concealedString, id: "pass"),
                hidden: field("false", .boolean, id: "hidden")
            )
        ),
    ]

    static let item = ASImportableItem(
        id: awkwardBytes,
        created: Date(timeIntervalSince1970: 1_700_000_000),
        lastModified: Date(timeIntervalSince1970: 1_700_000_100),
        title: "Everything",
        subtitle: "all cases",
        favorite: true,
        scope: ASImportableCredentialScope(
            urls: [URL(string: "https://example.com/login")!, URL(string: "https://example.org")!],
            androidApps: [
                .init(
                    bundleID: "com.example.app",
                    certificate: .init(fingerprint: Data(repeating: 0x06, count: 32), hashAlgorithm: "sha256"),
                    name: "Example"
                ),
                .init(bundleID: "com.example.other", certificate: nil, name: nil),
            ]
        ),
        credentials: credentials,
        tags: ["work", "email"],
        extensions: [
            .shared(
                .init(accessors: [
                    .init(
                        type: .user,
                        accountID: Data("bob".utf8),
                        name: "Bob",
                        permissions: [.read, .readSecret, .update, .create, .delete, .share, .manage]
                    ),
                    .init(type: .group, accountID: Data("team".utf8), name: "Team", permissions: [.read]),
                ])
            )
        ]
    )

    /// A second item made with the 26.0 initialiser and a passkey made with the 26.0 initialiser.
    static let plainItem = ASImportableItem(
        id: Data("item-2".utf8),
        created: Date(timeIntervalSince1970: 1_600_000_000),
        lastModified: Date(timeIntervalSince1970: 1_600_000_000),
        title: "Plain",
        credentials: [
            .passkey(
                .init(
                    credentialID: Data("cred".utf8),
                    relyingPartyIdentifier: "example.net",
                    userName: "",
                    userDisplayName: "",
                    userHandle: Data("handle".utf8),
                    key: Data([1, 2, 3])
                )
            )
        ]
    )

    static let collection = ASImportableCollection(
        id: Data("col-1".utf8),
        created: Date(timeIntervalSince1970: 1_690_000_000),
        lastModified: Date(timeIntervalSince1970: 1_690_000_500),
        title: "Work",
        subtitle: "Job",
        items: [
            ASImportableLinkedItem(item: awkwardBytes),
            ASImportableLinkedItem(item: Data("item-2".utf8), account: Data("acct-2".utf8)),
        ],
        subcollections: [
            ASImportableCollection(
                id: Data("col-2".utf8),
                created: nil,
                lastModified: nil,
                title: "Nested",
                items: [ASImportableLinkedItem(item: Data("item-2".utf8))],
                subcollections: [
                    ASImportableCollection(
                        id: Data("col-3".utf8),
                        created: nil,
                        lastModified: nil,
                        title: "Deeper",
                        items: []
                    )
                ]
            )
        ]
    )

    static let export = ASExportedCredentialData(
        accounts: [
            ASImportableAccount(
                id: Data("acct-1".utf8),
                userName: "alice",
                email: "alice@example.com",
                fullName: "Alice Doe",
                collections: [collection],
                items: [item]
            ),
            ASImportableAccount(
                id: Data("acct-2".utf8),
                userName: "",
                email: "",
                collections: [],
                items: [plainItem]
            ),
        ],
        formatVersion: .v1,
        exporterRelyingPartyIdentifier: "exporter.example",
        exporterDisplayName: "Example Exporter",
        timestamp: Date(timeIntervalSince1970: 1_731_000_000)
    )

    static var jsonEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }

    static var jsonDecoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }

    /// A fixture of the CredentialExchangeFormat tests, read from the source tree (this target has no
    /// resources of its own).
    static func cxfFixture(_ name: String) throws -> Data {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("CredentialExchangeFormatTests/Fixtures/\(name)")
        return try Data(contentsOf: url)
    }
}
