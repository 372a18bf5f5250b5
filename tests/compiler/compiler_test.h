// SPDX-License-Identifier: Apache-2.0
// Test helpers of the compiler suites: kernel IR text built from fragments, host tensors,
// running a launch's programs in task order, and small queries on a launch.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "pypto/compiler/compile.h"
#include "pypto/compiler/program.h"
#include "pypto/launch/launch.h"
#include "pypto/model/chip_config.h"

namespace compiler_test {

using pypto::compiler::DType;
using pypto::compiler::Launch;
using pypto::compiler::LaunchOptions;
using pypto::compiler::LaunchTensor;
using pypto::compiler::TaskProgram;
using pypto::compiler::TileInstr;
using pypto::compiler::TileOpcode;

// ---- IR text helpers (each returns one JSON fragment) ----

inline std::string val(int id, const std::string& shape, const std::string& dt = "DT_FP32",
                       const std::string& valid = "null") {
  return R"({"id":)" + std::to_string(id) + R"(,"shape":)" + shape + R"(,"dtype":")" + dt +
         R"(","format":"TILEOP_ND","valid_shape":)" + valid + "}";
}

inline std::string param(const std::string& name, int id, const std::string& shape,
                         const std::string& dt = "DT_FP32") {
  return R"({"name":")" + name + R"(","value":)" + std::to_string(id) + R"(,"shape":)" + shape +
         R"(,"dtype":")" + dt +
         R"(","format":"TILEOP_ND","dynamic_axes":[],"is_output_written":false})";
}

// An op statement; `extra` adds keys such as "attrs", "vec_tile", "cube_tile".
inline std::string op(const std::string& name, const std::string& inputs, const std::string& out,
                      const std::string& loc, const std::string& extra = "") {
  return R"({"kind":"op","op":")" + name + R"(","inputs":[)" + inputs + R"(],"out":)" + out +
         R"(,"loc":")" + loc + "\"" + (extra.empty() ? "" : "," + extra) + "}";
}

inline std::string in(int id) { return R"({"value":)" + std::to_string(id) + "}"; }
inline std::string cst(double v) {
  std::ostringstream s;
  s << R"({"const":)" << v << R"(,"dtype":"DT_FP32"})";
  return s.str();
}

inline std::string write(int dst, int src, const std::string& offsets, const std::string& loc,
                         const std::string& extra = "") {
  return R"({"kind":"write","dst":)" + std::to_string(dst) + R"(,"src":)" + std::to_string(src) +
         R"(,"offsets":)" + offsets + R"(,"attrs":{},"loc":")" + loc + "\"" +
         (extra.empty() ? "" : "," + extra) + "}";
}

inline std::string variant(const std::string& guard, const std::string& body) {
  return R"({"guard":)" + guard + R"(,"conds":[],"body":[)" + body + "]}";
}

inline std::string loop(const std::string& index, const std::string& start, const std::string& stop,
                        const std::string& variants, const std::string& loc,
                        const std::string& extra = "") {
  return R"({"kind":"loop","index":")" + index + R"(","start":)" + start + R"(,"stop":)" + stop +
         R"(,"step":1,"unroll_list":[1],"name":null,"loc":")" + loc + R"(","variants":[)" +
         variants + "]" + (extra.empty() ? "" : "," + extra) + "}";
}

inline std::string kernel(const std::string& name, const std::string& params,
                          const std::string& symbols, const std::string& body) {
  return R"({"format":"pypto-kernel-ir","version":1,"name":")" + name + R"(","params":[)" + params +
         R"(],"symbols":[)" + symbols + R"(],"variants":[)" + variant("true", body) + "]}";
}

inline std::string sym(const std::string& name) { return R"({"sym":")" + name + "\"}"; }
inline std::string ex(const std::string& o, const std::string& a, const std::string& b) {
  return R"({"op":")" + o + R"(","args":[)" + a + "," + b + "]}";
}

// ---- host tensors and execution ----

struct Host {
  std::vector<std::vector<std::uint8_t>> data;
  std::vector<LaunchTensor> tensors;

