// SPDX-License-Identifier: Apache-2.0
#include "pypto/model/leaf_schedule.h"

#include <algorithm>
#include <utility>

namespace pypto::model {

namespace {

// The locals of one buffer that are allocated: those whose last reader has not been
// scheduled yet (their free time is unknown, so they count as held) and those whose free
// time is known.
struct BufferState {
  std::uint64_t held_bytes = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> freed;  // (free time, bytes)

  // Earliest time at or after 0 at which `bytes` more fit under cap. A request that cannot
  // fit even with every known local freed is not held back (see schedule_leaf).
  std::uint64_t room_at(std::uint64_t bytes, std::uint64_t cap) {
    if (held_bytes + bytes > cap) return 0;
    const std::uint64_t room = cap - held_bytes - bytes;
    std::uint64_t total = 0;
    for (const auto& f : freed) total += f.second;
    if (total <= room) return 0;
    std::sort(freed.begin(), freed.end());
    std::uint64_t t = 0;
    for (const auto& f : freed) {
      total -= f.second;
      t = f.first;
      if (total <= room) break;
    }
    return t;
  }

  // Drops locals freed at or before `t`: no later op starts before it.
  void prune(std::uint64_t t) {
    freed.erase(std::remove_if(
                    freed.begin(), freed.end(),
                    [t](const std::pair<std::uint64_t, std::uint64_t>& f) { return f.first <= t; }),
                freed.end());
  }
};

}  // namespace

LeafTiming schedule_leaf(const LeafProgram& p) {
  LeafTiming out;
  const std::size_t n_locals = p.local_bytes.size();
  const auto valid = [&](std::int32_t l) {
    return l >= 0 && static_cast<std::size_t>(l) < n_locals;
  };
  // Renaming: an op that writes a local without reading it starts a new instance of it, so
  // a tile reused for each K step or member double-buffers as far as its buffer allows.
  struct Use {
    std::int32_t dst = -1;
    std::int32_t src[3] = {-1, -1, -1};
  };
  std::vector<Use> uses(p.ops.size());
  std::vector<std::int32_t> inst_local;  // instance -> local
  std::vector<std::int32_t> cur(n_locals, -1);
  const auto instance_of = [&](std::int32_t l) {
    if (cur[l] < 0) {
      cur[l] = static_cast<std::int32_t>(inst_local.size());
      inst_local.push_back(l);
    }
    return cur[l];
  };
  std::array<bool, kNumLeafPipes> pipe_used{};
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const LeafOp& op = p.ops[i];
    pipe_used[static_cast<std::size_t>(op.pipe)] = true;
    bool reads_dst = false;
    for (int k = 0; k < 3; ++k) {
      if (!valid(op.src[k])) continue;
      uses[i].src[k] = instance_of(op.src[k]);
      reads_dst = reads_dst || op.src[k] == op.dst;
    }
    if (valid(op.dst)) {
      if (!reads_dst) cur[op.dst] = -1;
      uses[i].dst = instance_of(op.dst);
    }
  }
  const std::size_t n_inst = inst_local.size();
  std::vector<std::uint32_t> last_use(n_inst, 0);
  for (std::uint32_t i = 0; i < uses.size(); ++i) {
    if (uses[i].dst >= 0) last_use[uses[i].dst] = i;
    for (const std::int32_t s : uses[i].src) {
      if (s >= 0) last_use[s] = i;
    }
  }
  std::vector<std::uint64_t> write_end(n_inst, 0), read_end(n_inst, 0);
  std::vector<bool> allocated(n_inst, false), released(n_inst, false);
  std::array<std::uint64_t, kNumLeafPipes> pipe_free{};
  std::array<BufferState, kNumLeafBuffers> buffers{};
  const auto limited = [&](std::int32_t inst) {
    const auto b = static_cast<std::size_t>(p.local_buffer[inst_local[inst]]);
    return b != 0 && p.capacity_bytes[b] > 0 ? b : std::size_t{0};
  };
  for (std::uint32_t i = 0; i < p.ops.size(); ++i) {
    const LeafOp& op = p.ops[i];
    const Use& u = uses[i];
    const auto pipe = static_cast<std::size_t>(op.pipe);
    std::uint64_t start = pipe_free[pipe];
    for (const std::int32_t s : u.src) {
      if (s >= 0) start = std::max(start, write_end[s]);
    }
    if (u.dst >= 0) {
      start = std::max({start, write_end[u.dst], read_end[u.dst]});
      if (!allocated[u.dst]) {
        allocated[u.dst] = true;
        if (const std::size_t b = limited(u.dst)) {
          const std::uint64_t bytes = p.local_bytes[inst_local[u.dst]];
          start = std::max(start, buffers[b].room_at(bytes, p.capacity_bytes[b]));
          buffers[b].held_bytes += bytes;
        }
      }
    }
    const std::uint64_t end = start + op.cycles;
    pipe_free[pipe] = end;
    out.busy_cycles[pipe] += op.cycles;
    out.makespan_cycles = std::max(out.makespan_cycles, end);
    if (u.dst >= 0) write_end[u.dst] = end;
    for (const std::int32_t s : u.src) {
      if (s >= 0) read_end[s] = std::max(read_end[s], end);
    }
    // Instances this op used last are freed when their last access ends.
    const auto release = [&](std::int32_t inst) {
      if (inst < 0 || last_use[inst] != i || released[inst]) return;
      released[inst] = true;
      const std::size_t b = limited(inst);
      if (b == 0 || !allocated[inst]) return;
      const std::uint64_t bytes = p.local_bytes[inst_local[inst]];
      buffers[b].held_bytes -= bytes;
      buffers[b].freed.emplace_back(std::max(write_end[inst], read_end[inst]), bytes);
    };
    release(u.dst);
    for (const std::int32_t s : u.src) release(s);
    if ((i & 63) == 63) {
      std::uint64_t floor = ~std::uint64_t{0};
      for (std::size_t k = 0; k < kNumLeafPipes; ++k) {
        if (pipe_used[k]) floor = std::min(floor, pipe_free[k]);
      }
      for (BufferState& buf : buffers) buf.prune(floor);
    }
  }
  return out;
}

}  // namespace pypto::model
