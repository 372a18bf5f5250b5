// SPDX-License-Identifier: Apache-2.0
// Reader of the native NDJSON trace (traces/FORMAT.md). The file is read in 1 MiB chunks
// cut at line boundaries; simdjson On-Demand (iterate_many) walks each chunk's records
// into batches of plain structs, so a 10M-task trace never exists as text or DOM in memory.
// Line numbers for messages are recovered from record offsets and the newlines counted
// before each chunk.
//
// The parse runs off this thread (BatchPipe): a parse thread reads the chunks and two
// RecordParsers parse every other one each, running the checks that concern one record
// alone; the parse thread hands their batches on in file order. This thread takes them,
// runs the checks across records (dense ids, roots, device tasks, kernel indices by first
// appearance) and builds the graph. A record's own errors come first, those found after
// it (text after the object) once it is checked, and a chunk's error goes after the
// records before it, so the first error in file order is the one reported.
#include <simdjson.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "batch_pipe.h"
#include "pypto/common/errors.h"
#include "pypto/model/cost_model.h"
#include "pypto/sched/stitcher.h"
#include "readers.h"

namespace pypto::sim::trace_detail {

namespace {

namespace od = simdjson::ondemand;
using sched::CoreType;
using sched::TaskGraphBuilder;

constexpr std::size_t kChunkBytes = std::size_t(1) << 20;
constexpr std::size_t kBatchBytes = std::size_t(1) << 20;
constexpr std::size_t kBatchRecords = 1024;  // records per Batch
constexpr std::uint64_t kFormatVersion = 1;
constexpr sched::TaskId kReserveProbe = 1 << 16;
// The shortest task record, {"id":0,"core":"AIC"} and its newline: a file of B bytes holds
// at most B / 23 tasks.
constexpr std::uint64_t kMinTaskRecordBytes = 23;
// Memory per task: the graph's fixed columns (35 B: core type, device task, root, kernel,
// original id, CSR offset, predecessor count, recorded ns, cycles, tiles), and the run's own
// state (task start/end for the statistics, scheduler state; 24 B). With 4 B per edge and
// 16 B per memory range it gives 109 B/task for the 10M-task mix trace of `pypto-sim gen`,
// as measured (peak RSS of `run --no-trace`).
constexpr double kGraphBytesPerTask = 35;
constexpr double kRunBytesPerTask = 24;
constexpr const char* kTaskKeys =
    "id, core, kernel, root, dt, pg, succ, start, end, dur, mem, ops, tiles, cycles";

// Keys of all record kinds; a record's kind follows from which keys it has.
enum Key : std::uint32_t {
  kId = 1u << 0,
  kCore = 1u << 1,
  kKernel = 1u << 2,
  kRoot = 1u << 3,
  kDt = 1u << 4,
  kPg = 1u << 5,
  kSucc = 1u << 6,
  kStart = 1u << 7,
  kEnd = 1u << 8,
  kDur = 1u << 9,
  kMem = 1u << 10,
  kOps = 1u << 11,
  kTiles = 1u << 12,
  kDeviceTask = 1u << 13,
  kParallelGroup = 1u << 14,
  kCycles = 1u << 15,
  kUnknown = 0,
};

Key key_of(std::string_view k) {
  switch (k.size()) {
    case 2:
      if (k == "id") return kId;
      if (k == "dt") return kDt;
      if (k == "pg") return kPg;
      break;
    case 3:
      if (k == "end") return kEnd;
      if (k == "dur") return kDur;
      if (k == "mem") return kMem;
      if (k == "ops") return kOps;
      break;
    case 4:
      if (k == "core") return kCore;
      if (k == "root") return kRoot;
      if (k == "succ") return kSucc;
      break;
    case 5:
      if (k == "start") return kStart;
      if (k == "tiles") return kTiles;
      break;
    case 6:
      if (k == "kernel") return kKernel;
      if (k == "cycles") return kCycles;
      break;
    case 11:
      if (k == "device_task") return kDeviceTask;
      break;
    case 14:
      if (k == "parallel_group") return kParallelGroup;
      break;
    default: break;
  }
  return kUnknown;
}

bool is_structural_error(simdjson::error_code e) {
  return e != simdjson::INCORRECT_TYPE && e != simdjson::NUMBER_OUT_OF_RANGE;
}

// Direct-mapped cache from exact text to a value: traces repeat a handful of kernel names
// and op lists millions of times, and a hit costs one hash and one compare.
template <class V>
class TextCache {
 public:
  V* find(std::string_view text, std::size_t h) {
    Slot& s = slots_[h % kSlots];
    return s.used && s.text == text ? &s.value : nullptr;
  }
  void put(std::string_view text, std::size_t h, V v) {
    Slot& s = slots_[h % kSlots];
    s.text.assign(text.data(), text.size());
    s.value = v;
    s.used = true;
  }

 private:
  static constexpr std::size_t kSlots = 256;
  struct Slot {
    std::string text;
    V value{};
    bool used = false;
  };
  Slot slots_[kSlots];
};

// A task or device-task record as parsed, before the checks across records.
struct Rec {
  std::uint64_t line = 0;
  std::uint64_t id = 0, root = 0, dt = 0, pg = 0, start = 0, end = 0, dur = 0;
  std::uint64_t tiles = 1, extra_cycles = 0;
  std::uint32_t seen = 0;  // Key bits
  std::uint32_t device_task = 0, parallel_group = 0;
  std::uint32_t kernel = 0;  // its parser's own index (first appearance), see Batch::kernels
  std::uint32_t cycles = 0;
  CoreType core = CoreType::kAiv;
  std::uint32_t succ_begin = 0, succ_end = 0, mem_begin = 0, mem_end = 0;  // in Batch
};
struct Batch {
  std::vector<Rec> recs;  // recs[0, size): the batch; the rest keep their buffers
  std::size_t size = 0;
  std::vector<sched::TaskId> succ;
  std::vector<sched::MemAccess> mem;
  std::vector<std::string> kernels;  // kernel names first seen in this batch, in order
  std::uint32_t parser = 0;          // the RecordParser whose kernel numbering Rec::kernel uses
  bool header = false;               // the header was read (before the records)
  bool chunk_end = false;            // the batch ends a chunk of `consumed` bytes
  bool check_memory = false;         // ... the first one: estimate the whole trace's memory
  std::uint64_t consumed = 0;
  void reset() {
    size = 0;
    succ.clear();
    mem.clear();
    kernels.clear();
    header = chunk_end = check_memory = false;
  }
};

// The header line's fields.
struct Header {
  bool seen = false;
  bool has_tasks = false;
  std::uint64_t tasks = 0;
  std::uint64_t reserve_tasks = 0;  // `tasks` capped by what the file can hold
  std::string chip_hint;
};

// The parse of chunks of whole lines into batches of records, with the checks that concern
// one record alone. The reader runs two, each on every other chunk (NativeReader::parse),
// so each keeps its own simdjson parsers, caches and kernel numbering; a batch names the
// parser whose numbering its records use. Errors name the file and line; a chunk's first
// line number is given with the chunk.
class RecordParser {
 public:
  RecordParser(const std::string& path, const ChipConfig& chip, std::uint64_t file_bytes,
               std::uint32_t index)
      : path_(path), chip_(chip), file_bytes_(file_bytes), index_(index) {
    cur_.parser = index_;
  }

