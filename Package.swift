// swift-tools-version:6.2
import PackageDescription

// Package.swift reads from the bottom layer up, as docs/architecture.md draws them (and
// `scripts/check-imports` keeps them): each section is a layer, each target says what it is.

// MARK: - What other packages give Keyport, named once

let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")
let cryptoExtras = Target.Dependency.product(name: "_CryptoExtras", package: "swift-crypto")
let asn1 = Target.Dependency.product(name: "SwiftASN1", package: "swift-asn1")
let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
let nioCore = Target.Dependency.product(name: "NIOCore", package: "swift-nio")
let nioPosix = Target.Dependency.product(name: "NIOPosix", package: "swift-nio")
let nioHTTP1 = Target.Dependency.product(name: "NIOHTTP1", package: "swift-nio")
let nioEmbedded = Target.Dependency.product(name: "NIOEmbedded", package: "swift-nio")
let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
let serviceLifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let grdb = Target.Dependency.product(name: "GRDB", package: "GRDB.swift")
let httpClient = Target.Dependency.product(name: "AsyncHTTPClient", package: "async-http-client")
let nioSSL = Target.Dependency.product(name: "NIOSSL", package: "swift-nio-ssl")

/// The programs that must start fast link the standard library in.
let staticStandardLibrary: [LinkerSetting] = [.unsafeFlags(["-static-stdlib"])]

// MARK: - The bottom: the standard library and libc, and the build's own tools

let foundations: [Target] = [
    // Binary-to-text codecs (base64url, Base32), the one JSON escaper and pull reader, terminal-safe
    // text, constant-time comparison; not a product.
    .target(name: "KeyportEncoding"),
    // What Keyport's error types share (a code, a sentence, where it was made; equal by code);
    // the standard library only; not a product.
    .target(name: "KeyportErrors"),
    // The Linux calls KeyportSystem makes that Swift's Glibc module lacks (SO_PEERCRED's struct
    // ucred, SO_PEERPIDFD, pidfd_open); not a product.
    .target(name: "CKeyportSystem"),
    // KeyportSystem's part that needs only the standard library and libc (XDG base directories,
    // private directories, socket paths, the environment, sealed memory files and descriptor
    // passing), for programs that must start fast; not a product.
    .target(name: "KeyportSystemCore", dependencies: ["KeyportEncoding", "KeyportErrors", "CKeyportSystem"]),
    // What every process-level part needs (child processes, private runtime directories, XDG base
    // directories, termination signals, peer credentials and pinned processes, small concurrency
    // helpers); not a product.
    .target(name: "KeyportSystem", dependencies: ["KeyportSystemCore", "CKeyportSystem"]),
    // KeyportDomains' part that needs only the standard library: URLs read as the WHATWG URL
    // standard reads them, hosts (IDNA, IP forms), AutoFill's matching rule and the Public Suffix
    // List's rules, for the `keyport` front as well as keyportd; not a product.
    .target(name: "KeyportDomainsCore", dependencies: ["KeyportEncoding"]),
    // Which service a credential belongs to: KeyportDomainsCore (re-exported) with the Public
    // Suffix List to use (the newer of Debian's and the copy in Resources).
    .target(name: "KeyportDomains", dependencies: ["KeyportDomainsCore"], plugins: ["EmbedText"]),
    // Keys from passphrases (scrypt, PBKDF2) with caps on the parameters a file may ask for: the
    // vault's and encrypted exports'; not a product.
    .target(
        name: "KeyportCrypto",
        dependencies: ["KeyportSystemCore", "KeyportEncoding", "KeyportErrors", crypto, cryptoExtras]
    ),
    // What the build-tool plugins' programs share (reading and writing text files, Swift
    // literals); the standard library and libc only; not a product.
    .target(name: "BuildToolSupport"),
    // Writes text files into Swift source (EmbedText's tool); the standard library only, as it
    // runs in every build of the package.
    .executableTarget(name: "KeyportEmbed", dependencies: ["BuildToolSupport"]),
    // The Public Suffix List snapshot, embedded in the code of the target that reads it, so
    // installed programs need no resource bundle.
    .plugin(name: "EmbedText", capability: .buildTool(), dependencies: ["KeyportEmbed"]),
]

