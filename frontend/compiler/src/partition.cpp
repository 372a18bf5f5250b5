// SPDX-License-Identifier: Apache-2.0
// PyPTO's partitioning of a root instance (partition.h). The rules and constants are PyPTO's
// (framework/src/passes/tile_graph_pass/graph_partition/{iso_partitioner,n_buffer_merge,
// l1_copy_reuse}.cpp and interface/configs/tile_fwk_config.json), summarised in
// docs/partition.md with the example counts the tests work out.
#include "partition.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "deps.h"
#include "partition_breadth.h"
#include "partition_sets.h"
#include "pypto/common/errors.h"
#include "task_cost.h"

namespace pypto::compiler::detail {

namespace {

constexpr int kMergeRounds = 100;  // group-merge rounds of the Iso partitioner

std::uint64_t tile_bytes(const LocalTile& t) {
  std::uint64_t b = model::dtype_bytes(t.dtype);
  for (int k = 0; k < t.rank; ++k)
    b *= static_cast<std::uint64_t>(std::max<std::int64_t>(1, t.shape[k]));
  return b;
}

std::uint64_t task_signature(const TaskRec& t, const TaskProgram& p) {
  // PyPTO hashes an op by its opcode and its operands' memory types and dtypes, not shapes.
  std::uint64_t h = mix(static_cast<std::uint64_t>(t.core), t.kernel);
  for (const TileInstr& in : p.instrs) {
    h = mix(h, static_cast<std::uint64_t>(in.op));
    if (in.dst >= 0) h = mix(h, static_cast<std::uint64_t>(p.locals[in.dst].dtype));
  }
  return h;
}

class Partitioner {
 public:
  Partitioner(RootGraph& g, const RootInputs& in) : g_(g), in_(in), uf_(g.n) {
    std::uint64_t total = 0;
    for (const std::uint64_t l : g_.lat) total += l;
    budget_ = in_.opt.cycle_budget > 0 ? static_cast<std::uint64_t>(in_.opt.cycle_budget)
                                       : automatic_cycle_budget(total);
  }

  UnionFind& sets() { return uf_; }
  PartitionCounts counts;
  LeafHints hints;

  void run() {
    grow_groups();
    merge_groups();
    merge_scopes();
    breadth_merges();
  }

 private:
  // ---- 1. lock-step growth (BuildIsomorphismGroups / ExpandIsoGraphs) ----

  struct Group {
    common::CoreType core;
    bool scoped = false;  // sg_set_scope tasks: merged by their scope, by nothing else
    bool cross = false;   // scoped with allow_cross_scope_merge: group merges with unscoped ones
    std::vector<std::vector<std::uint32_t>> members;  // tasks of each member
    std::vector<std::uint64_t> lat;
  };

  void grow_groups() {
    std::unordered_map<std::uint64_t, std::uint32_t> class_id;
    class_of_.resize(g_.n);
    for (std::uint32_t t = 0; t < g_.n; ++t) {
      auto [it, inserted] =
          class_id.emplace(g_.sig[t], static_cast<std::uint32_t>(classes_.size()));
      if (inserted) classes_.emplace_back();
      class_of_[t] = it->second;
      classes_[it->second].push_back(t);
    }
    group_of_.assign(g_.n, kNone);
    member_of_.assign(g_.n, kNone);
    for (std::uint32_t t = 0; t < g_.n; ++t) {
      if (group_of_[t] != kNone) continue;
      const auto gi = static_cast<std::uint32_t>(groups_.size());
      Group grp;
      grp.core = g_.core[t];
      grp.scoped = g_.scope[t] >= 0;
      grp.cross = grp.scoped && (g_.scope_flags[t] & kSgCrossScopeMerge) != 0;
      for (const std::uint32_t m : classes_[class_of_[t]]) {
        NPU_CHECK(group_of_[m] == kNone, "partition: a class was split by lock-step growth");
        group_of_[m] = gi;
        member_of_[m] = static_cast<std::uint32_t>(grp.members.size());
        grp.members.push_back({m});
        grp.lat.push_back(g_.lat[m]);
      }
      const bool scoped = grp.scoped;
      groups_.push_back(std::move(grp));
      if (!scoped) grow(gi);
    }
  }

