// SPDX-License-Identifier: Apache-2.0
// Scheduling policies written in Python: pypto._C.Policy is sched::Policy with a pybind11
// trampoline, so a Python subclass may override any hook; the rest run the C++ defaults
// without entering Python. A registered class is instantiated once per simulation
// (Registry factory); hooks run with the GIL taken for the call (the simulation itself runs
// without it). An exception inside a hook propagates as that Python exception, with a
// note naming the hook and the class, out of the SIM call; the runtime state is dropped.
#include "policy_bindings.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"
#include "pypto/model/config_loader.h"
#include "pypto/sched/registry.h"
#include "pypto/sim/report.h"
#include "pypto/sim/simulation.h"
#include "pypto/trace/trace_loader.h"

namespace py = pybind11;

namespace pypto::bindings {
namespace {

// How many InPython live (on any thread): the signal handler reads it.
std::atomic<int> g_in_python{0};

// Called by the CLI's signal handler: async-signal-safe (an atomic load and
// PyErr_SetInterruptEx, which Python documents as such). Handed over as SIGINT, so that it
// is KeyboardInterrupt whatever Python's own handler for SIGTERM is.
void forward_signal_to_python(int /*signum*/) {
  if (g_in_python.load() > 0) PyErr_SetInterruptEx(SIGINT);
}

using common::CoreId;
using common::CoreType;
using common::DeviceTaskId;
using common::interrupt_signal;
using common::TaskId;
using common::ThreadId;
using common::TimePs;
using sched::MachineView;
using sched::Policy;
using sched::PublishPoint;
using sched::StagedPick;
using sched::TaskListView;
using sched::ThreadContext;

// Adds "in policy hook NAME of CLASS" to the Python exception in flight (PEP 678 notes). A
// KeyboardInterrupt that the CLI's own signal handlers asked for (InPython) is the run's
// interruption, exit 130, not the hook's error.
[[noreturn]] void rethrow_with_hook(py::error_already_set& e, const char* hook,
                                    const py::handle& self) {
  const std::string cls = py::str(py::type::handle_of(self).attr("__qualname__"));
  if (e.matches(PyExc_KeyboardInterrupt) && interrupt_signal() != 0) {
    throw Interrupted("interrupted while running scheduling policy hook " + std::string(hook) +
                      " of " + cls);
  }
  {
    const py::object value = e.value();
    if (py::hasattr(value, "add_note")) {
      value.attr("add_note")("in scheduling policy hook " + std::string(hook) + " of " + cls);
    }
  }
  throw;
}

// A hook's answer that is not what the hook returns, as the Python exception in flight (so
// that it surfaces like any exception of the hook, with the hook named): TypeError for the
// wrong type, ValueError for an int outside the answer's range.
[[noreturn]] void throw_bad_answer(PyObject* kind, const py::handle& answer,
                                   const std::string& expected) {
  const std::string got = py::repr(answer);
  const std::string type = py::str(py::type::handle_of(answer).attr("__name__"));
  PyErr_SetString(
      kind, ("returned " + got.substr(0, 80) + " (" + type + "), expected " + expected).c_str());
  throw py::error_already_set();
}

// What each hook returns, for the message of a wrong answer.
std::string expected_answer(const char* hook) {
  const std::string h = hook;
  if (h == "events") return "an int of PolicyEvent bits, in [0, 15]";
  if (h == "send_before_resolve" || h == "publish_staged" || h == "publish_idle") {
    return "a bool (True or False)";
  }
  if (h == "direct_send") return "an int, a core id >= 0, or pypto.sim.NO_CORE";
  if (h == "pick_core") return "an int, a core id >= 0";
  if (h == "steal_victim") return "an int, a thread id >= 0, or pypto.sim.NO_THREAD";
  if (h == "fill_quota") return "an int in [0, 4294967295], a task count";
  if (h == "pick_staged") return "None or (staged index, core), a pair of ints >= 0";
  return "an int, an index >= 0";
}

// The answer as R, strictly: a bool for a bool (not 0, 1 or a string that happens to be
// true), an int for an int (not a bool nor a float), within R's range.
template <class R>
R strict_answer(const py::handle& r, const char* hook) {
  if constexpr (std::is_same_v<R, bool>) {
    const std::string type = py::str(py::type::handle_of(r).attr("__name__"));
    if (!PyBool_Check(r.ptr()) && type != "bool_") {
      throw_bad_answer(PyExc_TypeError, r, expected_answer(hook));
    }
    return PyObject_IsTrue(r.ptr()) == 1;
  } else {
    if (PyBool_Check(r.ptr()) || PyFloat_Check(r.ptr()) || !PyIndex_Check(r.ptr())) {
      throw_bad_answer(PyExc_TypeError, r, expected_answer(hook));
    }
    const py::int_ v = py::reinterpret_steal<py::int_>(PyNumber_Index(r.ptr()));
    if (!v) throw py::error_already_set();
    int overflow = 0;
    const long long n = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    const bool fits = overflow == 0 && n >= 0 &&
                      static_cast<unsigned long long>(n) <= std::numeric_limits<R>::max();
    const bool events_ok = std::string(hook) != "events" || (fits && n <= 15);
    if (!fits || !events_ok) throw_bad_answer(PyExc_ValueError, r, expected_answer(hook));
    return static_cast<R>(n);
  }
}

// The trampoline: each hook calls the Python override if the class has one.
class PyPolicy : public Policy {
 public:
  unsigned events() const override {
    py::gil_scoped_acquire gil;
    const py::function f = py::get_override(static_cast<const Policy*>(this), "events");
    if (f) return call<unsigned>(f, "events");
    // By default, the events whose hooks the class overrides.
    unsigned bits = 0;
    const auto has = [&](const char* name) {
      return static_cast<bool>(py::get_override(static_cast<const Policy*>(this), name));
    };
    if (has("on_ready")) bits |= sched::kEventReady;
    if (has("on_dispatch")) bits |= sched::kEventDispatch;
    if (has("on_done")) bits |= sched::kEventDone;
    if (has("on_device_task_admitted") || has("on_device_task_finished")) {
      bits |= sched::kEventDeviceTask;
    }
    return bits;
  }
  void setup(const MachineView& m) override {
    hook<void>(
        "setup", [&] { return Policy::setup(m); }, &m);
  }
  void on_ready(ThreadContext& c, TaskId t) override { hook<void>("on_ready", nullptr, &c, t); }
  void on_dispatch(ThreadContext& c, TaskId t, CoreId core) override {
    hook<void>("on_dispatch", nullptr, &c, t, core);
  }
  void on_done(ThreadContext& c, TaskId t, CoreId core) override {
    hook<void>("on_done", nullptr, &c, t, core);
  }
  void on_device_task_admitted(const MachineView& m, DeviceTaskId dt, TimePs at) override {
    hook<void>("on_device_task_admitted", nullptr, &m, dt, at);
  }
  void on_device_task_finished(const MachineView& m, DeviceTaskId dt, TimePs at) override {
    hook<void>("on_device_task_finished", nullptr, &m, dt, at);
  }
  bool send_before_resolve(ThreadContext& c, CoreType ct) override {
    return hook<bool>(
        "send_before_resolve", [&] { return Policy::send_before_resolve(c, ct); }, &c, ct);
  }
  CoreId direct_send(ThreadContext& c, TaskId ready, CoreId producer) override {
    return hook<CoreId>(
        "direct_send", [&] { return Policy::direct_send(c, ready, producer); }, &c, ready,
        producer);
  }
  StagedPick pick_staged(ThreadContext& c, CoreType ct, const TaskListView& staged) override {
    py::gil_scoped_acquire gil;
    const py::function f = py::get_override(static_cast<const Policy*>(this), "pick_staged");
    if (!f) {
      py::gil_scoped_release nogil;
      return Policy::pick_staged(c, ct, staged);
    }
    try {
      check_not_failed();
      const InPython running;
      const py::object r = f(&c, ct, &staged);
      if (r.is_none()) return {};
      if (!(py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r)) || py::len(r) != 2) {
        throw_bad_answer(PyExc_TypeError, r, expected_answer("pick_staged"));
      }
      const py::sequence pair = py::reinterpret_borrow<py::sequence>(r);
      return {strict_answer<std::size_t>(pair[0], "pick_staged"),
              strict_answer<CoreId>(pair[1], "pick_staged")};
    } catch (py::error_already_set& e) {
      failed_ = true;
      rethrow_with_hook(e, "pick_staged", py::cast(static_cast<const Policy*>(this)));
    }
  }
  bool publish_staged(ThreadContext& c, CoreType ct, PublishPoint at, std::size_t q) override {
    return hook<bool>(
        "publish_staged", [&] { return Policy::publish_staged(c, ct, at, q); }, &c, ct, at, q);
  }
  std::size_t pick_device_task(ThreadContext& c, CoreType ct,
                               const std::vector<DeviceTaskId>& cands) override {
    return hook<std::size_t>(
        "pick_device_task", [&] { return Policy::pick_device_task(c, ct, cands); }, &c, ct, cands);
  }
  std::uint32_t fill_quota(ThreadContext& c, CoreType ct, DeviceTaskId dt) override {
    return hook<std::uint32_t>(
        "fill_quota", [&] { return Policy::fill_quota(c, ct, dt); }, &c, ct, dt);
  }
  std::size_t pick_shared(ThreadContext& c, CoreType ct, const TaskListView& q, bool first,
                          bool before) override {
    return hook<std::size_t>(
        "pick_shared", [&] { return Policy::pick_shared(c, ct, q, first, before); }, &c, ct, &q,
        first, before);
  }
  CoreId pick_core(ThreadContext& c, CoreType ct, TaskId task) override {
    return hook<CoreId>(
        "pick_core", [&] { return Policy::pick_core(c, ct, task); }, &c, ct, task);
  }
  bool fill_pending_slot(ThreadContext& c, CoreType ct, CoreId core, TaskId task) override {
    return hook<bool>(
        "fill_pending_slot", [&] { return Policy::fill_pending_slot(c, ct, core, task); }, &c, ct,
        core, task);
  }
  bool publish_idle(ThreadContext& c, CoreType ct) override {
    return hook<bool>(
        "publish_idle", [&] { return Policy::publish_idle(c, ct); }, &c, ct);
  }
  ThreadId steal_victim(const MachineView& m, ThreadId t, CoreType ct) const override {
    py::gil_scoped_acquire gil;
    const py::function f = py::get_override(static_cast<const Policy*>(this), "steal_victim");
    if (!f) return sched::kNoThread;
    return call<ThreadId>(f, "steal_victim", &m, t, ct);
  }
  std::size_t pick_stolen(ThreadContext& c, CoreType ct, ThreadId v,
                          const TaskListView& staged) override {
    return hook<std::size_t>(
        "pick_stolen", [&] { return Policy::pick_stolen(c, ct, v, staged); }, &c, ct, v, &staged);
  }