// MARK: - Varlink: the protocol every process boundary speaks

let varlink: [Target] = [
    // Varlink's interface definition language: definitions read and checked. What VarlinkCore and
    // the generator share; the standard library only; not a product.
    .target(name: "VarlinkIDL"),
    // VarlinkGenerate's generator, apart from its program so that tests can call it; not a
    // product.
    .target(name: "VarlinkGeneration", dependencies: ["VarlinkIDL", "BuildToolSupport"]),
    // Writes the Swift of an interface definition (the VarlinkInterfaces plugin's tool); the
    // standard library only, as it runs in every build that depends on Keyport's interfaces.
    .executableTarget(name: "VarlinkGenerate", dependencies: ["VarlinkGeneration", "BuildToolSupport"]),
    // Generates each `*.varlink` file's types, method and error names, servers' protocol and
    // embedded definition in its target's code: an interface is written once, in its definition.
    .plugin(name: "VarlinkInterfaces", capability: .buildTool(), dependencies: ["VarlinkGenerate"]),
    // Varlink's protocol without Foundation or an event loop (messages, JSON reading, interface
    // definitions, validation) and a blocking connection that also passes descriptors, for
    // clients that must start fast; not a product.
    .target(
        name: "VarlinkCore",
        dependencies: ["VarlinkIDL", "KeyportEncoding", "KeyportErrors", "KeyportSystemCore"],
        plugins: ["VarlinkInterfaces"]
    ),
    // Varlink, systemd's IPC (NUL-terminated JSON, interface definitions, introspection) on
    // swift-nio, and on a transport of its own for the calls that pass descriptors: keyportd, its
    // clients and agents speak it; not a product.
    .target(name: "Varlink", dependencies: ["VarlinkCore", "KeyportSystem", "CKeyportSystem", nioCore, nioPosix]),
]

// MARK: - keyportd's interfaces, and what both sides of them share

let interfaces: [Target] = [
    // keyportd's interfaces, each defined once in Interfaces/*.varlink (the protocol's
    // documentation), their Swift generated from it (VarlinkInterfaces); where keyportd listens;
    // and a blocking AutoFill request, for the `keyport` front program that must start fast. No
    // Foundation or swift-nio; not a product.
    .target(
        name: "KeyportInterfacesCore",
        dependencies: ["KeyportSystemCore", "VarlinkCore", "KeyportDomainsCore", "KeyportErrors"],
        plugins: ["VarlinkInterfaces"]
    ),
    // KeyportInterfacesCore with swift-nio's connections to keyportd, for everything that is not
    // the fast `keyport` front.
    .target(name: "KeyportInterfaces", dependencies: ["KeyportInterfacesCore", "Varlink", "KeyportSystem"]),
    // The custom-scheme callback hand-off (org.keyport.Callbacks and org.keyport.CallbackSession):
    // the private socket directory, a waiting session's server and registration, offering a URL to
    // the sessions; for keyportd, the URL handler and AuthenticationServices' listener; not a
    // product.
    .target(
        name: "KeyportCallbacks",
        dependencies: ["Varlink", "KeyportInterfaces", "KeyportSystem", "KeyportErrors", nioCore]
    ),
]

// MARK: - The libraries apps build on (the products)

