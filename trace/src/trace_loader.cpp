// SPDX-License-Identifier: Apache-2.0
// Format detection, dispatch to the per-format readers, and what they share.
#include "pypto/trace/trace_loader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/common/memory.h"
#include "readers.h"

namespace pypto::trace {

namespace detail {

std::uint64_t input_file_size(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw TraceError(path + ": cannot open: " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) throw TraceError(path + ": is a directory, not a file");
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISCHR(st.st_mode)    ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISFIFO(st.st_mode) ? "a pipe"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    throw TraceError(path + ": is " + std::string(kind) +
                     ", not a regular file; inputs are read more than once (format detection, "
                     "then parsing): save it to a file first");
  }
  return static_cast<std::uint64_t>(st.st_size);
}

namespace {

std::string gib(double bytes) {
  if (bytes < 1024.0 * 1024 * 1024) return compact(bytes / (1024.0 * 1024)) + " MiB";
  return compact(bytes / (1024.0 * 1024 * 1024)) + " GiB";
}

}  // namespace

void check_fits_memory(const std::string& path, double need_bytes, const std::string& basis,
                       std::uint64_t available_bytes) {
  const std::uint64_t avail = available_bytes != 0 ? available_bytes : available_memory_bytes();
  if (avail == 0 || need_bytes <= static_cast<double>(avail)) return;
  throw TraceError(path + ": loading and simulating this trace needs about " + gib(need_bytes) +
                   " (" + basis + "), but only " + gib(static_cast<double>(avail)) +
                   " of memory is available; free memory or use a smaller trace");
}

void check_fits_memory(const std::string& path, double tasks, double bytes_per_task,
                       const std::string& basis, const LoadOptions& opts) {
  check_fits_memory(
      path, tasks * bytes_per_task,
      compact(tasks) + " tasks x " + compact(bytes_per_task) + " bytes per task; " + basis,
      opts.memory_available_bytes);
}

std::string compact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void LineCol::advance(std::string_view text) {
  for (const char c : text) {
    if (c == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
}

LineCol line_col(std::string_view text, std::size_t pos) {
  LineCol lc;
  lc.advance(text.substr(0, pos));
  return lc;
}

std::uint32_t ticks_to_ns(std::uint64_t ticks, double clock_mhz, const std::string& where) {
  const double ns = std::nearbyint(static_cast<double>(ticks) * 1000.0 / clock_mhz);
  if (!(ns >= 0) || ns >= static_cast<double>(sched::kNoRecord)) {
    throw TraceError(where + ": duration of " + std::to_string(ticks) + " ticks at " +
                     compact(clock_mhz) + " MHz does not fit in 32-bit nanoseconds");
  }
  return static_cast<std::uint32_t>(ns);
}

namespace {

// The value callbacks of a SAX handler that builds nothing.
struct NoDom {
  using json = nlohmann::json;
  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(json::number_integer_t) { return true; }
  bool number_unsigned(json::number_unsigned_t) { return true; }
  bool number_float(json::number_float_t, const std::string&) { return true; }
  bool string(std::string&) { return true; }
  bool binary(json::binary_t&) { return true; }
  bool start_object(std::size_t) { return true; }
  bool key(std::string&) { return true; }
  bool end_object() { return true; }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
};

// A SAX handler that builds nothing and keeps the path to the value being parsed, so that
// a syntax error is reported as the DOM readers did, and a number out of range (1e999) with
// its record and key: nlohmann itself says only "number overflow".
class LocatingParser {
 public:
  using json = nlohmann::json;

  bool null() { return value(dom_.null()); }
  bool boolean(bool b) { return value(dom_.boolean(b)); }
  bool number_integer(json::number_integer_t v) { return value(dom_.number_integer(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return value(dom_.number_unsigned(v)); }
  bool number_float(json::number_float_t v, const std::string& s) {
    return value(dom_.number_float(v, s));
  }
  bool string(std::string& v) { return value(dom_.string(v)); }
  bool binary(json::binary_t& v) { return value(dom_.binary(v)); }
  bool start_object(std::size_t n) {
    path_.push_back({false, 0, {}});
    return dom_.start_object(n);
  }
  bool key(std::string& k) {
    path_.back().key = k;
    return dom_.key(k);
  }
  bool end_object() {
    path_.pop_back();
    return value(dom_.end_object());
  }
  bool start_array(std::size_t n) {
    path_.push_back({true, 0, {}});
    return dom_.start_array(n);
  }
  bool end_array() {
    path_.pop_back();
    return value(dom_.end_array());
  }
  bool parse_error(std::size_t position, const std::string& token,
                   const nlohmann::detail::exception& e) {
    position_ = position;
    token_ = token;
    id_ = e.id;
    what_ = e.what();
    return false;
  }

  // Where the parser stopped: "record 3, key \"execTime\"" (array indices and keys from
  // the top; the top-level array's elements are `top_name`s).
  std::string where(const char* top_name) const {
    std::string s;
    for (std::size_t d = 0; d < path_.size(); ++d) {
      const Level& l = path_[d];
      if (!s.empty()) s += ", ";
      if (l.array) {
        const bool records = d == 0 || (d > 0 && !path_[d - 1].array &&
                                        (path_[d - 1].key == "tasks" || path_[d - 1].key.empty()));
        s += std::string(d == 0    ? top_name
                         : records ? "record"
                                   : "element") +
             " " + std::to_string(l.index);
      } else {
        s += "key \"" + l.key + "\"";
      }
    }
    return s;
  }
  std::size_t position() const { return position_; }
  const std::string& token() const { return token_; }
  int id() const { return id_; }
  const std::string& what() const { return what_; }

 private:
  struct Level {
    bool array;
    std::size_t index;  // arrays: the element being parsed
    std::string key;    // objects: the key being parsed
  };
  // A complete value moves its array on to the next element.
  bool value(bool ok) {
    if (!path_.empty() && path_.back().array) ++path_.back().index;
    return ok;
  }
  NoDom dom_;
  std::vector<Level> path_;
  std::size_t position_ = 0;
  std::string token_;
  int id_ = 0;
  std::string what_;
};

// The TraceError for a parse that stopped at a syntax error; `lc` locates the parser's
// position (1-based: the last character it read).
[[noreturn]] void throw_parse_error(const std::string& path, const LocatingParser& sax, LineCol lc,
                                    const char* top_name) {
  const std::string at = path + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.col);
  if (sax.id() == 406) {  // out_of_range: a number too large for a double
    std::string token = sax.token();
    if (token.size() > 40) token = token.substr(0, 40) + "...";
    const std::string where = sax.where(top_name);
    throw TraceError(at + ": " + (where.empty() ? "" : where + ": ") + "the number " + token +
                     " is too large for a double (at most about 1.8e308)");
  }
  std::string what = sax.what();
  const std::size_t cut = what.find(": ", what.find("parse error"));
  if (cut != std::string::npos) what = what.substr(cut + 2);
  throw TraceError(at + ": invalid JSON: " + what);
}

}  // namespace

void check_json_syntax(const std::string& path, const char* top_name) {
  (void)input_file_size(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path + ": cannot open: " + std::strerror(errno));
  LocatingParser sax;
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(in, &sax);
  } catch (const nlohmann::json::exception& e) {
    throw TraceError(path + ": invalid JSON: " + e.what());
  }
  if (ok) return;
  throw_parse_error(path, sax, file_line_col(path, sax.position() == 0 ? 0 : sax.position() - 1),
                    top_name);
}

LineCol file_line_col(const std::string& path, std::uint64_t pos) {
  std::ifstream in(path, std::ios::binary);
  LineCol lc;
  std::vector<char> buf(1 << 16);
  std::uint64_t done = 0;
  while (done < pos && in) {
    in.read(buf.data(),
            static_cast<std::streamsize>(std::min<std::uint64_t>(buf.size(), pos - done)));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    lc.advance(std::string_view(buf.data(), got));
    done += got;
  }
  return lc;
}

}  // namespace detail

namespace {

using nlohmann::json;

// SAX handler that stops after the keys of the first element of a top-level array, so
// detection reads a prefix of a possibly large file without building a DOM.
struct FirstObjectKeys {
  // false: the first element of a top-level array (its keys); true: a top-level object (its
  // "format" string, for the native header).
  bool top_object = false;
  std::string format;         // top_object: the value of its "format" key
  bool trace_events = false;  // top_object: it has a top-level "traceEvents" key
  bool format_next = false;
  int depth = 0;
  bool root_is_array = false;
  bool first_is_object = false;
  bool empty_array = false;
  bool done = false;
  std::set<std::string> keys;

  bool first_element_scalar() {
    format_next = false;
    if (top_object) return true;
    if (depth == 1) {
      done = true;
      return false;
    }
    return true;
  }
  bool null() { return first_element_scalar(); }
  bool boolean(bool) { return first_element_scalar(); }
  bool number_integer(json::number_integer_t) { return first_element_scalar(); }
  bool number_unsigned(json::number_unsigned_t) { return first_element_scalar(); }
  bool number_float(json::number_float_t, const std::string&) { return first_element_scalar(); }
  bool string(std::string& v) {
    if (top_object) {
      if (depth == 1 && format_next) format = v;
      format_next = false;
      return true;
    }
    return first_element_scalar();
  }
  bool binary(json::binary_t&) { return first_element_scalar(); }
  bool start_object(std::size_t) {
    format_next = false;
    if (top_object) {
      ++depth;
      return true;
    }
    if (depth == 0) {
      done = true;  // a top-level object: not one of the array formats
      return false;
    }
    if (depth == 1) first_is_object = true;
    ++depth;
    return true;
  }
  bool key(std::string& k) {
    if (top_object) {
      format_next = depth == 1 && k == "format";
      // A top-level "traceEvents" is a Chrome trace (merged_swimlane.json): known at once.
      trace_events = depth == 1 && k == "traceEvents";
      if (trace_events) done = true;
      return !trace_events;
    }
    if (depth == 2) keys.insert(k);
    return true;
  }
  bool end_object() {
    if (top_object) {
      if (--depth == 0) {
        done = true;
        return false;
      }
      return true;
    }
    if (--depth == 1) {
      done = true;
      return false;
    }
    return true;
  }
  bool start_array(std::size_t) {
    format_next = false;
    if (top_object) {
      ++depth;
      return true;
    }
    if (depth == 0) root_is_array = true;
    if (depth == 1) return first_element_scalar();
    ++depth;
    return true;
  }
  bool end_array() {
    if (top_object) {
      --depth;
      return true;
    }
    if (--depth == 0) {
      empty_array = true;
      done = true;
      return false;
    }
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    error_position = position;
    error = e.what();
    error_id = e.id;
    return false;
  }
  std::size_t error_position = 0;  // 1-based byte of the syntax error, 0 if none
  int error_id = 0;
  std::string error;
};

std::string format_list() {
  return "expected one of: native pypto-sim NDJSON (first line "
         "{\"format\":\"pypto-sim-trace\",\"version\":1,...}), dyn_topo.txt (CSV with header "
         "seqNo,taskId,...), topo.json (JSON array of {taskId, funcName, successors}), PyPTO's "
         "fixed-latency JSON (array of {taskId, funcName, coreType, execTime, successors, "
         "remainingPredecessors}), or PyPTO's merged_swimlane.json (a JSON object "
         "{\"traceEvents\": [...]})";
}

// Whether the line starting at byte `first` of the file names the native format (a header
// nlohmann could not parse, whose problems the native reader tells key by key). Reads at most
// 1 MiB of it: a header is short; this only decides which reader reports the error.
bool first_line_names_native(const std::string& path, std::uint64_t first) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(first));
  std::string line(std::size_t{1} << 20, '\0');
  in.read(line.data(), static_cast<std::streamsize>(line.size()));
  line.resize(static_cast<std::size_t>(in.gcount()));
  line.resize(std::min(line.size(), line.find('\n')));
  return line.find("\"pypto-sim-trace\"") != std::string::npos;
}

}  // namespace

