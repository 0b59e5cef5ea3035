// swift-tools-version:6.1
// libFuzzer harnesses for Keyport's parsers of untrusted input. Not part of the main package's
// build: build and run them with scripts/fuzz from the repository root (it passes the
// AddressSanitizer and coverage flags every module needs).
import PackageDescription

/// Only the harnesses link libFuzzer. SwiftPM's `--sanitize=fuzzer` would also link it into the code
/// generators the package's plugins build and run, whose `main` then clashes with libFuzzer's.
let libFuzzer: [LinkerSetting] = [.unsafeFlags(["-sanitize=fuzzer", "-use-ld=lld"])]

let package = Package(
    name: "KeyportFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Keyport", path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
    ],
    targets: [
        .target(name: "CLibFuzzer"),
        .target(name: "LibFuzzerDriver", dependencies: ["CLibFuzzer"]),
        .executableTarget(
            name: "CXFDecoderFuzzer",
            dependencies: ["LibFuzzerDriver", .product(name: "CredentialExchangeFormat", package: "Keyport")],
            linkerSettings: libFuzzer
        ),
        .executableTarget(
            name: "OTPAuthURIFuzzer",
            dependencies: ["LibFuzzerDriver", .product(name: "OneTimeCodes", package: "Keyport")],
            linkerSettings: libFuzzer
        ),
        .executableTarget(
            name: "MigrationFuzzer",
            dependencies: ["LibFuzzerDriver", .product(name: "OneTimeCodes", package: "Keyport")],
            linkerSettings: libFuzzer
        ),
        .executableTarget(
            name: "LoopbackRequestFuzzer",
            dependencies: [
                "LibFuzzerDriver",
                .product(name: "WebAuthentication", package: "Keyport"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            linkerSettings: libFuzzer
        ),
    ]
)
