import CredentialExchangeFormat
import Foundation
import KeyportEncoding
import Testing

@testable import KeyportFormats

@Suite("Items made and changed by hand")
struct ItemBuilderTests {
    @Test("a new item's id never begins with - or _, which a command line would take for an option")
    func idsTypeable() throws {
        for _ in 0..<2000 {
            let id = Base64URL.encode(try ItemBuilder.note(title: "x", text: "y").id)
            #expect(id.first.map { $0 != "-" && $0 != "_" } == true, "\(id)")
        }
    }

    @Test("a note and a card: CXF's note and credit-card, the card's number and code concealed; bad input says what")
    func noteAndCard() throws {
        let note = try ItemBuilder.note(title: "Wi-Fi", text: "the code is 42\nand the name is home")
        guard case .note(let text) = note.credentials.first else {
            throw UnexpectedItem("no note: \(note.credentials)")
        }
        #expect(text.content.value == "the code is 42\nand the name is home" && note.title == "Wi-Fi")
        #expect(throws: ImportProblem.self) { try ItemBuilder.note(title: "x", text: "") }

        let card = try ItemBuilder.card(
            title: "Visa",
            number: "4111 1111-1111 1111",
            holder: "Alice",
            brand: "Visa",
            expiry: "4/30",
            code: "123"
        )
        guard case .creditCard(let made) = card.credentials.first else { throw UnexpectedItem("no card") }
        #expect(made.number?.value == "4111111111111111" && made.number?.fieldType == .concealedString)
        #expect(made.verificationNumber?.fieldType == .concealedString && made.expiryDate?.value == "2030-04")
        #expect(made.expiryDate?.fieldType == .yearMonth && made.fullName?.value == "Alice")
        #expect(ItemBuilder.yearMonth("2031-12") == "2031-12" && ItemBuilder.yearMonth("12/31") == "2031-12")
        for bad in ["13/30", "2030-0", "30-04", "04/2030x", ""] { #expect(ItemBuilder.yearMonth(bad) == nil, "\(bad)") }
        let refusals: [(number: String, code: String?, message: String)] = [
            ("4111", nil, "must be 8 to 19 digits"), ("4111 1111 1111 111x", nil, "must be 8 to 19 digits"),
            ("4111111111111111", "12", "3 or 4 digits"),
        ]
        for (number, code, message) in refusals {
            #expect {
                try ItemBuilder.card(title: "x", number: number, holder: nil, brand: nil, expiry: nil, code: code)
            } throws: { "\($0)".contains(message) }
        }
        #expect {
            try ItemBuilder.card(
                title: "x",
                number: "4111111111111111",
                holder: nil,
                brand: nil,
                expiry: "May",
                code: nil
            )
        } throws: { "\($0)".contains("expiry must be YYYY-MM or MM/YY, not 'May'") }
    }

    @Test("an edit changes only what it names: the id, other credentials, fields' ids and unknown members stay")
    func editKeepsTheRest() throws {
        let json = #"""
            {"id": "AQIDBA", "creationAt": 1700000000, "modifiedAt": 1700000000, "title": "Example",
             "scope": {"urls": ["https://example.com/"], "androidApps": []},
             "credentials": [
               {"type": "basic-auth", "username": {"id": "dQ", "fieldType": "string", "value": "alice", "x-field": 1},
                "password": {"fieldType": "concealed-string", "value": "old"}, "x-login": true},
               {"type": "totp", "secret": "JBSWY3DPEHPK3PXP", "period": 30, "digits": 6, "algorithm": "sha1"},
               {"type": "custom-fields", "fields": [{"fieldType": "concealed-string", "value": "otpauth://hotp/x?secret=JBSWY3DPEHPK3PXP&counter=1", "label": "otpauth"},
                                                    {"fieldType": "string", "value": "kept", "label": "Other"}]},
               {"type": "note", "content": {"fieldType": "string", "value": "old note"}}
             ],
             "x-item": [1, 2]}
            """#
        let item = try CXF.Decoder().decode(CXF.Part<CXF.Item>.object, from: Array(json.utf8))
        var change = ItemEdit()
        #expect(change.isEmpty)
        change.title = "Example (work)"
        change.password = "new"
        change.otp = "otpauth://totp/Example:alice?secret=GEZDGNBVGY3TQOJQ&digits=8"
        change.notes = ""
        let edited = try change.applied(to: item, at: 1_800_000_000)
        #expect(edited.id == item.id && edited.creationAt == 1_700_000_000 && edited.modifiedAt == 1_800_000_000)
        #expect(edited.title == "Example (work)" && edited.scope == item.scope)
        let text = String(decoding: edited.json, as: UTF8.self)
        for kept in [#""x-item":[1,2]"#, #""x-login":true"#, #""x-field":1"#, #""id":"dQ""#, #""value":"kept""#] {
            #expect(text.contains(kept), "\(kept) in \(text)")
        }
        #expect(
            !text.contains("old note") && !text.contains("counter=1") && !text.contains("JBSWY3DPEHPK3PXP"),
            "\(text)"
        )
        var totps: [CXF.TOTP] = []
        for case .totp(let totp) in edited.credentials { totps.append(totp) }
        #expect(totps.count == 1 && totps.first?.secret == "GEZDGNBVGY3TQOJQ" && totps.first?.digits == 8)
        guard case .basicAuth(let login) = edited.credentials.first else { throw UnexpectedItem("the login moved") }
        #expect(login.password?.value == "new" && login.username?.value == "alice")

        var unreadable = ItemEdit()
        unreadable.otp = "not base32 !"
        #expect(throws: ImportProblem.self) { try unreadable.applied(to: item, at: 0) }
        var none = ItemEdit()
        none.urls = []
        none.username = ""
        let bare = try none.applied(to: item, at: 0)
        guard case .basicAuth(let noUser) = bare.credentials.first else { throw UnexpectedItem("the login went") }
        #expect(bare.scope == nil && noUser.username == nil && noUser.password?.value == "old")
    }

    @Test("a password changed is kept in the item's history; with two logins, the one named changes")
    func passwordHistory() throws {
        var item = try ItemBuilder.login(
            title: "Shared",
            urls: ["https://example.com"],
            username: "alice",
            password: "pA",
            otp: nil,
            notes: nil
        )
        item.credentials.append(
            .basicAuth(
                CXF.BasicAuth(
                    username: CXF.EditableField(fieldType: .string, value: "bob"),
                    password: CXF.EditableField(fieldType: .concealedString, value: "pB")
                )
            )
        )
        var edit = ItemEdit()
        edit.login = "bob"
        edit.password = "pB2"
        let edited = try edit.applied(to: item, at: 1_800_000_000)
        let logins = edited.credentials.compactMap { credential -> (String?, String?)? in
            guard case .basicAuth(let auth) = credential else { return nil }
            return (auth.username?.value, auth.password?.value)
        }
        #expect(logins.map(\.0) == ["alice", "bob"] && logins.map(\.1) == ["pA", "pB2"])
        let history = edited.credentials.compactMap { credential -> CXF.CustomFields? in
            guard case .customFields(let group) = credential, group.label == ItemEdit.passwordHistory else {
                return nil
            }
            return group
        }
        #expect(history.first?.fields.map(\.value) == ["pB"])
        #expect(history.first?.fields.first?.fieldType == .concealedString)
        #expect(history.first?.fields.first?.label == "replaced 2027-01-15T08:00:00Z")
        // The same password again keeps no history.
        #expect(try edit.applied(to: edited, at: 1_800_000_100).credentials.count == edited.credentials.count)
    }
}

private struct UnexpectedItem: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
