// SPDX-License-Identifier: Apache-2.0
// Private to the compiler: exact memory dependencies between leaf tasks. Tasks are fed in
// program order with the byte ranges they read and write; the tracker remembers, per byte
// range of every buffer, the last writer and the readers since that write, and reports
// RAW (reader after writer), WAR (writer after readers) and WAW (writer after writer)
// predecessors. Only predecessors in the same device task are reported: device tasks run
// one after another, so edges between them are never needed.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory_resource>
#include <vector>

#include "pypto/compiler/program.h"

namespace pypto::compiler::detail {

// Calls f(first_byte_offset, bytes, pitch_bytes, count) for every row of maximal contiguous
// runs of bytes the region covers: `count` runs of `bytes` at first + k * pitch (a tile's
// rows in one call), in the order for_each_segment() gives them. Nothing for an empty region.
template <class F>
void for_each_segment_run(const GlobalRegion& r, F&& f) {
  struct Axis {
    std::int64_t extent;
    std::int64_t stride;
  };
  std::array<Axis, kMaxRank> ax{};
  int n = 0;
  for (int k = 0; k < r.rank; ++k) {
    if (r.shape[k] <= 0) return;                        // empty region
    if (r.shape[k] == 1 || r.stride[k] == 0) continue;  // the same bytes again
    ax[n++] = Axis{r.shape[k], r.stride[k]};
  }
  // Outermost (largest stride) first, then merge axes that continue each other. An insertion
  // sort: stable like std::stable_sort, without its scratch allocation (at most 4 axes).
  for (int k = 1; k < n; ++k) {
    const Axis a = ax[k];
    int j = k;
    for (; j > 0 && ax[j - 1].stride < a.stride; --j) ax[j] = ax[j - 1];
    ax[j] = a;
  }
  int m = 0;
  for (int k = 0; k < n; ++k) {
    if (m > 0 && ax[m - 1].stride == ax[k].extent * ax[k].stride) {
      ax[m - 1] = Axis{ax[m - 1].extent * ax[k].extent, ax[k].stride};
    } else {
      ax[m++] = ax[k];
    }
  }
  const std::uint64_t es = model::dtype_bytes(r.dtype);
  std::int64_t run = 1;  // elements per segment
  int outer = m;
  if (m > 0 && ax[m - 1].stride == 1) {
    run = ax[m - 1].extent;
    outer = m - 1;
  }
  const std::uint64_t bytes = static_cast<std::uint64_t>(run) * es;
  if (outer == 0) {
    f(static_cast<std::uint64_t>(r.offset_elems) * es, bytes, std::int64_t{0}, std::int64_t{1});
    return;
  }
  // The innermost outer axis is the rows of a call; the axes outside it are walked here.
  const int rows = outer - 1;
  const auto pitch = static_cast<std::int64_t>(static_cast<std::uint64_t>(ax[rows].stride) * es);
  std::array<std::int64_t, kMaxRank> idx{};
  while (true) {
    std::int64_t off = r.offset_elems;
    for (int k = 0; k < rows; ++k) off += idx[k] * ax[k].stride;
    f(static_cast<std::uint64_t>(off) * es, bytes, pitch, ax[rows].extent);
    int k = rows - 1;
    while (k >= 0 && ++idx[k] == ax[k].extent) idx[k--] = 0;
    if (k < 0) break;
  }
}

// Calls f(byte_offset, bytes) for every maximal contiguous run of bytes the region covers
// (rows of the region after dropping broadcast and size-1 axes and merging contiguous
// axes), in increasing address order for row-major regions. Nothing for an empty region.
template <class F>
void for_each_segment(const GlobalRegion& r, F&& f) {
  for_each_segment_run(
      r, [&](std::uint64_t first, std::uint64_t bytes, std::int64_t pitch, std::int64_t count) {
        for (std::int64_t i = 0; i < count; ++i) {
          f(first + static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(pitch), bytes);
        }
      });
}

// Calls f(first_byte_offset, bytes, burst_bytes, pitch_bytes, count) for every row of ranges
// (as for_each_segment_run() gives them) access `x` moves between GM and a core: the region's
// contiguous runs (for_each_segment) with its burst size; for a cube operand of an NZ parameter,
// the runs of the fractal layout instead (column blocks of C0 = 32 bytes, each laid out over all
// rows of the matrix: a tile moves one run of its rows x C0 per column block it covers), when the
// region is a row-major window of that matrix.
template <class A, class F>
void moved_runs(const A& x, F&& f) {
  const GlobalRegion& r = x.r;
  const std::int64_t es = model::dtype_bytes(r.dtype);
  const std::int64_t c0 = es <= 32 ? 32 / es : 1, R = x.nz_rows, C = x.nz_cols;
  int row_ax = -1, col_ax = -1;
  if (R > 0 && C > 0 && C % c0 == 0 && r.rank >= 2) {
    for (int k = 0; k < r.rank; ++k) {
      if (r.shape[k] <= 1) continue;
      if (r.stride[k] == 1 && col_ax < 0) {
        col_ax = k;
      } else if (r.stride[k] == C && row_ax < 0) {
        row_ax = k;
      } else {
        col_ax = row_ax = -2;  // another axis: not a window of one matrix
        break;
      }
    }
  }
  if (row_ax == -2 || col_ax == -2 || (row_ax < 0 && col_ax < 0)) {
    for_each_segment_run(
        r, [&](std::uint64_t first, std::uint64_t bytes, std::int64_t pitch, std::int64_t count) {
          f(first, bytes, x.burst_bytes, pitch, count);
        });
    return;
  }
  const std::int64_t tr = row_ax >= 0 ? r.shape[row_ax] : 1, tc = col_ax >= 0 ? r.shape[col_ax] : 1;
  const std::int64_t matrix = R * C, base = r.offset_elems - r.offset_elems % matrix;
  const std::int64_t in = r.offset_elems % matrix, r0 = in / C, col0 = in % C;
  for (std::int64_t jb = col0 / c0; jb <= (col0 + tc - 1) / c0; ++jb) {
    const std::int64_t start = base + jb * R * c0 + r0 * c0;
    f(static_cast<std::uint64_t>(start * es), static_cast<std::uint64_t>(tr * c0 * es), 0u,
      std::int64_t{0}, std::int64_t{1});
  }
}

// Calls f(byte_offset, bytes, burst_bytes) for every range access `x` moves between GM and a
// core, one at a time (moved_runs()).
template <class A, class F>
void moved_ranges(const A& x, F&& f) {
  moved_runs(x, [&](std::uint64_t first, std::uint64_t bytes, std::uint32_t burst,
                    std::int64_t pitch, std::int64_t count) {
    for (std::int64_t i = 0; i < count; ++i) {
      f(first + static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(pitch), bytes, burst);
    }
  });
}

// Hidden: its calls within the Python module then go direct and may inline, not through the
// PLT an exported symbol of position-independent code takes (millions of accesses a launch).
class __attribute__((visibility("hidden"))) DepTracker {
 public:
  // buffer_bytes[i]: size of buffer i; accesses must stay inside it.
  explicit DepTracker(const std::vector<std::uint64_t>& buffer_bytes);