 private:
  // After a hook failed, the run is stopping (the first error is the one told), but the
  // other schedule threads' processes of the same step still run: they must not enter
  // Python again (a hook that never returns would hold the run for good).
  void check_not_failed() const {
    if (failed_) throw Interrupted("stopped after an earlier error of the policy's hooks");
  }

  template <class R, class... A>
  R call(const py::function& f, const char* name, A&&... args) const {
    check_not_failed();
    try {
      const InPython running;
      if constexpr (std::is_void_v<R>) {
        f(std::forward<A>(args)...);
      } else {
        const py::object r = f(std::forward<A>(args)...);
        return strict_answer<R>(r, name);
      }
    } catch (py::error_already_set& e) {
      failed_ = true;
      rethrow_with_hook(e, name, py::cast(static_cast<const Policy*>(this)));
    }
  }

  mutable bool failed_ = false;  // a hook raised: no more calls into Python in this run

  // Calls the Python override of `name` if there is one, else the C++ default `base`
  // (nullptr: an event without a default), without the GIL.
  // (nullptr: an event without a default), without the GIL. The default is called
  // non-virtually, as Policy::hook, or it would come back here.
  template <class R, class Default, class... A>
  R hook(const char* name, Default fallback, A... args) {
    py::gil_scoped_acquire gil;
    const py::function f = py::get_override(static_cast<const Policy*>(this), name);
    if (f) return call<R>(f, name, args...);
    if constexpr (!std::is_same_v<Default, std::nullptr_t>) {
      py::gil_scoped_release nogil;
      return fallback();
    } else {
      return R();
    }
  }
};

// The hooks a Python class may override, as bits of Held's mask.
enum Hook : unsigned {
  kSetup = 1u << 0,
  kSendBeforeResolve = 1u << 1,
  kDirectSend = 1u << 2,
  kPickStaged = 1u << 3,
  kPublishStaged = 1u << 4,
  kPickDeviceTask = 1u << 5,
  kFillQuota = 1u << 6,
  kPickShared = 1u << 7,
  kPickCore = 1u << 8,
  kPublishIdle = 1u << 9,
  kStealVictim = 1u << 10,
  kPickStolen = 1u << 11,
  kFillPendingSlot = 1u << 12,
};
constexpr std::pair<const char*, unsigned> kHooks[] = {
    {"setup", kSetup},
    {"send_before_resolve", kSendBeforeResolve},
    {"direct_send", kDirectSend},
    {"pick_staged", kPickStaged},
    {"publish_staged", kPublishStaged},
    {"pick_device_task", kPickDeviceTask},
    {"fill_quota", kFillQuota},
    {"pick_shared", kPickShared},
    {"pick_core", kPickCore},
    {"publish_idle", kPublishIdle},
    {"steal_victim", kStealVictim},
    {"pick_stolen", kPickStolen},
    {"fill_pending_slot", kFillPendingSlot},
};

// The hooks cls overrides (its attribute is not pypto.sim.Policy's).
unsigned overridden_hooks(const py::object& cls) {
  const py::object base = py::type::of<Policy>();
  unsigned mask = 0;
  for (const auto& [name, bit] : kHooks) {
    if (!cls.attr(name).is(base.attr(name))) mask |= bit;
  }
  return mask;
}

// Owns the Python instance for as long as the runtime uses the policy. A hook the class
// overrides goes to the trampoline (and Python); the others run the C++ default on the
// same object without touching Python, so they cost what they cost in a C++ policy.
class Held final : public Policy {
 public:
  Held(py::object obj, Policy* p, unsigned mask) : obj_(std::move(obj)), p_(p), mask_(mask) {}
  ~Held() override {
    py::gil_scoped_acquire gil;
    obj_ = py::object();
  }
  unsigned events() const override { return p_->events(); }
  void setup(const MachineView& m) override {
    if (on(kSetup)) p_->setup(m);
  }
  void on_ready(ThreadContext& c, TaskId t) override { p_->on_ready(c, t); }
  void on_dispatch(ThreadContext& c, TaskId t, CoreId k) override { p_->on_dispatch(c, t, k); }
  void on_done(ThreadContext& c, TaskId t, CoreId k) override { p_->on_done(c, t, k); }
  void on_device_task_admitted(const MachineView& m, DeviceTaskId d, TimePs at) override {
    p_->on_device_task_admitted(m, d, at);
  }
  void on_device_task_finished(const MachineView& m, DeviceTaskId d, TimePs at) override {
    p_->on_device_task_finished(m, d, at);
  }
  bool send_before_resolve(ThreadContext& c, CoreType ct) override {
    return on(kSendBeforeResolve) ? p_->send_before_resolve(c, ct)
                                  : p_->Policy::send_before_resolve(c, ct);
  }
  CoreId direct_send(ThreadContext& c, TaskId r, CoreId pc) override {
    return on(kDirectSend) ? p_->direct_send(c, r, pc) : p_->Policy::direct_send(c, r, pc);
  }
  StagedPick pick_staged(ThreadContext& c, CoreType ct, const TaskListView& s) override {
    return on(kPickStaged) ? p_->pick_staged(c, ct, s) : p_->Policy::pick_staged(c, ct, s);
  }
  bool publish_staged(ThreadContext& c, CoreType ct, PublishPoint at, std::size_t q) override {
    return on(kPublishStaged) ? p_->publish_staged(c, ct, at, q)
                              : p_->Policy::publish_staged(c, ct, at, q);
  }
  std::size_t pick_device_task(ThreadContext& c, CoreType ct,
                               const std::vector<DeviceTaskId>& d) override {
    return on(kPickDeviceTask) ? p_->pick_device_task(c, ct, d)
                               : p_->Policy::pick_device_task(c, ct, d);
  }
  std::uint32_t fill_quota(ThreadContext& c, CoreType ct, DeviceTaskId dt) override {
    return on(kFillQuota) ? p_->fill_quota(c, ct, dt) : p_->Policy::fill_quota(c, ct, dt);
  }
  std::size_t pick_shared(ThreadContext& c, CoreType ct, const TaskListView& q, bool f,
                          bool b) override {
    return on(kPickShared) ? p_->pick_shared(c, ct, q, f, b)
                           : p_->Policy::pick_shared(c, ct, q, f, b);
  }
  CoreId pick_core(ThreadContext& c, CoreType ct, TaskId t) override {
    return on(kPickCore) ? p_->pick_core(c, ct, t) : p_->Policy::pick_core(c, ct, t);
  }
  bool fill_pending_slot(ThreadContext& c, CoreType ct, CoreId k, TaskId t) override {
    return on(kFillPendingSlot) ? p_->fill_pending_slot(c, ct, k, t)
                                : p_->Policy::fill_pending_slot(c, ct, k, t);
  }
  bool publish_idle(ThreadContext& c, CoreType ct) override {
    return on(kPublishIdle) ? p_->publish_idle(c, ct) : p_->Policy::publish_idle(c, ct);
  }
  ThreadId steal_victim(const MachineView& m, ThreadId t, CoreType ct) const override {
    return on(kStealVictim) ? p_->steal_victim(m, t, ct) : p_->Policy::steal_victim(m, t, ct);
  }
  std::size_t pick_stolen(ThreadContext& c, CoreType ct, ThreadId v,
                          const TaskListView& s) override {
    return on(kPickStolen) ? p_->pick_stolen(c, ct, v, s) : p_->Policy::pick_stolen(c, ct, v, s);
  }

