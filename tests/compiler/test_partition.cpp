// SPDX-License-Identifier: Apache-2.0
// The partition (frontend/compiler/src/partition.cpp, partition_breadth.cpp): leaf-task counts
// worked out by hand from PyPTO's rules (docs/partition.md), and the numbers unchanged by merging.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "compiler_test.h"
#include "pypto/common/errors.h"

using namespace compiler_test;
using pypto::ConfigError;
using pypto::compiler::MergeEntry;
using pypto::compiler::MergeSetting;
using pypto::compiler::parse_merge_setting;

namespace {

// c = b * 2 on [1, 8] (one tile), then y = x + c on [rows, 8] with 4x8 tiles: one producer
// task and rows/4 consumer tasks that all read it.
std::string fan_ir(int rows) {
  const std::string shape = "[" + std::to_string(rows) + ",8]";
  return kernel(
      "fan", param("x", 0, shape) + "," + param("b", 1, "[1,8]") + "," + param("y", 2, shape), "",
      op("mul", in(1) + "," + cst(2), val(3, "[1,8]"), "k.py:2", R"("vec_tile":[4,8])") + "," +
          op("add", in(0) + "," + in(3), val(4, shape), "k.py:3", R"("vec_tile":[4,8])") + "," +
          write(2, 4, "[0,0]", "k.py:3"));
}

// y = a @ b with a [128, 32], b [32, 192] fp32 and 16x16 output tiles: 8 x 12 = 96 AIC tiles.
std::string mm_ir() {
  return kernel(
      "mm",
      param("a", 0, "[128,32]") + "," + param("b", 1, "[32,192]") + "," +
          param("y", 2, "[128,192]"),
      "",
      op("matmul", in(0) + "," + in(1), val(3, "[128,192]"), "k.py:3",
         R"("cube_tile":{"m":[16,16],"k":[32,32,32],"n":[16,16],"enable_split_k":false})") +
          "," + write(2, 3, "[0,0]", "k.py:3"));
}

LaunchOptions with_l1(const std::vector<MergeEntry>& e) {
  LaunchOptions o;
  o.partition.cube_l1_reuse =
      parse_merge_setting("cube_l1_reuse_setting", e, MergeSetting::Mode::kAuto);
  return o;
}

std::uint64_t tiles_of(const Launch& l, std::uint32_t t) { return l.graph.tiles[t]; }

// (a @ b)[m, n] in doubles for fp32 a = iota(a_step) of [*, 32] and b = iota(b_step) of [32, cols].
double iota_mm(std::size_t m, std::size_t n, std::size_t cols, double a_step, double b_step) {
  double acc = 0;
  for (std::size_t k = 0; k < 32; ++k) {
    acc += static_cast<double>(static_cast<float>(a_step * static_cast<double>(m * 32 + k))) *
           static_cast<double>(static_cast<float>(b_step * static_cast<double>(k * cols + n)));
  }
  return acc;
}

}  // namespace

TEST_CASE("partition: a per-tile chain across units grows into one leaf per tile", "[partition]") {
  // t = a + 1 (8x8, tiles 4x8); out = t * 2; s = sum(t, dim 1). The add_mul group tasks and
  // the sum tasks match one to one (row tiles 0-3, 4-7), so lock-step growth makes each pair
  // one AIV leaf: 2 leaves, and t never leaves the chip.
  const std::string ir = keep_ir();
  Host h;
  h.add("a", DType::kFp32, {8, 8}, iota(64));
  h.add("out", DType::kFp32, {8, 8});
  h.add("s", DType::kFp32, {8});
  const Launch tiles = make(ir, h, {}, tile_tasks());
  REQUIRE(tiles.graph.num_tasks() == 4);
  const Launch l = make(ir, h);
  REQUIRE(l.graph.num_tasks() == 2);
  CHECK(l.graph.num_edges() == 0);
  CHECK(l.graph.tiles[0] == 2);
  // t's store and reload are gone from the traffic: each leaf reads a's rows and writes out's
  // rows and s's elements only.
  std::uint64_t read = 0, written = 0;
  for (std::uint32_t i = l.graph.mem_begin[0]; i < l.graph.mem_begin[1]; ++i) {
    (l.graph.mem[i].is_write ? written : read) += l.graph.mem[i].bytes;
  }
  CHECK(read == 4 * 8 * 4);
  CHECK(written == 4 * 8 * 4 + 4 * 4);
  execute(l, h);
  for (std::size_t r = 0; r < 8; ++r) {
    double sum = 0;
    for (std::size_t c = 0; c < 8; ++c) {
      const double t = static_cast<double>(r * 8 + c) + 1;
      CHECK(h.f32(1, r * 8 + c) == Approx(t * 2));
      sum += t;
    }
    CHECK(h.f32(2, r) == Approx(sum));
  }
}

