// SPDX-License-Identifier: Apache-2.0
// trace.json: Chrome trace events for Perfetto (a track per core and per AICPU thread, an X
// event per task, dependency flows, ready-queue counters), and what it leaves out (trace_notes).
#include <cmath>

#include "pypto/trace/text_out.h"
#include "report_files.h"

namespace pypto::sim {
namespace {

using nlohmann::ordered_json;

// trace.json times: whole ns (each instant rounded once), written in µs as the format wants.
// Viewers add ts + dur in doubles (Chrome DevTools drops a slice that seems to start before
// the previous one on its track ends), so dur is the double that makes ts + dur land exactly
// on the end's double, or just below it: back-to-back slices then meet exactly, and a reader
// that rounds to integer ns gets end - start.
std::uint64_t to_ns(std::uint64_t ps) { return (ps + 500) / 1000; }
double trace_us(std::uint64_t ps) { return static_cast<double>(to_ns(ps)) / 1e3; }
double trace_dur_us(std::uint64_t start_ps, std::uint64_t end_ps) {
  const double a = trace_us(start_ps), b = trace_us(end_ps);
  double d = b - a;
  for (int i = 0; i < 4 && a + d > b; ++i) d = std::nextafter(d, 0.0);
  for (int i = 0; i < 4 && a + d < b && a + std::nextafter(d, b) <= b; ++i)
    d = std::nextafter(d, b);
  return d;
}
// The same bytes as TextOut::d of trace_us / trace_dur_us, without nlohmann's grisu2: a time
// from its whole ns count, a dur from the memo of the doubles written before.
void write_trace_us(trace::TextOut& f, std::uint64_t ps) { f.us_of_ns(to_ns(ps)); }
void write_trace_dur_us(trace::TextOut& f, std::uint64_t start_ps, std::uint64_t end_ps) {
  f.d_memo(trace_dur_us(start_ps, end_ps));
}

// A report file's text (text_out.h), checked as it goes.
class ReportText : public trace::TextOut {
 public:
  explicit ReportText(common::OutputFile& f)
      : TextOut(f.stream(), [&f] { report::check_writer(f); }) {}
};

}  // namespace

namespace report {

void write_trace_json(common::OutputFile& out, const sched::TaskGraph& g, const SimResult& r,
                      const ReportOptions& opt) {
  ReportText f(out);
  const Timeline& tl = r.timeline;
  const std::uint32_t aic = r.stats.aic.count;
  const std::uint32_t cores = aic + r.stats.aiv.count;
  const auto nthreads = static_cast<std::uint32_t>(r.stats.threads.size());
  bool first = true;
  auto sep = [&] {
    f << (first ? "\n" : ",\n");
    first = false;
  };
  auto emit = [&](const ordered_json& e) {
    sep();
    f << e.dump();
    f.end_record();
  };
  // Every event has a cat: viewers group and filter by it, and Chrome DevTools binds a flow
  // event to the slice with the same cat, pid, tid and ts (so a dependency arrow starts at
  // its producer's start and ends at its consumer's start, both in cat "task").
  f << "{\"traceEvents\":[";
  // Track names: pid 1 = AICore (tid = core id), pid 2 = AICPU (tid = thread, last = control).
  emit({{"ph", "M"},
        {"cat", "__metadata"},
        {"pid", 1},
        {"name", "process_name"},
        {"args", {{"name", "AICore"}}}});
  emit({{"ph", "M"},
        {"cat", "__metadata"},
        {"pid", 2},
        {"name", "process_name"},
        {"args", {{"name", "AICPU"}}}});
  for (std::uint32_t c = 0; c < cores; ++c) {
    const std::string name =
        c < aic ? "AIC " + std::to_string(c) : "AIV " + std::to_string(c - aic);
    emit({{"ph", "M"},
          {"cat", "__metadata"},
          {"pid", 1},
          {"tid", c},
          {"name", "thread_name"},
          {"args", {{"name", name}}}});
    emit({{"ph", "M"},
          {"cat", "__metadata"},
          {"pid", 1},
          {"tid", c},
          {"name", "thread_sort_index"},
          {"args", {{"sort_index", c}}}});
  }
  for (std::uint32_t t = 0; t <= nthreads; ++t) {
    const std::string name = t < nthreads ? "sched " + std::to_string(t) : "control flow";
    emit({{"ph", "M"},
          {"cat", "__metadata"},
          {"pid", 2},
          {"tid", t},
          {"name", "thread_name"},
          {"args", {{"name", name}}}});
  }
  // One X event per task on its core (the key order of the DOM this replaced).
  const std::vector<std::string> kernels = json_kernel_names(g);
  for (common::TaskId t = 0; t < g.num_tasks(); ++t) {
    if (!common::is_dispatchable(g.core_type[t]) || tl.core[t] == common::kNoCore16) continue;
    const auto& d = g.device_tasks[g.device_task[t]];
    sep();
    f << "{\"ph\":\"X\",\"cat\":\"task\",\"pid\":1,\"tid\":";
    f.u(tl.core[t]) << ",\"name\":" << json_kernel_of(kernels, g, t) << ",\"ts\":";
    write_trace_us(f, tl.start_ps[t]);
    f << ",\"dur\":";
    write_trace_dur_us(f, tl.start_ps[t], tl.end_ps[t]);
    f << ",\"args\":{\"taskId\":";
    f.u(g.orig_id[t]) << ",\"seqNo\":";
    f.u(d.seq_no) << ",\"root\":";
    f.u(g.root[t]) << "}}";
    f.end_record();
  }
  // Dependency arrows, producer to consumer, each flow event bound to its task's slice.
  const auto flow_event = [&](const char* head, common::TaskId t, std::size_t id) {
    sep();
    f << head;
    f.u(tl.core[t]) << ",\"name\":\"dep\",\"cat\":\"task\",\"id\":";
    f.u(id) << ",\"ts\":";
    write_trace_us(f, tl.start_ps[t]);
    f << '}';
    f.end_record();
  };
  std::size_t flows = 0;
  for (common::TaskId t = 0; t < g.num_tasks() && flows < opt.max_flow_edges; ++t) {
    if (!common::is_dispatchable(g.core_type[t]) || tl.core[t] == common::kNoCore16) continue;
    for (std::uint32_t i = g.succ_first(t); i < g.succ_last(t) && flows < opt.max_flow_edges; ++i) {
      const common::TaskId s = g.succ[i];
      if (!common::is_dispatchable(g.core_type[s]) || tl.core[s] == common::kNoCore16) continue;
      ++flows;
      flow_event("{\"ph\":\"s\",\"pid\":1,\"tid\":", t, flows);
      flow_event("{\"ph\":\"f\",\"bp\":\"e\",\"pid\":1,\"tid\":", s, flows);
    }
  }
  // AICPU work and ready-queue depth.
  for (const auto& a : tl.aicpu) {
    const bool control = a.thread == nthreads;
    sep();
    f << "{\"ph\":\"X\",\"cat\":\"aicpu\",\"pid\":2,\"tid\":";
    f.u(a.thread) << ",\"name\":" << (control ? "\"build device task\"" : "\"poll round\"")
                  << ",\"ts\":";
    write_trace_us(f, a.start_ps);
    f << ",\"dur\":";
    write_trace_dur_us(f, a.start_ps, a.end_ps);
    f << ",\"args\":{\"completions\":";
    f.u(a.completions) << ",\"dispatches\":";
    f.u(a.dispatches) << "}}";
    f.end_record();
  }
  for (const auto& d : tl.depth) {
    sep();
    f << "{\"ph\":\"C\",\"cat\":\"aicpu\",\"pid\":2,\"name\":\"ready queue\",\"ts\":";
    write_trace_us(f, d.time_ps);
    f << ",\"args\":{\"AIC\":";
    f.u(d.aic) << ",\"AIV\":";
    f.u(d.aiv) << "}}";
    f.end_record();
  }
  f << "\n],\"metadata\":"
    << ordered_json{{"generator", "pypto-sim"},
                    {"chip", r.stats.chip},
                    {"policy", r.stats.policy},
                    {"dependency_arrows", flows},
                    {"dependency_arrows_truncated", flows >= opt.max_flow_edges},
                    {"aicpu_events_truncated", tl.aicpu_truncated}}
           .dump()
    << "}\n";
  f.flush();
  out.finish();
}

}  // namespace report

std::vector<std::string> trace_notes(const sched::TaskGraph& g, const SimResult& r,
                                     const ReportOptions& opt) {
  std::vector<std::string> notes;
  const Timeline& tl = r.timeline;
  if (tl.core.size() != g.num_tasks()) return notes;
  auto placed = [&](common::TaskId t) {
    return common::is_dispatchable(g.core_type[t]) && tl.core[t] != common::kNoCore16;
  };
  std::size_t edges = 0;
  for (common::TaskId t = 0; t < g.num_tasks(); ++t) {
    if (!placed(t)) continue;
    for (std::uint32_t i = g.succ_first(t); i < g.succ_last(t); ++i) edges += placed(g.succ[i]);
  }
  if (edges > opt.max_flow_edges) {
    notes.push_back("trace.json: " + std::to_string(opt.max_flow_edges) + " of " +
                    std::to_string(edges) +
                    " dependency arrows written (the first, in task order; "
                    "viewers slow down beyond)");
  }
  if (tl.aicpu_truncated) {
    notes.push_back("trace.json: only the first " + std::to_string(tl.aicpu.size()) +
                    " AICPU spans (and ready-queue samples up to them) kept; later ones left out");
  }
  return notes;
}

}  // namespace pypto::sim
