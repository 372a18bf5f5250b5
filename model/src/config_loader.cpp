// SPDX-License-Identifier: Apache-2.0
#include "pypto/model/config_loader.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>
#include <system_error>
#include <type_traits>
#include <utility>

#include "pypto/common/errors.h"
#include "reader.h"
#include "vec_fit_rows.h"

namespace pypto::model {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------
// The field table: every ChipConfig field once, with its range, unit and meaning. Reading,
// --set, validate(), to_yaml(), describe() and first_difference() all walk this table.

// An extra rule that involves other fields; returns what is wrong, or nullopt.
using Check = std::optional<std::string> (*)(const ChipConfig&);

struct FieldSpec {
  const char* section;
  const char* key;
  const char* unit;  // "" when dimensionless
  double lo;         // numeric range [lo, hi] or (lo, hi]; strings: lo = 1 means non-empty
  double hi;
  bool lo_open;
  const char* doc;
  Check check = nullptr;
  const char* check_doc = nullptr;  // the extra rule, for describe()
};

FieldSpec num(const char* sec, const char* key, const char* unit, double lo, double hi,
              const char* doc) {
  return FieldSpec{sec, key, unit, lo, hi, false, doc};
}
// Strictly positive reals such as clock rates: (0, hi].
FieldSpec positive(const char* sec, const char* key, const char* unit, double hi, const char* doc) {
  return FieldSpec{sec, key, unit, 0, hi, true, doc};
}
FieldSpec text(const char* sec, const char* key, bool non_empty, const char* doc) {
  return FieldSpec{sec, key, "", non_empty ? 1.0 : 0.0, 0, false, doc};
}
FieldSpec with(FieldSpec f, Check check, const char* check_doc) {
  f.check = check;
  f.check_doc = check_doc;
  return f;
}

// Generous but finite limits: they exist to catch typos (a missing unit prefix, an extra
// zero) and values that would overflow the picosecond clock, not to forbid what-ifs.
constexpr double kMaxCycles = 1e8;  // 0.05 s at 2 GHz per single operation
constexpr double kMaxNs = 1e8;      // 0.1 s
constexpr double kMaxMhz = 10000;   // 10 GHz
constexpr double kMaxBytesPerCycle = 65536;
constexpr double kMaxBufferKib = 1 << 20;  // 1 GiB of on-core buffer

template <class Visit>
void for_each_field(Visit&& v) {
  using C = ChipConfig;
  using Chip = C::Chip;
  using Cores = C::Cores;
  using Aicpu = C::Aicpu;
  using L2 = C::L2;
  using Hbm = C::Hbm;
  using Cost = C::Cost;
  using Ws = C::Workspace;

  v(text("chip", "name", true, "short chip name; a preset's equals its file name"), &C::chip,
    &Chip::name);
  v(text("chip", "description", false, "human-readable chip name"), &C::chip, &Chip::description);
  v(num("chip", "launch_early_mode_default", "", 0, 2,
        "launch_early_mode when the run does not set it (0 capture only, 1 always, 2 never)"),
    &C::chip, &Chip::launch_early_mode_default);
  v(positive("chip", "board_clock_mhz", "MHz", kMaxMhz, "tick rate of recorded board traces"),
    &C::chip, &Chip::board_clock_mhz);

  v(num("cores", "aic", "", 1, 128, "cube cores, one per cluster"), &C::cores, &Cores::aic);
  v(num("cores", "aiv_per_aic", "", 0, 4, "vector cores per cluster (0: a cube-only chip)"),
    &C::cores, &Cores::aiv_per_aic);
  v(positive("cores", "freq_mhz", "MHz", kMaxMhz, "AICore clock"), &C::cores, &Cores::freq_mhz);
  v(num("cores", "ub_kib", "KiB", 1, kMaxBufferKib, "unified buffer per vector core"), &C::cores,
    &Cores::ub_kib);
  v(num("cores", "l1_kib", "KiB", 1, kMaxBufferKib, "L1 buffer per cube core"), &C::cores,
    &Cores::l1_kib);
  v(num("cores", "l0a_kib", "KiB", 1, kMaxBufferKib, "L0A (left matrix) buffer"), &C::cores,
    &Cores::l0a_kib);
  v(num("cores", "l0b_kib", "KiB", 1, kMaxBufferKib, "L0B (right matrix) buffer"), &C::cores,
    &Cores::l0b_kib);
  v(num("cores", "l0c_kib", "KiB", 1, kMaxBufferKib, "L0C (accumulator) buffer"), &C::cores,
    &Cores::l0c_kib);
  v(num("cores", "cube_m", "", 1, 256, "cube fractal M"), &C::cores, &Cores::cube_m);
  v(num("cores", "cube_n", "", 1, 256, "cube fractal N"), &C::cores, &Cores::cube_n);
  v(num("cores", "cube_k", "", 1, 256, "cube fractal K (fp16/bf16)"), &C::cores, &Cores::cube_k);
  v(num("cores", "start_latency_ns", "ns", 0, kMaxNs, "AICore kernel launch to first handshake"),
    &C::cores, &Cores::start_latency_ns);
  v(with(
        num("cores", "handshake_cores", "", 1, 128 * 5,
            "dispatch starts once this many cores said hello"),
        [](const C& c) -> std::optional<std::string> {
          const std::uint64_t total =
              std::uint64_t{c.cores.aic} * (1 + std::uint64_t{c.cores.aiv_per_aic});
          if (c.cores.handshake_cores <= total) return std::nullopt;
          return std::to_string(c.cores.handshake_cores) + " exceeds the " + std::to_string(total) +
                 " cores of the chip (aic * (1 + aiv_per_aic))";
        },
        "at most aic * (1 + aiv_per_aic)"),
    &C::cores, &Cores::handshake_cores);
  v(num("cores", "slot_switch_cycles", "cycles", 0, kMaxCycles,
        "pending slot becomes running when the current task ends"),
    &C::cores, &Cores::slot_switch_cycles);

  // One AICPU always runs the control flow, so at least two exist.
  v(num("aicpu", "count", "", 2, 64, "AICPUs on the chip (one runs the control flow)"), &C::aicpu,
    &Aicpu::count);
  v(with(
        num("aicpu", "max_sched_threads", "", 1, 63,
            "most schedule threads; launch_sched_aicpu_num above it or <= 0 means automatic"),
        [](const C& c) -> std::optional<std::string> {
          if (c.aicpu.max_sched_threads <= c.aicpu.count - 1) return std::nullopt;
          return std::to_string(c.aicpu.max_sched_threads) +
                 " exceeds aicpu.count - 1 = " + std::to_string(c.aicpu.count - 1) +
                 ": one AICPU runs the control flow";
        },
        "at most aicpu.count - 1"),
    &C::aicpu, &Aicpu::max_sched_threads);
  v(num("aicpu", "cores_per_thread", "", 1, 1024,
        "automatic thread count = min(max_sched_threads, ceil(aic / this))"),
    &C::aicpu, &Aicpu::cores_per_thread);
  v(positive("aicpu", "freq_mhz", "MHz", kMaxMhz, "AICPU clock"), &C::aicpu, &Aicpu::freq_mhz);
  // At least 1: a schedule thread's poll round lasts poll_cycles per busy core, and a round
  // of zero length would make its polling grid (rounds per completion) undefined.
  v(num("aicpu", "poll_cycles", "cycles", 1, kMaxCycles, "per core polled (>= 1)"), &C::aicpu,
    &Aicpu::poll_cycles);
  v(num("aicpu", "resolve_cycles", "cycles", 0, kMaxCycles, "per successor edge resolved"),
    &C::aicpu, &Aicpu::resolve_cycles);
  v(num("aicpu", "dispatch_cycles", "cycles", 0, kMaxCycles, "per task dispatched"), &C::aicpu,
    &Aicpu::dispatch_cycles);
  v(num("aicpu", "device_task_build_cycles", "cycles", 0, kMaxCycles, "per device task built"),
    &C::aicpu, &Aicpu::device_task_build_cycles);
  v(num("aicpu", "stitch_cycles_per_task", "cycles", 0, kMaxCycles,
        "per leaf task of a root being stitched"),
    &C::aicpu, &Aicpu::stitch_cycles_per_task);
  v(num("aicpu", "submit_cycles", "cycles", 0, kMaxCycles, "per device task submitted"), &C::aicpu,
    &Aicpu::submit_cycles);
  v(num("aicpu", "barrier_cycles", "cycles", 0, kMaxCycles,
        "schedule threads meet between device tasks"),
    &C::aicpu, &Aicpu::barrier_cycles);
  v(num("aicpu", "queue_op_cycles", "cycles", 0, kMaxCycles, "shared ready-queue lock + op"),
    &C::aicpu, &Aicpu::queue_op_cycles);
  v(num("aicpu", "fair_scan_cycles_per_thread", "cycles", 0, kMaxCycles,
        "modes 2/3: idle-flag scan, per thread"),
    &C::aicpu, &Aicpu::fair_scan_cycles_per_thread);
  v(num("aicpu", "launch_latency_ns", "ns", 0, kMaxNs, "AICPU kernel start-up"), &C::aicpu,
    &Aicpu::launch_latency_ns);
  v(num("aicpu", "completion_latency_ns", "ns", 0, kMaxNs,
        "a task's end on its core to its completion being readable by a poll"),
    &C::aicpu, &Aicpu::completion_latency_ns);
  v(num("aicpu", "staging_buffer_tasks", "tasks", 1, 1 << 20, "per-thread local ready buffer"),
    &C::aicpu, &Aicpu::staging_buffer_tasks);

  v(with(
        num("l2", "size_kib", "KiB", 1, 1 << 24, "L2 capacity"),
        [](const C& c) -> std::optional<std::string> {
          const std::uint64_t set_bytes = std::uint64_t{c.l2.line_bytes} * c.l2.ways;
          if ((c.l2.size_kib * 1024) % set_bytes == 0) return std::nullopt;
          return std::to_string(c.l2.size_kib) +
                 " KiB is not a whole number of sets of line_bytes * ways = " +
                 std::to_string(set_bytes) + " bytes";
        },
        "size_kib * 1024 a multiple of line_bytes * ways"),
    &C::l2, &L2::size_kib);
  v(with(
        num("l2", "line_bytes", "bytes", 32, 4096, "L2 line size"),
        [](const C& c) -> std::optional<std::string> {
          const std::uint32_t b = c.l2.line_bytes;
          if ((b & (b - 1)) == 0) return std::nullopt;
          return std::to_string(b) + " is not a power of two";
        },
        "a power of two"),
    &C::l2, &L2::line_bytes);
  v(num("l2", "ways", "", 1, 64, "associativity"), &C::l2, &L2::ways);
  v(num("l2", "hit_latency_cycles", "cycles", 0, kMaxCycles, "AICore cycles per hit"), &C::l2,
    &L2::hit_latency_cycles);
  v(num("l2", "read_bytes_per_cycle", "B/cycle", 1, kMaxBytesPerCycle, "read rate per core"),
    &C::l2, &L2::read_bytes_per_cycle);
  v(num("l2", "write_bytes_per_cycle", "B/cycle", 1, kMaxBytesPerCycle, "write rate per core"),
    &C::l2, &L2::write_bytes_per_cycle);

  v(num("hbm", "size_gib", "GiB", 1, 1 << 20, "HBM capacity"), &C::hbm, &Hbm::size_gib);
  v(num("hbm", "bytes_per_cycle_per_core", "B/cycle", 1, kMaxBytesPerCycle,
        "GM rate one core can draw (AICore cycles)"),
    &C::hbm, &Hbm::bytes_per_cycle_per_core);
  v(positive("hbm", "aggregate_gbps", "GB/s", 1e6, "shared by all transfers in flight (1e9 B/s)"),
    &C::hbm, &Hbm::aggregate_gbps);
  v(num("hbm", "latency_ns", "ns", 0, kMaxNs, "fixed latency per transfer"), &C::hbm,
    &Hbm::latency_ns);
  v(num("hbm", "refresh_overhead_pct", "%", 0, 50,
        "bandwidth lost to DRAM refresh (scales aggregate_gbps)"),
    &C::hbm, &Hbm::refresh_overhead_pct);
  v(num("hbm", "turnaround_overhead_pct", "%", 0, 50,
        "bandwidth lost to read/write bus turnaround and row misses (scales aggregate_gbps)"),
    &C::hbm, &Hbm::turnaround_overhead_pct);

  v(num("cost", "mte_read_latency_cycles", "cycles", 0, kMaxCycles, "GM -> UB/L1 fixed part"),
    &C::cost, &Cost::mte_read_latency_cycles);
  v(num("cost", "mte_write_latency_cycles", "cycles", 0, kMaxCycles, "UB/L0C -> GM fixed part"),
    &C::cost, &Cost::mte_write_latency_cycles);
  v(num("cost", "vec_bytes_per_cycle", "B/cycle", 1, kMaxBytesPerCycle,
        "vector unit width: a reduction's passes over its input (other vector ops follow "
        "PyPTO's per-op board fit, model/src/cost_model.cpp)"),
    &C::cost, &Cost::vec_bytes_per_cycle);
  // Vector op times, a row of PyPTO's per-op fit each (vec_fit_rows.h).
  for (const detail::VecFitRow& r : detail::kVecFitRows) {
    v(num("cost", r.fixed_key, "ns", 0, kMaxNs, r.fixed_doc), &C::cost, r.fixed);
    v(num("cost", r.rate_key, "ps/B", 0, 1e6, r.rate_doc), &C::cost, r.rate);
  }
  v(num("cost", "vec_rowsum_fixed_ns", "ns", 0, kMaxNs,
        "fixed time of a sum/prod reduction per 2-D slice (its input streams at "
        "vec_bytes_per_cycle, 4 passes)"),
    &C::cost, &Cost::vec_rowsum_fixed_ns);
  v(num("cost", "vec_rowmax_fixed_ns", "ns", 0, kMaxNs,
        "fixed time of a max/min reduction per 2-D slice (its input streams at "
        "vec_bytes_per_cycle, 4 passes)"),
    &C::cost, &Cost::vec_rowmax_fixed_ns);
  v(num("cost", "mte_granule_bytes", "B", 1, 1u << 20,
        "GM moves in aligned blocks of this size; a transfer pays every block it touches"),
    &C::cost, &Cost::mte_granule_bytes);
  v(num("cost", "cube_row_merge_min_bytes", "B", 0, 1u << 20,
        "shortest cube operand row that moves in one burst with its neighbours when the rows "
        "lie back to back"),
    &C::cost, &Cost::cube_row_merge_min_bytes);
  v(num("cost", "cube_row_merge_max_bytes", "B", 0, 1u << 20,
        "longest such row (a min above the max merges none)"),
    &C::cost, &Cost::cube_row_merge_max_bytes);
  v(num("cost", "l1_to_l0a_bytes_per_cycle", "B/cycle", 1, kMaxBytesPerCycle,
        "MTE1 rate moving a cube's left operand from L1 to L0A"),
    &C::cost, &Cost::l1_to_l0a_bytes_per_cycle);
  v(num("cost", "l1_to_l0b_bytes_per_cycle", "B/cycle", 1, kMaxBytesPerCycle,
        "MTE1 rate moving a cube's right operand from L1 to L0B"),
    &C::cost, &Cost::l1_to_l0b_bytes_per_cycle);
  v(num("cost", "cube_fixed_cycles", "cycles", 0, kMaxCycles,
        "fixed part of an mmad tile (pipeline start and drain)"),
    &C::cost, &Cost::cube_fixed_cycles);
  v(num("cost", "cube_bank_conflict_pct", "%", 0, 100,
        "cube stall cycles on L0 bank conflicts, in percent of an mmad's fractal cycles"),
    &C::cost, &Cost::cube_bank_conflict_pct);
  v(num("cost", "task_overhead_cycles", "cycles", 0, kMaxCycles, "leaf task prologue + epilogue"),
    &C::cost, &Cost::task_overhead_cycles);
  v(num("cost", "dynamic_shape_overhead_cycles", "cycles", 0, kMaxCycles,
        "extra scalar work of a dynamic-shape leaf (valid_shape_optimize skips it on main blocks)"),
    &C::cost, &Cost::dynamic_shape_overhead_cycles);

  v(with(
        num("workspace", "capacity_mib", "MiB", 1, 1 << 30, "device memory reserved for workspace"),
        [](const C& c) -> std::optional<std::string> {
          if (c.workspace.capacity_mib <= c.hbm.size_gib * 1024) return std::nullopt;
          return std::to_string(c.workspace.capacity_mib) + " MiB exceeds the HBM capacity of " +
                 std::to_string(c.hbm.size_gib * 1024) + " MiB (hbm.size_gib)";
        },
        "at most hbm.size_gib * 1024"),
    &C::workspace, &Ws::capacity_mib);
}

std::string dotted_key(const FieldSpec& f) { return std::string(f.section) + "." + f.key; }

// ---------------------------------------------------------------------------------------
// Formatting helpers.

// Shortest text that reads back to exactly `v`; whole numbers without an exponent
// (1000000, not 1e+06).
std::string format_double(double v) {
  if (std::abs(v) < 1e15 && v == std::trunc(v)) {
    return std::to_string(static_cast<long long>(v));
  }
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

template <class T>
std::string format_value(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return "'" + v + "'";
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_floating_point_v<T>) {
    return format_double(v);
  } else {
    return std::to_string(v);
  }
}

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, std::string>) return "string";
  if constexpr (std::is_same_v<T, bool>) return "bool";
  if constexpr (std::is_same_v<T, std::uint32_t>) return "uint32";
  if constexpr (std::is_same_v<T, std::uint64_t>) return "uint64";
  if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  if constexpr (std::is_same_v<T, double>) return "real";
}

