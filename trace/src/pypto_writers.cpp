// SPDX-License-Identifier: Apache-2.0
// PyPTO's trace formats of a task graph (pypto_writers.h), through each format's one writer
// (dyn_topo_writer.h, topo_json_writer.h, prof_writer.h; the fixed-latency graph has no other
// producer and is written here). Kernel names are escaped once each.
#include "pypto/trace/pypto_writers.h"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/common/interrupt.h"
#include "pypto/common/output_file.h"
#include "pypto/trace/dyn_topo_writer.h"
#include "pypto/trace/prof_writer.h"
#include "pypto/trace/text_out.h"
#include "pypto/trace/topo_json_writer.h"

namespace pypto::trace {

namespace {

using common::CoreType;
using common::TaskId;

constexpr std::uint32_t kRootShift = 20;  // PyPTO's taskId: root << 20 | op index
constexpr std::uint32_t kMaxOpsPerRoot = 1u << kRootShift;
constexpr std::uint32_t kMaxRoots = 1u << (32 - kRootShift);
constexpr std::uint64_t kFirstTick = 1'000'000;

// A failed write stops the writer.
void check(const std::ostream& os) {
  if (!os) throw Error("error while writing the trace");
}

// The buffered text of a trace file (text_out.h), checked as it goes.
class Out : public TextOut {
 public:
  explicit Out(std::ostream& os) : TextOut(os, [&os] { check(os); }), os_(os) {}
  void flush() {
    TextOut::flush();
    check(os_);
  }

 private:
  std::ostream& os_;
};

void require_recorded(const sched::TaskGraph& g, TaskId t) {
  if (g.core_type[t] != CoreType::kHub && !g.has_recorded(t)) {
    throw ConfigError("task " + std::to_string(t) +
                      " has no recorded duration; PyPTO's trace formats carry durations only "
                      "(generate with recorded durations)");
  }
}

// Each task's id within its device task as PyPTO packs it (root index within the device task
// << 20 | index within the root), computed for the device-task grouping `dt_of`.
template <typename DtOf>
std::vector<std::uint32_t> packed_ids(const sched::TaskGraph& g, DtOf dt_of, bool* fits) {
  const std::size_t n = g.num_tasks();
  std::vector<std::uint32_t> id(n);
  std::uint32_t last_dt = 0xFFFFFFFFu, last_root = 0xFFFFFFFFu, local_root = 0, op = 0;
  *fits = true;
  for (TaskId t = 0; t < n; ++t) {
    const std::uint32_t dt = dt_of(t);
    if (dt != last_dt) {
      last_dt = dt;
      last_root = g.root[t];
      local_root = 0;
      op = 0;
    } else if (g.root[t] != last_root) {
      last_root = g.root[t];
      ++local_root;
      op = 0;
    }
    if (local_root >= kMaxRoots || op >= kMaxOpsPerRoot) {
      *fits = false;
      return {};
    }
    id[t] = (local_root << kRootShift) | op++;
  }
  return id;
}

std::vector<std::string> escaped_kernels(const sched::TaskGraph& g) {
  std::vector<std::string> k;
  k.reserve(g.kernel_names.size());
  for (const std::string& name : g.kernel_names) k.push_back(nlohmann::json(name).dump());
  return k;
}

std::string_view kernel_of(const std::vector<std::string>& kernels, const sched::TaskGraph& g,
                           TaskId t) {
  return kernels.empty() ? std::string_view("\"task\"") : std::string_view(kernels[g.kernel[t]]);
}

// Recorded ns as board ticks (nearest).
std::uint64_t ticks_of(std::uint32_t ns, double mhz) {
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(ns) * mhz / 1000.0));
}

