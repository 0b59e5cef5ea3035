// swift-tools-version:6.1
// libFuzzer harnesses for Keyport's parsers of untrusted input. Not part of the main package's
// build: build and run them with scripts/fuzz from the repository root (it passes the
// -sanitize=fuzzer flags they need).
import PackageDescription

let package = Package(
    name: "KeyportFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Keyport", path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
    ],
    targets: [
        .executableTarget(
            name: "CXFDecoderFuzzer",
            dependencies: [.product(name: "CredentialExchangeFormat", package: "Keyport")]
        ),
        .executableTarget(name: "OTPAuthURIFuzzer", dependencies: [.product(name: "OneTimeCodes", package: "Keyport")]),
        .executableTarget(name: "MigrationFuzzer", dependencies: [.product(name: "OneTimeCodes", package: "Keyport")]),
        .executableTarget(
            name: "LoopbackRequestFuzzer",
            dependencies: [
                .product(name: "WebAuthentication", package: "Keyport"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
    ]
)
