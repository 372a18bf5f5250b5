// SPDX-License-Identifier: Apache-2.0
// Board recordings of PyPTO (reference/pypto-runtime.md §6): the task DAG from dyn_topo.txt
// (CSV, every device task) or topo.json (one device task), joined on (seqNo, taskId) with the
// per-core start/end ticks of tilefwk_L1_prof_data.json.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pypto/common/errors.h"
#include "readers.h"

namespace pypto::sim::trace_detail {

namespace {

using nlohmann::json;
using sched::CoreType;

constexpr const char* kDynTopoColumns[] = {"seqNo",   "taskId",    "rootIndex",      "rootHash",
                                           "opmagic", "leafIndex", "leafHash",       "coreType",
                                           "psgId",   "wrapId",    "staticSuccCount"};
constexpr std::size_t kFixedColumns = 11;

struct TopoTask {
  std::uint32_t seq = 0;
  std::uint32_t task_id = 0;
  std::uint32_t root = 0;  // dense root instance
  std::uint32_t kernel = 0;
  CoreType core = CoreType::kHub;
  bool core_known = false;
  std::uint32_t succ_first = 0, succ_count = 0;  // into Topology::succ (task ids)
  std::uint64_t where = 0;                       // dyn_topo: line; topo.json: record index
  std::uint32_t recorded_ns = sched::kNoRecord;
  std::uint64_t start_tick = 0;  // execStart of its prof record (when recorded_ns is set)
  std::uint32_t prof_block = 0, prof_record = 0;  // first prof record, for duplicate errors
  bool prof_record_seen = false;
};

struct Topology {
  std::vector<TopoTask> tasks;
  std::vector<std::uint32_t> succ;
  std::unordered_map<std::uint64_t, std::uint32_t> index;  // (seq << 32 | taskId) -> task
  std::unordered_map<std::uint64_t, std::uint32_t> roots;  // (seq << 32 | rootKey) -> dense
  sched::TaskGraphBuilder* builder = nullptr;

