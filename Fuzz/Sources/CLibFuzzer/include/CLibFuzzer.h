// libFuzzer's entry point for a program with a main of its own ("using libFuzzer as a library",
// https://llvm.org/docs/LibFuzzer.html): it parses libFuzzer's flags from argc/argv and runs
// TestOneInput until the fuzzing ends.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*TestOneInput)(const uint8_t *data, size_t size));