  // Contract: parses the chunk [base, base + len) of whole lines, whose first line has
  // number first_line + 1 and whose buffer (simdjson's padding included) ends at
  // alloc_end, into batches(): full ones and a last, possibly empty, one. Returns what
  // ended the parse early (a TraceError naming the line), after the records before it
  // were put in batches(); null if the chunk parsed to its end.
  std::exception_ptr parse_chunk(const char* base, std::size_t len, const char* alloc_end,
                                 std::uint64_t first_line);
  // The batches of the last chunk, in file order; the caller empties it.
  std::vector<Batch>& batches() { return out_; }
  // Contract: a batch to fill again (its buffers keep their capacity).
  void give_spare(Batch&& b) {
    if (spare_.size() < kMaxSpare) spare_.push_back(std::move(b));
  }
  const Header& header() const { return header_; }
  // For a parser whose chunks all come after the header line.
  void assume_header_seen() { header_.seen = true; }

 private:
  [[noreturn]] __attribute__((noinline, cold)) void fail(const std::string& msg) const {
    throw TraceError(path_ + ":" + std::to_string(line_) + ": " + msg);
  }
  [[noreturn]] __attribute__((noinline, cold)) void fail_json(simdjson::error_code e) const {
    std::string msg = std::string("malformed JSON: ") + simdjson::error_message(e);
    if (last_line_unterminated_) msg += " (the file ends inside this line: truncated?)";
    fail(msg);
  }
  [[noreturn]] __attribute__((noinline, cold)) void fail_type(od::value& v, std::string_view what,
                                                              simdjson::error_code e);
  [[noreturn]] __attribute__((noinline, cold)) void fail_range(std::string_view what,
                                                               std::uint64_t max,
                                                               std::uint64_t got);

  void process_line(const char* p, std::size_t len, std::size_t capacity);
  void process_lines(const char* p, const char* stop, const char* alloc_end);
  void process_chunk(const char* base, std::size_t len, const char* alloc_end);
  void check_single_value(const char* p, std::size_t len);
  void parse_header(od::object& obj);
  void parse_record(od::object& obj);
  void handle_field(std::string_view key, od::value& v);
  void emit();
  void flush();

  std::uint64_t get_u64(od::value& v, std::string_view what, std::uint64_t max);
  std::string_view get_str(od::value& v, std::string_view what);
  void parse_succ(od::value& v);
  void parse_mem(od::value& v);
  std::uint32_t parse_ops(od::value& v);
  std::uint32_t parse_kernel(od::value& v);
  std::uint32_t price_ops(std::string_view raw);

  // A chunk holds ~6 batches; spares beyond that would only hold memory.
  static constexpr std::size_t kMaxSpare = 8;

  const std::string& path_;
  const ChipConfig& chip_;
  const std::uint64_t file_bytes_;
  const std::uint32_t index_;
  Header header_;
  Batch cur_;
  std::vector<Batch> out_;
  std::vector<Batch> spare_;
  std::unordered_map<std::string, std::uint32_t> kernel_local_;
  od::parser parser_;       // iterate_many over chunks
  od::parser line_parser_;  // the line-by-line path (a chunk's stream may still be open)
  od::parser ops_parser_;
  od::parser check_parser_;
  simdjson::padded_string check_text_;
  std::uint64_t line_ = 0;
  bool last_line_unterminated_ = false;

  // the record being parsed
  std::uint32_t seen_ = 0;
  std::uint64_t f_id_ = 0, f_root_ = 0, f_dt_ = 0, f_pg_ = 0, f_start_ = 0, f_end_ = 0, f_dur_ = 0,
                f_tiles_ = 1, f_device_task_ = 0, f_parallel_group_ = 0;
  CoreType f_core_ = CoreType::kAiv;
  std::uint32_t f_kernel_ = 0;
  std::uint32_t f_cycles_ = 0;
  std::uint64_t f_extra_cycles_ = 0;  // "cycles": compute beyond the ops (e.g. dynamic-shape work)
  std::vector<sched::TaskId> f_succ_;
  std::vector<sched::MemAccess> f_mem_;
  TextCache<std::uint32_t> kernel_cache_;
  TextCache<std::uint32_t> ops_cache_;
  simdjson::padded_string ops_text_;
};

// A RecordParser's own thread for the whole read: the reading thread hands it one chunk at
// a time and takes the chunk's result back before handing it the next. One thread per parser
// instead of one per chunk (a 1M-task trace is ~180 chunks).
class ParseWorker {
 public:
  explicit ParseWorker(RecordParser& parser) : parser_(parser) {}
  ParseWorker(const ParseWorker&) = delete;
  ParseWorker& operator=(const ParseWorker&) = delete;
  // Waits for the chunk in flight (the caller's buffers outlive this object), then ends
  // the thread.
  ~ParseWorker() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  // Contract: no chunk is in flight (start() is followed by wait() before the next
  // start()). Starts RecordParser::parse_chunk on this worker's thread.
  void start(const char* base, std::size_t len, const char* alloc_end, std::uint64_t first_line) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      NPU_CHECK(!pending_ && !finished_, "ParseWorker::start with a chunk in flight");
      job_ = Job{base, len, alloc_end, first_line};
      pending_ = true;
    }
    cv_.notify_all();
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  }

  // Contract: after start(). Blocks until that chunk is parsed; returns parse_chunk's result
  // (its batches are in the parser's batches()).
  std::exception_ptr wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return finished_; });
    finished_ = false;
    return std::exchange(error_, nullptr);
  }

 private:
  struct Job {
    const char* base = nullptr;
    std::size_t len = 0;
    const char* alloc_end = nullptr;
    std::uint64_t first_line = 0;
  };

  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      cv_.wait(lock, [this] { return pending_ || quit_; });
      if (!pending_) return;  // quit with nothing in flight
      const Job job = job_;
      lock.unlock();
      // parse_chunk catches what the parse throws; what escapes it (bad_alloc in its flush)
      // is the chunk's error all the same.
      std::exception_ptr error;
      try {
        error = parser_.parse_chunk(job.base, job.len, job.alloc_end, job.first_line);
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      pending_ = false;
      finished_ = true;
      error_ = error;
      cv_.notify_all();
    }
  }

  RecordParser& parser_;
  std::mutex mu_;
  std::condition_variable cv_;
  Job job_;
  bool pending_ = false;   // a chunk handed over and not yet parsed
  bool finished_ = false;  // a chunk parsed and not yet taken by wait()
  bool quit_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // started with the first chunk
};

class NativeReader {
 public:
  NativeReader(const std::string& path, const LoadOptions& opts, const ChipConfig& chip)
      : path_(path),
        opts_(opts),
        builder_(path),
        file_bytes_(input_file_size(path)),
        parsers_{RecordParser(path, chip, file_bytes_, 0),
                 RecordParser(path, chip, file_bytes_, 1)} {}

  LoadedTrace run();

