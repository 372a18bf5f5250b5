// SPDX-License-Identifier: Apache-2.0
// pypto._C: the thin native layer under the Python frontend. It converts Python values and
// hands the traced IR to the compiler and each call to the launch layer (frontend/launch/:
// simulation, execution of every task in simulated order, reports). Errors keep their type:
// ConfigError, TraceError and PolicyError become pypto's ValueError subclass, ModelError its
// RuntimeError subclass.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cli_bindings.h"
#include "policy_bindings.h"
#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"
#include "pypto/common/one_line.h"
#include "pypto/compiler/compile.h"
#include "pypto/compiler/op_table.h"
#include "pypto/compiler/program.h"
#include "pypto/launch/device_run.h"
#include "pypto/launch/launch.h"
#include "pypto/model/config_loader.h"
#include "pypto/sched/registry.h"
#include "pypto/sched/runtime_options.h"
#include "pypto/sim/report.h"
#include "pypto/sim/simulation.h"

namespace py = pybind11;
using namespace pypto;

namespace {

// A SIM call's launch options as converted from its options dict, with a copy of that dict:
// the next call with equal options (every cached call of a kernel) takes them from here.
// Touched only with the GIL held.
struct LaunchOptionsMemo {
  py::object options;          // a deep copy of the dict `lo` came from; None before the first
  compiler::LaunchOptions lo;  // without the policy's parameters, which may change per call
};

// Compiled kernels live in Python as this handle (shared: launches never mutate it).
struct KernelHandle {
  std::shared_ptr<const compiler::CompiledKernel> kernel;
  std::string name;
  std::string ir_json;
  // SIM calls started with this kernel (run_sim and submit_sim): the frontend waits for the
  // report of a kernel's first call (see pypto/_backend.py).
  std::shared_ptr<std::atomic<std::uint64_t>> sim_calls =
      std::make_shared<std::atomic<std::uint64_t>>(0);
  std::shared_ptr<LaunchOptionsMemo> options_memo = std::make_shared<LaunchOptionsMemo>();
};

// Hooks for tests and benchmarks: how many times compile() ran in this process, and how many
// times a SIM call converted its options dict (not taken from a kernel's memo).
std::uint64_t g_compiles = 0;
std::uint64_t g_option_conversions = 0;

// Parameters per policy name for SIM calls (pypto.sim.set_policy_params), already checked.
std::map<std::string, sched::ParamText> g_policy_params;

// An attribute name made once as an interned Python string, so that a call's lookups build
// no strings. Never released: the module's static destructors run after the interpreter's.
py::handle attr_name(const char* name) { return py::handle(PyUnicode_InternFromString(name)); }

compiler::DType dtype_name(const py::handle& dtype) {
  const std::string s = py::str(dtype);  // "torch.float16"
  const std::string name = s.rfind("torch.", 0) == 0 ? s.substr(6) : s;
  compiler::DType d;
  if (!model::parse_dtype(name, &d)) {
    throw ConfigError("tensors of dtype " + s +
                      " are not supported in SIM (float32, float16, bfloat16, int8, int16, "
                      "int32, int64, bool)");
  }
  return d;
}

// The tensor's dtype; each dtype object's name is parsed once (torch's dtypes are singletons,
// and each one seen is kept referenced, so its address is never another object's). The list
// is shared by the process: safe because every caller holds the GIL.
compiler::DType dtype_of(const py::handle& tensor) {
  static const py::handle kDtype = attr_name("dtype");
  static auto* seen = new std::vector<std::pair<PyObject*, compiler::DType>>;
  const py::object dtype = tensor.attr(kDtype);
  for (const auto& [obj, d] : *seen) {
    if (obj == dtype.ptr()) return d;
  }
  const compiler::DType d = dtype_name(dtype);
  seen->emplace_back(dtype.inc_ref().ptr(), d);
  return d;
}

// The runtime_options dict (already checked by pypto._options) through the table's setters,
// so the C++ rules apply to it as to the CLI flags.
sched::RuntimeOptions runtime_options(const py::dict& options) {
  sched::RuntimeOptions o;
  if (!options.contains("runtime_options")) return o;
  const py::dict rt = options["runtime_options"].cast<py::dict>();
  for (const sched::OptionSpec& spec : sched::kRuntimeOptionSpecs) {
    const py::str key(spec.name.data(), spec.name.size());
    if (!rt.contains(key) || rt[key].is_none()) continue;
    if (spec.type == sched::OptionType::kStringList) {
      sched::set_runtime_option(o, spec.name, rt[key].cast<std::vector<std::string>>());
    } else if (spec.type == sched::OptionType::kPolicy && py::isinstance<py::str>(rt[key])) {
      sched::set_runtime_option(o, spec.name, rt[key].cast<std::string>());  // a policy name
    } else {
      sched::set_runtime_option(o, spec.name, rt[key].cast<std::int64_t>());
    }
  }
  if (const auto it = g_policy_params.find(o.policy); it != g_policy_params.end()) {
    o.policy_params = it->second;
  }
  sched::validate(o);
  return o;
}

// One merge setting of pass_options ({key: factor} or {key: (factor, side)}, checked by
// pypto._options) as the compiler's entries; the compiler owns what they mean.
std::vector<compiler::MergeEntry> merge_entries(const py::dict& d) {
  std::vector<compiler::MergeEntry> out;
  for (const auto& kv : d) {
    compiler::MergeEntry e;
    e.key = py::str(kv.first).cast<std::string>();
    if (py::isinstance<py::tuple>(kv.second)) {
      const py::tuple t = kv.second.cast<py::tuple>();
      e.factor = t[0].cast<std::int64_t>();
      if (t.size() > 1) {
        // PyPTO's pair is (count, side): side 0 any, 1 left, 2 right, or the words.
        if (py::isinstance<py::str>(t[1])) {
          e.side = t[1].cast<std::string>();
        } else {
          const std::int64_t side = t[1].cast<std::int64_t>();
          e.side = side == 1 ? "left" : side == 2 ? "right" : "";
        }
      }
    } else {
      e.factor = kv.second.cast<std::int64_t>();
    }
    out.push_back(std::move(e));
  }
  return out;
}

// The launch options of a call: runtime_options, and the pass_options the partition reads.
compiler::LaunchOptions launch_options(const py::dict& options) {
  compiler::LaunchOptions lo;
  lo.runtime = runtime_options(options);
  if (!options.contains("pass_options")) return lo;
  const py::dict po = options["pass_options"].cast<py::dict>();
  using Mode = compiler::MergeSetting::Mode;
  const auto setting = [&](const char* name, Mode empty_mode, compiler::MergeSetting* out) {
    if (!po.contains(name) || po[name].is_none()) return;
    *out =
        compiler::parse_merge_setting(name, merge_entries(po[name].cast<py::dict>()), empty_mode);
  };
  setting("vec_nbuffer_setting", Mode::kAuto, &lo.partition.vec_nbuffer);
  setting("cube_l1_reuse_setting", Mode::kAuto, &lo.partition.cube_l1_reuse);
  setting("cube_nbuffer_setting", Mode::kAuto, &lo.partition.cube_nbuffer);
  const auto int_option = [&](const char* name, auto* out) {
    if (po.contains(name) && !po[name].is_none()) {
      *out = po[name].cast<std::remove_pointer_t<decltype(out)>>();
    }
  };
  int_option("pg_upper_bound", &lo.partition.cycle_budget);
  int_option("pg_parallel_lower_bound", &lo.partition.parallel_lower_bound);
  int_option("pg_lower_bound", &lo.partition.lower_bound);
  int_option("mg_vec_parallel_lb", &lo.partition.vec_parallel_lb);
  int_option("mg_copyin_upper_bound", &lo.partition.copyin_upper_bytes);
  // The mode keys PyPTO replaced by the settings' own forms: 0 turns that merge off.
  const std::pair<const char*, compiler::MergeSetting*> modes[] = {
      {"vec_nbuffer_mode", &lo.partition.vec_nbuffer},
      {"cube_l1_reuse_mode", &lo.partition.cube_l1_reuse},
      {"cube_nbuffer_mode", &lo.partition.cube_nbuffer}};
  for (const auto& [name, setting] : modes) {
    if (!po.contains(name) || po[name].is_none()) continue;
    if (po[name].cast<std::int64_t>() == 0) {
      setting->mode = Mode::kOff;
    } else if (setting->mode == Mode::kOff && std::string(name) == "cube_nbuffer_mode") {
      setting->mode = Mode::kAuto;  // on, with no setting: automatic
    }
  }
  return lo;
}

// pypto._C.runtime_option_schema(): sched::kRuntimeOptionSpecs as a list of dicts, the
// source of the runtime_options schema of frontend/pypto/_options.py.
py::list runtime_option_schema() {
  py::list out;
  for (const sched::OptionSpec& spec : sched::kRuntimeOptionSpecs) {
    py::dict d;
    d["name"] = std::string(spec.name);
    d["type"] = spec.type == sched::OptionType::kStringList ? "list[str]"
                : spec.type == sched::OptionType::kPolicy   ? "policy"
                : spec.type == sched::OptionType::kBool     ? "bool"
                                                            : "int";
    d["min"] = spec.min;
    d["max"] = spec.max;
    if (spec.type == sched::OptionType::kStringList) {
      d["default"] = py::list();
    } else if (spec.fixed_default) {
      d["default"] = spec.default_value;
    } else {
      d["default"] = py::none();
    }
    d["auto_value"] = spec.has_auto_value ? py::object(py::int_(spec.auto_value)) : py::none();
    d["out_of_range"] = spec.out_of_range == sched::OutOfRange::kAutomatic ? "automatic" : "error";
    d["unit"] = std::string(spec.unit);
    d["doc"] = std::string(spec.doc);
    py::list acts;
    if ((spec.acts_on & sched::kActsFrontend) != 0) acts.append("frontend");
    if ((spec.acts_on & sched::kActsSim) != 0) acts.append("sim");
    if ((spec.acts_on & sched::kActsReplay) != 0) acts.append("replay");
    d["acts_on"] = acts;
    out.append(d);
  }
  return out;
}

// The chip a SIM run models: $PYPTO_SIM_CHIP (a preset name or a YAML file), else A2. Kept
// per name and $PYPTO_CONFIG_DIR (where a preset is looked up), so that loading it early
// (prepare_sim) never gives a call another chip than loading it then.
const model::ChipConfig& sim_chip() {
  static std::map<std::pair<std::string, std::string>, model::ChipConfig> cache;
  const char* env = std::getenv("PYPTO_SIM_CHIP");
  const std::string name = env != nullptr && *env != '\0' ? env : "a2";
  const char* dir = std::getenv("PYPTO_CONFIG_DIR");
  const std::pair<std::string, std::string> key{name, dir != nullptr ? dir : ""};
  auto it = cache.find(key);
  if (it == cache.end()) {
    const bool file =
        name.find('/') != std::string::npos || name.find(".yaml") != std::string::npos;
    it = cache
             .emplace(key, file ? model::resolve_chip_config("", name, {})
                                : model::resolve_chip_config(name, "", {}))
             .first;
  }
  return it->second;
}

std::string output_dir(const std::string& kernel) {
  const char* env = std::getenv("PYPTO_OUTPUT_DIR");
  const std::string root = env != nullptr && *env != '\0' ? env : "output";
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto usec =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
      1000000;
  char ts[32];
  std::strftime(ts, sizeof ts, "%Y%m%d_%H%M%S", std::localtime(&t));
  char tail[32];
  std::snprintf(tail, sizeof tail, "_%06lld_%d", static_cast<long long>(usec),
                static_cast<int>(::getpid()));
  return root + "/" + kernel + "_" + ts + tail;
}

KernelHandle compile_kernel(const py::object& ir, const py::object& /*options*/) {
  KernelHandle h;
  h.ir_json = py::str(py::module_::import("json").attr("dumps")(ir));
  h.kernel = compiler::compile(h.ir_json);
  h.name = compiler::kernel_name(*h.kernel);
  ++g_compiles;
  return h;
}

std::vector<compiler::LaunchTensor> launch_tensors(const py::list& tensors) {
  static const py::handle kShape = attr_name("shape"), kDataPtr = attr_name("data_ptr"),
                          kNumel = attr_name("numel"), kElementSize = attr_name("element_size");
  std::vector<compiler::LaunchTensor> args;
  args.reserve(tensors.size());
  for (const auto& t : tensors) {
    compiler::LaunchTensor a;
    a.dtype = dtype_of(t);
    for (const auto& d : t.attr(kShape)) a.shape.push_back(d.cast<std::int64_t>());
    a.data = reinterpret_cast<std::uint8_t*>(t.attr(kDataPtr)().cast<std::uintptr_t>());
    a.size_bytes =
        t.attr(kNumel)().cast<std::uint64_t>() * t.attr(kElementSize)().cast<std::uint64_t>();
    args.push_back(std::move(a));
  }
  return args;
}

std::map<std::string, std::int64_t> launch_bindings(const py::dict& bindings) {
  std::map<std::string, std::int64_t> b;
  for (const auto& kv : bindings) b[kv.first.cast<std::string>()] = kv.second.cast<std::int64_t>();
  return b;
}

// Ctrl-C during a SIM call: Python's own handler only marks the signal, so the run polls
// for it (the simulation loop calls this every few thousand tasks, without the GIL). The
// exception the handler raised (KeyboardInterrupt, or a script's own) is kept and raised
// when the call returns; no report is left (the writers' temporaries are removed).
PyObject* g_interrupt[3] = {nullptr, nullptr, nullptr};  // type, value, traceback

bool python_interrupt_pending() {
  py::gil_scoped_acquire gil;
  if (g_interrupt[0] != nullptr) return true;
  if (PyErr_CheckSignals() == 0) return false;
  PyErr_Fetch(&g_interrupt[0], &g_interrupt[1], &g_interrupt[2]);
  if (g_interrupt[0] == nullptr) g_interrupt[0] = Py_NewRef(PyExc_KeyboardInterrupt);
  return true;
}

}  // namespace

