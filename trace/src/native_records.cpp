// SPDX-License-Identifier: Apache-2.0
// The rules of one native record (native_parse.h): the header, the keys of task and
// device-task records and their values, successors, memory ranges, kernels and tile ops.
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "native_parse.h"
#include "pypto/model/cost_model.h"

namespace pypto::trace::detail::native {

namespace {
constexpr const char* kTaskKeys =
    "id, core, kernel, root, dt, pg, succ, start, end, dur, mem, ops, tiles, cycles";

}  // namespace

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

void RecordParser::parse_succ(od::value& v) {
  od::array arr;
  if (const auto e = v.get_array().get(arr)) fail_type(v, "\"succ\" to be an array of task ids", e);
  for (auto item : arr) {
    od::value x;
    if (const auto e = item.get(x)) fail_json(e);
    const std::uint64_t id =
        get_u64(x, "each entry of \"succ\" to be a task id", common::kNoTask - 1);
    f_succ_.push_back(static_cast<common::TaskId>(id));
  }
}

void RecordParser::parse_mem(od::value& v) {
  constexpr std::string_view kWhat =
      "each entry of \"mem\" to be [address, bytes, kind] or [address, bytes, kind, burst bytes] "
      "(kind \"r\", \"w\", \"rn\" or \"wn\")";
  od::array arr;
  if (const auto e = v.get_array().get(arr)) {
    fail_type(v, "\"mem\" to be an array of [address, bytes, \"r\"|\"w\"]", e);
  }
  for (auto item : arr) {
    od::value entry;
    if (const auto e = item.get(entry)) fail_json(e);
    od::array fields;
    if (const auto e = entry.get_array().get(fields)) fail_type(entry, kWhat, e);
    sched::MemAccess m{};
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
          // "r" / "w", or "rn" / "wn" for a range that goes past L2 (not L2-cacheable).
          const std::string_view kind =
              get_str(x, "a \"mem\" access kind \"r\", \"w\", \"rn\" or \"wn\"");
          if (kind.empty() || kind.size() > 2 || (kind[0] != 'r' && kind[0] != 'w') ||
              (kind.size() == 2 && kind[1] != 'n')) {
            fail("expected a \"mem\" access kind \"r\", \"w\", \"rn\" or \"wn\", got \"" +
                 std::string(kind) + "\"");
          }
          m.is_write = kind[0] == 'w' ? 1 : 0;
          m.no_l2 = kind.size() == 2 ? 1 : 0;
          break;
        }
        case 3: {
          const std::uint64_t b =
              get_u64(x, "a \"mem\" burst size to be a byte count", sched::kMaxBurstBytes);
          m.burst_bytes = static_cast<std::uint32_t>(b);
          break;
        }
        default: fail("expected " + std::string(kWhat) + ", got more than 4 fields");
      }
    }
    if (n != 3 && n != 4)
      fail("expected " + std::string(kWhat) + ", got " + std::to_string(n) + " fields");
    if (m.bytes - 1 > ~std::uint64_t{0} - m.addr) {
      fail("the \"mem\" range at address " + std::to_string(m.addr) + " of " +
           std::to_string(m.bytes) + " bytes passes the end of the 64-bit address space");
    }
    f_mem_.push_back(m);
  }
}

std::uint32_t RecordParser::parse_kernel(od::value& v) {
  return kernel_index(get_str(v, "\"kernel\" to be a string"));
}

// The parser's index of a kernel name; a name seen for the first time becomes the batch's
// next new kernel.
std::uint32_t RecordParser::kernel_index(std::string_view s) {
  const std::size_t h = std::hash<std::string_view>{}(s);
  if (const std::uint32_t* hit = kernel_cache_.find(s, h)) return *hit;
  const auto [it, inserted] =
      kernel_local_.try_emplace(std::string(s), static_cast<std::uint32_t>(kernel_local_.size()));
  if (inserted) cur_.kernels.push_back(it->first);
  kernel_cache_.put(s, h, it->second);
  return it->second;
}

// The parser's index of the op list of a task; a list seen for the first time is checked
// and becomes the batch's next new list (the pricing pass prices each list once).
std::uint32_t RecordParser::parse_ops(od::value& v) {
  od::array arr;
  if (const auto e = v.get_array().get(arr)) {
    fail_type(v, "\"ops\" to be an array of [\"op\", \"dtype\", [dims...]]", e);
  }
  std::string_view raw;
  if (const auto e = arr.raw_json().get(raw)) fail_json(e);
  while (!raw.empty() && std::strchr(" \t\r\n", raw.back())) raw.remove_suffix(1);
  return ops_index(raw);
}

// The parser's index of the op list of text `raw` (from its '[' to its ']').
std::uint32_t RecordParser::ops_index(std::string_view raw) {
  const std::size_t h = std::hash<std::string_view>{}(raw);
  if (const std::uint32_t* hit = ops_cache_.find(raw, h)) return *hit;
  auto it = ops_local_.find(std::string(raw));
  if (it == ops_local_.end()) {
    cur_.op_lists.push_back(read_ops(raw));
    it = ops_local_.emplace(std::string(raw), static_cast<std::uint32_t>(ops_local_.size())).first;
  }
  ops_cache_.put(raw, h, it->second);
  return it->second;
}

// Reads an op list seen for the first time. It is parsed again on its own (the main
// document has moved past it), which is cheap because the cache makes this rare.
UnpricedWork::OpList RecordParser::read_ops(std::string_view raw) {
  constexpr std::string_view kWhat = "each entry of \"ops\" to be [\"op\", \"dtype\", [dims...]]";
  ops_text_ = simdjson::padded_string(raw);
  od::document doc;
  if (const auto e = ops_parser_.iterate(ops_text_).get(doc)) fail_json(e);
  od::array arr;
  if (const auto e = doc.get_array().get(arr)) fail_json(e);
  UnpricedWork::OpList list;
  list.line = line_;
  for (auto item : arr) {
    od::value entry;
    if (const auto e = item.get(entry)) fail_json(e);
    od::array fields;
    if (const auto e = entry.get_array().get(fields)) fail_type(entry, kWhat, e);
    model::TileOp op;
    int n = 0;
    for (auto field : fields) {
      od::value x;
      if (const auto e = field.get(x)) fail_json(e);
      switch (n++) {
        case 0: {
          const std::string_view name = get_str(x, "a tile op name (a string)");
          if (!model::is_known_tile_op(name)) {
            fail("unknown tile op \"" + std::string(name) + "\" in \"ops\"");
          }
          op.op = std::string(name);
          break;
        }
        case 1: {
          const std::string_view dt = get_str(x, "a dtype such as \"fp16\"");
          if (!model::parse_dtype(dt, &op.dtype)) {
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
    list.ops.push_back(std::move(op));
  }
  return list;
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
      header_.tasks = get_u64(v, "\"tasks\" to be the task count", common::kNoTask - 1);
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
    case kId: f_id_ = get_u64(v, "\"id\" to be a task id", common::kNoTask - 1); break;
    case kCore: {
      const std::string_view s = get_str(v, "\"core\" to be one of AIC, AIV, HUB, AICPU");
      const auto ct = common::parse_core_type(s);
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
    case kOps: f_ops_ = parse_ops(v); break;
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
  f_ops_ = UnpricedWork::kNoOps;
  f_extra_cycles_ = 0;
  f_pg_ = 0;
  f_root_ = 0;
  f_parallel_group_ = 0;  // a device-task record without it is group 0, not the last one's
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

}  // namespace pypto::trace::detail::native