 private:
  struct DeviceTaskInfo {
    std::uint32_t parallel_group = 0;
    bool declared = false;  // a device-task record exists
    std::uint64_t decl_line = 0;
    std::uint64_t first_task_line = 0;
  };

  [[noreturn]] __attribute__((noinline, cold)) void fail_at(std::uint64_t line,
                                                            const std::string& msg) const {
    throw TraceError(path_ + ":" + std::to_string(line) + ": " + msg);
  }

  // The parse thread.
  void parse(BatchPipe<Batch>& pipe);
  // This thread.
  void add_task(const Rec& r, const Batch& batch);
  void add_device_task_record(const Rec& r);
  std::uint32_t kernel_of(std::uint32_t local, const Batch& batch);
  void reserve_edges_and_memory();
  void check_memory(std::uint64_t consumed_bytes);
  const Header& header() const { return parsers_[0].header(); }

  // Parsed records ahead of the checks at most (about 120 B each).
  static constexpr std::size_t kMaxQueuedRecords = 8 * kBatchRecords;

  const std::string& path_;
  const LoadOptions& opts_;
  TaskGraphBuilder builder_;  // this thread's
  const std::uint64_t file_bytes_;
  // The parse thread's, and its helpers'. The header is always parsed by parsers_[0]
  // (the second one starts once the header is read); this thread reads it once a batch
  // with `header` is taken.
  RecordParser parsers_[2];

  // This thread's: across records.
  std::vector<std::uint32_t> kernel_map_[2];  // a parser's kernel index -> the builder's
  std::size_t batch_kernel_ = 0;              // Batch::kernels taken
  std::uint32_t unnamed_kernel_ = sched::kNoTask;
  int dt_mode_ = -1;  // -1: no task yet; 0: no task has "dt"; 1: every task has "dt"
  std::uint64_t first_task_line_ = 0;
  std::uint64_t first_dt_record_line_ = 0;
  bool have_prev_root_ = false;
  std::uint64_t prev_root_ = 0;
  std::uint32_t prev_pg_ = 0;
  std::uint32_t dense_root_ = 0;
  std::vector<std::uint32_t> task_pg_;  // no-"dt" traces: input to the stitcher
  std::unordered_map<std::uint32_t, DeviceTaskInfo> device_tasks_;
  std::uint64_t max_succ_ = 0, max_succ_line_ = 0, max_succ_task_ = 0;
  bool any_succ_ = false;
  bool any_interval_ = false;
  std::uint64_t min_start_ = ~std::uint64_t(0), max_end_ = 0;
  std::uint64_t min_start_line_ = 0, max_end_line_ = 0;
};

// Recorded times become ps relative to the first start (one rule for a whole read and for a
// graph assembled from pushed device tasks).
void make_starts_relative(sched::TaskGraph& g, std::uint64_t min_start_ns, std::uint64_t span_ns) {
  g.recorded_makespan_ps = span_ns * 1000;
  for (sched::TimePs& s : g.recorded_start_ps) {
    if (s != sched::kNever) s = (s - min_start_ns) * 1000;
  }
}

void RecordParser::fail_type(od::value& v, std::string_view what, simdjson::error_code e) {
  if (is_structural_error(e)) fail_json(e);
  std::string got;
  od::json_type t;
  if (v.type().get(t) == simdjson::SUCCESS) {
    switch (t) {
      case od::json_type::array: got = "an array"; break;
      case od::json_type::object: got = "an object"; break;
      default: {
        std::string_view tok = v.raw_json_token();
        while (!tok.empty() && std::strchr(" \t\r\n", tok.back())) tok.remove_suffix(1);
        if (tok.size() > 40) tok = tok.substr(0, 40);
        got = std::string(tok);
      }
    }
  } else {
    got = "something else";
  }
  fail("expected " + std::string(what) + ", got " + got);
}

void RecordParser::fail_range(std::string_view what, std::uint64_t max, std::uint64_t got) {
  fail("expected " + std::string(what) + " (at most " + std::to_string(max) + "), got " +
       std::to_string(got));
}

inline std::uint64_t RecordParser::get_u64(od::value& v, std::string_view what, std::uint64_t max) {
  std::uint64_t x = 0;
  const auto e = v.get_uint64().get(x);
  if (simdjson_unlikely(e)) fail_type(v, what, e);
  if (simdjson_unlikely(x > max)) fail_range(what, max, x);
  return x;
}

// Strings without escapes (all that real traces contain) are returned as views of the
// input, which skips simdjson's copy into its string buffer; others are unescaped.
inline std::string_view RecordParser::get_str(od::value& v, std::string_view what) {
  const std::string_view tok = v.raw_json_token();
  if (simdjson_likely(tok.size() >= 2 && tok[0] == '"')) {
    const char* body = tok.data() + 1;
    const void* q = std::memchr(body, '"', tok.size() - 1);
    if (q && !std::memchr(body, '\\', std::size_t(static_cast<const char*>(q) - body))) {
      od::raw_json_string skip;
      if (const auto e = v.get_raw_json_string().get(skip)) fail_json(e);
      return std::string_view(body, std::size_t(static_cast<const char*>(q) - body));
    }
  }
  std::string_view s;
  const auto e = v.get_string().get(s);
  if (e) fail_type(v, what, e);
  return s;
}

// The same for keys.
inline std::string_view field_key(od::field& field, simdjson::error_code* err) {
  const char* body = field.key().raw();
  const char* q = body;
  while (*q != '"') {
    if (*q == '\\') {
      std::string_view k;
      *err = field.unescaped_key().get(k);
      return k;
    }
    ++q;
  }
  *err = simdjson::SUCCESS;
  return std::string_view(body, std::size_t(q - body));
}

void RecordParser::parse_succ(od::value& v) {
  od::array arr;
  if (const auto e = v.get_array().get(arr)) fail_type(v, "\"succ\" to be an array of task ids", e);
  for (auto item : arr) {
    od::value x;
    if (const auto e = item.get(x)) fail_json(e);
    const std::uint64_t id =
        get_u64(x, "each entry of \"succ\" to be a task id", sched::kNoTask - 1);
    f_succ_.push_back(static_cast<sched::TaskId>(id));
  }
}

void RecordParser::parse_mem(od::value& v) {
  constexpr std::string_view kWhat = "each entry of \"mem\" to be [address, bytes, \"r\"|\"w\"]";
  od::array arr;
  if (const auto e = v.get_array().get(arr)) {
    fail_type(v, "\"mem\" to be an array of [address, bytes, \"r\"|\"w\"]", e);
  }
  for (auto item : arr) {
    od::value entry;
    if (const auto e = item.get(entry)) fail_json(e);
    od::array fields;
    if (const auto e = entry.get_array().get(fields)) fail_type(entry, kWhat, e);
    sched::MemAccess m;
    int n = 0;
    for (auto field : fields) {
      od::value x;
      if (const auto e = field.get(x)) fail_json(e);
      switch (n++) {
        case 0: m.addr = get_u64(x, "a \"mem\" address to be a non-negative integer", ~0ull); break;
        case 1:
          m.bytes = static_cast<std::uint32_t>(
              get_u64(x, "a \"mem\" size to be a byte count", 0xFFFFFFFFull));
          if (m.bytes == 0) fail("a \"mem\" range of 0 bytes; give at least 1 byte");
          break;
        case 2: {
          const std::string_view kind = get_str(x, "a \"mem\" access kind \"r\" or \"w\"");
          if (kind == "r") {
            m.is_write = 0;
          } else if (kind == "w") {
            m.is_write = 1;
          } else {
            fail("expected a \"mem\" access kind \"r\" or \"w\", got \"" + std::string(kind) +
                 "\"");
          }
          break;
        }
        default: fail("expected " + std::string(kWhat) + ", got more than 3 fields");
      }
    }
    if (n != 3) fail("expected " + std::string(kWhat) + ", got " + std::to_string(n) + " fields");
    if (m.bytes - 1 > ~std::uint64_t{0} - m.addr) {
      fail("the \"mem\" range at address " + std::to_string(m.addr) + " of " +
           std::to_string(m.bytes) + " bytes passes the end of the 64-bit address space");
    }
    f_mem_.push_back(m);
  }
}

