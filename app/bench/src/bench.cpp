// SPDX-License-Identifier: Apache-2.0
// run_bench(): the suite behind `pypto-sim bench`. Speed ratios are measured side by side
// in one process, rounds interleaved and medians taken, because the machine it runs on is
// shared and noisy; memory per task is the peak RSS of a child process per trace size, the
// only honest way to see what one run of that size needs.
#include "pypto/bench/bench.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "pypto/bench/reference.h"
#include "pypto/common/errors.h"
#include "pypto/common/output_file.h"
#include "pypto/model/config_loader.h"
#include "pypto/sim/simulation.h"
#include "pypto/trace/synthetic.h"
#include "pypto/trace/trace_loader.h"

extern char** environ;

namespace pypto::bench {

namespace fs = std::filesystem;
using nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

namespace {

// Targets of the issue, next to which the measured numbers are printed.
constexpr double kTargetRatio = 0.40;
constexpr double kTargetModelTasksPerS = 1e6;
constexpr double kTargetRssBytesPerTask = 200;
constexpr double kTargetCompileTileOpsPerS = 1e6;
constexpr double kTargetCachedCallMs = 2.0;
constexpr double kTargetFirstCallMs = 200.0;
constexpr double kTargetE2eTasksPerS = 1e6;         // read + simulate + stats.json
constexpr double kTargetE2eTraceTasksPerS = 500e3;  // ... + trace.json + swim.json
constexpr double kFlatTolerance = 0.25;             // per-task cost from 100k up: within +-25%
constexpr std::uint64_t kFlatFrom = 100'000;
constexpr std::uint64_t kRepeatUpTo = 1'000'000;  // larger scaling sizes run once
// Sizes up to this run three times the rounds: their runs take a tenth of a second, about
// as long as this host's bursts of load, and the flatness checks measure from them.
constexpr std::uint64_t kRepeatMoreUpTo = 100'000;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Child runs of a point of `tasks` tasks in round r (scaling and end to end): three for
// sizes up to 100k, one up to 1M; a larger size runs once, in the middle round. --quick, a
// smoke test whose figures nobody reads, runs every point once.
constexpr int kMostRunsInRound = 3;
int runs_in_round(const BenchOptions& opt, std::uint64_t tasks, int r) {
  if (opt.quick) return r == opt.rounds / 2 ? 1 : 0;
  if (tasks <= kRepeatMoreUpTo) return kMostRunsInRound;
  if (tasks <= kRepeatUpTo) return 1;
  return r == opt.rounds / 2 ? 1 : 0;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string read_first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return f ? a + " " + b + " " + c : std::string("unknown");
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

// This process's peak resident set (VmHWM), 0 if /proc is unavailable.
std::uint64_t self_peak_rss_bytes() {
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // kB
  }
  return 0;
}

std::string human_count(std::uint64_t n) {
  if (n >= 1'000'000 && n % 1'000'000 == 0) return std::to_string(n / 1'000'000) + "M";
  if (n >= 1'000 && n % 1'000 == 0) return std::to_string(n / 1'000) + "k";
  return std::to_string(n);
}

// ---- synthetic traces --------------------------------------------------------------------

trace::SyntheticSpec trace_spec(std::uint64_t tasks) {
  trace::SyntheticSpec s;
  s.tasks = tasks;
  s.shape = "mix";
  return s;
}

// The spec's trace in dir, generated unless a complete one is there. Files are written
// under a temporary name and renamed, so an existing name is always a complete trace; its
// header must still name the same spec (a file of that name from elsewhere is rewritten).
std::string ensure_trace(const std::string& dir, const trace::SyntheticSpec& s,
                         std::ostream& progress) {
  const std::string path = dir + "/mix_" + human_count(s.tasks) + "_seed" + std::to_string(s.seed) +
                           "_r" + std::to_string(s.tasks_per_root) + ".ndjson";
  const std::string want_tasks = "\"tasks\":" + std::to_string(s.tasks) + ",";
  const std::string want_gen = "shape=" + s.shape + " seed=" + std::to_string(s.seed) +
                               " tasks_per_root=" + std::to_string(s.tasks_per_root) + "\"";
  if (fs::exists(path)) {
    const std::string head = read_first_line(path);
    if (head.find(want_tasks) != std::string::npos && head.find(want_gen) != std::string::npos) {
      progress << "bench: reusing " << path << "\n";
      return path;
    }
  }
  progress << "bench: generating " << path << " ..." << std::flush;
  const auto t0 = Clock::now();
  {
    common::OutputFile f(path);  // a temporary renamed when complete (and removed on Ctrl-C)
    trace::write_synthetic_trace(s, f.stream());
    f.commit();
  }
  progress << " " << std::fixed << std::setprecision(1) << seconds_since(t0) << " s\n"
           << std::defaultfloat;
  return path;
}

// ---- child processes -----------------------------------------------------------------------

struct ChildResult {
  int status = 0;  // wait status
  rusage usage{};
  double wall_s = 0;
  std::string output;  // stdout (when captured)
};

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "wait status " + std::to_string(status);
}

// Runs argv[0] with argv; stderr goes to err_path; stdout is captured if `capture`, else
// also goes to err_path. cwd: the child's working directory (empty: ours).
ChildResult run_child(const std::vector<std::string>& argv, const std::string& err_path,
                      bool capture, const std::string& cwd = "") {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int pipe_fd[2] = {-1, -1};
  if (capture && ::pipe(pipe_fd) != 0) throw Error("cannot create a pipe for " + argv[0]);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (capture) {
    posix_spawn_file_actions_adddup2(&fa, pipe_fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, pipe_fd[0]);
    posix_spawn_file_actions_addclose(&fa, pipe_fd[1]);
  } else {
    posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
  }
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  ChildResult r;
  const auto t0 = Clock::now();
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (capture) ::close(pipe_fd[1]);
  if (rc != 0) {
    if (capture) ::close(pipe_fd[0]);
    throw Error("cannot start " + argv[0] + ": " + std::strerror(rc));
  }
  if (capture) {
    char buf[4096];
    for (ssize_t n; (n = ::read(pipe_fd[0], buf, sizeof buf)) != 0;) {
      if (n < 0) {
        if (errno == EINTR) continue;
        break;
      }
      r.output.append(buf, static_cast<std::size_t>(n));
    }
    ::close(pipe_fd[0]);
  }
  while (::wait4(pid, &r.status, 0, &r.usage) < 0) {
    if (errno != EINTR) throw Error("cannot wait for " + argv[0] + ": " + std::strerror(errno));
  }
  r.wall_s = seconds_since(t0);
  return r;
}

std::string tail_of_file(const std::string& path, std::size_t max_chars = 400) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.size() > max_chars) s = "..." + s.substr(s.size() - max_chars);
  return s;
}

