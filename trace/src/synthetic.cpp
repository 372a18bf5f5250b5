// SPDX-License-Identifier: Apache-2.0
// Synthetic native traces. Roots are generated one at a time; a dependency into the next
// root always targets a task whose id is known in advance (its first or last task), so each
// line can be written as soon as its root is generated.
#include "pypto/trace/synthetic.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "pypto/common/errors.h"
#include "pypto/trace/native_writer.h"

namespace pypto::trace {

namespace {

using common::CoreType;

enum class Shape { kMix, kChain, kFanout, kLoops, kIndependent };

// Memory layout of the synthetic kernel: inputs streamed once, a small set of shared
// weight tiles (reused across roots, so they stay in L2), and a workspace ring for
// intermediate tiles.
constexpr std::uint64_t kInputBase = 0x0;
constexpr std::uint64_t kInputBytes = std::uint64_t(2) << 30;
constexpr std::uint64_t kWeightBase = std::uint64_t(8) << 30;
constexpr std::uint64_t kWeightTiles = 64;
constexpr std::uint64_t kWeightTileBytes = 32 << 10;
constexpr std::uint64_t kWorkspaceBase = std::uint64_t(16) << 30;
constexpr std::uint64_t kWorkspaceBytes = std::uint64_t(1) << 30;
constexpr std::uint64_t kIndependentDurNs = 1000;

struct Region {
  std::uint64_t addr = 0;
  std::uint32_t bytes = 0;
};

struct LocalTask {
  bool cube = false;
  const char* kernel = "";
  std::vector<std::uint32_t> preds;  // local indices
  std::vector<std::uint64_t> succ;   // global ids
  bool reads_carry = false;
  Region out;
};

class Generator {
 public:
  Generator(const SyntheticSpec& spec, Shape shape, std::ostream& os)
      : spec_(spec), shape_(shape), rng_(spec.seed), w_(os) {}

  void run() {
    std::string generator = "pypto-sim synthetic shape=" + spec_.shape +
                            " seed=" + std::to_string(spec_.seed) +
                            " tasks_per_root=" + std::to_string(spec_.tasks_per_root);
    if (spec_.dur_step_ns != 1) generator += " dur_step_ns=" + std::to_string(spec_.dur_step_ns);
    w_.header("", spec_.tasks, generator);
    const std::uint64_t k = spec_.tasks_per_root;
    for (std::uint64_t first = 0, root = 0; first < spec_.tasks; first += k, ++root) {
      const std::uint64_t m = std::min(k, spec_.tasks - first);
      const std::uint64_t next_first = first + m;
      const std::uint64_t next_m = std::min(k, spec_.tasks - std::min(spec_.tasks, next_first));
      build_root(first, m, next_first, next_m);
      emit_root(first, root);
    }
    w_.finish();
  }

 private:
  std::uint64_t below(std::uint64_t n) { return rng_() % n; }

  // Output tile: 16..64 KiB in 4 KiB steps for vector tasks; a 64/128/256 x 128 fp16 matmul
  // output for cube tasks. Allocated from the workspace ring.
  Region alloc_out(bool cube, std::uint32_t* mmad_m) {
    std::uint32_t bytes;
    if (cube) {
      *mmad_m = 64u << below(3);
      bytes = *mmad_m * 128 * 2;
    } else {
      bytes = static_cast<std::uint32_t>((4 + below(13)) * 4096);
    }
    if (ws_cursor_ + bytes > kWorkspaceBytes) ws_cursor_ = 0;
    Region r{kWorkspaceBase + ws_cursor_, bytes};
    ws_cursor_ += bytes;
    return r;
  }

  void pattern_chain(std::uint64_t m, const char* vec, const char* mm) {
    for (std::uint64_t j = 0; j < m; ++j) {
      tasks_[j].cube = j % 3 == 1;
      tasks_[j].kernel = tasks_[j].cube ? mm : vec;
      if (j > 0) tasks_[j].preds.push_back(static_cast<std::uint32_t>(j - 1));
    }
  }

  void pattern_fanout(std::uint64_t m) {
    if (m < 3) return pattern_chain(m, "fan_vec", "fan_mm");
    tasks_[0].kernel = "fan_src";
    for (std::uint64_t j = 1; j + 1 < m; ++j) {
      tasks_[j].cube = j % 2 == 1;
      tasks_[j].kernel = tasks_[j].cube ? "fan_mm" : "fan_vec";
      tasks_[j].preds.push_back(0);
      tasks_[m - 1].preds.push_back(static_cast<std::uint32_t>(j));
    }
    tasks_[m - 1].kernel = "fan_join";
  }

