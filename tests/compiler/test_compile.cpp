// SPDX-License-Identifier: Apache-2.0
// The compact graph compiler: kernel IR -> leaf tasks, root instances, device tasks,
// workspace, dependencies, programs. Kernels are small hand-written IR texts; expected task
// counts, regions, edges and numbers are worked out by hand in the comments.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../common/temp_dir.h"
#include "compiler_test.h"
#include "pypto/common/errors.h"
#include "pypto/compiler/compile.h"
#include "pypto/compiler/op_table.h"
#include "pypto/compiler/program.h"
#include "pypto/launch/launch.h"
#include "pypto/model/chip_config.h"
#include "pypto/model/cost_model.h"
#include "pypto/sim/report.h"
#include "pypto/sim/simulation.h"
#include "pypto/trace/trace_loader.h"

using Catch::Matchers::Contains;
using pypto::ConfigError;
using pypto::common::CoreType;
using pypto::compiler::GlobalRegion;

namespace {}  // namespace

using namespace compiler_test;

namespace {

// out[:] = (a + b) * 2 on 5x7 fp32 with 4x4 tiles.
std::string addmul_ir() {
  return kernel(
      "addmul",
      param("a", 0, "[5,7]") + "," + param("b", 1, "[5,7]") + "," + param("out", 2, "[5,7]"), "",
      op("add", in(0) + "," + in(1), val(3, "[5,7]"), "k.py:3", R"("vec_tile":[4,4])") + "," +
          op("mul", in(3) + "," + cst(2.0), val(4, "[5,7]"), "k.py:4", R"("vec_tile":[4,4])") +
          "," + write(2, 4, "[0,0]", "k.py:4"));
}

}  // namespace

TEST_CASE("element-wise chain: one fused AIV task per tile, tails, only needed stores",
          "[compiler]") {
  Host h;
  h.add("a", DType::kFp32, {5, 7}, iota(35));
  h.add("b", DType::kFp32, {5, 7}, iota(35, 0.5, 1.0));
  h.add("out", DType::kFp32, {5, 7});
  const Launch l = make(addmul_ir(), h);
  // 5x7 with 4x4 tiles: 2 x 2 tiles, extents 4x4, 4x3, 1x4, 1x3.
  REQUIRE(l.graph.num_tasks() == 4);
  REQUIRE(l.roots == 1);
  REQUIRE(l.graph.device_tasks.size() == 1);
  CHECK(l.workspace_bytes == 0);  // nothing crosses tasks: no intermediate is stored
  CHECK(l.graph.num_edges() == 0);
  CHECK(l.tile_ops == 8);  // add + mul per tile
  const std::int64_t ext[4][2] = {{4, 4}, {4, 3}, {1, 4}, {1, 3}};
  const std::int64_t offset[4] = {0, 4, 28, 32};
  for (std::uint32_t t = 0; t < 4; ++t) {
    CHECK(l.graph.core_type[t] == CoreType::kAiv);
    CHECK(kernel_of(l, t) == "add_mul_f32");
    const TaskProgram& p = l.programs[t];
    CHECK(count_op(p, TileOpcode::kLoad) == 2);
    CHECK(count_op(p, TileOpcode::kAdd) == 1);
    CHECK(count_op(p, TileOpcode::kMul) == 1);
    const auto stores = instrs_of(p, TileOpcode::kStore);
    REQUIRE(stores.size() == 1);  // only the written value, straight into out
    const GlobalRegion& r = stores[0]->region;
    CHECK(r.buffer == 2);
    CHECK(r.offset_elems == offset[t]);
    CHECK(r.shape[0] == ext[t][0]);
    CHECK(r.shape[1] == ext[t][1]);
    CHECK(r.stride[0] == 7);
    CHECK(r.stride[1] == 1);
    // Memory ranges the simulator sees: one row segment per row of each of 3 regions.
    CHECK(l.graph.mem_begin[t + 1] - l.graph.mem_begin[t] == 3 * ext[t][0]);
  }
  // Cost (PyPTO's fitted rows at 1850 MHz): add fp32 4x4 = 64 B -> 35 fixed + 1; the product
  // with the scalar 2 is a tile-scalar op (vmuls, MULS's row) -> 28 + 1.
  CHECK(l.graph.compute_cycles[0] == 36 + 29);
  execute(l, h);
  for (std::size_t i = 0; i < 35; ++i) {
    const double a = static_cast<double>(i), b = 1.0 + 0.5 * static_cast<double>(i);
    CHECK(h.f32(2, i) == Approx((a + b) * 2));
  }
}

TEST_CASE("a fused value used outside the group is stored to workspace once", "[compiler]") {
  // keep_ir: a reduction outside the group reads t, so t is stored; t*2 goes straight to out.
  const std::string ir = keep_ir();
  Host h;
  h.add("a", DType::kFp32, {8, 8}, iota(64));
  h.add("out", DType::kFp32, {8, 8});
  h.add("s", DType::kFp32, {8});
  const Launch l = make(ir, h, {}, tile_tasks());
  // 2 group tasks (add_mul) + 2 reduction tasks (rows 0-3, 4-7).
  REQUIRE(l.graph.num_tasks() == 4);
  CHECK(kernel_of(l, 0) == "add_mul_f32");
  CHECK(kernel_of(l, 2) == "sum_f32");
  for (int t = 0; t < 2; ++t) CHECK(count_op(l.programs[t], TileOpcode::kStore) == 2);
  CHECK(l.workspace_bytes == 512);  // t: 8x8 fp32 = 256 B, allocations are L2-line (512 B) aligned
  // Each reduction task reads the rows its group task stored: exactly one edge each.
  CHECK(succs(l.graph, 0) == std::vector<std::uint32_t>{2});
  CHECK(succs(l.graph, 1) == std::vector<std::uint32_t>{3});
  execute(l, h);
  for (int r = 0; r < 8; ++r) {
    double sum = 0;
    for (int c = 0; c < 8; ++c) {
      sum += r * 8 + c + 1;
      CHECK(h.f32(1, static_cast<std::size_t>(r * 8 + c)) == Approx(2.0 * (r * 8 + c + 1)));
    }
    CHECK(h.f32(2, static_cast<std::size_t>(r)) == Approx(sum));
  }
}

TEST_CASE("matmul: AIC tasks per output tile, K split with accumulate", "[compiler]") {
  // a [64, 96] fp32 @ b [96, 32] fp32 -> out fp32; cube m=32, k=32, n=32 ->
  // 2 x 1 output tiles, 3 K steps each.
  const std::string ir = kernel(
      "mm",
      param("a", 0, "[64,96]") + "," + param("b", 1, "[96,32]") + "," + param("c", 2, "[64,32]"),
      "",
      op("matmul", in(0) + "," + in(1), val(3, "[64,32]"), "k.py:5",
         R"("attrs":{"a_trans":false,"b_trans":false,"c_matrix_nz":false},)"
         R"("cube_tile":{"m":[16,32],"k":[16,32,32],"n":[16,32],"enable_split_k":false})") +
          "," + write(2, 3, "[0,0]", "k.py:5"));
  Host h;
  std::vector<double> a(64 * 96), b(96 * 32);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>((i * 7) % 5) - 2.0;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>((i * 3) % 7) - 3.0;
  h.add("a", DType::kFp32, {64, 96}, a);
  h.add("b", DType::kFp32, {96, 32}, b);
  h.add("c", DType::kFp32, {64, 32});
  const Launch l = make(ir, h);
  REQUIRE(l.graph.num_tasks() == 2);
  for (std::uint32_t t = 0; t < 2; ++t) {
    CHECK(l.graph.core_type[t] == CoreType::kAic);
    CHECK(kernel_of(l, t) == "matmul_f32");
    CHECK(l.graph.tiles[t] == 3);
    const auto mm = instrs_of(l.programs[t], TileOpcode::kMatmul);
    REQUIRE(mm.size() == 3);
    CHECK(mm[0]->accumulate == 0);
    CHECK(mm[1]->accumulate == 1);
    CHECK(mm[2]->accumulate == 1);
    CHECK(count_op(l.programs[t], TileOpcode::kLoad) == 6);
    CHECK(count_op(l.programs[t], TileOpcode::kCast) == 0);  // fp32 accumulator = output
    // The leaf list-scheduled over its pipes (docs/leaf-timing.md): the task's panels move A
    // as 96 rows of 32 fp32 = 128 B at a 384 B pitch, each a burst paying a 512 B block (48
    // KiB), and B as one burst (its 128 B rows lie back to back, within the chip's merge
    // range, cost.cube_row_merge_*: 12 KiB); the 60 KiB spread over the six 4 KiB loads is 10
    // KiB each at 110 B/cycle, 94 cycles. MTE1 moves them to L0A (4 KiB at 512: 8) and L0B (at
    // 256: 16), the cube runs 16 fractals + ceil(16 * 8 %) = 2 stall cycles + 20 start/drain
    // = 38. The loads bound it: six back to back end at 564; the last L0B move [564, 580],
    // the last mmad [580, 618], then the 4 KiB store, 32 row bursts of 512 B at 86 B/cycle
    // (191): 809. With three tiles the simulator overlaps memory and compute: the makespan is
    // handed over.
    CHECK(l.graph.compute_cycles[t] == 809);
  }
  // Second task: A rows 32..63 of every K step.
  const auto loads = instrs_of(l.programs[1], TileOpcode::kLoad);
  CHECK(loads[0]->region.offset_elems == 32 * 96);
  CHECK(loads[2]->region.offset_elems == 32 * 96 + 32);
  execute(l, h);
  for (int i = 0; i < 64; i += 9) {
    for (int j = 0; j < 32; j += 5) {
      double ref = 0;
      for (int k = 0; k < 96; ++k) ref += a[i * 96 + k] * b[k * 32 + j];
      CHECK(h.f32(2, static_cast<std::size_t>(i * 32 + j)) == Approx(ref));
    }
  }
}

