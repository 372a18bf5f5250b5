// SPDX-License-Identifier: Apache-2.0
// Tile-op cost model against cycle counts worked out by hand from DESIGN.md "Costs and timing"
// with the A2 defaults (16x16x16 fractal, 256 B/cycle vector, 20 fixed cube cycles).
#include <algorithm>
#include <catch2/catch.hpp>

#include "pypto/common/errors.h"
#include "pypto/model/cost_model.h"

using Catch::Matchers::Contains;
using namespace pypto::model;

namespace {

std::uint32_t cycles(const char* op, DType d, std::vector<std::int64_t> shape,
                     const ChipConfig& chip = ChipConfig{}) {
  TileOp t;
  t.op = op;
  t.dtype = d;
  t.shape = std::move(shape);
  return tile_op_cycles(t, chip);
}

}  // namespace

// The A2 defaults without bank-conflict stalls: the fractal arithmetic alone.
ChipConfig no_stalls() {
  ChipConfig c;
  c.cost.cube_bank_conflict_pct = 0;
  return c;
}

TEST_CASE("cost: mmad counts fractals with a dtype-dependent K step", "[cost]") {
  const ChipConfig chip = no_stalls();
  // 128/16 * 128/16 * 128/16 + 20
  CHECK(cycles("mmad", DType::kFp16, {128, 128, 128}, chip) == 8 * 8 * 8 + 20);
  CHECK(cycles("mmad", DType::kBf16, {128, 128, 128}, chip) == 532);
  // int8: k0 = 32 -> 8 * 8 * 4 + 20
  CHECK(cycles("mmad", DType::kInt8, {128, 128, 128}, chip) == 276);
  // fp32: k0 = 8 -> 8 * 8 * 16 + 20
  CHECK(cycles("mmad", DType::kFp32, {128, 128, 128}, chip) == 1044);
  // Partial fractals round up: M=17 -> 2, N=33 -> 3, K=20 -> 2 (fp16): 12 + 20
  CHECK(cycles("mmad", DType::kFp16, {17, 20, 33}, chip) == 32);
  // Shape order is {M, K, N}: K=512 costs 4x K=128.
  CHECK(cycles("mmad", DType::kFp16, {128, 512, 128}, chip) == 8 * 8 * 32 + 20);
  CHECK(cycles("mmad", DType::kFp16, {64, 128, 256}, chip) == 4 * 16 * 8 + 20);
}

TEST_CASE("cost: mmad follows the chip's fractal and fixed cost", "[cost]") {
  ChipConfig chip;
  chip.cores.cube_m = 32;
  chip.cores.cube_k = 32;  // fp16 k0 = 32, fp32 k0 = 16
  chip.cost.cube_fixed_cycles = 5;
  chip.cost.cube_bank_conflict_pct = 0;
  CHECK(cycles("mmad", DType::kFp16, {128, 128, 128}, chip) == 4 * 8 * 4 + 5);
  CHECK(cycles("mmad", DType::kFp32, {128, 128, 128}, chip) == 4 * 8 * 8 + 5);
}

TEST_CASE("cost: mmad pays bank-conflict stalls in proportion to its fractals", "[cost]") {
  // Without them a large matmul ran at 90.5 % of the cube peak, above what real parts reach.
  ChipConfig chip;
  REQUIRE(chip.cost.cube_bank_conflict_pct == 8.0);  // the A2 default
  // 512 fractals + ceil(512 * 0.08) = 41 stall cycles + 20 start/drain.
  CHECK(cycles("mmad", DType::kFp16, {128, 128, 128}, chip) == 512 + 41 + 20);
  // Any stall share costs at least a cycle: 12 fractals * 8 % = 0.96 -> 1.
  CHECK(cycles("mmad", DType::kFp16, {17, 20, 33}, chip) == 12 + 1 + 20);
  chip.cost.cube_bank_conflict_pct = 25;
  CHECK(cycles("mmad", DType::kFp16, {128, 512, 128}, chip) == 2048 + 512 + 20);
  // The steady-state efficiency of a 256x256x64 tile loop: fractals / (fractals + stalls +
  // start/drain) stays inside the 75-88 % band with the defaults.
  const ChipConfig a2;
  const double f = 16.0 * 16.0 * 4.0;
  const double eff = f / cycles("mmad", DType::kFp16, {256, 64, 256}, a2);
  CHECK(eff > 0.75);
  CHECK(eff < 0.92);
}