 private:
  bool on(unsigned bit) const { return (mask_ & bit) != 0; }
  py::object obj_;
  Policy* p_;
  unsigned mask_;
};

// Names registered from Python (the only ones unregister_policy removes).
std::set<std::string>& python_policies() {
  static std::set<std::string> names;
  return names;
}

sched::ParamType param_type(const std::string& t) {
  if (t == "int") return sched::ParamType::kInt;
  if (t == "float") return sched::ParamType::kFloat;
  if (t == "bool") return sched::ParamType::kBool;
  throw ConfigError("policy parameter type '" + t + "': expected int, float or bool");
}

py::object typed(const sched::ParamSpec& p, double v) {
  if (p.type == sched::ParamType::kBool) return py::bool_(v != 0);
  if (p.type == sched::ParamType::kInt) return py::int_(static_cast<std::int64_t>(v));
  return py::float_(v);
}

// A hook's int argument to a view method, in [lo, hi): TypeError for another type (a bool
// too), IndexError naming the method, the argument and its range otherwise.
std::int64_t arg_int(const char* method, const char* arg, const py::handle& v, std::int64_t lo,
                     std::int64_t hi, const char* range_of = nullptr) {
  const std::string shown = std::string(py::repr(v)).substr(0, 60);
  const char* call = method[std::strlen(method) - 1] == ']' ? ": " : "(): ";
  if (py::isinstance<py::bool_>(v) || PyIndex_Check(v.ptr()) == 0) {
    throw py::type_error(std::string(method) + call + arg + " must be an int, got " +
                         std::string(py::str(py::type::handle_of(v).attr("__name__"))) + " " +
                         shown);
  }
  const auto as_int = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
  if (!as_int) throw py::error_already_set();
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(as_int.ptr(), &overflow);
  if (overflow != 0 || x < lo || x >= hi) {
    throw py::index_error(std::string(method) + call + arg + " " + shown + " is out of range [" +
                          std::to_string(lo) + ", " + std::to_string(hi - 1) + "]" +
                          (range_of != nullptr ? std::string(" (") + range_of + ")" : ""));
  }
  return x;
}

CoreId core_arg(const MachineView& v, const char* method, const py::handle& c) {
  const std::int64_t n = std::int64_t{v.num_cores(CoreType::kAic)} + v.num_cores(CoreType::kAiv);
  return static_cast<CoreId>(arg_int(method, "core", c, 0, n, "the machine's AIC and AIV cores"));
}

ThreadId thread_arg(const MachineView& v, const char* method, const py::handle& t) {
  return static_cast<ThreadId>(
      arg_int(method, "thread", t, 0, v.num_threads(), "the schedule threads"));
}

TaskId task_arg(const MachineView& v, const char* method, const py::handle& t) {
  return static_cast<TaskId>(arg_int(method, "task", t, 0,
                                     static_cast<std::int64_t>(v.graph().num_tasks()),
                                     "the graph's task ids"));
}

DeviceTaskId device_task_arg(const MachineView& v, const char* method, const py::handle& d) {
  return static_cast<DeviceTaskId>(arg_int(method, "device_task", d, 0,
                                           static_cast<std::int64_t>(v.graph().device_tasks.size()),
                                           "the graph's device tasks"));
}

// AIC or AIV: the core types with cores and ready queues.
CoreType dispatch_type(const char* method, const py::handle& ct) {
  if (py::isinstance<CoreType>(ct)) {
    const auto t = ct.cast<CoreType>();
    if (t == CoreType::kAic || t == CoreType::kAiv) return t;
  }
  throw py::type_error(std::string(method) + "(): the core type must be CoreType.AIC or " +
                       "CoreType.AIV, got " + std::string(py::repr(ct)).substr(0, 60));
}

// A runtime option's number: a Python int (not a bool) that fits 64 bits, else TypeError or
// ValueError naming the option and the value (not pybind11's "Unable to cast").
std::int64_t runtime_int(const std::string& key, const py::handle& v) {
  const std::string shown = py::repr(v);
  if (py::isinstance<py::bool_>(v) || !py::isinstance<py::int_>(v)) {
    throw py::type_error("runtime." + key + ": expected a whole number (or a name), got " +
                         std::string(py::str(py::type::handle_of(v).attr("__name__"))) + " " +
                         shown.substr(0, 80));
  }
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow != 0) {
    throw py::value_error("runtime." + key + ": " + shown.substr(0, 80) +
                          " is out of range (it does not fit 64 bits)");
  }
  return x;
}