  // Absorbs, one whole class at a time, successors matched one to one with the members.
  void grow(std::uint32_t gi) {
    Group& grp = groups_[gi];
    const std::size_t k = grp.members.size();
    std::vector<std::uint32_t> frontier = grp.members[0];
    std::vector<std::uint32_t> tried;
    bool changed = true;
    while (changed) {
      changed = false;
      // Candidate classes: those of member 0's unplaced successors.
      std::vector<std::uint32_t> cands;
      for (const std::uint32_t t : grp.members[0]) {
        for (const std::uint32_t s : g_.succ[t]) {
          if (group_of_[s] == kNone) cands.push_back(class_of_[s]);
        }
      }
      std::sort(cands.begin(), cands.end());
      cands.erase(std::unique(cands.begin(), cands.end()), cands.end());
      for (const std::uint32_t c : cands) {
        const std::vector<std::uint32_t>& cls = classes_[c];
        if (cls.size() != k || g_.core[cls[0]] != grp.core || g_.scope[cls[0]] >= 0) continue;
        std::vector<std::uint32_t> match(k, kNone);  // member -> its successor in the class
        bool ok = true;
        for (const std::uint32_t d : cls) {
          if (group_of_[d] != kNone) {
            ok = false;
            break;
          }
          std::uint32_t m = kNone;
          for (const std::uint32_t p : g_.pred[d]) {
            if (group_of_[p] != gi || (m != kNone && member_of_[p] != m)) {
              ok = false;
              break;
            }
            m = member_of_[p];
          }
          if (!ok || m == kNone || match[m] != kNone || grp.lat[m] + g_.lat[d] > budget_) {
            ok = false;
            break;
          }
          match[m] = d;
        }
        if (!ok) continue;
        for (std::size_t m = 0; m < k; ++m) {
          const std::uint32_t d = match[m];
          group_of_[d] = gi;
          member_of_[d] = static_cast<std::uint32_t>(m);
          grp.members[m].push_back(d);
          grp.lat[m] += g_.lat[d];
          ++counts.grown;
        }
        changed = true;
        break;
      }
    }
  }

  // ---- 1b. group merges: singletons, then 1:r matchings ----

  void merge_groups() {
    for (int round = 0; round < kMergeRounds; ++round) {
      if (!merge_round()) break;
    }
    // Leaves: one per member.
    for (const Group& grp : groups_) {
      if (grp.members.empty()) continue;
      for (const auto& mem : grp.members) {
        for (const std::uint32_t t : mem) uf_.unite(mem[0], t);
      }
    }
  }

  std::uint64_t max_lat(const Group& g) const {
    return g.lat.empty() ? 0 : *std::max_element(g.lat.begin(), g.lat.end());
  }

  // Input and output groups of every live group.
  void adjacency(std::vector<std::vector<std::uint32_t>>& in,
                 std::vector<std::vector<std::uint32_t>>& out) const {
    in.assign(groups_.size(), {});
    out.assign(groups_.size(), {});
    for (std::uint32_t t = 0; t < g_.n; ++t) {
      for (const std::uint32_t s : g_.succ[t]) {
        const std::uint32_t a = group_of_[t], b = group_of_[s];
        if (a == b) continue;
        out[a].push_back(b);
        in[b].push_back(a);
      }
    }
    for (auto* v : {&in, &out}) {
      for (auto& l : *v) {
        std::sort(l.begin(), l.end());
        l.erase(std::unique(l.begin(), l.end()), l.end());
      }
    }
  }

  // Moves every member of group `from` into the member of `into` given by map[member].
  void absorb(std::uint32_t into, std::uint32_t from, const std::vector<std::uint32_t>& map) {
    Group& a = groups_[into];
    Group& b = groups_[from];
    a.cross = a.scoped ? a.cross : b.cross;  // a scoped group only meets unscoped ones here
    a.scoped = a.scoped || b.scoped;
    for (std::size_t m = 0; m < b.members.size(); ++m) {
      const std::uint32_t dst = map[m];
      for (const std::uint32_t t : b.members[m]) {
        group_of_[t] = into;
        member_of_[t] = dst;
        a.members[dst].push_back(t);
        ++counts.grown;
      }
      a.lat[dst] += b.lat[m];
    }
    b.members.clear();
    b.lat.clear();
  }