TEST_CASE("cost: vector ops follow PyPTO's board fit of each op", "[cost]") {
  // t = fixed_us + us_per_mb * r * bytes / 1e6 per 2-D slice (PyPTO's PostSimulatorA2A3 rows),
  // at the default 1850 MHz: ADD fixed ceil(0.0188 us * 1850) = 35 cycles, and fp16 64x128 =
  // 16384 B costs ceil(2.40457 * 2 * 16384 / 1e6 * 1850) = 146.
  CHECK(cycles("add", DType::kFp16, {64, 128}) == 35 + 146);
  CHECK(cycles("sub", DType::kFp16, {64, 128}) == 140);  // 40 + 100
  CHECK(cycles("mul", DType::kFp16, {64, 128}) == 127);  // 27 + 100
  CHECK(cycles("maximum", DType::kFp16, {64, 128}) == cycles("add", DType::kFp16, {64, 128}));
  CHECK(cycles("adds", DType::kFp16, {64, 128}) == 88);  // a tile and a scalar: 41 + 47
  // fp32 exp/div are fitted per element (r = 1): twice the bytes of fp16, the same time.
  CHECK(cycles("exp", DType::kFp16, {64, 128}) == 261);
  CHECK(cycles("exp", DType::kFp32, {64, 128}) == 261);
  CHECK(cycles("div", DType::kFp32, {64, 128}) == 279);
  CHECK(cycles("cast", DType::kFp32, {64, 128}) == 141);
  // Reductions: the fit's fixed part, then 4 passes of 256 B beats over the input.
  CHECK(cycles("sum", DType::kFp32, {64, 128}) == 135 + 4 * 128);
  CHECK(cycles("amax", DType::kFp32, {64, 128}) == 17 + 4 * 128);
  // A rank-3 tile pays the fixed part per 2-D slice: 2 x 28 + ceil(0.9527 * 2 * 1024e-6 * 1850).
  CHECK(cycles("relu", DType::kFp16, {2, 16, 16}) == 2 * 28 + 4);
  // An empty tile pays only the fixed part; a partial cycle rounds up.
  CHECK(cycles("add", DType::kFp16, {0, 128}) == 35);
  CHECK(cycles("add", DType::kFp32, {3, 5}) == 35 + 1);
}

TEST_CASE("cost: the fit is in time, so a slower clock takes fewer cycles", "[cost]") {
  ChipConfig chip;
  chip.cores.freq_mhz = 925;
  CHECK(cycles("add", DType::kFp16, {64, 128}, chip) == 18 + 73);
}

TEST_CASE("cost: a vector op's row of the fit comes from the chip config", "[cost]") {
  ChipConfig chip;
  chip.cost.vec_add_fixed_ns = 0;
  chip.cost.vec_add_ps_per_byte = 10;  // 16384 B x 10 ps = 163.84 ns = 303.1 cycles
  CHECK(cycles("add", DType::kFp16, {64, 128}, chip) == 304);
  CHECK(cycles("maximum", DType::kFp16, {64, 128}, chip) == 304);  // ADD's row too
  CHECK(cycles("sub", DType::kFp16, {64, 128}, chip) == 140);      // its own row, unchanged
  chip.cost.vec_rowsum_fixed_ns = 1000;                            // 1850 cycles
  CHECK(cycles("sum", DType::kFp32, {64, 128}, chip) == 1850 + 4 * 128);
}

TEST_CASE("cost: reductions stream at the chip's vector width", "[cost]") {
  ChipConfig chip;
  chip.cost.vec_bytes_per_cycle = 128;
  CHECK(cycles("sum", DType::kFp32, {64, 128}, chip) == 135 + 4 * 256);
}

TEST_CASE("cost: copies and views cost nothing here", "[cost]") {
  for (const char* op : {"copy_in", "copy_out", "view", "reshape", "assemble"}) {
    INFO(op);
    CHECK(cycles(op, DType::kFp16, {64, 128}) == 0);
  }
  CHECK(tile_op_pipe("copy_in") == TilePipe::kMte2);
  CHECK(tile_op_pipe("copy_out") == TilePipe::kMte3);
  CHECK(tile_op_pipe("view") == TilePipe::kNone);
  CHECK(tile_op_pipe("mmad") == TilePipe::kCube);
  CHECK(tile_op_pipe("exp") == TilePipe::kVec);
}

