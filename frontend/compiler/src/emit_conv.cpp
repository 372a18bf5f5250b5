// SPDX-License-Identifier: Apache-2.0
// The convolution family: pypto.conv and conv_backward_input arrive as a matmul over an img2col
// matrix whose tiles follow PyPTO's set_conv_tile_shapes / set_convbp_input_tile_shapes
// rules; this file checks their buffer space.
#include <cstdint>
#include <iterator>
#include <string>

#include "instance.h"
#include "pypto/common/errors.h"

namespace pypto::compiler::detail {

namespace {

std::uint64_t align_up(std::int64_t v, std::int64_t a) {
  return static_cast<std::uint64_t>(ceil_div(v, a) * a);
}

}  // namespace

void EmitContext::check_conv_tile(const Unit& u, const Stmt& st, DType ad) const {
  // PyPTO's buffer rules of set_conv_tile_shapes (docs/zh/api/config/
  // pypto-set_conv_tile_shapes.md), with the chip's buffer sizes; the range and alignment
  // rules were checked where the conv was traced.
  const ConvTile& c = st.conv;
  if (c.backward_input) {
    check_convbp_tile(u, st, ad);
    return;
  }
  const std::uint64_t eb = model::dtype_bytes(ad);
  const std::string dt = std::string(model::to_string(ad));
  const std::string where = u.loc + ": conv: the conv tile breaks PyPTO's rule ";
  const std::uint64_t hw = align_up(c.hw_l0, 16), k0 = align_up(c.k_l0, c.c0);
  const std::uint64_t n0 = align_up(c.n_l0, 16);
  const std::uint64_t a_l1 = align_up(
      static_cast<std::int64_t>(c.hin_l1 * c.win_l1 * c.k_al1 * static_cast<std::int64_t>(eb)), 32);
  const std::uint64_t b_l1 =
      align_up(static_cast<std::int64_t>(c.n_l1 * c.k_bl1 * static_cast<std::int64_t>(eb)), 32);
  const std::uint64_t bias_l1 = align_up(static_cast<std::int64_t>(c.n_l1 * eb), 32);
  const std::string c0 = std::to_string(c.c0);
  const BufferNeed needs[] = {
      {"L0A", "cores.l0a_kib", chip_.cores.l0a_kib, hw * k0 * eb,
       "CeilAlign(tileH x tileW, 16) x CeilAlign(tileK, C0) x sizeof(" + dt + ")",
       "CeilAlign(" + std::to_string(c.hw_l0) + ", 16) x CeilAlign(" + std::to_string(c.k_l0) +
           ", " + c0 + ") x " + std::to_string(eb)},
      {"L0B", "cores.l0b_kib", chip_.cores.l0b_kib, k0 * n0 * eb,
       "CeilAlign(tileK, C0) x CeilAlign(tileN, 16) x sizeof(" + dt + ")",
       "CeilAlign(" + std::to_string(c.k_l0) + ", " + c0 + ") x CeilAlign(" +
           std::to_string(c.n_l0) + ", 16) x " + std::to_string(eb)},
      {"L0C", "cores.l0c_kib", chip_.cores.l0c_kib, hw * n0 * 4,
       "CeilAlign(tileH x tileW, 16) x CeilAlign(tileN, 16) x sizeof(DT_FP32)",
       "CeilAlign(" + std::to_string(c.hw_l0) + ", 16) x CeilAlign(" + std::to_string(c.n_l0) +
           ", 16) x 4"},
      {"L1", "cores.l1_kib", chip_.cores.l1_kib, a_l1 + b_l1 + bias_l1,
       "CeilAlign(hinL1 x winL1 x kAL1 x sizeof(" + dt + "), 32) + CeilAlign(nL1 x kBL1 x sizeof(" +
           dt + "), 32) + CeilAlign(tileN x sizeof(" + dt + "), 32)",
       "hinL1 = " + std::to_string(c.hin_l1) + ", winL1 = " + std::to_string(c.win_l1) +
           ", kAL1 = " + std::to_string(c.k_al1) + ", nL1 = " + std::to_string(c.n_l1) +
           ", kBL1 = " + std::to_string(c.k_bl1) + ": " + std::to_string(a_l1) + " + " +
           std::to_string(b_l1) + " + " + std::to_string(bias_l1)},
  };
  check_buffer_needs(std::begin(needs), std::end(needs), where,
                     "; choose other pypto.set_conv_tile_shapes");
}

void EmitContext::check_convbp_tile(const Unit& u, const Stmt& st, DType ad) const {
  // PyPTO's buffer rules of set_convbp_input_tile_shapes (docs/zh/api/config/
  // pypto-set_convbp_input_tile_shapes.md), with the chip's buffer sizes: the fields hold
  // tileML0/tileKL0/tileNL0 and houtL1, woutL1, coutL1, tileKL1, tileNL1.
  const ConvTile& c = st.conv;
  const auto eb = static_cast<std::int64_t>(model::dtype_bytes(ad));
  const std::string dt = std::string(model::to_string(ad));
  const std::string where = u.loc + ": conv_backward_input: the convbp tile breaks PyPTO's rule ";
  const auto m0 = std::to_string(c.hw_l0), k0 = std::to_string(c.k_l0), n0 = std::to_string(c.n_l0);
  const auto bytes = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  const std::int64_t weight_l1 = c.k_bl1 * c.n_l1;
  const std::int64_t fmap_l1 = c.hin_l1 * c.win_l1 * c.k_al1;
  const BufferNeed needs[] = {
      {"L0A", "cores.l0a_kib", chip_.cores.l0a_kib, bytes(c.hw_l0 * c.k_l0 * eb),
       "tileML0 x tileKL0 x sizeof(" + dt + ")", m0 + " x " + k0 + " x " + std::to_string(eb)},
      {"L0B", "cores.l0b_kib", chip_.cores.l0b_kib, bytes(c.k_l0 * c.n_l0 * eb),
       "tileKL0 x tileNL0 x sizeof(" + dt + ")", k0 + " x " + n0 + " x " + std::to_string(eb)},
      {"L0C", "cores.l0c_kib", chip_.cores.l0c_kib, bytes(c.hw_l0 * c.n_l0 * 4),
       "tileML0 x tileNL0 x sizeof(DT_FP32)", m0 + " x " + n0 + " x 4"},
      {"L1", "cores.l1_kib", chip_.cores.l1_kib, bytes((weight_l1 + fmap_l1) * eb),
       "(tileKL1 x tileNL1 + houtL1 x woutL1 x coutL1) x sizeof(" + dt + ")",
       "tileKL1 = " + std::to_string(c.k_bl1) + ", tileNL1 = " + std::to_string(c.n_l1) +
           ", houtL1 = " + std::to_string(c.hin_l1) + ", woutL1 = " + std::to_string(c.win_l1) +
           ", coutL1 = " + std::to_string(c.k_al1)},
  };
  check_buffer_needs(std::begin(needs), std::end(needs), where,
                     "; choose other pypto.set_convbp_input_tile_shapes");
}

}  // namespace pypto::compiler::detail