  bool merge_round() {
    std::vector<std::vector<std::uint32_t>> in, out;
    adjacency(in, out);
    std::vector<std::uint8_t> touched(groups_.size(), 0);
    bool any = false;
    for (std::uint32_t gi = 0; gi < groups_.size(); ++gi) {
      Group& G = groups_[gi];
      if (G.members.empty() || touched[gi] || (G.scoped && !G.cross)) continue;
      for (const bool use_in : {true, false}) {
        const auto& nb = use_in ? in[gi] : out[gi];
        if (nb.size() != 1) continue;
        const std::uint32_t hi = nb[0];
        Group& H = groups_[hi];
        if (touched[hi] || H.members.empty() || H.core != G.core || (H.scoped && !H.cross) ||
            (G.scoped && H.scoped)) {
          continue;
        }
        const std::size_t gs = G.members.size(), hs = H.members.size();
        if (gs == 1 && hs == 1) {
          if (G.lat[0] + H.lat[0] > budget_) continue;
          absorb(hi, gi, {0});
        } else if (gs > 1 && hs > 1) {
          std::vector<std::uint32_t> map;
          const bool g_small = gs <= hs;
          const std::uint32_t si = g_small ? gi : hi, li = g_small ? hi : gi;
          if (!matching(si, li, &map)) continue;
          const Group& S = groups_[si];
          const Group& L = groups_[li];
          const std::uint64_t r = L.members.size() / S.members.size();
          if (max_lat(S) + r * max_lat(L) > budget_) continue;
          const bool bounds =
              gs == hs ||
              static_cast<std::int64_t>(std::min(gs, hs)) >= in_.opt.parallel_lower_bound ||
              std::min(max_lat(S), max_lat(L)) <= in_.opt.lower_bound;
          if (!bounds) continue;
          absorb(si, li, map);
        } else {
          continue;
        }
        touched[gi] = touched[hi] = 1;
        any = true;
        break;
      }
    }
    return any;
  }

  // Whether every member of the larger group L touches exactly one member of the smaller
  // group S and each member of S is touched by exactly |L| / |S| of them; map: L member -> S.
  bool matching(std::uint32_t si, std::uint32_t li, std::vector<std::uint32_t>* map) const {
    const Group& S = groups_[si];
    const Group& L = groups_[li];
    if (L.members.size() % S.members.size() != 0) return false;
    const std::size_t r = L.members.size() / S.members.size();
    map->assign(L.members.size(), kNone);
    std::vector<std::size_t> hits(S.members.size(), 0);
    for (std::size_t m = 0; m < L.members.size(); ++m) {
      std::uint32_t partner = kNone;
      for (const std::uint32_t t : L.members[m]) {
        for (const auto* adj : {&g_.pred[t], &g_.succ[t]}) {
          for (const std::uint32_t x : *adj) {
            if (group_of_[x] != si) continue;
            if (partner != kNone && partner != member_of_[x]) return false;
            partner = member_of_[x];
          }
        }
      }
      if (partner == kNone) return false;
      (*map)[m] = partner;
      if (++hits[partner] > r) return false;
    }
    return true;
  }

  // ---- 1c. sg_set_scope: the connected tasks of one scope id (and core type) are one leaf ----

