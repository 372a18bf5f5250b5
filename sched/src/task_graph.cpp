// SPDX-License-Identifier: Apache-2.0
#include "pypto/sched/task_graph.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "pypto/common/errors.h"

namespace pypto::sched {

namespace {

template <class T>
std::size_t column_bytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}

std::string task_name(std::uint32_t orig_id, std::uint32_t seq) {
  return "task " + std::to_string(orig_id) + " (seqNo " + std::to_string(seq) + ")";
}

// Applies a permutation to a column: out[new_pos[t]] = in[t].
template <class T>
void permute(std::vector<T>& col, const std::vector<common::TaskId>& new_pos) {
  std::vector<T> out(col.size());
  for (std::size_t t = 0; t < col.size(); ++t) out[new_pos[t]] = col[t];
  col.swap(out);
}

// Permutes a CSR (offsets of size n+1 plus payload) so that row t moves to new_pos[t].
template <class T, class Fn>
void permute_csr(std::vector<std::uint32_t>& begin, std::vector<T>& payload,
                 const std::vector<common::TaskId>& new_pos, Fn&& map_item) {
  const std::size_t n = begin.size() - 1;
  std::vector<std::uint32_t> new_begin(n + 1, 0);
  for (std::size_t t = 0; t < n; ++t) new_begin[new_pos[t] + 1] = begin[t + 1] - begin[t];
  for (std::size_t i = 0; i < n; ++i) new_begin[i + 1] += new_begin[i];
  std::vector<T> out(payload.size());
  for (std::size_t t = 0; t < n; ++t) {
    std::uint32_t w = new_begin[new_pos[t]];
    for (std::uint32_t e = begin[t]; e < begin[t + 1]; ++e) out[w++] = map_item(payload[e]);
  }
  begin.swap(new_begin);
  payload.swap(out);
}

std::string back_edge_message(std::uint32_t orig_t, std::uint32_t seq_t, std::uint32_t orig_s,
                              std::uint32_t seq_s) {
  return task_name(orig_t, seq_t) + ": successor task " + std::to_string(orig_s) +
         " is in device task seqNo " + std::to_string(seq_s) +
         ", which runs earlier; an edge may only lead to the same or a later device task";
}

// Kahn's check over n tasks whose successor ranges are [begin[i], begin[i + 1]) in succ,
// naming task i as succ id base + i. Returns a dependency cycle (local indices, along the
// edges, from its smallest task), or nothing when there is none. The graph's cycle, one
// device task's, and the same for both (edges never leave a device task).
std::vector<common::TaskId> find_cycle(const std::uint32_t* begin, const common::TaskId* succ,
                                       const std::uint32_t* pred_count, std::size_t n,
                                       common::TaskId base) {
  std::vector<std::uint32_t> remaining(pred_count, pred_count + n);
  {
    std::vector<common::TaskId> queue;
    queue.reserve(n);
    for (std::size_t t = 0; t < n; ++t) {
      if (remaining[t] == 0) queue.push_back(common::TaskId(t));
    }
    for (std::size_t head = 0; head < queue.size(); ++head) {
      const common::TaskId t = queue[head];
      for (std::uint32_t e = begin[t]; e < begin[t + 1]; ++e) {
        if (--remaining[succ[e] - base] == 0) queue.push_back(succ[e] - base);
      }
    }
    if (queue.size() == n) return {};
  }
  // Every unfinished task has an unfinished predecessor, so walking predecessors among
  // them must revisit a task: the walk from there on is a cycle.
  std::vector<std::uint32_t> pred_begin(n + 1, 0);
  for (std::size_t t = 0; t < n; ++t) {
    if (remaining[t] == 0) continue;
    for (std::uint32_t e = begin[t]; e < begin[t + 1]; ++e) {
      if (remaining[succ[e] - base] != 0) ++pred_begin[succ[e] - base + 1];
    }
  }
  for (std::size_t i = 0; i < n; ++i) pred_begin[i + 1] += pred_begin[i];
  std::vector<common::TaskId> preds(pred_begin[n]);
  {
    std::vector<std::uint32_t> fill(pred_begin.begin(), pred_begin.end() - 1);
    for (std::size_t t = 0; t < n; ++t) {
      if (remaining[t] == 0) continue;
      for (std::uint32_t e = begin[t]; e < begin[t + 1]; ++e) {
        if (remaining[succ[e] - base] != 0) preds[fill[succ[e] - base]++] = common::TaskId(t);
      }
    }
  }
  common::TaskId cur = 0;
  while (remaining[cur] == 0) ++cur;
  std::vector<std::uint32_t> step(n, common::kNoTask);
  std::vector<common::TaskId> walk;
  while (step[cur] == common::kNoTask) {
    step[cur] = static_cast<std::uint32_t>(walk.size());
    walk.push_back(cur);
    NPU_CHECK(pred_begin[cur] != pred_begin[cur + 1], "cycle walk lost its way");
    cur = preds[pred_begin[cur]];
  }
  // walk[step[cur]..] lists the cycle against the edge direction; return it along the
  // edges, starting from its smallest task.
  std::vector<common::TaskId> cycle(walk.begin() + step[cur], walk.end());
  std::reverse(cycle.begin(), cycle.end());
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  return cycle;
}

// "dependency cycle in seqNo 0: task 3 -> task 5 -> task 3"; orig_of(i) is the id the
// source gave cycle task i.
template <class OrigOf>
std::string cycle_message(std::uint32_t seq, const std::vector<common::TaskId>& cycle,
                          OrigOf&& orig_of) {
  std::string msg = "dependency cycle in seqNo " + std::to_string(seq) + ": ";
  // A long cycle is abbreviated: its start and end locate it well enough.
  constexpr std::size_t kHead = 8, kTail = 3;
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    if (cycle.size() > kHead + kTail + 1 && i == kHead) {
      msg += "... (" + std::to_string(cycle.size() - kHead - kTail) + " more tasks) -> ";
      i = cycle.size() - kTail - 1;
      continue;
    }
    msg += "task " + std::to_string(orig_of(cycle[i])) + " -> ";
  }
  return msg + "task " + std::to_string(orig_of(cycle[0]));
}

}  // namespace