// One child `pypto-sim run` of `trace` (argv) with its reports in `out`: its rusage and its
// stats.json, once it has exited 0 and simulated every one of `tasks` tasks. The CLI exits
// non-zero when a run stops early; the count is checked again, because a figure of a run
// that skipped tasks would be a lie (ModelError: it stops the suite).
struct SimChild {
  ChildResult child;
  nlohmann::json stats;
};
SimChild run_sim_child(const std::vector<std::string>& argv, const std::string& trace,
                       const std::string& out, const std::string& log, std::uint64_t tasks) {
  SimChild r;
  r.child = run_child(argv, log, false);
  if (!WIFEXITED(r.child.status) || WEXITSTATUS(r.child.status) != 0) {
    throw Error("bench: '" + argv.front() + " run " + trace + "' failed (" +
                describe_status(r.child.status) + "): " + tail_of_file(log));
  }
  std::ifstream f(out + "/stats.json");
  if (!f) throw Error("bench: the child run left no " + out + "/stats.json");
  r.stats = nlohmann::json::parse(f);
  const std::uint64_t done =
      r.stats.at("tasks").get<std::uint64_t>() + r.stats.at("hub_tasks").get<std::uint64_t>();
  if (done != tasks) {
    throw ModelError("bench: the " + human_count(tasks) + "-task run of " + trace + " reports " +
                     std::to_string(done) + " tasks");
  }
  return r;
}

// One scaling point: child runs of the CLI on the trace (run_once), then the median
// simulation wall time and the largest peak RSS (result).
class ScalingPoint {
 public:
  ScalingPoint(const BenchOptions& opt, std::string trace, std::uint64_t tasks, std::string dir)
      : opt_(opt), trace_(std::move(trace)), tasks_(tasks), dir_(std::move(dir)) {}
  std::uint64_t tasks() const { return tasks_; }

  void run_once(std::ostream& progress) {
    const int r = static_cast<int>(walls_.size());
    const std::string out = dir_ + "/run" + std::to_string(r);
    const std::string log = dir_ + "/run" + std::to_string(r) + ".log";
    fs::create_directories(out);
    progress << "bench: scaling " << human_count(tasks_) << " run " << (r + 1) << "/"
             << runs_for(opt_, tasks_) << " ..." << std::flush;
    floor_bytes_ = std::max(floor_bytes_, self_peak_rss_bytes());
    const SimChild run = run_sim_child(
        {opt_.self_exe, "run", trace_, "--chip", opt_.chip, "--no-trace", "-q", "-o", out}, trace_,
        out, log, tasks_);
    const ChildResult& c = run.child;
    const nlohmann::json& stats = run.stats;
    walls_.push_back(stats.at("wall_s").get<double>());
    process_walls_.push_back(c.wall_s);
    max_rss_kib_ = std::max(max_rss_kib_, c.usage.ru_maxrss);
    progress << " " << std::fixed << std::setprecision(2) << walls_.back() << " s sim, " << c.wall_s
             << " s process, " << (c.usage.ru_maxrss / 1024) << " MiB peak\n"
             << std::defaultfloat;
  }

  ordered_json result() const {
    const double wall = median(walls_);
    const double rss_bytes = static_cast<double>(max_rss_kib_) * 1024.0;
    ordered_json p;
    p["tasks"] = tasks_;
    p["wall_s"] = wall;
    p["tasks_per_s"] = wall > 0 ? static_cast<double>(tasks_) / wall : 0.0;
    p["us_per_task"] = wall * 1e6 / static_cast<double>(tasks_);
    p["rss_bytes_per_task"] = rss_bytes / static_cast<double>(tasks_);
    p["peak_rss_bytes"] = static_cast<std::uint64_t>(rss_bytes);
    // A child's ru_maxrss cannot be below the bench process's own peak when it was started;
    // at or below that floor the figure is only an upper bound.
    p["rss_floor_bytes"] = floor_bytes_;
    p["rss_is_upper_bound"] = rss_bytes <= static_cast<double>(floor_bytes_);
    p["process_wall_s"] = median(process_walls_);  // includes reading the trace
    p["runs"] = walls_.size();
    p["completed_all_tasks"] = true;
    return p;
  }

 private:
  const BenchOptions& opt_;
  std::string trace_;
  std::uint64_t tasks_;
  std::string dir_;
  std::vector<double> walls_, process_walls_;
  long max_rss_kib_ = 0;
  std::uint64_t floor_bytes_ = 0;
};

// ---- end to end, per input format ------------------------------------------------------------

// The input formats of the end-to-end table, as `pypto-sim gen --format` names them.
const std::vector<std::string>& e2e_format_names() {
  static const std::vector<std::string> names = {"native", "dyn_topo", "topo_json",
                                                 "fixed_latency"};
  return names;
}

struct E2eTrace {
  std::string path, prof;  // prof: the board recording (dyn_topo, topo_json), else empty
};

// The trace of `format` with n tasks in dir, generated unless there. The native one is the
// scaling table's mix trace (memory ranges, tile ops priced by the cost model); the others
// are `pypto-sim gen --format F` (the same generator, recorded durations in whole board
// ticks, no memory ranges), written by a child so that this process stays small (its peak
// RSS is every later child's floor). A child writes each file complete or not at all and the
// recording before the topology, so an existing topology is a complete pair.
E2eTrace ensure_format_trace(const BenchOptions& opt, const std::string& format, std::uint64_t n,
                             std::ostream& progress) {
  if (format == "native") return {ensure_trace(opt.trace_dir, trace_spec(n), progress), ""};
  const std::string stem = opt.trace_dir + "/" + format + "_" + human_count(n) + "_" + opt.chip;
  E2eTrace t;
  t.path = stem + (format == "dyn_topo" ? ".txt" : ".json");
  if (format != "fixed_latency") t.prof = stem + ".prof.json";
  if (fs::exists(t.path) && (t.prof.empty() || fs::exists(t.prof))) {
    progress << "bench: reusing " << t.path << "\n";
    return t;
  }
  progress << "bench: generating " << t.path << " ..." << std::flush;
  std::vector<std::string> argv = {opt.self_exe,      "gen",    "--format", format, "--tasks",
                                   std::to_string(n), "--chip", opt.chip,   "-o",   t.path};
  if (!t.prof.empty()) {
    argv.push_back("--prof");
    argv.push_back(t.prof);
  }
  const std::string log = stem + ".gen.log";
  const ChildResult c = run_child(argv, log, false);
  if (!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0) {
    throw Error("bench: 'pypto-sim gen --format " + format + "' failed (" +
                describe_status(c.status) + "): " + tail_of_file(log));
  }
  std::error_code ec;
  fs::remove(log, ec);
  progress << " " << std::fixed << std::setprecision(1) << c.wall_s << " s\n" << std::defaultfloat;
  return t;
}