TEST_CASE("partition: vector merge keeps at least 48 leaves per class (auto factor)",
          "[partition]") {
  // 400 rows: 100 consumer tiles, all reading the one producer task. Auto factor for n = 100:
  // ceil(100/48) = 3 leaves 34 < 48, so k = 2 -> 50 leaves; plus the producer: 51. With 192
  // rows (n = 48 <= 48) nothing merges: 49.
  Host h;
  h.add("x", DType::kFp32, {400, 8}, iota(3200));
  h.add("b", DType::kFp32, {1, 8}, iota(8, 1.0, 1.0));
  h.add("y", DType::kFp32, {400, 8});
  const Launch l = make(fan_ir(400), h);
  CHECK(make(fan_ir(400), h, {}, tile_tasks()).graph.num_tasks() == 101);
  REQUIRE(l.graph.num_tasks() == 51);
  CHECK(l.graph.tiles[1] == 2);
  execute(l, h);
  for (std::size_t i = 0; i < 3200; ++i) {
    CHECK(h.f32(2, i) == Approx(static_cast<double>(i) + 2.0 * static_cast<double>(i % 8 + 1)));
  }
  Host h2;
  h2.add("x", DType::kFp32, {192, 8});
  h2.add("b", DType::kFp32, {1, 8});
  h2.add("y", DType::kFp32, {192, 8});
  CHECK(make(fan_ir(192), h2).graph.num_tasks() == 49);
  // vec_nbuffer_setting {-1: 4} (int keys: manual, grouped): runs of 4 -> 25 + 1 leaves;
  // {-1: 1} is off: 101.
  LaunchOptions four;
  four.partition.vec_nbuffer =
      parse_merge_setting("vec_nbuffer_setting", {{"-1", 4, ""}}, MergeSetting::Mode::kAuto);
  CHECK(make(fan_ir(400), h, {}, four).graph.num_tasks() == 26);
  LaunchOptions off;
  off.partition.vec_nbuffer =
      parse_merge_setting("vec_nbuffer_setting", {{"-1", 1, ""}}, MergeSetting::Mode::kAuto);
  CHECK(make(fan_ir(400), h, {}, off).graph.num_tasks() == 101);
}

TEST_CASE("partition: a class whose members read only kernel inputs is never vector-merged",
          "[partition]") {
  // y = x * 3 over 100 tiles: no member has a producer leaf, so each is its own sub-list.
  const std::string ir =
      kernel("solo", param("x", 0, "[400,8]") + "," + param("y", 1, "[400,8]"), "",
             op("mul", in(0) + "," + cst(3), val(2, "[400,8]"), "k.py:2", R"("vec_tile":[4,8])") +
                 "," + write(1, 2, "[0,0]", "k.py:2"));
  Host h;
  h.add("x", DType::kFp32, {400, 8});
  h.add("y", DType::kFp32, {400, 8});
  CHECK(make(ir, h).graph.num_tasks() == 100);
}

