// SPDX-License-Identifier: Apache-2.0
// PyPTO's merged swimlane as input: the sample (the sample board recording drawn as
// draw_swim_lane.py draws it, traces/samples/README.md) reads back as the same graph as
// dyn_topo.txt + prof, placeholders drawn at one time merge, and every swimlane the reader
// cannot use is an error naming the file, the event and what was expected.
#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "../common/temp_dir.h"
#include "pypto/common/errors.h"
#include "pypto/trace/trace_loader.h"
#include "trace_test.h"

using Catch::Matchers::Contains;
using pypto::common::CoreType;
using pypto::common::TaskId;
using pypto::sched::TaskGraph;
using namespace pypto::model;
using namespace pypto::trace;

namespace {

using pypto::testing::find;
using pypto::testing::load;
using pypto::testing::sample;
using pypto::testing::TempDir;

// (seqNo, taskId) of every successor of t.
std::set<std::pair<std::uint32_t, std::uint32_t>> succ_ids(const TaskGraph& g, TaskId t) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> s;
  for (std::uint32_t e = g.succ_first(t); e < g.succ_last(t); ++e) {
    s.emplace(g.device_tasks[g.device_task[g.succ[e]]].seq_no, g.orig_id[g.succ[e]]);
  }
  return s;
}

// A swimlane of the given events (lanes named first).
std::string swimlane(const std::string& events) {
  return R"({"traceEvents":[
{"ph":"M","name":"thread_name","pid":1,"tid":1000,"args":{"name":"Fake Core_0"}},
{"ph":"M","name":"thread_name","pid":1,"tid":1002,"args":{"name":"AIC_1"}},
{"ph":"M","name":"thread_name","pid":1,"tid":1050,"args":{"name":"AIV_25"}})" +
         events + "]}";
}

std::string task(int tid, double ts, double dur, int task_id, int seq = 0) {
  return ",\n{\"ph\":\"X\",\"name\":\"t(k)\",\"pid\":1,\"tid\":" + std::to_string(tid) +
         ",\"ts\":" + std::to_string(ts) + ",\"dur\":" + std::to_string(dur) +
         ",\"args\":{\"taskId\":" + std::to_string(task_id) + ",\"seqNo\":" + std::to_string(seq) +
         "}}";
}

std::string arrow(int id, int from_tid, double end, int to_tid, double start) {
  return ",\n{\"ph\":\"s\",\"cat\":\"machine-view-last-dep\",\"id\":" + std::to_string(id) +
         ",\"pid\":1,\"tid\":" + std::to_string(from_tid) +
         ",\"ts\":" + std::to_string(end - 0.0001) +
         "},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"machine-view-last-dep\",\"id\":" +
         std::to_string(id) + ",\"pid\":1,\"tid\":" + std::to_string(to_tid) +
         ",\"ts\":" + std::to_string(start) + "}";
}

}  // namespace

TEST_CASE("swimlane: detected from content, an object or a bare array of events") {
  TempDir tmp;
  CHECK(detect_trace_format(sample("merged_swimlane.json")) == TraceFormat::kSwimlane);
  CHECK(std::string(to_string(TraceFormat::kSwimlane)) == "merged_swimlane");
  CHECK(detect_trace_format(tmp.write("a.json", R"([{"ph":"M","name":"process_name"}])")) ==
        TraceFormat::kSwimlane);
  CHECK(detect_trace_format(tmp.write("o.json", R"({"displayTimeUnit":"ns","traceEvents":[]})")) ==
        TraceFormat::kSwimlane);
}