void write_prof(const sched::TaskGraph& g, const model::ChipConfig& chip,
                const std::vector<std::uint32_t>& ids, bool one_device_task, std::ostream& os) {
  const std::size_t n = g.num_tasks();
  const std::uint32_t aic = chip.cores.aic;
  const std::uint32_t aiv = chip.cores.aic * chip.cores.aiv_per_aic;
  // Block b: AIC 0..aic-1, AIV aic..aic+aiv-1, then one AICPU block.
  const std::uint32_t blocks = aic + aiv + 1;
  std::vector<std::vector<TaskId>> per_block(blocks);
  std::uint64_t next_aic = 0, next_aiv = 0;
  for (TaskId t = 0; t < n; ++t) {
    require_recorded(g, t);
    switch (g.core_type[t]) {
      case CoreType::kAic: per_block[next_aic++ % aic].push_back(t); break;
      case CoreType::kAiv: per_block[aic + next_aiv++ % aiv].push_back(t); break;
      case CoreType::kAicpu: per_block[blocks - 1].push_back(t); break;
      case CoreType::kHub: break;
    }
  }
  const double mhz = chip.chip.board_clock_mhz;
  ProfWriter w(os, {}, [&os] { check(os); });
  for (std::uint32_t b = 0; b < blocks; ++b) {
    if (per_block[b].empty()) continue;
    w.block(b, b < aic ? "AIC" : b < aic + aiv ? "AIV" : "AICPU");
    std::uint64_t tick = kFirstTick;
    for (const TaskId t : per_block[b]) {
      const std::uint64_t end = tick + ticks_of(g.recorded_ns[t], mhz);
      ProfRecord r;
      r.seq_no = one_device_task ? 0 : g.device_tasks[g.device_task[t]].seq_no;
      r.task_id = ids[t];
      r.exec_start = tick;
      r.exec_end = end;
      w.record(r);
      tick = end;
    }
  }
  w.finish();
  check(os);
}

// Ids for a one-device-task format: packed when they fit, else the task index.
std::vector<std::uint32_t> one_device_task_ids(const sched::TaskGraph& g) {
  bool fits = false;
  std::vector<std::uint32_t> ids = packed_ids(
      g, [](TaskId) { return 0u; }, &fits);
  if (fits) return ids;
  ids.resize(g.num_tasks());
  for (TaskId t = 0; t < g.num_tasks(); ++t) ids[t] = t;
  return ids;
}

// Ids packed per device task, as the multi-device-task formats need them.
// Contract: throws ConfigError when a device task's roots or a root's tasks outgrow the packing.
std::vector<std::uint32_t> device_task_ids(const sched::TaskGraph& g) {
  bool fits = false;
  std::vector<std::uint32_t> ids = packed_ids(
      g, [&](TaskId t) { return g.device_task[t]; }, &fits);
  if (!fits) {
    throw ConfigError(
        "a device task has more than 4096 roots or a root more than 2^20 tasks; "
        "PyPTO's taskId cannot number them");
  }
  return ids;
}

}  // namespace

void write_prof_recording(const sched::TaskGraph& g, const model::ChipConfig& chip,
                          bool one_device_task, std::ostream& prof) {
  if (one_device_task) {
    write_prof(g, chip, one_device_task_ids(g), true, prof);
    return;
  }
  write_prof(g, chip, device_task_ids(g), false, prof);
}

void write_dyn_topo(const sched::TaskGraph& g, const model::ChipConfig& chip, std::ostream& topo,
                    std::ostream& prof) {
  const std::vector<std::uint32_t> ids = device_task_ids(g);
  DynTopoWriter w(topo, [&topo] { check(topo); });
  for (TaskId t = 0; t < g.num_tasks(); ++t) {
    require_recorded(g, t);
    const std::uint32_t local_root = ids[t] >> kRootShift;
    DynTopoRow r;
    r.seq_no = g.device_tasks[g.device_task[t]].seq_no;
    r.task_id = ids[t];
    r.root_index = local_root;
    r.root_hash = 1000 + local_root;  // any integer
    r.opmagic = 10 + g.kernel[t];     // any integer
    r.leaf_index = g.kernel[t];
    r.leaf_hash = 5000 + g.kernel[t];
    r.core_type = common::to_string(g.core_type[t]);
    r.psg_id = g.kernel[t];
    w.begin(r, g.succ_last(t) - g.succ_first(t));
    for (std::uint32_t e = g.succ_first(t); e < g.succ_last(t); ++e) w.successor(ids[g.succ[e]]);
    w.end();
  }
  w.finish();
  check(topo);
  write_prof(g, chip, ids, false, prof);
}

void write_topo_json(const sched::TaskGraph& g, const model::ChipConfig& chip, std::ostream& topo,
                     std::ostream& prof) {
  const std::vector<std::uint32_t> ids = one_device_task_ids(g);
  const std::vector<std::string> kernels = escaped_kernels(g);
  TopoJsonWriter w(topo, [&topo] { check(topo); });
  for (TaskId t = 0; t < g.num_tasks(); ++t) {
    require_recorded(g, t);
    TopoRecord r;
    r.task_id = ids[t];
    r.func_name = kernel_of(kernels, g, t);
    w.begin(r);
    for (std::uint32_t e = g.succ_first(t); e < g.succ_last(t); ++e) w.successor(ids[g.succ[e]]);
    w.end();
  }
  w.finish();
  check(topo);
  write_prof(g, chip, ids, true, prof);
}