std::uint32_t RecordParser::parse_kernel(od::value& v) {
  const std::string_view s = get_str(v, "\"kernel\" to be a string");
  const std::size_t h = std::hash<std::string_view>{}(s);
  if (const std::uint32_t* hit = kernel_cache_.find(s, h)) return *hit;
  const auto [it, inserted] =
      kernel_local_.try_emplace(std::string(s), static_cast<std::uint32_t>(kernel_local_.size()));
  if (inserted) cur_.kernels.push_back(it->first);
  kernel_cache_.put(s, h, it->second);
  return it->second;
}

// The builder's index of the parse's kernel `local`; a kernel seen for the first time is
// the batch's next new name (the parse numbers them in file order, as they are taken).
std::uint32_t NativeReader::kernel_of(std::uint32_t local, const Batch& batch) {
  std::vector<std::uint32_t>& map = kernel_map_[batch.parser];
  if (local >= map.size()) map.push_back(builder_.kernel_index(batch.kernels[batch_kernel_++]));
  return map[local];
}

std::uint32_t RecordParser::parse_ops(od::value& v) {
  od::array arr;
  if (const auto e = v.get_array().get(arr)) {
    fail_type(v, "\"ops\" to be an array of [\"op\", \"dtype\", [dims...]]", e);
  }
  std::string_view raw;
  if (const auto e = arr.raw_json().get(raw)) fail_json(e);
  while (!raw.empty() && std::strchr(" \t\r\n", raw.back())) raw.remove_suffix(1);
  const std::size_t h = std::hash<std::string_view>{}(raw);
  if (const std::uint32_t* hit = ops_cache_.find(raw, h)) return *hit;
  const std::uint32_t cycles = price_ops(raw);
  ops_cache_.put(raw, h, cycles);
  return cycles;
}

// Prices an op list seen for the first time. It is parsed again on its own (the main
// document has moved past it), which is cheap because the cache makes this rare.
std::uint32_t RecordParser::price_ops(std::string_view raw) {
  constexpr std::string_view kWhat = "each entry of \"ops\" to be [\"op\", \"dtype\", [dims...]]";
  ops_text_ = simdjson::padded_string(raw);
  od::document doc;
  if (const auto e = ops_parser_.iterate(ops_text_).get(doc)) fail_json(e);
  od::array arr;
  if (const auto e = doc.get_array().get(arr)) fail_json(e);
  std::uint64_t total = 0;
  for (auto item : arr) {
    od::value entry;
    if (const auto e = item.get(entry)) fail_json(e);
    od::array fields;
    if (const auto e = entry.get_array().get(fields)) fail_type(entry, kWhat, e);
    TileOp op;
    int n = 0;
    for (auto field : fields) {
      od::value x;
      if (const auto e = field.get(x)) fail_json(e);
      switch (n++) {
        case 0: {
          const std::string_view name = get_str(x, "a tile op name (a string)");
          if (!is_known_tile_op(name)) {
            fail("unknown tile op \"" + std::string(name) + "\" in \"ops\"");
          }
          op.op = std::string(name);
          break;
        }
        case 1: {
          const std::string_view dt = get_str(x, "a dtype such as \"fp16\"");
          if (!parse_dtype(dt, &op.dtype)) {
            fail("unknown dtype \"" + std::string(dt) +
                 "\" in \"ops\" (expected fp32, fp16, "
                 "bf16, int8, int16, int32, int64 or bool)");
          }
          break;
        }
        case 2: {
          od::array dims;
          if (const auto e = x.get_array().get(dims)) fail_type(x, "a tile shape [dims...]", e);
          for (auto d : dims) {
            od::value dv;
            if (const auto e = d.get(dv)) fail_json(e);
            const std::uint64_t dim =
                get_u64(dv, "a tile dimension (a positive integer)", 0x7FFFFFFFull);
            if (dim == 0) fail("a tile dimension of 0 in \"ops\"");
            op.shape.push_back(static_cast<std::int64_t>(dim));
          }
          break;
        }
        default: fail("expected " + std::string(kWhat) + ", got more than 3 fields");
      }
    }
    if (n != 3) fail("expected " + std::string(kWhat) + ", got " + std::to_string(n) + " fields");
    try {
      total += tile_op_cycles(op, chip_);
    } catch (const TraceError& e) {
      fail(e.what());
    }
  }
  if (total > 0xFFFFFFFFull) fail("the \"ops\" of one task add up to more than 2^32 cycles");
  return static_cast<std::uint32_t>(total);
}

void RecordParser::parse_header(od::object& obj) {
  bool has_format = false, has_version = false;
  std::vector<std::string> seen;  // a repeated key is an error, as in a task record
  for (auto field_res : obj) {
    od::field field;
    if (const auto e = std::move(field_res).get(field)) fail_json(e);
    std::string_view key;
    if (const auto e = field.unescaped_key().get(key)) fail_json(e);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      fail("duplicate key \"" + std::string(key) + "\" in the header");
    }
    seen.emplace_back(key);
    od::value& v = field.value();
    if (key == "format") {
      const std::string_view f = get_str(v, "\"format\" to be \"pypto-sim-trace\"");
      if (f != "pypto-sim-trace") {
        fail("expected \"format\" to be \"pypto-sim-trace\", got \"" + std::string(f) + "\"");
      }
      has_format = true;
    } else if (key == "version") {
      const std::uint64_t ver = get_u64(v, "\"version\" to be an integer", ~0ull);
      if (ver != kFormatVersion) {
        fail("unsupported trace format version " + std::to_string(ver) +
             "; this build reads version " + std::to_string(kFormatVersion));
      }
      has_version = true;
    } else if (key == "chip") {
      header_.chip_hint = std::string(get_str(v, "\"chip\" to be a chip name"));
    } else if (key == "time_unit") {
      const std::string_view u = get_str(v, "\"time_unit\" to be \"ns\"");
      if (u != "ns") {
        fail("unsupported \"time_unit\" \"" + std::string(u) + "\"; version 1 uses \"ns\"");
      }
    } else if (key == "tasks") {
      header_.tasks = get_u64(v, "\"tasks\" to be the task count", sched::kNoTask - 1);
      header_.has_tasks = true;
    } else if (key == "generator") {
      get_str(v, "\"generator\" to be a string");
    } else {
      fail("unknown key \"" + std::string(key) +
           "\" in the header (known: format, version, chip, time_unit, tasks, generator)");
    }
  }
  if (header_.has_tasks) {
    // Only a hint for allocation (checked at the end), never trusted beyond what the file
    // can hold: a header announcing 2^32 tasks in a small file must not reserve 64 GB.
    header_.reserve_tasks =
        std::min<std::uint64_t>(header_.tasks, file_bytes_ / kMinTaskRecordBytes);
  }
  if (!has_format) fail("the first line must be the header {\"format\":\"pypto-sim-trace\",...}");
  if (!has_version) fail("the header has no \"version\"; this build reads version 1");
  header_.seen = true;
  cur_.header = true;
}