TEST_CASE("swimlane: the sample reads as the same graph and times as dyn_topo.txt + prof") {
  const LoadedTrace sw = load(sample("merged_swimlane.json"));
  const LoadedTrace board = load(sample("dyn_topo.txt"), sample("tilefwk_L1_prof_data.json"));
  const TaskGraph& g = sw.graph;
  const TaskGraph& b = board.graph;
  CHECK(sw.format == TraceFormat::kSwimlane);
  REQUIRE(g.num_tasks() == 10);
  REQUIRE(g.device_tasks.size() == 2);
  CHECK(g.device_tasks[0].num_tasks == 7);
  CHECK(g.num_edges() == 8);
  // The HUB has no record: PyPTO draws it on the Fake Core lane; it is a zero-cost node.
  const TaskId hub = find(g, 0, 7340032);
  CHECK(g.core_type[hub] == CoreType::kHub);
  CHECK(g.pred_count[hub] == 2);
  CHECK(sw.placeholder_tasks == 1);
  CHECK(sw.kernel_placeholders == 0);  // the HUB's hint names a leafHash but no operands
  CHECK(sw.merged_placeholders == 0);
  // 300 ticks of 50 MHz = 6 us; the recording spans 26.6 us.
  CHECK(g.recorded_ns[find(g, 0, 1)] == 6000);
  REQUIRE(g.recorded_makespan_ps.has_value());
  CHECK(*g.recorded_makespan_ps == 26600000);
  for (TaskId t = 0; t < b.num_tasks(); ++t) {
    const std::uint32_t seq = b.device_tasks[b.device_task[t]].seq_no;
    const TaskId u = find(g, seq, b.orig_id[t]);
    INFO("seqNo " << seq << " task " << b.orig_id[t]);
    CHECK(g.core_type[u] == b.core_type[t]);
    CHECK(g.recorded_ns[u] == b.recorded_ns[t]);
    CHECK(g.has_recorded_start(u) == b.has_recorded_start(t));
    if (b.has_recorded_start(t)) CHECK(g.recorded_start_ps[u] == b.recorded_start_ps[t]);
    CHECK(succ_ids(g, u) == succ_ids(b, t));
  }
  // The lanes are numbered blockIdx + 1: AIC_1 is blockIdx 0, AIV_25 and AIV_26 are 24, 25.
  REQUIRE(sw.recorded_cores);
  CHECK(sw.recorded_cores->max_aic_block == 0);
  CHECK(sw.recorded_cores->min_aiv_block == 24);
  CHECK(sw.recorded_cores->max_aiv_block == 25);
}

TEST_CASE("swimlane: placeholders drawn at one time become one node") {
  TempDir tmp;
  // Two placeholders both drawn right before the AIV task at 10 us (its predecessors); the
  // arrows cannot tell them apart, so they merge; the recording satisfies the union.
  const std::string text = swimlane(
      task(1002, 0, 2, 1) + task(1002, 3, 2, 2) + task(1050, 10, 1, 3) + task(1000, 9, 1, 100) +
      task(1000, 9, 1, 101) + arrow(1, 1002, 2, 1000, 9) + arrow(2, 1002, 5, 1000, 9) +
      arrow(3, 1000, 10, 1050, 10) + arrow(4, 1000, 10, 1050, 10) +
      ",{\"ph\":\"C\",\"name\":\"ReadyCount_AIV\",\"pid\":1,\"tid\":1,\"ts\":0,"
      "\"args\":{\"size\":1}}");
  const LoadedTrace lt = load(tmp.write("m.json", text));
  const TaskGraph& g = lt.graph;
  CHECK(lt.placeholder_tasks == 2);
  CHECK(lt.merged_placeholders == 1);
  const TaskId t3 = find(g, 0, 3);
  CHECK(g.pred_count[t3] == 1);  // through the merged placeholder
  CHECK(g.recorded_ns[t3] == 1000);
  CHECK(g.recorded_start_ps[t3] == 10000000);
  CHECK(succ_ids(g, find(g, 0, 1)) == succ_ids(g, find(g, 0, 2)));
  CHECK(g.core_type[find(g, 0, 100)] == CoreType::kHub);
}

