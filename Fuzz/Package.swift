// swift-tools-version:6.1
// libFuzzer harness for the CXF decoder. Not part of the main package's build: build and run it
// with scripts/fuzz from the repository root (it needs the -sanitize=fuzzer flags that script passes).
import PackageDescription

let package = Package(
    name: "KeyportFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Keyport", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "CXFDecoderFuzzer",
            dependencies: [.product(name: "CredentialExchangeFormat", package: "Keyport")]
        ),
    ]
)
