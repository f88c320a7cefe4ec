#ifndef CLIBFUZZER_H
#define CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt FuzzerInterface.h), the same code its own main() runs. The
/// fuzz targets call it from the entry point SwiftPM gives executables on Linux, which is not
/// libFuzzer's main(); see Fuzzing/Package.swift.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