let libraries: [Target] = [
    // Writes the Swift of the credential types made only of editable fields, from their one
    // definition (the CXFTypes plugin's tool); the standard library only, as it runs in every
    // build of AuthenticationServices.
    .executableTarget(name: "CXFTypesGenerate", dependencies: ["BuildToolSupport"]),
    // Generates those types' CXF structs and schema tables in CredentialExchangeFormat, and
    // Apple's structs of the same credentials in AuthenticationServices.
    .plugin(name: "CXFTypes", capability: .buildTool(), dependencies: ["CXFTypesGenerate"]),
    .target(name: "CredentialExchangeFormat", dependencies: ["KeyportEncoding", crypto, asn1], plugins: ["CXFTypes"]),
    .target(
        name: "OneTimeCodes",
        dependencies: ["KeyportEncoding", "CredentialExchangeFormat", "KeyportErrors", crypto]
    ),
    // WebAuthn's formats, pure (bytes in, bytes out, no I/O): COSE keys, authenticator data,
    // attestation objects, client data, the relying party id's rules, PRF, and a software
    // authenticator's keys and signatures; for keyportd (the client), the providers' SDK and
    // Keyport Vault (an authenticator); not a product.
    .target(
        name: "KeyportPasskeys",
        dependencies: ["KeyportEncoding", "KeyportDomainsCore", "KeyportErrors", crypto, cryptoExtras]
    ),
    // The OAuth engine alone, usable without keyportd: no Varlink, no interface of keyportd's (its
    // custom-scheme callbacks routed through keyportd are AuthenticationServices').
    .target(
        name: "WebAuthentication",
        dependencies: [
            "KeyportEncoding", "KeyportSystem", "KeyportDomainsCore", "KeyportErrors", crypto, nioCore, nioPosix,
            nioHTTP1,
        ]
    ),
    // The import and export managers are keyportd's clients (KeyportInterfaces, over Varlink), and
    // NSUserActivity.launchActivity reads the variables keyportd sets.
    .target(
        name: "AuthenticationServices",
        dependencies: [
            "CredentialExchangeFormat", "KeyportEncoding", "WebAuthentication", "KeyportInterfaces", "Varlink",
            "KeyportCallbacks", "KeyportSystem", crypto, logging, nioCore, nioPosix,
        ],
        plugins: ["CXFTypes"]
    ),
]

// MARK: - The system: keyportd, and where people meet it (the desktop, the browser)

let system: [Target] = [
    // The system side: keyportd's services (exchange, providers, agents, AutoFill) on Varlink.
    .target(
        name: "KeyportDaemon",
        dependencies: [
            "Varlink", "KeyportSystem", "KeyportEncoding", "KeyportInterfaces", "CredentialExchangeFormat",
            "KeyportPasskeys", "KeyportCallbacks", "KeyportDomains", "KeyportErrors", logging, serviceLifecycle,
            httpClient, nioSSL,
        ]
    ),
    .executableTarget(
        name: "keyportd",
        dependencies: ["KeyportDaemon", "KeyportInterfaces", "KeyportSystem", logging, serviceLifecycle]
    ),
    // The person's graphical session as `keyport` meets it: the clipboard served by Keyport itself
    // (an X11 selection, a Wayland data-control source) with the hint that keeps a secret out of
    // clipboard histories; the standard library only; not a product.
    .target(name: "KeyportDesktop", dependencies: ["KeyportSystemCore", "KeyportErrors"]),
    // The browser extension's native messaging host: relays its AutoFill calls to keyportd.
    // Started by the browser for each port the extension opens, so it starts as `keyport` does:
    // the standard library linked in, no Foundation or swift-nio.
    .target(name: "KeyportBrowser", dependencies: ["KeyportInterfacesCore", "KeyportSystemCore", "VarlinkCore"]),
    .executableTarget(
        name: "keyport-browser",
        dependencies: ["KeyportBrowser", "KeyportSystemCore"],
        linkerSettings: staticStandardLibrary
    ),
]

// MARK: - What every command line shares

let commandLineParts: [Target] = [
    // A command's failure and its exit code, reading a bounded input and writing output that is
    // never silently cut short: for keyport-cli and the vault's commands alike; not a product.
    .target(name: "KeyportCommandLine", dependencies: ["CredentialExchangeFormat", "KeyportSystem"])
]

// MARK: - Keyport Vault, the reference app (its wing: nothing below names it)