template <class T>
std::string expected_text() {
  if constexpr (std::is_same_v<T, std::string>) return "a string";
  if constexpr (std::is_same_v<T, bool>) return "true or false";
  if constexpr (std::is_unsigned_v<T>) return "an unsigned integer";
  if constexpr (std::is_same_v<T, std::int64_t>) return "an integer";
  if constexpr (std::is_same_v<T, double>) return "a number";
}

std::string range_text(const FieldSpec& f) {
  return std::string(f.lo_open ? "(" : "[") + format_double(f.lo) + ", " + format_double(f.hi) +
         "]";
}

// "file:line:col" with 1-based line and column; just the file when the mark is unknown.
std::string location(const std::string& file, const YAML::Mark& m) {
  if (m.line < 0) return file;
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

// How a bad value is shown after "got".
std::string shown(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return "nothing (null)";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Scalar: break;
  }
  if (n.Tag() == "!") return "the quoted string \"" + n.Scalar() + "\"";
  return "'" + n.Scalar() + "'";
}

// ---------------------------------------------------------------------------------------
// Scalar decoding. Each returns the complaint ("expected ..., got ...") or nullopt.

template <class T>
bool parse_integer(const std::string& s, T& out, bool& too_large) {
  too_large = false;
  const char* b = s.data();
  const char* e = b + s.size();
  bool negative = false;
  if (b != e && (*b == '+' || *b == '-')) {
    negative = *b == '-';
    ++b;
  }
  int base = 10;
  if (e - b > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X')) {
    base = 16;
    b += 2;
  } else if (e - b > 2 && b[0] == '0' && b[1] == 'o') {
    base = 8;
    b += 2;
  }
  if (b == e || *b == '+' || *b == '-') return false;
  std::uint64_t magnitude = 0;
  const auto res = std::from_chars(b, e, magnitude, base);
  if (res.ptr != e) return false;
  if (res.ec == std::errc::result_out_of_range) {
    too_large = !negative || std::is_signed_v<T>;
    return false;
  }
  if (res.ec != std::errc()) return false;
  if constexpr (std::is_unsigned_v<T>) {
    if (negative && magnitude != 0) return false;
    if (magnitude > std::numeric_limits<T>::max()) {
      too_large = true;
      return false;
    }
    out = static_cast<T>(magnitude);
  } else {
    const auto max = static_cast<std::uint64_t>(std::numeric_limits<T>::max());
    if (magnitude > max + (negative ? 1 : 0)) {
      too_large = true;
      return false;
    }
    // -2^63 has no positive counterpart, so negate in unsigned arithmetic.
    out = negative ? static_cast<T>(0 - magnitude) : static_cast<T>(magnitude);
  }
  return true;
}