bindings::PollPythonSignals::PollPythonSignals() {
  common::set_interrupt_poll(python_interrupt_pending);
}
bindings::PollPythonSignals::~PollPythonSignals() { common::set_interrupt_poll(nullptr); }
using bindings::PollPythonSignals;

bool bindings::PollPythonSignals::restore_pending() {
  if (g_interrupt[0] == nullptr) return false;
  PyErr_Restore(g_interrupt[0], g_interrupt[1], g_interrupt[2]);  // takes the references
  g_interrupt[0] = g_interrupt[1] = g_interrupt[2] = nullptr;
  return true;
}

namespace {

py::dict sim_run_dict(const launch::SimRun& run) {
  py::dict r;
  r["path"] = run.report_dir;
  r["stats"] = py::module_::import("json").attr("loads")(sim::stats_json(run.result).dump());
  r["log"] = run.launch.log;
  r["tile_ops"] = run.launch.tile_ops;
  r["tasks"] = run.launch.graph.num_tasks();
  return r;
}

// launch_options(options) for a SIM call of `h`: converted when the dict differs from the
// kernel's last one, else the memo's conversion (the dict's conversion is pure; the policy's
// parameters and the policy's check are applied again, as they may have changed since).
compiler::LaunchOptions sim_launch_options(const KernelHandle& h, const py::dict& options) {
  LaunchOptionsMemo& m = *h.options_memo;
  if (m.options && options.equal(m.options)) {
    compiler::LaunchOptions lo = m.lo;
    if (const auto it = g_policy_params.find(lo.runtime.policy); it != g_policy_params.end()) {
      lo.runtime.policy_params = it->second;
    }
    sched::validate(lo.runtime);
    return lo;
  }
  compiler::LaunchOptions lo = launch_options(options);
  ++g_option_conversions;
  m.options = py::module_::import("copy").attr("deepcopy")(options);
  m.lo = lo;
  m.lo.runtime.policy_params.clear();
  return lo;
}

// What run_sim and submit_sim take from their arguments.
struct SimCall {
  compiler::LaunchOptions lo;
  std::vector<compiler::LaunchTensor> args;
  launch::Bindings bindings;
  std::string report_dir;
};

SimCall sim_call(const KernelHandle& h, const py::list& tensors, const py::dict& bindings,
                 const py::dict& options) {
  SimCall c;
  c.lo = sim_launch_options(h, options);
  c.args = launch_tensors(tensors);
  c.bindings = launch_bindings(bindings);
  c.report_dir = output_dir(h.name);
  return c;
}

// The whole call on this thread (launch::run_sim), from arguments already converted.
launch::SimRun run_sim_call(const KernelHandle& h, const SimCall& c) {
  ++*h.sim_calls;
  const PollPythonSignals poll;
  py::gil_scoped_release nogil;  // instantiation, simulation and execution are pure C++
  return launch::run_sim(*h.kernel, c.args, c.bindings, c.lo, sim_chip(), c.report_dir);
}

py::dict run_sim(const KernelHandle& h, const py::list& tensors, const py::dict& bindings,
                 const py::dict& options) {
  return sim_run_dict(run_sim_call(h, sim_call(h, tensors, bindings, options)));
}

// A call whose timing run and reports follow on the report worker (launch::submit_sim).
// `path`, `log`, `tasks` and `tile_ops` are known at once; wait() gives run_sim's dict.
struct PendingSim {
  std::optional<launch::SimTicket> ticket;  // empty: run on the calling thread, see submit
  py::dict result;                          // run_sim's dict once known
  std::string path;
  std::vector<std::string> log;
  std::uint64_t tasks = 0, tile_ops = 0;