TEST_CASE("matmul: the cube moves each row of its tiles as a burst", "[compiler]") {
  // a [64, 16] fp16 @ b [16, 16] fp16 -> out fp16: rows of 16 fp16 = 32 B. A's panel is one
  // contiguous 2 KiB range, yet the ND -> fractal copy reads it row by row, and the FixPipe
  // writes the result row by row: 64 bursts, each paying a 512 B block (cost.mte_granule_bytes).
  const std::string ir =
      kernel("mm",
             param("a", 0, "[64,16]", "DT_FP16") + "," + param("b", 1, "[16,16]", "DT_FP16") + "," +
                 param("c", 2, "[64,16]", "DT_FP16"),
             "",
             op("matmul", in(0) + "," + in(1), val(3, "[64,16]", "DT_FP16"), "k.py:5",
                R"("attrs":{"a_trans":false,"b_trans":false,"c_matrix_nz":false},)"
                R"("cube_tile":{"m":[64,64],"k":[16,16,16],"n":[16,16],"enable_split_k":false})") +
                 "," + write(2, 3, "[0,0]", "k.py:5"));
  Host h;
  h.add("a", DType::kFp16, {64, 16});
  h.add("b", DType::kFp16, {16, 16});
  h.add("c", DType::kFp16, {64, 16});
  const Launch l = make(ir, h);
  REQUIRE(l.graph.num_tasks() == 1);
  std::uint64_t a_bytes = 0, c_bytes = 0;
  for (std::uint32_t i = l.graph.mem_begin[0]; i < l.graph.mem_begin[1]; ++i) {
    const auto& m = l.graph.mem[i];
    CHECK(m.burst_bytes == 32);
    if (m.bytes == 64 * 32) (m.is_write != 0 ? c_bytes : a_bytes) += m.bytes;
  }
  CHECK(a_bytes == 2048);
  CHECK(c_bytes == 2048);
  CHECK(pypto::model::mte_bytes(0, 2048, chip(), 32) == 64 * 512);
  CHECK(pypto::model::mte_bytes(0, 2048, chip(), 512) == 2048);
  CHECK(pypto::model::mte_bytes(0, 2048, chip(), 0) == 2048);
}

TEST_CASE("matmul with fp16 output casts the accumulator: b_trans uses permuted strides",
          "[compiler]") {
  const std::string ir =
      kernel("mmt",
             param("a", 0, "[16,40]", "DT_FP16") + "," + param("b", 1, "[24,40]", "DT_FP16") + "," +
                 param("c", 2, "[16,24]", "DT_FP16"),
             "",
             op("matmul", in(0) + "," + in(1), val(3, "[16,24]", "DT_FP16"), "k.py:5",
                R"("attrs":{"a_trans":false,"b_trans":true,"c_matrix_nz":false},)"
                R"("cube_tile":{"m":[16,16],"k":[16,32],"n":[16,16],"enable_split_k":false})") +
                 "," + write(2, 3, "[0,0]", "k.py:5"));
  Host h;
  h.add("a", DType::kFp16, {16, 40});
  h.add("b", DType::kFp16, {24, 40});
  h.add("c", DType::kFp16, {16, 24});
  const Launch l = make(ir, h);
  // N = 24 in tiles of 16 -> 2 tasks; K = 40 in steps of 32 -> 2 steps (32 + 8).
  REQUIRE(l.graph.num_tasks() == 2);
  const TaskProgram& p = l.programs[1];
  CHECK(count_op(p, TileOpcode::kCast) == 1);
  const auto loads = instrs_of(p, TileOpcode::kLoad);
  REQUIRE(loads.size() == 4);
  // B K-slice of the second N tile, second K step: b[16.., 32..] read as [K=8, N=8].
  const GlobalRegion& rb = loads[3]->region;
  CHECK(rb.shape[0] == 8);
  CHECK(rb.shape[1] == 8);
  CHECK(rb.stride[0] == 1);
  CHECK(rb.stride[1] == 40);
  CHECK(rb.offset_elems == 16 * 40 + 32);
  const auto store = instrs_of(p, TileOpcode::kStore);
  REQUIRE(store.size() == 1);
  CHECK(store[0]->region.shape[1] == 8);  // N tail
}

namespace {

// scale_rows of IR.md section 7: x [n, 64], tiles of 32 rows; iteration 0 doubles, the
// others copy.
std::string scale_rows_ir() {
  const std::string n = sym("x.shape[0]");
  const std::string i = sym("i");
  const std::string off = "[" + ex("mul", i, "32") + ",0]";
  const std::string valid = "[" + ex("min", "32", ex("sub", n, ex("mul", i, "32"))) + ",64]";
  const std::string stop = ex("floordiv", ex("add", n, "31"), "32");
  const std::string view_attrs = R"("attrs":{"offsets":)" + off + "}";
  const std::string v0 =
      variant(ex("eq", i, "0"),
              op("view", in(0), val(2, "[32,64]", "DT_FP32", valid), "t.py:8", view_attrs) + "," +
                  op("mul", in(2) + "," + cst(2.0), val(3, "[32,64]", "DT_FP32", valid), "t.py:10",
                     R"("vec_tile":[32,64])") +
                  "," + write(1, 3, off, "t.py:10", R"("vec_tile":[32,64])"));
  const std::string v1 =
      variant(ex("ne", i, "0"),
              op("view", in(0), val(4, "[32,64]", "DT_FP32", valid), "t.py:8", view_attrs) + "," +
                  write(1, 4, off, "t.py:12", R"("vec_tile":[32,64])"));
  return R"({"format":"pypto-kernel-ir","version":1,"name":"scale_rows","params":[)" +
         std::string(R"({"name":"x","value":0,"shape":[)") + n + R"(,64],"dtype":"DT_FP32"},)" +
         R"({"name":"y","value":1,"shape":[{"sym":"y.shape[0]"},64],"dtype":"DT_FP32"}],)" +
         R"("symbols":[{"name":"x.shape[0]","sources":[{"param":"x","axis":0}]},)" +
         R"({"name":"y.shape[0]","sources":[{"param":"y","axis":0}]}],"variants":[)" +
         variant("true", loop("i", "0", stop, v0 + "," + v1, "t.py:7")) + "]}";
}

}  // namespace

TEST_CASE("loop with two variants: one root per iteration, the right variant each time",
          "[compiler]") {
  const auto k = pypto::compiler::compile(scale_rows_ir());
  Host h;
  h.add("x", DType::kFp32, {100, 64}, iota(6400, 1.0, 1.0));
  h.add("y", DType::kFp32, {100, 64});
  const Launch l = pypto::compiler::instantiate(
      *k, h.tensors, {{"x.shape[0]", 100}, {"y.shape[0]", 100}}, LaunchOptions{}, chip());
  // ceil(100 / 32) = 4 iterations, one task each (one 32x64 tile per iteration).
  REQUIRE(l.roots == 4);
  REQUIRE(l.graph.num_tasks() == 4);
  CHECK(kernel_of(l, 0) == "mul_f32");
  for (std::uint32_t t = 1; t < 4; ++t) CHECK(kernel_of(l, t) == "copy_f32");
  for (std::uint32_t t = 0; t < 4; ++t) CHECK(l.graph.root[t] == t);
  // The last iteration covers rows 96..99 only: a 4-row tail.
  const auto st = instrs_of(l.programs[3], TileOpcode::kStore);
  REQUIRE(st.size() == 1);
  CHECK(st[0]->region.shape[0] == 4);
  CHECK(st[0]->region.offset_elems == 96 * 64);
  const auto ld = instrs_of(l.programs[3], TileOpcode::kLoad);
  REQUIRE(ld.size() == 1);
  CHECK(ld[0]->region.shape[0] == 4);  // never reads past row 99
  execute(l, h);
  for (std::size_t r = 0; r < 100; r += 7) {
    const double x = 1.0 + static_cast<double>(r * 64 + 5);
    CHECK(h.f32(1, r * 64 + 5) == Approx(r < 32 ? 2 * x : x));
  }

  SECTION("the same compiled kernel with another dynamic size") {
    Host h2;
    h2.add("x", DType::kFp32, {64, 64}, iota(4096));
    h2.add("y", DType::kFp32, {64, 64});
    const Launch l2 = pypto::compiler::instantiate(
        *k, h2.tensors, {{"x.shape[0]", 64}, {"y.shape[0]", 64}}, LaunchOptions{}, chip());
    CHECK(l2.roots == 2);
    CHECK(l2.graph.num_tasks() == 2);
    execute(l2, h2);
    CHECK(h2.f32(1, 63 * 64 + 1) == Approx(63 * 64 + 1));
    CHECK(h2.f32(1, 31 * 64 + 1) == Approx(2 * (31 * 64 + 1)));
  }
  SECTION("a binding that disagrees with the tensor is rejected") {
    CHECK_THROWS_WITH(
        pypto::compiler::instantiate(*k, h.tensors, {{"x.shape[0]", 99}, {"y.shape[0]", 100}},
                                     LaunchOptions{}, chip()),
        Contains("tensor \"x\" has size 100 on axis 0, expected 99"));
    CHECK_THROWS_WITH(
        pypto::compiler::instantiate(*k, h.tensors, {{"y.shape[0]", 100}}, LaunchOptions{}, chip()),
        Contains("no binding for dynamic dimension \"x.shape[0]\""));
  }
}

TEST_CASE("valid_shape_optimize: only full blocks of a dynamic loop skip the dynamic overhead",
          "[compiler]") {
  const auto k = pypto::compiler::compile(scale_rows_ir());
  Host h;
  h.add("x", DType::kFp32, {40, 64});
  h.add("y", DType::kFp32, {40, 64});
  const std::map<std::string, std::int64_t> b = {{"x.shape[0]", 40}, {"y.shape[0]", 40}};
  const std::uint32_t dyn = chip().cost.dynamic_shape_overhead_cycles;
  LaunchOptions off;
  const Launch l0 = pypto::compiler::instantiate(*k, h.tensors, b, off, chip());
  LaunchOptions on;
  on.runtime.valid_shape_optimize = 1;
  const Launch l1 = pypto::compiler::instantiate(*k, h.tensors, b, on, chip());
  REQUIRE(l0.graph.num_tasks() == 2);  // rows 0-31 (full), 32-39 (tail)
  // muls fp32 32x64 = 8 KiB -> 28 fixed + ceil(0.9527 * 2 * 8192 / 1e6 * 1850) = 29.
  CHECK(l0.graph.compute_cycles[0] == 57 + dyn);
  CHECK(l1.graph.compute_cycles[0] == 57);
  CHECK(l0.graph.compute_cycles[1] == dyn);  // the tail copy: no compute, dynamic leaf
  CHECK(l1.graph.compute_cycles[1] == dyn);
}