// Python values to runtime options and policy parameters, validated (sched::validate).
sched::RuntimeOptions runtime_from(const py::dict& runtime, const py::dict& params) {
  sched::RuntimeOptions rt;
  for (const auto& [k, v] : runtime) {
    const std::string key = py::str(k);
    if (py::isinstance<py::str>(v)) {
      sched::set_runtime_option(rt, key, v.cast<std::string>());
    } else {
      sched::set_runtime_option(rt, key, runtime_int(key, v));
    }
  }
  rt.policy_params = policy_param_text(rt.policy, params);
  sched::validate(rt);
  return rt;
}

// What `pypto-sim run` does with a named chip (no --chip auto), through the same library
// calls: resolve the chip, load the trace, check a recording's cores, simulate, and write
// the reports when out_dir is given.
// Stops a replay on a pending interruption (Python's KeyboardInterrupt, polled).
class StopOnInterrupt final : public sim::RunObserver {
 public:
  unsigned events() const override { return sim::kRunProgress; }
  void on_progress(std::uint64_t done, std::uint64_t total) override {
    if (common::interrupt_requested()) {
      throw Interrupted("interrupted while replaying (" + std::to_string(done) + " of " +
                        std::to_string(total) + " tasks done)");
    }
  }
};

py::object run_point(const std::string& path, const std::string& prof, const std::string& chip_name,
                     const std::string& config, const std::vector<std::string>& sets,
                     const py::dict& runtime, const py::dict& params, const std::string& out_dir,
                     bool check_only) {
  const sched::RuntimeOptions rt = runtime_from(runtime, params);
  std::string json;
  {
    // Ctrl-C stops a long replay: polled while loading and simulating (the report writers
    // poll on their own).
    const PollPythonSignals poll;
    py::gil_scoped_release nogil;
    const model::ChipConfig chip = model::resolve_chip_config(chip_name, config, sets);
    if (!check_only) {
      trace::LoadOptions lo;
      lo.prof_path = prof;
      lo.runtime = rt;
      lo.progress = [&path](std::uint64_t, std::uint64_t) {
        common::check_interrupt("loading " + path);
      };
      const trace::LoadedTrace trace = trace::load_trace(path, lo, chip);
      if (trace.recorded_cores) model::check_recorded_cores(chip, *trace.recorded_cores);
      StopOnInterrupt stop;
      sim::SimOptions so;
      so.observers.push_back(&stop);
      so.runtime = rt;
      so.record_timeline = so.record_aicpu_events = !out_dir.empty();
      const sim::SimResult r = sim::simulate(trace.graph, chip, so);
      if (!out_dir.empty()) {
        sim::write_reports(out_dir, trace.graph, chip, r, sim::ReportOptions{});
      }
      json = sim::stats_json(r).dump();
    }
  }
  if (PollPythonSignals::restore_pending()) throw py::error_already_set();
  if (check_only) return py::none();
  return py::module_::import("json").attr("loads")(json);
}

}  // namespace