// One field of a task or device-task record.
void RecordParser::handle_field(std::string_view key, od::value& v) {
  const Key k = key_of(key);
  if (k == kUnknown) {
    fail("unknown key \"" + std::string(key) + "\" (a task record has: " + kTaskKeys +
         "; a device-task record has: device_task, parallel_group)");
  }
  if (seen_ & k) fail("duplicate key \"" + std::string(key) + "\"");
  seen_ |= k;
  switch (k) {
    case kId: f_id_ = get_u64(v, "\"id\" to be a task id", sched::kNoTask - 1); break;
    case kCore: {
      const std::string_view s = get_str(v, "\"core\" to be one of AIC, AIV, HUB, AICPU");
      const auto ct = sched::parse_core_type(s);
      if (!ct) {
        fail("expected \"core\" to be one of AIC, AIV, HUB, AICPU, got \"" + std::string(s) + "\"");
      }
      f_core_ = *ct;
      break;
    }
    case kKernel: f_kernel_ = parse_kernel(v); break;
    case kRoot: f_root_ = get_u64(v, "\"root\" to be a root-instance index", 0xFFFFFFFEull); break;
    case kDt: f_dt_ = get_u64(v, "\"dt\" to be a device-task id", 0xFFFFFFFFull); break;
    case kPg: f_pg_ = get_u64(v, "\"pg\" to be a parallel-group id", 0xFFFFFFFFull); break;
    case kSucc: parse_succ(v); break;
    case kStart: f_start_ = get_u64(v, "\"start\" to be a time in ns", ~0ull); break;
    case kEnd: f_end_ = get_u64(v, "\"end\" to be a time in ns", ~0ull); break;
    case kDur: f_dur_ = get_u64(v, "\"dur\" to be a duration in ns", sched::kNoRecord - 1); break;
    case kMem: parse_mem(v); break;
    case kOps: f_cycles_ = parse_ops(v); break;
    case kCycles:
      f_extra_cycles_ = get_u64(v, "\"cycles\" to be a cycle count", 0xFFFFFFFFull);
      break;
    case kTiles:
      f_tiles_ = get_u64(v, "\"tiles\" to be a tile count", 0xFFFF);
      if (f_tiles_ == 0) fail("expected \"tiles\" to be at least 1, got 0");
      break;
    case kDeviceTask:
      f_device_task_ = get_u64(v, "\"device_task\" to be a device-task id", 0xFFFFFFFFull);
      break;
    case kParallelGroup:
      f_parallel_group_ = get_u64(v, "\"parallel_group\" to be a parallel-group id", 0xFFFFFFFFull);
      break;
    case kUnknown: break;
  }
}

void RecordParser::parse_record(od::object& obj) {
  seen_ = 0;
  f_succ_.clear();
  f_mem_.clear();
  f_tiles_ = 1;
  f_cycles_ = 0;
  f_extra_cycles_ = 0;
  f_pg_ = 0;
  f_root_ = 0;
  for (auto field_res : obj) {
    od::field field;
    if (const auto e = std::move(field_res).get(field)) fail_json(e);
    simdjson::error_code key_err;
    const std::string_view key = field_key(field, &key_err);
    if (key_err) fail_json(key_err);
    handle_field(key, field.value());
  }
  if (seen_ & (kDeviceTask | kParallelGroup)) {
    if (seen_ & ~(kDeviceTask | kParallelGroup)) {
      fail("a record mixes device-task keys (device_task, parallel_group) with task keys");
    }
  }
  emit();
}

void RecordParser::emit() {
  Batch& b = cur_;
  if (b.size == b.recs.size()) b.recs.emplace_back();
  Rec& r = b.recs[b.size++];
  r.line = line_;
  r.seen = seen_;
  r.id = f_id_;
  r.root = f_root_;
  r.dt = f_dt_;
  r.pg = f_pg_;
  r.start = f_start_;
  r.end = f_end_;
  r.dur = f_dur_;
  r.tiles = f_tiles_;
  r.extra_cycles = f_extra_cycles_;
  r.device_task = static_cast<std::uint32_t>(f_device_task_);
  r.parallel_group = static_cast<std::uint32_t>(f_parallel_group_);
  r.kernel = f_kernel_;
  r.cycles = f_cycles_;
  r.core = f_core_;
  r.succ_begin = static_cast<std::uint32_t>(b.succ.size());
  b.succ.insert(b.succ.end(), f_succ_.begin(), f_succ_.end());
  r.succ_end = static_cast<std::uint32_t>(b.succ.size());
  r.mem_begin = static_cast<std::uint32_t>(b.mem.size());
  b.mem.insert(b.mem.end(), f_mem_.begin(), f_mem_.end());
  r.mem_end = static_cast<std::uint32_t>(b.mem.size());
  if (b.size == kBatchRecords) flush();
}

void RecordParser::flush() {
  out_.push_back(std::move(cur_));
  if (spare_.empty()) {
    cur_ = Batch{};
  } else {
    cur_ = std::move(spare_.back());
    spare_.pop_back();
    cur_.reset();
  }
  cur_.parser = index_;
}

void NativeReader::add_device_task_record(const Rec& r) {
  if (!(r.seen & kDeviceTask)) fail_at(r.line, "a device-task record needs \"device_task\"");
  if (dt_mode_ == 0) {
    fail_at(r.line, "a device-task record, but the tasks have no \"dt\" (first task on line " +
                        std::to_string(first_task_line_) +
                        "); \"dt\" is needed to refer to device tasks");
  }
  const auto key = static_cast<std::uint32_t>(r.device_task);
  auto [it, inserted] = device_tasks_.try_emplace(key);
  if (!inserted) {
    if (it->second.declared)
      fail_at(r.line, "device task " + std::to_string(key) + " is declared twice");
    fail_at(r.line, "the record of device task " + std::to_string(key) +
                        " comes after its first task (line " +
                        std::to_string(it->second.first_task_line) +
                        "); declare a device task before its tasks");
  }
  it->second.declared = true;
  it->second.decl_line = r.line;
  it->second.parallel_group = static_cast<std::uint32_t>(r.parallel_group);
  if (first_dt_record_line_ == 0) first_dt_record_line_ = r.line;
}