  // Starts task `task` (ids strictly increasing) of device task `device_task` (non-decreasing).
  void begin_task(std::uint32_t task, std::uint32_t device_task);
  // Record an access of the current task; reads of a task must come before its writes.
  // The common cases (a read of a buffer not written yet, a write at the end of a chunk's
  // untouched tail) are inline: a tile makes one call per row.
  void read(std::uint32_t buffer, std::uint64_t offset, std::uint64_t bytes) {
    if (inside(buffer, offset, bytes) && written_[buffer] == 0) {
      log_read(buffer, offset, bytes);
    } else {
      access(buffer, offset, bytes, false);
    }
  }
  void write(std::uint32_t buffer, std::uint64_t offset, std::uint64_t bytes) {
    if (!inside(buffer, offset, bytes) || written_[buffer] == 0 ||
        !write_at_tail(chunk_of_[buffer].data(), offset, bytes)) {
      access(buffer, offset, bytes, true);
    }
  }
  // read() / write() of `count` rows of `bytes` at offset + k * pitch, k = 0, 1, ... in turn
  // (a tile's rows, as for_each_segment_run() gives them; pitch >= 0). A read of a buffer not
  // written yet is one log entry for all its rows.
  void read_rows(std::uint32_t buffer, std::uint64_t offset, std::uint64_t bytes,
                 std::int64_t pitch, std::int64_t count) {
    if (count > 1 && pitch >= 0 && count <= 0xFFFFFFFF && written_.size() > buffer &&
        written_[buffer] == 0 &&
        inside(buffer, offset + static_cast<std::uint64_t>(pitch) * (count - 1), bytes) &&
        inside(buffer, offset, bytes)) {
      log_reads(buffer, offset, bytes, pitch, static_cast<std::uint32_t>(count));
      return;
    }
    for (std::int64_t k = 0; k < count; ++k) {
      read(buffer, offset + static_cast<std::uint64_t>(pitch * k), bytes);
    }
  }
  // A write run inside the buffer is checked once: after its first row the buffer counts
  // as written, so each row only tries the tail write before the general access().
  void write_rows(std::uint32_t buffer, std::uint64_t offset, std::uint64_t bytes,
                  std::int64_t pitch, std::int64_t count) {
    std::uint64_t span = 0;  // offset of the last row from the first; no wrap: all rows inside
    if (count > 1 && pitch >= 0 && written_.size() > buffer &&
        !__builtin_mul_overflow(static_cast<std::uint64_t>(pitch),
                                static_cast<std::uint64_t>(count - 1), &span) &&
        offset + span >= offset && inside(buffer, offset + span, bytes) &&
        inside(buffer, offset, bytes)) {
      std::int64_t k = 0;
      if (written_[buffer] == 0) {
        access(buffer, offset, bytes, true);  // marks it written, replays its logged reads
        k = 1;
      }
      const std::int32_t* const chunk_of = chunk_of_[buffer].data();
      for (; k < count; ++k) {
        const std::uint64_t off = offset + static_cast<std::uint64_t>(pitch * k);
        if (!write_at_tail(chunk_of, off, bytes)) access(buffer, off, bytes, true);
      }
      return;
    }
    for (std::int64_t k = 0; k < count; ++k) {
      write(buffer, offset + static_cast<std::uint64_t>(pitch * k), bytes);
    }
  }
  // write_rows() or read_rows(), as the access is a write or a read.
  void rows(bool is_write, std::uint32_t buffer, std::uint64_t offset, std::uint64_t bytes,
            std::int64_t pitch, std::int64_t count) {
    if (is_write) {
      write_rows(buffer, offset, bytes, pitch, count);
    } else {
      read_rows(buffer, offset, bytes, pitch, count);
    }
  }
  // Predecessors of the current task found so far, each once.
  const std::vector<std::uint32_t>& preds() const { return preds_; }