TEST_CASE("partition: cube L1 reuse merges tiles sharing a panel, about 2 per AIC core",
          "[partition]") {
  // 96 tiles in one class on 24 AIC: maxMerge = 96 / 48 = 2, no remainder. Tiles are visited
  // N outer, M inner; (m, n) and (m+1, n) share B's column panel n -> 4 leaves of 2 per
  // column, 48 leaves. Manual {-1: 4}: 2 leaves of 4 per column, 24. {-1: 1}: no merge, 96.
  Host h;
  h.add("a", DType::kFp32, {128, 32}, iota(128 * 32, 0.01));
  h.add("b", DType::kFp32, {32, 192}, iota(32 * 192, 0.02));
  h.add("y", DType::kFp32, {128, 192});
  CHECK(make(mm_ir(), h, {}, tile_tasks()).graph.num_tasks() == 96);
  const Launch l = make(mm_ir(), h);
  REQUIRE(l.graph.num_tasks() == 48);
  CHECK(tiles_of(l, 0) == 2);
  // The shared 32x16 fp32 panel (2 KiB) fits L1 and is read once: A's two 16x32 row panels
  // (2 KiB each) and one B panel.
  std::uint64_t read = 0;
  for (std::uint32_t i = l.graph.mem_begin[0]; i < l.graph.mem_begin[1]; ++i) {
    if (!l.graph.mem[i].is_write) read += l.graph.mem[i].bytes;
  }
  CHECK(read == 3 * 2048);
  CHECK(make(mm_ir(), h, {}, with_l1({{"-1", 4, ""}})).graph.num_tasks() == 24);
  CHECK(make(mm_ir(), h, {}, with_l1({{"-1", 1, ""}})).graph.num_tasks() == 96);
  execute(l, h);
  for (std::size_t m = 0; m < 128; m += 37) {
    for (std::size_t n = 0; n < 192; n += 29) {
      CHECK(h.f32(2, m * 192 + n) == Approx(iota_mm(m, n, 192, 0.01, 0.02)).epsilon(1e-5));
    }
  }
}

TEST_CASE("partition: cube N-buffer, off by default, merges consecutive runs when asked",
          "[partition]") {
  // After L1 reuse (48 leaves of 2 tiles, one class), {-1: 3}: runs of 3 -> 16 leaves.
  Host h;
  h.add("a", DType::kFp32, {128, 32});
  h.add("b", DType::kFp32, {32, 192});
  h.add("y", DType::kFp32, {128, 192});
  LaunchOptions o;
  o.partition.cube_nbuffer =
      parse_merge_setting("cube_nbuffer_setting", {{"-1", 3, ""}}, MergeSetting::Mode::kAuto);
  CHECK(make(mm_ir(), h, {}, o).graph.num_tasks() == 16);
  // {} is automatic: a class of 48 is cut into min(48, 2 x 24) = 48 runs: no change.
  o.partition.cube_nbuffer =
      parse_merge_setting("cube_nbuffer_setting", {}, MergeSetting::Mode::kAuto);
  CHECK(make(mm_ir(), h, {}, o).graph.num_tasks() == 48);
}