namespace {

// loop i in [0, n): out[i*4:(i+1)*4, :] = x[i*4:..] + 1; each iteration one 4x16 task.
std::string rows_loop_ir(int n, const std::string& loop_extra = "", const std::string& before = "",
                         const std::string& after = "") {
  const std::string i = sym("i");
  const std::string off = "[" + ex("mul", i, "4") + ",0]";
  const std::string body =
      op("view", in(0), val(10, "[4,16]"), "r.py:3", R"("attrs":{"offsets":)" + off + "}") + "," +
      op("add", in(10) + "," + cst(1), val(11, "[4,16]"), "r.py:4", R"("vec_tile":[4,16])") + "," +
      write(1, 11, off, "r.py:4");
  const std::string rows = std::to_string(4 * n);
  return kernel("rows",
                param("x", 0, "[" + rows + ",16]") + "," + param("out", 1, "[" + rows + ",16]") +
                    "," + param("z", 2, "[4,16]"),
                "",
                before +
                    loop("i", "0", std::to_string(n), variant("true", body), "r.py:2", loop_extra) +
                    after);
}

Host rows_host(int n) {
  Host h;
  h.add("x", DType::kFp32, {4 * n, 16}, iota(static_cast<std::size_t>(64 * n)));
  h.add("out", DType::kFp32, {4 * n, 16});
  h.add("z", DType::kFp32, {4, 16});
  return h;
}

}  // namespace

TEST_CASE("stitching: roots per device task, submit_before_loop, parallel loops", "[compiler]") {
  SECTION("stitch_function_max_num roots per device task") {
    Host h = rows_host(10);
    LaunchOptions opt;
    opt.runtime.stitch_function_max_num = 4;
    const Launch l = make(rows_loop_ir(10), h, {}, opt);
    REQUIRE(l.roots == 10);
    REQUIRE(l.graph.device_tasks.size() == 3);
    CHECK(l.graph.device_tasks[0].num_roots == 4);
    CHECK(l.graph.device_tasks[1].num_roots == 4);
    CHECK(l.graph.device_tasks[2].num_roots == 2);
    for (const auto& d : l.graph.device_tasks) CHECK(d.parallel_group == 0);
    execute(l, h);
    CHECK(h.f32(1, 39 * 16 + 3) == Approx(39 * 16 + 3 + 1));
  }
  SECTION("submit_before_loop closes the device task holding the statements before it") {
    // z[:] = z + 1 before the loop: its own root; the loop's roots would join it otherwise.
    const std::string before =
        op("add", in(2) + "," + cst(1), val(20, "[4,16]"), "r.py:1", R"("vec_tile":[4,16])") + "," +
        write(2, 20, "[0,0]", "r.py:1") + ",";
    Host h = rows_host(3);
    const Launch plain = make(rows_loop_ir(3, "", before), h);
    CHECK(plain.roots == 4);
    CHECK(plain.graph.device_tasks.size() == 1);
    const Launch barrier = make(rows_loop_ir(3, R"("submit_before_loop":true)", before), h);
    REQUIRE(barrier.graph.device_tasks.size() == 2);
    CHECK(barrier.graph.device_tasks[0].num_roots == 1);
    CHECK(barrier.graph.device_tasks[1].num_roots == 3);
  }
  SECTION("a parallel loop: one device task per iteration, one parallel group") {
    const std::string after =
        "," + op("add", in(2) + "," + cst(1), val(20, "[4,16]"), "r.py:9", R"("vec_tile":[4,16])") +
        "," + write(2, 20, "[0,0]", "r.py:9");
    const std::string ir = rows_loop_ir(3, R"("parallel":true)", "", after);
    Host h = rows_host(3);
    LaunchOptions opt;
    opt.runtime.device_sched_parallelism = 2;
    const Launch l = make(ir, h, {}, opt);
    REQUIRE(l.graph.device_tasks.size() == 4);
    const std::uint32_t g = l.graph.device_tasks[0].parallel_group;
    CHECK(g != 0);
    CHECK(l.graph.device_tasks[1].parallel_group == g);
    CHECK(l.graph.device_tasks[2].parallel_group == g);
    CHECK(l.graph.device_tasks[3].parallel_group == 0);
    for (const auto& d : l.graph.device_tasks) CHECK(d.num_roots == 1);
  }
  SECTION("unroll_list puts several iterations in one root") {
    Host h = rows_host(5);
    std::string ir = rows_loop_ir(5);
    const std::string from = R"("unroll_list":[1])";
    ir.replace(ir.find(from), from.size(), R"("unroll_list":[4,1])");
    const Launch l = make(ir, h);
    CHECK(l.roots == 2);  // iterations 0-3, then 4
    CHECK(l.graph.num_tasks() == 5);
    execute(l, h);
    CHECK(h.f32(1, 19 * 16) == Approx(19 * 16 + 1));
  }
}

TEST_CASE("dependencies are exact: RAW and WAR across roots, none between disjoint tiles",
          "[compiler]") {
  SECTION("RAW across roots through a write then a view of the same region") {
    // loop i in [0, 2): i == 0: y[0:4] = x * 2;  i != 0: out[:] = y[0:4] + 1.
    const std::string i = sym("i");
    const std::string v0 = variant(
        ex("eq", i, "0"),
        op("mul", in(0) + "," + cst(2), val(10, "[4,16]"), "d.py:3", R"("vec_tile":[4,16])") + "," +
            write(1, 10, "[0,0]", "d.py:3"));
    const std::string v1 = variant(
        ex("ne", i, "0"),
        op("view", in(1), val(11, "[4,16]"), "d.py:5", R"("attrs":{"offsets":[0,0]})") + "," +
            op("add", in(11) + "," + cst(1), val(12, "[4,16]"), "d.py:5", R"("vec_tile":[4,16])") +
            "," + write(2, 12, "[0,0]", "d.py:5"));
    const std::string ir = kernel(
        "raw",
        param("x", 0, "[4,16]") + "," + param("y", 1, "[8,16]") + "," + param("out", 2, "[4,16]"),
        "", loop("i", "0", "2", v0 + "," + v1, "d.py:2"));
    Host h;
    h.add("x", DType::kFp32, {4, 16}, iota(64));
    h.add("y", DType::kFp32, {8, 16});
    h.add("out", DType::kFp32, {4, 16});
    const Launch l = make(ir, h, {}, tile_tasks());
    REQUIRE(l.graph.num_tasks() == 2);
    CHECK(l.graph.root[0] == 0);
    CHECK(l.graph.root[1] == 1);
    CHECK(succs(l.graph, 0) == std::vector<std::uint32_t>{1});
    execute(l, h);
    CHECK(h.f32(2, 17) == Approx(2 * 17 + 1));
  }
  SECTION("WAR: a later root overwrites what an earlier root read") {
    // loop i in [0, 2): i == 0: out[:] = y[0:4] * 1;  i != 0: y[0:4] = x + 0.
    const std::string i = sym("i");
    const std::string v0 = variant(
        ex("eq", i, "0"),
        op("view", in(1), val(11, "[4,16]"), "d.py:3", R"("attrs":{"offsets":[0,0]})") + "," +
            op("mul", in(11) + "," + cst(1), val(12, "[4,16]"), "d.py:3", R"("vec_tile":[4,16])") +
            "," + write(2, 12, "[0,0]", "d.py:3"));
    const std::string v1 = variant(
        ex("ne", i, "0"),
        op("add", in(0) + "," + cst(0), val(10, "[4,16]"), "d.py:5", R"("vec_tile":[4,16])") + "," +
            write(1, 10, "[0,0]", "d.py:5"));
    const std::string ir = kernel(
        "war",
        param("x", 0, "[4,16]") + "," + param("y", 1, "[8,16]") + "," + param("out", 2, "[4,16]"),
        "", loop("i", "0", "2", v0 + "," + v1, "d.py:2"));
    Host h;
    h.add("x", DType::kFp32, {4, 16}, iota(64, 1.0, 100.0));
    h.add("y", DType::kFp32, {8, 16}, iota(128));
    h.add("out", DType::kFp32, {4, 16});
    const Launch l = make(ir, h, {}, tile_tasks());
    REQUIRE(l.graph.num_tasks() == 2);
    CHECK(succs(l.graph, 0) == std::vector<std::uint32_t>{1});
    execute(l, h);
    CHECK(h.f32(2, 5) == Approx(5));  // read before the overwrite
    CHECK(h.f32(1, 5) == Approx(105));
  }
  SECTION("no false dependency between disjoint tiles of one tensor") {
    // out[:] = x + 1 in 4x4 tiles, then z[:] = out * 2 in the same tiles: each consumer
    // waits for exactly its producer tile; producers are independent.
    const std::string ir = kernel(
        "tiles",
        param("x", 0, "[8,8]") + "," + param("out", 1, "[8,8]") + "," + param("z", 2, "[8,8]"), "",
        op("add", in(0) + "," + cst(1), val(3, "[8,8]"), "d.py:2", R"("vec_tile":[4,4])") + "," +
            write(1, 3, "[0,0]", "d.py:2") + "," +
            op("view", in(1), val(4, "[8,8]"), "d.py:3", R"("attrs":{"offsets":[0,0]})") + "," +
            op("mul", in(4) + "," + cst(2), val(5, "[8,8]"), "d.py:3", R"("vec_tile":[4,4])") +
            "," + write(2, 5, "[0,0]", "d.py:3"));
    Host h;
    h.add("x", DType::kFp32, {8, 8}, iota(64));
    h.add("out", DType::kFp32, {8, 8});
    h.add("z", DType::kFp32, {8, 8});
    const Launch l = make(ir, h, {}, tile_tasks());
    REQUIRE(l.graph.num_tasks() == 8);
    CHECK(l.graph.num_edges() == 4);
    for (std::uint32_t t = 0; t < 4; ++t) {
      CHECK(succs(l.graph, t) == std::vector<std::uint32_t>{t + 4});
      CHECK(l.graph.pred_count[t] == 0);
    }
    execute(l, h);
    CHECK(h.f32(2, 63) == Approx(2 * 64));
  }
}

