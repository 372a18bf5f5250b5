// SPDX-License-Identifier: Apache-2.0
// The commands of pypto-sim: one handler per command (cmd_<name>.cpp), listed once in the
// command table of cli.cpp, from which the usage text, the dispatch and the "did you mean"
// of an unknown command all come.
#pragma once

#include <string>
#include <vector>

#include "pypto/cli/cli.h"

namespace pypto::cli {

// What one command line runs with. cli::main makes one per command line, so nothing carries
// over between the command lines of one process (the Python module runs several).
struct Context {
  const Host& host;
  // What the command has completed and kept so far, told when a later step fails or is
  // interrupted ("the reports of fifo in out/fifo/").
  std::vector<std::string> kept;
};

// Runs one command. Contract: argv[0] is the command's name as typed, argv[1..argc) its
// arguments; returns the exit status, or throws (cli::main maps the error to its status); it
// may append to ctx.kept.
using Handler = int (*)(Context& ctx, int argc, char** argv);

// One row of the command table.
struct Command {
  const char* name;
  const char* operands;  // what follows the name in the usage text ("TRACE"; "" for none)
  const char* summary;   // one line for the usage text
  Handler handler;
  const char* alias = nullptr;  // another name it answers to, left out of the usage text
};

int cmd_run(Context& ctx, int argc, char** argv);
int cmd_compare(Context& ctx, int argc, char** argv);
int cmd_gen(Context& ctx, int argc, char** argv);
int cmd_config(Context& ctx, int argc, char** argv);
int cmd_policies(Context& ctx, int argc, char** argv);
int cmd_bench(Context& ctx, int argc, char** argv);
int cmd_calibrate(Context& ctx, int argc, char** argv);
int cmd_sweep(Context& ctx, int argc, char** argv);

}  // namespace pypto::cli
