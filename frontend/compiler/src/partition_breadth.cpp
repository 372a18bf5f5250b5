// SPDX-License-Identifier: Apache-2.0
// The breadth merges of a root's leaves (partition_breadth.h), as PyPTO runs them after its
// graph partition: n_buffer_merge.cpp (vector N-buffer) and l1_copy_reuse.cpp (cube L1 reuse,
// cube N-buffer) of framework/src/passes/tile_graph_pass/graph_partition; docs/partition.md,
// steps 5 and 6.
#include "partition_breadth.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "partition.h"
#include "pypto/common/errors.h"

namespace pypto::compiler::detail {

namespace {

constexpr std::uint32_t kNone = 0xFFFFFFFFu;

class BreadthMerger {
 public:
  BreadthMerger(const RootGraph& g, UnionFind& uf, const RootInputs& in, PartitionCounts& counts,
                LeafHints& hints)
      : g_(g),
        uf_(uf),
        in_(in),
        counts(counts),
        hash_order(hints.hash_order),
        vec_class(hints.vec_class),
        l1_class(hints.l1_class),
        cube_class(hints.cube_class) {}

  struct Leaf {
    std::uint32_t id;    // set root (first task)
    std::uint32_t pos;   // topological position
    std::uint64_t hash;  // isomorphism class
    common::CoreType core;
    std::uint32_t lo_prod = kNone, hi_prod = 0, lo_cons = kNone;  // positions
    bool has_prod = false;
    bool scoped = false;  // holds sg_set_scope tasks: no breadth merge
  };

