// SPDX-License-Identifier: Apache-2.0
// The native NDJSON reader's parts (traces/FORMAT.md), internal to the reader. The file is
// read in 1 MiB chunks cut at line boundaries; simdjson On-Demand (iterate_many) walks each
// chunk's records into batches of plain structs, so a 10M-task trace never exists as text or
// DOM in memory. Line numbers for messages are recovered from record offsets within a
// chunk; the parse thread adds the lines of the chunks before it as it hands a chunk on.
//
// The parse runs off the reading thread (BatchPipe): a parse thread reads the chunks and two
// RecordParsers parse every other one each, running the checks that concern one record
// alone; the parse thread hands their batches on in file order (read_chunks). The reading
// thread takes them, runs the checks across records (dense ids, roots, device tasks, kernel
// indices by first appearance) and builds the graph (native_reader.cpp). A record's own
// errors come first, those found after it (text after the object) once it is checked, and a
// chunk's error goes after the records before it, so the first error in file order is the
// one reported.
//
// Records in the plain form writers produce are read by a direct scan instead
// (native_fast.cpp): from the first line it leaves, simdjson takes the chunk over the same
// text, so what is reported does not depend on it.
//
// Files: native_parse.cpp is the plumbing (buffers, threads, simdjson's document stream,
// line numbers); native_fast.cpp the direct scan; native_records.cpp the rules of one record
// (header, keys, values, ops); native_reader.cpp the rules across records and the graph.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "batch_pipe.h"
#include "pypto/common/errors.h"
#include "pypto/sched/task_graph.h"
#include "pypto/trace/pricing.h"