// One end-to-end point: child runs of `pypto-sim run` (read + simulate + stats.json, and
// with `with_trace` also trace.json, swim.json and the files beside it; run_once), then the
// median process wall time and the largest peak RSS (result). The reports are removed after
// each run (a 10M trace.json takes gigabytes); stats.json is read first to check the task
// count.
class E2ePoint {
 public:
  E2ePoint(const BenchOptions& opt, E2eTrace trace, std::uint64_t tasks, bool with_trace,
           std::string dir)
      : opt_(opt),
        trace_(std::move(trace)),
        tasks_(tasks),
        with_trace_(with_trace),
        dir_(std::move(dir)) {}
  std::uint64_t tasks() const { return tasks_; }

  void run_once(std::ostream& progress) {
    const int r = static_cast<int>(walls_.size());
    const std::string out = dir_ + "/run" + std::to_string(r);
    const std::string log = out + ".log";
    fs::create_directories(dir_);
    progress << "bench: end to end " << fs::path(trace_.path).filename().string()
             << (with_trace_ ? " with trace.json+swim.json" : " --no-trace") << " run " << (r + 1)
             << "/" << runs_for(opt_, tasks_) << " ..." << std::flush;
    std::vector<std::string> argv = {opt_.self_exe, "run", trace_.path, "--chip",
                                     opt_.chip,     "-q",  "-o",        out};
    if (!trace_.prof.empty()) {
      argv.push_back("--prof");
      argv.push_back(trace_.prof);
    }
    if (!with_trace_) argv.push_back("--no-trace");
    const SimChild run = run_sim_child(argv, trace_.path, out, log, tasks_);
    const ChildResult& c = run.child;
    const nlohmann::json& stats = run.stats;
    if (with_trace_ && !fs::exists(out + "/trace.json")) {
      throw Error("bench: the child run left no " + out + "/trace.json");
    }
    std::error_code ec;
    fs::remove_all(out, ec);
    fs::remove(log, ec);
    walls_.push_back(c.wall_s);
    sim_walls_.push_back(stats.at("wall_s").get<double>());
    const auto secs = [](const timeval& tv) {
      return double(tv.tv_sec) + double(tv.tv_usec) / 1e6;
    };
    cpus_.push_back(secs(c.usage.ru_utime) + secs(c.usage.ru_stime));
    max_rss_kib_ = std::max(max_rss_kib_, c.usage.ru_maxrss);
    progress << " " << std::fixed << std::setprecision(2) << c.wall_s << " s, "
             << (c.usage.ru_maxrss / 1024) << " MiB peak\n"
             << std::defaultfloat;
  }

  ordered_json result() const {
    const double wall = median(walls_);
    const double rss_bytes = static_cast<double>(max_rss_kib_) * 1024.0;
    ordered_json p;
    p["wall_s"] = wall;
    p["tasks_per_s"] = wall > 0 ? static_cast<double>(tasks_) / wall : 0.0;
    p["us_per_task"] = wall * 1e6 / static_cast<double>(tasks_);
    p["sim_wall_s"] = median(sim_walls_);
    // CPU time (user + system) of the child: on a shared, loaded machine the wall time mostly
    // measures the wait for a CPU; tasks per CPU second is what an idle core would reach.
    const double cpu = median(cpus_);
    p["cpu_s"] = cpu;
    p["tasks_per_cpu_s"] = cpu > 0 ? static_cast<double>(tasks_) / cpu : 0.0;
    p["rss_bytes_per_task"] = rss_bytes / static_cast<double>(tasks_);
    p["peak_rss_bytes"] = static_cast<std::uint64_t>(rss_bytes);
    p["runs"] = walls_.size();
    return p;
  }

 private:
  const BenchOptions& opt_;
  E2eTrace trace_;
  std::uint64_t tasks_;
  bool with_trace_;
  std::string dir_;
  std::vector<double> walls_, sim_walls_, cpus_;
  long max_rss_kib_ = 0;
};

// Runs the points' child runs interleaved, round after round, so that the host's drift over
// the minutes of a bench (its speed moves by a half within a day, docs/performance-log.md)
// falls on every point alike instead of on whichever ran in a slow minute. `on_error(i, e)`
// takes point i's failure (an Error; a ModelError stops the suite); point i runs again only
// while `wanted(i)` says so.
template <class Point, class OnError, class Wanted>
void run_interleaved(const BenchOptions& opt, const std::vector<Point*>& points,
                     std::ostream& progress, OnError on_error, Wanted wanted) {
  // A round passes over the points as often as the most runs one takes in it.
  for (int r = 0; r < opt.rounds; ++r) {
    for (int k = 0; k < kMostRunsInRound; ++k) {
      for (std::size_t i = 0; i < points.size(); ++i) {
        if (!wanted(i) || k >= runs_in_round(opt, points[i]->tasks(), r)) continue;
        try {
          points[i]->run_once(progress);
        } catch (const ModelError&) {
          progress << " failed\n";
          throw;
        } catch (const Error& e) {
          progress << " failed\n";
          on_error(i, e);
        }
      }
    }
  }
}

// Per-task cost from 100k tasks up, against the smallest such size's.
ordered_json flatness_of(const std::vector<std::pair<std::uint64_t, double>>& us_per_task) {
  double base = 0, worst = 0;
  std::size_t points = 0;
  for (const auto& [n, us] : us_per_task) {
    if (n < kFlatFrom) continue;
    if (points++ == 0) base = us;
    worst = std::max(worst, std::abs(us / base - 1.0));
  }
  ordered_json f;
  f["points"] = points;
  if (points >= 2) {
    f["max_deviation_from_first"] = worst;
    f["flat_within_25pct"] = worst <= kFlatTolerance;
  } else {
    f["max_deviation_from_first"] = nullptr;
    f["flat_within_25pct"] = nullptr;
  }
  return f;
}

// ---- the frontend script ---------------------------------------------------------------------

std::string repo_root(const BenchOptions& opt) {
  if (!opt.repo_root.empty()) return opt.repo_root;
  if (const char* env = std::getenv("PYPTO_ROOT"); env != nullptr && *env != '\0') return env;
  return PYPTO_SOURCE_DIR;  // the source tree we came from
}