  void merge_scopes() {
    std::vector<std::int32_t> ids;
    for (const std::int32_t s : g_.scope) {
      if (s >= 0) ids.push_back(s);
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (const std::int32_t id : ids) {
      std::vector<std::uint32_t> saved = uf_.snapshot();
      bool any = false;
      for (std::uint32_t t = 0; t < g_.n; ++t) {
        if (g_.scope[t] != id) continue;
        for (const std::uint32_t s : g_.succ[t]) {
          if (g_.scope[s] != id || g_.core[s] != g_.core[t] || uf_.find(s) == uf_.find(t)) continue;
          uf_.unite(t, s);
          ++counts.grown;
          any = true;
        }
      }
      // PyPTO absorbs the ops on a path between two ops of a scope into it, whatever their
      // scope (the other scope's ops between two unrolled iterations join too). When a path
      // runs through a task of the other core type (PyPTO refuses to compile that), the scope
      // merges edge by edge instead, each merge kept only if its own paths can be absorbed.
      if (!any || absorb_paths(id)) {
        merge_parallel(id);
        continue;
      }
      uf_.restore(std::move(saved));
      for (std::uint32_t t = 0; t < g_.n; ++t) {
        if (g_.scope[t] != id) continue;
        for (const std::uint32_t s : g_.succ[t]) {
          if (g_.scope[s] != id || g_.core[s] != g_.core[t] || uf_.find(s) == uf_.find(t)) continue;
          std::vector<std::uint32_t> before = uf_.snapshot();
          uf_.unite(t, s);
          if (!absorb_paths(id, uf_.find(t))) uf_.restore(std::move(before));
        }
      }
      merge_parallel(id);
    }
  }

  // allow_parallel_merge: the scope's sets of one core type on parallel branches (no path
  // between them) become one leaf too, unless that would close a cycle or take in another
  // scope's or core type's task.
  void merge_parallel(std::int32_t id) {
    // The flags are one per id (the frontend refuses two sets): its first task tells.
    std::uint32_t t0 = 0;
    while (t0 < g_.n && g_.scope[t0] != id) ++t0;
    if (t0 == g_.n || (g_.scope_flags[t0] & kSgParallelMerge) == 0) return;
    std::uint32_t first[2] = {kNone, kNone};  // per core type: the scope's first task
    std::vector<std::uint32_t> saved = uf_.snapshot();
    for (std::uint32_t t = t0; t < g_.n; ++t) {
      if (g_.scope[t] != id) continue;
      std::uint32_t& f = first[g_.core[t] == common::CoreType::kAic ? 0 : 1];
      if (f == kNone) f = t;
      uf_.unite(f, t);
    }
    if (!absorb_paths(id)) uf_.restore(std::move(saved));
  }

  // Unites into each merged set of scope `id` (or only set `only_set`) the tasks on a path
  // between two of its tasks (reachable from the set and reaching it), until no path is left
  // (PyPTO's AvoidLoop). False when such a task cannot join (another core type) or the leaf
  // graph still has a cycle.
  bool absorb_paths(std::int32_t id, std::uint32_t only_set = ~0u) {
    std::vector<std::uint32_t> roots;
    for (std::uint32_t t = 0; t < g_.n; ++t) {
      if (g_.scope[t] == id && (only_set == ~0u || uf_.find(t) == only_set)) {
        roots.push_back(uf_.find(t));
      }
    }
    std::sort(roots.begin(), roots.end());
    roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
    std::vector<std::uint8_t> mark(g_.n);
    std::vector<std::uint32_t> stack;
    for (const std::uint32_t r0 : roots) {
      for (bool grew = true; grew;) {
        grew = false;
        const std::uint32_t r = uf_.find(r0);
        // bit 1: reachable from the set, bit 2: reaches the set.
        std::fill(mark.begin(), mark.end(), 0);
        for (int dir = 0; dir < 2; ++dir) {
          const std::uint8_t bit = dir == 0 ? 1 : 2;
          stack.clear();
          for (std::uint32_t t = 0; t < g_.n; ++t) {
            if (uf_.find(t) == r) stack.push_back(t);
          }
          while (!stack.empty()) {
            const std::uint32_t t = stack.back();
            stack.pop_back();
            for (const std::uint32_t u : dir == 0 ? g_.succ[t] : g_.pred[t]) {
              if ((mark[u] & bit) != 0 || uf_.find(u) == r) continue;
              mark[u] |= bit;
              stack.push_back(u);
            }
          }
        }
        for (std::uint32_t t = 0; t < g_.n; ++t) {
          if (mark[t] != 3 || uf_.find(t) == uf_.find(r)) continue;
          if (g_.core[t] != g_.core[r]) return false;
          uf_.unite(r, t);
          ++counts.grown;
          grew = true;
        }
      }
    }
    return !topo_sets(g_, uf_).empty();
  }

  void breadth_merges() { merge_breadth(g_, uf_, in_, counts, hints); }

  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

  RootGraph& g_;
  const RootInputs& in_;
  UnionFind uf_;
  std::uint64_t budget_ = 0;
  std::vector<std::vector<std::uint32_t>> classes_;
  std::vector<std::uint32_t> class_of_, group_of_, member_of_;
  std::vector<Group> groups_;
};

}  // namespace

std::uint64_t estimate_latency(const TaskProgram& p) {
  std::uint64_t total = 0;
  // Each local's bytes once: an instruction reads up to three of them.
  std::vector<std::uint64_t> local_bytes(p.locals.size());
  for (std::size_t i = 0; i < p.locals.size(); ++i) local_bytes[i] = tile_bytes(p.locals[i]);
  for (const TileInstr& in : p.instrs) {
    const TileExec ex = find_tile_op(in.op)->exec;
    std::uint64_t b = 0;
    DType d = DType::kFp32;
    const auto consider = [&](int local) {
      if (local < 0) return;
      const std::uint64_t x = local_bytes[static_cast<std::size_t>(local)];
      if (x > b) {
        b = x;
        d = p.locals[local].dtype;
      }
    };
    if (ex == TileExec::kLoad) {
      consider(in.dst);
    } else {
      for (int i = 0; i < 3; ++i) {
        if (!(in.scalar_operand & (1u << i))) consider(in.src[i]);
      }
      if (b == 0) consider(in.dst);
    }
    const std::uint64_t c = model::dtype_bytes(d) == 1 ? 2 : 1;
    total += 10 + (b > 0 ? (b + 255) / 256 - 1 : 0) * c;
  }
  return total;
}

std::uint64_t automatic_cycle_budget(std::uint64_t total) {
  if (total < 50000) return 1536;
  if (total < 290000) return 10000;
  if (total < 10000000) return 150000;
  return 5000000;
}

std::int64_t auto_vec_factor(std::int64_t n, std::int64_t p) {
  if (n <= p) return 1;
  std::int64_t k = (n + p - 1) / p;
  while (k > 1 && (n + k - 1) / k < p) --k;
  return k;
}

PartitionCounts partition_root(std::vector<TaskRec>& tasks, std::vector<TaskProgram>& progs,
                               std::vector<Access>& acc, std::uint32_t first,
                               std::uint32_t num_params, std::uint64_t root_buffer_bytes,
                               const std::vector<std::uint64_t>& param_bytes,
                               const std::vector<std::uint64_t>& slot_bytes,
                               const std::vector<std::string>& labels, const PartitionOptions& opt,
                               const model::ChipConfig& chip) {
  PartitionCounts counts;
  const auto n = static_cast<std::uint32_t>(tasks.size() - first);
  counts.emitted = counts.leaves = n;
  if (!opt.enabled || n <= 1) return counts;

  // Dense buffer ids for the symbolic regions: parameters, the root pool, launch regions.
  const auto dense = [&](std::uint32_t b) -> std::uint32_t {
    if (b == kRootBuffer) return num_params;
    if (b >= kSlotBufferBase) return num_params + 1 + (b - kSlotBufferBase);
    return b;
  };
  std::vector<std::uint64_t> sizes(param_bytes);
  sizes.push_back(root_buffer_bytes);
  sizes.insert(sizes.end(), slot_bytes.begin(), slot_bytes.end());

  RootGraph g;
  g.n = n;
  g.pred.resize(n);
  g.succ.resize(n);
  g.sig.resize(n);
  g.lat.resize(n);
  g.core.resize(n);
  g.scope.resize(n);
  g.scope_flags.resize(n);
  g.label.resize(n);
  g.data_preds.resize(n);
  DepTracker deps(sizes);
  for (std::uint32_t i = 0; i < n; ++i) {
    const TaskRec& tr = tasks[first + i];
    g.sig[i] = task_signature(tr, progs[first + i]);
    g.lat[i] = estimate_latency(progs[first + i]);
    g.core[i] = tr.core;
    g.scope[i] = tr.sg_scope;
    g.scope_flags[i] = tr.sg_flags;
    g.label[i] = tr.label;
    // Scoped tasks class apart: a scope merges only its own tasks.
    if (tr.sg_scope >= 0) g.sig[i] = mix(g.sig[i], static_cast<std::uint64_t>(tr.sg_scope) + 1);
    deps.begin_task(i, 0);
    for (int pass = 0; pass < 2; ++pass) {
      for (std::uint32_t a = tr.acc_begin; a < tr.acc_end; ++a) {
        const Access& x = acc[a];
        if (x.write != (pass == 1)) continue;
        const std::uint32_t b = dense(x.r.buffer);
        // A tile's rows in one call (the tracker logs a read of unwritten bytes once).
        for_each_segment_run(
            x.r, [&](std::uint64_t off, std::uint64_t bytes, std::int64_t pitch,
                     std::int64_t count) { deps.rows(x.write, b, off, bytes, pitch, count); });
      }
      if (pass == 0) g.data_preds[i] = static_cast<std::uint32_t>(deps.preds().size());
    }
    g.pred[i] = deps.preds();
    for (const std::uint32_t p : g.pred[i]) g.succ[p].push_back(i);
  }
  position_hashes(g);

  const RootInputs in{tasks, acc, first, labels, opt, chip};
  Partitioner part(g, in);
  part.run();
  counts.grown = part.counts.grown;
  counts.vec_merged = part.counts.vec_merged;
  counts.l1_merged = part.counts.l1_merged;
  counts.cube_nbuf_merged = part.counts.cube_nbuf_merged;
  UnionFind& uf = part.sets();
  const std::vector<std::uint32_t> order = topo_sets(g, uf);
  NPU_CHECK(order.size() > 0, "partition: the leaf graph has a cycle");
  counts.leaves = order.size();
  if (order.size() == n) return counts;  // nothing merged: the emitted tasks are the leaves

  std::vector<std::vector<std::uint32_t>> members(n);
  for (std::uint32_t t = 0; t < n; ++t) members[uf.find(t)].push_back(t);

  // Reads by each leaf of the root pool, to find stores nobody else in the root reads.
  std::vector<std::uint32_t> leaf_of(n);
  for (std::uint32_t l = 0; l < order.size(); ++l) {
    for (const std::uint32_t t : members[order[l]]) leaf_of[t] = l;
  }
  struct PoolRead {
    std::uint64_t begin, end;
    std::uint32_t leaf;
  };
  std::vector<PoolRead> pool_reads;
  for (std::uint32_t t = 0; t < n; ++t) {
    const TaskRec& tr = tasks[first + t];
    for (std::uint32_t a = tr.acc_begin; a < tr.acc_end; ++a) {
      const Access& x = acc[a];
      if (x.write || x.r.buffer != kRootBuffer) continue;
      for_each_segment(x.r, [&](std::uint64_t off, std::uint64_t bytes) {
        pool_reads.push_back(PoolRead{off, off + bytes, leaf_of[t]});
      });
    }
  }
  std::sort(pool_reads.begin(), pool_reads.end(),
            [](const PoolRead& a, const PoolRead& b) { return a.begin < b.begin; });
  std::uint64_t max_len = 0;
  for (const PoolRead& r : pool_reads) max_len = std::max(max_len, r.end - r.begin);
  const auto read_elsewhere = [&](std::uint64_t b, std::uint64_t e, std::uint32_t leaf) {
    auto it = std::lower_bound(pool_reads.begin(), pool_reads.end(), b > max_len ? b - max_len : 0,
                               [](const PoolRead& r, std::uint64_t v) { return r.begin < v; });
    for (; it != pool_reads.end() && it->begin < e; ++it) {
      if (it->end > b && it->leaf != leaf) return true;
    }
    return false;
  };

  std::vector<TaskRec> new_tasks(tasks.begin(), tasks.begin() + first);
  std::vector<TaskProgram> new_progs;
  new_progs.reserve(order.size());
  const std::uint32_t acc_base = tasks[first].acc_begin;
  std::vector<Access> new_acc(acc.begin(), acc.begin() + acc_base);
  const std::uint64_t l1_bytes = std::uint64_t{chip.cores.l1_kib} * 1024;
  const std::uint64_t ub_bytes = std::uint64_t{chip.cores.ub_kib} * 1024;
  for (std::uint32_t l = 0; l < order.size(); ++l) {
    const std::vector<std::uint32_t>& mem = members[order[l]];
    TaskRec t = tasks[first + mem[0]];
    TaskProgram p;
    std::uint64_t scalar = 0, tiles = 0;
    t.acc_begin = static_cast<std::uint32_t>(new_acc.size());
    for (const std::uint32_t m : mem) {
      const TaskRec& tr = tasks[first + m];
      scalar += tr.scalar_cycles;
      tiles += tr.tiles;
      const TaskProgram& mp = progs[first + m];
      const auto base = static_cast<std::int32_t>(p.locals.size());
      p.locals.insert(p.locals.end(), mp.locals.begin(), mp.locals.end());
      for (TileInstr in : mp.instrs) {
        if (in.dst >= 0) in.dst += base;
        for (std::int32_t& s : in.src) {
          if (s >= 0) s += base;
        }
        p.instrs.push_back(in);
      }
      new_acc.insert(new_acc.end(), acc.begin() + tr.acc_begin, acc.begin() + tr.acc_end);
    }
    t.acc_end = static_cast<std::uint32_t>(new_acc.size());
    t.scalar_cycles = static_cast<std::uint32_t>(std::min<std::uint64_t>(scalar, 0xFFFFFFFFull));
    t.tiles = static_cast<std::uint16_t>(std::min<std::uint64_t>(tiles, 0xFFFF));
    t.members = static_cast<std::uint32_t>(mem.size());
    t.hash_order = part.hints.hash_order[order[l]];
    t.vec_class = part.hints.vec_class[order[l]];
    t.l1_class = part.hints.l1_class[order[l]];
    t.cube_class = part.hints.cube_class[order[l]];
    if (mem.size() > 1) {
      // Traffic of the merged leaf: data it made itself stays on chip; a load repeated by
      // several members is made once while all such shared loads fit the core's buffer
      // (L1 for the cube, UB for the vector core) beside the largest member's own tiles.
      std::map<std::uint32_t, IntervalSet> written;
      std::vector<std::pair<std::uint64_t, std::uint32_t>> seen;  // region hash, access
      std::uint64_t shared_bytes = 0, own_bytes = 0;
      for (std::uint32_t a = t.acc_begin; a < t.acc_end; ++a) {
        Access& x = new_acc[a];
        if (x.write) continue;
        const std::uint64_t h = region_hash(x.r);
        for (const auto& s : seen) {
          if (s.first == h && same_region(new_acc[s.second].r, x.r)) {
            if (new_acc[s.second].priced) shared_bytes += region_bytes(x.r);
            break;
          }
        }
        seen.emplace_back(h, a);
        own_bytes = std::max(own_bytes, region_bytes(x.r));
      }
      const std::uint64_t cap = t.core == common::CoreType::kAic ? l1_bytes : ub_bytes;
      const bool dedupe = shared_bytes + std::min(own_bytes, cap) <= cap;
      seen.clear();
      std::uint32_t a = t.acc_begin;
      for (const std::uint32_t m : mem) {
        const TaskRec& tr = tasks[first + m];
        const std::uint32_t end = a + (tr.acc_end - tr.acc_begin);
        // This member's reads first (a member reads before it writes), then its writes.
        for (std::uint32_t i = a; i < end; ++i) {
          Access& x = new_acc[i];
          if (x.write || !x.priced) continue;
          bool on_chip = true;
          auto wit = written.find(x.r.buffer);
          if (wit == written.end()) {
            on_chip = false;
          } else {
            for_each_segment(x.r, [&](std::uint64_t o, std::uint64_t b) {
              on_chip = on_chip && wit->second.covers(o, o + b);
            });
          }
          if (!on_chip && dedupe) {
            const std::uint64_t h = region_hash(x.r);
            for (const auto& s : seen) {
              if (s.first == h && same_region(new_acc[s.second].r, x.r)) {
                on_chip = true;
                break;
              }
            }
            if (!on_chip) seen.emplace_back(h, i);
          }
          if (on_chip) x.priced = false;
        }
        for (std::uint32_t i = a; i < end; ++i) {
          const Access& x = new_acc[i];
          if (!x.write) continue;
          for_each_segment(
              x.r, [&](std::uint64_t o, std::uint64_t b) { written[x.r.buffer].add(o, o + b); });
        }
        a = end;
      }
      // A store to the root pool that no other leaf reads never leaves the chip.
      for (std::uint32_t i = t.acc_begin; i < t.acc_end; ++i) {
        Access& x = new_acc[i];
        if (!x.write || !x.priced || x.r.buffer != kRootBuffer) continue;
        bool read = false;
        for_each_segment(x.r, [&](std::uint64_t o, std::uint64_t b) {
          read = read || read_elsewhere(o, o + b, l);
        });
        if (!read) x.priced = false;
      }
    }
    if (mem.size() > 1) {
      // The merged leaf's members overlap on the core's pipes (task_cost.h).
      const Access* base = new_acc.data();
      t.cycles = leaf_compute_cycles(p, leaf_traffic(base + t.acc_begin, base + t.acc_end, chip),
                                     t.core, t.tiles, t.scalar_cycles, chip);
    }
    new_tasks.push_back(t);
    new_progs.push_back(std::move(p));
  }
  tasks = std::move(new_tasks);
  progs.resize(first);
  for (TaskProgram& p : new_progs) progs.push_back(std::move(p));
  acc = std::move(new_acc);
  return counts;
}

}  // namespace pypto::compiler::detail

namespace pypto::compiler {

MergeSetting parse_merge_setting(const std::string& name, const std::vector<MergeEntry>& entries,
                                 MergeSetting::Mode empty_mode) {
  MergeSetting s;
  s.mode = empty_mode;
  if (entries.empty()) return s;
  bool whole = false, any_int = false, auto_whole = false;
  for (const MergeEntry& e : entries) {
    const std::string where = "pass_options " + name + "[" + e.key + "]";
    if (e.factor < 0) throw ConfigError(where + ": " + std::to_string(e.factor) + " must be >= 0");
    if (e.side == "left") {
      s.side = MergeSetting::Side::kLeft;
    } else if (e.side == "right") {
      s.side = MergeSetting::Side::kRight;
    } else if (!e.side.empty()) {
      throw ConfigError(where + ": side \"" + e.side + "\" must be \"left\" or \"right\"");
    }
    std::int64_t key = 0;
    std::size_t used = 0;
    bool is_int = false;
    try {
      key = std::stoll(e.key, &used);
      is_int = used == e.key.size();
    } catch (const std::exception&) {
      is_int = false;
    }
    if (is_int) {
      any_int = true;
      if (key == -1) {
        s.default_factor = e.factor;
      } else if (key == -2) {
        whole = true;
        auto_whole = e.factor == 0;
      } else if (key >= 0) {
        s.by_order[key] = e.factor;
      } else {
        throw ConfigError(where + ": key " + e.key +
                          " is not a class: expected -1 (default), -2 (whole class) or a "
                          "hashOrder >= 0");
      }
      continue;
    }
    if (e.key == "DEFAULT") {
      whole = true;
      s.default_factor = e.factor;
      continue;
    }
    const auto us = e.key.rfind('_');
    if (e.key.rfind("func", 0) == 0 && us != std::string::npos && us > 4 && us + 1 < e.key.size()) {
      // func<rootMagic>_<hashOrder>: the root magic is PyPTO's own numbering of its root
      // functions, which this compiler does not reproduce; the hashOrder selects the class.
      try {
        std::size_t u2 = 0;
        const std::int64_t order = std::stoll(e.key.substr(us + 1), &u2);
        if (u2 == e.key.size() - us - 1 && order >= 0) {
          whole = true;
          s.by_order[order] = e.factor;
          continue;
        }
      } catch (const std::exception&) {
      }
    }
    // Any other string is a semantic label (pypto.set_semantic_label).
    if (e.key.empty()) throw ConfigError(where + ": an empty key is neither a class nor a label");
    s.by_label[e.key] = e.factor;
  }
  (void)any_int;
  const bool only_default_one =
      s.by_order.empty() && !whole && s.default_factor == 1 && entries.size() == 1;
  const bool only_default_str =
      entries.size() == 1 && entries[0].key == "DEFAULT" && s.default_factor == 1;
  if (only_default_one || only_default_str) {
    s.mode = MergeSetting::Mode::kOff;
  } else if (whole) {
    s.mode = auto_whole && s.by_order.empty() && s.default_factor == 0
                 ? MergeSetting::Mode::kAutoWhole
                 : MergeSetting::Mode::kManualWhole;
  } else {
    s.mode = MergeSetting::Mode::kManualGrouped;
  }
  return s;
}

}  // namespace pypto::compiler
