import CredentialExchangeFormat
import Crypto
import Foundation

/// Items a person makes by hand (`keyport vault add`), built as an import's entries are.
package enum ItemBuilder {
    /// A login: its title, sites, user name, password, one-time-code secret (an `otpauth://`
    /// URI or a Base32 secret) and notes, with a new random id.
    package static func login(
        title: String,
        urls: [String],
        username: String?,
        password: String?,
        otp: String?,
        notes: String?
    ) throws(ImportProblem) -> CXF.Item {
        var entry = newEntry(title: title)
        entry.urls = urls
        entry.username = username
        entry.password = password
        entry.otp = otp
        entry.notes = notes
        return try entry.item(format: .cxf)
    }

    /// A passkey made here (Keyport Vault's authenticator): an item titled and scoped to its
    /// relying party's https site, so a look-up by site finds it, holding the passkey.
    package static func passkey(_ passkey: CXF.Passkey) throws(ImportProblem) -> CXF.Item {
        var entry = newEntry(title: passkey.rpId)
        entry.urls = ["https://\(passkey.rpId)"]
        var item = try entry.item(format: .cxf)
        item.credentials.append(.passkey(passkey))
        return item
    }

    /// A secure note: a title and its text (CXF's `note`).
    package static func note(title: String, text: String) throws(ImportProblem) -> CXF.Item {
        guard !text.isEmpty else { throw ImportProblem(place: "the new note", message: "its text is empty") }
        var entry = newEntry(title: title)
        entry.notes = text
        return try entry.item(format: .cxf)
    }

    /// A payment card (CXF's `credit-card`): its number and security code (secrets), holder,
    /// brand and expiry, given as `YYYY-MM` or as printed on cards, `MM/YY`.
    package static func card(
        title: String,
        number: String,
        holder: String?,
        brand: String?,
        expiry: String?,
        code: String?
    ) throws(ImportProblem) -> CXF.Item {
        func problem(_ message: String) -> ImportProblem { ImportProblem(place: "the new card", message: message) }
        let digits = number.filter { $0 != " " && $0 != "-" }
        guard (8...19).contains(digits.count), digits.allSatisfy(\.isASCIIDigitCharacter) else {
            throw problem("its number must be 8 to 19 digits (spaces and hyphens allowed)")
        }
        if let code, !(3...4).contains(code.count) || !code.allSatisfy(\.isASCIIDigitCharacter) {
            throw problem("its security code must be 3 or 4 digits")
        }
        let month = try expiry.map { text throws(ImportProblem) in
            guard let month = yearMonth(text) else {
                throw problem("its expiry must be YYYY-MM or MM/YY, not '\(text)'")
            }
            return month
        }
        func field(_ value: String?, _ type: CXF.FieldType = .string) -> CXF.EditableField? {
            guard let value, !value.isEmpty else { return nil }
            return CXF.EditableField(fieldType: type, value: value)
        }
        var entry = newEntry(title: title)
        entry.credentials = [
            .creditCard(
                CXF.CreditCard(
                    number: field(digits, .concealedString),
                    fullName: field(holder),
                    cardType: field(brand),
                    verificationNumber: field(code, .concealedString),
                    expiryDate: field(month, .yearMonth)
                )
            )
        ]
        return try entry.item(format: .cxf)
    }

    /// `YYYY-MM`, from itself or from `MM/YY` (20YY); `nil` for anything else.
    static func yearMonth(_ text: String) -> String? {
        let parts = text.split(separator: text.contains("/") ? "/" : "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigitCharacter) }) else {
            return nil
        }
        let (year, month) = text.contains("/") ? ("20" + parts[1], parts[0]) : (String(parts[0]), parts[1])
        guard year.count == 4, let number = Int(month), (1...12).contains(number) else { return nil }
        return "\(year)-\(number < 10 ? "0" : "")\(number)"
    }

    /// An entry with a new random id, made now.
    private static func newEntry(title: String) -> Entry {
        var entry = Entry(place: "the new item")
        var id = SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) }
        // People type ids on command lines (`keyport vault show ID`), where one that begins with
        // `-` or `_` (one in 32 of random ids, in base64url) would be read as an option or be
        // awkward: the first byte's top bit cleared makes the first character A–Z or a–f, at the
        // cost of one bit of 128.
        id[0] &= 0x7F
        entry.sourceID = id
        entry.title = title
        let now = Int64(Date().timeIntervalSince1970)
        entry.created = now
        entry.modified = now
        return entry
    }
}