sched::ParamText policy_param_text(const std::string& policy, const py::dict& params) {
  const auto& specs = sched::Registry::global().find(policy).params;
  sched::ParamText out;
  for (const auto& [k, v] : params) {
    if (!py::isinstance<py::str>(k)) {
      throw py::type_error("policy '" + policy + "': parameter names are str, got " +
                           std::string(py::repr(k)));
    }
    const std::string key = py::str(k);
    const auto spec = std::find_if(specs.begin(), specs.end(),
                                   [&](const sched::ParamSpec& p) { return p.name == key; });
    const std::string shown = std::string(py::repr(v)).substr(0, 80) + " (" +
                              std::string(py::str(py::type::handle_of(v).attr("__name__"))) + ")";
    const std::string where = "policy '" + policy + "': parameter " + key + " = " + shown;
    const bool is_bool = PyBool_Check(v.ptr());
    const bool is_int = !is_bool && !PyFloat_Check(v.ptr()) && PyIndex_Check(v.ptr());
    if (spec == specs.end()) {
      out[key] = std::string(py::str(v));  // resolve() names it, with a suggestion
    } else if (spec->type == sched::ParamType::kBool) {
      if (!is_bool) throw py::type_error(where + ": expected a bool (True or False)");
      out[key] = v.cast<bool>() ? "true" : "false";
    } else if (spec->type == sched::ParamType::kInt) {
      if (!is_int) throw py::type_error(where + ": expected an int");
      const py::object n = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
      int overflow = 0;
      (void)PyLong_AsLongLongAndOverflow(n.ptr(), &overflow);
      if (overflow != 0) {  // resolve() would read no integer in it: say what is wrong
        throw ConfigError("policy '" + policy + "': parameter " + key + " = " +
                          std::string(py::str(n)).substr(0, 80) + " is out of range [" +
                          std::to_string(std::llround(spec->min)) + ", " +
                          std::to_string(std::llround(spec->max)) + "]");
      }
      out[key] = py::str(n);
    } else {
      if (!is_int && !PyFloat_Check(v.ptr())) {
        throw py::type_error(where + ": expected a float (or an int)");
      }
      const double d = v.cast<double>();
      if (!std::isfinite(d)) throw ConfigError(where + ": expected a finite number");
      out[key] = is_int ? std::string(py::str(v)) : std::string(py::repr(py::float_(d)));
    }
  }
  return out;
}