std::uint64_t available_memory_bytes() { return common::available_memory_bytes(); }

const char* to_string(TraceFormat f) {
  switch (f) {
    case TraceFormat::kNative: return "native";
    case TraceFormat::kDynTopo: return "dyn_topo";
    case TraceFormat::kTopoJson: return "topo_json";
    case TraceFormat::kFixedLatency: return "fixed_latency";
    case TraceFormat::kSwimlane: return "merged_swimlane";
  }
  return "?";
}

namespace {

// A compressed or archived file, or a UTF-16 text, is said outright by its first bytes: the
// format checks would only answer "unknown trace format".
void check_not_packed(const std::string& path, std::string_view start) {
  struct Magic {
    std::string_view bytes, what, fix;
  };
  static constexpr Magic kMagic[] = {
      {"\x1F\x8B", "gzip-compressed", "gunzip it"},
      {"BZh", "bzip2-compressed", "bunzip2 it"},
      {std::string_view("\xFD"
                        "7zXZ\0",
                        6),
       "xz-compressed", "unxz it"},
      {"\x28\xB5\x2F\xFD", "zstd-compressed", "unzstd it"},
      {"PK\x03\x04", "a zip archive", "unzip it"},
      {"\xFF\xFE", "UTF-16 text (byte order mark FF FE)", "save it as UTF-8"},
      {"\xFE\xFF", "UTF-16 text (byte order mark FE FF)", "save it as UTF-8"},
  };
  for (const Magic& m : kMagic) {
    if (start.substr(0, m.bytes.size()) == m.bytes) {
      throw TraceError(path + ": is " + std::string(m.what) + ", not a trace; " +
                       std::string(m.fix) + " first and pass the trace itself");
    }
  }
}

}  // namespace

