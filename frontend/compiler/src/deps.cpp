// SPDX-License-Identifier: Apache-2.0
// Exact byte-range dependency tracking. The address space of each buffer is cut into fixed
// chunks, each holding a small sorted partition into pieces (last writer, readers since).
// Chunks keep every lookup local (a tile row usually falls in one chunk), so 60,000 tasks
// of 64 rows take a fraction of a second, where one big ordered map would chase pointers
// through millions of nodes. Reader lists are persistent singly linked lists shared by
// the pieces a split leaves behind, so a split never copies a list. Reads of a buffer not
// written yet (a kernel's inputs) are only logged, a tile's rows in one entry: they enter
// the chunks, in their order, at the buffer's first write, and never when none comes.
#include "deps.h"

#include <algorithm>
#include <string>

#include "pypto/common/errors.h"

namespace pypto::compiler::detail {

DepTracker::DepTracker(const std::vector<std::uint64_t>& buffer_bytes) {
  chunk_of_.resize(buffer_bytes.size());
  for (std::size_t b = 0; b < buffer_bytes.size(); ++b) {
    chunk_of_[b].assign((buffer_bytes[b] + kChunkBytes - 1) / kChunkBytes, -1);
  }
  written_.assign(buffer_bytes.size(), 0);
  pending_.resize(buffer_bytes.size());
}

void DepTracker::begin_task(std::uint32_t task, std::uint32_t device_task) {
  NPU_CHECK(task == device_task_of_.size(), "DepTracker: tasks must be dense and in order");
  cur_ = task;
  cur_dt_ = device_task;
  device_task_of_.push_back(device_task);
  seen_.push_back(0);
  preds_.clear();
}

void DepTracker::add_pred(std::uint32_t t) {
  if (t == cur_ || device_task_of_[t] != cur_dt_ || seen_[t] == cur_ + 1) return;
  seen_[t] = cur_ + 1;
  preds_.push_back(t);
}

DepTracker::Pieces& DepTracker::chunk(std::uint32_t buffer, std::uint64_t index,
                                      std::uint32_t bytes) {
  std::int32_t& c = chunk_of_[buffer][index];
  if (c < 0) {
    c = static_cast<std::int32_t>(chunks_.size());
    // A chunk first cut by a tile row is usually cut by the rows of the tiles beside it:
    // its pieces in one allocation, made in the order the chunks are first touched (so the
    // next task's rows find theirs near each other), not a reallocation per doubling.
    Pieces& v = chunks_.emplace_back(&arena_);
    v.reserve(std::min(kChunkBytes / bytes + 1, kMaxFirstPieces));
    v.push_back(Piece{0, kNone, kNone});
  }
  return chunks_[c];
}

void DepTracker::access(std::uint32_t buffer, std::uint64_t offset, std::uint64_t bytes,
                        bool is_write) {
  if (bytes == 0) return;
  NPU_CHECK(buffer < chunk_of_.size() &&
                (offset + bytes + kChunkBytes - 1) / kChunkBytes <= chunk_of_[buffer].size(),
            "DepTracker: access [" + std::to_string(offset) + ", +" + std::to_string(bytes) +
                ") outside buffer " + std::to_string(buffer));
  if (!is_write && written_[buffer] == 0) {
    log_read(buffer, offset, bytes);
    return;
  }
  if (is_write && written_[buffer] == 0) {
    written_[buffer] = 1;
    replay_reads(buffer);
  }
  std::uint64_t pos = offset;
  const std::uint64_t end = offset + bytes;
  while (pos < end) {
    const std::uint64_t ci = pos / kChunkBytes;
    const std::uint64_t cbase = ci * kChunkBytes;
    const std::uint64_t cend = std::min<std::uint64_t>(end, cbase + kChunkBytes);
    access_chunk(chunk(buffer, ci, static_cast<std::uint32_t>(cend - pos)),
                 static_cast<std::uint32_t>(pos - cbase), static_cast<std::uint32_t>(cend - cbase),
                 is_write);
    pos = cend;
  }
}

void DepTracker::replay_reads(std::uint32_t buffer) {
  std::vector<PendingReads> log;
  log.swap(pending_[buffer]);
  const std::uint32_t task = cur_, dt = cur_dt_;
  for (const PendingReads& e : log) {
    cur_ = e.task;
    cur_dt_ = device_task_of_[e.task];
    for (std::uint32_t k = 0; k < e.count; ++k) {
      access(buffer, e.offset + static_cast<std::uint64_t>(e.pitch * k), e.bytes, false);
    }
  }
  cur_ = task;
  cur_dt_ = dt;
}

void DepTracker::access_chunk(Pieces& p, std::uint32_t a, std::uint32_t b, bool is_write) {
  // Piece i covers [p[i].begin, p[i+1].begin); find the one holding a, split at a and b.
  // Tiles walk a row left to right, so the last piece is the usual one: no search for it.
  std::size_t i = p.size() - 1;
  if (a < p[i].begin) {
    auto it = std::upper_bound(p.begin(), p.end(), a,
                               [](std::uint32_t x, const Piece& q) { return x < q.begin; });
    i = static_cast<std::size_t>(it - p.begin()) - 1;
  }
  if (p[i].begin < a) {
    Piece q = p[i];
    q.begin = a;
    p.insert(p.begin() + static_cast<std::ptrdiff_t>(i) + 1, q);
    ++i;
  }
  std::size_t j = i;
  while (j + 1 < p.size() && p[j + 1].begin < b) ++j;
  const std::uint32_t j_end = j + 1 < p.size() ? p[j + 1].begin : kChunkBytes;
  if (j_end > b) {
    Piece q = p[j];
    q.begin = b;
    p.insert(p.begin() + static_cast<std::ptrdiff_t>(j) + 1, q);
  }
  if (!is_write) {
    for (std::size_t k = i; k <= j; ++k) {
      Piece& q = p[k];
      if (q.writer != kNone) add_pred(q.writer);
      if (q.readers != kNone && nodes_[q.readers].task == cur_) continue;
      // A list from an earlier device task holds nothing a later writer must wait for.
      std::uint32_t next = q.readers;
      if (next != kNone && device_task_of_[nodes_[next].task] != cur_dt_) next = kNone;
      nodes_.push_back(Node{cur_, next, 0});
      q.readers = static_cast<std::uint32_t>(nodes_.size() - 1);
    }
    return;
  }
  for (std::size_t k = i; k <= j; ++k) {
    const Piece& q = p[k];
    if (q.writer != kNone) add_pred(q.writer);
    for (std::uint32_t n = q.readers; n != kNone; n = nodes_[n].next) {
      Node& node = nodes_[n];
      // Lists are newest first: once a node is older than this device task or was walked
      // by this writer already, so is everything after it.
      if (node.walked == cur_ + 1 || device_task_of_[node.task] != cur_dt_) break;
      node.walked = cur_ + 1;
      add_pred(node.task);
    }
  }
  p[i] = Piece{a, cur_, kNone};
  p.erase(p.begin() + static_cast<std::ptrdiff_t>(i) + 1,
          p.begin() + static_cast<std::ptrdiff_t>(j) + 1);
}

}  // namespace pypto::compiler::detail