TEST_CASE("copy semantics of views are kept when the source is overwritten", "[compiler]") {
  // v = x[0:4]; x[0:4] = y; out[:] = v + 0 -> out holds the OLD rows of x.
  const std::string ir = kernel(
      "viewcopy",
      param("x", 0, "[8,16]") + "," + param("y", 1, "[4,16]") + "," + param("out", 2, "[4,16]"), "",
      op("view", in(0), val(3, "[4,16]"), "v.py:2", R"("attrs":{"offsets":[0,0]})") + "," +
          write(0, 1, "[0,0]", "v.py:3") + "," +
          op("add", in(3) + "," + cst(0), val(4, "[4,16]"), "v.py:4", R"("vec_tile":[4,16])") +
          "," + write(2, 4, "[0,0]", "v.py:4"));
  Host h;
  h.add("x", DType::kFp32, {8, 16}, iota(128));
  h.add("y", DType::kFp32, {4, 16}, iota(64, 0.0, -1.0));
  h.add("out", DType::kFp32, {4, 16});
  const Launch l = make(ir, h);
  // The copy of the view, the write and the add are singletons of a chain (each at its own
  // place in the graph): the singleton merges make them one leaf, its ops in program order.
  REQUIRE(l.graph.num_tasks() == 1);
  execute(l, h);
  CHECK(h.f32(2, 9) == Approx(9));
  CHECK(h.f32(0, 9) == Approx(-1));
}

TEST_CASE("in-place update acc = acc + x fuses load and store in one task per tile", "[compiler]") {
  const std::string ir =
      kernel("inplace", param("acc", 0, "[8,8]") + "," + param("x", 1, "[8,8]"), "",
             op("add", in(0) + "," + in(1), val(2, "[8,8]"), "i.py:2", R"("vec_tile":[4,8])") +
                 "," + write(0, 2, "[0,0]", "i.py:2"));
  Host h;
  h.add("acc", DType::kFp32, {8, 8}, iota(64));
  h.add("x", DType::kFp32, {8, 8}, iota(64, 0.0, 3.0));
  const Launch l = make(ir, h);
  REQUIRE(l.graph.num_tasks() == 2);
  CHECK(l.graph.num_edges() == 0);
  execute(l, h);
  CHECK(h.f32(0, 40) == Approx(43));
}

// m[:] = amax(a) written after other ops (PyPTO glues a copy-out assemble to its producer):
// the write is a store of amax's tasks unless an op in between reads m.
namespace {
std::string late_write_ir(bool read_between) {
  const std::string between = read_between ? op("add", in(2) + "," + cst(1), val(6, "[8]"),
                                                "w.py:4", R"("vec_tile":[4,8])") +
                                                 "," + write(1, 6, "[0]", "w.py:4") + ","
                                           : "";
  return kernel(
      "late", param("a", 0, "[8,8]") + "," + param("s", 1, "[8]") + "," + param("m", 2, "[8]"), "",
      op("amax", in(0), val(3, "[8]"), "w.py:2",
         R"("attrs":{"dims":[1],"keepdim":false},"vec_tile":[4,8])") +
          "," + op("add", in(0) + "," + cst(1), val(4, "[8,8]"), "w.py:3", R"("vec_tile":[4,8])") +
          "," +
          op("sum", in(4), val(5, "[8]"), "w.py:3",
             R"("attrs":{"dims":[1],"keepdim":false},"vec_tile":[4,8])") +
          "," + write(1, 5, "[0]", "w.py:3") + "," + between + write(2, 3, "[0]", "w.py:5"));
}
}  // namespace

TEST_CASE("a write joins the tasks of its value's producer when nothing between touches it",
          "[compiler]") {
  const auto host = [] {
    Host h;
    h.add("a", DType::kFp32, {8, 8}, iota(64));
    h.add("s", DType::kFp32, {8});
    h.add("m", DType::kFp32, {8});
    return h;
  };
  Host h = host();
  // amax, add and sum: two row tiles each = 6 tasks; m[:] = amax is amax's own store.
  const Launch l = make(late_write_ir(false), h, {}, tile_tasks());
  REQUIRE(l.graph.num_tasks() == 6);
  CHECK(kernel_of(l, 0) == "amax_f32");
  for (int t = 0; t < 2; ++t) CHECK(count_op(l.programs[t], TileOpcode::kStore) == 1);
  execute(l, h);
  CHECK(h.f32(2, 3) == Approx(31));   // row 3: max 24..31
  CHECK(h.f32(1, 3) == Approx(228));  // sum of 25..32
  // s[:] = m + 1 reads m between amax and the write: the write stays a copy task of its own
  // (9 tasks: amax, add, sum and m + 1 two each, its [8] cut by the tile's first size as PyPTO
  // reads it, and the copy of m one).
  Host h2 = host();
  const Launch l2 = make(late_write_ir(true), h2, {}, tile_tasks());
  CHECK(l2.graph.num_tasks() == 9);
  execute(l2, h2);
  CHECK(h2.f32(2, 3) == Approx(31));
}

TEST_CASE("reduction and transpose tasks", "[compiler]") {
  SECTION("sum over the last axis with a row tail") {
    const std::string ir = kernel("rsum", param("x", 0, "[5,7]") + "," + param("s", 1, "[5]"), "",
                                  op("sum", in(0), val(2, "[5]"), "s.py:2",
                                     R"("attrs":{"dims":[1],"keepdim":false},"vec_tile":[4,8])") +
                                      "," + write(1, 2, "[0]", "s.py:2"));
    Host h;
    h.add("x", DType::kFp32, {5, 7}, iota(35));
    h.add("s", DType::kFp32, {5});
    const Launch l = make(ir, h);
    REQUIRE(l.graph.num_tasks() == 2);  // rows 0-3, row 4
    const auto red = instrs_of(l.programs[1], TileOpcode::kReduceSum);
    REQUIRE(red.size() == 1);
    CHECK(red[0]->reduce_mask == 2);
    CHECK(l.programs[1].locals[red[0]->dst].shape[0] == 1);
    CHECK(l.programs[1].locals[red[0]->dst].shape[1] == 1);
    execute(l, h);
    for (int r = 0; r < 5; ++r)
      CHECK(h.f32(1, static_cast<std::size_t>(r)) == Approx(49.0 * r + 21.0));
  }
  SECTION("transpose is a permuted-stride load") {
    const std::string ir = kernel("tr", param("x", 0, "[5,7]") + "," + param("y", 1, "[7,5]"), "",
                                  op("transpose", in(0), val(2, "[7,5]"), "t.py:2",
                                     R"("attrs":{"dims":[0,1]},"vec_tile":[4,4])") +
                                      "," + write(1, 2, "[0,0]", "t.py:2"));
    Host h;
    h.add("x", DType::kFp32, {5, 7}, iota(35));
    h.add("y", DType::kFp32, {7, 5});
    const Launch l = make(ir, h);
    REQUIRE(l.graph.num_tasks() == 4);
    const auto ld = instrs_of(l.programs[0], TileOpcode::kLoad);
    REQUIRE(ld.size() == 1);
    CHECK(ld[0]->region.stride[0] == 1);
    CHECK(ld[0]->region.stride[1] == 7);
    CHECK(l.tile_ops == 0);
    execute(l, h);
    for (int r = 0; r < 7; ++r) {
      for (int c = 0; c < 5; ++c) {
        CHECK(h.f32(1, static_cast<std::size_t>(r * 5 + c)) == Approx(c * 7 + r));
      }
    }
  }
}

namespace {

// loop i in [0, n): t = exp(x[i*4:.., :]) (4x64 fp32 = 1 KiB, stored for the reduction),
// s[i*4:..] = sum(t, 1). Each root keeps 1 KiB of root-inner workspace.
std::string ws_ir(int n) {
  const std::string i = sym("i");
  const std::string off = "[" + ex("mul", i, "4") + ",0]";
  const std::string body =
      op("view", in(0), val(10, "[4,64]"), "w.py:3", R"("attrs":{"offsets":)" + off + "}") + "," +
      op("exp", in(10), val(11, "[4,64]"), "w.py:4", R"("vec_tile":[4,64])") + "," +
      op("sum", in(11), val(12, "[4]"), "w.py:5",
         R"("attrs":{"dims":[1],"keepdim":false},"vec_tile":[4,64])") +
      "," + write(1, 12, "[" + ex("mul", i, "4") + "]", "w.py:5");
  return kernel("ws",
                param("x", 0, "[" + std::to_string(4 * n) + ",64]") + "," +
                    param("s", 1, "[" + std::to_string(4 * n) + "]"),
                "", loop("i", "0", std::to_string(n), variant("true", body), "w.py:2"));
}

}  // namespace