std::size_t TaskGraph::memory_bytes() const {
  std::size_t b = sizeof(TaskGraph);
  for_each_column([&](const auto& col) { b += column_bytes(col); });
  b += column_bytes(device_tasks) + column_bytes(kernel_names);
  for (const auto& k : kernel_names) b += k.capacity();
  return b + source.capacity();
}

std::uint32_t TaskGraphBuilder::kernel_index(const std::string& name) {
  auto it = kernel_lookup_.find(name);
  if (it != kernel_lookup_.end()) return it->second;
  const auto idx = static_cast<std::uint32_t>(g_.kernel_names.size());
  g_.kernel_names.push_back(name);
  kernel_lookup_.emplace(name, idx);
  return idx;
}

void TaskGraphBuilder::add_memory(const MemAccess& m) {
  start_memory();
  g_.mem.push_back(m);
}

void TaskGraphBuilder::start_memory() {
  NPU_CHECK(n_ != 0, "add_memory() before the first add_task()");
  // The memory CSR is created lazily so that graphs without memory information cost
  // nothing: every task before the first one with memory has an empty range at 0 (the
  // slots past n_ are overwritten by add_task).
  if (g_.mem_begin.empty()) {
    // As reserved for the tasks, plus finish()'s end offset.
    g_.mem_begin.reserve(g_.core_type.capacity() + 1);
    g_.mem_begin.assign(sized_, 0);
  }
}

void TaskGraphBuilder::grow_memory(const MemAccess* first, std::size_t n) {
  g_.mem.insert(g_.mem.end(), first, first + n);
}

void TaskGraphBuilder::start_recorded_starts() {
  g_.recorded_start_ps.reserve(g_.core_type.capacity());  // as reserved for the tasks
  g_.recorded_start_ps.assign(sized_, common::kNever);
}

namespace {
// Calls f(column) for each per-task column the builder writes by index (the lazy ones
// when present): the columns grow_tasks() sizes ahead and trim() trims.
template <class F>
void for_each_task_slot_column(TaskGraph& g, std::vector<std::uint32_t>& seq,
                               std::vector<std::uint32_t>& group, F&& f) {
  f(g.core_type);
  f(g.root);
  f(g.kernel);
  f(g.orig_id);
  f(g.recorded_ns);
  f(g.compute_cycles);
  f(g.tiles);
  f(g.succ_begin);
  f(seq);
  f(group);
  if (!g.mem_begin.empty()) f(g.mem_begin);
  if (!g.recorded_start_ps.empty()) f(g.recorded_start_ps);
}
}  // namespace