let vault: [Target] = [
    // Keyport Vault's store: CXF items sealed one by one in SQLite (GRDB), under a key wrapped by a
    // passphrase (scrypt); look-ups by keyed hashes of sites. docs/architecture.md, "Keyport
    // Vault", says why each part is as it is; not a product.
    .target(
        name: "KeyportVault",
        dependencies: [
            "CredentialExchangeFormat", "KeyportDomains", "KeyportSystem", "KeyportEncoding", "KeyportCrypto",
            "KeyportErrors", crypto, grdb,
        ]
    ),
    // Other managers' exports (Bitwarden, KeePassXC, the browsers, authenticator apps) read into CXF
    // items, each entry that cannot be read reported where it is; not a product.
    .target(
        name: "KeyportFormats",
        dependencies: [
            "CredentialExchangeFormat", "OneTimeCodes", "KeyportCrypto", "KeyportSystem", "KeyportEncoding",
            "KeyportErrors", crypto,
        ]
    ),
    // Keyport Vault's keeper's interface (org.keyport.Vault on Varlink, VaultKeeper.varlink), the
    // vault's places (VaultLocations) and a blocking client that checks who answers: what the
    // `keyport` front needs for `vault show`, so no Foundation or swift-nio; not a product.
    .target(
        name: "KeyportVaultKeeperCore",
        dependencies: ["KeyportSystemCore", "VarlinkCore", "KeyportEncoding"],
        plugins: ["VarlinkInterfaces"]
    ),
    // Keyport Vault's keeper: one process that holds a vault unlocked for a while, for `keyport
    // vault`, the vault's provider and its importer; and its async client; not a product.
    .target(
        name: "KeyportVaultKeeper",
        dependencies: [
            "KeyportVaultKeeperCore", "KeyportVault", "KeyportCrypto", "CredentialExchangeFormat",
            "KeyportInterfaces", "KeyportSystem", "KeyportEncoding", "KeyportDomains", "OneTimeCodes", "Varlink",
        ]
    ),
    // `keyport vault`: the vault's commands, which keyport-cli mounts as a subcommand group; not a
    // product.
    .target(
        name: "KeyportVaultCommands",
        dependencies: [
            "KeyportCommandLine", "KeyportVault", "KeyportVaultKeeper", "KeyportFormats", "KeyportCrypto",
            "CredentialExchangeFormat", "KeyportEncoding", "KeyportSystem", "KeyportInterfaces", "Varlink",
            "KeyportDomains", "OneTimeCodes", argumentParser,
        ]
    ),
    // Keyport Vault's keeper, its AutoFill provider, importer and exporter.
    .executableTarget(
        name: "keyport-vault",
        dependencies: [
            "KeyportVaultKeeper", "KeyportInterfaces", "KeyportSystem", "KeyportEncoding", "Varlink",
            "AuthenticationServices", "CredentialExchangeFormat", "OneTimeCodes", "KeyportFormats", "KeyportDomains",
            "KeyportPasskeys", crypto,
        ]
    ),
]

// MARK: - The command line people run

let commandLine: [Target] = [
    // The program people run: answers `otp SITE`, `password SITE` and `vault show` itself, with no
    // Foundation or swift-nio and the standard library linked in, and hands everything else to
    // keyport-cli (Sources/keyport/main.swift says why).
    .executableTarget(
        name: "keyport",
        dependencies: [
            "KeyportInterfacesCore", "KeyportVaultKeeperCore", "KeyportSystemCore", "KeyportDomainsCore",
            "KeyportEncoding",
        ],
        linkerSettings: staticStandardLibrary
    ),
    // The whole command line.
    .executableTarget(
        name: "keyport-cli",
        dependencies: [
            "KeyportCommandLine", "KeyportVaultCommands", "KeyportVaultKeeper", "KeyportFormats", "KeyportCrypto",
            "CredentialExchangeFormat", "KeyportEncoding", "KeyportSystem", "OneTimeCodes", "AuthenticationServices",
            "KeyportDesktop", "WebAuthentication", "KeyportInterfaces", "Varlink", "KeyportDomains", argumentParser,
            crypto,
        ]
    ),
]

// MARK: - Benchmarks and the examples the documentation shows