TEST_CASE("workspace: minimum, recommendation, error, memory-driven stitching", "[compiler]") {
  Host h;
  h.add("x", DType::kFp32, {32, 64}, iota(2048, 0.001));
  h.add("s", DType::kFp32, {32});
  SECTION("default: stitch depth from stitch_function_max_num and the recommendation") {
    const Launch l = make(ws_ir(8), h, {}, tile_tasks());
    CHECK(l.minimum_workspace_bytes == 1024);
    CHECK(l.graph.device_tasks.size() == 1);
    CHECK(l.workspace_bytes == 8 * 1024);  // 8 roots of one device task, disjoint slices
    REQUIRE(!l.log.empty());
    CHECK(l.log[0] ==
          "Recommended: set max_workspace_kb near 128KB and above 1KB to activate memory-driven "
          "mode.");
    // Roots of one device task use disjoint slices: no WAR edges between iterations.
    CHECK(l.graph.num_edges() == 8);  // exp -> sum in each root
    execute(l, h);
    double ref = 0;
    for (int c = 0; c < 64; ++c) ref += std::exp(0.001 * (28 * 64 + c));
    CHECK(h.f32(1, 28) == Approx(ref).epsilon(1e-5));
  }
  SECTION("max_workspace_kb at or below the minimum is an error with PyPTO's message") {
    LaunchOptions opt = tile_tasks();
    opt.runtime.max_workspace_kb = 1;
    CHECK_THROWS_AS(make(ws_ir(8), h, {}, opt), ConfigError);
    CHECK_THROWS_WITH(
        make(ws_ir(8), h, {}, opt),
        "max_workspace_kb=1KB must be greater than the minimum runnable workspace=1KB");
  }
  SECTION("memory-driven: a device task closes when the next root does not fit") {
    LaunchOptions opt = tile_tasks();
    opt.runtime.max_workspace_kb = 3;
    const Launch l = make(ws_ir(8), h, {}, opt);
    // 3 KiB holds three 1 KiB roots: 8 roots -> 3 + 3 + 2.
    REQUIRE(l.graph.device_tasks.size() == 3);
    CHECK(l.graph.device_tasks[0].num_roots == 3);
    CHECK(l.graph.device_tasks[2].num_roots == 2);
    CHECK(l.workspace_bytes == 3 * 1024);
    CHECK_THAT(l.log.back(), Contains("k_eff=3") && Contains("memory_driven=1"));
    execute(l, h);
    double ref = 0;
    for (int c = 0; c < 64; ++c) ref += std::exp(0.001 * (31 * 64 + c));
    CHECK(h.f32(1, 31) == Approx(ref).epsilon(1e-5));
  }
}

TEST_CASE("launch::run_sim: numbers, reports, and the launch's workspace in the stats",
          "[compiler][sim]") {
  Host h;
  h.add("x", DType::kFp32, {32, 64}, iota(2048, 0.001));
  h.add("s", DType::kFp32, {32});
  pypto::testing::TempDir tmp;
  const std::string dir = tmp.path() + "/run";
  const pypto::launch::SimRun run = pypto::launch::run_sim(
      *pypto::compiler::compile(ws_ir(8)), h.tensors, {}, tile_tasks(), chip(), dir);
  CHECK(run.report_dir == dir);
  CHECK(std::ifstream(dir + "/stats.json").good());
  CHECK(run.result.stats.tasks == 16);
  // The compiler's exact figures (TaskGraph::workspace), not the trace estimate.
  CHECK(run.result.stats.workspace_peak_bytes == 8 * 1024);
  CHECK(run.result.stats.workspace_minimum_bytes == 1024);
  CHECK_THAT(run.launch.log[0], Contains("Recommended: set max_workspace_kb near 128KB"));
  double ref = 0;
  for (int c = 0; c < 64; ++c) ref += std::exp(0.001 * (28 * 64 + c));
  CHECK(h.f32(1, 28) == Approx(ref).epsilon(1e-5));
}