  py::dict wait() {
    if (ticket) {
      const launch::SimRun* run = nullptr;
      {
        const PollPythonSignals poll;
        py::gil_scoped_release nogil;
        run = &ticket->wait();
      }
      result = sim_run_dict(*run);
      ticket.reset();  // the run (and its launch) is freed with the ticket's last reference
    }
    return result;
  }
  bool done() const { return !ticket || ticket->done(); }
};

PendingSim submit_sim(const KernelHandle& h, const py::list& tensors, const py::dict& bindings,
                      const py::dict& options) {
  const SimCall c = sim_call(h, tensors, bindings, options);
  PendingSim p;
  p.path = c.report_dir;
  if (bindings::is_python_policy(c.lo.runtime.policy)) {
    // Its hooks run Python: keep the whole run on this thread, as run_sim does.
    const launch::SimRun run = run_sim_call(h, c);
    p.result = sim_run_dict(run);
    p.log = run.launch.log;
    p.tasks = run.launch.graph.num_tasks();
    p.tile_ops = run.launch.tile_ops;
    return p;
  }
  ++*h.sim_calls;
  {
    const PollPythonSignals poll;
    py::gil_scoped_release nogil;
    p.ticket.emplace(
        launch::submit_sim(*h.kernel, c.args, c.bindings, c.lo, sim_chip(), c.report_dir));
  }
  const compiler::Launch& l = p.ticket->launch();
  p.log = l.log;
  p.tasks = l.graph.num_tasks();
  p.tile_ops = l.tile_ops;
  return p;
}

// The hardware backend on an explicit device (pypto.backends.DeviceBackend): the same
// launch as run_sim, dispatched by the wall-clock runtime; the report folder holds
// device.json and the board recording (topo.json, tilefwk_L1_prof_data.json, dyn_topo.txt).
py::dict run_device(const KernelHandle& h, const py::list& tensors, const py::dict& bindings,
                    const py::dict& options, const std::string& device,
                    const std::string& executor) {
  const compiler::LaunchOptions lo = launch_options(options);
  const std::vector<compiler::LaunchTensor> args = launch_tensors(tensors);
  const launch::Bindings b = launch_bindings(bindings);
  const model::ChipConfig& chip = sim_chip();
  launch::DeviceRun run;
  std::string stats;
  {
    py::gil_scoped_release nogil;  // the runtime's threads never touch Python
    run = launch::run_device(*h.kernel, args, b, lo, chip, output_dir(h.name), device, executor);
    stats = launch::device_json(run);
  }
  py::dict r;
  r["path"] = run.report_dir;
  r["stats"] = py::module_::import("json").attr("loads")(stats);
  r["log"] = run.launch.log;
  r["tile_ops"] = run.launch.tile_ops;
  r["tasks"] = run.launch.graph.num_tasks();
  r["prof_path"] = run.recording.prof;
  r["topo_path"] = run.recording.topo;
  r["dyn_topo_path"] = run.recording.dyn_topo;
  return r;
}

void dump_trace(const KernelHandle& h, const py::list& tensors, const py::dict& bindings,
                const py::dict& options, const std::string& path) {
  const compiler::LaunchOptions lo = launch_options(options);
  launch::dump_trace(*h.kernel, launch_tensors(tensors), launch_bindings(bindings), lo, sim_chip(),
                     path);
}

// Builds the launch (tiling, tasks, dependencies, stitching) without running it: the
// compile-throughput benchmark times this.
py::dict instantiate_only(const KernelHandle& h, const py::list& tensors, const py::dict& bindings,
                          const py::dict& options) {
  const compiler::LaunchOptions lo = launch_options(options);
  const launch::TimedLaunch t = launch::instantiate_timed(
      *h.kernel, launch_tensors(tensors), launch_bindings(bindings), lo, sim_chip());
  py::dict r;
  r["tasks"] = t.launch.graph.num_tasks();
  r["tile_ops"] = t.launch.tile_ops;
  r["device_tasks"] = t.launch.graph.device_tasks.size();
  r["seconds"] = t.seconds;
  return r;
}

}  // namespace

