// SPDX-License-Identifier: Apache-2.0
// pypto-sim, the native binary: runs the commands of pypto_cli (pypto/cli/cli.h) without
// embedding Python. What needs Python (the policies of --policy-module files, sweep) is
// handed whole to the interpreter the build was configured with: the process becomes that
// Python running pypto._cli.main(ARGS...) (execv, so signals and the exit status are the
// interpreter's), which runs the same command line inside the Python module, where the
// policies registered from Python are in the registry.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "pypto/cli/cli.h"
#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"

// Set by tools/CMakeLists.txt when the Python module is built: the interpreter and the
// folder that holds the pypto package (with the module linked into it by tools/setup.sh).
#ifndef PYPTO_CLI_PYTHON
#define PYPTO_CLI_PYTHON ""
#endif
#ifndef PYPTO_CLI_FRONTEND
#define PYPTO_CLI_FRONTEND ""
#endif

namespace {

std::vector<std::string> g_args;

// The interpreter's program: a signal while Python starts (importing pypto takes a second)
// ends it as the CLI ends, exit 130 with one line, not with a traceback. The first signal
// is noted, not raised: a KeyboardInterrupt inside the native module's initialisation
// would abort the process or surface as an ImportError; the import ends, then the process
// does. A second signal ends it at once.
constexpr const char* kLauncher = R"(import os, signal, sys
seen = []
def interrupted():
    os.write(2, b"pypto-sim: interrupted while starting Python; nothing written\n")
    os._exit(130)  # nothing to finish: the interpreter's own exit could die of a late signal
def stop(signum, frame):
    if seen:
        interrupted()
    seen.append(signum)
def by_signal(e):  # a KeyboardInterrupt a library's handler raised, maybe turned into another
    while e is not None:
        if isinstance(e, KeyboardInterrupt):
            return True
        e = e.__cause__ or e.__context__
    return False
signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
try:
    from pypto._cli import main
except BaseException as e:
    if seen or by_signal(e):
        interrupted()
    sys.stderr.write("pypto-sim: cannot start the Python side of pypto-sim in %s (%s: %s); "
                     "tools/setup.sh builds it for the interpreter it configures, and "
                     "PYPTO_SIM_PYTHON names another\n"
                     % (sys.executable, type(e).__name__, " ".join(str(e).split())))
    sys.exit(1)
if seen:
    interrupted()
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.default_int_handler)
try:
    main(sys.argv[1:])
except KeyboardInterrupt:  # in the few steps before main's own handling
    interrupted()
)";

// Replaces this process with `python -c kLauncher <the same arguments>`; PYPTO_SIM_PYTHON
// names another interpreter. Returns only by throwing (the interpreter cannot start).
[[noreturn]] void exec_python() {
  const char* chosen = std::getenv("PYPTO_SIM_PYTHON");
  const std::string python = chosen != nullptr && *chosen != '\0' ? chosen : PYPTO_CLI_PYTHON;
  // The source tree's pypto first, so that another pypto on the path does not answer.
  std::string path = PYPTO_CLI_FRONTEND;
  if (const char* old = std::getenv("PYTHONPATH"); old != nullptr && *old != '\0')
    path += std::string(":") + old;
  ::setenv("PYTHONPATH", path.c_str(), 1);
  std::vector<std::string> args = {python, "-c", kLauncher};
  args.insert(args.end(), g_args.begin() + 1, g_args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(python.c_str(), argv.data());
  throw pypto::Error("cannot start the Python interpreter " + python + " (" + std::strerror(errno) +
                     "); set PYPTO_SIM_PYTHON to another one");
}

}  // namespace

// libsystemc.so brings a main() that prints a banner and calls sc_main(). Our own main()
// takes precedence (simulations start from inside the commands); sc_main is still defined
// because the library refers to it, and does the same thing.
extern "C" int sc_main(int argc, char** argv) {
  g_args.assign(argv, argv + argc);
  pypto::cli::Host host;
  if (std::strlen(PYPTO_CLI_PYTHON) > 0) {
    host.load_policy_modules = [](const std::vector<std::string>&) { exec_python(); };
    host.sweep = [](const std::vector<std::string>&) -> int { exec_python(); };
  } else {
    host.no_python =
        "this pypto-sim was built without the Python module (PYPTO_BUILD_PYTHON=OFF), which "
        "Python policies and sweep need; use a build made by tools/setup.sh";
  }
  return pypto::cli::main(g_args, host);
}

int main(int argc, char** argv) {
  ::setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  pypto::common::install_interrupt_handlers("pypto-sim");
  return sc_main(argc, argv);
}
