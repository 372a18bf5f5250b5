// SPDX-License-Identifier: Apache-2.0
// The native reader compiled for simdjson's haswell (AVX2) kernel: sim/CMakeLists.txt builds
// this file with -mavx2 -mbmi -mbmi2 -mpclmul -mlzcnt -mpopcnt on x86-64, which makes haswell
// simdjson's builtin (On-Demand) implementation here. load_native() in the portable copy calls
// it only on a CPU that runs it (native_reader.cpp explains why the file is compiled twice).
#define PYPTO_NATIVE_READER_VARIANT 1
#define PYPTO_NATIVE_READER_ENTRY load_native_haswell
#include "native_reader.cpp"  // NOLINT(bugprone-suspicious-include)
