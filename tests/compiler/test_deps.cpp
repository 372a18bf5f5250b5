// SPDX-License-Identifier: Apache-2.0
// The compiler's private dependency tracker (frontend/compiler/src/deps.h): a tile's rows fed
// as one run find the predecessors row-by-row calls find, and regions split into the same
// contiguous runs.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include "deps.h"

using pypto::compiler::GlobalRegion;
using pypto::compiler::detail::DepTracker;
using pypto::compiler::detail::for_each_segment;
using pypto::compiler::detail::for_each_segment_run;

TEST_CASE("rows fed as runs give the predecessors of rows fed one by one", "[deps]") {
  // Random tiles of three buffers (two read-only until late), reads before writes per task,
  // several device tasks: every task's predecessor list must match, in order.
  const std::vector<std::uint64_t> sizes{1 << 16, 1 << 16, 1 << 15};
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    DepTracker runs(sizes), rows(sizes);
    const auto pick = [&](std::uint32_t n) { return std::uint32_t(rng() % n); };
    std::uint32_t dt = 0;
    for (std::uint32_t t = 0; t < 300; ++t) {
      if (pick(50) == 0) ++dt;
      runs.begin_task(t, dt);
      rows.begin_task(t, dt);
      const std::uint32_t accesses = 1 + pick(4);
      std::vector<
          std::tuple<bool, std::uint32_t, std::uint64_t, std::uint64_t, std::int64_t, std::int64_t>>
          acc;
      for (std::uint32_t a = 0; a < accesses; ++a) {
        const std::uint32_t buf = pick(3);
        const bool write = (buf == 2 || t > 150) && pick(3) == 0;
        // Rows within a chunk, rows that cross a chunk's end, a row per chunk (pitches past the
        // 8 KiB chunk, as a 64-wide fp32 tile of a 4096-wide matrix), the same row again.
        const std::uint32_t shape = pick(8);
        const std::uint64_t bytes = shape == 0 ? 4 * (1 + pick(2560)) : 4 * (1 + pick(64));
        const std::int64_t pitch = shape == 1   ? 0
                                   : shape == 2 ? std::int64_t(8192 + 4 * pick(1024))
                                   : shape == 3 ? std::int64_t(bytes)
                                                : std::int64_t(1024);
        const std::int64_t count = 1 + pick(shape == 2 ? 3 : 16);
        const std::uint64_t span = bytes + std::uint64_t(pitch) * std::uint64_t(count - 1);
        const std::uint64_t off = 4 * pick(std::uint32_t((sizes[buf] - span) / 4));
        acc.emplace_back(write, buf, off, bytes, pitch, count);
      }
      std::stable_sort(acc.begin(), acc.end(), [](const auto& x, const auto& y) {
        return std::get<0>(x) < std::get<0>(y);  // reads first
      });
      for (const auto& [write, buf, off, bytes, pitch, count] : acc) {
        if (write) {
          runs.write_rows(buf, off, bytes, pitch, count);
        } else {
          runs.read_rows(buf, off, bytes, pitch, count);
        }
        for (std::int64_t k = 0; k < count; ++k) {
          const std::uint64_t o = off + std::uint64_t(pitch * k);
          if (write) {
            rows.write(buf, o, bytes);
          } else {
            rows.read(buf, o, bytes);
          }
        }
      }
      INFO("seed " << seed << " task " << t);
      REQUIRE(runs.preds() == rows.preds());
    }
  }
}

TEST_CASE("a run of rows past its buffer's end fails as its rows do", "[deps]") {
  // The run's check is made once: a last row past the end, or a pitch whose span wraps, must
  // still fail, not write the rows before it unchecked.
  const std::vector<std::uint64_t> sizes{1 << 16};
  DepTracker runs(sizes), rows(sizes);
  runs.begin_task(0, 0);
  rows.begin_task(0, 0);
  runs.write_rows(0, 0, 256, 16384, 4);  // the last row ends at 49,408: inside
  for (int k = 0; k < 4; ++k) rows.write(0, std::uint64_t(16384 * k), 256);
  CHECK_THROWS(runs.write_rows(0, 256, 256, 16384, 5));  // the fifth row starts at 65,792
  CHECK_THROWS(rows.write(0, 65792, 256));
  CHECK_THROWS(runs.write_rows(0, 0, 256, std::int64_t(1) << 62, 5));  // the span wraps
  runs.begin_task(1, 0);
  rows.begin_task(1, 0);
  runs.read_rows(0, 0, 256, 16384, 4);
  for (int k = 0; k < 4; ++k) rows.read(0, std::uint64_t(16384 * k), 256);
  CHECK(runs.preds() == rows.preds());
  CHECK(runs.preds() == std::vector<std::uint32_t>{0});
}

TEST_CASE("a region splits into its contiguous runs, outermost axis first", "[deps]") {
  // A [2, 3, 4] window whose axes are stored transposed (strides 8, 64, 1: axis 1 outermost).
  GlobalRegion r;
  r.buffer = 0;
  r.dtype = pypto::compiler::DType::kFp32;
  r.offset_elems = 2;
  r.rank = 3;
  r.shape[0] = 2;
  r.shape[1] = 3;
  r.shape[2] = 4;
  r.stride[0] = 8;
  r.stride[1] = 64;
  r.stride[2] = 1;
  std::vector<std::uint64_t> offs;
  for_each_segment(r, [&](std::uint64_t off, std::uint64_t bytes) {
    CHECK(bytes == 16);
    offs.push_back(off);
  });
  CHECK(offs == std::vector<std::uint64_t>{8, 40, 264, 296, 520, 552});
  std::vector<std::int64_t> calls;
  for_each_segment_run(
      r, [&](std::uint64_t off, std::uint64_t, std::int64_t pitch, std::int64_t count) {
        calls.insert(calls.end(), {std::int64_t(off), pitch, count});
      });
  CHECK(calls == std::vector<std::int64_t>{8, 32, 2, 264, 32, 2, 520, 32, 2});
  // Equal strides keep their order (stable): axis 0 stays outside axis 1.
  r.stride[0] = 64;
  offs.clear();
  for_each_segment(r, [&](std::uint64_t off, std::uint64_t) { offs.push_back(off); });
  CHECK(offs == std::vector<std::uint64_t>{8, 264, 520, 264, 520, 776});
}