let examples: [Target] = [
    .executableTarget(
        name: "KeyportBench",
        dependencies: [
            "CredentialExchangeFormat", "KeyportEncoding", "OneTimeCodes", "AuthenticationServices",
            "WebAuthentication", "KeyportInterfaces", "KeyportSystem", "Varlink", "KeyportDaemon", "KeyportDomains",
            "KeyportVault", "KeyportCrypto", "KeyportVaultKeeper", crypto, logging,
        ],
        path: "Benchmarks/KeyportBench"
    ),
    // Two apps that exchange credentials through keyportd with Apple's API only, and a provider, as
    // the documentation's snippets do (Examples/README.md); not products.
    .executableTarget(
        name: "ExampleExporter",
        dependencies: ["AuthenticationServices"],
        path: "Examples/ExampleExporter"
    ),
    .executableTarget(
        name: "ExampleImporter",
        dependencies: ["AuthenticationServices"],
        path: "Examples/ExampleImporter"
    ),
    .executableTarget(
        name: "ExampleProvider",
        dependencies: ["AuthenticationServices", "OneTimeCodes"],
        path: "Examples/ExampleProvider"
    ),
    // An app that signs up and in with passkeys through ASAuthorizationController.
    .executableTarget(
        name: "ExamplePasskeyApp",
        dependencies: ["AuthenticationServices"],
        path: "Examples/ExamplePasskeyApp"
    ),
]

// MARK: - Tests, in the same order

let tests: [Target] = [
    // How tests run programs (on KeyportSystem's ChildProcess, with time limits) and start their
    // peers (oathtool, pyotp, the Authlib server, the Selenium browser).
    .target(name: "KeyportTestSupport", dependencies: ["KeyportSystem"], path: "Tests/KeyportTestSupport"),
    .testTarget(name: "KeyportEncodingTests", dependencies: ["KeyportEncoding"]),
    .testTarget(name: "KeyportSystemTests", dependencies: ["KeyportSystem", "KeyportTestSupport"]),
    .testTarget(
        name: "KeyportDomainsTests",
        dependencies: ["KeyportDomains", "KeyportTestSupport"],
        exclude: ["Peers"]
    ),
    .testTarget(
        name: "KeyportCryptoTests",
        dependencies: ["KeyportCrypto", "KeyportSystemCore", "KeyportEncoding", crypto]
    ),
    .testTarget(
        name: "VarlinkTests",
        dependencies: ["Varlink", "KeyportSystem", "KeyportTestSupport", "VarlinkGeneration", nioCore, nioPosix],
        exclude: ["Peers"],
        plugins: ["VarlinkInterfaces"]
    ),
    .testTarget(
        name: "KeyportCallbacksTests",
        dependencies: ["KeyportCallbacks", "KeyportTestSupport", "Varlink"]
    ),
    .testTarget(
        name: "CredentialExchangeFormatTests",
        dependencies: ["CredentialExchangeFormat", "KeyportEncoding", "KeyportTestSupport", crypto],
        resources: [.copy("Fixtures")]
    ),
    .testTarget(
        name: "OneTimeCodesTests",
        dependencies: ["OneTimeCodes", "CredentialExchangeFormat", "KeyportTestSupport"],
        exclude: ["Peers"]
    ),
    .testTarget(
        name: "KeyportPasskeysTests",
        dependencies: ["KeyportPasskeys", "KeyportDomains", "KeyportEncoding", "KeyportTestSupport", crypto],
        exclude: ["Peers"]
    ),
    .testTarget(
        name: "WebAuthenticationTests",
        dependencies: [
            "WebAuthentication", "KeyportTestSupport", "KeyportSystem",
            // A small HTTP server for the OAuth client's redirect and discovery tests, and in-memory
            // channels for the loopback receiver's pipeline.
            nioCore, nioPosix, nioHTTP1, nioEmbedded,
        ],
        exclude: ["Peers"]
    ),
    .testTarget(
        name: "AuthenticationServicesTests",
        dependencies: [
            "AuthenticationServices", "CredentialExchangeFormat", "WebAuthentication", "KeyportTestSupport",
            "KeyportInterfaces", "Varlink",
        ]
    ),
    // keyportd with the example provider registered in its four modes, for the tests of AutoFill
    // wherever people meet it (the daemon, the browser's host, the desktop).
    .target(
        name: "KeyportAutoFillTestSupport",
        dependencies: ["KeyportTestSupport", "KeyportInterfaces", "Varlink"],
        path: "Tests/KeyportAutoFillTestSupport"
    ),
    // Tests run the built programs, `keyport` among them, from the build directory (`swift build
    // --build-tests` builds every product); no test target depends on `keyport` or `keyport-browser`, whose statically
    // linked standard library would otherwise be linked into the test bundle.
    .testTarget(
        name: "KeyportDaemonTests",
        dependencies: [
            "KeyportDaemon", "KeyportInterfaces", "keyportd", "keyport-cli", "keyport-vault", "Varlink",
            "KeyportSystem", "CKeyportSystem", "KeyportTestSupport", "KeyportAutoFillTestSupport", "ExampleExporter",
            "ExampleImporter", "ExampleProvider", "CredentialExchangeFormat", "WebAuthentication",
            "AuthenticationServices", "KeyportDomains",
        ],
        exclude: ["Peers"]
    ),
    // The browser extension's host and the extension in Chromium and Firefox, against keyportd.
    .testTarget(
        name: "KeyportBrowserTests",
        dependencies: [
            "KeyportBrowser", "keyportd", "keyport-cli", "keyport-vault", "ExampleProvider",
            "KeyportInterfaces", "KeyportSystem", "KeyportTestSupport", "KeyportAutoFillTestSupport",
        ],
        exclude: ["Peers"]
    ),
    // The person's session: the clipboard's display servers, typing into X11 and Wayland windows.
    .testTarget(
        name: "KeyportDesktopTests",
        dependencies: [
            "KeyportDesktop", "keyportd", "keyport-cli", "ExampleProvider", "KeyportSystem", "KeyportTestSupport",
            "KeyportAutoFillTestSupport",
        ],
        exclude: ["Peers"]
    ),
    .testTarget(
        name: "KeyportFormatsTests",
        dependencies: [
            "KeyportFormats", "KeyportCrypto", "KeyportSystem", "KeyportEncoding", "CredentialExchangeFormat",
            "OneTimeCodes", "KeyportTestSupport", crypto,
        ],
        exclude: ["Peers"]
    ),
    .testTarget(
        name: "KeyportVaultTests",
        dependencies: [
            "KeyportVault", "KeyportCrypto", "CredentialExchangeFormat", "KeyportSystem", "KeyportTestSupport",
            "KeyportInterfaces", "KeyportEncoding", "Varlink", "keyport-vault", "KeyportVaultKeeper", "keyportd",
            "keyport-cli", grdb,
        ],
        exclude: ["Peers"]
    ),
    .testTarget(
        name: "KeyportCLITests",
        dependencies: [
            "keyport-cli", "KeyportSystem", "WebAuthentication", "AuthenticationServices", "KeyportTestSupport",
        ],
        resources: [.copy("Fixtures")]
    ),
]

