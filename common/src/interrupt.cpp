// SPDX-License-Identifier: Apache-2.0
#include "pypto/common/interrupt.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <thread>

namespace pypto::common {
namespace {

volatile std::sig_atomic_t g_signal = 0;
std::atomic<bool (*)()> g_poll{nullptr};
// The thread that installed g_poll: the only one that may call it (a host's poll may need
// that thread, as Python's signal check does).
std::atomic<std::thread::id> g_poll_thread{};
std::atomic<const char*> g_exit_line{nullptr};
std::atomic<void (*)(int)> g_forward{nullptr};
const char* g_program = "pypto";
thread_local const std::atomic<bool>* t_cancel = nullptr;

// Fixed storage so that the handler can unlink without allocating.
constexpr int kSlots = 64;
constexpr std::size_t kPathMax = 4096;
char g_paths[kSlots][kPathMax];
std::atomic<bool> g_claimed[kSlots];  // a writer owns the slot
std::atomic<bool> g_used[kSlots];     // its path is complete: the handler may unlink it

void write_str(const char* s) {
  if (s == nullptr) return;
  const std::size_t n = std::strlen(s);
  ssize_t rc = ::write(STDERR_FILENO, s, n);
  (void)rc;
}

void remove_temporaries() {
  for (int i = 0; i < kSlots; ++i) {
    if (g_used[i].load()) ::unlink(g_paths[i]);
  }
}

extern "C" void on_signal(int sig) {
  const char* line = g_exit_line.load();
  if (g_signal != 0 || line != nullptr) {
    // A second signal (the first was not honoured yet, e.g. a run that makes no progress)
    // or a phase that writes nothing: leave now, removing what a writer had open.
    remove_temporaries();
    write_str(line != nullptr ? line : g_program);
    if (line == nullptr) write_str(": interrupted again; temporary files removed, nothing kept");
    write_str("\n");
    ::_exit(130);
  }
  g_signal = sig;
  if (void (*forward)(int) = g_forward.load(); forward != nullptr) forward(sig);
}

}  // namespace

void install_interrupt_handlers(const char* program) {
  g_program = program;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupt_requested() {
  if (g_signal != 0) return true;
  if (t_cancel != nullptr && t_cancel->load(std::memory_order_relaxed)) return true;
  bool (*poll)() = g_poll.load(std::memory_order_relaxed);
  return poll != nullptr &&
         g_poll_thread.load(std::memory_order_relaxed) == std::this_thread::get_id() && poll();
}

int interrupt_signal() { return g_signal; }

void set_signal_forwarder(void (*forward)(int signum)) { g_forward.store(forward); }

ScopedCancelFlag::ScopedCancelFlag(const std::atomic<bool>* flag) : previous_(t_cancel) {
  t_cancel = flag;
}

ScopedCancelFlag::~ScopedCancelFlag() { t_cancel = previous_; }

void set_interrupt_poll(bool (*poll)()) {
  g_poll_thread.store(std::this_thread::get_id());
  g_poll.store(poll);
}

void check_interrupt(const std::string& what) {
  if (interrupt_requested()) throw Interrupted("interrupted while " + what);
}

void set_exit_on_interrupt(const char* line) { g_exit_line.store(line); }

int register_temporary(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    // Claim the slot first (nobody else writes it), then publish the path: the handler
    // reads a slot only while it is marked used.
    if (!g_claimed[i].compare_exchange_strong(expected, true)) continue;
    std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
    g_used[i].store(true);
    return i;
  }
  return -1;
}

void unregister_temporary(int slot) {
  if (slot < 0 || slot >= kSlots) return;
  g_used[slot].store(false);
  g_claimed[slot].store(false);
}

}  // namespace pypto::common