TraceFormat detect_trace_format(const std::string& path) {
  // Every format identifies itself in its first record, which may be long (a task with
  // hundreds of thousands of successors, a long name) and may follow any number of blank
  // lines: the file is streamed until the first record says which format it is, never
  // read whole and never cut at a fixed size.
  (void)detail::input_file_size(path);  // a directory or a device says so
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path + ": cannot open: " + std::strerror(errno));
  constexpr std::size_t kChunkBytes = 1 << 16;
  std::vector<char> buf(kChunkBytes);
  std::uint64_t first = 0;  // offset of the first byte that is not blank
  bool found = false, at_start = true;
  char head[12] = {};  // the first record's first bytes (enough for "seqNo,taskId")
  std::size_t head_len = 0;
  while (!found || head_len < sizeof head) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (in.bad()) throw TraceError(path + ": read error");
    if (got == 0) break;
    std::string_view chunk(buf.data(), got);
    // Said outright: with the mark, every format check below fails on the first byte and
    // the message would only be "unknown trace format".
    if (at_start && chunk.compare(0, 3, "\xEF\xBB\xBF") == 0) {
      throw TraceError(path +
                       ": starts with a UTF-8 byte order mark (bytes EF BB BF), which no trace "
                       "format has; save the file as UTF-8 without BOM");
    }
    if (at_start) check_not_packed(path, chunk);
    at_start = false;
    if (!found) {
      const std::size_t at = chunk.find_first_not_of(" \t\r\n");
      if (at == std::string_view::npos) {
        first += got;
        continue;
      }
      first += at;
      found = true;
      chunk.remove_prefix(at);
    }
    const std::size_t take = std::min(sizeof head - head_len, chunk.size());
    std::memcpy(head + head_len, chunk.data(), take);
    head_len += take;
  }
  // Blank lines are allowed anywhere, but the format is told from the first record.
  if (!found) throw TraceError(path + ": the file is empty (or blank); " + format_list());
  const std::string_view start(head, head_len);

  // A JSON value from the first record on, read by a SAX handler that stops as soon as it
  // knows enough (the stream is never held whole).
  const auto sax_from_first = [&](auto& sax) {
    std::ifstream json_in(path, std::ios::binary);
    json_in.seekg(static_cast<std::streamoff>(first));
    json::sax_parse(json_in, &sax, json::input_format_t::json, /*strict=*/false);
  };
  if (start[0] == '{') {
    FirstObjectKeys sax;
    sax.top_object = true;
    sax_from_first(sax);
    if (sax.format == "pypto-sim-trace") return TraceFormat::kNative;
    if (sax.trace_events) return TraceFormat::kSwimlane;
    // A header nlohmann cannot take (a number too large for a double, say) that names the
    // format: the native reader reports what is wrong with it, key by key.
    if (!sax.done && first_line_names_native(path, first)) return TraceFormat::kNative;
    throw TraceError(path + ":1: starts with a JSON object that is not a pypto-sim trace header; " +
                     format_list());
  }
  if (start.substr(0, 12) == "seqNo,taskId") return TraceFormat::kDynTopo;
  if (start[0] == '[') {
    FirstObjectKeys sax;
    sax_from_first(sax);
    if (!sax.done && sax.error_id == 406) {
      // A number too large for a double: the full parse names its record and key.
      detail::check_json_syntax(path, "record");
    }
    if (!sax.done && sax.error_position != 0) {
      const detail::LineCol lc = detail::file_line_col(path, first + sax.error_position - 1);
      std::string what = sax.error;
      const std::size_t cut = what.find(": ", what.find("parse error"));
      if (cut != std::string::npos) what = what.substr(cut + 2);
      throw TraceError(path + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.col) +
                       ": invalid JSON: " + what);
    }
    if (sax.done && sax.empty_array) {
      throw TraceError(path + ": the JSON array is empty (no tasks)");
    }
    if (sax.done && sax.first_is_object) {
      if (sax.keys.count("execTime")) return TraceFormat::kFixedLatency;
      if (sax.keys.count("ph")) return TraceFormat::kSwimlane;  // a bare array of trace events
      if (sax.keys.count("funcName")) return TraceFormat::kTopoJson;
      if (sax.keys.count("blockIdx") || sax.keys.count("tasks")) {
        throw TraceError(path +
                         ": this is a board profile (tilefwk_L1_prof_data.json), not a "
                         "task graph: pass it with --prof and give dyn_topo.txt or topo.json as "
                         "the trace");
      }
    }
  }
  throw TraceError(path + ": unknown trace format; " + format_list());
}