/// A library product of the target of the same name.
func library(_ name: String) -> Product { .library(name: name, targets: [name]) }
/// An executable product of the target of the same name.
func executable(_ name: String) -> Product { .executable(name: name, targets: [name]) }

let package = Package(
    name: "Keyport",
    platforms: [.macOS(.v15)],
    products: [
        library("CredentialExchangeFormat"),
        library("AuthenticationServices"),
        library("OneTimeCodes"),
        // The OAuth engine under ASWebAuthenticationSession (PKCE, requests, discovery, receivers),
        // documented in the README for apps that want it without Apple's shapes.
        library("WebAuthentication"),
        executable("keyport"),
        executable("keyport-cli"),
        executable("keyportd"),
        executable("keyport-vault"),
        executable("keyport-browser"),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
    ],
    targets: foundations + varlink + interfaces + libraries + system + commandLineParts + vault + commandLine + examples
        + tests
)

// scripts/test builds Keyport's own targets with every warning an error (KEYPORT_WARNINGS_AS_ERRORS=1),
// so that the build stays warning-free; a plain build, and an app's that depends on Keyport, is
// not failed by a warning a newer compiler adds. (SwiftPM's warning control, not unsafeFlags,
// which would stop apps from depending on a tagged version.)
if Context.environment["KEYPORT_WARNINGS_AS_ERRORS"] == "1" {
    for target in package.targets where target.type != .plugin && target.name != "CKeyportSystem" {
        target.swiftSettings = (target.swiftSettings ?? []) + [.treatAllWarnings(as: .error)]
    }
}
