// SPDX-License-Identifier: Apache-2.0
// Board recordings of PyPTO (reference/pypto-runtime.md §6): the task DAG from dyn_topo.txt
// (CSV, every device task) or topo.json (one device task), joined on (seqNo, taskId) with the
// per-core start/end ticks of tilefwk_L1_prof_data.json. The ticks are left for the pricing
// pass, which converts them at the chip's board clock.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "batch_pipe.h"
#include "id_index.h"
#include "json_stream.h"
#include "pypto/common/errors.h"
#include "readers.h"

namespace pypto::trace::detail {

namespace {

using common::CoreType;

constexpr const char* kDynTopoColumns[] = {"seqNo",   "taskId",    "rootIndex",      "rootHash",
                                           "opmagic", "leafIndex", "leafHash",       "coreType",
                                           "psgId",   "wrapId",    "staticSuccCount"};
constexpr std::size_t kFixedColumns = 11;
constexpr std::size_t kDynChunkBytes = std::size_t(4) << 20;
// Memory per task while loading and simulating a board recording: the graph's columns and
// CSR (about 40 B), the taskId index (4 B for ids in order, 8-16 B for the rest), the side arrays
// (5 B, 12 more for dyn_topo.txt), the recorded starts (8 B) and the run's own state (about 30 B).
constexpr double kBoardBytesPerTask = 110;

// The topology being read. Tasks go straight into the builder (successors as taskIds until
// every task is known); what the prof join needs beyond the graph's columns is kept in
// per-task side arrays of a byte or a word.
struct Topology {
  sched::TaskGraphBuilder* builder = nullptr;
  bool dyn = false;
  SeqIdIndex index;                     // dyn_topo: (seq, taskId) -> task
  IdIndex<std::uint32_t> index0;        // topo.json (seqNo 0 only): taskId -> task
  std::vector<std::uint32_t> seq;       // dyn_topo: seqNo per task
  std::vector<std::uint64_t> line;      // dyn_topo: line per task (topo.json: record == task)
  std::vector<std::uint8_t> flags;      // kCoreKnown, kProfSeen
  std::vector<std::uint32_t> prof_ord;  // ordinal of the task's prof record (for messages)
  std::unordered_map<std::uint64_t, std::uint32_t> roots;  // (seq << 32 | rootKey) -> dense
  std::uint64_t last_root_key = ~std::uint64_t{0};
  std::uint32_t last_root = 0;
  std::string last_kernel_name;
  std::uint32_t last_kernel = common::kNoTask;

  static constexpr std::uint8_t kCoreKnown = 1, kProfSeen = 2;