  void build_root(std::uint64_t first, std::uint64_t m, std::uint64_t next_first,
                  std::uint64_t next_m) {
    tasks_.resize(m);
    for (LocalTask& t : tasks_) {
      t.cube = false;
      t.preds.clear();
      t.succ.clear();
      t.reads_carry = false;
    }
    // The previous root's carried edge lands on our first (or, for loops, last) task.
    if (carry_in_) tasks_[carry_to_last_ ? m - 1 : 0].reads_carry = true;

    Shape s = shape_;
    if (s == Shape::kMix) {
      const std::uint64_t pick = below(3);
      s = pick == 0 ? Shape::kChain : pick == 1 ? Shape::kFanout : Shape::kLoops;
    }
    switch (s) {
      case Shape::kChain: pattern_chain(m, "chain_vec", "chain_mm"); break;
      case Shape::kFanout: pattern_fanout(m); break;
      case Shape::kLoops: pattern_chain(m, "epilogue_vec", "qk_matmul"); break;
      case Shape::kIndependent:
        for (std::uint64_t j = 0; j < m; ++j) {
          tasks_[j].cube = (first + j) % 3 == 0;
          tasks_[j].kernel = tasks_[j].cube ? "indep_mm" : "indep_vec";
        }
        break;
      case Shape::kMix: break;
    }
    if (s == Shape::kLoops) tasks_[0].kernel = "prologue_vec";

    for (std::uint64_t j = 0; j < m; ++j) {
      for (const std::uint32_t p : tasks_[j].preds) tasks_[p].succ.push_back(first + j);
    }
    // A dependency into the next root, decided now because it is written on our line.
    carry_in_ = false;
    if (next_m > 0) {
      bool carry = false;
      carry_to_last_ = false;
      if (shape_ == Shape::kChain) {
        carry = true;
      } else if (shape_ == Shape::kLoops) {
        carry = true;
        carry_to_last_ = true;
      } else if (shape_ == Shape::kMix) {
        carry = below(4) == 0;
      }
      if (carry) {
        const std::uint64_t target = carry_to_last_ ? next_first + next_m - 1 : next_first;
        tasks_[m - 1].succ.push_back(target);
        carry_in_ = true;
      }
    }
  }

  void emit_root(std::uint64_t first, std::uint64_t root) {
    const Region carried = carry_region_;
    for (std::size_t j = 0; j < tasks_.size(); ++j) {
      LocalTask& t = tasks_[j];
      std::uint32_t mmad_m = 0;
      t.out = alloc_out(t.cube, &mmad_m);
      kernel_json_.assign(1, '"').append(t.kernel).push_back('"');
      w_.begin_task(first + j, t.cube ? CoreType::kAic : CoreType::kAiv, kernel_json_, root);
      if (!t.succ.empty()) w_.succ(t.succ.begin(), t.succ.end());
      if (spec_.memory) {
        w_.mem_begin();
        for (const std::uint32_t p : t.preds) put_mem(tasks_[p].out, 'r');
        if (t.reads_carry) put_mem(carried, 'r');
        if (t.preds.empty() && !t.reads_carry) {
          // A source task streams its input tile in.
          const Region in{kInputBase + in_cursor_, t.out.bytes};
          in_cursor_ = (in_cursor_ + t.out.bytes) % (kInputBytes - (64 << 10));
          put_mem(in, 'r');
        }
        if (t.cube) {
          put_mem(Region{kWeightBase + below(kWeightTiles) * kWeightTileBytes,
                         static_cast<std::uint32_t>(kWeightTileBytes)},
                  'r');
        }
        put_mem(t.out, 'w');
        w_.mem_end();
      }
      w_.ops_begin();
      if (t.cube) {
        w_.op("mmad", "fp16", {mmad_m, 128, 128});
      } else {
        const std::uint64_t rows = t.out.bytes / 256;  // fp16 rows of 128 elements
        w_.op((first + j) % 3 == 2 ? "exp" : "add", "fp16", {rows, 128});
      }
      w_.ops_end();
      const std::uint32_t tiles = t.out.bytes / (16 << 10);
      if (tiles > 1) w_.tiles(tiles);
      if (spec_.recorded) {
        const std::uint64_t dur =
            shape_ == Shape::kIndependent ? kIndependentDurNs : 2000 + below(8000);
        const std::uint64_t step = spec_.dur_step_ns;
        w_.dur(std::max(step, dur - dur % step));
      }
      w_.end_task();
    }
    if (carry_in_) carry_region_ = tasks_.back().out;
  }

  void put_mem(const Region& r, char kind) { w_.mem(r.addr, r.bytes, kind == 'w'); }

  const SyntheticSpec& spec_;
  Shape shape_;
  std::mt19937_64 rng_;
  NativeWriter w_;
  std::string kernel_json_;  // the task's kernel name, quoted
  std::vector<LocalTask> tasks_;
  bool carry_in_ = false;
  bool carry_to_last_ = false;
  Region carry_region_;
  std::uint64_t ws_cursor_ = 0;
  std::uint64_t in_cursor_ = 0;
};

}  // namespace

void write_synthetic_trace(const SyntheticSpec& spec, std::ostream& out) {
  Shape shape;
  if (spec.shape == "mix") {
    shape = Shape::kMix;
  } else if (spec.shape == "chain") {
    shape = Shape::kChain;
  } else if (spec.shape == "fanout") {
    shape = Shape::kFanout;
  } else if (spec.shape == "loops") {
    shape = Shape::kLoops;
  } else if (spec.shape == "independent") {
    shape = Shape::kIndependent;
  } else {
    throw ConfigError("synthetic trace shape \"" + spec.shape +
                      "\" is unknown; expected mix, chain, fanout, loops or independent");
  }
  if (spec.tasks == 0 || spec.tasks > 0xFFFFFFFEull) {
    throw ConfigError("synthetic trace: tasks must be in [1, 4294967294], got " +
                      std::to_string(spec.tasks));
  }
  if (spec.dur_step_ns == 0) throw ConfigError("synthetic trace: dur_step_ns must be at least 1");
  if (spec.tasks_per_root == 0) {
    throw ConfigError("synthetic trace: tasks_per_root must be at least 1");
  }
  Generator(spec, shape, out).run();
}

}  // namespace pypto::trace