ReadTrace read_trace(const std::string& path, const LoadOptions& opts) {
  const TraceFormat format = detect_trace_format(path);
  if (!opts.prof_path.empty() && format != TraceFormat::kDynTopo &&
      format != TraceFormat::kTopoJson) {
    throw ConfigError("--prof " + opts.prof_path +
                      " is only used with dyn_topo.txt or topo.json, "
                      "but " +
                      path + " is a " + to_string(format) + " trace");
  }
  switch (format) {
    case TraceFormat::kNative: return detail::load_native(path, opts);
    case TraceFormat::kDynTopo:
    case TraceFormat::kTopoJson: return detail::load_board(path, format, opts);
    case TraceFormat::kFixedLatency: {
      ReadTrace t = detail::load_fixed_latency(path);
      if (opts.progress) {
        const std::uint64_t bytes = detail::input_file_size(path);
        opts.progress(bytes, bytes);
      }
      return t;
    }
    case TraceFormat::kSwimlane: {
      ReadTrace t = detail::load_swimlane(path);
      if (opts.progress) {
        const std::uint64_t bytes = detail::input_file_size(path);
        opts.progress(bytes, bytes);
      }
      return t;
    }
  }
  throw TraceError(path + ": unknown trace format");
}

LoadedTrace load_trace(const std::string& path, const LoadOptions& opts,
                       const model::ChipConfig& chip) {
  return price_trace(read_trace(path, opts), chip);
}

}  // namespace pypto::trace