  static std::uint64_t key(std::uint32_t seq, std::uint32_t id) {
    return (std::uint64_t(seq) << 32) | id;
  }
  std::uint32_t dense_root(std::uint32_t seq, std::uint64_t root_key) {
    const auto it = roots.emplace(key(seq, static_cast<std::uint32_t>(root_key)),
                                  static_cast<std::uint32_t>(roots.size()));
    return it.first->second;
  }
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

void split_csv(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = line.find(',', pos);
    out.push_back(
        trim(line.substr(pos, comma == std::string_view::npos ? line.npos : comma - pos)));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
}

// Parses dyn_topo.txt: one task per line, successors are taskIds of the same seqNo.
void read_dyn_topo(const std::string& path, const std::string& text, Topology& topo) {
  std::vector<std::string_view> cols;
  std::size_t pos = 0;
  std::uint64_t line_no = 0;
  bool header = false;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string_view line = trim(std::string_view(text).substr(pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(line_no);
    split_csv(line, cols);
    if (!header) {
      for (std::size_t c = 0; c < kFixedColumns; ++c) {
        if (c >= cols.size() || cols[c] != kDynTopoColumns[c]) {
          throw TraceError(where + ": header column " + std::to_string(c + 1) + " is \"" +
                           std::string(c < cols.size() ? cols[c] : "") + "\", expected \"" +
                           kDynTopoColumns[c] + "\" (header seqNo,taskId,rootIndex,rootHash," +
                           "opmagic,leafIndex,leafHash,coreType,psgId,wrapId,staticSuccCount," +
                           "successors...)");
        }
      }
      header = true;
      continue;
    }
    // A trailing comma (an empty last field) is tolerated; any other empty field is not.
    if (cols.size() > kFixedColumns && cols.back().empty()) cols.pop_back();
    if (cols.size() < kFixedColumns) {
      throw TraceError(where + ": expected at least " + std::to_string(kFixedColumns) +
                       " columns (seqNo ... staticSuccCount, then successors), got " +
                       std::to_string(cols.size()));
    }
    auto column_name = [](std::size_t c) {
      return c < kFixedColumns ? std::string(kDynTopoColumns[c])
                               : "successors (column " + std::to_string(c + 1) + ")";
    };
    auto parse_u = [&](std::size_t c, std::uint64_t max) {
      std::uint64_t v = 0;
      const std::string_view f = cols[c];
      const auto r = std::from_chars(f.data(), f.data() + f.size(), v);
      if (f.empty() || r.ec != std::errc() || r.ptr != f.data() + f.size() || v > max) {
        throw TraceError(where + ": column " + column_name(c) + ": expected an integer in [0, " +
                         std::to_string(max) + "], got \"" + std::string(f) + "\"");
      }
      return v;
    };
    auto check_int = [&](std::size_t c) {
      // Hashes and ids PyPTO writes may be signed (-1) or use the full unsigned range.
      const std::string_view f = cols[c];
      std::int64_t s = 0;
      std::uint64_t u = 0;
      const auto rs = std::from_chars(f.data(), f.data() + f.size(), s);
      const auto ru = std::from_chars(f.data(), f.data() + f.size(), u);
      const bool ok = !f.empty() && ((rs.ec == std::errc() && rs.ptr == f.data() + f.size()) ||
                                     (ru.ec == std::errc() && ru.ptr == f.data() + f.size()));
      if (!ok) {
        throw TraceError(where + ": column " + column_name(c) + ": expected an integer, got \"" +
                         std::string(f) + "\"");
      }
    };
    TopoTask t;
    t.seq = static_cast<std::uint32_t>(parse_u(0, 0xFFFFFFFFull));
    t.task_id = static_cast<std::uint32_t>(parse_u(1, 0xFFFFFFFFull));
    const std::uint64_t root_index = parse_u(2, 0xFFFFFFFFull);
    check_int(3);
    check_int(4);
    const std::uint64_t leaf = parse_u(5, 0xFFFFFFFFull);
    check_int(6);
    const auto core = sched::parse_core_type(cols[7]);
    if (!core) {
      throw TraceError(where + ": column coreType: expected AIC, AIV, HUB or AICPU, got \"" +
                       std::string(cols[7]) + "\"");
    }
    check_int(8);
    check_int(9);
    const std::uint64_t static_succ = parse_u(10, 0xFFFFFFFFull);
    if (static_succ > cols.size() - kFixedColumns) {
      throw TraceError(where + ": staticSuccCount is " + std::to_string(static_succ) +
                       " but the line lists " + std::to_string(cols.size() - kFixedColumns) +
                       " successors");
    }
    t.core = *core;
    t.core_known = true;
    t.root = topo.dense_root(t.seq, root_index);
    t.kernel = topo.builder->kernel_index("leaf" + std::to_string(leaf));
    t.where = line_no;
    t.succ_first = static_cast<std::uint32_t>(topo.succ.size());
    for (std::size_t c = kFixedColumns; c < cols.size(); ++c) {
      topo.succ.push_back(static_cast<std::uint32_t>(parse_u(c, 0xFFFFFFFFull)));
    }
    t.succ_count = static_cast<std::uint32_t>(topo.succ.size() - t.succ_first);
    const auto [it, inserted] = topo.index.emplace(Topology::key(t.seq, t.task_id),
                                                   static_cast<std::uint32_t>(topo.tasks.size()));
    if (!inserted) {
      throw TraceError(where + ": task " + std::to_string(t.task_id) + " of seqNo " +
                       std::to_string(t.seq) + " already appears on line " +
                       std::to_string(topo.tasks[it->second].where));
    }
    topo.tasks.push_back(t);
  }
  if (!header) throw TraceError(path + ": no header line");
  if (topo.tasks.empty()) throw TraceError(path + ": no tasks after the header");
}

// Parses topo.json: one device task (seqNo 0); the root index is taskId >> 20 (PyPTO packs
// the root within its device task in bits 20 and up, the op index in bits 0-19).
void read_topo_json(const std::string& path, const std::string& text, Topology& topo) {
  const json doc = parse_json(path, text);
  if (!doc.is_array()) throw TraceError(path + ": expected a JSON array of tasks");
  if (doc.empty()) throw TraceError(path + ": the JSON array is empty (no tasks)");
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const json& rec = doc[i];
    std::string where = path + ": record " + std::to_string(i);
    if (!rec.is_object()) throw TraceError(where + ": expected an object, got " + json_brief(rec));
    TopoTask t;
    t.task_id = static_cast<std::uint32_t>(
        json_uint(json_field(rec, "taskId", where), "taskId", where, 0xFFFFFFFFull));
    where += " (taskId " + std::to_string(t.task_id) + ")";
    t.kernel = topo.builder->kernel_index(
        json_string(json_field(rec, "funcName", where), "funcName", where));
    if (const auto it = rec.find("coreType"); it != rec.end()) {
      const auto core = sched::parse_core_type(json_string(*it, "coreType", where));
      if (!core) {
        throw TraceError(where + ": expected \"coreType\" to be AIC, AIV, HUB or AICPU, got " +
                         json_brief(*it));
      }
      t.core = *core;
      t.core_known = true;
    }
    t.root = topo.dense_root(0, t.task_id >> 20);
    t.where = i;
    const json& succ = json_field(rec, "successors", where);
    if (!succ.is_array()) {
      throw TraceError(where + ": expected \"successors\" to be an array of taskIds, got " +
                       json_brief(succ));
    }
    t.succ_first = static_cast<std::uint32_t>(topo.succ.size());
    for (const json& s : succ) {
      topo.succ.push_back(
          static_cast<std::uint32_t>(json_uint(s, "successors", where, 0xFFFFFFFFull)));
    }
    t.succ_count = static_cast<std::uint32_t>(topo.succ.size() - t.succ_first);
    const auto [it, inserted] =
        topo.index.emplace(Topology::key(0, t.task_id), static_cast<std::uint32_t>(i));
    if (!inserted) {
      throw TraceError(where + ": taskId " + std::to_string(t.task_id) +
                       " already appears in record " + std::to_string(it->second));
    }
    topo.tasks.push_back(t);
  }
}

std::string topo_location(const std::string& path, TraceFormat format, const TopoTask& t) {
  return format == TraceFormat::kDynTopo ? path + ":" + std::to_string(t.where)
                                         : path + " record " + std::to_string(t.where);
}

}  // namespace

LoadedTrace load_board(const std::string& path, TraceFormat format, const LoadOptions& opts,
                       const ChipConfig& chip) {
  const bool dyn = format == TraceFormat::kDynTopo;
  const char* kind = dyn ? "dyn_topo.txt" : "topo.json";
  if (opts.prof_path.empty()) {
    throw TraceError(path + ": a " + std::string(kind) +
                     " topology needs --prof tilefwk_L1_prof_data.json with the recorded times");
  }
  sched::TaskGraphBuilder builder(path);
  Topology topo;
  topo.builder = &builder;
  const std::string text = read_file(path);
  // Progress counts the bytes read of both files (the prof file is read after the topology).
  const std::uint64_t total_bytes =
      opts.progress ? input_file_size(path) + input_file_size(opts.prof_path) : 0;
  if (opts.progress) opts.progress(std::min<std::uint64_t>(text.size(), total_bytes), total_bytes);
  if (dyn) {
    read_dyn_topo(path, text, topo);
  } else {
    read_topo_json(path, text, topo);
  }

  // Successors name taskIds of the same seqNo; turn them into task indices.
  for (const TopoTask& t : topo.tasks) {
    for (std::uint32_t e = t.succ_first; e < t.succ_first + t.succ_count; ++e) {
      const auto it = topo.index.find(Topology::key(t.seq, topo.succ[e]));
      if (it == topo.index.end()) {
        throw TraceError(topo_location(path, format, t) + ": successor " +
                         std::to_string(topo.succ[e]) + " of task " + std::to_string(t.task_id) +
                         " is not a task of seqNo " + std::to_string(t.seq));
      }
      topo.succ[e] = it->second;
    }
  }

  // Join the prof records on (seqNo, taskId).
  const std::string& prof_path = opts.prof_path;
  const json prof = parse_json(prof_path, read_file(prof_path), "block");
  if (opts.progress) opts.progress(total_bytes, total_bytes);
  if (!prof.is_array()) {
    throw TraceError(prof_path + ": expected a JSON array of {blockIdx, coreType, tasks}");
  }
  const double mhz = chip.chip.board_clock_mhz;
  LoadedTrace out;
  std::uint64_t joined = 0, min_start = ~std::uint64_t(0), max_end = 0, total_records = 0;
  std::string min_start_where, max_end_where;
  RecordedCores cores;  // blockIdx per core type: which chip the recording ran on
  bool any_block_idx = false;
  for (std::size_t b = 0; b < prof.size(); ++b) {
    const json& block = prof[b];
    std::string bwhere = prof_path + ": block " + std::to_string(b);
    if (!block.is_object()) {
      throw TraceError(bwhere + ": expected an object, got " + json_brief(block));
    }
    std::optional<std::uint32_t> block_idx;
    if (const auto it = block.find("blockIdx"); it != block.end()) {
      block_idx = static_cast<std::uint32_t>(json_uint(*it, "blockIdx", bwhere, 0xFFFFFFFFull));
      bwhere += " (blockIdx " + std::to_string(*block_idx) + ")";
    }
    const std::string core_name =
        json_string(json_field(block, "coreType", bwhere), "coreType", bwhere);
    const auto block_core = sched::parse_core_type(core_name);
    if (!block_core) {
      throw TraceError(bwhere + ": expected \"coreType\" to be AIC, AIV or AI-CPU, got \"" +
                       core_name + "\"");
    }
    if (block_idx && (*block_core == CoreType::kAic || *block_core == CoreType::kAiv)) {
      any_block_idx = true;
      if (*block_core == CoreType::kAic) {
        cores.max_aic_block =
            cores.any_aic ? std::max(cores.max_aic_block, *block_idx) : *block_idx;
        cores.any_aic = true;
      } else {
        cores.min_aiv_block =
            cores.any_aiv ? std::min(cores.min_aiv_block, *block_idx) : *block_idx;
        cores.max_aiv_block =
            cores.any_aiv ? std::max(cores.max_aiv_block, *block_idx) : *block_idx;
        cores.any_aiv = true;
      }
    }
    const json& records = json_field(block, "tasks", bwhere);
    if (!records.is_array()) {
      throw TraceError(bwhere + ": expected \"tasks\" to be an array, got " + json_brief(records));
    }
    for (std::size_t r = 0; r < records.size(); ++r) {
      ++total_records;
      const json& rec = records[r];
      const std::string where = bwhere + ", record " + std::to_string(r);
      if (!rec.is_object()) {
        throw TraceError(where + ": expected an object, got " + json_brief(rec));
      }
      const auto task_id = static_cast<std::uint32_t>(
          json_uint(json_field(rec, "taskId", where), "taskId", where, 0xFFFFFFFFull));
      std::uint32_t seq = 0;
      if (const auto it = rec.find("seqNo"); it != rec.end()) {
        seq = static_cast<std::uint32_t>(json_uint(*it, "seqNo", where, 0xFFFFFFFFull));
      }
      const std::uint64_t start =
          json_uint(json_field(rec, "execStart", where), "execStart", where, ~0ull);
      const std::uint64_t end =
          json_uint(json_field(rec, "execEnd", where), "execEnd", where, ~0ull);
      const auto found = topo.index.find(Topology::key(seq, task_id));
      if (found == topo.index.end()) {
        if (!dyn && seq != 0) {
          // topo.json describes device task 0 only; the recording may hold more.
          ++out.ignored_prof_records;
          continue;
        }
        throw TraceError(where + ": seqNo " + std::to_string(seq) + " taskId " +
                         std::to_string(task_id) + " is not a task of " + path);
      }
      TopoTask& t = topo.tasks[found->second];
      if (t.recorded_ns != sched::kNoRecord) {
        throw TraceError(where + ": a second record for taskId " + std::to_string(task_id) +
                         " (seqNo " + std::to_string(seq) + "); the first is block " +
                         std::to_string(t.prof_block) + ", record " +
                         std::to_string(t.prof_record));
      }
      if (t.core_known && t.core != *block_core) {
        throw TraceError(where + ": taskId " + std::to_string(task_id) + " (seqNo " +
                         std::to_string(seq) + ") is an " + std::string(sched::to_string(t.core)) +
                         " task in " + topo_location(path, format, t) +
                         ", but this block's coreType is " + core_name);
      }
      if (end < start) {
        throw TraceError(where + ": execEnd " + std::to_string(end) + " is before execStart " +
                         std::to_string(start));
      }
      t.core = *block_core;
      t.core_known = true;
      t.recorded_ns = ticks_to_ns(end - start, mhz, where);
      t.start_tick = start;
      t.prof_record_seen = true;
      t.prof_block = static_cast<std::uint32_t>(b);
      t.prof_record = static_cast<std::uint32_t>(r);
      if (start < min_start) {
        min_start = start;
        min_start_where = where;
      }
      if (end > max_end) {
        max_end = end;
        max_end_where = where;
      }
      ++joined;
    }
  }
  // Recorded times become ps relative to the first start: the whole span must fit the
  // clock (ticks 2^64 apart would overflow the conversion and read as 0).
  const double span_ps = std::nearbyint(static_cast<double>(max_end - min_start) * 1e6 / mhz);
  if (joined > 0 && !(span_ps < static_cast<double>(sched::kTimeLimitPs))) {
    throw TraceError(prof_path + ": the recorded ticks span " +
                     std::to_string(max_end - min_start) +
                     " ticks at chip.board_clock_mhz = " + compact(mhz) +
                     " MHz, more than the model's time limit of 2^62 ps (about 53 days): from "
                     "execStart " +
                     std::to_string(min_start) + " (" + min_start_where + ") to execEnd " +
                     std::to_string(max_end) + " (" + max_end_where + ")");
  }
  if (joined == 0) {
    throw TraceError(prof_path + ": none of its " + std::to_string(total_records) +
                     " records is a task of " + path + "; are they from the same run?");
  }

  // Tasks without a record are zero-cost dependency nodes (DESIGN.md "Trace formats").
  for (TopoTask& t : topo.tasks) {
    if (t.recorded_ns != sched::kNoRecord) continue;
    t.recorded_ns = 0;
    if (!t.core_known) {
      t.core = CoreType::kHub;  // topo.json names no core type: nothing to dispatch
      t.core_known = true;
      ++out.unrecorded_tasks;
    } else if (t.core != CoreType::kHub) {
      ++out.unrecorded_tasks;
    }
  }

  for (const TopoTask& t : topo.tasks) {
    sched::TaskGraphBuilder::Task bt;
    bt.core_type = t.core;
    bt.device_task_seq = t.seq;
    bt.root = t.root;
    bt.orig_id = t.task_id;
    bt.kernel = t.kernel;
    bt.recorded_ns = t.recorded_ns;
    if (t.prof_record_seen) {
      bt.recorded_start_ps = static_cast<sched::TimePs>(
          std::nearbyint(static_cast<double>(t.start_tick - min_start) * 1e6 / mhz));
    }
    builder.add_task(bt);
    for (std::uint32_t e = t.succ_first; e < t.succ_first + t.succ_count; ++e) {
      builder.add_successor(topo.succ[e]);
    }
  }
  try {
    out.graph = builder.finish();
  } catch (const TraceError& e) {
    throw TraceError(path + ": " + e.what());
  }
  out.graph.recorded_makespan_ps = static_cast<sched::TimePs>(span_ps);
  out.format = format;
  if (any_block_idx) out.recorded_cores = cores;
  return out;
}

}  // namespace pypto::sim::trace_detail