TEST_CASE("swimlane: a board swimlane's structure, placeholders of a root without records") {
  TempDir tmp;
  // The fields and shapes of a swimlane draw_swim_lane.py wrote from a board run (values are
  // made up): µs since boot, hints and sync events in args, arrows starting at the producer's
  // end, counters on tid 1. Root 85 has no record at all: its placeholders Q0..Q2 are laid out
  // one after another, its arrow Q2 -> Q0 points back in time, and Q0 is drawn at the same
  // time as root 82's entry placeholder P0, so the two merge. P0..P2 and Q0 are HUBs (leafHash
  // 0, no operands); Q1 and Q2 name a compiled leaf and its operands: tasks without a record.
  const std::string hint =
      R"("event-hint":"Task:[0-1-1], rootHash:17, callOpMagic:10001, leafHash:5, TaskId:65537",)"
      R"("ioperand-hint":"[{857: {'shape': [-1, 5120], 'dtype': 8, 'rawmagic': 517}}]",)"
      R"("ooperand-hint":"[]","execution-hint":"Average Execution Time: 2.0\n","color":"",)";
  const std::string hub_hint =
      R"("event-hint":"Task:[0-1-0], rootHash:17, callOpMagic:10086, leafHash:0, TaskId:65536",)"
      R"("ioperand-hint":"","ooperand-hint":"","color":"fake",)";
  const std::string leaf_hint =
      R"("event-hint":"Task:[0-1-6], rootHash:19, callOpMagic:10045, leafHash:59, TaskId:65542",)"
      R"("ioperand-hint":"[{10464: {'shape': [32, 192], 'dtype': 1, 'rawmagic': 5010}}]",)"
      R"("ooperand-hint":"[{10498: {'shape': [32, 5120], 'dtype': 3, 'rawmagic': 5028}}]",)"
      R"("color":"fake",)";
  const auto x = [&](int id, int tid, const char* ts, const char* dur, int task_id,
                     const char* name, bool fake) {
    const bool leaf = fake && std::string(name).find("-85-7") != std::string::npos;
    return std::string(",\n{\"args\":{") + (fake ? (leaf ? leaf_hint : hub_hint) : hint) +
           "\"taskId\":" + std::to_string(task_id) + R"(,"seqNo":0,"wrapId":-1)" +
           (fake ? ""
                 : R"(,"syncEvents":[{"idx":0,"time":1000.5,"type":"CV_SYNC_SET","eventid":0}])") +
           R"(},"cat":"event","id":)" + std::to_string(id) + R"(,"name":")" + name +
           R"(","ph":"X","pid":1,"tid":)" + std::to_string(tid) + ",\"ts\":" + ts +
           ",\"dur\":" + dur + "}";
  };
  const auto flow = [](int id, int s_tid, const char* s_ts, int f_tid, const char* f_ts) {
    const std::string common = R"("cat":"machine-view-last-dep","id":)" + std::to_string(id) +
                               R"(,"name":"machine-view-last-dep","ph":")";
    return ",\n{" + common + "s\",\"pid\":1,\"tid\":" + std::to_string(s_tid) + ",\"ts\":" + s_ts +
           "},\n{\"bp\":\"e\"," + common + "f\",\"pid\":1,\"tid\":" + std::to_string(f_tid) +
           ",\"ts\":" + f_ts + "}";
  };
  const std::string head = R"js({"traceEvents":[
{"args":{"name":"Machine View"},"cat":"__metadata","name":"process_name","ph":"M","pid":1},
{"args":{"name":"Fake Core_0"},"cat":"__metadata","name":"thread_name","ph":"M","pid":1,"tid":1000},
{"args":{"name":"AIC_1"},"cat":"__metadata","name":"thread_name","ph":"M","pid":1,"tid":1002},
{"args":{"name":"AIV_25"},"cat":"__metadata","name":"thread_name","ph":"M","pid":1,"tid":1050})js";
  const std::string counters = R"js(,
{"name":"ReadyCount_AIV","pid":1,"tid":1,"ph":"C","ts":1000001.38,"args":{"size":1}},
{"name":"Dependence Solving (MHz)","pid":1,"tid":1,"ph":"C","ts":1000001.38,"args":{"size":9.5}}
]})js";
  std::string text = head;
  text += x(0, 1050, "1000001.38", "1.93994140625", 65537, "0-1-1-82-0()", false);
  text += x(1, 1002, "1000004.42", "3.10009765625", 65538, "0-1-2-82-3()", false);
  text += x(2, 1000, "1000000.38", "1.0", 65536, "0-1-0-82-0(fake)", true);  // P0
  text += x(3, 1000, "1000003.42", "1.0", 65539, "0-1-3-82-0(fake)", true);  // P1
  text += x(4, 1000, "1000007.52", "1.0", 65540, "0-1-4-82-0(fake)", true);  // P2
  text += x(5, 1000, "1000000.38", "1.0", 65541, "0-1-5-85-0(fake)", true);  // Q0
  text += x(6, 1000, "1000003.38", "1.0", 65542, "0-1-6-85-7(fake)", true);  // Q1
  text += x(7, 1000, "1000006.38", "1.0", 65543, "0-1-7-85-7(fake)", true);  // Q2
  text += flow(8, 1000, "1000001.38", 1050, "1000001.38");                   // P0 (and Q0) -> 1
  text += flow(9, 1050, "1000003.32", 1000, "1000003.42");                   // 1 -> P1
  text += flow(10, 1000, "1000004.42", 1002, "1000004.42");                  // P1 -> 2
  text += flow(11, 1002, "1000007.52", 1000, "1000007.52");                  // 2 -> P2
  text += flow(12, 1000, "1000001.38", 1000, "1000003.38");                  // Q0 -> Q1
  text += flow(13, 1000, "1000004.38", 1000, "1000006.38");                  // Q1 -> Q2
  text += flow(14, 1000, "1000007.38", 1000, "1000000.38");  // Q2 -> Q0, back in time
  text += counters;
  const LoadedTrace lt = load(tmp.write("board.json", text));
  const TaskGraph& g = lt.graph;
  CHECK(lt.placeholder_tasks == 6);
  CHECK(lt.kernel_placeholders == 2);  // Q1, Q2
  CHECK(lt.merged_placeholders == 1);
  CHECK(lt.dropped_placeholder_arrows == 1);
  // Without the dropped arrow, Q0 -> Q1 -> Q2 -> Q0 would be a cycle.
  const TaskId t1 = find(g, 0, 65537), t2 = find(g, 0, 65538);
  CHECK(g.core_type[t1] == CoreType::kAiv);
  CHECK(g.core_type[t2] == CoreType::kAic);
  CHECK(g.recorded_ns[t1] == 1940);
  CHECK(g.recorded_ns[t2] == 3100);
  CHECK(g.recorded_start_ps[t1] == 0);
  CHECK(g.recorded_start_ps[t2] == 3040000);
  // The span of the recorded tasks (placeholders' drawn times are not): 1.38 .. 7.52009765625.
  REQUIRE(g.recorded_makespan_ps.has_value());
  CHECK(*g.recorded_makespan_ps == 6140098);
  CHECK(succ_ids(g, t1) == std::set<std::pair<std::uint32_t, std::uint32_t>>{{0, 65539}});
  CHECK(succ_ids(g, find(g, 0, 65539)) ==
        std::set<std::pair<std::uint32_t, std::uint32_t>>{{0, 65538}});
  CHECK(succ_ids(g, t2) == std::set<std::pair<std::uint32_t, std::uint32_t>>{{0, 65540}});
}