// Decodes into a temporary so that a rejected value leaves the field untouched.
template <class T>
std::optional<std::string> decode(const YAML::Node& n, T& out) {
  const std::string complaint = "expected " + expected_text<T>() + ", got " + shown(n);
  if (!n.IsScalar()) return complaint;
  T value{};
  if constexpr (std::is_same_v<T, std::string>) {
    value = n.Scalar();
  } else {
    // A quoted "16" is a string in YAML; taking it as a number would hide a mistake.
    if (n.Tag() == "!") return complaint;
    if constexpr (std::is_same_v<T, bool>) {
      if (!YAML::convert<bool>::decode(n, value)) return complaint;
    } else if constexpr (std::is_integral_v<T>) {
      bool too_large = false;
      if (!parse_integer(n.Scalar(), value, too_large)) {
        if (!too_large) return complaint;
        return "expected " + expected_text<T>() + " of at most " +
               std::to_string(std::numeric_limits<T>::max()) + ", got " + shown(n);
      }
    } else {
      std::string s = n.Scalar();
      if (!s.empty() && s[0] == '+') s.erase(0, 1);
      const auto res = std::from_chars(s.data(), s.data() + s.size(), value);
      if (s.empty() || res.ec != std::errc() || res.ptr != s.data() + s.size()) {
        return complaint;
      }
    }
  }
  out = value;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------
// Loading.

// Where a key's current value came from ("f.yaml:12:9", "--set l2.ways=0"), so that a
// validation error can point there.
using Origins = std::map<std::string, std::string>;

struct Violation {
  std::string key;
  std::string message;
};

// Why `s` is not text a config value may hold, or nullopt. It must be well-formed UTF-8 (no
// overlong forms, surrogates or code points past U+10FFFF) of printable characters: no
// control characters but tab and newline, no noncharacters (U+FFFE, U+FFFF, U+FDD0..U+FDEF
// and the last two of each plane). That is what to_yaml() writes back unchanged; yaml-cpp
// drops or rewrites the rest (a U+FFFF in a chip name, found by fuzzing, did not survive).
std::optional<std::string> text_problem(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (b < 0x80) {
      len = 1, cp = b;
    } else if ((b & 0xE0) == 0xC0) {
      len = 2, cp = b & 0x1F;
    } else if ((b & 0xF0) == 0xE0) {
      len = 3, cp = b & 0x0F;
    } else if ((b & 0xF8) == 0xF0) {
      len = 4, cp = b & 0x07;
    } else {
      return std::string("is not valid UTF-8 text");
    }
    if (i + len > s.size()) return std::string("is not valid UTF-8 text");
    for (std::size_t k = 1; k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) return std::string("is not valid UTF-8 text");
      cp = (cp << 6) | (c & 0x3F);
    }
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if ((len > 1 && cp < kMin[len]) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return std::string("is not valid UTF-8 text");
    }
    const bool control = (cp < 0x20 && cp != '\t' && cp != '\n') || (cp >= 0x7F && cp <= 0x9F);
    const bool nonchar = (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE;
    if (control || nonchar) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(cp));
      return std::string("contains ") + (control ? "the control character " : "the noncharacter ") +
             hex + " (expected printable text)";
    }
    i += len;
  }
  return std::nullopt;
}