InPython::InPython() { ++g_in_python; }
InPython::~InPython() { --g_in_python; }

void forward_signals_to_python() { common::set_signal_forwarder(forward_signal_to_python); }

bool is_python_policy(const std::string& name) { return python_policies().count(name) != 0; }

void bind_policies(py::module_& m) {
  py::enum_<CoreType>(m, "CoreType")
      .value("AIC", CoreType::kAic)
      .value("AIV", CoreType::kAiv)
      .value("AICPU", CoreType::kAicpu)
      .value("HUB", CoreType::kHub);
  py::enum_<sched::AicpuOp>(m, "AicpuOp")
      .value("RESOLVE_EDGE", sched::AicpuOp::kResolveEdge)
      .value("QUEUE_OP", sched::AicpuOp::kQueueOp)
      .value("FAIR_SCAN", sched::AicpuOp::kFairScan);
  py::enum_<PublishPoint>(m, "PublishPoint")
      .value("STAGED", PublishPoint::kStaged)
      .value("ROUND_END", PublishPoint::kRoundEnd);
  m.attr("NO_CORE") = common::kNoCore;
  m.attr("NO_THREAD") = sched::kNoThread;
  m.attr("NO_TASK") = common::kNoTask;

  py::class_<TaskListView>(m, "TaskList", "A read-only list of task ids, [0] the oldest.")
      .def("__len__", &TaskListView::size)
      .def("__getitem__",
           [](const TaskListView& v, const py::object& index) {
             const std::int64_t n = static_cast<std::int64_t>(v.size());
             std::int64_t i = arg_int("TaskList[i]", "index", index, -n, n);
             if (i < 0) i += n;
             return v[static_cast<std::size_t>(i)];
           })
      .def("tolist", [](const TaskListView& v) {
        std::vector<TaskId> out(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) out[i] = v[i];
        return out;
      });

  // Every id a hook passes is checked against the machine or the graph (IndexError or
  // TypeError naming the method, the argument and its range): the views index plain arrays.
  using O = const py::object&;
  py::class_<MachineView>(m, "MachineView", "The runtime's view of the machine (read-only).")
      .def("num_threads", &MachineView::num_threads)
      .def("num_cores",
           [](const MachineView& v, O ct) { return v.num_cores(dispatch_type("num_cores", ct)); })
      .def("core_type",
           [](const MachineView& v, O c) { return v.core_type(core_arg(v, "core_type", c)); })
      .def("owner", [](const MachineView& v, O c) { return v.owner(core_arg(v, "owner", c)); })
      .def("first_core",
           [](const MachineView& v, O t, O ct) {
             return v.first_core(thread_arg(v, "first_core", t), dispatch_type("first_core", ct));
           })
      .def("end_core",
           [](const MachineView& v, O t, O ct) {
             return v.end_core(thread_arg(v, "end_core", t), dispatch_type("end_core", ct));
           })
      .def("running",
           [](const MachineView& v, O c) { return v.running(core_arg(v, "running", c)); })
      .def("pending",
           [](const MachineView& v, O c) { return v.pending(core_arg(v, "pending", c)); })
      .def("is_idle",
           [](const MachineView& v, O c) { return v.is_idle(core_arg(v, "is_idle", c)); })
      .def("has_free_slot", [](const MachineView& v,
                               O c) { return v.has_free_slot(core_arg(v, "has_free_slot", c)); })
      .def("acknowledged",
           [](const MachineView& v, O c) { return v.acknowledged(core_arg(v, "acknowledged", c)); })
      .def("idle_count",
           [](const MachineView& v, O t, O ct) {
             return v.idle_count(thread_arg(v, "idle_count", t), dispatch_type("idle_count", ct));
           })
      .def("idle_core",
           [](const MachineView& v, O t, O ct, O i) {
             const ThreadId th = thread_arg(v, "idle_core", t);
             const CoreType type = dispatch_type("idle_core", ct);
             const auto n = static_cast<std::int64_t>(v.idle_count(th, type));
             return v.idle_core(th, type,
                                static_cast<std::size_t>(arg_int("idle_core", "i", i, 0, n)));
           })
      .def("free_pending_count",
           [](const MachineView& v, O t, O ct) {
             return v.free_pending_count(thread_arg(v, "free_pending_count", t),
                                         dispatch_type("free_pending_count", ct));
           })
      .def("other_thread_idle",
           [](const MachineView& v, O t, O ct) {
             return v.other_thread_idle(thread_arg(v, "other_thread_idle", t),
                                        dispatch_type("other_thread_idle", ct));
           })
      .def("remaining_unsent",
           [](const MachineView& v, O d, O ct) {
             return v.remaining_unsent(device_task_arg(v, "remaining_unsent", d),
                                       dispatch_type("remaining_unsent", ct));
           })
      .def("unsent_tasks",
           [](const MachineView& v, O d) {
             return v.unsent_tasks(device_task_arg(v, "unsent_tasks", d));
           })
      .def("shared_queued",
           [](const MachineView& v, O d, O ct) {
             return v.shared_queued(device_task_arg(v, "shared_queued", d),
                                    dispatch_type("shared_queued", ct));
           })
      .def(
          "staged",
          [](const MachineView& v, O t, O ct) {
            return v.staged(thread_arg(v, "staged", t), dispatch_type("staged", ct));
          },
          py::keep_alive<0, 1>())
      .def("staged_count",
           [](const MachineView& v, O t, O ct) {
             return v.staged_count(thread_arg(v, "staged_count", t),
                                   dispatch_type("staged_count", ct));
           })
      .def("duration_estimate_ps",
           [](const MachineView& v, O t) {
             return v.duration_estimate_ps(task_arg(v, "duration_estimate_ps", t));
           })
      .def("bytes_read",
           [](const MachineView& v, O t) { return v.bytes_read(task_arg(v, "bytes_read", t)); })
      .def("bytes_written", [](const MachineView& v,
                               O t) { return v.bytes_written(task_arg(v, "bytes_written", t)); })
      .def("num_tasks", [](const MachineView& v) { return v.graph().num_tasks(); })
      .def("task_type", [](const MachineView& v,
                           O t) { return v.graph().core_type[task_arg(v, "task_type", t)]; })
      .def("device_task", [](const MachineView& v,
                             O t) { return v.graph().device_task[task_arg(v, "device_task", t)]; })
      .def("successors",
           [](const MachineView& v, O task) {
             const TaskId t = task_arg(v, "successors", task);
             const auto& g = v.graph();
             return std::vector<TaskId>(g.succ.begin() + g.succ_first(t),
                                        g.succ.begin() + g.succ_last(t));
           })
      .def("pred_count", [](const MachineView& v,
                            O t) { return v.graph().pred_count[task_arg(v, "pred_count", t)]; })
      .def("device_task_range", [](const MachineView& v, O d) {
        const auto& dt = v.graph().device_tasks[device_task_arg(v, "device_task_range", d)];
        return std::make_pair(dt.first_task, dt.first_task + dt.num_tasks);
      });

  py::class_<ThreadContext>(m, "ThreadContext",
                            "The thread a hook runs on (valid during the call only).")
      .def_property_readonly("view", &ThreadContext::view, py::return_value_policy::reference)
      .def_property_readonly("thread", &ThreadContext::thread)
      .def("now", &ThreadContext::now)
      .def("charge", [](const ThreadContext& c, sched::AicpuOp op, O n) {
        c.charge(op,
                 static_cast<std::uint32_t>(arg_int("charge", "n", n, 0, std::int64_t{1} << 32)));
      });

  py::class_<Policy, PyPolicy>(m, "Policy", "A scheduling policy; the defaults are fifo's.")
      .def(py::init<>())
      .def("events", &Policy::events)
      .def("setup", &Policy::setup)
      .def("send_before_resolve", &Policy::send_before_resolve)
      .def("direct_send", &Policy::direct_send)
      .def("pick_staged",
           [](Policy& p, ThreadContext& c, CoreType ct, const TaskListView& s) -> py::object {
             const StagedPick r = p.Policy::pick_staged(c, ct, s);
             if (r.index == sched::kNoPick) return py::none();
             return py::make_tuple(r.index, r.core);
           })
      .def("publish_staged", &Policy::publish_staged)
      .def("pick_device_task", &Policy::pick_device_task)
      .def("fill_quota", &Policy::fill_quota)
      .def("pick_shared", &Policy::pick_shared)
      .def("pick_core", &Policy::pick_core)
      .def("fill_pending_slot", &Policy::fill_pending_slot)
      .def("publish_idle", &Policy::publish_idle)
      .def("steal_victim", &Policy::steal_victim)
      .def("pick_stolen", &Policy::pick_stolen)
      .def_static("last_wave_quota", &Policy::last_wave_quota);

  m.def(
      "register_policy",
      [](const std::string& name, const py::object& cls, const std::string& description,
         const py::list& params) {
        if (!py::isinstance<py::type>(cls) ||
            !PyObject_IsSubclass(cls.ptr(), py::type::of<Policy>().ptr())) {
          throw ConfigError("register_policy('" + name + "'): expected a subclass of " +
                            "pypto.sim.Policy, got " + std::string(py::str(cls)));
        }
        std::vector<sched::ParamSpec> specs;
        for (const auto& item : params) {
          const py::dict d = item.cast<py::dict>();
          sched::ParamSpec p;
          p.name = d["name"].cast<std::string>();
          p.type = param_type(d.contains("type") ? d["type"].cast<std::string>() : "float");
          p.default_value = d["default"].cast<double>();
          // Unbounded: an int's range stops at 2^53, where doubles stop holding every int.
          const double bound = p.type == sched::ParamType::kInt ? 9007199254740992.0 : 1e300;
          p.min = d.contains("min") ? d["min"].cast<double>() : -bound;
          p.max = d.contains("max") ? d["max"].cast<double>() : bound;
          p.doc = d.contains("doc") ? d["doc"].cast<std::string>() : "";
          specs.push_back(std::move(p));
        }
        const std::vector<sched::ParamSpec> declared = specs;
        sched::Registry::global().add(
            name, description, std::move(specs),
            [cls, declared, name](const sched::PolicyParams& values) -> std::unique_ptr<Policy> {
              py::gil_scoped_acquire gil;
              py::object obj;
              try {
                const InPython running;
                obj = cls();
              } catch (py::error_already_set& e) {
                if (e.matches(PyExc_KeyboardInterrupt) && interrupt_signal() != 0) {
                  throw Interrupted("interrupted while creating scheduling policy '" + name + "'");
                }
                const py::object value = e.value();
                if (py::hasattr(value, "add_note")) {
                  value.attr("add_note")("in creating scheduling policy '" + name + "' (" +
                                         std::string(py::str(cls.attr("__qualname__"))) + ")");
                }
                throw;
              }
              py::dict params;
              for (std::size_t i = 0; i < declared.size(); ++i) {
                params[py::str(declared[i].name)] = typed(declared[i], values.values()[i].second);
              }
              obj.attr("params") = params;
              Policy* p = obj.cast<Policy*>();
              return std::make_unique<Held>(std::move(obj), p, overridden_hooks(cls));
            });
        python_policies().insert(name);
      },
      py::arg("name"), py::arg("cls"), py::arg("description") = "", py::arg("params") = py::list(),
      "Registers a pypto.sim.Policy subclass under `name`.");
  m.def(
      "unregister_policy",
      [](const std::string& name) {
        if (python_policies().erase(name) == 0) {
          if (sched::Registry::global().contains(name)) {
            throw ConfigError("policy '" + name + "' was not registered from Python");
          }
          return false;
        }
        return sched::Registry::global().remove(name);
      },
      py::arg("name"), "Removes a registered Python policy; False if there was none.");
  m.def(
      "replay",
      [](const std::string& path, const std::string& chip_name, const py::dict& runtime,
         const py::dict& params) {
        return run_point(path, "", chip_name, "", {}, runtime, params, "", false);
      },
      py::arg("path"), py::arg("chip") = "a2", py::arg("runtime") = py::dict(),
      py::arg("params") = py::dict(),
      "Replays a trace file (as pypto-sim run --no-trace) and returns its stats.json.");
  m.def("run_point", &run_point, py::arg("path"), py::arg("prof") = "", py::arg("chip") = "",
        py::arg("config") = "", py::arg("sets") = std::vector<std::string>(),
        py::arg("runtime") = py::dict(), py::arg("params") = py::dict(), py::arg("out_dir") = "",
        py::arg("check_only") = false,
        "One point of a sweep (pypto.sweep): as pypto-sim run TRACE [--prof] [--chip|--config] "
        "[--set]... with runtime options and policy parameters; writes stats.json, trace.json "
        "and swim.json to out_dir unless it is empty; returns the stats.json dict. check_only: "
        "validates the chip, the overrides, the options and the parameters, runs nothing and "
        "returns None.");
}

}  // namespace pypto::bindings