TEST_CASE("swimlane: the recorded makespan is PyPTO's AICore end to end, AI-CPU lanes left out") {
  TempDir tmp;
  // draw_swim_lane.py's print_aicore_summary spans the AIC/AIV tasks only: the AI-CPU task
  // before them and the placeholder after them do not count (3 to 9 us, not 0 to 12).
  const std::string text =
      R"({"traceEvents":[
{"ph":"M","name":"thread_name","pid":1,"tid":1000,"args":{"name":"Fake Core_0"}},
{"ph":"M","name":"thread_name","pid":1,"tid":1002,"args":{"name":"AIC_1"}},
{"ph":"M","name":"thread_name","pid":1,"tid":1050,"args":{"name":"AIV_25"}},
{"ph":"M","name":"thread_name","pid":1,"tid":1200,"args":{"name":"AI-CPU_100"}})" +
      task(1200, 0, 2, 1) + task(1002, 3, 2, 2) + task(1050, 6, 3, 3) + task(1000, 11, 1, 4) +
      arrow(1, 1200, 2, 1002, 3) + arrow(2, 1002, 5, 1050, 6) + arrow(3, 1050, 9, 1000, 11) + "]}";
  const LoadedTrace lt = load(tmp.write("cpu.json", text));
  const TaskGraph& g = lt.graph;
  CHECK(g.core_type[find(g, 0, 1)] == CoreType::kAicpu);
  REQUIRE(g.recorded_makespan_ps.has_value());
  CHECK(*g.recorded_makespan_ps == 6000000);
  // Starts stay relative to the first recorded task of any lane.
  CHECK(g.recorded_start_ps[find(g, 0, 1)] == 0);
  CHECK(g.recorded_start_ps[find(g, 0, 2)] == 3000000);
}

TEST_CASE("swimlane: a producer's successors keep the order of its arrows") {
  TempDir tmp;
  // draw_swim_lane.py draws a task's arrows in its successor list's order, the order the AICPU
  // releases them in: 4, 2, 3 here, not the taskId order.
  const std::string text =
      swimlane(task(1002, 0, 1, 1) + task(1050, 2, 1, 2) + task(1050, 3, 1, 3) +
               task(1050, 4, 1, 4) + arrow(7, 1002, 1, 1050, 4) + arrow(8, 1002, 1, 1050, 2) +
               arrow(9, 1002, 1, 1050, 3) + arrow(10, 1002, 1, 1050, 4));
  const LoadedTrace lt = load(tmp.write("o.json", text));
  const TaskGraph& g = lt.graph;
  const TaskId t1 = find(g, 0, 1);
  REQUIRE(g.succ_last(t1) - g.succ_first(t1) == 3);
  CHECK(g.orig_id[g.succ[g.succ_first(t1)]] == 4);
  CHECK(g.orig_id[g.succ[g.succ_first(t1) + 1]] == 2);
  CHECK(g.orig_id[g.succ[g.succ_first(t1) + 2]] == 3);
}