template <class T>
std::optional<std::string> out_of_range(const FieldSpec& f, const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (f.lo >= 1 && v.empty()) return std::string("must not be empty");
    return text_problem(v);
  } else {
    const double x = static_cast<double>(v);
    // Written so that NaN fails.
    const bool above_lo = f.lo_open ? x > f.lo : x >= f.lo;
    if (above_lo && x <= f.hi) return std::nullopt;
    return format_value(v) + " is out of range " + range_text(f);
  }
}

std::optional<Violation> find_violation(const ChipConfig& c) {
  std::optional<Violation> found;
  // Ranges first: the extra rules divide by and subtract from other fields, which must
  // already be known to be in range.
  for_each_field([&](const FieldSpec& f, auto sec, auto mem) {
    if (found) return;
    if (auto why = out_of_range(f, (c.*sec).*mem)) found = Violation{dotted_key(f), *why};
  });
  for_each_field([&](const FieldSpec& f, auto, auto) {
    if (found || f.check == nullptr) return;
    if (auto why = f.check(c)) found = Violation{dotted_key(f), *why};
  });
  return found;
}

void throw_if_invalid(const ChipConfig& c, const Origins& origins, const std::string& fallback) {
  const auto v = find_violation(c);
  if (!v) return;
  std::string msg = v->key + ": " + v->message;
  if (const auto it = origins.find(v->key); it != origins.end()) {
    msg += " (" + it->second + ")";
  } else if (!fallback.empty()) {
    msg += " (" + fallback + ")";
  }
  throw ConfigError(msg);
}