TEST_CASE("partition: each merge numbers its classes (hashOrder) as PyPTO's pass does",
          "[partition]") {
  // Two matmuls (p = a @ b, [128, 32] x [32, 192], 96 16x16 tiles; q = e @ d in fp16, [128,
  // 32] x [32, 32], 8 16x32 tiles) and fan_ir's vector ops on other tensors (t = w * 2, 1
  // leaf; y = x + t, 100 tiles), in either order. Classes are numbered in leaf order, each
  // merge its own way. The cube merges count cube classes only (l1_copy_reuse.cpp): with the
  // vector ops first, {1: 4} still names q's class (8 tiles: too few to merge automatically,
  // 2 leaves by 4), not y's. The vector N-buffer counts every class, all cube ones sharing one
  // number (n_buffer_merge.cpp): with the matmuls first, cube 0, t 1, y 2, so {2: 4} cuts y's
  // 100 tiles into runs of 4 (25 leaves).
  const std::string mm =
      op("matmul", in(0) + "," + in(1), val(8, "[128,192]"), "k.py:2",
         R"("cube_tile":{"m":[16,16],"k":[32,32,32],"n":[16,16],"enable_split_k":false})") +
      "," + write(3, 8, "[0,0]", "k.py:2") + "," +
      op("matmul", in(12) + "," + in(2), val(9, "[128,32]", "DT_FP16"), "k.py:3",
         R"("cube_tile":{"m":[16,16],"k":[32,32,32],"n":[32,32],"enable_split_k":false})") +
      "," + write(4, 9, "[0,0]", "k.py:3");
  const std::string vec =
      op("mul", in(6) + "," + cst(2), val(10, "[1,8]"), "k.py:4", R"("vec_tile":[4,8])") + "," +
      op("add", in(5) + "," + in(10), val(11, "[400,8]"), "k.py:5", R"("vec_tile":[4,8])") + "," +
      write(7, 11, "[0,0]", "k.py:5");
  const auto ir = [&](bool cube_first) {
    return kernel("orders",
                  param("a", 0, "[128,32]") + "," + param("b", 1, "[32,192]") + "," +
                      param("d", 2, "[32,32]", "DT_FP16") + "," + param("p", 3, "[128,192]") + "," +
                      param("q", 4, "[128,32]", "DT_FP16") + "," + param("x", 5, "[400,8]") + "," +
                      param("w", 6, "[1,8]") + "," + param("y", 7, "[400,8]") + "," +
                      param("e", 12, "[128,32]", "DT_FP16"),
                  "", cube_first ? mm + "," + vec : vec + "," + mm);
  };
  Host h;
  h.add("a", DType::kFp32, {128, 32});
  h.add("b", DType::kFp32, {32, 192});
  h.add("d", DType::kFp16, {32, 32});
  h.add("p", DType::kFp32, {128, 192});
  h.add("q", DType::kFp16, {128, 32});
  h.add("x", DType::kFp32, {400, 8});
  h.add("w", DType::kFp32, {1, 8});
  h.add("y", DType::kFp32, {400, 8});
  h.add("e", DType::kFp16, {128, 32});
  // p's class merges by 2 ({0: 2}: 48 leaves), q's automatically (8 < 48: none).
  LaunchOptions o;
  o.partition.vec_nbuffer =
      parse_merge_setting("vec_nbuffer_setting", {{"-1", 1, ""}}, MergeSetting::Mode::kAuto);
  o.partition.cube_l1_reuse =
      parse_merge_setting("cube_l1_reuse_setting", {{"0", 2, ""}}, MergeSetting::Mode::kAuto);
  CHECK(make(ir(false), h, {}, o).graph.num_tasks() == 48 + 8 + 1 + 100);
  o.partition.cube_l1_reuse = parse_merge_setting(
      "cube_l1_reuse_setting", {{"0", 2, ""}, {"1", 4, ""}}, MergeSetting::Mode::kAuto);
  CHECK(make(ir(false), h, {}, o).graph.num_tasks() == 48 + 2 + 1 + 100);
  LaunchOptions v;
  v.partition.vec_nbuffer =
      parse_merge_setting("vec_nbuffer_setting", {{"2", 4, ""}}, MergeSetting::Mode::kAuto);
  v.partition.cube_l1_reuse =
      parse_merge_setting("cube_l1_reuse_setting", {{"0", 2, ""}}, MergeSetting::Mode::kAuto);
  CHECK(make(ir(true), h, {}, v).graph.num_tasks() == 48 + 8 + 1 + 25);
}

TEST_CASE("partition: automatic L1 reuse counts the first cube class with the other subgraphs",
          "[partition]") {
  // p = a @ b, [128, 32] x [32, 80], 16x16 tiles: 8 x 5 = 40 tiles, under 2 x 24 = 48, so
  // alone they do not merge. With t = w * 2 (1 leaf) and y = x + t over [240, 8] in 4x8 tiles
  // (60 leaves; a class of 60 keeps 60 under the vector merge's 48) beside them, PyPTO's scan
  // counts the class as 40 + 61 = 101 (l1_copy_reuse.cpp, GetL1ReuseOpOrder): maxMerge 2, so
  // each tile pairs with the next on B's column panel: 20 cube leaves. PyPTO's budget of
  // 101 mod 48 for a third member is never spent (see l1_reuse): no leaf holds 3 tiles.
  const std::string mm =
      op("matmul", in(0) + "," + in(1), val(6, "[128,80]"), "k.py:2",
         R"("cube_tile":{"m":[16,16],"k":[32,32,32],"n":[16,16],"enable_split_k":false})") +
      "," + write(2, 6, "[0,0]", "k.py:2");
  const std::string vec =
      op("mul", in(4) + "," + cst(2), val(7, "[1,8]"), "k.py:3", R"("vec_tile":[4,8])") + "," +
      op("add", in(3) + "," + in(7), val(8, "[240,8]"), "k.py:4", R"("vec_tile":[4,8])") + "," +
      write(5, 8, "[0,0]", "k.py:4");
  const std::string params = param("a", 0, "[128,32]") + "," + param("b", 1, "[32,80]") + "," +
                             param("p", 2, "[128,80]") + "," + param("x", 3, "[240,8]") + "," +
                             param("w", 4, "[1,8]") + "," + param("y", 5, "[240,8]");
  Host h;
  h.add("a", DType::kFp32, {128, 32});
  h.add("b", DType::kFp32, {32, 80});
  h.add("p", DType::kFp32, {128, 80});
  h.add("x", DType::kFp32, {240, 8});
  h.add("w", DType::kFp32, {1, 8});
  h.add("y", DType::kFp32, {240, 8});
  CHECK(make(kernel("alone", params, "", mm), h).graph.num_tasks() == 40);
  const Launch l = make(kernel("mixed", params, "", mm + "," + vec), h);
  CHECK(l.graph.num_tasks() == 20 + 61);
  std::uint32_t pairs = 0;
  for (std::uint32_t t = 0; t < l.graph.num_tasks(); ++t) pairs += l.graph.tiles[t] == 2;
  CHECK(pairs == 20);
}

