// SPDX-License-Identifier: Apache-2.0
// libsystemc (linked through pypto_sim) refers to sc_main; the fuzz targets never elaborate a
// model, and their main() is libFuzzer's or fuzz_replay's.
extern "C" int sc_main(int, char*[]) { return 0; }  // declared extern "C" by <systemc>