enum class Mode { kPreset, kUser };

// yaml-cpp stops at this depth with a bare "bad file"; say what it is. `what`: the kind of
// input, whose usual depth is told.
std::string too_deep(const YAML::DeepRecursion& e, const std::string& what = "config file") {
  const bool chip = what == "config file" || what == "chip preset";
  return "nesting too deep (" + std::to_string(e.depth()) + " levels at line " +
         std::to_string(e.mark.line + 1) + "; " +
         (chip ? std::string("a chip config has two: section, key")
               : "a " + what + " nests a few levels") +
         ")";
}

// The line (1-based) where a second YAML document starts, 0 if none: a "---" line after the
// first document's content, or content after a "..." line. Found from the markers, not with
// YAML::LoadAll, which loops without end on some invalid input (the config fuzzer found one).
int second_document_line(const std::string& text) {
  bool content = false, ended = false;
  int line = 0;
  for (std::size_t at = 0; at <= text.size();) {
    std::size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    std::string l = text.substr(at, nl - at);
    at = nl + 1;
    ++line;
    if (!l.empty() && l.back() == '\r') l.pop_back();
    const auto marker = [&](const char* m) {
      return l.compare(0, 3, m) == 0 && (l.size() == 3 || l[3] == ' ' || l[3] == '\t');
    };
    const std::size_t first = l.find_first_not_of(" \t");
    const bool blank = first == std::string::npos || l[first] == '#';
    if (marker("---")) {
      if (content || ended) return line;
      content = l.find_first_not_of(" \t", 3) != std::string::npos &&
                l[l.find_first_not_of(" \t", 3)] != '#';
    } else if (marker("...")) {
      ended = content;
    } else if (!blank && l[0] != '%') {
      if (ended) return line;
      content = true;
    }
    if (nl == text.size()) break;
  }
  return 0;
}

YAML::Node parse_yaml(const std::string& text, const std::string& file,
                      const std::string& what = "config file") {
  try {
    // One document: a second one after '---' would otherwise be dropped without a word.
    YAML::Node root = YAML::Load(text);
    if (const int second = second_document_line(text); second != 0) {
      throw ConfigError(file + ":" + std::to_string(second) +
                        ": a second YAML document (after '---'); a config file is one document");
    }
    return root;
  } catch (const YAML::DeepRecursion& e) {
    throw ConfigError(location(file, e.mark) + ": invalid YAML: " + too_deep(e, what));
  } catch (const YAML::ParserException& e) {
    throw ConfigError(location(file, e.mark) + ": invalid YAML: " + e.msg);
  }
}

constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 20;

std::string read_file(const std::string& path, const char* what) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) {
    // A link loop or an unreadable folder is no "does not exist".
    const bool other = ec && ec != std::errc::no_such_file_or_directory;
    throw ConfigError(
        std::string(what) + " '" + path + "' " +
        (other ? "cannot be opened: " + ec.message() : std::string("does not exist")));
  }
  if (fs::is_directory(st)) {
    throw ConfigError(std::string(what) + " '" + path + "' is a directory, not a YAML file");
  }
  if (!fs::is_regular_file(st)) {
    // A FIFO would block the open until a writer comes (a hang), a device never ends.
    const char* kind = fs::is_fifo(st)             ? "a pipe"
                       : fs::is_character_file(st) ? "a character device"
                       : fs::is_block_file(st)     ? "a block device"
                       : fs::is_socket(st)         ? "a socket"
                                                   : "not a regular file";
    throw ConfigError(std::string(what) + " '" + path + "' is " + kind +
                      ", not a regular file; save it to a file first");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(std::string("cannot read ") + what + " '" + path + "'");
  // Read with a cap: a chip config is a few KiB, and /dev/zero or a wrong path to a large
  // file must not be read until memory runs out.
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxConfigBytes) {
      const std::string kind =
          std::string(what) == "config file" || std::string(what) == "chip preset"
              ? std::string("chip config")
              : std::string(what);
      throw ConfigError(std::string(what) + " '" + path + "' is larger than " +
                        std::to_string(kMaxConfigBytes >> 20) + " MiB: not a " + kind +
                        " (those are a few KiB)");
    }
  }
  if (in.bad()) throw ConfigError(std::string("cannot read ") + what + " '" + path + "'");
  return text;
}

// A family preset sets every key. A variant preset (another core count of a family, e.g.
// a2-20c) starts from its family's with `base:` and sets only what differs, so each number
// has one owner; its base must be a family preset, never another variant.
bool names_a_base(const YAML::Node& root) { return root.IsMap() && root["base"].IsDefined(); }

ChipConfig load_node(const YAML::Node& root, const std::string& file, Mode mode, Origins& origins) {
  const bool variant = mode == Mode::kPreset && names_a_base(root);
  const auto presence =
      mode == Mode::kPreset && !variant ? Reader::Presence::kRequired : Reader::Presence::kOptional;
  Reader top(root, "", file, presence);
  ChipConfig c;
  if (top.has("base")) {
    std::string base;
    top.read(base, "base");
    try {
      if (variant) {
        const std::string base_path = (fs::path(chip_preset_dir()) / (base + ".yaml")).string();
        std::error_code ec;
        if (fs::exists(base_path, ec) &&
            names_a_base(parse_yaml(read_file(base_path, "chip preset"), base_path))) {
          throw ConfigError("preset '" + base +
                            "' is itself a variant; a variant preset's base "
                            "must be a family preset that sets every key");
        }
      }
      c = load_chip_preset(base);
    } catch (const ConfigError& e) {
      throw ConfigError("base (" + top.where("base") + "): " + e.what());
    }
  }
  std::vector<std::pair<std::string, Reader>> sections;
  for_each_field([&](const FieldSpec& f, auto sec, auto mem) {
    auto it = std::find_if(sections.begin(), sections.end(),
                           [&](const auto& s) { return s.first == f.section; });
    if (it == sections.end()) {
      sections.emplace_back(f.section, top.section(f.section));
      it = sections.end() - 1;
    }
    Reader& r = it->second;
    r.read((c.*sec).*mem, f.key);
    if (r.has(f.key)) origins[dotted_key(f)] = r.where(f.key);
  });
  for (const auto& s : sections) s.second.finish();
  top.finish();
  return c;
}