  void add(const std::string& name, DType d, std::vector<std::int64_t> shape,
           const std::vector<double>& values = {}) {
    std::int64_t n = 1;
    for (const auto s : shape) n *= s;
    const std::uint32_t es = pypto::model::dtype_bytes(d);
    data.emplace_back(static_cast<std::size_t>(n) * es, 0);
    for (std::size_t i = 0; i < values.size(); ++i) set(data.back(), d, i, values[i]);
    LaunchTensor t;
    t.name = name;
    t.dtype = d;
    t.shape = std::move(shape);
    tensors.push_back(t);
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      tensors[i].data = data[i].data();
      tensors[i].size_bytes = data[i].size();
    }
  }

  static void set(std::vector<std::uint8_t>& b, DType d, std::size_t i, double v) {
    if (d == DType::kFp32) {
      const float f = static_cast<float>(v);
      std::memcpy(b.data() + i * 4, &f, 4);
    } else if (d == DType::kInt32) {
      const std::int32_t x = static_cast<std::int32_t>(v);
      std::memcpy(b.data() + i * 4, &x, 4);
    } else {
      FAIL("test helper: unsupported dtype");
    }
  }

  float f32(std::size_t tensor, std::size_t i) const {
    float f;
    std::memcpy(&f, data[tensor].data() + i * 4, 4);
    return f;
  }
};

inline pypto::model::ChipConfig chip() { return pypto::model::ChipConfig{}; }

// Options that keep every emitted tile task a leaf: for the cases about what the emitters
// make (stores, edges, workspace); the partition's merges have their own cases.
inline LaunchOptions tile_tasks() {
  LaunchOptions o;
  o.partition.enabled = false;
  return o;
}

inline Launch make(const std::string& ir, Host& h,
                   const std::map<std::string, std::int64_t>& b = {}, LaunchOptions opt = {}) {
  auto k = pypto::compiler::compile(ir);
  return pypto::compiler::instantiate(*k, h.tensors, b, opt, chip());
}

// Runs every task's program in task order (a topological order: edges only go forward).
inline void execute(const Launch& l, Host& h) {
  pypto::launch::HostTileExecutor ex(l, h.tensors);
  for (std::size_t t = 0; t < l.programs.size(); ++t) {
    ex.execute(static_cast<pypto::common::TaskId>(t));
  }
}

inline std::vector<double> iota(std::size_t n, double scale = 1.0, double start = 0.0) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = start + scale * static_cast<double>(i);
  return v;
}

inline int count_op(const TaskProgram& p, TileOpcode op) {
  int n = 0;
  for (const TileInstr& in : p.instrs) n += in.op == op;
  return n;
}

inline std::vector<const TileInstr*> instrs_of(const TaskProgram& p, TileOpcode op) {
  std::vector<const TileInstr*> out;
  for (const TileInstr& in : p.instrs) {
    if (in.op == op) out.push_back(&in);
  }
  return out;
}

inline std::vector<std::uint32_t> succs(const pypto::sched::TaskGraph& g, std::uint32_t t) {
  return {g.succ.begin() + g.succ_first(t), g.succ.begin() + g.succ_last(t)};
}

inline std::string kernel_of(const Launch& l, std::uint32_t t) {
  return l.graph.kernel_names[l.graph.kernel[t]];
}

// t = a + 1 (8x8, tiles 4x8), out[:] = t * 2, s = sum(t, dim 1): a fused group whose value a
// reduction outside it reads, over two row tiles.
inline std::string keep_ir() {
  return kernel(
      "keep", param("a", 0, "[8,8]") + "," + param("out", 1, "[8,8]") + "," + param("s", 2, "[8]"),
      "",
      op("add", in(0) + "," + cst(1), val(3, "[8,8]"), "k.py:2", R"("vec_tile":[4,8])") + "," +
          op("mul", in(3) + "," + cst(2), val(4, "[8,8]"), "k.py:3", R"("vec_tile":[4,8])") + "," +
          write(1, 4, "[0,0]", "k.py:3") + "," +
          op("sum", in(3), val(5, "[8]"), "k.py:4",
             R"("attrs":{"dims":[1],"keepdim":false},"vec_tile":[4,8])") +
          "," + write(2, 5, "[0]", "k.py:4"));
}

}  // namespace compiler_test