TEST_CASE("launch::submit_sim: the same numbers and reports as run_sim, timing in the background",
          "[compiler][sim]") {
  const auto kernel = pypto::compiler::compile(ws_ir(8));
  pypto::testing::TempDir tmp;
  Host waited;
  waited.add("x", DType::kFp32, {32, 64}, iota(2048, 0.001));
  waited.add("s", DType::kFp32, {32});
  pypto::launch::set_l2_warm_across_calls(false);
  const pypto::launch::SimRun ref =
      pypto::launch::run_sim(*kernel, waited.tensors, {}, tile_tasks(), chip(), tmp.path() + "/a");
  Host h;
  h.add("x", DType::kFp32, {32, 64}, iota(2048, 0.001));
  h.add("s", DType::kFp32, {32});
  pypto::launch::SimTicket ticket =
      pypto::launch::submit_sim(*kernel, h.tensors, {}, tile_tasks(), chip(), tmp.path() + "/b");
  // The outputs are there when submit_sim returns, before the timing run is awaited.
  for (int r = 0; r < 32; ++r) CHECK(h.f32(1, r) == waited.f32(1, r));
  CHECK(ticket.launch().graph.num_tasks() == 16);
  const pypto::launch::SimRun& run = ticket.wait();
  CHECK(ticket.done());
  // Equal but for the wall-clock fields.
  auto timing = [](const pypto::sim::SimResult& r) {
    nlohmann::ordered_json j = pypto::sim::stats_json(r);
    j.erase("wall_s");
    j.erase("tasks_per_s");
    return j.dump();
  };
  CHECK(timing(run.result) == timing(ref.result));
  auto slurp = [](const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  CHECK(slurp(tmp.path() + "/b/trace.json") == slurp(tmp.path() + "/a/trace.json"));
  CHECK(pypto::launch::take_unobserved_sim_failures().empty());
  pypto::launch::set_l2_warm_across_calls(true);
}

TEST_CASE("launch::submit_sim: a full report queue makes the next submission wait for room",
          "[compiler][sim]") {
  const auto kernel = pypto::compiler::compile(ws_ir(8));
  pypto::testing::TempDir tmp;
  const pypto::launch::ReportQueueLimits saved = pypto::launch::report_queue_limits();
  CHECK_THROWS_WITH(pypto::launch::set_report_queue_limits({0, 1}),
                    Contains("max_runs 0, max_tasks 1; both must be at least 1"));
  Host h;
  h.add("x", DType::kFp32, {32, 64}, iota(2048, 0.001));
  h.add("s", DType::kFp32, {32});
  auto submit = [&](int i) {
    return pypto::launch::submit_sim(*kernel, h.tensors, {}, tile_tasks(), chip(),
                                     tmp.path() + "/" + std::to_string(i));
  };
  SECTION("one run at most: each submission finds the previous run done") {
    pypto::launch::set_report_queue_limits({1, 1u << 20});
    std::vector<pypto::launch::SimTicket> tickets;
    for (int i = 0; i < 4; ++i) {
      tickets.push_back(submit(i));
      if (i > 0) CHECK(tickets[i - 1].done());
    }
  }
  SECTION("by tasks: 16-task runs under a 20-task bound, and one run above it when idle") {
    pypto::launch::set_report_queue_limits({4096, 20});
    pypto::launch::SimTicket a = submit(0);
    pypto::launch::SimTicket b = submit(1);
    CHECK(a.done());  // 16 + 16 > 20: b waited for a
    pypto::launch::set_report_queue_limits({4096, 8});
    pypto::launch::SimTicket c = submit(2);  // 16 > 8, taken once nothing is pending
    CHECK(b.done());
    c.wait();
  }
  pypto::launch::wait_submitted_sims();
  pypto::launch::set_report_queue_limits(saved);
  CHECK(pypto::launch::take_unobserved_sim_failures().empty());
}

TEST_CASE("execute_in_dependency_order: device task after device task, lowest ready id first",
          "[compiler]") {
  // Two device tasks: {0 -> 2, 1 -> 2} and {3, 4 -> 3}; recorded by a test executor.
  Launch l;
  pypto::sched::TaskGraph& g = l.graph;
  g.core_type.assign(5, pypto::common::CoreType::kAiv);
  g.succ_begin = {0, 1, 2, 2, 2, 3};
  g.succ = {2, 2, 3};
  g.pred_count = {0, 0, 2, 1, 0};
  g.device_tasks = {pypto::sched::DeviceTask{0, 3}, pypto::sched::DeviceTask{3, 2}};
  struct Recorder final : pypto::launch::TaskExecutor {
    std::vector<pypto::common::TaskId> order;
    void execute(pypto::common::TaskId t) override { order.push_back(t); }
  } rec;
  pypto::launch::execute_in_dependency_order(l, rec);
  CHECK(rec.order == std::vector<pypto::common::TaskId>{0, 1, 2, 4, 3});
  g.pred_count[0] = 1;  // 0 waits for nothing that will come: a cycle in all but name
  Recorder stuck;
  CHECK_THROWS_WITH(pypto::launch::execute_in_dependency_order(l, stuck),
                    Contains("its dependencies form a cycle (2 tasks never became ready)"));
}

TEST_CASE("a loop bound read from tensor data waits for the AICore unless ready on host",
          "[compiler]") {
  const std::string load = R"({"op":"load","param":"lens","args":[0]})";
  const std::string body =
      op("view", in(0), val(10, "[4,16]"), "l.py:3",
         R"("attrs":{"offsets":[)" + ex("mul", sym("i"), "4") + ",0]}") +
      "," + op("add", in(10) + "," + cst(1), val(11, "[4,16]"), "l.py:3", R"("vec_tile":[4,16])") +
      "," + write(1, 11, "[" + ex("mul", sym("i"), "4") + ",0]", "l.py:3");
  const std::string ir = kernel("lens",
                                param("x", 0, "[16,16]") + "," + param("out", 1, "[16,16]") + "," +
                                    param("lens", 2, "[1]", "DT_INT32"),
                                "", loop("i", "0", load, variant("true", body), "l.py:2"));
  Host h;
  h.add("x", DType::kFp32, {16, 16});
  h.add("out", DType::kFp32, {16, 16});
  h.add("lens", DType::kInt32, {1}, {3});
  const Launch l = make(ir, h);
  CHECK(l.roots == 3);
  CHECK(l.graph.control_waits_for_aicore);
  LaunchOptions opt;
  opt.runtime.ready_on_host_tensors = {"lens"};
  const Launch l2 = make(ir, h, {}, opt);
  CHECK_FALSE(l2.graph.control_waits_for_aicore);
}

TEST_CASE("unsupported or malformed IR is a ConfigError naming the statement", "[compiler]") {
  const std::string params = param("x", 0, "[8]") + "," + param("y", 1, "[8]");
  CHECK_THROWS_WITH(
      pypto::compiler::compile(kernel(
          "bad", params, "", op("topk", in(0), val(2, "[8]"), "bad.py:12", R"("vec_tile":[8])"))),
      Contains("bad.py:12") && Contains("\"topk\" is not supported"));
  CHECK_THROWS_WITH(pypto::compiler::compile(
                        kernel("bad", params, "", op("exp", in(0), val(2, "[8]"), "bad.py:4"))),
                    Contains("bad.py:4") && Contains("no vec_tile"));
  CHECK_THROWS_WITH(
      pypto::compiler::compile(kernel("bad", param("x", 0, "[8]", "DT_UINT16"), "", "")),
      Contains("DT_UINT16 is not supported"));
  CHECK_THROWS_WITH(pypto::compiler::compile(kernel("bad", params, "",
                                                    op("add", in(0) + "," + in(7), val(2, "[8]"),
                                                       "bad.py:5", R"("vec_tile":[8])"))),
                    Contains("bad.py:5") && Contains("undefined value %7"));
  CHECK_THROWS_WITH(
      pypto::compiler::compile(
          kernel("bad", params, "", loop("i", "0", sym("n"), variant("true", ""), "bad.py:9"))),
      Contains("bad.py:9") && Contains("unknown symbol \"n\""));
  CHECK_THROWS_WITH(pypto::compiler::compile("{\"format\": 1"), Contains("malformed JSON"));
  CHECK_THROWS_WITH(pypto::compiler::compile(kernel("bad", param("x", 0, "[2,1,2,1,2,8]"), "", "")),
                    Contains("has rank 6") && Contains("ranks 1..5"));
  CHECK_THROWS_WITH(pypto::compiler::compile(kernel("bad", params, "",
                                                    op("exp", in(0), val(2, "[8]"), "bad.py:6",
                                                       R"("vec_tile":[1,1,1,1,1,8])"))),
                    Contains("bad.py:6") && Contains("1..5 positive ints"));
  CHECK_THROWS_WITH(pypto::compiler::compile(R"({"format":"pypto-kernel-ir","version":2})"),
                    Contains("version 1"));
}

TEST_CASE("the op table: one row per op, and the parser takes names and arity from it",
          "[compiler]") {
  using pypto::compiler::kOpTable;
  using pypto::compiler::kTileOpTable;
  using pypto::compiler::OpFamily;
  using pypto::compiler::OpForm;
  using pypto::compiler::TileExec;
  std::set<std::string> names;
  std::string supported;
  for (const auto& e : kOpTable) {
    CHECK(names.insert(e.name).second);
    REQUIRE(pypto::compiler::find_op(e.name) == &e);
    supported += (supported.empty() ? "" : ", ") + std::string(e.name);
    // Element-wise and reduction ops compute with one instruction of the matching class.
    if (e.family == OpFamily::kEltwise || e.family == OpFamily::kReduce) {
      const auto* t = pypto::compiler::find_tile_op(e.tile);
      REQUIRE(t != nullptr);
      if (e.form == OpForm::kBinary) CHECK(t->exec == TileExec::kBinary);
      if (e.form == OpForm::kSelect) CHECK(t->exec == TileExec::kWhere);
      if (e.family == OpFamily::kReduce) CHECK(t->exec == TileExec::kReduce);
    }
  }
  CHECK(pypto::compiler::find_op("topk") == nullptr);
  CHECK(pypto::compiler::find_op("ad") == nullptr);
  CHECK(pypto::compiler::find_op("add_") == nullptr);
  for (const auto& t : kTileOpTable) {
    CHECK(pypto::exec::to_string(t.op) == t.name);
    const bool moves = t.op == TileOpcode::kLoad || t.op == TileOpcode::kStore ||
                       t.op == TileOpcode::kScatterRows || t.op == TileOpcode::kGatherElems;
    CHECK((t.cost_op == nullptr) == moves);
    // The op it is priced as is one of the cost model's.
    if (t.cost_op != nullptr) CHECK(pypto::model::is_known_tile_op(t.cost_op));
    // A tile-scalar form only where an operand can be a scalar, and priced by a known row.
    if (t.scalar_cost_op != nullptr) {
      CHECK(t.exec == TileExec::kBinary);
      CHECK(pypto::model::is_known_tile_op(t.scalar_cost_op));
    }
  }
  const std::string params = param("x", 0, "[8]") + "," + param("y", 1, "[8]");
  const auto compile_one = [&](const std::string& name, const std::string& inputs,
                               const std::string& extra) {
    return pypto::compiler::compile(
        kernel("t", params, "", op(name, inputs, val(2, "[8]"), "t.py:1", extra)));
  };
  CHECK_THROWS_WITH(compile_one("topk", in(0), R"("vec_tile":[8])"),
                    Contains("(supported: " + supported + ")"));
  for (const auto& e : kOpTable) {
    INFO(e.name);
    // Without a vec_tile, exactly the ops that need one are rejected for it.
    std::string msg;
    try {
      compile_one(e.name, in(0), "");
    } catch (const ConfigError& err) {
      msg = err.what();
    }
    CHECK((msg.find(std::string(e.name) + " has no vec_tile") != std::string::npos) ==
          e.needs_vec_tile);
    // One input too many for a fixed arity.
    const int n = pypto::compiler::arity(e.form);
    if (n < 0) continue;
    std::string inputs = in(0);
    for (int i = 0; i < n; ++i) inputs += "," + in(1);
    const std::string tiles = R"("vec_tile":[8],"cube_tile":{"m":[8,8],"k":[8,8],"n":[8,8]})";
    CHECK_THROWS_WITH(compile_one(e.name, inputs, tiles),
                      Contains(std::string(e.name) + " takes " + std::to_string(n) +
                               " inputs, got " + std::to_string(n + 1)));
  }
}

TEST_CASE("run-time user errors name the statement", "[compiler]") {
  SECTION("a symbolic write offset outside the destination") {
    const std::string ir = kernel(
        "oob", param("x", 0, "[4,16]") + "," + param("y", 1, "[8,16]"), "",
        loop("i", "0", "3",
             variant("true", op("add", in(0) + "," + cst(1), val(2, "[4,16]"), "o.py:3",
                                R"("vec_tile":[4,16])") +
                                 "," +
                                 write(1, 2, "[" + ex("mul", sym("i"), "4") + ",0]", "o.py:4")),
             "o.py:2"));
    Host h;
    h.add("x", DType::kFp32, {4, 16});
    h.add("y", DType::kFp32, {8, 16});
    CHECK_THROWS_WITH(make(ir, h), Contains("o.py:4") && Contains("[8, 12) on axis 0"));
  }
  SECTION("a run-time division by zero") {
    const std::string ir =
        kernel("dz", param("x", 0, "[4]"), R"({"name":"n","sources":[]})",
               loop("i", "0", ex("floordiv", "4", sym("n")), variant("true", ""), "z.py:2"));
    Host h;
    h.add("x", DType::kFp32, {4});
    CHECK_THROWS_WITH(make(ir, h, {{"n", 0}}), Contains("z.py:2") && Contains("division by zero"));
    CHECK_NOTHROW(make(ir, h, {{"n", 2}}));
  }
  SECTION("options out of range") {
    Host h;
    h.add("a", DType::kFp32, {5, 7});
    h.add("b", DType::kFp32, {5, 7});
    h.add("out", DType::kFp32, {5, 7});
    LaunchOptions opt;
    opt.runtime.stitch_function_max_num = 0;
    CHECK_THROWS_WITH(make(addmul_ir(), h, {}, opt),
                      Contains("runtime.stitch_function_max_num: 0 is out of range"));
  }
}

TEST_CASE("floor semantics of run-time expressions", "[compiler]") {
  // loop i in [0, (-7 // 2) + 6) = [0, 2) and [0, (-7 % 2) + 1) = [0, 2).
  for (const std::string& stop :
       {ex("add", ex("floordiv", "-7", "2"), "6"), ex("add", ex("mod", "-7", "2"), "1")}) {
    const std::string body =
        op("add", in(0) + "," + cst(1), val(2, "[4]"), "f.py:3", R"("vec_tile":[4])") + "," +
        write(0, 2, "[0]", "f.py:3");
    Host h;
    h.add("x", DType::kFp32, {4});
    const Launch l = make(kernel("fl", param("x", 0, "[4]"), "",
                                 loop("i", "0", stop, variant("true", body), "f.py:2")),
                          h);
    CHECK(l.roots == 2);
  }
}

TEST_CASE("a boolean enters arithmetic only through the int node", "[compiler]") {
  // PyPTO's comparisons are C integers: loop i in [0, int(1 < 2) + int(3 >= 5) + 1) = [0, 2).
  const auto to_int = [](const std::string& b) { return R"({"op":"int","args":[)" + b + "]}"; };
  const std::string body =
      op("add", in(0) + "," + cst(1), val(2, "[4]"), "f.py:3", R"("vec_tile":[4])") + "," +
      write(0, 2, "[0]", "f.py:3");
  const auto run = [&](const std::string& stop) {
    Host h;
    h.add("x", DType::kFp32, {4});
    return make(kernel("bi", param("x", 0, "[4]"), "",
                       loop("i", "0", stop, variant("true", body), "f.py:2")),
                h);
  };
  const std::string stop =
      ex("add", ex("add", to_int(ex("lt", "1", "2")), to_int(ex("ge", "3", "5"))), "1");
  CHECK(run(stop).roots == 2);
  // Without the conversion a boolean argument of an integer op is malformed IR.
  CHECK_THROWS_WITH(run(ex("add", ex("lt", "1", "2"), "1")), Contains("needs integer arguments"));
  CHECK_THROWS_WITH(run(to_int("1")), Contains("needs boolean arguments"));
}

TEST_CASE("native trace dump replays with the same device tasks and edges", "[compiler]") {
  Host h = rows_host(6);
  LaunchOptions opt;
  opt.runtime.stitch_function_max_num = 4;
  const Launch l = make(rows_loop_ir(6), h, {}, opt);
  std::ostringstream text;
  pypto::launch::write_launch_trace(l, chip(), text);
  // Line by line: header, device-task records, one record per task.
  std::istringstream lines(text.str());
  std::string line;
  std::getline(lines, line);
  const auto header = nlohmann::json::parse(line);
  CHECK(header["format"] == "pypto-sim-trace");
  CHECK(header["tasks"] == l.graph.num_tasks());
  const pypto::testing::TempDir tmp;
  const std::string path = tmp.write("dump.ndjson", text.str());
  pypto::trace::LoadOptions lo;
  const auto loaded = pypto::trace::load_trace(path, lo, chip());
  const auto& g = loaded.graph;
  REQUIRE(g.num_tasks() == l.graph.num_tasks());
  REQUIRE(g.device_tasks.size() == l.graph.device_tasks.size());
  for (std::size_t t = 0; t < g.num_tasks(); ++t) {
    CHECK(g.device_task[t] == l.graph.device_task[t]);
    CHECK(g.root[t] == l.graph.root[t]);
    CHECK(g.compute_cycles[t] == l.graph.compute_cycles[t]);
    CHECK(g.kernel_names[g.kernel[t]] == l.graph.kernel_names[l.graph.kernel[t]]);
    CHECK(succs(g, static_cast<std::uint32_t>(t)) == succs(l.graph, static_cast<std::uint32_t>(t)));
    CHECK(g.mem_begin[t + 1] - g.mem_begin[t] == l.graph.mem_begin[t + 1] - l.graph.mem_begin[t]);
  }
}

TEST_CASE("an accumulator made before a loop lives across roots", "[compiler]") {
  // acc = full([4,16], 0); loop i in [0,3): acc[:] = acc + x[i*4:.., :]; out[:] = acc.
  const std::string i = sym("i");
  const std::string body =
      op("view", in(0), val(11, "[4,16]"), "a.py:4",
         R"("attrs":{"offsets":[)" + ex("mul", i, "4") + ",0]}") +
      "," + op("add", in(10) + "," + in(11), val(12, "[4,16]"), "a.py:5", R"("vec_tile":[4,16])") +
      "," + write(10, 12, "[0,0]", "a.py:5");
  const std::string ir =
      kernel("acc", param("x", 0, "[12,16]") + "," + param("out", 1, "[4,16]"), "",
             op("full", cst(0), val(10, "[4,16]"), "a.py:2", R"("vec_tile":[4,16])") + "," +
                 loop("i", "0", "3", variant("true", body), "a.py:3") + "," +
                 write(1, 10, "[0,0]", "a.py:6"));
  Host h;
  h.add("x", DType::kFp32, {12, 16}, iota(192));
  h.add("out", DType::kFp32, {4, 16});
  const Launch l = make(ir, h);
  // Roots: the fill, 3 iterations (one fused load-add-store task each), the final copy.
  REQUIRE(l.roots == 5);
  REQUIRE(l.graph.num_tasks() == 5);
  CHECK(kernel_of(l, 0) == "full_f32");
  CHECK(kernel_of(l, 1) == "add_f32");
  CHECK(kernel_of(l, 4) == "copy_f32");
  for (std::uint32_t t = 0; t < 4; ++t)
    CHECK(succs(l.graph, t) == std::vector<std::uint32_t>{t + 1});
  CHECK(l.workspace_bytes == 512);  // the accumulator's launch-lifetime region
  CHECK(l.minimum_workspace_bytes == 1024);
  execute(l, h);
  CHECK(h.f32(1, 5) == Approx(5 + 69 + 133));
}

TEST_CASE("broadcast loads, where with scalars, cast, expression scalars", "[compiler]") {
  // loop i in [0,2): out_i = cast(where(a > b_row, a, i + 10)) with b_row [1, 8] broadcast.
  const std::string i = sym("i");
  const std::string body =
      op("gt", in(0) + "," + in(1), val(10, "[4,8]", "DT_BOOL"), "b.py:3", R"("vec_tile":[4,8])") +
      "," +
      op("where",
         in(10) + "," + in(0) + "," + R"({"expr":)" + ex("add", i, "10") + R"(,"dtype":"DT_FP32"})",
         val(11, "[4,8]"), "b.py:3", R"("vec_tile":[4,8])") +
      "," +
      op("cast", in(11), val(12, "[4,8]", "DT_INT32"), "b.py:4",
         R"("attrs":{"mode":"CAST_FLOOR","satmode":"OFF"},"vec_tile":[4,8])") +
      "," + write(2, 12, "[" + ex("mul", i, "4") + ",0]", "b.py:4");
  const std::string ir = kernel("bw",
                                param("a", 0, "[4,8]") + "," + param("b", 1, "[1,8]") + "," +
                                    param("out", 2, "[8,8]", "DT_INT32"),
                                "", loop("i", "0", "2", variant("true", body), "b.py:2"));
  Host h;
  h.add("a", DType::kFp32, {4, 8}, iota(32, 0.5, 0.25));
  h.add("b", DType::kFp32, {1, 8}, iota(8, 1.0, 4.0));
  h.add("out", DType::kInt32, {8, 8});
  const Launch l = make(ir, h);
  REQUIRE(l.graph.num_tasks() == 2);
  CHECK(kernel_of(l, 0) == "gt_where_cast_i32");
  const auto ld = instrs_of(l.programs[0], TileOpcode::kLoad);
  REQUIRE(ld.size() == 2);
  CHECK(ld[1]->region.stride[0] == 0);  // b's single row read for every row of the tile
  const auto wh = instrs_of(l.programs[1], TileOpcode::kWhere);
  REQUIRE(wh.size() == 1);
  CHECK(wh[0]->scalar_operand == 4);
  CHECK(wh[0]->scalar[2] == 11);  // i + 10 in the second iteration
  execute(l, h);
  std::int32_t v[64];
  std::memcpy(v, h.data[2].data(), sizeof v);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 8; ++c) {
      const double a = 0.25 + 0.5 * (r * 8 + c), b = 4.0 + c;
      CHECK(v[r * 8 + c] == (a > b ? static_cast<int>(std::floor(a)) : 10));
      CHECK(v[32 + r * 8 + c] == (a > b ? static_cast<int>(std::floor(a)) : 11));
    }
  }
}