TEST_CASE("partition: the L1 reuse scan shares its block table across cube classes",
          "[partition]") {
  // p = a @ b ([128, 32] x [32, 192], 96 16x16 tiles, cube class 0) and q = a @ c ([32, 64],
  // 32 tiles; class 1, as its result feeds r = q + 1: 8 vector leaves), tiles visited N outer,
  // M inner. p merges automatically by (96 + 8) / 48 = 2: pairs down each column, 48 leaves;
  // each A row panel then names the pair of p's last column holding it (the leaf that
  // registered it last). With {1: 4}, q's first column joins those 4 pairs through A (4
  // leaves of 2 p + 2 q tiles); each later column starts 2 leaves of 4 on its own C panel, the
  // A panels' leaves being full: 48 + 6 cube leaves, 10 of them with 4 tiles (PyPTO's
  // l1_copy_reuse.cpp, one l1InputList for every subgraph). Within q's class alone it would
  // be 48 + 8, 8 of them with 4 tiles.
  const std::string ir = kernel(
      "shared",
      param("a", 0, "[128,32]") + "," + param("b", 1, "[32,192]") + "," + param("c", 2, "[32,64]") +
          "," + param("p", 3, "[128,192]") + "," + param("r", 4, "[128,64]"),
      "",
      op("matmul", in(0) + "," + in(1), val(5, "[128,192]"), "k.py:2",
         R"("cube_tile":{"m":[16,16],"k":[32,32,32],"n":[16,16],"enable_split_k":false})") +
          "," + write(3, 5, "[0,0]", "k.py:2") + "," +
          op("matmul", in(0) + "," + in(2), val(6, "[128,64]"), "k.py:3",
             R"("cube_tile":{"m":[16,16],"k":[32,32,32],"n":[16,16],"enable_split_k":false})") +
          "," +
          op("add", in(6) + "," + cst(1), val(7, "[128,64]"), "k.py:4", R"("vec_tile":[16,64])") +
          "," + write(4, 7, "[0,0]", "k.py:4"));
  Host h;
  h.add("a", DType::kFp32, {128, 32}, iota(128 * 32, 0.01));
  h.add("b", DType::kFp32, {32, 192}, iota(32 * 192, 0.02));
  h.add("c", DType::kFp32, {32, 64}, iota(32 * 64, 0.03));
  h.add("p", DType::kFp32, {128, 192});
  h.add("r", DType::kFp32, {128, 64});
  CHECK(make(ir, h).graph.num_tasks() == 48 + 32 + 8);
  const Launch l = make(ir, h, {}, with_l1({{"1", 4, ""}}));
  REQUIRE(l.graph.num_tasks() == 48 + 6 + 8);
  std::uint32_t fours = 0;
  for (std::uint32_t t = 0; t < l.graph.num_tasks(); ++t) fours += tiles_of(l, t) == 4;
  CHECK(fours == 4 + 6);
  execute(l, h);
  for (std::size_t m = 0; m < 128; m += 31) {
    for (std::size_t n = 0; n < 64; n += 21) {
      CHECK(h.f32(4, m * 64 + n) == Approx(iota_mm(m, n, 64, 0.01, 0.03) + 1).epsilon(1e-5));
    }
  }
}