TEST_CASE("cost: the op table is listed sorted and lookups agree with it", "[cost]") {
  const auto ops = known_tile_ops();
  CHECK(std::is_sorted(ops.begin(), ops.end()));
  CHECK(std::adjacent_find(ops.begin(), ops.end()) == ops.end());
  for (const auto& op : ops) CHECK(is_known_tile_op(op));
  CHECK(is_known_tile_op("mmad"));
  CHECK_FALSE(is_known_tile_op("MMAD"));
  CHECK_FALSE(is_known_tile_op(""));
  CHECK_FALSE(is_known_tile_op("matmul"));
}

TEST_CASE("cost: unknown ops and bad shapes are trace errors", "[cost][errors]") {
  CHECK_THROWS_AS(cycles("xyz", DType::kFp16, {1}), pypto::TraceError);
  CHECK_THROWS_WITH(cycles("xyz", DType::kFp16, {1}),
                    Contains("unknown tile op 'xyz'; known: abs, add,") && Contains("mmad"));
  CHECK_THROWS_WITH(cycles("exps", DType::kFp16, {1}), Contains("did you mean 'exp'?"));
  CHECK_THROWS_WITH(tile_op_pipe("nope"), Contains("unknown tile op 'nope'"));
  CHECK_THROWS_WITH(cycles("mmad", DType::kFp16, {128, 128}),
                    Contains("needs shape [M, K, N]; got [128, 128]"));
  CHECK_THROWS_WITH(cycles("mmad", DType::kInt64, {16, 16, 16}),
                    Contains("does not support dtype int64"));
  CHECK_THROWS_WITH(cycles("add", DType::kFp16, {64, -1}),
                    Contains("negative dimension -1 in shape [64, -1]"));
  CHECK_THROWS_WITH(cycles("add", DType::kFp32, {1 << 30, 1 << 30}),
                    Contains("tile op 'add'") && Contains("costs more than 4294967295"));
  CHECK_THROWS_WITH(cycles("exp", DType::kFp32, {1ll << 40, 1ll << 40}),
                    Contains("costs more than"));
  CHECK_THROWS_WITH(cycles("mmad", DType::kFp16, {1ll << 40, 1ll << 40, 1ll << 40}),
                    Contains("costs more than"));
}

TEST_CASE("cost: a zero fractal or vector width is a config error", "[cost][errors]") {
  ChipConfig chip;
  chip.cores.cube_n = 0;
  CHECK_THROWS_WITH(cycles("mmad", DType::kFp16, {16, 16, 16}, chip), Contains("cores.cube_n = 0"));
  chip = ChipConfig{};
  chip.cost.vec_bytes_per_cycle = 0;
  CHECK_THROWS_AS(cycles("add", DType::kFp16, {16}, chip), pypto::ConfigError);
  CHECK_THROWS_WITH(cycles("sum", DType::kFp16, {16}, chip),
                    Contains("cost.vec_bytes_per_cycle = 0"));
}

TEST_CASE("cost: dtype names and sizes", "[cost]") {
  struct Case {
    const char* name;
    DType type;
    std::uint32_t bytes;
  };
  const Case cases[] = {
      {"fp32", DType::kFp32, 4},   {"float32", DType::kFp32, 4},  {"float", DType::kFp32, 4},
      {"fp16", DType::kFp16, 2},   {"float16", DType::kFp16, 2},  {"half", DType::kFp16, 2},
      {"bf16", DType::kBf16, 2},   {"bfloat16", DType::kBf16, 2}, {"int8", DType::kInt8, 1},
      {"int16", DType::kInt16, 2}, {"int32", DType::kInt32, 4},   {"int", DType::kInt32, 4},
      {"int64", DType::kInt64, 8}, {"long", DType::kInt64, 8},    {"bool", DType::kBool, 1},
      {"FP16", DType::kFp16, 2},   {"BFloat16", DType::kBf16, 2},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    DType d = DType::kBool;
    REQUIRE(parse_dtype(c.name, &d));
    CHECK(d == c.type);
    CHECK(dtype_bytes(d) == c.bytes);
  }
  CHECK(to_string(DType::kBf16) == "bf16");
  CHECK(to_string(DType::kInt64) == "int64");
  for (const char* bad : {"", "fp8", "float64", "int4", "fp16 ", "DT_FP16"}) {
    INFO(bad);
    DType d = DType::kInt16;
    CHECK_FALSE(parse_dtype(bad, &d));
    CHECK(d == DType::kInt16);  // untouched
  }
}