ChipConfig load_text(const std::string& text, const std::string& file, Mode mode,
                     Origins& origins) {
  const YAML::Node root = parse_yaml(text, file);
  return load_node(root, file, mode, origins);
}

std::string compiled_config_dir() {
#ifdef PYPTO_CONFIG_DIR
  return PYPTO_CONFIG_DIR;
#else
  return "";
#endif
}

// The dotted keys that apply_override accepts.
std::vector<std::string> all_keys() {
  std::vector<std::string> keys;
  for_each_field([&](const FieldSpec& f, auto, auto) { keys.push_back(dotted_key(f)); });
  return keys;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// Applies one assignment and records where the value came from.
// `s` with control bytes (NUL, newline, ...) written as \xNN, so that a message quoting it
// stays one whole line (a NUL would end it).
std::string echo_bytes(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    const auto b = static_cast<unsigned char>(ch);
    if (b >= 0x20 && b != 0x7F) {
      out += ch;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", static_cast<unsigned>(b));
      out += hex;
    }
  }
  return out;
}

void apply_override_impl(ChipConfig& c, const std::string& assignment, Origins* origins) {
  // A huge value is named by its start: the message stays one readable line.
  const std::string where =
      "--set " + echo_bytes(assignment.size() <= 100
                                ? assignment
                                : assignment.substr(0, 60) + "... (" +
                                      std::to_string(assignment.size()) + " chars)");
  const auto eq = assignment.find('=');
  const std::string key = eq == std::string::npos ? "" : trim(assignment.substr(0, eq));
  if (key.empty()) {
    throw ConfigError(where + ": expected key.path=value, e.g. l2.ways=8");
  }
  const std::string value = assignment.substr(eq + 1);
  // Checked before yaml-cpp sees it: yaml-cpp takes a value starting with a NUL pattern or a
  // byte order mark as UTF-16/32 and would silently decode it into other characters.
  if (auto why = text_problem(value)) throw ConfigError(where + ": the value " + *why);
  bool found = false;
  for_each_field([&](const FieldSpec& f, auto sec, auto mem) {
    if (found || dotted_key(f) != key) return;
    found = true;
    YAML::Node node;
    try {
      node = YAML::Load(value);
    } catch (const YAML::DeepRecursion& e) {
      throw ConfigError(where + ": invalid YAML value: " + too_deep(e));
    } catch (const YAML::ParserException& e) {
      throw ConfigError(where + ": invalid YAML value: " + e.msg);
    }
    if (auto why = decode(node, (c.*sec).*mem)) throw ConfigError(where + ": " + *why);
    if (origins != nullptr) (*origins)[key] = where;
  });
  if (found) return;
  std::string msg = where + ": unknown key '" + key + "'";
  if (const auto near = common::closest_match(key, all_keys())) {
    msg += "; did you mean '" + *near + "'?";
  } else {
    msg += " (pypto-sim config --describe lists every key)";
  }
  throw ConfigError(msg);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Reader

Reader::Reader(const YAML::Node& node, std::string path, std::string file, Presence presence)
    : path_(std::move(path)), file_(std::move(file)), presence_(presence), mark_(node.Mark()) {
  if (!node.IsDefined() || node.IsNull()) return;
  const std::string self = path_.empty() ? "the top level" : path_;
  if (!node.IsMap()) {
    throw ConfigError(self + " (" + location(file_, mark_) + "): expected a map of keys, got " +
                      shown(node));
  }
  // Copies, not references: yaml-cpp's iterators hand out temporaries.
  for (const auto& kv : node) {
    const YAML::Node k = kv.first;
    if (!k.IsScalar()) {
      throw ConfigError("in " + self + " (" + location(file_, k.Mark()) +
                        "): keys must be plain names, got " + shown(k));
    }
    if (find(k.Scalar()) != nullptr) {
      throw ConfigError("duplicate key '" + k.Scalar() + "' in " + self + " (" +
                        location(file_, k.Mark()) + ")");
    }
    entries_.push_back(Entry{k.Scalar(), k.Mark(), kv.second, false});
  }
}

Reader::Entry* Reader::find(const std::string& key) {
  for (auto& e : entries_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

const Reader::Entry* Reader::find(const std::string& key) const {
  for (const auto& e : entries_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

std::string Reader::dotted(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

const Reader::Entry* Reader::take(const std::string& key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.push_back(key);
  Entry* e = find(key);
  if (e == nullptr) {
    if (presence_ == Presence::kRequired) {
      const std::string self = path_.empty() ? "at the top level" : "in " + path_;
      throw ConfigError("missing required key '" + key + "' " + self + " (" +
                        location(file_, mark_) + ")");
    }
    return nullptr;
  }
  e->used = true;
  return e;
}

template <class T>
void Reader::read_any(T& field, const std::string& key) {
  const Entry* e = take(key);
  if (e == nullptr) return;
  if (auto why = decode(e->value, field)) {
    throw ConfigError(dotted(key) + " (" + where(key) + "): " + *why);
  }
}

void Reader::read(std::string& field, const std::string& key) { read_any(field, key); }
void Reader::read(bool& field, const std::string& key) { read_any(field, key); }
void Reader::read(std::uint32_t& field, const std::string& key) { read_any(field, key); }
void Reader::read(std::uint64_t& field, const std::string& key) { read_any(field, key); }
void Reader::read(std::int64_t& field, const std::string& key) { read_any(field, key); }
void Reader::read(double& field, const std::string& key) { read_any(field, key); }

Reader Reader::section(const std::string& key) {
  const Entry* e = take(key);
  if (e == nullptr) return Reader(YAML::Node(), dotted(key), file_, presence_);
  return Reader(e->value, dotted(key), file_, presence_);
}

bool Reader::has(const std::string& key) const { return find(key) != nullptr; }

std::optional<YAML::Mark> Reader::value_mark(const std::string& key) const {
  const Entry* e = find(key);
  if (e == nullptr) return std::nullopt;
  // yaml-cpp marks an empty value at the start of the next token; the key is clearer.
  if (e->value.IsNull()) return e->key_mark;
  return e->value.Mark();
}

std::string Reader::where(const std::string& key) const {
  const auto m = value_mark(key);
  return m ? location(file_, *m) : file_;
}

void Reader::finish() const {
  for (const auto& e : entries_) {
    if (e.used) continue;
    std::string msg = "unknown key '" + e.key + "' " +
                      (path_.empty() ? std::string("at the top level") : "in " + path_) + " (" +
                      location(file_, e.key_mark) + ")";
    if (const auto near = common::closest_match(e.key, known_)) {
      msg += "; did you mean '" + *near + "'?";
    } else if (!known_.empty()) {
      msg += "; known keys:";
      for (const auto& k : known_) msg += " " + k;
    }
    throw ConfigError(msg);
  }
}

// ---------------------------------------------------------------------------------------
// Suggestions

// ---------------------------------------------------------------------------------------
// Public API

namespace {

// yaml-cpp shares an aliased node (*a) instead of copying it, so a few lines of anchors can
// stand for billions of nodes (an "alias bomb") that every reader walking the document, and
// PyYAML after it, would visit. A walk counts each node it meets, an alias as often as it is
// used, and stops past this many: 1 MiB of YAML without aliases holds fewer.
constexpr std::size_t kMaxYamlNodes = std::size_t{1} << 20;

// Every map of `n` (at any depth) has plain, distinct keys: yaml-cpp keeps the first of a
// repeated key and hands a list key to no reader in a usable form. `nodes` counts the
// nodes seen, aliases expanded (kMaxYamlNodes).
void check_keys(const YAML::Node& n, const std::string& file, const char* what,
                std::size_t& nodes) {
  if (++nodes > kMaxYamlNodes) {
    throw ConfigError(location(file, n.Mark()) + ": the document's aliases (*name) expand to " +
                      "more than " + std::to_string(kMaxYamlNodes) + " nodes; a " + what +
                      " is a few KiB: write the values out instead of repeating anchors");
  }
  if (n.IsSequence()) {
    for (const auto& el : n) check_keys(el, file, what, nodes);
    return;
  }
  if (!n.IsMap()) return;
  std::vector<std::string> seen;
  for (const auto& kv : n) {
    const YAML::Node k = kv.first;
    if (!k.IsScalar()) {
      throw ConfigError(location(file, k.Mark()) + ": keys must be plain names, got " + shown(k));
    }
    if (std::find(seen.begin(), seen.end(), k.Scalar()) != seen.end()) {
      throw ConfigError(location(file, k.Mark()) + ": duplicate key '" + echo_bytes(k.Scalar()) +
                        "'");
    }
    seen.push_back(k.Scalar());
    check_keys(kv.second, file, what, nodes);
  }
}

}  // namespace

YAML::Node load_yaml_file(const std::string& path, const char* what) {
  const YAML::Node root = parse_yaml(read_file(path, what), path, what);
  std::size_t nodes = 0;
  check_keys(root, path, what, nodes);
  return root;
}

ChipConfig load_chip_config_text(const std::string& text, const std::string& file_name) {
  Origins origins;
  ChipConfig c = load_text(text, file_name, Mode::kUser, origins);
  throw_if_invalid(c, origins, file_name);
  return c;
}

ChipConfig load_chip_config_file(const std::string& path) {
  return load_chip_config_text(read_file(path, "config file"), path);
}

std::string chip_preset_dir() {
  std::error_code ec;
  if (const char* env = std::getenv("PYPTO_CONFIG_DIR"); env != nullptr && *env != '\0') {
    if (!fs::is_directory(env, ec)) {
      throw ConfigError(std::string("PYPTO_CONFIG_DIR='") + env + "' is not a directory");
    }
    return env;
  }
  const std::string dir = compiled_config_dir();
  if (dir.empty() || !fs::is_directory(dir, ec)) {
    throw ConfigError("cannot find the chip presets" +
                      (dir.empty() ? std::string() : " (looked in '" + dir + "')") +
                      "; set PYPTO_CONFIG_DIR to the configs/ directory or use --config FILE");
  }
  return dir;
}

std::vector<std::string> list_chip_presets() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(chip_preset_dir())) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

ChipConfig load_chip_preset(const std::string& name) {
  const auto names = list_chip_presets();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    // Where the presets were looked for, when that is the user's choice or holds none: a
    // list of known chips alone would not say why 'a2' is unknown.
    const char* env = std::getenv("PYPTO_CONFIG_DIR");
    const std::string dir = chip_preset_dir();
    const std::string from =
        env != nullptr && *env != '\0' ? " (PYPTO_CONFIG_DIR='" + dir + "')" : " (" + dir + ")";
    if (names.empty()) {
      throw ConfigError("unknown chip '" + name + "': the preset folder" + from +
                        " holds no *.yaml preset; unset PYPTO_CONFIG_DIR or point it at the "
                        "project's configs/ folder");
    }
    std::string msg = "unknown chip '" + name + "'";
    if (const auto near = common::closest_match(name, names))
      msg += "; did you mean '" + *near + "'?";
    msg += " Known chips:";
    for (const auto& n : names) msg += " " + n;
    if (env != nullptr && *env != '\0') msg += from;
    throw ConfigError(msg);
  }
  const std::string path = (fs::path(chip_preset_dir()) / (name + ".yaml")).string();
  Origins origins;
  ChipConfig c = load_text(read_file(path, "chip preset"), path, Mode::kPreset, origins);
  if (c.chip.name != name) {
    throw ConfigError("chip.name (" + origins["chip.name"] + "): '" + c.chip.name +
                      "' must equal the preset's file name '" + name + "'");
  }
  throw_if_invalid(c, origins, path);
  return c;
}

void apply_override(ChipConfig& c, const std::string& assignment) {
  apply_override_impl(c, assignment, nullptr);
}

ChipConfig resolve_chip_config(const std::string& chip, const std::string& config_file,
                               const std::vector<std::string>& overrides) {
  if (!chip.empty() && !config_file.empty()) {
    throw ConfigError(
        "use either --chip or --config, not both (a config file can start from a "
        "preset with 'base: " +
        chip + "')");
  }
  Origins origins;
  std::string fallback;
  ChipConfig c;
  if (!config_file.empty()) {
    c = load_text(read_file(config_file, "config file"), config_file, Mode::kUser, origins);
    fallback = config_file;
  } else {
    c = load_chip_preset(chip.empty() ? "a2" : chip);
  }
  for (const auto& a : overrides) apply_override_impl(c, a, &origins);
  throw_if_invalid(c, origins, fallback);
  return c;
}

void validate(const ChipConfig& c) { throw_if_invalid(c, {}, ""); }

std::string to_yaml(const ChipConfig& c) {
  YAML::Emitter out;
  out << YAML::Comment("pypto-sim chip config; keys and ranges: pypto-sim config --describe")
      << YAML::Newline;
  out << YAML::BeginMap;
  std::string open;
  for_each_field([&](const FieldSpec& f, auto sec, auto mem) {
    if (open != f.section) {
      if (!open.empty()) out << YAML::EndMap;
      out << YAML::Key << f.section << YAML::Value << YAML::BeginMap;
      open = f.section;
    }
    const auto& v = (c.*sec).*mem;
    using T = std::decay_t<decltype(v)>;
    out << YAML::Key << f.key << YAML::Value;
    if constexpr (std::is_same_v<T, std::string>) {
      out << YAML::DoubleQuoted << v;
    } else if constexpr (std::is_floating_point_v<T>) {
      out << format_double(v);  // shortest exact text, not 17 digits
    } else {
      out << v;
    }
    if (*f.unit != '\0') out << YAML::Comment(f.unit);
  });
  if (!open.empty()) out << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::string describe() {
  const ChipConfig defaults;
  std::ostringstream os;
  os << "Chip config keys (defaults: Atlas A2). Set them in a YAML file (--config), or with\n"
        "--set key=value. Ranges are inclusive unless written (lo, hi].\n\n";
  os << std::left << std::setw(38) << "key" << std::setw(8) << "type" << std::setw(9) << "unit"
     << std::setw(18) << "default"
     << "range"
     << "\n";
  for_each_field([&](const FieldSpec& f, auto sec, auto mem) {
    const auto& v = (defaults.*sec).*mem;
    using T = std::decay_t<decltype(v)>;
    std::string range;
    if constexpr (std::is_same_v<T, std::string>) {
      range = f.lo >= 1 ? "non-empty" : "any";
    } else {
      range = range_text(f);
    }
    if (f.check_doc != nullptr) range += "; " + std::string(f.check_doc);
    os << std::setw(38) << dotted_key(f) << std::setw(8) << type_name<T>() << std::setw(9)
       << (*f.unit != '\0' ? f.unit : "-") << std::setw(18) << format_value(v) << range << "\n"
       << "    " << f.doc << "\n";
  });
  return os.str();
}

std::vector<std::string> chip_config_keys() { return all_keys(); }

bool recording_fits(const ChipConfig& c, const RecordedCores& r) {
  const std::uint64_t aic = c.cores.aic;
  const std::uint64_t aiv = aic * c.cores.aiv_per_aic;
  if (r.any_aic && r.max_aic_block >= aic) return false;
  if (r.any_aiv && (r.min_aiv_block < aic || r.max_aiv_block >= aic + aiv)) return false;
  return true;
}

std::vector<std::string> fitting_chip_presets(const RecordedCores& r) {
  std::vector<std::pair<std::uint32_t, std::string>> fits;
  for (const auto& name : list_chip_presets()) {
    const ChipConfig c = load_chip_preset(name);
    if (recording_fits(c, r)) fits.emplace_back(c.cores.aic, name);
  }
  std::sort(fits.begin(), fits.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::string> names;
  for (auto& f : fits) names.push_back(std::move(f.second));
  return names;
}

namespace {

// "20 AIC and at least 40 AIV (AIC blockIdx up to 19, AIV blockIdx 20-59)"
std::string describe_recorded_cores(const RecordedCores& r) {
  // The AIC count lies in [lo, hi]: above every AIC blockIdx, at most the first AIV blockIdx.
  const std::uint64_t lo = r.any_aic ? std::uint64_t{r.max_aic_block} + 1 : 1;
  const std::uint64_t hi = r.any_aiv ? r.min_aiv_block : std::uint64_t{128};
  std::string where;
  if (r.any_aic) where = "AIC blockIdx up to " + std::to_string(r.max_aic_block);
  if (r.any_aiv) {
    if (!where.empty()) where += ", ";
    where +=
        "AIV blockIdx " + std::to_string(r.min_aiv_block) + "-" + std::to_string(r.max_aiv_block);
  }
  if (lo > hi) {
    return "cores numbered AIV below AIC (" + where +
           "), which is not PyPTO's numbering (AIC first, then AIV)";
  }
  std::string text = lo == hi    ? std::to_string(lo) + " AIC"
                     : r.any_aiv ? std::to_string(lo) + " to " + std::to_string(hi) + " AIC"
                                 : "at least " + std::to_string(lo) + " AIC";
  if (r.any_aiv) text += " and at least " + std::to_string(r.max_aiv_block + 1 - hi) + " AIV";
  return text + " (" + where + ")";
}

}  // namespace

void check_recorded_cores(const ChipConfig& c, const RecordedCores& r) {
  if (recording_fits(c, r)) return;
  std::string msg = "the recording ran on " + describe_recorded_cores(r) + ", but chip " +
                    c.chip.name + " has " + std::to_string(c.cores.aic) + " AIC and " +
                    std::to_string(c.cores.aic * c.cores.aiv_per_aic) + " AIV";
  const auto fits = fitting_chip_presets(r);
  if (fits.empty()) {
    msg +=
        "; no preset fits: write a config with the recording's core counts (--config FILE "
        "with 'base: <preset>' and cores.aic)";
  } else {
    msg += "; presets that fit:";
    for (const auto& f : fits) msg += " " + f;
    msg += " (--chip auto picks " + fits.front() + ")";
  }
  throw ConfigError(msg);
}

std::optional<double> numeric_value(const ChipConfig& c, const std::string& key) {
  std::optional<double> value;
  for_each_field([&](const FieldSpec& f, auto sec, auto mem) {
    using T = std::decay_t<decltype((c.*sec).*mem)>;
    if constexpr (std::is_arithmetic_v<T>) {
      if (!value && dotted_key(f) == key) value = static_cast<double>((c.*sec).*mem);
    }
  });
  return value;
}

std::optional<std::string> first_difference(const ChipConfig& a, const ChipConfig& b) {
  std::optional<std::string> diff;
  for_each_field([&](const FieldSpec& f, auto sec, auto mem) {
    if (!diff && !((a.*sec).*mem == (b.*sec).*mem)) diff = dotted_key(f);
  });
  return diff;
}

}  // namespace pypto::model