  static std::uint64_t key(std::uint32_t seq, std::uint32_t id) {
    return (std::uint64_t(seq) << 32) | id;
  }
  std::uint32_t dense_root(std::uint32_t seq, std::uint64_t root_key) {
    const std::uint64_t k = key(seq, static_cast<std::uint32_t>(root_key));
    if (k != last_root_key) {
      last_root = roots.emplace(k, static_cast<std::uint32_t>(roots.size())).first->second;
      last_root_key = k;
    }
    return last_root;
  }
  std::uint32_t kernel(const std::string& name) {
    if (last_kernel == common::kNoTask || name != last_kernel_name) {
      last_kernel = builder->kernel_index(name);
      last_kernel_name = name;
    }
    return last_kernel;
  }
  std::size_t size() const { return flags.size(); }
  // Adds a task; returns the index of an earlier task with the same (seq, taskId), or
  // kAbsent.
  std::uint32_t add(const sched::TaskGraphBuilder::Task& t, bool core_known, std::uint64_t at) {
    const auto id = static_cast<std::uint32_t>(size());
    const std::uint32_t got =
        dyn ? index.insert(t.device_task_seq, t.orig_id, id) : index0.insert(t.orig_id, id);
    if (got != id) return got;
    builder->add_task(t);
    flags.push_back(core_known ? kCoreKnown : 0);
    if (dyn) {
      seq.push_back(t.device_task_seq);
      line.push_back(at);
    }
    return IdIndex<std::uint32_t>::kAbsent;
  }
  std::uint32_t find(std::uint32_t s, std::uint32_t id) const {
    if (dyn) return index.find(s, id);
    return s == 0 ? index0.find(id) : IdIndex<std::uint32_t>::kAbsent;
  }
  std::uint32_t seq_of(std::size_t t) const { return dyn ? seq[t] : 0; }
};

// Checks the memory for the tasks a topology of `file_bytes` holds at the density of its
// first `consumed` bytes, and reserves the graph, the side arrays and the join's columns for
// them.
void check_board_memory(const std::string& path, Topology& topo, std::uint64_t file_bytes,
                        std::uint64_t consumed, const char* unit) {
  const std::size_t so_far = topo.size();
  const double scale = static_cast<double>(file_bytes) / static_cast<double>(consumed);
  const double tasks = static_cast<double>(so_far) * scale;
  const double edges = static_cast<double>(topo.builder->graph().succ.size()) * scale;
  check_fits_memory(
      path, tasks, kBoardBytesPerTask + (topo.dyn ? 12 : 0),
      "tasks from the file size at the density of its first " + std::to_string(so_far) + " " + unit,
      LoadOptions{});
  sched::TaskGraph& g = topo.builder->graph();
  reserve_graph(g, tasks, edges);
  const std::size_t n = g.core_type.capacity();
  topo.flags.reserve(n);
  if (topo.dyn) {
    topo.seq.reserve(n);
    topo.line.reserve(n);
  } else {
    topo.index0.reserve(static_cast<std::size_t>(tasks));
  }
  g.recorded_start_ps.reserve(n);
  topo.prof_ord.reserve(n);
}

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

// What read_dyn_topo takes from a task line (the successors apart).
struct DynLine {
  std::uint64_t seq = 0, id = 0, root_index = 0, leaf = 0, static_succ = 0;
  common::CoreType core = common::CoreType::kAiv;
};

// A task line in the plain form writers produce (no blanks, no trailing comma, unsigned
// decimal fields, signed ones of at most 18 digits where check_int reads them, a known core
// type): its fields into d and its successors into succ, with the values the general parse
// gives; false leaves the line to that parse, which gives any message. One pass over the
// bytes, where the general parse splits, trims and reads each field apart.
bool plain_dyn_line(std::string_view line, DynLine& d, std::vector<std::uint32_t>& succ) {
  const char* p = line.data();
  const char* const end = p + line.size();
  const auto u32 = [&](std::uint64_t& v) {
    const char* const s = p;
    v = 0;
    for (; p != end && static_cast<unsigned>(*p - '0') <= 9; ++p) {
      v = v * 10 + static_cast<unsigned>(*p - '0');
      if (v > 0xFFFFFFFFull) return false;
    }
    return p != s;
  };
  const auto integer = [&] {
    if (p != end && *p == '-') ++p;
    const char* const s = p;
    while (p != end && static_cast<unsigned>(*p - '0') <= 9) ++p;
    return p != s && p - s <= 18;  // fits std::int64_t
  };
  const auto comma = [&] { return p != end && *p++ == ','; };
  const auto core = [&] {
    const char* const s = p;
    while (p != end && *p != ',') ++p;
    const auto c = common::parse_core_type(std::string_view(s, static_cast<std::size_t>(p - s)));
    if (c) d.core = *c;
    return c.has_value();
  };
  if (!(u32(d.seq) && comma() && u32(d.id) && comma() && u32(d.root_index) && comma() &&
        integer() && comma() && integer() && comma() && u32(d.leaf) && comma() && integer() &&
        comma() && core() && comma() && integer() && comma() && integer() && comma() &&
        u32(d.static_succ))) {
    return false;
  }
  succ.clear();
  while (p != end) {
    std::uint64_t v = 0;
    if (!comma() || !u32(v)) return false;
    succ.push_back(static_cast<std::uint32_t>(v));
  }
  return true;
}

// Consecutive lines alternate between a few leaves: a kernel index per leaf is looked up by
// number (kernel_index gives a name the same index every time), not built as a name.
struct LeafKernel {
  std::uint64_t leaf = 0;
  std::uint32_t kernel = 0;
  bool used = false;
};
constexpr std::size_t kLeafSlots = 256;

void check_static_succ(const std::string& path, std::uint64_t line_no, const DynLine& d,
                       std::size_t listed) {
  if (d.static_succ > listed) {
    throw TraceError(path + ":" + std::to_string(line_no) + ": staticSuccCount is " +
                     std::to_string(d.static_succ) + " but the line lists " +
                     std::to_string(listed) + " successors");
  }
}

// The task of a parsed, checked line into the topology (its successors as taskIds for now).
void add_dyn_task(const std::string& path, std::uint64_t line_no, const DynLine& d,
                  const std::vector<std::uint32_t>& succ, Topology& topo,
                  std::vector<LeafKernel>& leaf_kernels) {
  sched::TaskGraphBuilder::Task t;
  t.device_task_seq = static_cast<std::uint32_t>(d.seq);
  t.orig_id = static_cast<std::uint32_t>(d.id);
  t.core_type = d.core;
  t.root = topo.dense_root(t.device_task_seq, d.root_index);
  LeafKernel& lk = leaf_kernels[d.leaf % kLeafSlots];
  if (!lk.used || lk.leaf != d.leaf) {
    lk = {d.leaf, topo.kernel("leaf" + std::to_string(d.leaf)), true};
  }
  t.kernel = lk.kernel;
  t.recorded_ns = sched::kNoRecord;
  const std::uint32_t earlier = topo.add(t, true, line_no);
  if (earlier != IdIndex<std::uint32_t>::kAbsent) {
    throw TraceError(path + ":" + std::to_string(line_no) + ": task " + std::to_string(t.orig_id) +
                     " of seqNo " + std::to_string(t.device_task_seq) +
                     " already appears on line " + std::to_string(topo.line[earlier]));
  }
  for (const std::uint32_t v : succ) topo.builder->add_successor(v);
}

// Parses dyn_topo.txt: one task per line, successors are taskIds of the same seqNo.
// Streamed: the file is read in 4 MiB chunks of whole lines.
void read_dyn_topo(const std::string& path, Topology& topo) {
  std::vector<std::string_view> cols;
  std::vector<std::uint32_t> succ;
  std::uint64_t line_no = 0;
  bool header = false;
  bool memory_checked = false;
  std::vector<LeafKernel> leaf_kernels(kLeafSlots);
  const std::uint64_t file_bytes = input_file_size(path);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) throw TraceError(path + ": cannot open: " + std::strerror(errno));
  std::vector<char> buf(read_buffer_bytes(file_bytes, kDynChunkBytes));
  std::size_t have = 0;
  std::uint64_t read_bytes = 0, consumed = 0;
  bool eof = file_bytes == 0;
  std::size_t pos = 0, stop = 0;
  while (true) {
    if (pos >= stop) {
      // Next chunk: keep the partial last line, read on (what stat() saw, no more).
      std::memmove(buf.data(), buf.data() + stop, have - stop);
      have -= stop;
      consumed += stop;
      pos = stop = 0;
      if (!memory_checked && consumed > 0 && !eof) {
        memory_checked = true;
        check_board_memory(path, topo, file_bytes, consumed, "lines");
      }
      while (true) {
        if (!eof) {
          if (have == buf.size()) buf.resize(buf.size() * 2);  // a line longer than the buffer
          const std::size_t want = static_cast<std::size_t>(
              std::min<std::uint64_t>(file_bytes - read_bytes, buf.size() - have));
          const std::size_t got = want ? std::fread(buf.data() + have, 1, want, file.get()) : 0;
          if (std::ferror(file.get())) {
            throw TraceError(path + ": read error after line " + std::to_string(line_no));
          }
          have += got;
          read_bytes += got;
          if (got < want || read_bytes >= file_bytes) eof = true;
        }
        if (eof) {
          stop = have;
          break;
        }
        const void* nl = have ? memrchr(buf.data(), '\n', have) : nullptr;
        if (nl) {
          stop = static_cast<std::size_t>(static_cast<const char*>(nl) - buf.data()) + 1;
          break;
        }
      }
      if (stop == 0) break;
    }
    const char* nlp = static_cast<const char*>(std::memchr(buf.data() + pos, '\n', stop - pos));
    const std::size_t nl = nlp ? static_cast<std::size_t>(nlp - buf.data()) : stop;
    const std::string_view line = trim(std::string_view(buf.data() + pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    if (line.empty()) continue;
    auto where = [&] { return path + ":" + std::to_string(line_no); };
    DynLine d;
    if (header && plain_dyn_line(line, d, succ)) {
      check_static_succ(path, line_no, d, succ.size());
      add_dyn_task(path, line_no, d, succ, topo, leaf_kernels);
      continue;
    }
    split_csv(line, cols);
    if (!header) {
      for (std::size_t c = 0; c < kFixedColumns; ++c) {
        if (c >= cols.size() || cols[c] != kDynTopoColumns[c]) {
          throw TraceError(where() + ": header column " + std::to_string(c + 1) + " is \"" +
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
      throw TraceError(where() + ": expected at least " + std::to_string(kFixedColumns) +
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
        throw TraceError(where() + ": column " + column_name(c) + ": expected an integer in [0, " +
                         std::to_string(max) + "], got \"" + std::string(f) + "\"");
      }
      return v;
    };
    auto check_int = [&](std::size_t c) {
      // Hashes and ids PyPTO writes may be signed (-1) or use the full unsigned range.
      const std::string_view f = cols[c];
      std::int64_t s = 0;
      std::uint64_t u = 0;
      const char* end = f.data() + f.size();
      auto whole = [end](std::from_chars_result r) { return r.ec == std::errc() && r.ptr == end; };
      // The unsigned reading only when the signed one fails (a value above 2^63).
      const bool ok = !f.empty() && (whole(std::from_chars(f.data(), end, s)) ||
                                     whole(std::from_chars(f.data(), end, u)));
      if (!ok) {
        throw TraceError(where() + ": column " + column_name(c) + ": expected an integer, got \"" +
                         std::string(f) + "\"");
      }
    };
    d.seq = parse_u(0, 0xFFFFFFFFull);
    d.id = parse_u(1, 0xFFFFFFFFull);
    d.root_index = parse_u(2, 0xFFFFFFFFull);
    check_int(3);
    check_int(4);
    d.leaf = parse_u(5, 0xFFFFFFFFull);
    check_int(6);
    const auto core = common::parse_core_type(cols[7]);
    if (!core) {
      throw TraceError(where() + ": column coreType: expected AIC, AIV, HUB or AICPU, got \"" +
                       std::string(cols[7]) + "\"");
    }
    d.core = *core;
    check_int(8);
    check_int(9);
    d.static_succ = parse_u(10, 0xFFFFFFFFull);
    // Checked before the successors are read, so that this message comes first.
    check_static_succ(path, line_no, d, cols.size() - kFixedColumns);
    succ.clear();
    for (std::size_t c = kFixedColumns; c < cols.size(); ++c) {
      succ.push_back(static_cast<std::uint32_t>(parse_u(c, 0xFFFFFFFFull)));
    }
    add_dyn_task(path, line_no, d, succ, topo, leaf_kernels);
  }
  if (!header) throw TraceError(path + ": no header line");
  if (topo.size() == 0) throw TraceError(path + ": no tasks after the header");
}

using K = JsonStream::Kind;

enum class TopoField { kTaskId, kFuncName, kCoreType, kSuccessors, kOther };
TopoField topo_field(std::string_view k) {
  if (k == "taskId") return TopoField::kTaskId;
  if (k == "funcName") return TopoField::kFuncName;
  if (k == "coreType") return TopoField::kCoreType;
  if (k == "successors") return TopoField::kSuccessors;
  return TopoField::kOther;
}

// Parses topo.json: one device task (seqNo 0); the root index is taskId >> 20 (PyPTO packs
// the root within its device task in bits 20 and up, the op index in bits 0-19). Streamed;
// the checks and their order are the DOM reader's, keys in any order, the last of a repeated
// key counting.
void read_topo_json(const std::string& path, Topology& topo) {
  JsonStream js(path, "record");
  if (js.peek_kind() != K::kArray) js.semantic_error(path + ": expected a JSON array of tasks");
  js.begin_array();
  bool first = true;
  JsonStream::Scalar tmp;
  HeldScalar task_id, func, core, succ_other;
  SeenKeys seen;
  K succ_kind = K::kNone;
  std::vector<std::uint32_t> succ;
  std::string succ_bad;
  JsonStream::PlainObject plain;
  std::uint64_t i = 0;
  bool memory_checked = false;
  while (js.next_element(first)) {
    // Messages only: one string per record cost about a fifth of the reader.
    auto where = [&] { return path + ": record " + std::to_string(i); };
    const K kind = js.peek_kind();
    if (kind != K::kObject) {
      if (kind == K::kArray) js.semantic_error(where() + ": expected an object, got an array");
      js.read_scalar(tmp);
      js.semantic_error(where() + ": expected an object, got " + brief(tmp));
    }
    task_id.kind = func.kind = core.kind = K::kNone;
    succ_kind = K::kNone;
    seen.clear();
    read_object(js, plain, 0xFFFFFFFFull, tmp, [&](std::string_view key, FieldValue& v) {
      const TopoField field = topo_field(key);
      if (field != TopoField::kOther) seen.add(static_cast<unsigned>(field), key);
      switch (field) {
        case TopoField::kTaskId: v.hold(task_id); break;
        case TopoField::kFuncName: v.hold(func); break;
        case TopoField::kCoreType: v.hold(core); break;
        case TopoField::kOther: v.skip(); break;
        case TopoField::kSuccessors:
          succ_kind = v.kind();
          if (succ_kind == K::kArray) {
            v.ids("successors", succ, succ_bad);
          } else {
            v.hold(succ_other);
          }
          break;
      }
    });
    if (!seen.repeated.empty()) js.semantic_error(where() + seen.message());
    std::uint64_t id = 0;
    std::string msg = check_uint(task_id, "taskId", 0xFFFFFFFFull, &id);
    if (!msg.empty()) js.semantic_error(where() + ": " + msg);
    auto where_id = [&] { return where() + " (taskId " + std::to_string(id) + ")"; };
    msg = check_string(func, "funcName");
    if (!msg.empty()) js.semantic_error(where_id() + ": " + msg);
    sched::TaskGraphBuilder::Task t;
    t.orig_id = static_cast<std::uint32_t>(id);
    t.kernel = topo.kernel(func.s);
    bool core_known = false;
    t.core_type = CoreType::kHub;
    if (core.present()) {
      msg = check_string(core, "coreType");
      if (!msg.empty()) js.semantic_error(where_id() + ": " + msg);
      const auto ct = common::parse_core_type(core.s);
      if (!ct) {
        js.semantic_error(where_id() +
                          ": expected \"coreType\" to be AIC, AIV, HUB or AICPU, got " +
                          brief(core.view()));
      }
      t.core_type = *ct;
      core_known = true;
    }
    t.root = topo.dense_root(0, t.orig_id >> 20);
    t.recorded_ns = sched::kNoRecord;
    if (succ_kind == K::kNone) js.semantic_error(where_id() + ": missing \"successors\"");
    if (succ_kind != K::kArray) {
      js.semantic_error(where_id() + ": expected \"successors\" to be an array of taskIds, got " +
                        brief(succ_other.view()));
    }
    if (!succ_bad.empty()) js.semantic_error(where_id() + ": " + succ_bad);
    const std::uint32_t earlier = topo.add(t, core_known, i);
    if (earlier != IdIndex<std::uint32_t>::kAbsent) {
      js.semantic_error(where_id() + ": taskId " + std::to_string(id) +
                        " already appears in record " + std::to_string(earlier));
    }
    for (const std::uint32_t v : succ) topo.builder->add_successor(v);  // taskIds for now
    ++i;
    if (!memory_checked && js.offset() >= (std::uint64_t{4} << 20)) {
      memory_checked = true;
      check_board_memory(path, topo, js.file_bytes(), js.offset(), "records");
    }
  }
  js.end_document();
  if (i == 0) throw TraceError(path + ": the JSON array is empty (no tasks)");
}

std::string topo_location(const std::string& path, const Topology& topo, std::size_t t) {
  return topo.dyn ? path + ":" + std::to_string(topo.line[t])
                  : path + " record " + std::to_string(t);
}

enum class BlockField { kBlockIdx, kCoreType, kTasks, kOther };
BlockField block_field(std::string_view k) {
  if (k == "blockIdx") return BlockField::kBlockIdx;
  if (k == "coreType") return BlockField::kCoreType;
  if (k == "tasks") return BlockField::kTasks;
  return BlockField::kOther;
}
enum class RecField { kTaskId, kSeqNo, kExecStart, kExecEnd, kOther };
RecField rec_field(std::string_view k) {
  switch (k.size()) {
    case 5:
      if (k == "seqNo") return RecField::kSeqNo;
      break;
    case 6:
      if (k == "taskId") return RecField::kTaskId;
      break;
    case 7:
      if (k == "execEnd") return RecField::kExecEnd;
      break;
    case 9:
      if (k == "execStart") return RecField::kExecStart;
      break;
    default: break;
  }
  return RecField::kOther;
}

// One block of tilefwk_L1_prof_data.json as parsed, before it is joined. A block's keys may
// come in any order (its records are checked against its coreType), so its records are
// held (24 bytes each) and checked when the block is joined, in the DOM reader's order: the
// block's keys, then its records.
struct ProfBlock {
  struct Rec {
    std::uint32_t task_id = 0, seq = 0;
    std::uint64_t start = 0, end = 0;
  };
  HeldScalar block_idx, core, tasks_other;
  SeenKeys seen;
  K tasks_kind = K::kNone;
  std::vector<Rec> recs;
  bool rec_bad = false;  // a record that fails its own checks; recs holds those before it
  std::string rec_bad_msg;
};

// Parses the prof file on a thread of its own (BatchPipe) while the topology is read: until
// the join the two files are independent, and the join needs the whole topology. What ended
// the parse (a syntax error, the file missing, a block that is no object) is rethrown by
// next() after the blocks before it, so every message and its order are those of reading
// the two files one after the other.
class ProfParser {
 public:
  explicit ProfParser(const std::string& prof_path)
      : path_(prof_path),
        pipe_(kMaxQueuedRecords, [this](BatchPipe<ProfBlock>& pipe) { run(pipe); }) {}
  ProfParser(const ProfParser&) = delete;
  ProfParser& operator=(const ProfParser&) = delete;

  // Contract: the next block in file order into `out`, true; false after the last block;
  // the error that ended the parse, rethrown, once the blocks before it are taken.
  bool next(ProfBlock& out) { return pipe_.next(out); }
  // Contract: stops the parse and joins the thread; true if it had read the whole file
  // without a syntax error (JsonStream::semantic_error's question).
  bool stop() { return pipe_.stop(); }

 private:
  using Stopped = BatchPipe<ProfBlock>::Stopped;
  // Parsed blocks ahead of the join at most (24 B each: 96 MiB), so that a 10M-task
  // recording is not held twice; a block larger than that still goes alone.
  static constexpr std::size_t kMaxQueuedRecords = std::size_t{1} << 22;

  void run(BatchPipe<ProfBlock>& pipe);
  void read_block(JsonStream& js, ProfBlock& b);
  void read_records(JsonStream& js, ProfBlock& b);

  const std::string& path_;
  JsonStream::Scalar tmp_;
  JsonStream::PlainObject plain_;
  BatchPipe<ProfBlock>* out_ = nullptr;  // the pipe, for stopping() during a block
  BatchPipe<ProfBlock> pipe_;            // last: its thread starts once the members above exist
};

void ProfParser::run(BatchPipe<ProfBlock>& pipe) {
  out_ = &pipe;
  JsonStream js(path_, "block");
  if (js.peek_kind() != K::kArray) {
    js.semantic_error(path_ + ": expected a JSON array of {blockIdx, coreType, tasks}");
  }
  js.begin_array();
  bool first = true;
  for (std::uint64_t block = 0; js.next_element(first); ++block) {
    const K kind = js.peek_kind();
    if (kind != K::kObject) {
      HeldScalar v;
      read_held(js, v, tmp_);
      js.semantic_error(path_ + ": block " + std::to_string(block) + ": expected an object, got " +
                        brief(v.view()));
    }
    ProfBlock b;
    read_block(js, b);
    const std::size_t weight = b.recs.size();
    pipe.push(std::move(b), weight);
  }
  js.end_document();
}

void ProfParser::read_records(JsonStream& js, ProfBlock& b) {
  b.recs.clear();
  b.rec_bad = false;
  js.begin_array();
  bool first = true;
  HeldScalar task_id, seq, start, end;
  SeenKeys seen;
  while (js.next_element(first)) {
    const std::uint64_t r = b.recs.size();
    if ((r & 0xFFFF) == 0xFFFF && out_->stopping()) throw Stopped{};  // a huge block: stop promptly
    const K kind = js.peek_kind();
    if (kind != K::kObject) {
      HeldScalar v;
      read_held(js, v, tmp_);
      if (!b.rec_bad) {
        b.rec_bad = true;
        b.rec_bad_msg =
            ", record " + std::to_string(r) + ": expected an object, got " + brief(v.view());
      }
      continue;
    }
    task_id.kind = seq.kind = start.kind = end.kind = K::kNone;
    seen.clear();
    read_object(js, plain_, 0, tmp_, [&](std::string_view key, FieldValue& v) {
      const RecField field = rec_field(key);
      if (field != RecField::kOther) seen.add(static_cast<unsigned>(field), key);
      switch (field) {
        case RecField::kTaskId: v.hold(task_id); break;
        case RecField::kSeqNo: v.hold(seq); break;
        case RecField::kExecStart: v.hold(start); break;
        case RecField::kExecEnd: v.hold(end); break;
        case RecField::kOther: v.skip(); break;
      }
    });
    if (b.rec_bad) continue;
    ProfBlock::Rec rec;
    std::uint64_t v = 0;
    std::string msg = seen.repeated.empty() ? "" : seen.message().substr(2);
    if (msg.empty()) msg = check_uint(task_id, "taskId", 0xFFFFFFFFull, &v);
    rec.task_id = static_cast<std::uint32_t>(v);
    if (msg.empty() && seq.present()) {
      msg = check_uint(seq, "seqNo", 0xFFFFFFFFull, &v);
      rec.seq = static_cast<std::uint32_t>(v);
    }
    if (msg.empty()) msg = check_uint(start, "execStart", ~0ull, &rec.start);
    if (msg.empty()) msg = check_uint(end, "execEnd", ~0ull, &rec.end);
    if (!msg.empty()) {
      b.rec_bad = true;
      b.rec_bad_msg = ", record " + std::to_string(r) + ": " + msg;
      continue;
    }
    b.recs.push_back(rec);
  }
}

void ProfParser::read_block(JsonStream& js, ProfBlock& b) {
  js.begin_object();
  bool first_key = true;
  std::string_view key;
  while (js.next_key(first_key, key)) {
    const BlockField field = block_field(key);
    if (field != BlockField::kOther) b.seen.add(static_cast<unsigned>(field), key);
    switch (field) {
      case BlockField::kBlockIdx: read_held(js, b.block_idx, tmp_); break;
      case BlockField::kCoreType: read_held(js, b.core, tmp_); break;
      case BlockField::kOther: js.skip_value(); break;
      case BlockField::kTasks:
        b.tasks_kind = js.peek_kind();
        if (b.tasks_kind == K::kArray) {
          read_records(js, b);
        } else {
          b.recs.clear();
          b.rec_bad = false;
          read_held(js, b.tasks_other, tmp_);
        }
        break;
    }
  }
}

// Joins the parsed prof blocks with the topology, in file order.
class ProfJoin {
 public:
  ProfJoin(const std::string& path, const std::string& prof_path, Topology& topo, LoadedTrace& out,
           UnpricedWork& work, ProfParser& parser)
      : path_(path), prof_path_(prof_path), topo_(topo), out_(out), work_(work), parser_(parser) {}

  void run();

  std::uint64_t joined = 0, min_start = ~std::uint64_t(0), max_end = 0, total_records = 0;
  std::string min_start_where, max_end_where;
  // The same over AIC/AIV records only: the recording's AICore end to end.
  std::uint64_t core_start = ~std::uint64_t(0), core_end = 0;
  model::RecordedCores cores;  // blockIdx per core type: which chip the recording ran on
  bool any_block_idx = false;

 private:
  struct Place {  // a record, for messages
    std::uint64_t block = 0, record = 0;
    bool has_block_idx = false;
    std::uint32_t block_idx = 0;
  };
  void check_block(const ProfBlock& blk);
  // JsonStream::semantic_error for the prof file: a syntax error anywhere in it goes first.
  [[noreturn]] void semantic_error(const std::string& msg) {
    if (!parser_.stop()) check_json_syntax(prof_path_, "block");
    throw TraceError(msg);
  }
  std::string block_where(std::uint64_t b, bool has_idx, std::uint32_t idx) const {
    std::string w = prof_path_ + ": block " + std::to_string(b);
    if (has_idx) w += " (blockIdx " + std::to_string(idx) + ")";
    return w;
  }
  std::string place_where(const Place& p) const {
    return block_where(p.block, p.has_block_idx, p.block_idx) + ", record " +
           std::to_string(p.record);
  }

  const std::string& path_;
  const std::string& prof_path_;
  Topology& topo_;
  LoadedTrace& out_;
  UnpricedWork& work_;
  ProfParser& parser_;
  std::uint64_t block_ = 0;
  std::vector<std::uint64_t> block_first_ord_;  // ordinal of each block's first record
  Place min_place_, max_place_;
};

void ProfJoin::check_block(const ProfBlock& blk) {
  const std::uint64_t b = block_;
  std::string bwhere = prof_path_ + ": block " + std::to_string(b);
  if (!blk.seen.repeated.empty()) semantic_error(bwhere + blk.seen.message());
  bool has_idx = false;
  std::uint32_t idx = 0;
  if (blk.block_idx.present()) {
    std::uint64_t v = 0;
    const std::string msg = check_uint(blk.block_idx, "blockIdx", 0xFFFFFFFFull, &v);
    if (!msg.empty()) semantic_error(bwhere + ": " + msg);
    has_idx = true;
    idx = static_cast<std::uint32_t>(v);
    bwhere += " (blockIdx " + std::to_string(idx) + ")";
  }
  const std::string msg = check_string(blk.core, "coreType");
  if (!msg.empty()) semantic_error(bwhere + ": " + msg);
  const std::string& core_name = blk.core.s;
  const auto block_core = common::parse_core_type(core_name);
  if (!block_core) {
    semantic_error(bwhere + ": expected \"coreType\" to be AIC, AIV or AI-CPU, got \"" + core_name +
                   "\"");
  }
  if (has_idx && (*block_core == CoreType::kAic || *block_core == CoreType::kAiv)) {
    any_block_idx = true;
    if (*block_core == CoreType::kAic) {
      cores.max_aic_block = cores.any_aic ? std::max(cores.max_aic_block, idx) : idx;
      cores.any_aic = true;
    } else {
      cores.min_aiv_block = cores.any_aiv ? std::min(cores.min_aiv_block, idx) : idx;
      cores.max_aiv_block = cores.any_aiv ? std::max(cores.max_aiv_block, idx) : idx;
      cores.any_aiv = true;
    }
  }
  if (blk.tasks_kind == K::kNone) semantic_error(bwhere + ": missing \"tasks\"");
  if (blk.tasks_kind != K::kArray) {
    semantic_error(bwhere + ": expected \"tasks\" to be an array, got " +
                   brief(blk.tasks_other.view()));
  }
  block_first_ord_.push_back(total_records);
  work_.prof_blocks.push_back({total_records, has_idx, idx});
  sched::TaskGraph& g = topo_.builder->graph();
  auto where = [&](std::size_t r) { return bwhere + ", record " + std::to_string(r); };
  for (std::size_t r = 0; r < blk.recs.size(); ++r) {
    ++total_records;
    const ProfBlock::Rec& rec = blk.recs[r];
    const std::uint32_t t = topo_.find(rec.seq, rec.task_id);
    if (t == IdIndex<std::uint32_t>::kAbsent) {
      if (!topo_.dyn && rec.seq != 0) {
        // topo.json describes device task 0 only; the recording may hold more.
        ++out_.ignored_prof_records;
        continue;
      }
      semantic_error(where(r) + ": seqNo " + std::to_string(rec.seq) + " taskId " +
                     std::to_string(rec.task_id) + " is not a task of " + path_);
    }
    if (topo_.flags[t] & Topology::kProfSeen) {
      const std::uint64_t ord = topo_.prof_ord[t];
      const auto it = std::upper_bound(block_first_ord_.begin(), block_first_ord_.end(), ord) - 1;
      semantic_error(where(r) + ": a second record for taskId " + std::to_string(rec.task_id) +
                     " (seqNo " + std::to_string(rec.seq) + "); the first is block " +
                     std::to_string(it - block_first_ord_.begin()) + ", record " +
                     std::to_string(ord - *it));
    }
    const bool core_known = (topo_.flags[t] & Topology::kCoreKnown) != 0;
    if (core_known && g.core_type[t] != *block_core) {
      semantic_error(where(r) + ": taskId " + std::to_string(rec.task_id) + " (seqNo " +
                     std::to_string(rec.seq) + ") is an " +
                     std::string(common::to_string(g.core_type[t])) + " task in " +
                     topo_location(path_, topo_, t) + ", but this block's coreType is " +
                     core_name);
    }
    if (rec.end < rec.start) {
      semantic_error(where(r) + ": execEnd " + std::to_string(rec.end) + " is before execStart " +
                     std::to_string(rec.start));
    }
    g.core_type[t] = *block_core;
    topo_.flags[t] = Topology::kCoreKnown | Topology::kProfSeen;
    work_.dur_ticks[t] = rec.end - rec.start;  // priced at the board clock
    if (g.recorded_start_ps.empty()) g.recorded_start_ps.assign(g.num_tasks(), common::kNever);
    g.recorded_start_ps[t] = rec.start;  // ticks until priced
    topo_.prof_ord[t] = static_cast<std::uint32_t>(total_records - 1);
    const Place here{b, r, has_idx, idx};
    if (rec.start < min_start) {
      min_start = rec.start;
      min_place_ = here;
    }
    if (rec.end > max_end) {
      max_end = rec.end;
      max_place_ = here;
    }
    if (common::is_dispatchable(*block_core)) {
      core_start = std::min(core_start, rec.start);
      core_end = std::max(core_end, rec.end);
    }
    ++joined;
  }
  if (blk.rec_bad) semantic_error(bwhere + blk.rec_bad_msg);
}

void ProfJoin::run() {
  topo_.prof_ord.assign(topo_.size(), 0);
  work_.dur_ticks.assign(topo_.size(), 0);
  ProfBlock blk;
  while (parser_.next(blk)) {
    check_block(blk);
    ++block_;
  }
  if (joined > 0) {
    min_start_where = place_where(min_place_);
    max_end_where = place_where(max_place_);
  }
}

}  // namespace

ReadTrace load_board(const std::string& path, TraceFormat format, const LoadOptions& opts) {
  const bool dyn = format == TraceFormat::kDynTopo;
  const char* kind = dyn ? "dyn_topo.txt" : "topo.json";
  if (opts.prof_path.empty()) {
    throw TraceError(path + ": a " + std::string(kind) +
                     " topology needs --prof tilefwk_L1_prof_data.json with the recorded times");
  }
  // The prof file is parsed beside the topology (ProfParser); the join follows.
  ProfParser prof(opts.prof_path);
  sched::TaskGraphBuilder builder(path);
  Topology topo;
  topo.builder = &builder;
  topo.dyn = dyn;
  // Progress counts the bytes read of both files (the prof file counts once it is joined).
  const std::uint64_t topo_bytes = input_file_size(path);
  const std::uint64_t total_bytes =
      opts.progress ? topo_bytes + input_file_size(opts.prof_path) : 0;
  if (dyn) {
    read_dyn_topo(path, topo);
  } else {
    read_topo_json(path, topo);
  }
  if (opts.progress) opts.progress(std::min<std::uint64_t>(topo_bytes, total_bytes), total_bytes);

  // Successors name taskIds of the same seqNo; turn them into task indices.
  sched::TaskGraph& g = builder.graph();
  const std::size_t n = g.num_tasks();
  for (std::size_t t = 0; t < n; ++t) {
    const std::uint32_t last =
        t + 1 < n ? g.succ_begin[t + 1] : static_cast<std::uint32_t>(g.succ.size());
    const std::uint32_t seq = topo.seq_of(t);
    for (std::uint32_t e = g.succ_begin[t]; e < last; ++e) {
      const std::uint32_t to = topo.find(seq, g.succ[e]);
      if (to == IdIndex<std::uint32_t>::kAbsent) {
        throw TraceError(topo_location(path, topo, t) + ": successor " + std::to_string(g.succ[e]) +
                         " of task " + std::to_string(g.orig_id[t]) + " is not a task of seqNo " +
                         std::to_string(seq));
      }
      g.succ[e] = to;
    }
  }

  // Join the prof records on (seqNo, taskId).
  const std::string& prof_path = opts.prof_path;
  ReadTrace read;
  LoadedTrace& out = read.trace;
  UnpricedWork& work = read.work;
  ProfJoin join(path, prof_path, topo, out, work, prof);
  join.run();
  if (opts.progress) opts.progress(total_bytes, total_bytes);
  topo.index.clear();
  topo.index0.clear();
  if (join.joined == 0) {
    throw TraceError(prof_path + ": none of its " + std::to_string(join.total_records) +
                     " records is a task of " + path + "; are they from the same run?");
  }

  // Tasks without a record are zero-cost dependency nodes (DESIGN.md "Trace formats"). The
  // recorded ones keep their ticks for the pricing pass.
  for (std::size_t t = 0; t < n; ++t) {
    if (topo.flags[t] & Topology::kProfSeen) continue;
    topo.prof_ord[t] = UnpricedWork::kNoProf;
    g.recorded_ns[t] = 0;
    g.recorded_start_ps[t] = common::kNever;
    if (!(topo.flags[t] & Topology::kCoreKnown)) {
      g.core_type[t] = CoreType::kHub;  // topo.json names no core type: nothing to dispatch
      ++out.unrecorded_tasks;
    } else if (g.core_type[t] != CoreType::kHub) {
      ++out.unrecorded_tasks;
    }
  }
  std::vector<std::uint8_t>().swap(topo.flags);
  work.prof_ord = std::move(topo.prof_ord);
  std::vector<common::TaskId> moved;
  try {
    out.graph = builder.finish(&moved);
  } catch (const TraceError& e) {
    throw TraceError(path + ": " + e.what());
  }
  permute_column(work.dur_ticks, moved);
  permute_column(work.prof_ord, moved);
  work.path = prof_path;
  work.min_start_ticks = join.min_start;
  work.max_end_ticks = join.max_end;
  work.aicore_start_ticks = join.core_start;
  work.aicore_end_ticks = join.core_end;
  work.min_start_where = std::move(join.min_start_where);
  work.max_end_where = std::move(join.max_end_where);
  out.format = format;
  if (join.any_block_idx) out.recorded_cores = join.cores;
  return read;
}

}  // namespace pypto::trace::detail