void run_frontend(const BenchOptions& opt, ordered_json& j, std::ostream& progress) {
  const char* keys[] = {"compile_tile_ops_per_s", "first_call_ms", "cached_call_ms",
                        "cached_call_sustained_ms", "sim_us_per_task_python"};
  for (const char* k : keys) j[k] = nullptr;
  auto fail = [&](const std::string& why) {
    j["frontend_error"] = why;
    progress << "bench: frontend not measured: " << why << "\n";
  };
  if (!opt.frontend) return fail("skipped (--no-frontend)");
  const std::string root = repo_root(opt);
  const std::string python = root + "/.venv/bin/python";
  const std::string script = root + "/tools/bench_frontend.py";
  if (!fs::exists(script)) return fail(script + " does not exist");
  if (::access(python.c_str(), X_OK) != 0) {
    return fail(python + " does not exist (run tools/setup.sh)");
  }
  std::vector<std::string> argv = {python, script};
  if (opt.quick) argv.push_back("--quick");
  progress << "bench: frontend (" << script << ") ..." << std::flush;
  const std::string log = opt.out_dir + "/frontend.log";
  ChildResult c;
  try {
    c = run_child(argv, log, true, root);
  } catch (const Error& e) {
    progress << "\n";
    return fail(e.what());
  }
  progress << " " << std::fixed << std::setprecision(1) << c.wall_s << " s\n" << std::defaultfloat;
  if (!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0) {
    return fail("bench_frontend.py failed (" + describe_status(c.status) +
                "): " + tail_of_file(log));
  }
  // The script prints one JSON object (on one line or pretty-printed). Stray prints before
  // it must not break the bench: failing the whole output, try from each line that opens
  // an object, last first.
  nlohmann::json obj = nlohmann::json::parse(c.output, nullptr, false);
  for (std::size_t pos = c.output.size(); !obj.is_object() && pos > 0;) {
    pos = c.output.rfind('{', pos - 1);
    if (pos == std::string::npos) break;
    if (pos == 0 || c.output[pos - 1] == '\n')
      obj = nlohmann::json::parse(c.output.substr(pos), nullptr, false);
  }
  if (!obj.is_object()) {
    return fail("bench_frontend.py printed no JSON object (stdout: '" + c.output.substr(0, 200) +
                "')");
  }
  for (const char* k : keys) {
    if (!obj.contains(k) || !(obj[k].is_number() || obj[k].is_null())) {
      return fail(std::string("bench_frontend.py output lacks a number for '") + k + "'");
    }
  }
  for (const char* k : keys) j[k] = obj[k];
  j["frontend"] = obj;  // everything the script reported (sizes, raw times)
}

// ---- targets ---------------------------------------------------------------------------------

// One target of the issue with the measured value; `met` is null when the value was not
// measured, or measured under other conditions than the target's (`note` says which).
ordered_json target(const std::string& what, const char* unit, const char* op, double goal,
                    const ordered_json& v, const std::string& note = "") {
  ordered_json t;
  t["target"] = what;
  t["unit"] = unit;
  t["goal"] = goal;
  t["measured"] = v;
  if (v.is_number() && note.empty()) {
    const double x = v.get<double>();
    t["met"] = std::string(op) == ">=" ? x >= goal : x <= goal;
  } else {
    t["met"] = nullptr;
  }
  if (!note.empty()) t["note"] = note;
  return t;
}

}  // namespace

int runs_for(const BenchOptions& opt, std::uint64_t tasks) {
  int runs = 0;
  for (int r = 0; r < opt.rounds; ++r) runs += runs_in_round(opt, tasks, r);
  return runs;
}

// ---- the suite --------------------------------------------------------------------------------

