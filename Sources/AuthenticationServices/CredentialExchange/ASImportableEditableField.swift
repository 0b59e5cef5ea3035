import CredentialExchangeFormat
import Foundation

/// A value a person can see and edit, with its kind. The value is always text.
///
/// The description of a field whose type is ``FieldType/concealedString`` shows the value's length,
/// not the value.
public struct ASImportableEditableField: Codable, Hashable, Sendable {
    /// The field's identifier, if the exporter gave it one.
    public var id: Data?
    /// The kind of value: it says how to show and check ``value``.
    public var fieldType: ASImportableEditableField.FieldType
    /// The value, as text: `"true"`/`"false"` for a boolean, `YYYY-MM-DD` for a date, `YYYY-MM` for a
    /// year and month.
    public var value: String
    /// A label for the field, as people see it.
    public var label: String?

    /// Creates a field.
    public init(id: Data?, fieldType: ASImportableEditableField.FieldType, value: String, label: String? = nil) {
        self.id = id
        self.fieldType = fieldType
        self.value = value
        self.label = label
    }

    /// The kind of an editable field; the raw value is the CXF `fieldType` string.
    public enum FieldType: String, Codable, Hashable, Sendable {
        /// Text.
        case string
        /// Text to keep hidden, such as a password (`concealed-string`).
        case concealedString = "concealed-string"
        /// An email address.
        case email
        /// A number, as text.
        case number
        /// `"true"` or `"false"`.
        case boolean
        /// A date, `YYYY-MM-DD`.
        case date
        /// A year and month, `YYYY-MM` (`year-month`).
        case yearMonth = "year-month"
        /// The security of a Wi-Fi network: `unsecured`, `wpa-personal`, `wpa2-personal`,
        /// `wpa3-personal` or `wep` (`wifi-network-security-type`).
        case wifiNetworkSecurityType = "wifi-network-security-type"
        /// An ISO 3166-1 alpha-2 country code (`country-code`).
        ///
        /// The case name is a guess consistent with CXF: Apple's raw value is known, its case name is not.
        case countryCode = "country-code"
        /// An ISO 3166-2 subdivision code such as `US-CA` (`subdivision-code`).
        ///
        /// The case name is a guess consistent with CXF: Apple's raw value is known, its case name is not.
        case subdivisionCode = "subdivision-code"
    }
}

extension ASImportableEditableField: CustomStringConvertible, CustomDebugStringConvertible {
    /// The field with its value, unless the field is concealed: then only the value's length shows.
    public var description: String {
        let shown =
            fieldType == .concealedString ? "‹concealed, \(value.count) characters›" : value.debugDescription
        let labelled = label.map { ", label: \($0.debugDescription)" } ?? ""
        return "ASImportableEditableField(\(fieldType.rawValue): \(shown)\(labelled))"
    }

    /// The same text as `description`: debugging output shows no secret either.
    public var debugDescription: String { description }
}