TEST_CASE("concat copies regions: reshape aliases contiguous data and copies the rest",
          "[compiler]") {
  SECTION("concat") {
    const std::string ir = kernel(
        "cat",
        param("a", 0, "[2,4]") + "," + param("b", 1, "[3,4]") + "," + param("out", 2, "[5,4]"), "",
        op("concat", in(0) + "," + in(1), val(3, "[5,4]"), "c.py:2",
           R"("attrs":{"dim":0},"vec_tile":[2,4])") +
            "," + write(2, 3, "[0,0]", "c.py:2"));
    Host h;
    h.add("a", DType::kFp32, {2, 4}, iota(8));
    h.add("b", DType::kFp32, {3, 4}, iota(12, 1.0, 100.0));
    h.add("out", DType::kFp32, {5, 4});
    const Launch l = make(ir, h, {}, tile_tasks());
    CHECK(l.graph.num_tasks() == 3);  // a: 1 tile; b: rows 0-1, row 2
    execute(l, h);
    CHECK(h.f32(2, 7) == Approx(7));
    CHECK(h.f32(2, 8) == Approx(100));
    CHECK(h.f32(2, 19) == Approx(111));
  }
  SECTION("reshape of a contiguous tensor is an alias") {
    const std::string ir =
        kernel("rs", param("x", 0, "[4,8]") + "," + param("out", 1, "[2,16]"), "",
               op("reshape", in(0), val(2, "[2,16]"), "r.py:2", R"("attrs":{"inplace":false})") +
                   "," + op("neg", in(2), val(3, "[2,16]"), "r.py:3", R"("vec_tile":[2,16])") +
                   "," + write(1, 3, "[0,0]", "r.py:3"));
    Host h;
    h.add("x", DType::kFp32, {4, 8}, iota(32));
    h.add("out", DType::kFp32, {2, 16});
    const Launch l = make(ir, h, {}, tile_tasks());
    REQUIRE(l.graph.num_tasks() == 1);
    CHECK(instrs_of(l.programs[0], TileOpcode::kLoad)[0]->region.buffer == 0);
    execute(l, h);
    CHECK(h.f32(1, 17) == Approx(-17));
  }
  SECTION("reshape of a strided window copies it first") {
    // x[0:2, 0:4] of an [4, 8] tensor is not contiguous: flatten it through a copy.
    const std::string ir =
        kernel("rs2", param("x", 0, "[4,8]") + "," + param("out", 1, "[8]"), "",
               op("view", in(0), val(2, "[2,4]"), "r.py:2", R"("attrs":{"offsets":[1,2]})") + "," +
                   op("reshape", in(2), val(3, "[8]"), "r.py:3", R"("attrs":{"inplace":false})") +
                   "," + op("neg", in(3), val(4, "[8]"), "r.py:4", R"("vec_tile":[8])") + "," +
                   write(1, 4, "[0]", "r.py:4"));
    Host h;
    h.add("x", DType::kFp32, {4, 8}, iota(32));
    h.add("out", DType::kFp32, {8});
    const Launch l = make(ir, h, {}, tile_tasks());
    REQUIRE(l.graph.num_tasks() == 2);
    CHECK(kernel_of(l, 0) == "copy_f32");
    CHECK(succs(l.graph, 0) == std::vector<std::uint32_t>{1});
    execute(l, h);
    const double want[8] = {10, 11, 12, 13, 18, 19, 20, 21};
    for (int k = 0; k < 8; ++k) CHECK(h.f32(1, static_cast<std::size_t>(k)) == Approx(-want[k]));
  }
}

