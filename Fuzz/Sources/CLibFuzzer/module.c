// CLibFuzzer only declares libFuzzer's driver (include/CLibFuzzer.h); libFuzzer itself is linked
// into each harness by -sanitize=fuzzer. SwiftPM wants one source file in a C target.