// libsystemc.so refers to sc_main (its own main() calls it); this module never uses that
// main, but the symbol must resolve when Python loads the extension.
extern "C" __attribute__((visibility("default"))) int sc_main(int, char**) { return 1; }

PYBIND11_MODULE(_C, m) {
  m.doc() = "pypto-sim native layer: compiler, simulator and reports";
  bindings::bind_policies(m);
  bindings::bind_cli(m);
  py::class_<KernelHandle>(m, "CompiledKernel")
      .def_readonly("name", &KernelHandle::name)
      .def_readonly("ir_json", &KernelHandle::ir_json)
      .def_property_readonly("sim_calls",
                             [](const KernelHandle& h) { return h.sim_calls->load(); });
  m.def("compile", &compile_kernel, py::arg("ir"), py::arg("options"),
        "Compiles a kernel IR dict (frontend/pypto/IR.md) once per specialization.");
  m.def("run_sim", &run_sim, py::arg("compiled"), py::arg("tensors"), py::arg("bindings"),
        py::arg("options"),
        "Runs one launch on the simulator; writes outputs in place and the reports.");
  py::class_<PendingSim>(m, "PendingSim")
      .def_readonly("path", &PendingSim::path)
      .def_readonly("log", &PendingSim::log)
      .def_readonly("tasks", &PendingSim::tasks)
      .def_readonly("tile_ops", &PendingSim::tile_ops)
      .def("done", &PendingSim::done, "Whether the timing run and its reports are finished.")
      .def("wait", &PendingSim::wait,
           "Waits for the timing run and its reports; returns run_sim's dict or raises its "
           "error (Ctrl-C while waiting cancels every pending SIM timing run).");
  m.def("submit_sim", &submit_sim, py::arg("compiled"), py::arg("tensors"), py::arg("bindings"),
        py::arg("options"),
        "Runs one launch's tasks on the tensors now (outputs written in place) and queues its "
        "timing run and reports for the report worker; returns a PendingSim.");
  m.def(
      "wait_sims",
      [] {
        const PollPythonSignals poll;
        py::gil_scoped_release nogil;
        launch::wait_submitted_sims();
      },
      "Waits until every submitted SIM call's timing run and reports are done.");
  m.def(
      "set_report_queue_limits",
      [](std::size_t max_runs, std::uint64_t max_tasks) {
        launch::set_report_queue_limits({max_runs, max_tasks});
      },
      py::arg("max_runs"), py::arg("max_tasks"),
      "Bounds of the report worker's queue (launch::ReportQueueLimits): a cache-hit SIM call "
      "waits while the pending timing runs reach max_runs runs or max_tasks tasks.");
  m.def(
      "report_queue_limits",
      [] {
        const launch::ReportQueueLimits l = launch::report_queue_limits();
        return py::make_tuple(l.max_runs, l.max_tasks);
      },
      "(max_runs, max_tasks) of the report worker's queue.");
  m.def(
      "check_yaml_file",
      [](const std::string& path, const std::string& what) {
        (void)model::load_yaml_file(path, what.c_str());
      },
      py::arg("path"), py::arg("what"),
      "Checks a YAML input by the project's one rule for YAML files (model::load_yaml_file: a "
      "regular file of at most 1 MiB, UTF-8, one document, distinct keys); raises ValueError "
      "naming the file and line.");
  m.def("sim_failures", &launch::take_unobserved_sim_failures,
        "Errors of submitted SIM calls whose report nobody waited for, each returned once.");
  m.def("run_device", &run_device, py::arg("compiled"), py::arg("tensors"), py::arg("bindings"),
        py::arg("options"), py::arg("device"), py::arg("executor") = "",
        "Runs one call on the hardware backend's wall-clock runtime on `device` ('cpu').");
  m.def("device_supported", &launch::device_supported, py::arg("device"));
  m.def("device_executors", &launch::device_executors);
  m.def("dump_trace", &dump_trace, py::arg("compiled"), py::arg("tensors"), py::arg("bindings"),
        py::arg("options"), py::arg("path"),
        "Writes the launch as a native trace that `pypto-sim run` replays.");
  m.def("instantiate", &instantiate_only, py::arg("compiled"), py::arg("tensors"),
        py::arg("bindings"), py::arg("options"),
        "Builds a launch without running it; returns task and tile-op counts and seconds.");
  m.def("runtime_option_schema", &runtime_option_schema,
        "The runtime_options table of sched/: name, type, min, max, default, auto_value, "
        "out_of_range, unit, doc, acts_on.");
  m.def("compile_count", [] { return g_compiles; });
  m.def("option_conversions", [] { return g_option_conversions; });
  m.def(
      "prepare_sim",
      [] {
        launch::start_report_worker();
        ::tzset();  // output_dir's localtime() reads the zone file once
        sim_chip();
      },
      "Does a SIM call's one-time setup now (loads the chip config, starts the report worker); "
      "raises what the call would raise for a bad $PYPTO_SIM_CHIP.");
  m.def(
      "sim_chip_name", [] { return sim_chip().chip.name; },
      "The name of the chip SIM runs model ($PYPTO_SIM_CHIP, else a2).");
  m.def("set_l2_warm", &launch::set_l2_warm_across_calls, py::arg("warm"),
        "Whether SIM calls start from the L2 the previous call on the chip left (default on).");
  m.def("l2_warm", &launch::l2_warm_across_calls);
  m.def("reset_l2", &launch::reset_l2, "Forgets the kept L2 contents: the next call is cold.");
  m.def(
      "chips", [] { return model::list_chip_presets(); }, "The chip presets (configs/*.yaml).");
  m.def("policies", [] {
    std::vector<std::string> names;
    for (const auto& e : sched::Registry::global().list()) names.push_back(e.name);
    return names;
  });
  m.def(
      "policy_info",
      [] {
        py::list out;
        for (const auto& e : sched::Registry::global().list()) {
          py::list params;
          for (const auto& p : e.params) {
            py::dict d;
            d["name"] = p.name;
            d["type"] = std::string(sched::to_string(p.type));
            const auto typed = [&](double v) -> py::object {
              if (p.type == sched::ParamType::kBool) return py::bool_(v != 0);
              if (p.type == sched::ParamType::kInt) return py::int_(static_cast<std::int64_t>(v));
              return py::float_(v);
            };
            d["default"] = typed(p.default_value);
            d["min"] = typed(p.min);
            d["max"] = typed(p.max);
            d["doc"] = p.doc;
            params.append(d);
          }
          py::dict d;
          d["name"] = e.name;
          d["description"] = e.description;
          d["params"] = params;
          out.append(d);
        }
        return out;
      },
      "Every registered policy with its description and declared parameters.");
  m.def(
      "set_policy_params",
      [](const std::string& name, const py::dict& params) {
        sched::ParamText text = bindings::policy_param_text(name, params);
        sched::Registry::global().resolve(name, text);  // throws with a suggestion
        if (text.empty()) {
          g_policy_params.erase(name);
        } else {
          g_policy_params[name] = std::move(text);
        }
      },
      py::arg("name"), py::arg("params"),
      "Sets the parameters later SIM calls under policy `name` use (an empty dict: defaults).");
  m.def(
      "policy_params",
      [](const std::string& name) {
        const auto it = g_policy_params.find(name);
        const sched::PolicyParams p = sched::Registry::global().resolve(
            name, it == g_policy_params.end() ? sched::ParamText{} : it->second);
        const auto& specs = sched::Registry::global().find(name).params;
        py::dict out;
        for (std::size_t i = 0; i < specs.size(); ++i) {
          const double v = p.values()[i].second;
          if (specs[i].type == sched::ParamType::kBool) {
            out[py::str(specs[i].name)] = py::bool_(v != 0);
          } else if (specs[i].type == sched::ParamType::kInt) {
            out[py::str(specs[i].name)] = py::int_(static_cast<std::int64_t>(v));
          } else {
            out[py::str(specs[i].name)] = py::float_(v);
          }
        }
        return out;
      },
      py::arg("name"), "The parameter values SIM calls under policy `name` use now.");
  m.def(
      "op_table",
      [] {
        py::list rows;
        for (const compiler::OpInfo& e : compiler::kOpTable) {
          py::dict r;
          r["name"] = e.name;
          r["family"] = compiler::to_string(e.family);
          r["form"] = compiler::to_string(e.form);
          r["arity"] = compiler::arity(e.form);
          r["dtype_rule"] = compiler::to_string(e.dtype);
          r["needs_vec_tile"] = e.needs_vec_tile;
          rows.append(r);
        }
        return rows;
      },
      "The kernel-IR ops (pypto/compiler/op_table.h): name, family, operand form, arity (-1: "
      "one or more), dtype rule and whether it needs a vec_tile, one dict per op.");
  // The frontend's rank checks and messages take the limit from here (pypto._limits).
  m.attr("max_rank") = compiler::kMaxRank;

  // Typed errors keep their meaning in Python.
  py::object errors = py::module_::import("pypto._errors");
  // Kept for the life of the process (released handles are never destroyed at exit).
  static py::handle value_error = py::object(errors.attr("PyptoValueError")).release();
  static py::handle runtime_error = py::object(errors.attr("PyptoRuntimeError")).release();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ConfigError& e) {
      PyErr_SetObject(value_error.ptr(), py::str(common::one_line(e.what())).ptr());
    } catch (const TraceError& e) {
      PyErr_SetObject(value_error.ptr(), py::str(common::one_line(e.what())).ptr());
    } catch (const PolicyError& e) {
      PyErr_SetObject(value_error.ptr(), py::str(common::one_line(e.what())).ptr());
    } catch (const ModelError& e) {
      PyErr_SetObject(runtime_error.ptr(), py::str(common::one_line(e.what())).ptr());
    } catch (const Interrupted& e) {
      if (g_interrupt[0] != nullptr) {
        PyErr_Restore(g_interrupt[0], g_interrupt[1], g_interrupt[2]);  // takes the references
        g_interrupt[0] = g_interrupt[1] = g_interrupt[2] = nullptr;
      } else {
        PyErr_SetString(PyExc_KeyboardInterrupt, common::one_line(e.what()).c_str());
      }
    } catch (const Error& e) {
      PyErr_SetObject(runtime_error.ptr(), py::str(common::one_line(e.what())).ptr());
    }
  });
}
