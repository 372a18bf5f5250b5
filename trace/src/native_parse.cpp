// SPDX-License-Identifier: Apache-2.0
// The native reader's plumbing (native_parse.h): a RecordParser's walk over a chunk with
// simdjson's document stream and its line numbers, the batches it fills, the parse threads
// and the chunked read of the file.
#include "native_parse.h"

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
#include <utility>
#include <vector>

#include "readers.h"

namespace pypto::trace::detail::native {

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

void RecordParser::emit() {
  Batch& b = cur_;
  const std::size_t succ_begin = b.succ.size(), mem_begin = b.mem.size();
  b.succ.insert(b.succ.end(), f_succ_.begin(), f_succ_.end());
  b.mem.insert(b.mem.end(), f_mem_.begin(), f_mem_.end());
  emit_record(succ_begin, mem_begin);
}

void RecordParser::emit_record(std::size_t succ_begin, std::size_t mem_begin) {
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
  r.ops = f_ops_;
  r.core = f_core_;
  set_ranges(r, b, succ_begin, mem_begin);
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
    if (p < skip_until_) {
      ++line_;  // taken by the fast path
    } else {
      process_line(p, std::size_t(line_end - p), std::size_t(alloc_end - p));
    }
    p = nl ? nl + 1 : stop;
  }
}

// The fast path takes the plain records (native_fast.cpp); from the first line it leaves,
// the simdjson walk takes the chunk, over the same text as without the fast path, so that
// what it reports is unchanged (an error's message depends on the batch around it). The
// last line of the file may lack its newline: the walk takes it.
void RecordParser::process_chunk(const char* base, std::size_t len, const char* alloc_end) {
  const char* const end = base + len;
  const std::uint64_t first_line = line_;
  skip_until_ = nullptr;
  const void* last_nl = len ? memrchr(base, '\n', len) : nullptr;
  // It reads up to 32 bytes past a line's end (prefix_slot), within simdjson's padding.
  const char* const fast_end =
      last_nl && alloc_end - end >= 32 ? static_cast<const char*>(last_nl) + 1 : base;
  fast_end_ = fast_end;
  const char* p = base;
  while (p < fast_end) {
    const char* q = p;
    while (*q == ' ' || *q == '\t' || *q == '\r') ++q;
    if (*q == '\n') {  // a blank line
      ++line_;
      p = q + 1;
      continue;
    }
    ++line_;  // the record's line, for emit() and messages
    const char* next = header_.seen ? fast_record(q) : fast_header(q);
    if (!next) {
      --line_;  // the walk counts it again
      break;
    }
    p = next;
  }
  if (p == end) return;
  // The walk starts over at the chunk's start, as without the fast path, passing over the
  // lines taken.
  line_ = first_line;
  skip_until_ = p;
  process_stream(base, len, alloc_end);
  skip_until_ = nullptr;
}

// Parses a chunk of whole lines with simdjson's iterate_many, which runs stage 1 over
// 1 MiB batches instead of once per line (per line, stage 1 is a large share of the read).
// Line numbers are recovered from document offsets. Anything unusual (a JSON error, a line
// longer than a batch, a truncated last line) hands the rest of the chunk, from the line
// after the last record taken, to the line-by-line path, which reports the exact line.
void RecordParser::process_stream(const char* base, std::size_t len, const char* alloc_end) {
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
    if (base + off < skip_until_) {  // taken by the fast path
      done = line_end;
      done_line = line_;
      continue;
    }
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
                                             const char* alloc_end) {
  line_ = 0;
  std::exception_ptr error;
  try {
    process_chunk(base, len, alloc_end);
  } catch (...) {
    error = std::current_exception();
  }
  flush();
  return error;
}

namespace {

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
  void start(const char* base, std::size_t len, const char* alloc_end) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      NPU_CHECK(!pending_ && !finished_, "ParseWorker::start with a chunk in flight");
      job_ = Job{base, len, alloc_end};
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
        error = parser_.parse_chunk(job.base, job.len, job.alloc_end);
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

// A read buffer whose bytes are not zeroed when it is made or grows (a vector's resize wrote
// three chunks' worth of zeros that fread then overwrote); read_chunks zeroes the padding
// after the bytes read, so that every byte a parser reads is defined.
class ReadBuffer {
 public:
  std::size_t size() const { return size_; }
  char* data() { return bytes_.get(); }
  const char* data() const { return bytes_.get(); }
  // Contract: n >= size(); the first `keep` bytes (<= size()) are kept, the rest is undefined.
  void grow(std::size_t n, std::size_t keep) {
    std::unique_ptr<char[]> bigger(new char[n]);
    if (keep != 0) std::memcpy(bigger.get(), bytes_.get(), keep);
    bytes_ = std::move(bigger);
    size_ = n;
  }