TEST_CASE("ops on whole dynamic tensors are tiled with the bound sizes", "[compiler]") {
  const std::string ir =
      R"({"format":"pypto-kernel-ir","version":1,"name":"dyn","params":[)"
      R"({"name":"x","value":0,"shape":[{"sym":"n"},64],"dtype":"DT_FP32"},)"
      R"({"name":"y","value":1,"shape":[{"sym":"n"},64],"dtype":"DT_FP32"}],)"
      R"("symbols":[{"name":"n","sources":[{"param":"x","axis":0},{"param":"y","axis":0}]}],)"
      R"("variants":[)" +
      variant("true",
              op("exp", in(0), val(2, "[" + sym("n") + ",64]"), "y.py:2", R"("vec_tile":[32,64])") +
                  "," + write(1, 2, "[0,0]", "y.py:2")) +
      "]}";
  const auto k = pypto::compiler::compile(ir);
  for (const std::int64_t n : {70, 32}) {
    Host h;
    h.add("x", DType::kFp32, {n, 64}, iota(static_cast<std::size_t>(n * 64), 0.01));
    h.add("y", DType::kFp32, {n, 64});
    const Launch l =
        pypto::compiler::instantiate(*k, h.tensors, {{"n", n}}, LaunchOptions{}, chip());
    CHECK(l.graph.num_tasks() == static_cast<std::size_t>((n + 31) / 32));
    execute(l, h);
    CHECK(h.f32(1, static_cast<std::size_t>(n * 64 - 1)) ==
          Approx(std::exp(0.01 * (n * 64 - 1))).epsilon(1e-6));
  }
}

TEST_CASE("parallel iterations get their own workspace copies", "[compiler]") {
  std::string ir = ws_ir(4);
  const std::string from = R"("unroll_list":[1],)";
  ir.replace(ir.find(from), from.size(), R"("unroll_list":[1],"parallel":true,)");
  Host h;
  h.add("x", DType::kFp32, {16, 64}, iota(1024, 0.001));
  h.add("s", DType::kFp32, {16});
  LaunchOptions opt = tile_tasks();
  opt.runtime.device_sched_parallelism = 2;
  const Launch l = make(ir, h, {}, opt);
  REQUIRE(l.graph.device_tasks.size() == 4);
  CHECK(l.workspace_bytes == 2 * 1024);
  CHECK(l.minimum_workspace_bytes == 2 * 1024);  // total(1) scales with the parallelism
  // The exp task of each iteration stores t: iterations 0 and 2 share copy 0, 1 and 3 copy 1.
  std::vector<std::int64_t> where;
  for (std::uint32_t t = 0; t < l.graph.num_tasks(); t += 2) {
    const auto st = instrs_of(l.programs[t], TileOpcode::kStore);
    REQUIRE(st.size() == 1);
    CHECK(st[0]->region.buffer == 2);
    where.push_back(st[0]->region.offset_elems);
  }
  CHECK(where == std::vector<std::int64_t>{0, 256, 0, 256});
  execute(l, h);
  double ref = 0;
  for (int c = 0; c < 64; ++c) ref += std::exp(0.001 * (13 * 64 + c));
  CHECK(h.f32(1, 13) == Approx(ref).epsilon(1e-5));
}

TEST_CASE("a load of a tensor the kernel writes is rejected", "[compiler]") {
  const std::string body =
      op("add", in(0) + "," + cst(1), val(2, "[4]", "DT_INT32"), "w.py:3", R"("vec_tile":[4])") +
      "," + write(1, 2, "[0]", "w.py:3");
  const std::string ir = kernel(
      "lw", param("x", 0, "[4]", "DT_INT32") + "," + param("n", 1, "[4]", "DT_INT32"), "",
      loop("i", "0", R"({"op":"load","param":"n","args":[0]})", variant("true", body), "w.py:2"));
  CHECK_THROWS_WITH(pypto::compiler::compile(ir),
                    Contains("w.py:2") && Contains("reads tensor \"n\""));
}

// ---- timing (hidden: run with `test_compile "[.perf]"`) ----

TEST_CASE("instantiate time: 4096x4096 fp32 add, 64x64 tiles", "[.perf]") {
  const std::string ir = kernel(
      "big",
      param("a", 0, "[4096,4096]") + "," + param("b", 1, "[4096,4096]") + "," +
          param("c", 2, "[4096,4096]"),
      "",
      op("add", in(0) + "," + in(1), val(3, "[4096,4096]"), "p.py:2", R"("vec_tile":[64,64])") +
          "," + write(2, 3, "[0,0]", "p.py:2"));
  Host h;
  h.add("a", DType::kFp32, {4096, 4096});
  h.add("b", DType::kFp32, {4096, 4096});
  h.add("c", DType::kFp32, {4096, 4096});
  const auto k = pypto::compiler::compile(ir);
  const auto t0 = std::chrono::steady_clock::now();
  const Launch l = pypto::compiler::instantiate(*k, h.tensors, {}, LaunchOptions{}, chip());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  WARN("4096 tasks, " << l.graph.mem.size() << " memory ranges: instantiate " << ms << " ms");
  CHECK(l.graph.num_tasks() == 4096);
}

TEST_CASE("instantiate time: 1024-iteration loop", "[.perf]") {
  Host h = rows_host(1024);
  const auto k = pypto::compiler::compile(rows_loop_ir(1024));
  const auto t0 = std::chrono::steady_clock::now();
  const Launch l = pypto::compiler::instantiate(*k, h.tensors, {}, LaunchOptions{}, chip());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  WARN("1024 roots: instantiate " << ms << " ms");
  CHECK(l.roots == 1024);
}

TEST_CASE("instantiate time: 60,000 tasks of 64-row tiles", "[.perf]") {
  // a[:] = exp(a) on fp16 [16000, 3840] with 64x16 tiles: 250 x 240 = 60,000 tasks, each
  // reading and writing 64 rows of 32 bytes.
  const std::string ir = kernel(
      "many", param("a", 0, "[16000,3840]", "DT_FP16"), "",
      op("exp", in(0), val(1, "[16000,3840]", "DT_FP16"), "p.py:2", R"("vec_tile":[64,16])") + "," +
          write(0, 1, "[0,0]", "p.py:2"));
  Host h;
  h.data.emplace_back(std::size_t{16000} * 3840 * 2, 0);
  LaunchTensor t;
  t.name = "a";
  t.dtype = DType::kFp16;
  t.shape = {16000, 3840};
  t.data = h.data.back().data();
  t.size_bytes = h.data.back().size();
  h.tensors.push_back(t);
  const auto k = pypto::compiler::compile(ir);
  const auto t0 = std::chrono::steady_clock::now();
  const Launch l = pypto::compiler::instantiate(*k, h.tensors, {}, LaunchOptions{}, chip());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  WARN(l.graph.num_tasks() << " tasks, " << l.graph.mem.size() << " memory ranges: instantiate "
                           << ms << " ms");
  CHECK(l.graph.num_tasks() == 60000);
  CHECK(l.graph.num_edges() == 0);
}

// ---- numbers follow the simulated order -------------------------------------------------
namespace {

// Runs the launch on the SystemC model, executing each task's program when the model
// completes it (the loop of launch::run_sim, on a launch whose graph the test may alter).
void simulate_and_execute(const Launch& l, Host& h) {
  pypto::launch::HostTileExecutor ex(l, h.tensors);
  pypto::launch::simulate(l, chip(), pypto::sched::RuntimeOptions{}, ex);
}

}  // namespace

TEST_CASE("numbers come from the simulated order: a lost dependency gives wrong numbers",
          "[compiler][sim]") {
  // c = a @ b (one long AIC task: K = 512 in 8 steps) then out = c + 1 (one short AIV task
  // reading c from workspace). With the RAW edge the result is right; without it the
  // model runs both at once, the short consumer completes first and reads a workspace that
  // holds no product yet.
  const std::string ir = kernel(
      "mm_then_add",
      param("a", 0, "[64,512]") + "," + param("b", 1, "[512,64]") + "," +
          param("out", 2, "[64,64]"),
      "",
      op("matmul", in(0) + "," + in(1), val(3, "[64,64]"), "k.py:3",
         R"("attrs":{"a_trans":false,"b_trans":false,"c_matrix_nz":false},)"
         R"("cube_tile":{"m":[64,64],"k":[64,64,64],"n":[64,64],"enable_split_k":false})") +
          "," +
          op("add", in(3) + "," + cst(1.0), val(4, "[64,64]"), "k.py:4", R"("vec_tile":[64,64])") +
          "," + write(2, 4, "[0,0]", "k.py:4"));
  std::vector<double> a(64 * 512), b(512 * 64);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 3);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = 1.0 + static_cast<double>(i % 2);
  auto fresh = [&] {
    Host h;
    h.add("a", DType::kFp32, {64, 512}, a);
    h.add("b", DType::kFp32, {512, 64}, b);
    h.add("out", DType::kFp32, {64, 64});
    return h;
  };
  double ref = 1;
  for (int k = 0; k < 512; ++k) ref += a[k] * b[k * 64];  // out[0][0]

  Host good = fresh();
  const pypto::launch::SimRun run = pypto::launch::run_sim(
      *pypto::compiler::compile(ir), good.tensors, {}, LaunchOptions{}, chip(), "");
  const Launch& l = run.launch;
  REQUIRE(l.graph.num_tasks() == 2);
  REQUIRE(l.graph.succ_last(0) - l.graph.succ_first(0) == 1);  // matmul -> add
  CHECK(good.f32(2, 0) == Approx(ref));

  // The same tasks with the dependency removed.
  Launch broken = l;
  broken.graph.succ.clear();
  std::fill(broken.graph.succ_begin.begin(), broken.graph.succ_begin.end(), 0u);
  std::fill(broken.graph.pred_count.begin(), broken.graph.pred_count.end(), 0u);
  Host bad = fresh();
  simulate_and_execute(broken, bad);
  CHECK(bad.f32(2, 0) == Approx(1.0));  // c + 1 with c still zero
  CHECK(bad.f32(2, 0) != Approx(ref));
}