ordered_json run_bench(const BenchOptions& in, std::ostream& progress) {
  BenchOptions opt = in;
  if (opt.out_dir.empty()) throw ConfigError("bench: no output folder given");
  if (opt.self_exe.empty() || ::access(opt.self_exe.c_str(), X_OK) != 0) {
    throw ConfigError("bench: the pypto-sim binary '" + opt.self_exe +
                      "' is not executable (needed for the scaling child runs)");
  }
  if (opt.sizes.empty()) {
    opt.sizes = opt.quick ? std::vector<std::uint64_t>{10'000, 100'000}
                          : std::vector<std::uint64_t>{10'000, 100'000, 1'000'000, 10'000'000};
  }
  for (const std::uint64_t s : opt.sizes) {
    if (s == 0 || s > 0xFFFFFFFEull) {
      throw ConfigError("bench: --sizes: " + std::to_string(s) +
                        " is out of range [1, 4294967294] tasks");
    }
  }
  std::sort(opt.sizes.begin(), opt.sizes.end());
  opt.sizes.erase(std::unique(opt.sizes.begin(), opt.sizes.end()), opt.sizes.end());
  if (opt.headline_tasks == 0) opt.headline_tasks = opt.quick ? 100'000 : 1'000'000;
  if (opt.rounds <= 0) opt.rounds = opt.quick ? 1 : 3;
  if (opt.trace_dir.empty()) opt.trace_dir = opt.out_dir;
  if (opt.formats.empty()) opt.formats = e2e_format_names();
  for (const std::string& f : opt.formats) {
    const auto& all = e2e_format_names();
    if (f != "none" && std::find(all.begin(), all.end(), f) == all.end()) {
      throw ConfigError("bench: --formats: '" + f +
                        "' is not an input format (native, dyn_topo, topo_json, fixed_latency, "
                        "or none)");
    }
  }
  opt.formats.erase(std::remove(opt.formats.begin(), opt.formats.end(), "none"), opt.formats.end());
  // Every check before the first folder is made: a bench refused at start leaves nothing.
  const model::ChipConfig chip = model::load_chip_preset(opt.chip);
  for (const std::string& d : {opt.out_dir, opt.trace_dir}) {
    std::error_code ec;
    if (fs::exists(d, ec) && !fs::is_directory(d, ec))
      throw Error("bench: " + d + " is not a folder");
  }
  fs::create_directories(opt.out_dir);
  fs::create_directories(opt.trace_dir);

  const auto t_start = Clock::now();
  ordered_json j;
  j["schema"] = "pypto-sim-bench/1";
  j["quick"] = opt.quick;
  j["chip"] = chip.chip.name;
  j["machine"] = ordered_json{{"cpus", std::thread::hardware_concurrency()},
                              {"cpu", cpu_model()},
                              {"loadavg_start", loadavg()}};
  // Whether the measured binary is the profile-guided one (tools/pgo.sh): its figures differ.
  j["build"] = ordered_json{{"type", PYPTO_BUILD_TYPE}, {"pgo", PYPTO_BUILD_PGO != 0}};

  // ---- 2. scaling, one child process per run ----
  // First, while this process is small: Linux carries a process's peak RSS across exec
  // into the child it becomes (and a spawned child starts from our memory), so a child's
  // ru_maxrss is at least ours. Each point records that floor.
  ordered_json scaling = ordered_json::array();
  ordered_json scaling_flatness;
  {
    std::vector<ScalingPoint> sizes;
    for (const std::uint64_t n : opt.sizes) {
      sizes.emplace_back(opt, ensure_trace(opt.trace_dir, trace_spec(n), progress), n,
                         opt.out_dir + "/scaling/" + human_count(n));
    }
    std::vector<ScalingPoint*> points;
    for (ScalingPoint& p : sizes) points.push_back(&p);
    run_interleaved(
        opt, points, progress, [](std::size_t, const Error&) { throw; },
        [](std::size_t) { return true; });
    for (const ScalingPoint& p : sizes) scaling.push_back(p.result());
  }
  // Flatness: every size from 100k up within +-25% of the 100k (smallest such) cost.
  {
    double base = 0, worst = 0, lo_us = 0, hi_us = 0;
    std::size_t points = 0;
    double rss_first = 0, rss_last = 0;
    for (const auto& p : scaling) {
      if (p["tasks"].get<std::uint64_t>() < kFlatFrom) continue;
      const double us = p["us_per_task"].get<double>();
      const double rss = p["rss_bytes_per_task"].get<double>();
      if (points == 0) {
        base = us;
        lo_us = hi_us = us;
        rss_first = rss;
      }
      lo_us = std::min(lo_us, us);
      hi_us = std::max(hi_us, us);
      worst = std::max(worst, std::abs(us / base - 1.0));
      rss_last = rss;
      ++points;
    }
    ordered_json f;
    f["from_tasks"] = kFlatFrom;
    f["points"] = points;
    if (points >= 2) {
      f["max_over_min_us_per_task"] = hi_us / lo_us;
      f["max_deviation_from_first"] = worst;
      f["flat_within_25pct"] = worst <= kFlatTolerance;
      // The fixed part of the RSS (binary, SystemC, buffers) spreads over more tasks as
      // the size grows, so per-task memory must fall or stay; 5% slack for allocator noise.
      f["memory_per_task_grows"] = rss_last > rss_first * 1.05;
    } else {
      f["max_over_min_us_per_task"] = nullptr;
      f["max_deviation_from_first"] = nullptr;
      f["flat_within_25pct"] = nullptr;
      f["memory_per_task_grows"] = nullptr;
      f["note"] = "needs two sizes of at least 100k tasks";
    }
    scaling_flatness = f;
  }

  // ---- 2b. end to end per input format, one child process per run ----
  // What a user runs: `pypto-sim run` (read + simulate + stats.json), and with trace.json and
  // swim.json; also while this process is small. Wall = the child's whole life.
  ordered_json e2e;
  {
    // A reader that refuses a size (a whole-file reader over its memory limit) or fails is
    // one point's error, not the end of the suite; a run that loses tasks (ModelError) still
    // stops it.
    struct Entry {
      std::string format;
      std::uint64_t tasks = 0;
      std::uint64_t trace_bytes = 0;
      std::unique_ptr<E2ePoint> plain, traced;
      std::string error;
    };
    std::vector<Entry> entries;
    const auto not_measured = [&progress](Entry& e, const Error& err) {
      if (!e.error.empty()) return;
      progress << "bench: end to end " << e.format << " " << human_count(e.tasks)
               << " not measured: " << err.what() << "\n";
      e.error = err.what();
    };
    for (const std::string& format : opt.formats) {
      for (const std::uint64_t n : opt.sizes) {
        Entry e;
        e.format = format;
        e.tasks = n;
        const std::string dir = opt.out_dir + "/end_to_end/" + format + "_" + human_count(n);
        try {
          const E2eTrace trace = ensure_format_trace(opt, format, n, progress);
          e.trace_bytes = static_cast<std::uint64_t>(fs::file_size(trace.path)) +
                          (trace.prof.empty() ? 0 : fs::file_size(trace.prof));
          e.plain = std::make_unique<E2ePoint>(opt, trace, n, false, dir + "/no_trace");
          e.traced = std::make_unique<E2ePoint>(opt, trace, n, true, dir + "/with_trace");
        } catch (const ModelError&) {
          throw;
        } catch (const Error& err) {
          progress << " failed\n";  // ends the line of the trace being generated
          not_measured(e, err);
        }
        entries.push_back(std::move(e));
      }
    }
    std::vector<E2ePoint*> runs;
    std::vector<std::size_t> entry_of;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (!entries[i].error.empty()) continue;
      for (E2ePoint* p : {entries[i].plain.get(), entries[i].traced.get()}) {
        runs.push_back(p);
        entry_of.push_back(i);
      }
    }
    run_interleaved(
        opt, runs, progress,
        [&](std::size_t k, const Error& err) { not_measured(entries[entry_of[k]], err); },
        [&](std::size_t k) { return entries[entry_of[k]].error.empty(); });
    ordered_json points = ordered_json::array();
    ordered_json flat = ordered_json::object();
    for (const std::string& format : opt.formats) {
      std::vector<std::pair<std::uint64_t, double>> cost_plain, cost_trace;
      for (const Entry& e : entries) {
        if (e.format != format) continue;
        ordered_json p;
        p["format"] = format;
        p["tasks"] = e.tasks;
        if (e.plain) p["trace_bytes"] = e.trace_bytes;
        if (!e.error.empty()) {
          p["error"] = e.error;
          p["no_trace"] = nullptr;
          p["with_trace"] = nullptr;
        } else {
          p["no_trace"] = e.plain->result();
          p["with_trace"] = e.traced->result();
          cost_plain.emplace_back(e.tasks, p["no_trace"]["us_per_task"].get<double>());
          cost_trace.emplace_back(e.tasks, p["with_trace"]["us_per_task"].get<double>());
        }
        points.push_back(p);
      }
      flat[format] = ordered_json{{"no_trace", flatness_of(cost_plain)},
                                  {"with_trace", flatness_of(cost_trace)}};
    }
    e2e["formats"] = opt.formats;
    e2e["points"] = points;
    e2e["flatness"] = flat;
  }

  // ---- 1. the model against the ceiling and the heap DES, side by side ----
  const std::string headline_trace =
      ensure_trace(opt.trace_dir, trace_spec(opt.headline_tasks), progress);
  progress << "bench: loading " << headline_trace << " ..." << std::flush;
  auto t0 = Clock::now();
  trace::LoadOptions lo;
  const trace::LoadedTrace loaded = trace::load_trace(headline_trace, lo, chip);
  const sched::TaskGraph& g = loaded.graph;
  const double load_s = seconds_since(t0);
  progress << " " << std::fixed << std::setprecision(2) << load_s << " s\n" << std::defaultfloat;
  std::uint64_t hubs = 0;
  for (const auto ct : g.core_type) hubs += ct == common::CoreType::kHub ? 1 : 0;
  const std::uint64_t tasks = g.num_tasks() - hubs;  // what the model's tasks/s counts
  const MinimalCosts costs = minimal_costs(chip);

  sim::SimOptions sim_opt;
  sim_opt.record_timeline = false;
  sim_opt.record_aicpu_events = false;
  std::vector<double> model_tps, ceiling_tps, heap_tps, ratios;
  sim::SimStats model_stats;
  MinimalResult ceiling_res, heap_res;
  for (int r = 0; r < opt.rounds; ++r) {
    // Rotate the order each round so that no model always runs first (cold caches,
    // allocator growth) or last.
    double m = 0, c = 0, h = 0;
    for (int k = 0; k < 3; ++k) {
      switch ((k + r) % 3) {
        case 0: {
          const sim::SimResult res = sim::simulate(g, chip, sim_opt);
          if (res.stats.tasks != tasks) {
            throw ModelError("bench: the full model completed " + std::to_string(res.stats.tasks) +
                             " of " + std::to_string(tasks) + " tasks");
          }
          model_stats = res.stats;
          m = static_cast<double>(tasks) / res.stats.wall_s;
          break;
        }
        case 1:
          ceiling_res = run_ceiling(g, costs);  // throws unless every task completed
          c = static_cast<double>(tasks) / ceiling_res.wall_s;
          break;
        case 2:
          heap_res = run_heap_des(g, costs);
          h = static_cast<double>(tasks) / heap_res.wall_s;
          break;
      }
    }
    model_tps.push_back(m);
    ceiling_tps.push_back(c);
    heap_tps.push_back(h);
    ratios.push_back(m / c);
    progress << "bench: round " << (r + 1) << "/" << opt.rounds << " on "
             << human_count(opt.headline_tasks) << " tasks: model " << std::llround(m)
             << " tasks/s, ceiling " << std::llround(c) << ", heap DES " << std::llround(h) << "\n";
  }
  j["trace"] = ordered_json{{"path", headline_trace},
                            {"shape", "mix"},
                            {"tasks", tasks},
                            {"edges", g.num_edges()},
                            {"device_tasks", g.device_tasks.size()},
                            {"load_s", load_s}};
  j["rounds"] = opt.rounds;
  j["model_tasks_per_s"] = median(model_tps);
  j["ceiling_tasks_per_s"] = median(ceiling_tps);
  j["ratio_to_ceiling"] = median(ratios);  // per-round ratios: both halves saw the same load
  j["heap_des_tasks_per_s"] = median(heap_tps);
  j["ceiling_over_heap_des"] = median(ceiling_tps) / median(heap_tps);
  j["headline_detail"] =
      ordered_json{{"model_runs_tasks_per_s", model_tps},
                   {"ceiling_runs_tasks_per_s", ceiling_tps},
                   {"heap_des_runs_tasks_per_s", heap_tps},
                   {"model_makespan_ns", static_cast<double>(model_stats.makespan_ps) / 1000.0},
                   {"ceiling_makespan_ns", static_cast<double>(ceiling_res.makespan_ps) / 1000.0},
                   {"heap_des_makespan_ns", static_cast<double>(heap_res.makespan_ps) / 1000.0},
                   {"model_activations", model_stats.sim_events},
                   {"model_timesteps", model_stats.sim_timesteps},
                   {"ceiling_activations", ceiling_res.activations},
                   {"heap_des_events", heap_res.activations},
                   {"sched_threads", costs.threads},
                   {"cores", costs.aic + costs.aiv}};

  j["scaling"] = scaling;
  j["scaling_flatness"] = scaling_flatness;
  j["end_to_end"] = e2e;

  // ---- 3. per-policy cost on the same graph ----
  const std::vector<std::string> policies = {"fifo", "l2_affinity", "fair", "l2_fair"};
  std::vector<std::vector<double>> policy_tps(policies.size());
  for (int r = 0; r < opt.rounds; ++r) {
    for (std::size_t p = 0; p < policies.size(); ++p) {
      sim::SimOptions po = sim_opt;
      po.runtime.policy = policies[p];
      const sim::SimResult res = sim::simulate(g, chip, po);
      if (res.stats.tasks != tasks) {
        throw ModelError("bench: policy " + policies[p] + " completed " +
                         std::to_string(res.stats.tasks) + " of " + std::to_string(tasks) +
                         " tasks");
      }
      policy_tps[p].push_back(static_cast<double>(tasks) / res.stats.wall_s);
    }
  }
  ordered_json pol = ordered_json::object();
  for (std::size_t p = 0; p < policies.size(); ++p) pol[policies[p]] = median(policy_tps[p]);
  progress << "bench: policies on " << human_count(opt.headline_tasks) << " tasks:";
  for (std::size_t p = 0; p < policies.size(); ++p) {
    progress << " " << policies[p] << " " << std::llround(median(policy_tps[p]));
  }
  progress << " tasks/s\n";
  j["policies"] = pol;
  j["policies_trace_tasks"] = tasks;

  // ---- 4. the frontend ----
  run_frontend(opt, j, progress);

  // ---- 6. targets ----
  ordered_json rss_at_10m = nullptr;
  for (const auto& p : scaling) {
    if (p["tasks"].get<std::uint64_t>() == 10'000'000) rss_at_10m = p["rss_bytes_per_task"];
  }
  const std::string not_1m = opt.headline_tasks == 1'000'000
                                 ? ""
                                 : "measured on " + human_count(opt.headline_tasks) + " tasks";
  const std::string not_10m = rss_at_10m.is_null() ? "10M tasks not in the sizes" : "";
  const std::string no_frontend = j.contains("frontend_error") ? "frontend not measured" : "";
  ordered_json targets = ordered_json::array();
  targets.push_back(target("full model >= 40% of the bare SystemC ceiling, 1M tasks", "ratio",
                           ">=", kTargetRatio, j["ratio_to_ceiling"], not_1m));
  targets.push_back(target("full model >= 1,000,000 tasks/s, 1M tasks", "tasks/s",
                           ">=", kTargetModelTasksPerS, j["model_tasks_per_s"], not_1m));
  targets.push_back(target("<= 200 bytes resident per task at 10M tasks", "B/task",
                           "<=", kTargetRssBytesPerTask, rss_at_10m, not_10m));
  targets.push_back(target("compile >= 1,000,000 tile ops/s", "tile ops/s", ">=",
                           kTargetCompileTileOpsPerS, j["compile_tile_ops_per_s"], no_frontend));
  targets.push_back(target("cached small-kernel call < 2 ms", "ms", "<=", kTargetCachedCallMs,
                           j["cached_call_ms"], no_frontend));
  targets.push_back(target("first call of a one-tile kernel < 0.2 s", "ms",
                           "<=", kTargetFirstCallMs, j["first_call_ms"], no_frontend));
  // End to end, per format: the speeds at 1M tasks, the memory at 10M (the larger of the two
  // runs' peaks), the per-task cost flat from 100k up in both runs.
  for (const std::string& format : opt.formats) {
    ordered_json plain_1m = nullptr, trace_1m = nullptr, rss_10m = nullptr;
    for (const auto& p : e2e["points"]) {
      if (p["format"] != format || p.contains("error")) continue;
      const std::uint64_t n = p["tasks"].get<std::uint64_t>();
      if (n == 1'000'000) {
        plain_1m = p["no_trace"]["tasks_per_s"];
        trace_1m = p["with_trace"]["tasks_per_s"];
      }
      if (n == 10'000'000) {
        rss_10m = std::max(p["no_trace"]["rss_bytes_per_task"].get<double>(),
                           p["with_trace"]["rss_bytes_per_task"].get<double>());
      }
    }
    const auto missing = [&](std::uint64_t n) {
      const bool asked = std::find(opt.sizes.begin(), opt.sizes.end(), n) != opt.sizes.end();
      return asked ? "the " + human_count(n) + " run failed (end_to_end.points[].error)"
                   : human_count(n) + " tasks not in the sizes";
    };
    const std::string no_1m = plain_1m.is_null() ? missing(1'000'000) : "";
    const std::string no_10m = rss_10m.is_null() ? missing(10'000'000) : "";
    targets.push_back(target(format + ": end to end >= 1,000,000 tasks/s, 1M tasks", "tasks/s",
                             ">=", kTargetE2eTasksPerS, plain_1m, no_1m));
    targets.push_back(target(format + ": with trace.json+swim.json >= 500,000 tasks/s, 1M",
                             "tasks/s", ">=", kTargetE2eTraceTasksPerS, trace_1m, no_1m));
    targets.push_back(target(format + ": end to end <= 200 B resident per task, 10M", "B/task",
                             "<=", kTargetRssBytesPerTask, rss_10m, no_10m));
    const auto& fl = e2e["flatness"][format];
    ordered_json worst = nullptr;
    for (const char* mode : {"no_trace", "with_trace"}) {
      const auto& d = fl[mode]["max_deviation_from_first"];
      if (d.is_number()) {
        worst = worst.is_null() ? d.get<double>() : std::max(worst.get<double>(), d.get<double>());
      } else {
        worst = nullptr;
        break;
      }
    }
    if (worst.is_number()) worst = 100 * worst.get<double>();
    targets.push_back(target(format + ": end-to-end cost per task flat +-25 % from 100k", "%",
                             "<=", 100 * kFlatTolerance, worst,
                             worst.is_null() ? "needs two sizes of at least 100k" : ""));
  }
  j["targets"] = targets;
  j["all_tasks_completed"] = true;  // every measurement above throws otherwise
  j["machine"]["loadavg_end"] = loadavg();
  j["bench_wall_s"] = seconds_since(t_start);
  return j;
}