void TaskGraphBuilder::grow_tasks() {
  NPU_CHECK(n_ < common::kNoTask, "task graph holds at most 2^32-1 tasks");
  // Small blocks: the slots are zero-filled first, and a fill this short is a few vector
  // stores where a large one is a byte-counted string store. Past the capacity, resize
  // doubles.
  std::size_t want = std::min<std::size_t>(n_ + kTaskBlock, common::kNoTask);
  // The last block stops at a reader's reservation rather than growing past it.
  const std::size_t reserved = g_.core_type.capacity();
  if (n_ < reserved && reserved < want) want = reserved;
  // The builder's own columns follow the reservation a reader made for the graph's
  // (reserve_task_columns), rather than doubling their way up to it.
  if (seq_of_task_.capacity() < g_.core_type.capacity()) {
    seq_of_task_.reserve(g_.core_type.capacity());
    group_of_task_.reserve(g_.core_type.capacity());
  }
  // Absent lazy columns start at sized_ slots when they start (start_memory).
  for_each_task_slot_column(g_, seq_of_task_, group_of_task_, [&](auto& col) { col.resize(want); });
  sized_ = want;
}

void TaskGraphBuilder::trim() {
  if (sized_ == n_) return;
  for_each_task_slot_column(g_, seq_of_task_, group_of_task_, [&](auto& col) { col.resize(n_); });
  sized_ = n_;
}