  std::vector<Leaf> leaves() {
    const std::vector<std::uint32_t> order = topo_sets(g_, uf_);
    NPU_CHECK(!order.empty() || g_.n == 0, "partition: the leaf graph has a cycle");
    std::vector<std::uint32_t> pos(g_.n, kNone);
    for (std::uint32_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
    std::vector<Leaf> ls(order.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) {
      ls[i].id = order[i];
      ls[i].pos = i;
      ls[i].hash = 0;
      ls[i].core = g_.core[order[i]];
    }
    for (std::uint32_t t = 0; t < g_.n; ++t) {
      Leaf& l = ls[pos[uf_.find(t)]];
      l.hash += g_.sig[t];  // a merged leaf hashes as the sum of its members (order-free)
      l.scoped = l.scoped || g_.scope[t] >= 0;
      for (const std::uint32_t p : g_.pred[t]) {
        const std::uint32_t pp = pos[uf_.find(p)];
        if (pp == l.pos) continue;
        l.has_prod = true;
        l.lo_prod = std::min(l.lo_prod, pp);
        l.hi_prod = std::max(l.hi_prod, pp);
      }
      for (const std::uint32_t s : g_.succ[t]) {
        const std::uint32_t sp = pos[uf_.find(s)];
        if (sp != l.pos) l.lo_cons = std::min(l.lo_cons, sp);
      }
    }
    return ls;
  }

  // Classes of leaves (equal hash) in order of first appearance: hashOrder.
  static std::vector<std::vector<std::uint32_t>> classes_of(const std::vector<Leaf>& ls) {
    std::unordered_map<std::uint64_t, std::uint32_t> id;
    std::vector<std::vector<std::uint32_t>> cls;
    for (std::uint32_t i = 0; i < ls.size(); ++i) {
      auto [it, inserted] = id.emplace(ls[i].hash, static_cast<std::uint32_t>(cls.size()));
      if (inserted) cls.emplace_back();
      cls[it->second].push_back(i);
    }
    return cls;
  }

  // The factor a setting names for a class: its largest label factor among the class's tasks,
  // else its hashOrder's; -1 when it names none.
  std::int64_t named_factor(const MergeSetting& s, std::int64_t order, const std::vector<Leaf>& ls,
                            const std::vector<std::uint32_t>& cls,
                            const std::vector<std::vector<std::uint32_t>>& members) const {
    std::int64_t best = -1;
    if (!s.by_label.empty()) {
      for (const std::uint32_t i : cls) {
        for (const std::uint32_t t : members[ls[i].id]) {
          if (g_.label[t] == 0) continue;
          const auto it = s.by_label.find(in_.labels[g_.label[t] - 1]);
          if (it != s.by_label.end()) best = std::max(best, it->second);
        }
      }
    }
    if (best >= 0) return best;
    const auto it = s.by_order.find(order);
    return it != s.by_order.end() ? it->second : -1;
  }

  // A cube merge's manual factor for a class (named, or the setting's default when the
  // setting is manual); -1 when the class merges automatically.
  std::int64_t manual_factor(const MergeSetting& s, std::int64_t order, const std::vector<Leaf>& ls,
                             const std::vector<std::uint32_t>& cls,
                             const std::vector<std::vector<std::uint32_t>>& members) const {
    const std::int64_t named = named_factor(s, order, ls, cls, members);
    if (named >= 0) return named;
    return s.mode != MergeSetting::Mode::kAuto && s.default_factor > 0 ? s.default_factor : -1;
  }

  std::int64_t factor_for(const MergeSetting& s, std::int64_t order, std::int64_t automatic,
                          const std::vector<Leaf>& ls, const std::vector<std::uint32_t>& cls,
                          const std::vector<std::vector<std::uint32_t>>& members) const {
    const std::int64_t named = named_factor(s, order, ls, cls, members);
    if (named >= 0) return named;
    if (s.mode == MergeSetting::Mode::kAuto || s.mode == MergeSetting::Mode::kAutoWhole ||
        s.default_factor <= 0) {
      return automatic;
    }
    return s.default_factor;
  }

  // Unites the leaves of each run; keeps the merge only if the leaf graph stays acyclic.
  bool try_merge(const std::vector<Leaf>& ls, const std::vector<std::vector<std::uint32_t>>& runs) {
    bool any = false;
    for (const auto& r : runs) any = any || r.size() > 1;
    if (!any) return false;
    std::vector<std::uint32_t> saved = uf_.snapshot();
    for (const auto& r : runs) {
      for (std::size_t i = 1; i < r.size(); ++i) uf_.unite(ls[r[0]].id, ls[r[i]].id);
    }
    if (topo_sets(g_, uf_).empty()) {
      uf_.restore(std::move(saved));
      return false;
    }
    return true;
  }

  void note_class(const std::vector<Leaf>& ls, const std::vector<std::uint32_t>& cls,
                  std::uint32_t order, std::vector<std::uint32_t>& field) {
    for (const std::uint32_t i : cls) {
      hash_order[ls[i].id] = order;
      field[ls[i].id] = static_cast<std::uint32_t>(cls.size());
    }
  }

  void run() {
    hash_order.assign(g_.n, 0);
    vec_class.assign(g_.n, 0);
    l1_class.assign(g_.n, 0);
    cube_class.assign(g_.n, 0);
    vec_merge();
    l1_reuse();
    cube_nbuffer();
  }

  using Runs = std::vector<std::vector<std::uint32_t>>;
  using Members = std::vector<std::vector<std::uint32_t>>;

  // The frame of one breadth merge: for each class of unscoped `core` leaves (in hashOrder),
  // runs_of(order, class, leaves, members) says which leaves merge (empty: none); a merge that
  // keeps the leaf graph acyclic is kept and noted in `field` (the class size) and `absorbed`.
  // Each merge numbers the classes it configures as PyPTO's pass does, in leaf order: the cube
  // merges count cube classes only (l1_copy_reuse.cpp, GetColorHash: the subgraphs holding an
  // L1 copy-in), the vector N-buffer every class, all cube leaves sharing one number
  // (n_buffer_merge.cpp, GetColorHash: a subgraph with a cube op hashes to 0).
  // `rejected()` runs when a class's merge would close a cycle (the merge is dropped).
  template <class F, class G>
  void merge_classes(common::CoreType core, std::vector<std::uint32_t>& field,
                     std::uint64_t& absorbed, F&& runs_of, G&& rejected) {
    // Without a task of `core` no class merges and none is noted (the numbering is local).
    if (std::find(g_.core.begin(), g_.core.end(), core) == g_.core.end()) return;
    const std::vector<Leaf> ls = leaves();
    const Members members = set_members();
    const auto cls = classes_of(ls);
    const bool cube_merge = core == common::CoreType::kAic;
    std::uint32_t next_order = 0;
    bool cube_numbered = false;
    for (const auto& c : cls) {
      const bool cube = ls[c[0]].core == common::CoreType::kAic;
      if (cube_merge != cube && (cube_merge || cube_numbered)) continue;
      const std::uint32_t order = next_order++;
      if (cube && !cube_merge) {
        cube_numbered = true;
        continue;
      }
      if (ls[c[0]].core != core || ls[c[0]].scoped) continue;
      const Runs runs = runs_of(order, c, ls, members);
      if (std::none_of(runs.begin(), runs.end(), [](const auto& r) { return r.size() > 1; }))
        continue;
      if (!try_merge(ls, runs)) {
        rejected();
        continue;
      }
      note_class(ls, c, order, field);
      for (const auto& r : runs) absorbed += r.size() - 1;
    }
  }

  // Appends `list` cut into consecutive runs of k to `runs`.
  static void cut(const std::vector<std::uint32_t>& list, std::int64_t k, Runs& runs) {
    const auto step = static_cast<std::size_t>(k);
    for (std::size_t i = 0; i < list.size(); i += step) {
      runs.emplace_back(
          list.begin() + static_cast<std::ptrdiff_t>(i),
          list.begin() + static_cast<std::ptrdiff_t>(std::min(list.size(), i + step)));
    }
  }

  void vec_merge() {
    const MergeSetting& s = in_.opt.vec_nbuffer;
    if (s.mode == MergeSetting::Mode::kOff) return;
    const bool whole =
        s.mode == MergeSetting::Mode::kAutoWhole || s.mode == MergeSetting::Mode::kManualWhole;
    merge_classes(
        common::CoreType::kAiv, vec_class, counts.vec_merged,
        [&](std::uint32_t order, const std::vector<std::uint32_t>& c, const std::vector<Leaf>& ls,
            const Members& members) {
          Runs runs;
          const auto n = static_cast<std::int64_t>(c.size());
          const std::int64_t k =
              factor_for(s, order, auto_vec_factor(n, in_.opt.vec_parallel_lb), ls, c, members);
          if (k <= 1) return runs;
          if (whole) {
            cut(c, k, runs);
            return runs;
          }
          // Sub-lists of members sharing their lowest producer, or their lowest consumer,
          // whichever gives fewer; a member without one stays alone: it counts as a sub-list
          // (*count) but is not listed, as a list of one never merges.
          const auto split = [&](bool by_prod, std::size_t* count) {
            Runs subs;
            std::map<std::uint32_t, std::size_t> at;
            std::size_t alone = 0;
            for (const std::uint32_t i : c) {
              const std::uint32_t key = by_prod ? ls[i].lo_prod : ls[i].lo_cons;
              if (key == kNone) {
                ++alone;
                continue;
              }
              auto [it, inserted] = at.emplace(key, subs.size());
              if (inserted) subs.emplace_back();
              subs[it->second].push_back(i);
            }
            *count = alone + subs.size();
            return subs;
          };
          std::size_t prod_count = 0, cons_count = 0;
          const Runs by_prod = split(true, &prod_count);
          const Runs by_cons = split(false, &cons_count);
          for (const auto& sub : cons_count < prod_count ? by_cons : by_prod) {
            if (sub.size() > 1) cut(sub, k, runs);
          }
          return runs;
        },
        [] {});
  }

  // The matmul panels (DDR -> L1 loads) a leaf reads, with their operand side.
  struct Load {
    GlobalRegion r;
    std::uint8_t operand;
  };

  // The tasks of every set (indexed by set id), for the breadth merges' per-leaf scans.
  std::vector<std::vector<std::uint32_t>> set_members() {
    std::vector<std::vector<std::uint32_t>> m(g_.n);
    for (std::uint32_t t = 0; t < g_.n; ++t) m[uf_.find(t)].push_back(t);
    return m;
  }

  std::vector<Load> loads_of(const std::vector<std::uint32_t>& tasks) const {
    std::vector<Load> out;
    for (const std::uint32_t t : tasks) {
      const TaskRec& tr = in_.tasks[in_.first + t];
      for (std::uint32_t a = tr.acc_begin; a < tr.acc_end; ++a) {
        if (!in_.acc[a].write && in_.acc[a].operand != 0)
          out.push_back(Load{in_.acc[a].r, in_.acc[a].operand});
      }
    }
    return out;
  }

  // PyPTO's L1 reuse scan (l1_copy_reuse.cpp, ProcessL1ReuseCandidates): the cube leaves in
  // hashOrder, each class in leaf order, share one table of the GM blocks loaded into L1, each
  // block naming the leaf that registered it last. A leaf tries its loads in order and joins
  // the leaf the first one names, if that leaf starts after all its producers, has fewer
  // members than the joiner's factor and stays within the copy-in bound; then every load of
  // the leaf names the leaf it joined (or itself). So a leaf can join another class's leaf.
  void l1_reuse() {
    const MergeSetting& s = in_.opt.cube_l1_reuse;
    if (s.mode == MergeSetting::Mode::kOff) return;
    const std::int64_t per_core = 2 * static_cast<std::int64_t>(in_.chip.cores.aic);
    struct Block {
      GlobalRegion r;
      std::uint32_t leaf;  // kNone: withdrawn
    };
    std::vector<Block> blocks;
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> by_hash;  // -> blocks
    std::vector<std::int64_t> size;    // members of each leaf (index in ls) that anchors
    std::vector<std::uint64_t> bytes;  // its copy-in bytes
    // What a class changed, for when its merge is dropped: (block, previous leaf) and joins.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> renamed;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> joined;  // (anchor, joiner)
    const auto block_of = [&](const GlobalRegion& r) -> std::uint32_t {
      auto it = by_hash.find(region_hash(r));
      if (it == by_hash.end()) return kNone;
      for (const std::uint32_t b : it->second) {
        if (same_region(blocks[b].r, r)) return b;
      }
      return kNone;
    };
    const auto on_side = [&](const Load& x) {
      return !(s.side == MergeSetting::Side::kLeft && x.operand != 1) &&
             !(s.side == MergeSetting::Side::kRight && x.operand != 2);
    };
    merge_classes(
        common::CoreType::kAic, l1_class, counts.l1_merged,
        [&](std::uint32_t order, const std::vector<std::uint32_t>& c, const std::vector<Leaf>& ls,
            const Members& members) {
          if (size.empty()) {
            size.assign(ls.size(), 1);
            bytes.assign(ls.size(), 0);
          }
          renamed.clear();
          joined.clear();
          std::int64_t max_merge = manual_factor(s, order, ls, c, members);
          if (max_merge < 0) {
            // PyPTO counts the first cube class with every subgraph holding no cube op: its
            // scan gives them hashOrder 0 (GetL1ReuseOpOrder, a map lookup that inserts 0).
            // The n mod (2 x #AIC) budget for anchors taking one more it files under the
            // hashOrder and reads under the subgraph's hash (GetMergedL1): never spent.
            auto counted = static_cast<std::int64_t>(c.size());
            if (order == 0) {
              for (const Leaf& x : ls) counted += x.core != common::CoreType::kAic;
            }
            max_merge = counted / per_core;
          }
          std::map<std::uint32_t, std::size_t> run_of;  // anchor -> its run
          Runs runs;
          for (const std::uint32_t i : c) {
            const Leaf& me = ls[i];
            const std::vector<Load> loads = loads_of(members[me.id]);
            for (const Load& l : loads) bytes[i] += region_bytes(l.r);
            std::uint32_t into = kNone;
            for (const Load& x : loads) {
              const std::uint32_t b = on_side(x) ? block_of(x.r) : kNone;
              const std::uint32_t a = b != kNone ? blocks[b].leaf : kNone;
              if (a == kNone || (me.has_prod && ls[a].pos < me.hi_prod)) continue;
              if (bytes[a] + bytes[i] > in_.opt.copyin_upper_bytes || size[a] >= max_merge)
                continue;
              into = a;
              break;
            }
            if (into != kNone) {
              ++size[into];
              bytes[into] += bytes[i];
              joined.emplace_back(into, i);
              auto [it, fresh] = run_of.emplace(into, runs.size());
              if (fresh) runs.push_back({into});
              runs[it->second].push_back(i);
            }
            const std::uint32_t name = into != kNone ? into : i;
            for (const Load& x : loads) {
              if (!on_side(x)) continue;
              std::uint32_t b = block_of(x.r);
              if (b == kNone) {
                b = static_cast<std::uint32_t>(blocks.size());
                by_hash[region_hash(x.r)].push_back(b);
                blocks.push_back(Block{x.r, kNone});
              }
              renamed.emplace_back(b, blocks[b].leaf);
              blocks[b].leaf = name;
            }
          }
          return runs;
        },
        [&] {
          for (auto it = renamed.rbegin(); it != renamed.rend(); ++it)
            blocks[it->first].leaf = it->second;
          for (const auto& [anchor, joiner] : joined) {
            --size[anchor];
            bytes[anchor] -= bytes[joiner];
          }
        });
  }

  void cube_nbuffer() {
    const MergeSetting& s = in_.opt.cube_nbuffer;
    if (s.mode == MergeSetting::Mode::kOff) return;
    const std::int64_t per_core = 2 * static_cast<std::int64_t>(in_.chip.cores.aic);
    merge_classes(
        common::CoreType::kAic, cube_class, counts.cube_nbuf_merged,
        [&](std::uint32_t order, const std::vector<std::uint32_t>& c, const std::vector<Leaf>& ls,
            const Members& members) {
          Runs runs;
          const auto n = static_cast<std::int64_t>(c.size());
          const std::int64_t manual = manual_factor(s, order, ls, c, members);
          if (manual >= 0) {
            std::int64_t k = manual;
            std::uint64_t task_bytes = 0;
            for (const Load& l : loads_of(members[ls[c[0]].id])) task_bytes += region_bytes(l.r);
            if (task_bytes > 0) {
              k = std::min<std::int64_t>(
                  k, static_cast<std::int64_t>(in_.opt.copyin_upper_bytes / task_bytes));
            }
            if (k > 1) cut(c, k, runs);
            return runs;
          }
          if (n < in_.opt.vec_parallel_lb)
            return runs;  // PyPTO: no automatic merge of fewer than 48
          const std::int64_t r = std::min(n, per_core);
          std::size_t at = 0;
          for (std::int64_t j = 0; j < r; ++j) {
            const auto len = static_cast<std::size_t>(n / r + (j < n % r ? 1 : 0));
            runs.emplace_back(c.begin() + static_cast<std::ptrdiff_t>(at),
                              c.begin() + static_cast<std::ptrdiff_t>(at + len));
            at += len;
          }
          return runs;
        },
        [] {});
  }

  const RootGraph& g_;
  UnionFind& uf_;
  const RootInputs& in_;
  PartitionCounts& counts;
  std::vector<std::uint32_t>&hash_order, &vec_class, &l1_class, &cube_class;
};

}  // namespace

void merge_breadth(const RootGraph& g, UnionFind& uf, const RootInputs& in, PartitionCounts& counts,
                   LeafHints& hints) {
  BreadthMerger(g, uf, in, counts, hints).run();
}

}  // namespace pypto::compiler::detail