// ---- the table ----------------------------------------------------------------------------------

namespace {

std::string num(const ordered_json& v, const char* format = "%.0f") {
  if (!v.is_number()) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v.get<double>());
  return buf;
}

// 1234567 -> "1,234,567"
std::string grouped(const ordered_json& v) {
  if (!v.is_number()) return "n/a";
  std::string s = std::to_string(std::llround(v.get<double>()));
  for (int i = static_cast<int>(s.size()) - 3; i > 0 && s[i - 1] != '-'; i -= 3) s.insert(i, ",");
  return s;
}

std::string pad(std::string s, std::size_t w, bool right = true) {
  if (s.size() >= w) return s;
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

}  // namespace

std::string bench_table(const ordered_json& j) {
  std::ostringstream o;
  o << "pypto-sim bench (" << j.value("chip", "?") << (j.value("quick", false) ? ", quick" : "");
  if (j.contains("build")) {
    o << "; " << j["build"].value("type", "?") << " build"
      << (j["build"].value("pgo", false) ? " with PGO" : "");
  }
  o << "; " << j["machine"].value("cpus", 0u) << " CPUs, load "
    << j["machine"].value("loadavg_start", "?") << " -> " << j["machine"].value("loadavg_end", "?")
    << ")\n\n";
  o << "model vs ceiling: mix trace of " << grouped(j["trace"]["tasks"]) << " tasks, "
    << j.value("rounds", 0) << " interleaved round(s), medians\n";
  o << "  full model (SystemC)     " << pad(grouped(j["model_tasks_per_s"]), 12) << " tasks/s\n";
  o << "  bare SystemC ceiling     " << pad(grouped(j["ceiling_tasks_per_s"]), 12) << " tasks/s\n";
  o << "  C++ heap event loop      " << pad(grouped(j["heap_des_tasks_per_s"]), 12) << " tasks/s\n";
  const ordered_json ratio_pct = j["ratio_to_ceiling"].is_number()
                                     ? ordered_json(100 * j["ratio_to_ceiling"].get<double>())
                                     : ordered_json(nullptr);
  o << "  model / ceiling          " << pad(num(ratio_pct, "%.1f"), 12) << " %\n";
  // SystemC's cost is per activation and per timestep, so these bound the ratio.
  const ordered_json hd = j.value("headline_detail", ordered_json::object());
  const double tasks = j.value("trace", ordered_json::object()).value("tasks", 0.0);
  auto per_task = [&](const char* key) {
    return tasks > 0 && hd.contains(key) && hd[key].is_number()
               ? num(ordered_json(hd[key].get<double>() / tasks), "%.2f")
               : std::string("n/a");
  };
  // The model's agents share one SystemC process, which runs many distinct times per
  // activation (calendar.h: the quantum).
  o << "  activations/task: model " << per_task("model_activations") << " agent, "
    << per_task("model_timesteps") << " distinct times; ceiling " << per_task("ceiling_activations")
    << " SystemC\n\n";
  o << "scaling (one child process per run; wall = simulation only)\n";
  o << "  " << pad("tasks", 10) << pad("wall s", 10) << pad("tasks/s", 13) << pad("us/task", 10)
    << pad("RSS B/task", 12) << pad("peak MiB", 10) << pad("runs", 6) << "\n";
  for (const auto& p : j["scaling"]) {
    o << "  " << pad(grouped(p["tasks"]), 10) << pad(num(p["wall_s"], "%.3f"), 10)
      << pad(grouped(p["tasks_per_s"]), 13) << pad(num(p["us_per_task"], "%.3f"), 10)
      << pad(num(p["rss_bytes_per_task"], "%.0f"), 12)
      << pad(num(ordered_json(p["peak_rss_bytes"].get<double>() / (1024.0 * 1024.0)), "%.0f"), 10)
      << pad(std::to_string(p.value("runs", 0)), 6) << "\n";
  }
  const auto& f = j["scaling_flatness"];
  if (f["flat_within_25pct"].is_boolean()) {
    o << "  per-task cost from 100k up: max deviation "
      << num(ordered_json(100 * f["max_deviation_from_first"].get<double>()), "%.0f")
      << " % of the 100k cost -> " << (f["flat_within_25pct"].get<bool>() ? "flat" : "NOT FLAT")
      << " (limit +-25 %); memory per task "
      << (f["memory_per_task_grows"].get<bool>() ? "GROWS" : "does not grow") << "\n\n";
  } else {
    o << "  per-task flatness: " << f.value("note", "") << "\n\n";
  }
  if (j.contains("end_to_end") && !j["end_to_end"]["points"].empty()) {
    o << "end to end (pypto-sim run, one child process per run; wall = the whole process)\n";
    o << "  (tasks/s of wall time; in brackets per CPU second of the child, what an idle core\n"
      << "  would reach on a loaded machine)\n";
    o << "  " << pad("format", 14, false) << pad("tasks", 11) << pad("run tasks/s", 13)
      << pad("(CPU)", 12) << pad("us/task", 9) << pad("B/task", 8) << pad("+trace tasks/s", 16)
      << pad("(CPU)", 12) << pad("us/task", 9) << pad("B/task", 8) << "\n";
    for (const auto& p : j["end_to_end"]["points"]) {
      if (p.contains("error")) {
        o << "  " << pad(p["format"].get<std::string>(), 14, false) << pad(grouped(p["tasks"]), 11)
          << "  not measured: " << p["error"].get<std::string>().substr(0, 120) << "\n";
        continue;
      }
      const auto& a = p["no_trace"];
      const auto& b = p["with_trace"];
      o << "  " << pad(p["format"].get<std::string>(), 14, false) << pad(grouped(p["tasks"]), 11)
        << pad(grouped(a["tasks_per_s"]), 13) << pad("(" + grouped(a["tasks_per_cpu_s"]) + ")", 12)
        << pad(num(a["us_per_task"], "%.3f"), 9) << pad(num(a["rss_bytes_per_task"]), 8)
        << pad(grouped(b["tasks_per_s"]), 16) << pad("(" + grouped(b["tasks_per_cpu_s"]) + ")", 12)
        << pad(num(b["us_per_task"], "%.3f"), 9) << pad(num(b["rss_bytes_per_task"]), 8) << "\n";
    }
    for (auto it = j["end_to_end"]["flatness"].begin(); it != j["end_to_end"]["flatness"].end();
         ++it) {
      o << "  " << pad(it.key(), 14, false) << "per-task cost from 100k up:";
      for (const char* mode : {"no_trace", "with_trace"}) {
        const auto& f = it.value()[mode];
        o << " " << mode << " ";
        if (f["flat_within_25pct"].is_boolean()) {
          o << num(ordered_json(100 * f["max_deviation_from_first"].get<double>()), "%.0f")
            << " % (" << (f["flat_within_25pct"].get<bool>() ? "flat" : "NOT FLAT") << ")";
        } else {
          o << "n/a";
        }
      }
      o << "\n";
    }
    o << "\n";
  }
  o << "policies (" << grouped(j["policies_trace_tasks"]) << " tasks, tasks/s)\n";
  for (auto it = j["policies"].begin(); it != j["policies"].end(); ++it) {
    o << "  " << pad(it.key(), 14, false) << pad(grouped(it.value()), 12) << "\n";
  }
  o << "\nfrontend\n";
  o << "  compile                  " << pad(grouped(j["compile_tile_ops_per_s"]), 12)
    << " tile ops/s\n";
  o << "  first small-kernel call  " << pad(num(j["first_call_ms"], "%.3f"), 12) << " ms\n";
  o << "  cached small-kernel call " << pad(num(j["cached_call_ms"], "%.3f"), 12)
    << " ms (returns with the outputs; report in the background)\n";
  o << "    with its report        " << pad(num(j["cached_call_sustained_ms"], "%.3f"), 12)
    << " ms per call, sustained\n";
  o << "  SIM from Python          " << pad(num(j["sim_us_per_task_python"], "%.3f"), 12)
    << " us/task\n";
  if (j.contains("frontend_error"))
    o << "  (not measured: " << j["frontend_error"].get<std::string>() << ")\n";
  o << "\ntargets\n";
  for (const auto& t : j["targets"]) {
    const std::string unit = t.value("unit", "");
    std::string measured;
    if (!t["measured"].is_number()) {
      measured = "n/a";
    } else if (unit == "ratio") {
      measured = num(ordered_json(100 * t["measured"].get<double>()), "%.1f") + " %";
    } else if (unit == "%") {
      measured = num(t["measured"], "%.1f") + " %";
    } else if (unit == "ms") {
      measured = num(t["measured"], "%.3f") + " ms";
    } else {
      measured = grouped(t["measured"]) + " " + unit;
    }
    const std::string met = t["met"].is_boolean() ? (t["met"].get<bool>() ? "met" : "NOT MET")
                            : t.contains("note")  ? "(" + t["note"].get<std::string>() + ")"
                                                  : "not measured";
    o << "  " << pad(t["target"].get<std::string>(), 60, false) << pad(measured, 22) << "  " << met
      << "\n";
  }
  o << "\nevery run completed every task: "
    << (j.value("all_tasks_completed", false) ? "yes" : "NO") << "; bench took "
    << num(j["bench_wall_s"], "%.1f") << " s\n";
  return o.str();
}

}  // namespace pypto::bench