// Once a sample of tasks has been read, the edge and memory columns are reserved for the
// announced task count at the sample's density: growing them by doubling would copy
// gigabytes for a 10M-task trace.
void NativeReader::reserve_edges_and_memory() {
  const double scale = 1.05 * static_cast<double>(header().reserve_tasks) / (kReserveProbe + 1);
  const auto want = [&](std::uint64_t have) {
    return static_cast<std::size_t>(std::min(static_cast<double>(have) * scale, 4.0e9));
  };
  sched::TaskGraph& g = builder_.graph();
  g.succ.reserve(want(g.succ.size()));
  g.mem.reserve(want(g.mem.size()));
  if (!g.mem_begin.empty()) g.mem_begin.reserve(header().reserve_tasks + 1);
}

// After the first chunk: the whole trace's memory from the densities seen so far, so that a
// trace too large for the machine is refused in a second, not after minutes of swapping.
void NativeReader::check_memory(std::uint64_t consumed_bytes) {
  const double n = static_cast<double>(builder_.num_tasks());
  if (n == 0 || consumed_bytes == 0) return;
  const double tasks = header().has_tasks ? static_cast<double>(header().reserve_tasks)
                                          : static_cast<double>(file_bytes_) * n /
                                                static_cast<double>(consumed_bytes);
  const double per_task = kGraphBytesPerTask + (builder_.has_memory() ? 4.0 : 0.0) +
                          (any_interval_ ? 8.0 : 0.0) +
                          4.0 * static_cast<double>(builder_.edges_listed()) / n +
                          static_cast<double>(sizeof(sched::MemAccess)) *
                              static_cast<double>(builder_.memory_ranges()) / n +
                          kRunBytesPerTask;
  check_fits_memory(path_, tasks, per_task,
                    header().has_tasks ? "tasks from the header"
                                       : "tasks from the file size at the density of its first " +
                                             std::to_string(builder_.num_tasks()) + " tasks",
                    opts_);
}

void NativeReader::add_task(const Rec& r, const Batch& batch) {
  if (!(r.seen & kId)) fail_at(r.line, "a task record needs \"id\"");
  if (!(r.seen & kCore)) fail_at(r.line, "a task record needs \"core\" (AIC, AIV, HUB or AICPU)");
  const std::size_t n = builder_.num_tasks();
  if (r.id != n) {
    fail_at(r.line, "expected \"id\" " + std::to_string(n) +
                        " (ids are dense and in file order), got " + std::to_string(r.id));
  }
  // "dt" is all-or-none; the first task decides.
  const bool has_dt = (r.seen & kDt) != 0;
  if (dt_mode_ < 0) {
    dt_mode_ = has_dt ? 1 : 0;
    first_task_line_ = r.line;
    if (header().has_tasks) reserve_task_columns(builder_.graph(), header().reserve_tasks);
    if (!has_dt && first_dt_record_line_ != 0) {
      fail_at(r.line, "the trace declares device tasks (line " +
                          std::to_string(first_dt_record_line_) + ") but this task has no \"dt\"");
    }
  } else if (has_dt != (dt_mode_ == 1)) {
    fail_at(r.line,
            std::string(has_dt ? "this task has \"dt\" but" : "this task has no \"dt\" but") +
                " the first task (line " + std::to_string(first_task_line_) +
                (has_dt ? ") has none" : ") has one") + "; \"dt\" is all-or-none");
  }

  // Roots are renumbered densely; they must not decrease (the tasks of a root instance
  // are contiguous, as the control flow emits them).
  const auto pg = static_cast<std::uint32_t>(r.pg);
  if (!have_prev_root_ || r.root != prev_root_) {
    if (have_prev_root_ && r.root < prev_root_) {
      fail_at(r.line, "\"root\" " + std::to_string(r.root) +
                          " is smaller than the previous task's root " +
                          std::to_string(prev_root_) + "; roots must be non-decreasing");
    }
    if (have_prev_root_) ++dense_root_;
    have_prev_root_ = true;
    prev_root_ = r.root;
  } else if (dt_mode_ == 0 && pg != prev_pg_) {
    fail_at(r.line, "\"pg\" " + std::to_string(pg) + " differs from the earlier tasks of root " +
                        std::to_string(r.root) + " (" + std::to_string(prev_pg_) +
                        "); a root belongs to one parallel group");
  }
  prev_pg_ = pg;

  TaskGraphBuilder::Task t;
  t.core_type = r.core;
  t.root = dense_root_;
  t.orig_id = static_cast<std::uint32_t>(r.id);
  if (!(r.seen & kKernel)) {
    if (unnamed_kernel_ == sched::kNoTask) unnamed_kernel_ = builder_.kernel_index("unnamed");
    t.kernel = unnamed_kernel_;
  } else {
    t.kernel = kernel_of(r.kernel, batch);
  }
  const std::uint64_t cycles = std::uint64_t{r.cycles} + r.extra_cycles;
  if (cycles > 0xFFFFFFFFull)
    fail_at(r.line, "the task's compute cycles (ops + \"cycles\") exceed 2^32-1");
  t.compute_cycles = static_cast<std::uint32_t>(cycles);
  t.tiles = static_cast<std::uint16_t>(r.tiles);
  t.parallel_group = pg;
  if (dt_mode_ == 1) {
    const auto key = static_cast<std::uint32_t>(r.dt);
    auto [it, inserted] = device_tasks_.try_emplace(key);
    DeviceTaskInfo& info = it->second;
    if (info.first_task_line == 0) {
      info.first_task_line = r.line;
      if (!info.declared) info.parallel_group = pg;
    }
    if (!(r.seen & kPg)) {
      t.parallel_group = info.parallel_group;
    } else if (pg != info.parallel_group) {
      fail_at(r.line,
              "\"pg\" " + std::to_string(pg) + " differs from device task " + std::to_string(key) +
                  "'s parallel group " + std::to_string(info.parallel_group) + " (line " +
                  std::to_string(info.declared ? info.decl_line : info.first_task_line) + ")");
    }
    t.device_task_seq = key;
  } else {
    task_pg_.push_back(pg);
  }

  // A HUB is resolved inline by the AICPU and never runs: a time, memory or ops on it
  // would be silently ignored, so they are refused.
  if (r.core == CoreType::kHub && (r.seen & (kStart | kEnd | kDur | kMem | kOps))) {
    fail_at(r.line,
            "a HUB task is a zero-cost dependency node; it takes no \"start\", \"end\", "
            "\"dur\", \"mem\" or \"ops\"");
  }
  const bool has_start = (r.seen & kStart) != 0, has_end = (r.seen & kEnd) != 0;
  if (has_start != has_end)
    fail_at(r.line, "\"start\" and \"end\" go together; give both or \"dur\" alone");
  if (has_start) {
    if (r.seen & kDur) fail_at(r.line, "give either \"start\"/\"end\" or \"dur\", not both");
    if (r.end < r.start) {
      fail_at(r.line, "\"end\" " + std::to_string(r.end) + " is before \"start\" " +
                          std::to_string(r.start));
    }
    if (r.end - r.start >= sched::kNoRecord) {
      fail_at(r.line, "the task lasts " + std::to_string(r.end - r.start) +
                          " ns, more than the 2^32-2 ns a task may last");
    }
    t.recorded_ns = static_cast<std::uint32_t>(r.end - r.start);
    t.recorded_start_ps = r.start;  // ns for now; made relative to the first start at the end
    any_interval_ = true;
    if (r.start < min_start_) {
      min_start_ = r.start;
      min_start_line_ = r.line;
    }
    if (r.end > max_end_) {
      max_end_ = r.end;
      max_end_line_ = r.line;
    }
  } else if (r.seen & kDur) {
    t.recorded_ns = static_cast<std::uint32_t>(r.dur);
  }

  const sched::TaskId id = builder_.add_task(t);
  if (simdjson_unlikely(id == kReserveProbe && header().has_tasks)) reserve_edges_and_memory();
  for (std::uint32_t e = r.succ_begin; e < r.succ_end; ++e) {
    const sched::TaskId s = batch.succ[e];
    builder_.add_successor(s);
    if (!any_succ_ || s > max_succ_) {
      any_succ_ = true;
      max_succ_ = s;
      max_succ_line_ = r.line;
      max_succ_task_ = r.id;
    }
  }
  for (std::uint32_t e = r.mem_begin; e < r.mem_end; ++e) builder_.add_memory(batch.mem[e]);
}