namespace pypto::trace::detail::native {

namespace od = simdjson::ondemand;
using common::CoreType;

constexpr std::size_t kChunkBytes = std::size_t(1) << 20;
constexpr std::size_t kBatchBytes = std::size_t(1) << 20;
constexpr std::size_t kBatchRecords = 1024;  // records per Batch
constexpr std::uint64_t kFormatVersion = 1;
// The shortest task record, {"id":0,"core":"AIC"} and its newline: a file of B bytes holds
// at most B / 23 tasks.
constexpr std::uint64_t kMinTaskRecordBytes = 23;

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

Key key_of(std::string_view k);

inline bool is_structural_error(simdjson::error_code e) {
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

// A number's text as the fast path read it last for a key, with the byte after it, as a
// masked word (native_fast.cpp's read_u64_guessed). Before the first: a NUL byte, which no
// value starts with (the record is then left to the walk).
struct NumberGuess {
  std::uint64_t word = 0, mask = 0xFF;
  std::uint64_t value = 0;
  std::uint32_t digits = 0;
};

// A task or device-task record as parsed, before the checks across records.
struct Rec {
  std::uint64_t line = 0;
  std::uint64_t id = 0, root = 0, dt = 0, pg = 0, start = 0, end = 0, dur = 0;
  std::uint64_t tiles = 1, extra_cycles = 0;
  std::uint32_t seen = 0;  // Key bits
  std::uint32_t device_task = 0, parallel_group = 0;
  std::uint32_t kernel = 0;  // its parser's own index (first appearance), see Batch::kernels
  std::uint32_t ops = UnpricedWork::kNoOps;  // its parser's op-list index, see Batch::op_lists
  CoreType core = CoreType::kAiv;
  std::uint32_t succ_begin = 0, succ_end = 0, mem_begin = 0, mem_end = 0;  // in Batch
};
struct Batch {
  std::vector<Rec> recs;  // recs[0, size): the batch; the rest keep their buffers
  std::size_t size = 0;
  std::vector<common::TaskId> succ;
  std::vector<sched::MemAccess> mem;
  std::vector<std::string> kernels;            // kernel names first seen in this batch, in order
  std::vector<UnpricedWork::OpList> op_lists;  // op lists first seen in this batch, in order
  std::uint32_t parser = 0;   // the RecordParser whose numbering Rec::kernel and Rec::ops use
  bool header = false;        // the header was read (before the records)
  bool chunk_end = false;     // the batch ends a chunk of `consumed` bytes
  bool check_memory = false;  // ... the first one: estimate the whole trace's memory
  std::uint64_t consumed = 0;
  void reset() {
    size = 0;
    succ.clear();
    mem.clear();
    kernels.clear();
    op_lists.clear();
    header = chunk_end = check_memory = false;
  }
};

// Gives r the successors and memory ranges b gained since succ_begin / mem_begin.
inline void set_ranges(Rec& r, const Batch& b, std::size_t succ_begin, std::size_t mem_begin) {
  r.succ_begin = static_cast<std::uint32_t>(succ_begin);
  r.succ_end = static_cast<std::uint32_t>(b.succ.size());
  r.mem_begin = static_cast<std::uint32_t>(mem_begin);
  r.mem_end = static_cast<std::uint32_t>(b.mem.size());
}

// The header line's fields.
struct Header {
  bool seen = false;
  bool has_tasks = false;
  std::uint64_t tasks = 0;
  std::uint64_t reserve_tasks = 0;  // `tasks` capped by what the file can hold
  std::string chip_hint;
};

// A parse error on line `line` of a chunk (its first line is 1); read_chunks makes it a
// TraceError naming the file and the line's number in the file.
struct ChunkLineError {
  std::uint64_t line;
  std::string message;
};

// The parse of chunks of whole lines into batches of records, with the checks that concern
// one record alone. The reader runs two, each on every other chunk (read_chunks), so each
// keeps its own simdjson parsers, caches and kernel and op-list numbering; a batch names the
// parser whose numbering its records use. Lines are numbered within the chunk (records, op
// lists and errors): the parser cannot know the lines of a chunk the other one parses.
class RecordParser {
 public:
  RecordParser(const std::string& path, std::uint64_t file_bytes, std::uint32_t index)
      : path_(path), file_bytes_(file_bytes), index_(index) {
    cur_.parser = index_;
  }

  // Contract: parses the chunk [base, base + len) of whole lines, whose buffer (simdjson's
  // padding included) ends at alloc_end, into batches(): full ones and a last, possibly
  // empty, one, numbering its lines from 1. Returns what ended the parse early (a
  // ChunkLineError for the input's faults), after the records before it were put in
  // batches(); null if the chunk parsed to its end.
  std::exception_ptr parse_chunk(const char* base, std::size_t len, const char* alloc_end);
  // The lines of the last chunk parse_chunk() parsed to its end: its newlines (and a last
  // line without one, at the end of the file).
  std::uint64_t chunk_lines() const { return line_; }
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
    throw ChunkLineError{line_, msg};
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

  // Contract: p is a line's first non-blank character, and a newline ends the chunk. Takes
  // the record or header on the line and returns the next line's start, or returns nullptr
  // with nothing of the parser's numbering or batches changed (the walk takes the line). An
  // op list seen for the first time is read as the walk reads it, errors included.
  const char* fast_record(const char* p);
  const char* fast_header(const char* p);
  const char* fast_fields(const char* p, Rec& r, std::string_view* kernel, std::string_view* ops);
  const char* fast_value(unsigned bit, const char* p, Rec& r, std::string_view* kernel,
                         std::string_view* ops);
  [[gnu::always_inline]] const char* fast_succ(const char* p);
  [[gnu::always_inline]] const char* fast_mem(const char* p);
  const char* fast_range(const char* p);
  std::uint32_t kernel_index(std::string_view name);
  std::uint32_t ops_index(std::string_view raw);

  void process_line(const char* p, std::size_t len, std::size_t capacity);
  void process_lines(const char* p, const char* stop, const char* alloc_end);
  void process_chunk(const char* base, std::size_t len, const char* alloc_end);
  void process_stream(const char* base, std::size_t len, const char* alloc_end);
  void check_single_value(const char* p, std::size_t len);
  void parse_header(od::object& obj);
  void parse_record(od::object& obj);
  void handle_field(std::string_view key, od::value& v);
  void emit();
  // The record parsed, whose successors and ranges the batch holds from these indices on.
  void emit_record(std::size_t succ_begin, std::size_t mem_begin);
  void flush();

  std::uint64_t get_u64(od::value& v, std::string_view what, std::uint64_t max);
  std::string_view get_str(od::value& v, std::string_view what);
  void parse_succ(od::value& v);
  void parse_mem(od::value& v);
  std::uint32_t parse_ops(od::value& v);
  std::uint32_t parse_kernel(od::value& v);
  UnpricedWork::OpList read_ops(std::string_view raw);

  // A chunk holds ~6 batches; spares beyond that would only hold memory.
  static constexpr std::size_t kMaxSpare = 8;

  const std::string& path_;
  const std::uint64_t file_bytes_;
  const std::uint32_t index_;
  Header header_;
  Batch cur_;
  std::vector<Batch> out_;
  std::vector<Batch> spare_;
  std::unordered_map<std::string, std::uint32_t> kernel_local_;
  std::unordered_map<std::string, std::uint32_t> ops_local_;  // op-list text -> index
  od::parser parser_;                                         // iterate_many over chunks
  od::parser line_parser_;  // the line-by-line path (a chunk's stream may still be open)
  od::parser ops_parser_;
  od::parser check_parser_;
  simdjson::padded_string check_text_;
  std::uint64_t line_ = 0;
  bool last_line_unterminated_ = false;
  const char* skip_until_ = nullptr;  // the walk passes over the lines before it (taken)

  // the record being parsed
  std::uint32_t seen_ = 0;
  std::uint64_t f_id_ = 0, f_root_ = 0, f_dt_ = 0, f_pg_ = 0, f_start_ = 0, f_end_ = 0, f_dur_ = 0,
                f_tiles_ = 1, f_device_task_ = 0, f_parallel_group_ = 0;
  CoreType f_core_ = CoreType::kAiv;
  std::uint32_t f_kernel_ = 0;
  std::uint32_t f_ops_ = UnpricedWork::kNoOps;
  std::uint64_t f_extra_cycles_ = 0;  // "cycles": compute beyond the ops (e.g. dynamic-shape work)
  std::vector<common::TaskId> f_succ_;
  std::vector<sched::MemAccess> f_mem_;
  TextCache<std::uint32_t> kernel_cache_;
  TextCache<std::uint32_t> ops_cache_;
  // The fast path's op lists and kernel names (quoted) by the bytes they start with
  // (prefix_slot), and the end of the chunk's whole lines, which bounds its compares.
  struct TextSlot {
    std::string text;      // the text, then 7 zero bytes: known_text compares whole words
    std::size_t size = 0;  // of the text itself (0: none)
    std::uint32_t index = 0;
    std::uint64_t head[4] = {};  // the first `head_bytes` (8 or 32) where it was taken
    void set(const char* p, std::size_t n, std::uint32_t i, std::size_t head_bytes) {
      text.assign(p, n);
      text.append(7, '\0');
      size = n;
      index = i;
      std::memcpy(head, p, head_bytes);
    }
  };
  static constexpr std::size_t kTextSlots = 256;
  static std::size_t prefix_slot(const char* p, int bytes);
  // Past the text at p when it starts with slot's remembered text (its index to *index),
  // else nullptr; compares stop at the chunk's whole lines (the last word read may pass them
  // by up to 7 bytes, within the buffer's padding).
  template <int kHeadWords>
  const char* known_text(const TextSlot& slot, const char* p, std::uint32_t* index) const;
  std::vector<TextSlot> ops_by_prefix_ = std::vector<TextSlot>(kTextSlots);
  std::vector<TextSlot> kernels_by_prefix_ = std::vector<TextSlot>(kTextSlots);
  const char* fast_end_ = nullptr;
  simdjson::padded_string ops_text_;
  // The key that followed each key (by bit number; 16: the record's first) in the record
  // before, quotes included, and its ':' where that fits, as a masked word: records of one
  // writer repeat their order, so one compare usually reads the next key (a guess is only
  // taken where the bytes match).
  struct KeyGuess {
    // Before the first guess: a NUL byte, which fast_value refuses (bit 16).
    std::uint64_t word = 0, mask = 0xFF;
    std::uint32_t bytes = 0;
    Key key = kUnknown;
    std::uint32_t bit = 16;  // key's bit number: the next guess's index
    bool colon = false;      // the word ends with the ':'
  };
  KeyGuess key_guess_[17];
  NumberGuess id_guess_, root_guess_, dt_guess_, pg_guess_;
};

// The parse thread: reads the file at `path` (of `file_bytes`) in chunks of whole lines and
// has the two `parsers` parse every other chunk each, on threads of their own, while it reads
// the next; it hands their batches on to `pipe` in file order.
void read_chunks(const std::string& path, std::uint64_t file_bytes, RecordParser (&parsers)[2],
                 BatchPipe<Batch>& pipe);

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

}  // namespace pypto::trace::detail::native