// An app that exports credentials with Apple's API only, as the documentation of
// ASCredentialExportManager shows: requestExport, then exportCredentials with data in the format
// version requestExport returned.
//
// usage: ExampleExporter [CXF-FILE]
//   Exports the accounts of CXF-FILE (CXF JSON), or, without one, an account made up here.
//   Prints what it exported. Exit status: 0 exported; 1 the export failed (the error's code and
//   reason on standard error); 2 a usage error, or CXF-FILE cannot be read.

import AuthenticationServices
import Foundation

/// Writes `line` to standard error.
func complain(_ line: String) {
    FileHandle.standardError.write(Data("ExampleExporter: \(line)\n".utf8))
}

/// A random 16-byte identifier, as password managers give their accounts and items.
func randomID() -> Data {
    withUnsafeBytes(of: UUID().uuid) { Data($0) }
}

/// An account with a sign-in for example.org and a note; the values are made up.
func madeUpAccount() -> ASImportableAccount {
    let signIn = ASImportableItem(
        id: randomID(),
        title: "Example",
        scope: ASImportableCredentialScope(urls: [URL(string: "https://example.org/")!]),
        credentials: [
            .basicAuthentication(
                ASImportableCredential.BasicAuthentication(
                    userName: ASImportableEditableField(id: nil, fieldType: .string, value: "alice"),
                    password: ASImportableEditableField(id: nil, fieldType: .concealedString, value: "made-up password")
                )
            )
        ]
    )
    let note = ASImportableItem(
        id: randomID(),
        title: "A note",
        credentials: [
            .note(
                ASImportableCredential.Note(
                    content: ASImportableEditableField(
                        id: nil,
                        fieldType: .string,
                        value: "Exported by ExampleExporter."
                    )
                )
            )
        ]
    )
    return ASImportableAccount(
        id: randomID(),
        userName: "alice",
        email: "alice@example.org",
        collections: [],
        items: [signIn, note]
    )
}

/// The accounts of the CXF file at `path`, read as Apple's documentation reads CXF JSON.
func accounts(inFileAt path: String) throws -> [ASImportableAccount] {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .secondsSince1970
    return try decoder.decode(ASExportedCredentialData.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        .accounts
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count <= 1 else {
    complain("usage: ExampleExporter [CXF-FILE]")
    exit(2)
}
let accounts: [ASImportableAccount]
if let path = arguments.first {
    do {
        accounts = try accounts(inFileAt: path)
    } catch {
        complain("cannot read \(path) as CXF JSON: \(error)")
        exit(2)
    }
} else {
    accounts = [madeUpAccount()]
}

let manager = ASCredentialExportManager(presentationAnchor: ASPresentationAnchor())
do {
    let exportOptions = try await manager.requestExport()
    let credentialData = ASExportedCredentialData(
        accounts: accounts,
        formatVersion: exportOptions.formatVersion,
        exporterRelyingPartyIdentifier: "example.org",
        exporterDisplayName: "Keyport Example Exporter",
        timestamp: Date()
    )
    try await manager.exportCredentials(credentialData)
    let items = accounts.map(\.items.count).reduce(0, +)
    print("exported \(accounts.count) account(s) with \(items) item(s) in CXF \(exportOptions.formatVersion.rawValue)")
} catch {
    // As on Apple platforms: an ASAuthorizationError, the details in its userInfo.
    let error = error as NSError
    complain("the export failed with code \(error.code): \(error.localizedFailureReason ?? error.localizedDescription)")
    exit(1)
}