void RecordParser::process_line(const char* p, std::size_t len, std::size_t capacity) {
  ++line_;
  std::size_t i = 0;
  while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r')) ++i;
  if (i == len) return;  // blank lines are allowed anywhere
  od::document doc;
  if (const auto e = line_parser_.iterate(p, len, capacity).get(doc)) fail_json(e);
  od::object obj;
  if (const auto e = doc.get_object().get(obj)) {
    if (e == simdjson::INCORRECT_TYPE) fail("expected one JSON object per line");
    fail_json(e);
  }
  if (!header_.seen) {
    parse_header(obj);
  } else {
    parse_record(obj);
  }
  // After the object, the document must be exhausted: more text means a second value on
  // the line (or garbage), which NDJSON does not allow.
  if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS) {
    fail("unexpected text after the JSON object (one record per line)");
  }
}

void RecordParser::process_lines(const char* p, const char* stop, const char* alloc_end) {
  while (p < stop) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', std::size_t(stop - p)));
    const char* line_end = nl ? nl : stop;
    last_line_unterminated_ = !nl;
    process_line(p, std::size_t(line_end - p), std::size_t(alloc_end - p));
    p = nl ? nl + 1 : stop;
  }
}

// Parses a chunk of whole lines with simdjson's iterate_many, which runs stage 1 over
// 1 MiB batches instead of once per line (per line, stage 1 is a large share of the read).
// Line numbers are recovered from document offsets. Anything unusual (a JSON error, a line
// longer than a batch, a truncated last line) hands the rest of the chunk, from the line
// after the last record taken, to the line-by-line path, which reports the exact line.
void RecordParser::process_chunk(const char* base, std::size_t len, const char* alloc_end) {
  std::size_t done = 0;             // end of the line of the last record taken
  std::uint64_t done_line = line_;  // its line number
  od::document_stream stream;
  if (parser_.iterate_many(base, len, kBatchBytes).get(stream) != simdjson::SUCCESS) {
    return process_lines(base, base + len, alloc_end);
  }
  for (auto it = stream.begin(); it != stream.end(); ++it) {
    // simdjson 3.0.1 reports the first record of a new batch at the end of the previous
    // record (before the separating whitespace): move to the record itself.
    std::size_t off = it.current_index();
    while (off < len &&
           (base[off] == '\n' || base[off] == ' ' || base[off] == '\t' || base[off] == '\r')) {
      ++off;
    }
    if (off < done) {
      line_ = done_line;
      fail("unexpected text after the JSON object (one record per line)");
    }
    line_ = done_line + 1;
    // Between the previous record's line and this record there may only be blank lines;
    // anything else is the tail of a record that spanned lines.
    for (std::size_t i = done; i < off; ++i) {
      const char c = base[i];
      if (c == '\n') {
        ++line_;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        fail("text left over from the record on line " + std::to_string(done_line) +
             "; a record must fit on one line");
      }
    }
    auto doc_ref = *it;
    od::document_reference doc;
    if (std::move(doc_ref).get(doc) != simdjson::SUCCESS) break;
    od::object obj;
    if (doc.get_object().get(obj) != simdjson::SUCCESS) break;
    const char* nl = static_cast<const char*>(std::memchr(base + off, '\n', len - off));
    const std::size_t line_end = nl ? std::size_t(nl - base) + 1 : len;
    last_line_unterminated_ = !nl;
    if (!header_.seen) {
      parse_header(obj);
    } else {
      parse_record(obj);
    }
    // The next token (the next record) must be on a later line. At the end of a batch
    // there is no next token in view, so the line is checked on its own instead.
    const char* after = nullptr;
    if (doc.current_location().get(after) == simdjson::SUCCESS) {
      if (std::size_t(after - base) < line_end) {
        fail("unexpected text after the JSON object (one record per line)");
      }
    } else {
      check_single_value(base + off, line_end - off);
    }
    done = line_end;
    done_line = line_;
  }
  // Whatever was not taken (an error, a truncated last line, or nothing) goes through the
  // line path.
  line_ = done_line;
  if (done < len) process_lines(base + done, base + len, alloc_end);
}

// Checks that a line holds exactly one JSON value (used where the batch parser cannot see
// past the record).
void RecordParser::check_single_value(const char* p, std::size_t len) {
  check_text_ = simdjson::padded_string(std::string_view(p, len));
  od::document doc;
  if (const auto e = check_parser_.iterate(check_text_).get(doc)) fail_json(e);
  od::object obj;
  std::string_view raw;
  if (const auto e = doc.get_object().get(obj)) {
    if (e == simdjson::INCORRECT_TYPE) fail("expected one JSON object per line");
    fail_json(e);
  }
  if (const auto e = obj.raw_json().get(raw)) fail_json(e);
  if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS) {
    fail("unexpected text after the JSON object (one record per line)");
  }
}

std::exception_ptr RecordParser::parse_chunk(const char* base, std::size_t len,
                                             const char* alloc_end, std::uint64_t first_line) {
  line_ = first_line;
  std::exception_ptr error;
  try {
    process_chunk(base, len, alloc_end);
  } catch (...) {
    error = std::current_exception();
  }
  flush();
  return error;
}

