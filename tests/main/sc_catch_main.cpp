// SPDX-License-Identifier: Apache-2.0
// SystemC owns main(); its sc_main runs the Catch session.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <systemc>

int sc_main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }
