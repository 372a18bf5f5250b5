// SPDX-License-Identifier: Apache-2.0
// The tile rules the compiler checks (UB, PyPTO's reduction and cube tile rules) and PyPTO's
// tiling of a reduction along its reduced axis.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "compiler_test.h"
#include "pypto/common/errors.h"

using namespace compiler_test;
using Catch::Matchers::Contains;

namespace {

// y[2, 1] = sum(x[2, n], axis 1) with vec_tile [2, t].
std::string sum_ir(int n, int t, const std::string& op_name = "sum") {
  const std::string shape = "[2," + std::to_string(n) + "]";
  return kernel(
      "red", param("x", 0, shape) + "," + param("y", 1, "[2,1]"), "",
      op(op_name, in(0), val(2, "[2,1]"), "r.py:4",
         R"("attrs":{"dims":[1],"keepdim":true},"vec_tile":[2,)" + std::to_string(t) + "]") +
          "," + write(1, 2, "[0,0]", "r.py:4"));
}

}  // namespace

TEST_CASE("a reduction cuts its reduced axis by the vec tile and folds the chunks pairwise",
          "[compiler]") {
  Host h;
  h.add("x", DType::kFp32, {2, 100}, iota(200));
  h.add("y", DType::kFp32, {2, 1});
  // 100 / 16: 7 chunks, the last one of 4 (padded): 4 in the power-of-two tree, 3 folded in.
  const Launch l = make(sum_ir(100, 16), h, {}, tile_tasks());
  REQUIRE(l.programs.size() == 1);
  const TaskProgram& p = l.programs[0];
  CHECK(count_op(p, TileOpcode::kLoad) == 7);
  CHECK(count_op(p, TileOpcode::kAdd) == 6);
  CHECK(count_op(p, TileOpcode::kReduceSum) == 1);
  const auto sums = instrs_of(p, TileOpcode::kReduceSum);
  CHECK(p.locals[sums[0]->src[0]].shape[1] == 16);  // the in-tile reduction is one chunk wide
  // The tail chunk is padded with -0, which adds nothing.
  bool padded = false;
  for (const TileInstr* f : instrs_of(p, TileOpcode::kFill)) {
    padded = padded || (f->scalar[0] == 0.0 && std::signbit(f->scalar[0]));
  }
  CHECK(padded);
  execute(l, h);
  CHECK(h.f32(1, 0) == 4950.0f);
  CHECK(h.f32(1, 1) == 14950.0f);

  SECTION("a vec tile covering the axis keeps one load and one reduction") {
    const Launch one = make(sum_ir(100, 128), h, {}, tile_tasks());
    CHECK(count_op(one.programs[0], TileOpcode::kLoad) == 1);
    CHECK(count_op(one.programs[0], TileOpcode::kAdd) == 0);
  }
  SECTION("amax pads with -inf and folds with maximum") {
    const Launch m = make(sum_ir(100, 16, "amax"), h, {}, tile_tasks());
    CHECK(count_op(m.programs[0], TileOpcode::kMaximum) == 6);
    execute(m, h);
    CHECK(h.f32(1, 0) == 99.0f);
    CHECK(h.f32(1, 1) == 199.0f);
  }
  SECTION("argmax keeps the reduced axis whole") {
    Host hi;
    hi.add("x", DType::kFp32, {2, 100}, iota(200));
    hi.add("y", DType::kInt32, {2, 1});
    const std::string ir =
        kernel("red", param("x", 0, "[2,100]") + "," + param("y", 1, "[2,1]", "DT_INT32"), "",
               op("argmax", in(0), val(2, "[2,1]", "DT_INT32"), "r.py:4",
                  R"("attrs":{"dims":[1],"keepdim":true},"vec_tile":[2,16])") +
                   "," + write(1, 2, "[0,0]", "r.py:4"));
    const Launch a = make(ir, hi, {}, tile_tasks());
    CHECK(count_op(a.programs[0], TileOpcode::kLoad) == 1);
  }
}

TEST_CASE("PyPTO's reduction rules: 64 KB tiles warned, a 32-byte last axis", "[compiler]") {
  Host h;
  h.add("x", DType::kFp32, {2, 40000});
  h.add("y", DType::kFp32, {2, 1});
  // PyPTO's pages give 64 KB, its own kernels exceed it: a warning, once per op; UB bounds it.
  const Launch big = make(sum_ir(40000, 16384), h);
  const auto warned = std::count_if(big.log.begin(), big.log.end(), [](const std::string& l) {
    return l.find("warning: r.py:4: sum: the reduction tile 2x16384 fp32 is 131072 bytes") == 0 &&
           l.find("above the 65536 bytes (64 KiB) PyPTO's operation pages give") !=
               std::string::npos;
  });
  CHECK(warned == 1);
  const Launch fits = make(sum_ir(40000, 8192), h);
  CHECK(std::none_of(fits.log.begin(), fits.log.end(),
                     [](const std::string& l) { return l.rfind("warning:", 0) == 0; }));
  CHECK_THROWS_WITH(make(sum_ir(40000, 1001), h),
                    Contains("r.py:4: sum: the vec tile's last size 1001 x 4 bytes (fp32) = 4004 "
                             "bytes is not a multiple of 32"));
}

TEST_CASE("tiles breaking UB or PyPTO's cube tile rules are rejected at compile time",
          "[compiler]") {
  // Before, an oversized tile was accepted (and an oversized matmul tile even ran faster).
  SECTION("a vector tile above UB") {
    // 256 x 256 fp32 = 256 KiB > the A2 UB of 192 KiB.
    const std::string ir = kernel(
        "big", param("a", 0, "[256,256]") + "," + param("out", 1, "[256,256]"), "",
        op("add", in(0) + "," + cst(1), val(2, "[256,256]"), "v.py:7", R"("vec_tile":[256,256])") +
            "," + write(1, 2, "[0,0]", "v.py:7"));
    Host h;
    h.add("a", DType::kFp32, {256, 256});
    h.add("out", DType::kFp32, {256, 256});
    CHECK_THROWS_WITH(make(ir, h), Contains("v.py:7") && Contains("does not fit UB") &&
                                       Contains("256x256 fp32") && Contains("262144 bytes") &&
                                       Contains("196608 bytes"));
    // Half of it fits: 128 x 256 fp32 = 128 KiB.
    const std::string ok = kernel(
        "big", param("a", 0, "[256,256]") + "," + param("out", 1, "[256,256]"), "",
        op("add", in(0) + "," + cst(1), val(2, "[256,256]"), "v.py:7", R"("vec_tile":[128,256])") +
            "," + write(1, 2, "[0,0]", "v.py:7"));
    CHECK_NOTHROW(make(ok, h));
  }
  // a [M, K] @ b [K, N] -> c [M, N] in fp16 (512 each unless given).
  const auto mmk = [](const std::string& cube, int M, int K, int N) {
    const std::string a = "[" + std::to_string(M) + "," + std::to_string(K) + "]";
    const std::string b = "[" + std::to_string(K) + "," + std::to_string(N) + "]";
    const std::string c = "[" + std::to_string(M) + "," + std::to_string(N) + "]";
    return kernel("mm",
                  param("a", 0, a, "DT_FP16") + "," + param("b", 1, b, "DT_FP16") + "," +
                      param("c", 2, c, "DT_FP16"),
                  "",
                  op("matmul", in(0) + "," + in(1), val(3, c, "DT_FP16"), "m.py:9",
                     R"("attrs":{"a_trans":false,"b_trans":false,"c_matrix_nz":false},)"
                     R"("cube_tile":)" +
                         cube) +
                      "," + write(2, 3, "[0,0]", "m.py:9"));
  };
  const auto mm = [&](const std::string& cube) { return mmk(cube, 512, 512, 512); };
  Host h;
  h.add("a", DType::kFp16, {512, 512});
  h.add("b", DType::kFp16, {512, 512});
  h.add("c", DType::kFp16, {512, 512});
  SECTION("PyPTO's recommended fp16 cube tiles fit") {
    CHECK_NOTHROW(
        make(mm(R"({"m":[128,128],"k":[64,256],"n":[256,256],"enable_split_k":false})"), h));
  }
  SECTION("L0A: CeilAlign(mL0) x CeilAlign(kL0) fp16 above 64 KiB") {
    CHECK_THROWS_WITH(
        make(mm(R"({"m":[256,256],"k":[256,256],"n":[16,16],"enable_split_k":false})"), h),
        Contains("m.py:9") && Contains("breaks PyPTO's rule") &&
            Contains("CeilAlign(mL0 = 256, 16) x CeilAlign(kL0 = 256, 16) x sizeof(fp16) <= L0A") &&
            Contains("256 x 256 x 2 = 131072 bytes") && Contains("65536 bytes") &&
            Contains("cores.l0a_kib of chip"));
  }
  SECTION("L0B: CeilAlign(nL0) x CeilAlign(kL0) fp16 above 64 KiB") {
    CHECK_THROWS_WITH(
        make(mm(R"({"m":[16,16],"k":[256,256],"n":[256,256],"enable_split_k":false})"), h),
        Contains("<= L0B") && Contains("131072 bytes") && Contains("cores.l0b_kib"));
  }
  SECTION("L0C holds mL0 x nL0, not the L1 tiles") {
    // The L1 tiles m[1] x n[1] = 256 x 256 fp32 would not fit L0C; PyPTO puts mL0 x nL0 there.
    CHECK_NOTHROW(make(mm(R"({"m":[64,256],"k":[16,16],"n":[64,256],"enable_split_k":false})"), h));
    CHECK_NOTHROW(
        make(mm(R"({"m":[128,256],"k":[32,32],"n":[128,256],"enable_split_k":false})"), h));
    CHECK_THROWS_WITH(
        make(mm(R"({"m":[256,256],"k":[16,16],"n":[256,256],"enable_split_k":false})"), h),
        Contains("CeilAlign(mL0 = 256, 16) x CeilAlign(nL0 = 256, 16) x sizeof(fp32) <= L0C") &&
            Contains("256 x 256 x 4 = 262144 bytes") && Contains("cores.l0c_kib"));
  }
  SECTION("sizes round up to 16 elements") {
    // mL0 = 1 takes 16 rows: 16 x 2048 x 2 = 64 KiB fits L0A, 17 rows round up to 32 and do not.
    Host hk;
    hk.add("a", DType::kFp16, {512, 2048});
    hk.add("b", DType::kFp16, {2048, 512});
    hk.add("c", DType::kFp16, {512, 512});
    CHECK_NOTHROW(make(
        mmk(R"({"m":[1,1],"k":[2048,2048],"n":[16,16],"enable_split_k":false})", 512, 2048, 512),
        hk));
    CHECK_THROWS_WITH(
        make(mmk(R"({"m":[17,17],"k":[2048,2048],"n":[16,16],"enable_split_k":false})", 512, 2048,
                 512),
             hk),
        Contains("<= L0A") && Contains("32 x 2048 x 2 = 131072 bytes"));
  }
  SECTION("a tile larger than its operand is measured at the operand's size") {
    // PyPTO's flash attention: m=[128, 512], k=[256, 512] on a 320 x 320 operand; its L1 holds
    // 320 x 320 + 64 x 320 elements, not 512 x 512 + 64 x 512.
    Host hs;
    hs.add("a", DType::kFp16, {320, 320});
    hs.add("b", DType::kFp16, {320, 64});
    hs.add("c", DType::kFp16, {320, 64});
    CHECK_NOTHROW(make(
        mmk(R"({"m":[128,512],"k":[256,512],"n":[64,64],"enable_split_k":false})", 320, 320, 64),
        hs));
  }
  SECTION("L1: the operand tiles above 512 KiB") {
    CHECK_THROWS_WITH(
        make(mm(R"({"m":[64,512],"k":[64,512],"n":[64,64],"enable_split_k":false})"), h),
        Contains("<= L1") && Contains("512 x 512 x 2 + 64 x 512 x 2") && Contains("589824 bytes") &&
            Contains("524288 bytes") && Contains("cores.l1_kib"));
  }
  SECTION("L1 tiles are multiples of the L0 tiles, no smaller") {
    CHECK_THROWS_WITH(
        make(mm(R"({"m":[16,24],"k":[32,32],"n":[16,16],"enable_split_k":false})"), h),
        Contains("mL0 <= mL1 and mL1 % mL0 == 0: mL0 = 16, mL1 = 24"));
    CHECK_THROWS_WITH(
        make(mm(R"({"m":[16,16],"k":[64,32],"n":[16,16],"enable_split_k":false})"), h),
        Contains("kL0 <= kL1 and kL1 % kL0 == 0: kL0 = 64, kL1 = 32"));
    CHECK_THROWS_WITH(
        make(mm(R"({"m":[16,16],"k":[32,64,48],"n":[16,16],"enable_split_k":false})"), h),
        Contains("kL1 (of b) % kL0 == 0: kL0 = 32, kL1 (of b) = 48"));
    CHECK_THROWS_WITH(
        make(mm(R"({"m":[16,16],"k":[32,32],"n":[32,16],"enable_split_k":false})"), h),
        Contains("nL0 <= nL1 and nL1 % nL0 == 0: nL0 = 32, nL1 = 16"));
  }
  SECTION("kL0 and nL0 are 32-byte aligned") {
    CHECK_THROWS_WITH(
        make(mm(R"({"m":[16,16],"k":[24,48],"n":[16,16],"enable_split_k":false})"), h),
        Contains("kL0 x sizeof(fp16) % 32 == 0 and kL0 % 16 == 0") && Contains("kL0 = 24"));
    CHECK_THROWS_WITH(make(mm(R"({"m":[16,16],"k":[32,32],"n":[8,16],"enable_split_k":false})"), h),
                      Contains("nL0 % 16 == 0") && Contains("nL0 = 8 fp16 elements = 16 bytes"));
    // mL0 only where a is read transposed: 8 rows are allowed here.
    CHECK_NOTHROW(make(mm(R"({"m":[8,8],"k":[32,32],"n":[16,16],"enable_split_k":false})"), h));
  }
}

TEST_CASE("a vec tile longer than an op's rank gives axis k its k-th size, as PyPTO's tilers do",
          "[compiler]") {
  // PyPTO's element-wise, cast, expand and reduction tilers read vecTile[k] for axis k; DeepSeek's
  // MLA prolog sets (1, 64, 128, 128) before 3-D ops. Aligned right, the [8, 128, 64] fp32 add
  // below would take one 256 KiB tile, above UB; read from the first size it takes [1, 64, 64].
  const auto add_ir = [](const std::string& shape, const std::string& tile) {
    return kernel(
        "long", param("x", 0, shape) + "," + param("y", 1, shape), "",
        op("add", in(0) + "," + cst(1), val(2, shape), "t.py:3", R"("vec_tile":)" + tile) + "," +
            write(1, 2, shape == "[8,128,64]" ? "[0,0,0]" : "[0,0]", "t.py:3"));
  };
  SECTION("a 3-D op: [1, 64, 128] clipped to [1, 64, 64], 8 x 2 tiles") {
    Host h;
    h.add("x", DType::kFp32, {8, 128, 64}, iota(8 * 128 * 64));
    h.add("y", DType::kFp32, {8, 128, 64});
    const Launch l = make(add_ir("[8,128,64]", "[1,64,128,128]"), h, {}, tile_tasks());
    REQUIRE(l.programs.size() == 16);
    for (const TaskProgram& p : l.programs) {
      const auto loads = instrs_of(p, TileOpcode::kLoad);
      REQUIRE(loads.size() == 1);
      const auto& shape = p.locals[loads[0]->dst].shape;
      CHECK((shape[0] == 1 && shape[1] == 64 && shape[2] == 64));
    }
    execute(l, h);
    for (std::size_t i = 0; i < 8 * 128 * 64; i += 997) CHECK(h.f32(1, i) == i + 1.0f);
  }
  SECTION("a 2-D op under the same call: [4, 64], 4 x 4 tiles") {
    Host h;
    h.add("x", DType::kFp32, {16, 256}, iota(16 * 256));
    h.add("y", DType::kFp32, {16, 256});
    const Launch l = make(add_ir("[16,256]", "[4,64,128,128]"), h, {}, tile_tasks());
    CHECK(l.programs.size() == 16);
    execute(l, h);
    CHECK(h.f32(1, 16 * 256 - 1) == 16 * 256.0f);
  }
  SECTION("a reduction: axis 2 of [8, 128, 64] cut by the tile's third size") {
    // T = [2, 64, 32]: 4 x 2 tasks, each folding two 32-wide chunks (PyPTO's TileReduceNew).
    const std::string ir =
        kernel("red", param("x", 0, "[8,128,64]") + "," + param("y", 1, "[8,128,1]"), "",
               op("sum", in(0), val(2, "[8,128,1]"), "r.py:4",
                  R"("attrs":{"dims":[2],"keepdim":true},"vec_tile":[2,64,32,16])") +
                   "," + write(1, 2, "[0,0,0]", "r.py:4"));
    Host h;
    h.add("x", DType::kFp32, {8, 128, 64}, iota(8 * 128 * 64, 0.001));
    h.add("y", DType::kFp32, {8, 128, 1});
    const Launch l = make(ir, h, {}, tile_tasks());
    REQUIRE(l.programs.size() == 8);
    CHECK(count_op(l.programs[0], TileOpcode::kLoad) == 2);
    CHECK(count_op(l.programs[0], TileOpcode::kAdd) == 1);
    execute(l, h);
    // Row 1000: 64 x 0.001 x (64000 + 31.5).
    CHECK(h.f32(1, 1000) == Approx(0.064 * 64031.5).epsilon(1e-5));
  }
}