// The parse thread: reads the file in chunks of whole lines and has two RecordParsers parse
// every other chunk each, on threads of their own, while it reads the next; it hands their
// batches on in file order. A chunk's first line number comes from counting the newlines
// before it. Until the header line is read, one parser takes the chunks one at a time.
void NativeReader::parse(BatchPipe<Batch>& pipe) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path_.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) throw TraceError(path_ + ": cannot open: " + std::strerror(errno));
  // Three buffers: the chunks the two parsers hold and the one being read. Each holds whole
  // lines plus simdjson's padding; a line longer than a buffer doubles it.
  const std::size_t pad = simdjson::SIMDJSON_PADDING;
  std::vector<char> bufs[3];
  bufs[0].resize(read_buffer_bytes(file_bytes_, kChunkBytes) + pad);

  struct Job {
    std::uint32_t parser = 0;
    std::uint64_t consumed = 0;  // bytes of whole lines up to the chunk's end
    bool check_memory = false;
  };
  // Declared after the buffers: on the way out each waits for its chunk in flight.
  ParseWorker workers[2] = {ParseWorker(parsers_[0]), ParseWorker(parsers_[1])};
  std::deque<Job> jobs;
  // Hands the oldest chunk's batches on; a parse error goes after the records before it.
  const auto take_oldest = [&] {
    const Job job = jobs.front();
    jobs.pop_front();
    const std::exception_ptr error = workers[job.parser].wait();
    RecordParser& p = parsers_[job.parser];
    std::vector<Batch>& out = p.batches();
    for (std::size_t k = 0; k < out.size(); ++k) {
      Batch& b = out[k];
      const std::size_t records = b.size;
      if (k + 1 < out.size() || !error) {
        if (k + 1 == out.size()) {
          b.chunk_end = true;
          b.consumed = job.consumed;
          b.check_memory = job.check_memory;
        }
        pipe.push(std::move(b), std::max<std::size_t>(records, 1));
      } else {
        pipe.push_partial(std::move(b), records);
      }
      p.give_spare(pipe.recycle());
    }
    out.clear();
    if (error) std::rethrow_exception(error);
  };

  std::size_t cur = 0;             // the buffer being read
  std::size_t have = 0;            // bytes in it
  std::uint64_t consumed = 0;      // bytes of whole lines handed to the parsers
  std::uint64_t lines_before = 0;  // newlines in them
  std::uint32_t next_parser = 0;
  bool eof = false, two_parsers = false, memory_checked = false;
  while (true) {
    std::vector<char>& buf = bufs[cur];
    const std::size_t room = buf.size() - pad - have;
    if (!eof && room > 0) {
      const std::size_t got = std::fread(buf.data() + have, 1, room, file.get());
      if (std::ferror(file.get())) {
        throw TraceError(path_ + ": read error after line " + std::to_string(lines_before));
      }
      have += got;
      if (got < room) eof = true;
    }
    std::size_t end = have;
    if (!eof) {
      const void* nl = have ? memrchr(buf.data(), '\n', have) : nullptr;
      if (!nl) {
        buf.resize((buf.size() - pad) * 2 + pad);
        continue;
      }
      end = static_cast<std::size_t>(static_cast<const char*>(nl) - buf.data()) + 1;
    }
    if (!two_parsers && parsers_[0].header().seen) {
      two_parsers = true;
      parsers_[1].assume_header_seen();
    }
    const std::uint32_t w = two_parsers ? next_parser : 0;
    next_parser ^= 1;
    // With two chunks in flight the older is this parser's previous one: it goes first. (One
    // at a time, before the header, each was taken at the end of its turn.)
    if (jobs.size() == 2) take_oldest();
    consumed += end;
    Job job;
    job.parser = w;
    job.consumed = consumed;
    job.check_memory = !eof && !memory_checked;
    memory_checked = true;
    workers[w].start(buf.data(), end, buf.data() + buf.size(), lines_before);
    jobs.push_back(job);
    if (eof && end == have) break;
    // memchr per line: 7x faster than std::count's byte loop here (no -march).
    for (const char *q = buf.data(), *stop = buf.data() + end;
         (q = static_cast<const char*>(std::memchr(q, '\n', std::size_t(stop - q)))) != nullptr;
         ++q) {
      ++lines_before;
    }
    // The rest of the last line goes to the front of the next buffer, whose chunk (three
    // back) has been handed on.
    const std::size_t next = (cur + 1) % 3;
    if (bufs[next].size() < buf.size()) bufs[next].resize(buf.size());
    std::memcpy(bufs[next].data(), buf.data() + end, have - end);
    have -= end;
    cur = next;
    if (!two_parsers) take_oldest();  // the header is not read yet: one chunk at a time
  }
  while (!jobs.empty()) take_oldest();
}

LoadedTrace NativeReader::run() {
  {
    BatchPipe<Batch> pipe(kMaxQueuedRecords, [this](BatchPipe<Batch>& p) { parse(p); });
    Batch b;
    while (pipe.next(b)) {
      batch_kernel_ = 0;
      for (std::size_t k = 0; k < b.size; ++k) {
        const Rec& r = b.recs[k];
        if (r.seen & (kDeviceTask | kParallelGroup)) {
          add_device_task_record(r);
        } else {
          add_task(r, b);
        }
      }
      if (b.chunk_end) {
        if (opts_.progress) opts_.progress(b.consumed, std::max(b.consumed, file_bytes_));
        if (b.check_memory) check_memory(b.consumed);
      }
    }
  }

  if (!header().seen) throw TraceError(path_ + ": no header line");
  const std::size_t n = builder_.num_tasks();
  if (n == 0) throw TraceError(path_ + ": the trace has no task records");
  if (header().has_tasks && header().tasks != n) {
    throw TraceError(path_ + ": the header announces " + std::to_string(header().tasks) +
                     " tasks but the file has " + std::to_string(n) +
                     (n < header().tasks ? " (truncated?)" : ""));
  }
  if (any_succ_ && max_succ_ >= n) {
    throw TraceError(path_ + ":" + std::to_string(max_succ_line_) + ": task " +
                     std::to_string(max_succ_task_) + " lists successor " +
                     std::to_string(max_succ_) + ", but the trace has only " + std::to_string(n) +
                     " tasks (ids 0.." + std::to_string(n - 1) + ")");
  }
  if (dt_mode_ == 0) {
    // No device-task ids: stitch the roots as the control-flow AICPU would.
    const std::vector<std::uint32_t> dts =
        sched::stitch_device_tasks(builder_.graph().root, task_pg_, opts_.runtime);
    for (std::size_t t = 0; t < n; ++t) {
      builder_.set_device_task(static_cast<sched::TaskId>(t), dts[t], task_pg_[t]);
    }
    std::vector<std::uint32_t>().swap(task_pg_);
  }
  const bool has_interval = any_interval_;
  const std::uint64_t span_ns = has_interval ? max_end_ - min_start_ : 0;
  // Recorded times become ps relative to the first start: the span must fit the clock.
  if (span_ns > sched::kTimeLimitPs / 1000) {
    throw TraceError(path_ + ": the recorded times span " + std::to_string(span_ns) +
                     " ns, from \"start\" " + std::to_string(min_start_) + " (line " +
                     std::to_string(min_start_line_) + ") to \"end\" " + std::to_string(max_end_) +
                     " (line " + std::to_string(max_end_line_) +
                     "), more than the model's time limit of 2^62 ps (about 53 days)");
  }
  LoadedTrace out;
  try {
    out.graph = builder_.finish();
  } catch (const TraceError& e) {
    throw TraceError(path_ + ": " + e.what());
  }
  if (has_interval) make_starts_relative(out.graph, min_start_, span_ns);
  out.format = TraceFormat::kNative;
  out.chip_hint = header().chip_hint;
  return out;
}

}  // namespace

LoadedTrace load_native(const std::string& path, const LoadOptions& opts, const ChipConfig& chip) {
  NativeReader reader(path, opts, chip);
  return reader.run();
}

}  // namespace pypto::sim::trace_detail