TEST_CASE("partition: merge settings follow PyPTO's key rules", "[partition]") {
  using Mode = MergeSetting::Mode;
  CHECK(parse_merge_setting("s", {}, Mode::kAuto).mode == Mode::kAuto);
  CHECK(parse_merge_setting("s", {{"-1", 1, ""}}, Mode::kAuto).mode == Mode::kOff);
  CHECK(parse_merge_setting("s", {{"DEFAULT", 1, ""}}, Mode::kAuto).mode == Mode::kOff);
  CHECK(parse_merge_setting("s", {{"-2", 0, ""}}, Mode::kAuto).mode == Mode::kAutoWhole);
  const MergeSetting g = parse_merge_setting("s", {{"-1", 2, ""}, {"3", 4, ""}}, Mode::kAuto);
  CHECK(g.mode == Mode::kManualGrouped);
  CHECK(g.default_factor == 2);
  CHECK(g.by_order.at(3) == 4);
  const MergeSetting w = parse_merge_setting("s", {{"func12_1", 4, ""}}, Mode::kAuto);
  CHECK(w.mode == Mode::kManualWhole);
  CHECK(w.by_order.at(1) == 4);
  CHECK(parse_merge_setting("s", {{"-1", 2, "left"}}, Mode::kAuto).side ==
        MergeSetting::Side::kLeft);
  // Any other string is a semantic label; it leaves the mode to the other keys.
  const MergeSetting l = parse_merge_setting("s", {{"Query-Linear", 4, ""}}, Mode::kAuto);
  CHECK(l.by_label.at("Query-Linear") == 4);
  CHECK(l.default_factor == 0);
  CHECK_THROWS_AS(parse_merge_setting("s", {{"-5", 2, ""}}, Mode::kAuto), ConfigError);
}

TEST_CASE("in place: a result reshaped and assembled whole into an output copies nothing",
          "[partition]") {
  // e = a @ b ([64, 16] fp32), out[:] = reshape(e, [16, 64]): PyPTO's reshape of dense data is
  // an alias and its assemble into a GM tensor writes at the final place, so e is computed in
  // out's storage: the matmul tiles are the only tasks (4 of 16x16, no copy tasks).
  const auto ir_with = [](const std::string& between) {
    return kernel(
        "fold",
        param("a", 0, "[64,16]") + "," + param("b", 1, "[16,16]") + "," +
            param("out", 2, "[16,64]") + "," + param("peek", 3, "[16,64]"),
        "",
        op("matmul", in(0) + "," + in(1), val(4, "[64,16]"), "k.py:2",
           R"("cube_tile":{"m":[16,16],"k":[16,16,16],"n":[16,16],"enable_split_k":false})") +
            between + "," +
            op("reshape", in(4), val(5, "[16,64]"), "k.py:3", R"("attrs":{"inplace":false})") +
            "," + write(2, 5, "[0,0]", "k.py:3"));
  };
  Host h;
  h.add("a", DType::kFp32, {64, 16}, iota(64 * 16, 0.5));
  h.add("b", DType::kFp32, {16, 16}, iota(16 * 16, 0.25));
  h.add("out", DType::kFp32, {16, 64});
  h.add("peek", DType::kFp32, {16, 64});
  const Launch l = make(ir_with(""), h, {}, tile_tasks());
  REQUIRE(l.graph.num_tasks() == 4);
  for (std::uint32_t t = 0; t < 4; ++t) CHECK(kernel_of(l, t) == "matmul_f32");
  CHECK(l.workspace_bytes == 0);
  execute(l, h);
  for (std::size_t m = 0; m < 64; m += 7) {
    for (std::size_t n = 0; n < 16; n += 5) {
      double acc = 0;
      for (std::size_t k = 0; k < 16; ++k) {
        acc += 0.5 * static_cast<double>(m * 16 + k) * 0.25 * static_cast<double>(k * 16 + n);
      }
      CHECK(h.f32(2, m * 16 + n) == Approx(acc));
    }
  }
  // Reading out between the matmul and the assemble must see out's old contents: then e keeps
  // its own storage and the assemble copies (4 matmul + 1 reader + copy tasks).
  const Launch kept =
      make(ir_with("," + op("neg", in(2), val(6, "[16,64]"), "k.py:2", R"("vec_tile":[16,64])") +
                   "," + write(3, 6, "[0,0]", "k.py:2")),
           h, {}, tile_tasks());
  CHECK(kept.graph.num_tasks() > 5);
  CHECK(kept.workspace_bytes > 0);
}