TaskGraph TaskGraphBuilder::finish(std::vector<common::TaskId>* moved) {
  trim();
  TaskGraph& g = g_;
  const std::size_t n = n_;
  NPU_CHECK(g.succ.size() <= 0xFFFFFFFFull, "task graph holds at most 2^32-1 edges");
  NPU_CHECK(g.mem.size() <= 0xFFFFFFFFull, "task graph holds at most 2^32-1 memory ranges");
  g.succ_begin.push_back(static_cast<std::uint32_t>(g.succ.size()));
  if (!g.mem_begin.empty()) g.mem_begin.push_back(static_cast<std::uint32_t>(g.mem.size()));

  // 1. Every successor must name a task. The largest is found in one pass (it vectorizes);
  // only a graph with one out of range is searched task by task for the first.
  common::TaskId max_succ = 0;
  for (const common::TaskId s : g.succ) max_succ = std::max(max_succ, s);
  for (std::size_t t = 0; !g.succ.empty() && max_succ >= n && t < n; ++t) {
    for (std::uint32_t e = g.succ_begin[t]; e < g.succ_begin[t + 1]; ++e) {
      if (g.succ[e] >= n) {
        throw TraceError(task_name(g.orig_id[t], seq_of_task_[t]) + ": successor " +
                         std::to_string(g.succ[e]) + " is not a task of the trace");
      }
    }
  }

  // 2. Group index per task, in first-appearance order of the device-task key. Consecutive
  // tasks almost always share a key, so the hash map is consulted only on a change.
  std::vector<std::uint32_t> group_seq;         // key per group
  std::vector<std::uint32_t> group_pg;          // parallel group per group
  std::vector<std::uint32_t> group_first_task;  // orig id of the first task, for messages
  g.device_task.resize(n);
  {
    std::unordered_map<std::uint32_t, std::uint32_t> group_of_seq;
    std::uint32_t last_seq = 0, last_group = common::kNoTask;
    for (std::size_t t = 0; t < n; ++t) {
      const std::uint32_t seq = seq_of_task_[t];
      if (last_group == common::kNoTask || seq != last_seq) {
        auto [it, inserted] =
            group_of_seq.emplace(seq, static_cast<std::uint32_t>(group_seq.size()));
        if (inserted) {
          group_seq.push_back(seq);
          group_pg.push_back(group_of_task_[t]);
          group_first_task.push_back(g.orig_id[t]);
        }
        last_seq = seq;
        last_group = it->second;
      }
      if (group_of_task_[t] != group_pg[last_group]) {
        throw TraceError("device task seqNo " + std::to_string(seq) + " mixes parallel groups " +
                         std::to_string(group_pg[last_group]) + " (task " +
                         std::to_string(group_first_task[last_group]) + ") and " +
                         std::to_string(group_of_task_[t]) + " (task " +
                         std::to_string(g.orig_id[t]) + "); a device task belongs to one group");
      }
      g.device_task[t] = last_group;
    }
  }
  std::vector<std::uint32_t>().swap(seq_of_task_);
  std::vector<std::uint32_t>().swap(group_of_task_);

  // 3. Stable counting sort by group when the groups interleave.
  if (moved != nullptr) moved->clear();
  if (!std::is_sorted(g.device_task.begin(), g.device_task.end())) {
    std::vector<common::TaskId> new_pos(n);
    {
      std::vector<std::uint32_t> next(group_seq.size() + 1, 0);
      for (std::size_t t = 0; t < n; ++t) ++next[g.device_task[t] + 1];
      for (std::size_t i = 0; i + 1 < next.size(); ++i) next[i + 1] += next[i];
      for (std::size_t t = 0; t < n; ++t) new_pos[t] = next[g.device_task[t]]++;
    }
    permute(g.core_type, new_pos);
    permute(g.device_task, new_pos);
    permute(g.root, new_pos);
    permute(g.kernel, new_pos);
    permute(g.orig_id, new_pos);
    permute(g.recorded_ns, new_pos);
    if (!g.recorded_start_ps.empty()) permute(g.recorded_start_ps, new_pos);
    permute(g.compute_cycles, new_pos);
    permute(g.tiles, new_pos);
    permute_csr(g.succ_begin, g.succ, new_pos, [&](common::TaskId s) { return new_pos[s]; });
    if (!g.mem_begin.empty()) {
      permute_csr(g.mem_begin, g.mem, new_pos, [](const MemAccess& m) { return m; });
    }
    if (moved != nullptr) *moved = std::move(new_pos);
  }

  // 4. Keep edges inside a device task; drop edges into later ones (device tasks run one
  // after another, so they are satisfied anyway); an edge back in time cannot be honoured.
  // Whether every edge kept goes to a later task (writers number tasks in order): such a
  // graph has no cycle, and the check below is skipped.
  bool forward = true;
  {
    std::uint32_t w = 0;
    for (std::size_t t = 0; t < n; ++t) {
      const std::uint32_t begin = g.succ_begin[t], end = g.succ_begin[t + 1];
      g.succ_begin[t] = w;
      const std::uint32_t dt = g.device_task[t];
      for (std::uint32_t e = begin; e < end; ++e) {
        const common::TaskId s = g.succ[e];
        const std::uint32_t ds = g.device_task[s];
        if (ds == dt) {
          g.succ[w++] = s;
          forward = forward && s > t;
        } else if (ds < dt) {
          throw TraceError(
              back_edge_message(g.orig_id[t], group_seq[dt], g.orig_id[s], group_seq[ds]));
        }
      }
    }
    g.succ_begin[n] = w;
    g.succ.resize(w);
  }

  // 5. Predecessor counts.
  g.pred_count.assign(n, 0);
  for (const common::TaskId s : g.succ) ++g.pred_count[s];

  // 6. Device tasks.
  g.device_tasks.assign(group_seq.size(), DeviceTask{});
  for (std::size_t d = 0; d < group_seq.size(); ++d) {
    g.device_tasks[d].seq_no = group_seq[d];
    g.device_tasks[d].parallel_group = group_pg[d];
  }
  for (std::size_t t = n; t-- > 0;) g.device_tasks[g.device_task[t]].first_task = common::TaskId(t);
  for (std::size_t t = 0; t < n; ++t) {
    DeviceTask& d = g.device_tasks[g.device_task[t]];
    ++d.num_tasks;
    ++d.count[static_cast<int>(g.core_type[t])];
  }
  {
    // Distinct roots per device task. Roots are dense in practice, so a "last device task
    // seen" array indexed by root does it in O(n); sparse ids fall back to a hash set.
    const std::uint32_t max_root = n ? *std::max_element(g.root.begin(), g.root.end()) : 0;
    if (max_root <= 4 * n + 1024) {
      std::vector<std::uint32_t> seen(std::size_t(max_root) + 1, common::kNoTask);
      for (std::size_t t = 0; t < n; ++t) {
        const std::uint32_t d = g.device_task[t];
        if (seen[g.root[t]] != d) {
          seen[g.root[t]] = d;
          ++g.device_tasks[d].num_roots;
        }
      }
    } else {
      std::unordered_set<std::uint64_t> seen;
      for (std::size_t t = 0; t < n; ++t) {
        const std::uint64_t key = (std::uint64_t(g.device_task[t]) << 32) | g.root[t];
        if (seen.insert(key).second) ++g.device_tasks[g.device_task[t]].num_roots;
      }
    }
  }

  // 7. Cycle check (Kahn). Edges never leave a device task, so one pass over the whole
  // graph finds the cycle of the first device task that has one, as one per device task would.
  if (!forward) {
    const std::vector<common::TaskId> cycle =
        find_cycle(g.succ_begin.data(), g.succ.data(), g.pred_count.data(), n, 0);
    if (!cycle.empty()) {
      throw TraceError(cycle_message(group_seq[g.device_task[cycle[0]]], cycle,
                                     [&](common::TaskId t) { return g.orig_id[t]; }));
    }
  }

  TaskGraph out = std::move(g_);
  g_ = TaskGraph{};
  n_ = sized_ = 0;
  kernel_lookup_.clear();
  return out;
}

std::string describe_task(const TaskGraph& g, common::TaskId t) {
  return task_name(g.orig_id[t], g.device_tasks[g.device_task[t]].seq_no);
}

}  // namespace pypto::sched