 private:
  static constexpr std::uint32_t kChunkBytes = 8192;
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  static constexpr std::uint32_t kMaxFirstPieces = 64;  // most room a new chunk gets

  // The pieces of a chunk partition [0, kChunkBytes); piece i ends where piece i+1 begins.
  struct Piece {
    std::uint32_t begin;
    std::uint32_t writer;   // last writing task, or kNone
    std::uint32_t readers;  // head of the reader list (nodes_), or kNone
  };
  using Pieces = std::pmr::vector<Piece>;
  struct Node {
    std::uint32_t task;
    std::uint32_t next;
    std::uint32_t walked;  // task+1 of the last writer that walked this node
  };

  // Reads of a buffer nothing has written yet, in the order they came: each entry stands for
  // `count` reads of `bytes` at offset + k * pitch (a tile's rows) by one task.
  struct PendingReads {
    std::uint64_t offset;
    std::int64_t pitch;
    std::uint64_t bytes;
    std::uint32_t count;
    std::uint32_t task;
  };

  // Whether [offset, offset + bytes) is a non-empty range inside `buffer` (else access()
  // returns or throws).
  bool inside(std::uint32_t buffer, std::uint64_t offset, std::uint64_t bytes) const {
    return bytes != 0 && buffer < chunk_of_.size() &&
           (offset + bytes + kChunkBytes - 1) / kChunkBytes <= chunk_of_[buffer].size();
  }
  // Logs `count` reads of a buffer not written yet at `pitch` (see read_rows()): they join the
  // last entry when they continue it, so the log replays the same reads in the same order.
  void log_reads(std::uint32_t buffer, std::uint64_t offset, std::uint64_t bytes,
                 std::int64_t pitch, std::uint32_t count) {
    std::vector<PendingReads>& log = pending_[buffer];
    if (!log.empty()) {
      PendingReads& e = log.back();
      const auto step = static_cast<std::int64_t>(offset - e.offset);
      if (e.task == cur_ && e.bytes == bytes && count <= 0xFFFFFFFFu - e.count &&
          (e.count == 1 ? step == pitch : (e.pitch == pitch && step == pitch * e.count))) {
        e.pitch = pitch;
        e.count += count;
        return;
      }
    }
    log.push_back(PendingReads{offset, pitch, bytes, count, cur_});
  }
  // Logs a read of a buffer not written yet (see written_).
  void log_read(std::uint32_t buffer, std::uint64_t offset, std::uint64_t bytes) {
    // Tiles read a row at a time: consecutive rows of one task at one pitch share an entry.
    std::vector<PendingReads>& log = pending_[buffer];
    if (!log.empty()) {
      PendingReads& e = log.back();
      const auto step = static_cast<std::int64_t>(offset - e.offset);
      if (e.task == cur_ && e.bytes == bytes && (e.count == 1 || step == e.pitch * e.count)) {
        if (e.count == 1) e.pitch = step;
        ++e.count;
        return;
      }
    }
    log.push_back(PendingReads{offset, 0, bytes, 1, cur_});
  }
  // A write inside one existing chunk at or past the start of its last piece, which no task
  // has read or written: the tail splits at the range's ends with no predecessor to report,
  // as access_chunk() would do it. False (nothing done) for any other write. `chunk_of` is
  // the buffer's row of chunk_of_; the range is inside the buffer.
  bool write_at_tail(const std::int32_t* chunk_of, std::uint64_t offset, std::uint64_t bytes) {
    const std::uint64_t ci = offset / kChunkBytes;
    const std::uint64_t cbase = ci * kChunkBytes;
    if (offset + bytes > cbase + kChunkBytes) return false;
    const std::int32_t c = chunk_of[ci];
    if (c < 0) return false;
    Pieces& p = chunks_[static_cast<std::size_t>(c)];
    const auto a = static_cast<std::uint32_t>(offset - cbase);
    const auto b = static_cast<std::uint32_t>(a + bytes);
    const Piece& last = p.back();
    if (a < last.begin || last.writer != kNone || last.readers != kNone) return false;
    if (last.begin < a) p.push_back(Piece{a, kNone, kNone});
    p.back().writer = cur_;
    if (b < kChunkBytes) p.push_back(Piece{b, kNone, kNone});
    return true;
  }
  void access(std::uint32_t buffer, std::uint64_t offset, std::uint64_t bytes, bool is_write);
  void access_chunk(Pieces& pieces, std::uint32_t a, std::uint32_t b, bool is_write);
  // Applies the reads deferred on `buffer` as they would have been applied when they came
  // (before its first write: no writer to depend on, only reader lists to build).
  void replay_reads(std::uint32_t buffer);
  void add_pred(std::uint32_t t);
  // Chunk `index` of `buffer`; when new, with room for the pieces that accesses of
  // `bytes` (the first one's length within it) would cut it into.
  Pieces& chunk(std::uint32_t buffer, std::uint64_t index, std::uint32_t bytes);

  std::vector<std::vector<std::int32_t>> chunk_of_;  // per buffer: chunk index or -1
  // Per buffer: written yet. Until then its reads cannot find a writer, so they are only
  // logged (pending_) and enter the chunks at its first write, if one ever comes.
  std::vector<std::uint8_t> written_;
  std::vector<std::vector<PendingReads>> pending_;
  // The chunks' pieces come from arena_ and go with the tracker: declared first, it outlives
  // them. (A launch makes thousands of chunks: a heap allocation and a free each, else.)
  std::pmr::monotonic_buffer_resource arena_;
  std::vector<Pieces> chunks_;
  std::vector<Node> nodes_;
  std::vector<std::uint32_t> device_task_of_;  // per task seen
  std::vector<std::uint32_t> seen_;            // per task: cur_+1 when already a pred
  std::vector<std::uint32_t> preds_;
  std::uint32_t cur_ = 0, cur_dt_ = 0;
};

}  // namespace pypto::compiler::detail