/// A change to an item (`keyport vault edit`): only what it names. Everything else — the id,
/// other credentials, fields' ids and labels, members and extensions Keyport does not know — stays
/// as it was.
package struct ItemEdit {
    package var title: String?
    /// The sites, in place of the item's (empty: none).
    package var urls: [String]?
    /// Which login `username` and `password` change: the one with this user name; the first
    /// when `nil` (or when none has it).
    package var login: String?
    /// The login's user name (empty: none); a login is added when the item has none.
    package var username: String?
    /// The login's password (empty: none).
    package var password: String?
    /// A one-time-code secret (an `otpauth://` URI or Base32) in place of the item's.
    package var otp: String?
    /// Remove the item's one-time-code secret.
    package var removeOTP = false
    /// The note's text, in place of the item's notes (empty: no note).
    package var notes: String?

    package init() {}

    /// Whether the edit changes nothing.
    package var isEmpty: Bool {
        title == nil && urls == nil && username == nil && password == nil && otp == nil && !removeOTP && notes == nil
    }

    /// `item` changed, modified at `now` (Unix seconds).
    ///
    /// - Throws: ``ImportProblem`` when the one-time-code secret cannot be read.
    package func applied(to item: CXF.Item, at now: Int64) throws(ImportProblem) -> CXF.Item {
        var item = item
        if let title { item.title = title }
        if let urls {
            var scope = item.scope ?? CXF.CredentialScope(urls: [])
            scope.urls = urls
            item.scope = scope.urls.isEmpty && scope.androidApps.isEmpty && scope.unknownMembers.isEmpty ? nil : scope
        }
        if username != nil || password != nil { editLogin(&item, at: now) }
        if removeOTP || otp != nil { Self.removeOTP(&item) }
        if let otp {
            // Read as an import reads one: TOTP as CXF's `totp`, HOTP and Steam as a concealed
            // `otpauth` field.
            var entry = Entry(place: "the item \(item.title)")
            entry.title = item.title
            entry.username = Self.username(of: item)
            entry.otp = otp
            item.credentials += try entry.item(format: .cxf).credentials.filter {
                if case .basicAuth = $0 { return false }
                return true
            }
        }
        if let notes {
            item.credentials.removeAll {
                if case .note = $0 { return true }
                return false
            }
            if !notes.isEmpty { item.credentials.append(.note(CXF.Note(content: CXF.EditableField(value: notes)))) }
        }
        item.modifiedAt = now
        return item
    }

    /// The label of the custom-field group earlier passwords are kept in, as Bitwarden's
    /// imports keep its password history.
    package static let passwordHistory = "Password history"

    /// Changes the first login's user name and password; a password replaced is kept, concealed,
    /// in the item's "Password history" group, labelled with when it was replaced.
    private func editLogin(_ item: inout CXF.Item, at now: Int64) {
        func set(_ field: CXF.EditableField?, to value: String?, type: CXF.FieldType) -> CXF.EditableField? {
            guard let value else { return field }
            guard !value.isEmpty else { return nil }
            var changed = field ?? CXF.EditableField(fieldType: type, value: value)
            changed.value = value
            return changed
        }
        let logins = item.credentials.indices.filter {
            if case .basicAuth = item.credentials[$0] { return true }
            return false
        }
        let index =
            logins.first {
                guard let wanted = self.login, case .basicAuth(let auth) = item.credentials[$0] else { return false }
                return auth.username?.value ?? "" == wanted
            } ?? logins.first
        var login = CXF.BasicAuth()
        if let index, case .basicAuth(let found) = item.credentials[index] { login = found }
        login.username = set(login.username, to: username, type: .string)
        let old = login.password?.value
        login.password = set(login.password, to: password, type: .concealedString)
        if let old, !old.isEmpty, old != login.password?.value {
            Self.keep(old, replacedAt: now, in: &item)
        }
        if let index {
            item.credentials[index] = .basicAuth(login)
        } else {
            item.credentials.insert(.basicAuth(login), at: 0)
        }
    }

    /// Adds `password` to the item's password history, the group made when it has none.
    private static func keep(_ password: String, replacedAt now: Int64, in item: inout CXF.Item) {
        let when = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(now)))
        let field = CXF.EditableField(fieldType: .concealedString, value: password, label: "replaced \(when)")
        for (index, credential) in item.credentials.enumerated() {
            guard case .customFields(var group) = credential, group.label == passwordHistory else { continue }
            group.fields.append(field)
            item.credentials[index] = .customFields(group)
            return
        }
        item.credentials.append(.customFields(CXF.CustomFields(label: passwordHistory, fields: [field])))
    }

    private static func username(of item: CXF.Item) -> String? {
        for case .basicAuth(let login) in item.credentials { return login.username?.value }
        return nil
    }

    /// Takes out the item's `totp` credentials and the `otpauth` fields imports keep other
    /// one-time codes in (a group left empty goes too).
    private static func removeOTP(_ item: inout CXF.Item) {
        item.credentials = item.credentials.compactMap { credential in
            switch credential {
            case .totp: return nil
            case .customFields(var custom):
                let before = custom.fields.count
                custom.fields.removeAll { $0.label == "otpauth" }
                if custom.fields.isEmpty && before > 0 { return nil }
                return .customFields(custom)
            default: return credential
            }
        }
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
