// An app that imports credentials with Apple's API only, as the documentation of
// ASCredentialImportManager shows: the launch activity's token, then importCredentials(token:).
//
// keyportd starts it when a person exports to it; run by hand, it has no activity and says so.
// It writes a summary of what arrived (counts and credential types, never a value) as one JSON
// object: to the file KEYPORT_EXAMPLE_OUTPUT names when set, else to standard output. A failed
// import is written the same way, as {"error": {"code": …, "reason": …}}.
//
// Exit status: 0 imported; 1 the import failed; 2 not launched to import.

import AuthenticationServices
import Foundation

/// What arrived, without a single credential's value.
struct Summary: Encodable {
    var exporterDisplayName: String
    var exporterRelyingPartyIdentifier: String
    var formatVersion: String
    var accounts: Int
    var items: Int
    var credentials: Int
    /// How many credentials of each type (`basicAuthentication`, `passkey`, …).
    var credentialTypes: [String: Int]
}

/// A failed import: Apple's code and the reason.
struct Failure: Encodable {
    struct Details: Encodable {
        var code: Int
        var reason: String
    }
    var error: Details
}

/// The name of `credential`'s case.
func typeName(_ credential: ASImportableCredential) -> String {
    switch credential {
    case .address: "address"
    case .apiKey: "apiKey"
    case .basicAuthentication: "basicAuthentication"
    case .creditCard: "creditCard"
    case .customFields: "customFields"
    case .driversLicense: "driversLicense"
    case .generatedPassword: "generatedPassword"
    case .identityDocument: "identityDocument"
    case .itemReference: "itemReference"
    case .note: "note"
    case .passkey: "passkey"
    case .passport: "passport"
    case .personName: "personName"
    case .sshKey: "sshKey"
    case .totp: "totp"
    case .wifi: "wifi"
    }
}

/// Writes `value` as JSON where the summary goes.
func report(_ value: some Encodable) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let json = try? encoder.encode(value) else { return }
    if let output = ProcessInfo.processInfo.environment["KEYPORT_EXAMPLE_OUTPUT"], !output.isEmpty {
        do {
            try json.write(to: URL(fileURLWithPath: output), options: .atomic)
        } catch {
            FileHandle.standardError.write(Data("ExampleImporter: cannot write \(output): \(error)\n".utf8))
        }
    } else {
        print(String(decoding: json, as: UTF8.self))
    }
}

guard let activity = NSUserActivity.launchActivity, activity.activityType == ASCredentialExchangeActivityType,
    let token = activity.userInfo?[ASCredentialImportToken] as? UUID
else {
    FileHandle.standardError.write(
        Data(
            "ExampleImporter: not launched to import credentials (keyportd starts it with KEYPORT_ACTIVITY_TYPE and KEYPORT_IMPORT_TOKEN)\n"
                .utf8
        )
    )
    exit(2)
}

do {
    let credentialData = try await ASCredentialImportManager().importCredentials(token: token)
    let items = credentialData.accounts.flatMap(\.items)
    let credentials = items.flatMap(\.credentials)
    report(
        Summary(
            exporterDisplayName: credentialData.exporterDisplayName,
            exporterRelyingPartyIdentifier: credentialData.exporterRelyingPartyIdentifier,
            formatVersion: credentialData.formatVersion.rawValue,
            accounts: credentialData.accounts.count,
            items: items.count,
            credentials: credentials.count,
            credentialTypes: credentials.reduce(into: [:]) { $0[typeName($1), default: 0] += 1 }
        )
    )
} catch {
    // As on Apple platforms: an ASAuthorizationError, the details in its userInfo.
    let error = error as NSError
    let reason = error.localizedFailureReason ?? error.localizedDescription
    report(Failure(error: Failure.Details(code: error.code, reason: reason)))
    FileHandle.standardError.write(Data("ExampleImporter: the import failed with code \(error.code): \(reason)\n".utf8))
    exit(1)
}