 private:
  std::unique_ptr<char[]> bytes_;
  std::size_t size_ = 0;
};

}  // namespace

// A chunk's lines are numbered within it; the lines of the chunks handed on before it (their
// parsers count them) make the numbers the file's as the chunk is handed on. Until the
// header line is read, one parser takes the chunks one at a time.
void read_chunks(const std::string& path, std::uint64_t file_bytes, RecordParser (&parsers)[2],
                 BatchPipe<Batch>& pipe) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (!file) throw TraceError(path + ": cannot open: " + std::strerror(errno));
  // Three buffers: the chunks the two parsers hold and the one being read. Each holds whole
  // lines plus simdjson's padding; a line longer than a buffer doubles it.
  const std::size_t pad = simdjson::SIMDJSON_PADDING;
  ReadBuffer bufs[3];
  bufs[0].grow(read_buffer_bytes(file_bytes, kChunkBytes) + pad, 0);

  struct Job {
    std::uint32_t parser = 0;
    std::uint64_t consumed = 0;  // bytes of whole lines up to the chunk's end
    bool check_memory = false;
    const char* base = nullptr;  // the chunk, for a read error's line number
    std::size_t len = 0;
  };
  // Declared after the buffers: on the way out each waits for its chunk in flight.
  ParseWorker workers[2] = {ParseWorker(parsers[0]), ParseWorker(parsers[1])};
  std::deque<Job> jobs;
  std::uint64_t lines_before = 0;  // lines of the chunks handed on
  // Hands the oldest chunk's batches on, its line numbers made the file's; a parse error
  // goes after the records before it.
  const auto take_oldest = [&] {
    const Job job = jobs.front();
    jobs.pop_front();
    const std::exception_ptr error = workers[job.parser].wait();
    RecordParser& p = parsers[job.parser];
    std::vector<Batch>& out = p.batches();
    for (std::size_t k = 0; k < out.size(); ++k) {
      Batch& b = out[k];
      const std::size_t records = b.size;
      for (std::size_t i = 0; i < records; ++i) b.recs[i].line += lines_before;
      for (UnpricedWork::OpList& l : b.op_lists) l.line += lines_before;
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
    if (error) {
      try {
        std::rethrow_exception(error);
      } catch (const ChunkLineError& e) {
        throw TraceError(path + ":" + std::to_string(lines_before + e.line) + ": " + e.message);
      }
    }
    lines_before += p.chunk_lines();
  };

  std::size_t cur = 0;         // the buffer being read
  std::size_t have = 0;        // bytes in it
  std::uint64_t consumed = 0;  // bytes of whole lines handed to the parsers
  std::uint32_t next_parser = 0;
  bool eof = false, two_parsers = false, memory_checked = false;
  while (true) {
    ReadBuffer& buf = bufs[cur];
    const std::size_t room = buf.size() - pad - have;
    if (!eof && room > 0) {
      const std::size_t got = std::fread(buf.data() + have, 1, room, file.get());
      if (std::ferror(file.get())) {
        // The lines handed to the parsers: those handed on, and the chunks in flight.
        std::uint64_t lines = lines_before;
        for (const Job& j : jobs) {
          lines += static_cast<std::uint64_t>(std::count(j.base, j.base + j.len, '\n'));
        }
        throw TraceError(path + ": read error after line " + std::to_string(lines));
      }
      have += got;
      if (got < room) eof = true;
    }
    std::memset(buf.data() + have, 0, pad);
    std::size_t end = have;
    if (!eof) {
      const void* nl = have ? memrchr(buf.data(), '\n', have) : nullptr;
      if (!nl) {
        buf.grow((buf.size() - pad) * 2 + pad, have);
        continue;
      }
      end = static_cast<std::size_t>(static_cast<const char*>(nl) - buf.data()) + 1;
    }
    if (!two_parsers && parsers[0].header().seen) {
      two_parsers = true;
      parsers[1].assume_header_seen();
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
    job.base = buf.data();
    job.len = end;
    memory_checked = true;
    workers[w].start(buf.data(), end, buf.data() + buf.size());
    jobs.push_back(job);
    if (eof && end == have) break;
    // The rest of the last line goes to the front of the next buffer, whose chunk (three
    // back) has been handed on.
    const std::size_t next = (cur + 1) % 3;
    if (bufs[next].size() < buf.size()) bufs[next].grow(buf.size(), 0);
    std::memcpy(bufs[next].data(), buf.data() + end, have - end);
    have -= end;
    cur = next;
    if (!two_parsers) take_oldest();  // the header is not read yet: one chunk at a time
  }
  while (!jobs.empty()) take_oldest();
}

}  // namespace pypto::trace::detail::native
