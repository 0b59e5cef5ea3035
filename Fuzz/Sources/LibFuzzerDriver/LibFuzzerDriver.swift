import CLibFuzzer
import Glibc

/// One fuzzer input: its bytes (`nil` with a count of 0 for the empty input); 0 to go on.
public typealias TestOneInput = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Runs libFuzzer on `testOneInput` with the program's arguments as libFuzzer's flags, then exits
/// with libFuzzer's status.
///
/// Each harness has a `main` of its own that calls this, rather than libFuzzer's `main`: SwiftPM
/// names an executable's entry point after its module and links `main` to it, so a harness without
/// one does not link; and the code generators the package's plugins build, which also get every
/// `-Xswiftc` flag, keep a `main` of their own.
public func runLibFuzzer(_ testOneInput: TestOneInput) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
}