void write_fixed_latency(const sched::TaskGraph& g, const model::ChipConfig& chip,
                         std::ostream& out) {
  const std::vector<std::uint32_t> ids = one_device_task_ids(g);
  const std::vector<std::string> kernels = escaped_kernels(g);
  const double mhz = chip.cores.freq_mhz;
  Out o(out);
  o << '[';
  for (TaskId t = 0; t < g.num_tasks(); ++t) {
    require_recorded(g, t);
    const bool hub = g.core_type[t] == CoreType::kHub;
    o << (t == 0 ? "\n" : ",\n") << "{\"taskId\":";
    o.u(ids[t]) << ",\"funcName\":" << kernel_of(kernels, g, t) << ",\"coreType\":\""
                << common::to_string(g.core_type[t]) << "\",\"execTime\":";
    // The reader rounds execTime x 1000 / MHz to the ns: whole cycles when they are exact,
    // else the shortest decimal that reads back as the same double.
    const double cycles = hub ? 0.0 : static_cast<double>(g.recorded_ns[t]) * mhz / 1000.0;
    if (cycles == std::floor(cycles) && cycles < 1e18) {
      o.u(static_cast<std::uint64_t>(cycles));
    } else {
      char tmp[32];
      const auto r = std::to_chars(tmp, tmp + sizeof tmp, cycles);
      o << std::string_view(tmp, static_cast<std::size_t>(r.ptr - tmp));
    }
    o << ",\"successors\":[";
    for (std::uint32_t e = g.succ_first(t); e < g.succ_last(t); ++e) {
      if (e != g.succ_first(t)) o << ',';
      o.u(ids[g.succ[e]]);
    }
    o << ']';
    o << ",\"remainingPredecessors\":";
    o.u(g.pred_count[t]) << '}';
    o.end_record();
  }
  o << "\n]\n";
  o.flush();
}

void write_synthetic_as(const SyntheticSpec& spec, TraceFormat format,
                        const model::ChipConfig& chip, const std::string& path,
                        const std::string& prof_path) {
  if (format == TraceFormat::kNative) {
    common::OutputFile f(path);
    common::write_files({&f}, [&] { write_synthetic_trace(spec, f.stream()); });
    f.commit();
    return;
  }
  if (!spec.recorded || spec.memory) {
    throw ConfigError(std::string("a ") + to_string(format) +
                      " trace carries recorded durations only: the synthetic spec needs "
                      "recorded durations and no memory ranges");
  }
  const bool board = format == TraceFormat::kDynTopo || format == TraceFormat::kTopoJson;
  if (board && prof_path.empty()) {
    throw ConfigError(std::string("a ") + to_string(format) +
                      " trace needs a path for its tilefwk_L1_prof_data.json recording");
  }
  // The outputs are opened first: one that cannot be written fails before any work, under
  // its own name.
  common::OutputFile topo(path);
  std::optional<common::OutputFile> prof;
  if (board) prof.emplace(prof_path);
  // Through the loader, so that the graph is stitched as a replay of the native trace is:
  // the native trace goes to a hidden temporary beside the output (the system's temporary
  // folder for an output written in place, such as /dev/stdout), removed on every path out.
  const std::filesystem::path out(path);
  const std::string name =
      "." + out.filename().string() + ".native.tmp." + std::to_string(::getpid());
  const std::string tmp =
      topo.in_place() ? (std::filesystem::temp_directory_path() / name).string()
                      : (out.has_parent_path() ? (out.parent_path() / name).string() : name);
  struct Remove {
    std::string p;
    int slot;
    ~Remove() {
      std::error_code ec;
      std::filesystem::remove(p, ec);
      common::unregister_temporary(slot);
    }
  } remove_tmp{tmp, common::register_temporary(tmp)};
  {
    common::OutputFile f(tmp);
    common::write_files({&f}, [&] { write_synthetic_trace(spec, f.stream()); });
    f.commit();
  }
  const LoadedTrace loaded = load_trace(tmp, LoadOptions{}, chip);
  if (format == TraceFormat::kFixedLatency) {
    common::write_files({&topo}, [&] { write_fixed_latency(loaded.graph, chip, topo.stream()); });
    topo.commit();
    return;
  }
  common::write_files({&topo, &*prof}, [&] {
    if (format == TraceFormat::kDynTopo) {
      write_dyn_topo(loaded.graph, chip, topo.stream(), prof->stream());
    } else {
      write_topo_json(loaded.graph, chip, topo.stream(), prof->stream());
    }
  });
  // The recording first: a topology on disk always has its recording beside it.
  prof->commit();
  topo.commit();
}

}  // namespace pypto::trace