TEST_CASE("swimlane: errors name the file, the event and what was expected") {
  TempDir tmp;
  const auto err = [&](const std::string& text) {
    try {
      (void)load(tmp.write("e.json", text));
    } catch (const pypto::TraceError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(err(R"({"traceEvents":[{"ph":"M","name":"process_name"}]})"),
             Contains("e.json: no task events (\"ph\": \"X\") among its 1 events"));
  CHECK_THAT(
      err(swimlane(R"(,{"ph":"X","pid":1,"tid":7,"ts":0,"dur":1,"args":{"taskId":0,"seqNo":0}})")),
      Contains("e.json: event 3: lane pid 1 tid 7 has no thread_name event"));
  CHECK_THAT(
      err(R"({"traceEvents":[{"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"Thread 2"}},
                     {"ph":"X","pid":1,"tid":2,"ts":0,"dur":1,"args":{"taskId":0}}]})"),
      Contains("event 1: lane pid 1 tid 2 is named \"Thread 2\" (event 0); "
               "expected AIC_n, AIV_n, AI-CPU_n or Fake Core_n"));
  CHECK_THAT(err(swimlane(R"(,{"ph":"X","pid":1,"tid":1002,"ts":0,"dur":1,"args":{}})")),
             Contains("event 3: missing \"taskId\""));
  CHECK_THAT(err(swimlane(R"(,{"ph":"X","pid":1,"tid":1002,"ts":0,"dur":1})")),
             Contains("event 3: a task event (\"ph\": \"X\") needs \"args\" with its \"taskId\""));
  CHECK_THAT(err(swimlane(R"(,{"ph":"X","pid":1,"tid":1002,"ts":-1,"dur":1,"args":{"taskId":0}})")),
             Contains("event 3: expected \"ts\" to be a non-negative number of us, got -1"));
  CHECK_THAT(err(swimlane(task(1002, 0, 1, 5) + task(1050, 0, 1, 5))),
             Contains("event 4: task 5 of seqNo 0 is drawn a second time (first: event 3)"));
  CHECK_THAT(err(swimlane(task(1002, 0, 1, 1) + task(1050, 2, 1, 2) +
                          R"(,{"ph":"s","cat":"c","id":9,"pid":1,"tid":1002,"ts":0.9999})")),
             Contains("event 5: flow id 9 starts here but never ends (no \"f\" event)"));
  CHECK_THAT(
      err(swimlane(task(1002, 0, 1, 1) + task(1050, 2, 1, 2) + arrow(1, 1002, 1.5, 1050, 2))),
      Contains("event 5: the flow arrow starts at ts 1.4999 us on lane pid 1 tid 1002 "
               "(\"AIC_1\"), but no task of that lane ends 0.0001 us after it"));
  CHECK_THAT(
      err(swimlane(task(1002, 0, 1, 1) + task(1050, 2, 1, 2) + arrow(1, 1002, 1, 1050, 3))),
      Contains("event 6: the flow arrow ends at ts 3 us on lane pid 1 tid 1050 (\"AIV_25\"), "
               "but no task of that lane starts there"));
  CHECK_THAT(
      err(swimlane(task(1002, 0, 1, 1, 1) + task(1050, 2, 1, 2, 0) + arrow(1, 1002, 1, 1050, 2))),
      Contains("event 3: task 1 of seqNo 1 has a flow arrow to task 2 of the earlier seqNo "
               "0 (event 4)"));
  CHECK_THAT(err(swimlane(task(1002, 0, 1, 1) + task(1002, 0, 1, 2) + task(1050, 2, 1, 3) +
                          arrow(1, 1002, 1, 1050, 2))),
             Contains("fits several of its tasks (events 3 and 4)"));
  CHECK_THAT(err(swimlane(task(1002, 0, 1, 1) + task(1050, 2, 1, 2) + arrow(1, 1002, 1, 1050, 2) +
                          arrow(2, 1050, 3, 1002, 0))),
             Contains("e.json: dependency cycle in seqNo 0"));
  CHECK_THAT(err(R"({"other":1})"),
             Contains("e.json:1: starts with a JSON object that is not a pypto-sim trace header"));
  CHECK_THAT(err(R"({"traceEvents":{}})"),
             Contains("e.json: expected \"traceEvents\" to be an array of events"));
}
