// SPDX-License-Identifier: Apache-2.0
// Ctrl-C (SIGINT) and SIGTERM as a request, not an exit: the handler only sets a flag, and the
// long loops (the simulation, the report writers) poll it and throw Interrupted, so that
// destructors remove every temporary file and the client says what was cut short and what
// was kept. A second signal, or one while the client has said that nothing is being written
// (loading a trace), exits at once: the handler removes the registered temporary files and
// calls _exit (both async-signal-safe).
#pragma once

#include <atomic>
#include <string>

#include "pypto/common/errors.h"

namespace pypto::common {

// Installs the SIGINT/SIGTERM handlers (the CLI; never in a process whose host owns the
// signals, like Python). `program` prefixes the line written on an immediate exit.
void install_interrupt_handlers(const char* program);

// Whether an interruption was requested: a signal seen by the installed handlers, or the
// poll hook (set_interrupt_poll) answering true. Cheap enough for every few thousand tasks.
bool interrupt_requested();

// The signal number seen (SIGINT, SIGTERM), 0 if none (or the request came from the hook).
int interrupt_signal();

// A host's own way to see a pending interruption (the Python module checks for a pending
// KeyboardInterrupt). Contract: called from the thread running the simulation; null removes it.
// The hook is called on that thread only: on other threads (a report writer's helper)
// interrupt_requested() sees the signal flag alone, and the installing thread's next check
// sees the host's request.
void set_interrupt_poll(bool (*poll)());

// A per-thread cancel request: while a ScopedCancelFlag lives on a thread, interrupt_requested()
// on that thread is also true once `flag` is set (from any thread). The frontend's report
// worker runs each queued timing run under its job's flag, so that a caller can stop it with
// the same polls (simulation, report writers) that stop a run on a signal.
class ScopedCancelFlag {
 public:
  explicit ScopedCancelFlag(const std::atomic<bool>* flag);
  ~ScopedCancelFlag();
  ScopedCancelFlag(const ScopedCancelFlag&) = delete;
  ScopedCancelFlag& operator=(const ScopedCancelFlag&) = delete;

 private:
  const std::atomic<bool>* previous_;
};

// A host that runs code of its own under the installed handlers (the Python module's CLI
// runs Python hooks and files) is told of the first signal too: `forward` is called from
// the signal handler, so it must be async-signal-safe. Null removes it.
void set_signal_forwarder(void (*forward)(int signum));

// Throws Interrupted("interrupted while <what>") if interrupt_requested().
void check_interrupt(const std::string& what);

// While set, a signal ends the process at once with `line` (+ "\n") on stderr and status
// 130: for phases that write nothing, so that there is nothing to clean up. `line` must stay
// valid until cleared (null). Contract: the CLI sets it around trace loading only.
void set_exit_on_interrupt(const char* line);

// Temporary files the handler removes on an immediate exit (at most 64 at a time; beyond
// that a file is still removed by its owner's destructor, just not on a hard exit).
// Returns a slot for unregister_temporary, or -1.
int register_temporary(const std::string& path);
void unregister_temporary(int slot);

}  // namespace pypto::common
