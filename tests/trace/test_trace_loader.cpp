// SPDX-License-Identifier: Apache-2.0
// Trace readers: format detection, the samples in traces/samples (numbers worked out in
// traces/samples/README.md), every user error, and the synthetic generator.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../common/temp_dir.h"
#include "pypto/common/errors.h"
#include "pypto/model/cost_model.h"
#include "pypto/trace/native_writer.h"
#include "pypto/trace/synthetic.h"
#include "pypto/trace/trace_loader.h"
#include "trace_test.h"

using Catch::Matchers::Contains;
using pypto::ConfigError;
using pypto::TraceError;
using pypto::common::CoreType;
using pypto::common::TaskId;
using pypto::sched::kNoRecord;
using pypto::sched::TaskGraph;
using namespace pypto::model;
using namespace pypto::trace;

namespace {

using pypto::testing::find;
using pypto::testing::load;
using pypto::testing::sample;
using pypto::testing::TempDir;

std::string kernel_of(const TaskGraph& g, TaskId t) { return g.kernel_names[g.kernel[t]]; }

const std::string kHeader = "{\"format\":\"pypto-sim-trace\",\"version\":1}\n";

}  // namespace

// ---- detection ----

TEST_CASE("formats are detected from content") {
  CHECK(detect_trace_format(sample("pipeline.ndjson")) == TraceFormat::kNative);
  CHECK(detect_trace_format(sample("dyn_topo.txt")) == TraceFormat::kDynTopo);
  CHECK(detect_trace_format(sample("topo.json")) == TraceFormat::kTopoJson);
  CHECK(detect_trace_format(sample("fixed_task_topo.json")) == TraceFormat::kFixedLatency);
  CHECK(std::string(to_string(TraceFormat::kTopoJson)) == "topo_json");
}

TEST_CASE("detection rejects what matches no format, naming the formats") {
  TempDir tmp;
  CHECK_THROWS_WITH(detect_trace_format(tmp.write("x.csv", "a,b,c\n1,2,3\n")),
                    Contains("x.csv: unknown trace format; expected one of: native") &&
                        Contains("dyn_topo.txt") && Contains("topo.json") &&
                        Contains("fixed-latency"));
  CHECK_THROWS_WITH(detect_trace_format(tmp.write("e.ndjson", " \n\n")),
                    Contains("e.ndjson: the file is empty"));
  CHECK_THROWS_WITH(detect_trace_format(tmp.write("o.json", "{\"format\":\"other\"}\n")),
                    Contains("o.json:1: starts with a JSON object that is not a pypto-sim trace "
                             "header"));
  CHECK_THROWS_WITH(detect_trace_format(tmp.write("a.json", "[]")),
                    Contains("a.json: the JSON array is empty"));
  CHECK_THROWS_WITH(detect_trace_format(sample("tilefwk_L1_prof_data.json")),
                    Contains("board profile (tilefwk_L1_prof_data.json), not a task graph: pass "
                             "it with --prof"));
  CHECK_THROWS_WITH(detect_trace_format(tmp.write("none", "")), Contains("the file is empty"));
  CHECK_THROWS_WITH(detect_trace_format(tmp.write("missing", "") + ".nope"),
                    Contains("missing.nope: cannot open"));
}

// ---- PyPTO board recording ----

TEST_CASE("dyn_topo.txt + prof: the sample board recording") {
  const LoadedTrace lt = load(sample("dyn_topo.txt"), sample("tilefwk_L1_prof_data.json"));
  const TaskGraph& g = lt.graph;
  CHECK(lt.format == TraceFormat::kDynTopo);
  REQUIRE(g.num_tasks() == 10);
  REQUIRE(g.device_tasks.size() == 2);
  CHECK(g.device_tasks[0].seq_no == 0);
  CHECK(g.device_tasks[0].num_tasks == 7);
  CHECK(g.device_tasks[0].num_roots == 3);  // rootIndex 0, 1 and the HUB's 7
  CHECK(g.device_tasks[0].count[int(CoreType::kAiv)] == 4);
  CHECK(g.device_tasks[0].count[int(CoreType::kAic)] == 2);
  CHECK(g.device_tasks[0].count[int(CoreType::kHub)] == 1);
  CHECK(g.device_tasks[1].seq_no == 1);
  CHECK(g.device_tasks[1].num_tasks == 3);
  CHECK(g.device_tasks[1].num_roots == 1);
  // 50 MHz: one tick is 20 ns. Task 1 of seqNo 0: 1000110 -> 1000410 = 300 ticks.
  CHECK(g.recorded_ns[find(g, 0, 1)] == 6000);
  CHECK(g.recorded_ns[find(g, 0, 0)] == 2000);
  CHECK(g.recorded_ns[find(g, 0, 1048578)] == 1600);
  CHECK(g.recorded_ns[find(g, 1, 1)] == 6000);
  // The HUB has no record: a zero-cost dependency node joining both epilogues.
  const TaskId hub = find(g, 0, 7340032);
  CHECK(g.core_type[hub] == CoreType::kHub);
  CHECK(g.recorded_ns[hub] == 0);
  CHECK(g.pred_count[hub] == 2);
  CHECK(lt.unrecorded_tasks == 0);
  CHECK(g.core_type[find(g, 0, 1048577)] == CoreType::kAic);
  CHECK(kernel_of(g, find(g, 0, 1048577)) == "leaf1");
  // 6 edges in seqNo 0, 2 in seqNo 1.
  CHECK(g.num_edges() == 8);
  // 1000000 -> 1001330 = 1330 ticks = 26.6 us.
  REQUIRE(g.recorded_makespan_ps.has_value());
  CHECK(*g.recorded_makespan_ps == 26600000);
}

TEST_CASE("topo.json + prof: device task 0 only, other seqNos skipped and counted") {
  const LoadedTrace lt = load(sample("topo.json"), sample("tilefwk_L1_prof_data.json"));
  const TaskGraph& g = lt.graph;
  CHECK(lt.format == TraceFormat::kTopoJson);
  REQUIRE(g.num_tasks() == 7);
  REQUIRE(g.device_tasks.size() == 1);
  CHECK(lt.ignored_prof_records == 3);
  // topo.json has no core types: they come from the prof blocks; the hub has no record.
  CHECK(g.core_type[find(g, 0, 1)] == CoreType::kAic);
  CHECK(g.core_type[find(g, 0, 0)] == CoreType::kAiv);
  CHECK(g.core_type[find(g, 0, 7340032)] == CoreType::kHub);
  CHECK(lt.unrecorded_tasks == 1);
  CHECK(kernel_of(g, find(g, 0, 1048577)) == "qk_matmul");
  CHECK(g.recorded_ns[find(g, 0, 1048577)] == 6000);
  CHECK(g.device_tasks[0].num_roots == 3);  // taskId >> 20: 0, 1, 7
  CHECK(g.num_edges() == 6);
  // 1000000 -> 1000805 = 805 ticks = 16.1 us.
  CHECK(*g.recorded_makespan_ps == 16100000);
}

TEST_CASE("board readers accept the variants real files have") {
  TempDir tmp;
  // No seqNo (everything is seqNo 0), subGraphId instead of leafIndex, a coreType suffix.
  const std::string topo =
      tmp.write("dyn_topo.txt",
                "seqNo,taskId,rootIndex,rootHash,opmagic,leafIndex,leafHash,coreType,psgId,wrapId,"
                "staticSuccCount,successors\n"
                "0,0,0,1000,10,0,5000,AIV_0,0,-1,1,1,\n"  // a trailing comma
                "0,1,0,18446744073709551615,11,1,5001,AIC,1,-1,0\n"
                "0,2,0,1000,12,2,5002,AIC,2,-1,0\n");  // no prof record
  const std::string prof = tmp.write(
      "prof.json",
      R"([{"blockIdx":0,"coreType":"AIV_0","tasks":[{"taskId":0,"subGraphId":0,"execStart":10,"execEnd":60,"extra":1}]},
          {"blockIdx":1,"coreType":"AIC","tasks":[{"taskId":1,"execStart":70,"execEnd":170}]}])");
  const LoadedTrace lt = load(topo, prof);
  REQUIRE(lt.graph.num_tasks() == 3);
  CHECK(lt.graph.recorded_ns[0] == 1000);
  CHECK(lt.graph.recorded_ns[1] == 2000);
  // An AIC task without a record is kept as a zero-cost dependency node and counted.
  CHECK(lt.graph.core_type[2] == CoreType::kAic);
  CHECK(lt.graph.recorded_ns[2] == 0);
  CHECK(lt.unrecorded_tasks == 1);
  CHECK(*lt.graph.recorded_makespan_ps == 160 * 20000ull);
}

TEST_CASE("dyn_topo: lines spelled otherwise read as their plain form does") {
  // Plain lines take the reader's one-pass scan; blanks, leading zeros, 19-digit hashes and
  // a trailing comma go to the general parse: the same graph either way.
  TempDir tmp;
  const std::string header =
      "seqNo,taskId,rootIndex,rootHash,opmagic,leafIndex,leafHash,coreType,psgId,wrapId,"
      "staticSuccCount,successors\n";
  const std::string plain = header +
                            "0,0,0,1000,10,0,5000,AIV,0,-1,2,1,2\n"
                            "0,1,1,-7,11,3,5001,AIC_1,1,-1,1,2\n"
                            "0,2,1,1000,12,0,5002,AIV,2,-1,0\n";
  const std::string spelled = header +
                              "0, 0,0,1000,10,0,5000,AIV,0,-1,2,1,2,\n"
                              "0,01,1,-7,11,3,5001,AIC_1,1,-1,1,\t2\n"
                              "0,2,1,1234567890123456789,12,0,5002,AIV,2,-1,0\n";
  const std::string prof = tmp.write(
      "prof.json",
      R"([{"blockIdx":0,"coreType":"AIV","tasks":[{"taskId":0,"execStart":10,"execEnd":60},
          {"taskId":2,"execStart":200,"execEnd":230}]},
          {"blockIdx":1,"coreType":"AIC","tasks":[{"taskId":1,"execStart":70,"execEnd":170}]}])");
  const LoadedTrace a = load(tmp.write("plain.txt", plain), prof);
  const LoadedTrace b = load(tmp.write("spelled.txt", spelled), prof);
  std::ostringstream out_a, out_b;
  write_native_trace(a.graph, nullptr, "a2", "test", out_a);
  write_native_trace(b.graph, nullptr, "a2", "test", out_b);
  CHECK(out_a.str() == out_b.str());
  CHECK(a.graph.succ == b.graph.succ);
  CHECK(a.graph.kernel_names == b.graph.kernel_names);
  REQUIRE(a.graph.num_tasks() == 3);
  CHECK(a.graph.core_type[1] == CoreType::kAic);
  CHECK(a.graph.root[1] == a.graph.root[2]);
  CHECK(a.graph.root[0] != a.graph.root[1]);
}

TEST_CASE("board recording errors name the file and the line or record") {
  TempDir tmp;
  const std::string prof_path = sample("tilefwk_L1_prof_data.json");
  const std::string kCsvHeader =
      "seqNo,taskId,rootIndex,rootHash,opmagic,leafIndex,leafHash,coreType,psgId,wrapId,"
      "staticSuccCount,successors\n";

  CHECK_THROWS_WITH(load(sample("dyn_topo.txt")),
                    Contains("dyn_topo.txt: a dyn_topo.txt topology needs --prof "
                             "tilefwk_L1_prof_data.json with the recorded times"));
  CHECK_THROWS_WITH(load(sample("topo.json")),
                    Contains("topo.json: a topo.json topology needs --prof"));

  const std::string unknown_succ =
      tmp.write("t1.txt", kCsvHeader + "0,0,0,1,1,0,1,AIV,0,-1,1,1\n0,1,0,1,1,0,1,AIV,0,-1,1,5\n");
  CHECK_THROWS_WITH(load(unknown_succ, prof_path),
                    Contains("t1.txt:3: successor 5 of task 1 is not a task of seqNo 0"));

  const std::string few_cols =
      tmp.write("t2.txt", kCsvHeader + "0,0,0,1,1,0,1,AIV,0,-1,0\n0,1,0\n");
  CHECK_THROWS_WITH(load(few_cols, prof_path),
                    Contains("t2.txt:3: expected at least 11 columns") && Contains("got 3"));

  const std::string not_int = tmp.write("t3.txt", kCsvHeader + "0,0,x,1,1,0,1,AIV,0,-1,0\n");
  CHECK_THROWS_WITH(
      load(not_int, prof_path),
      Contains("t3.txt:2: column rootIndex: expected an integer") && Contains("got \"x\""));
  const std::string not_int2 = tmp.write("t3b.txt", kCsvHeader + "0,0,0,1,1,0,1,AIV,0,-1,0,7z\n");
  CHECK_THROWS_WITH(load(not_int2, prof_path),
                    Contains("t3b.txt:2: column successors (column 12): expected an integer"));
  const std::string bad_hash = tmp.write("t3c.txt", kCsvHeader + "0,0,0,abc,1,0,1,AIV,0,-1,0\n");
  CHECK_THROWS_WITH(load(bad_hash, prof_path),
                    Contains("t3c.txt:2: column rootHash: expected an integer, got \"abc\""));

  const std::string bad_core = tmp.write("t4.txt", kCsvHeader + "0,0,0,1,1,0,1,GPU,0,-1,0\n");
  CHECK_THROWS_WITH(load(bad_core, prof_path),
                    Contains("t4.txt:2: column coreType: expected AIC, AIV, HUB or AICPU, got "
                             "\"GPU\""));

  const std::string bad_header = tmp.write("t5.txt", "seqNo,taskId,root\n0,0,0\n");
  CHECK_THROWS_WITH(load(bad_header, prof_path),
                    Contains("t5.txt:1: header column 3 is \"root\", expected \"rootIndex\""));

  const std::string dup = tmp.write("t6.txt", kCsvHeader +
                                                  "0,0,0,1,1,0,1,AIV,0,-1,0\n\n"
                                                  "0,0,0,1,1,0,1,AIV,0,-1,0\n");
  CHECK_THROWS_WITH(load(dup, prof_path),
                    Contains("t6.txt:4: task 0 of seqNo 0 already appears on line 2"));

  const std::string too_many_static =
      tmp.write("t7.txt", kCsvHeader + "0,0,0,1,1,0,1,AIV,0,-1,2,1\n0,1,0,1,1,0,1,AIV,0,-1,0\n");
  CHECK_THROWS_WITH(load(too_many_static, prof_path),
                    Contains("t7.txt:2: staticSuccCount is 2 but the line lists 1 successors"));

  // Prof problems.
  const std::string topo = tmp.write("dyn_topo.txt", kCsvHeader + "0,0,0,1,1,0,1,AIV,0,-1,0\n");
  const std::string p_unknown = tmp.write(
      "p1.json",
      R"([{"blockIdx":3,"coreType":"AIV","tasks":[{"seqNo":0,"taskId":0,"execStart":1,"execEnd":2},{"seqNo":0,"taskId":99,"execStart":1,"execEnd":2}]}])");
  CHECK_THROWS_WITH(load(topo, p_unknown),
                    Contains("p1.json: block 0 (blockIdx 3), record 1: seqNo 0 taskId 99 is not "
                             "a task of") &&
                        Contains("dyn_topo.txt"));
  const std::string p_syntax = tmp.write("p2.json", "[\n  {\"blockIdx\": 0,\n   \"tasks\" [] }\n]");
  CHECK_THROWS_WITH(load(topo, p_syntax), Contains("p2.json:3:12: invalid JSON"));
  const std::string p_type = tmp.write(
      "p3.json",
      R"([{"blockIdx":0,"coreType":"AIV","tasks":[{"taskId":0,"execStart":"1","execEnd":2}]}])");
  CHECK_THROWS_WITH(load(topo, p_type),
                    Contains("p3.json: block 0 (blockIdx 0), record 0: expected \"execStart\" to "
                             "be a non-negative integer, got \"1\""));
  const std::string p_core = tmp.write(
      "p4.json",
      R"([{"blockIdx":0,"coreType":"AIC","tasks":[{"taskId":0,"execStart":1,"execEnd":2}]}])");
  CHECK_THROWS_WITH(load(topo, p_core),
                    Contains("p4.json: block 0 (blockIdx 0), record 0: taskId 0 (seqNo 0) is an "
                             "AIV task in") &&
                        Contains("dyn_topo.txt:2, but this block's "
                                 "coreType is AIC"));
  const std::string p_dup = tmp.write(
      "p5.json",
      R"([{"blockIdx":0,"coreType":"AIV","tasks":[{"taskId":0,"execStart":1,"execEnd":2},{"taskId":0,"execStart":3,"execEnd":4}]}])");
  CHECK_THROWS_WITH(load(topo, p_dup),
                    Contains("p5.json: block 0 (blockIdx 0), record 1: a second record for taskId "
                             "0 (seqNo 0); the first is block 0, record 0"));
  const std::string p_back = tmp.write(
      "p6.json",
      R"([{"blockIdx":0,"coreType":"AIV","tasks":[{"taskId":0,"execStart":5,"execEnd":2}]}])");
  CHECK_THROWS_WITH(load(topo, p_back), Contains("record 0: execEnd 2 is before execStart 5"));
  const std::string p_none =
      tmp.write("p7.json", R"([{"blockIdx":0,"coreType":"AIV","tasks":[]}])");
  CHECK_THROWS_WITH(load(topo, p_none), Contains("p7.json: none of its 0 records is a task of"));
  const std::string p_missing = tmp.write(
      "p8.json", R"([{"blockIdx":0,"coreType":"AIV","tasks":[{"taskId":0,"execStart":5}]}])");
  CHECK_THROWS_WITH(load(topo, p_missing),
                    Contains("p8.json: block 0 (blockIdx 0), record 0: missing \"execEnd\""));

  // topo.json problems.
  const std::string tj = tmp.write("tj.json", R"([{"taskId":0,"funcName":"a","successors":[1]},
    {"funcName":"b","successors":[]}])");
  CHECK_THROWS_WITH(load(tj, prof_path), Contains("tj.json: record 1: missing \"taskId\""));
  const std::string tj2 =
      tmp.write("tj2.json", R"([{"taskId":0,"funcName":"a","successors":[5]}])");
  CHECK_THROWS_WITH(load(tj2, prof_path),
                    Contains("tj2.json record 0: successor 5 of task 0 is not a task of seqNo 0"));
}

TEST_CASE("a cycle in a board topology is reported with the file") {
  TempDir tmp;
  const std::string topo =
      tmp.write("cyc.txt",
                "seqNo,taskId,rootIndex,rootHash,opmagic,leafIndex,leafHash,coreType,psgId,wrapId,"
                "staticSuccCount,successors\n"
                "0,0,0,1,1,0,1,AIV,0,-1,1,1\n"
                "0,1,0,1,1,0,1,AIV,0,-1,1,0\n");
  const std::string prof = tmp.write(
      "p.json",
      R"([{"blockIdx":0,"coreType":"AIV","tasks":[{"taskId":0,"execStart":1,"execEnd":2}]}])");
  CHECK_THROWS_WITH(load(topo, prof),
                    Contains("cyc.txt: dependency cycle in seqNo 0: task 0 -> task 1 -> task 0"));
}

// ---- fixed-latency ----

TEST_CASE("fixed-latency sample: execTime in AICore cycles at 1.85 GHz") {
  const LoadedTrace lt = load(sample("fixed_task_topo.json"));
  const TaskGraph& g = lt.graph;
  CHECK(lt.format == TraceFormat::kFixedLatency);
  REQUIRE(g.num_tasks() == 7);
  REQUIRE(g.device_tasks.size() == 1);
  CHECK(g.recorded_ns[0] == 2000);  // 3700 cycles
  CHECK(g.recorded_ns[1] == 6000);  // 11100 cycles
  CHECK(g.recorded_ns[2] == 1600);  // 2960 cycles
  CHECK(g.core_type[6] == CoreType::kHub);
  CHECK(g.recorded_ns[6] == 0);
  CHECK(g.pred_count == std::vector<std::uint32_t>{0, 1, 1, 0, 1, 1, 2});
  CHECK(kernel_of(g, 1) == "qk_matmul");
  CHECK(g.device_tasks[0].num_roots == 3);
  CHECK_FALSE(g.recorded_makespan_ps.has_value());
}

TEST_CASE("fixed-latency errors") {
  TempDir tmp;
  const std::string mismatch = tmp.write("f1.json", R"([
    {"taskId":0,"funcName":"a","coreType":"AIV","execTime":10,"successors":[1],"remainingPredecessors":0},
    {"taskId":1,"funcName":"b","coreType":"AIC","execTime":10,"successors":[],"remainingPredecessors":2}])");
  CHECK_THROWS_WITH(load(mismatch),
                    Contains("f1.json: record 1 (taskId 1): remainingPredecessors is 2 but 1 "
                             "tasks list it as a successor"));
  const std::string unknown = tmp.write("f2.json", R"([
    {"taskId":0,"funcName":"a","coreType":"AIV","execTime":10,"successors":[4],"remainingPredecessors":0}])");
  CHECK_THROWS_WITH(load(unknown),
                    Contains("f2.json: record 0 (taskId 0): successor 4 is not a task of"));
  const std::string hub = tmp.write("f3.json", R"([
    {"taskId":0,"funcName":"h","coreType":"HUB","execTime":5,"successors":[],"remainingPredecessors":0}])");
  CHECK_THROWS_WITH(load(hub), Contains("f3.json: record 0 (taskId 0): a HUB task is a zero-cost "
                                        "dependency node, but its execTime is 5"));
  const std::string core = tmp.write("f4.json", R"([
    {"taskId":0,"funcName":"h","coreType":"TPU","execTime":5,"successors":[],"remainingPredecessors":0}])");
  CHECK_THROWS_WITH(load(core),
                    Contains("f4.json: record 0 (taskId 0): expected \"coreType\" to be AIC, AIV "
                             "or HUB, got \"TPU\""));
  const std::string missing = tmp.write("f5.json", R"([
    {"taskId":0,"funcName":"h","coreType":"AIV","execTime":5,"successors":[]}])");
  CHECK_THROWS_WITH(load(missing),
                    Contains("f5.json: record 0 (taskId 0): missing \"remainingPredecessors\""));
  const std::string syntax = tmp.write("f6.json", "[\n{\"taskId\":0,\"execTime\":1,}\n]");
  CHECK_THROWS_WITH(load(syntax), Contains("f6.json:2:"));
  CHECK_THROWS_WITH(load(syntax), Contains("invalid JSON"));
  const std::string cycle = tmp.write("f7.json", R"([
    {"taskId":0,"funcName":"a","coreType":"AIV","execTime":10,"successors":[1],"remainingPredecessors":1},
    {"taskId":1,"funcName":"b","coreType":"AIC","execTime":10,"successors":[0],"remainingPredecessors":1}])");
  CHECK_THROWS_WITH(load(cycle),
                    Contains("f7.json: dependency cycle in seqNo 0: task 0 -> task 1 -> task 0"));
  LoadOptions o;
  o.prof_path = sample("tilefwk_L1_prof_data.json");
  CHECK_THROWS_AS(load_trace(sample("fixed_task_topo.json"), o, ChipConfig{}), ConfigError);
  CHECK_THROWS_WITH(load_trace(sample("pipeline.ndjson"), o, ChipConfig{}),
                    Contains("is only used with dyn_topo.txt or topo.json"));
}

// ---- the streamed JSON readers (issue 13): same documents and messages as the DOM readers ----

TEST_CASE("streamed JSON readers: keys in any order, a repeated known key is an error") {
  TempDir tmp;
  const std::string fixed = tmp.write("f.json", R"([
    {"successors":[1],"remainingPredecessors":0,"execTime":3700,"coreType":"AIV","funcName":"a",
     "taskId":0,"extra":{"deep":[[{"k":null}],true,-1.5e3]},"extra":1},
    {"taskId":1,"funcName":"b","coreType":"AIC","execTime":10,"successors":[],
     "remainingPredecessors":1}])");
  const LoadedTrace f = load(fixed);
  REQUIRE(f.graph.num_tasks() == 2);
  CHECK(f.graph.recorded_ns[0] == 2000);
  CHECK(f.graph.num_edges() == 1);
  // A record that says two things means neither (nlohmann's DOM kept the last silently).
  const std::string bad = tmp.write("f2.json", R"([{"taskId":0,"taskId":"x","execTime":1}])");
  CHECK_THROWS_WITH(load(bad), Contains("f2.json: record 0: duplicate key \"taskId\""));
  const std::string topo_dup =
      tmp.write("t2.json", R"([{"successors":[],"funcName":"f","taskId":0,"successors":[1]}])");
  const std::string prof_ok = tmp.write(
      "p2.json", R"([{"tasks":[{"execEnd":60,"taskId":0,"execStart":10}],"coreType":"AIV"}])");
  CHECK_THROWS_WITH(load(topo_dup, prof_ok),
                    Contains("t2.json: record 0: duplicate key \"successors\""));
  const std::string topo_ok =
      tmp.write("t3.json", R"([{"successors":[],"funcName":"f","taskId":0}])");
  const std::string prof_dup_block =
      tmp.write("p3.json", R"([{"blockIdx":2,"tasks":[],"coreType":"AIV","blockIdx":3}])");
  CHECK_THROWS_WITH(load(topo_ok, prof_dup_block),
                    Contains("p3.json: block 0: duplicate key \"blockIdx\""));
  const std::string prof_dup_rec = tmp.write(
      "p4.json",
      R"([{"tasks":[{"execEnd":60,"taskId":0,"execStart":10,"execEnd":70}],"coreType":"AIV"}])");
  CHECK_THROWS_WITH(load(topo_ok, prof_dup_rec),
                    Contains("p4.json: block 0, record 0: duplicate key \"execEnd\""));
  // A prof block may give its records before its coreType.
  const std::string topo = tmp.write("t.json", R"([{"successors":[],"funcName":"f","taskId":0}])");
  const std::string prof = tmp.write(
      "p.json",
      "\xEF\xBB\xBF"  // a byte order mark, which nlohmann skipped too
      R"([{"tasks":[{"execEnd":60,"taskId":0,"execStart":10}],"coreType":"AIV","blockIdx":2}])");
  const LoadedTrace b = load(topo, prof);
  CHECK(b.graph.core_type[0] == CoreType::kAiv);
  CHECK(b.graph.recorded_ns[0] == 1000);
  REQUIRE(b.recorded_cores.has_value());
  CHECK(b.recorded_cores->min_aiv_block == 2);
}

TEST_CASE("streamed JSON readers: a syntax error anywhere comes before a record's error") {
  TempDir tmp;
  // Record 0 has a bad coreType, record 1 is not JSON: the DOM reader saw the syntax error
  // first, and so does the streamed one.
  const std::string p = tmp.write("f.json",
                                  "[{\"taskId\":0,\"funcName\":\"a\",\"coreType\":\"TPU\","
                                  "\"execTime\":1,\"successors\":[],\"remainingPredecessors\":0},\n"
                                  "{\"taskId\":1,,}]");
  CHECK_THROWS_WITH(load(p), Contains("f.json:2:13: invalid JSON"));
  // The first pass's checks (a unique taskId in every record) come before a record's fields.
  const std::string q = tmp.write("g.json",
                                  "[{\"taskId\":0,\"funcName\":5,\"coreType\":\"AIV\","
                                  "\"execTime\":1,\"successors\":[],\"remainingPredecessors\":0},"
                                  "{\"funcName\":\"b\"}]");
  CHECK_THROWS_WITH(load(q), Contains("g.json: record 1: missing \"taskId\""));
  // A number too large for a double under a key the reader does not use.
  const std::string r = tmp.write("h.json",
                                  "[{\"taskId\":0,\"funcName\":\"a\",\"coreType\":\"AIV\","
                                  "\"execTime\":1,\"successors\":[],\"remainingPredecessors\":0,"
                                  "\"note\":[1e999]}]");
  CHECK_THROWS_WITH(load(r), Contains("h.json:1:") && Contains("record 0") &&
                                 Contains("key \"note\"") && Contains("too large for a double"));
}

TEST_CASE("streamed readers: values and lines longer than the read chunk") {
  TempDir tmp;
  // A 6 MiB string (with escapes) and a 5 MiB unknown value: more than the 4 MiB chunk.
  const std::string big_name(6 << 20, 'k');
  const std::string fixed =
      tmp.write("f.json",
                "[{\"taskId\":0,\"funcName\":\"a\",\"coreType\":\"AIV\",\"execTime\":1,"
                "\"successors\":[1],\"remainingPredecessors\":0},\n{\"taskId\":1,\"funcName\":\"" +
                    big_name + "\\n\",\"x\":\"" + std::string(5 << 20, 'y') +
                    "\",\"coreType\":\"AIC\",\"execTime\":1,\"successors\":[],"
                    "\"remainingPredecessors\":1}]");
  const LoadedTrace f = load(fixed);
  REQUIRE(f.graph.num_tasks() == 2);
  CHECK(kernel_of(f.graph, 1) == big_name + "\n");
  // dyn_topo.txt: a line of 3M successors, CRLF, no newline at the end.
  std::string line = "0,0,0,1000,10,0,5000,AIV,0,-1,0";
  for (int i = 0; i < (3 << 20); ++i) line += ",1";
  const std::string dyn =
      tmp.write("d.txt",
                "seqNo,taskId,rootIndex,rootHash,opmagic,leafIndex,leafHash,coreType,psgId,wrapId,"
                "staticSuccCount,successors\r\n" +
                    line + "\r\n0,1,0,1000,10,1,5000,AIC,0,-1,0");
  const std::string prof = tmp.write(
      "p.json",
      R"([{"blockIdx":0,"coreType":"AIV","tasks":[{"taskId":0,"execStart":1,"execEnd":2}]}])");
  const LoadedTrace d = load(dyn, prof);
  REQUIRE(d.graph.num_tasks() == 2);
  CHECK(d.graph.num_edges() == std::size_t{3} << 20);
}

// ---- native ----

TEST_CASE("native sample: the same pipeline with memory, ops and recorded times") {
  const LoadedTrace lt = load(sample("pipeline.ndjson"));
  const TaskGraph& g = lt.graph;
  CHECK(lt.format == TraceFormat::kNative);
  CHECK(lt.chip_hint == "a2");
  REQUIRE(g.num_tasks() == 10);
  REQUIRE(g.device_tasks.size() == 2);
  CHECK(g.device_tasks[0].num_tasks == 7);
  CHECK(g.device_tasks[1].seq_no == 1);
  CHECK(g.core_type[6] == CoreType::kHub);
  CHECK(g.pred_count[6] == 2);
  CHECK(g.num_edges() == 8);
  CHECK(g.recorded_ns[1] == 6000);
  CHECK(g.recorded_ns[6] == kNoRecord);
  CHECK(*g.recorded_makespan_ps == 26600000);
  // Memory: the matmul reads what the prologue wrote, plus the weights, and writes its tile.
  REQUIRE(g.has_memory());
  REQUIRE(g.mem_begin[2] - g.mem_begin[1] == 3);
  const auto& prologue_out = g.mem[g.mem_begin[0] + 1];
  const auto& matmul_in = g.mem[g.mem_begin[1]];
  CHECK(prologue_out.is_write == 1);
  CHECK(matmul_in.is_write == 0);
  CHECK(matmul_in.addr == prologue_out.addr);
  CHECK(matmul_in.bytes == 32768);
  CHECK(g.mem_begin[7] - g.mem_begin[6] == 0);  // the HUB moves nothing
  // Ops are priced by the cost model.
  TileOp mmad{"mmad", DType::kFp16, {128, 128, 128}};
  CHECK(g.compute_cycles[1] == tile_op_cycles(mmad, ChipConfig{}));
  CHECK(g.compute_cycles[1] > 0);
  CHECK(g.compute_cycles[6] == 0);
  CHECK(kernel_of(g, 2) == "epilogue_vec");

  // Same graph and times as the board recording it was written from.
  const LoadedTrace board = load(sample("dyn_topo.txt"), sample("tilefwk_L1_prof_data.json"));
  CHECK(board.graph.succ == g.succ);
  CHECK(board.graph.pred_count == g.pred_count);
  for (TaskId t = 0; t < 10; ++t) {
    if (t != 6) CHECK(board.graph.recorded_ns[t] == g.recorded_ns[t]);
  }
}

TEST_CASE("native traces without dt are stitched by the runtime options") {
  TempDir tmp;
  // Roots 0..4 of two tasks each; every root's last task feeds the next root's first.
  std::string text = "{\"format\":\"pypto-sim-trace\",\"version\":1,\"tasks\":10}\n";
  for (int i = 0; i < 10; ++i) {
    text += "{\"id\":" + std::to_string(i) + ",\"core\":\"" + (i % 2 ? "AIC" : "AIV") +
            "\",\"root\":" + std::to_string(i / 2) +
            (i < 9 ? ",\"succ\":[" + std::to_string(i + 1) + "]" : std::string()) +
            ",\"dur\":" + std::to_string(100 * (i + 1)) + "}\n";
  }
  const std::string path = tmp.write("stitch.ndjson", text);
  LoadOptions o;
  o.runtime.stitch_function_max_num = 2;
  const LoadedTrace lt = load_trace(path, o, ChipConfig{});
  const TaskGraph& g = lt.graph;
  REQUIRE(g.device_tasks.size() == 3);  // roots {0,1}, {2,3}, {4}
  CHECK(g.device_tasks[0].num_tasks == 4);
  CHECK(g.device_tasks[0].num_roots == 2);
  CHECK(g.device_tasks[2].num_tasks == 2);
  CHECK(g.device_tasks[2].seq_no == 2);
  CHECK(g.num_edges() == 7);  // 3 -> 4 and 7 -> 8 lead into later device tasks
  CHECK(g.recorded_ns[9] == 1000);
  CHECK(kernel_of(g, 0) == "unnamed");
  CHECK_FALSE(g.recorded_makespan_ps.has_value());
  CHECK_FALSE(g.has_memory());

  o.runtime.stitch_function_max_num = 128;
  CHECK(load_trace(path, o, ChipConfig{}).graph.device_tasks.size() == 1);
}

TEST_CASE("native traces: dt, device-task records, blank lines and CRLF") {
  TempDir tmp;
  const std::string path = tmp.write(
      "dt.ndjson",
      "\r\n" + kHeader +
          "{\"device_task\":4,\"parallel_group\":1}\r\n"
          "\n"
          "{\"id\":0,\"core\":\"AIV\",\"dt\":4,\"root\":0}\r\n"
          "   \n"
          "{\"id\":1,\"core\":\"AIC_0\",\"dt\":2,\"root\":1,\"pg\":1,\"start\":10,\"end\":15,"
          "\"tiles\":4}\n"
          "{\"id\":2,\"core\":\"AICPU\",\"dt\":4,\"root\":1,\"pg\":1,\"succ\":[0]}");
  const LoadedTrace lt = load(path);
  const TaskGraph& g = lt.graph;
  REQUIRE(g.device_tasks.size() == 2);
  CHECK(g.device_tasks[0].seq_no == 4);
  CHECK(g.device_tasks[0].parallel_group == 1);
  CHECK(g.device_tasks[0].num_tasks == 2);
  CHECK(g.device_tasks[1].seq_no == 2);
  CHECK(g.orig_id == std::vector<std::uint32_t>{0, 2, 1});
  CHECK(g.core_type[1] == CoreType::kAicpu);
  CHECK(g.pred_count[0] == 1);
  CHECK(g.tiles[2] == 4);
  CHECK(g.recorded_ns[2] == 5);
  CHECK(*g.recorded_makespan_ps == 5000);
}

TEST_CASE("native traces: a device-task record without parallel_group is group 0") {
  // Each record starts from the defaults: the group of the record before must not carry over
  // (the second pair is spaced, so it takes the parser's general path too).
  for (const char* sep : {"", " "}) {
    TempDir tmp;
    const std::string s(sep);
    const std::string path = tmp.write(
        "pg.ndjson", kHeader + "{" + s + "\"device_task\":1," + s + "\"parallel_group\":3}\n{" + s +
                         "\"device_task\":2}\n"
                         "{\"id\":0,\"core\":\"AIV\",\"dt\":1,\"root\":0,\"pg\":3}\n"
                         "{\"id\":1,\"core\":\"AIV\",\"dt\":2,\"root\":1,\"pg\":0}\n");
    const TaskGraph g = load(path).graph;
    REQUIRE(g.device_tasks.size() == 2);
    CHECK(g.device_tasks[0].parallel_group == 3);
    CHECK(g.device_tasks[1].parallel_group == 0);
  }
}

TEST_CASE("native traces: ranges past L2 (\"rn\", \"wn\") are read and written back") {
  TempDir tmp;
  const std::string body =
      "{\"id\":0,\"core\":\"AIV\",\"root\":0,\"mem\":[[0,64,\"rn\"],[4096,64,\"w\",32],"
      "[8192,64,\"wn\",32],[12288,8,\"r\"]]}\n";
  const LoadedTrace lt = load(tmp.write("nc.ndjson", kHeader + body));
  const TaskGraph& g = lt.graph;
  REQUIRE(g.mem.size() == 4);
  CHECK((g.mem[0].no_l2 == 1 && g.mem[0].is_write == 0));
  CHECK((g.mem[1].no_l2 == 0 && g.mem[1].is_write == 1 && g.mem[1].burst_bytes == 32));
  CHECK((g.mem[2].no_l2 == 1 && g.mem[2].is_write == 1 && g.mem[2].burst_bytes == 32));
  CHECK(g.mem[3].no_l2 == 0);
  std::ostringstream out;
  write_native_trace(g, nullptr, "a2", "test", out);
  CHECK(out.str().find("\"mem\":[[0,64,\"rn\"],[4096,64,\"w\",32],[8192,64,\"wn\",32],"
                       "[12288,8,\"r\"]]") != std::string::npos);
}

namespace {
// Two spellings of one native trace read as the same graph (written back byte for byte).
void check_same_graph(TempDir& tmp, const std::string& plain, const std::string& other) {
  const LoadedTrace a = load(tmp.write("plain.ndjson", kHeader + plain));
  const LoadedTrace b = load(tmp.write("other.ndjson", kHeader + other));
  std::ostringstream out_a, out_b;
  write_native_trace(a.graph, nullptr, "a2", "test", out_a);
  write_native_trace(b.graph, nullptr, "a2", "test", out_b);
  CHECK(out_a.str() == out_b.str());
  CHECK(a.graph.succ == b.graph.succ);
  CHECK(a.graph.mem.size() == b.graph.mem.size());
  CHECK(a.graph.compute_cycles == b.graph.compute_cycles);
  CHECK(a.graph.kernel_names == b.graph.kernel_names);
}
}  // namespace

TEST_CASE("native: records spelled otherwise read as their plain form does") {
  // Plain records take the reader's direct scan; spaces, escapes and a new op list's own
  // spelling go to the simdjson walk, from the first such line on, over the same text.
  TempDir tmp;
  const std::string plain =
      "{\"id\":0,\"core\":\"AIV\",\"kernel\":\"k1\",\"root\":0,\"succ\":[1],"
      "\"mem\":[[0,64,\"r\"],[4096,64,\"wn\",32]],\"ops\":[[\"add\",\"fp16\",[16,16]]]}\n"
      "{\"id\":1,\"core\":\"AIC\",\"kernel\":\"k2\",\"root\":0,\"succ\":[2],\"tiles\":2}\n"
      "{\"id\":2,\"core\":\"AIV\",\"kernel\":\"k1\",\"root\":1,"
      "\"ops\":[[\"add\",\"fp16\",[16,16]]],\"cycles\":7}\n";
  const std::string spelled =
      "{\"id\":0,\"core\":\"AIV\",\"kernel\":\"k1\",\"root\":0,\"succ\":[1],"
      "\"mem\":[[0,64,\"r\"],[4096,64,\"wn\",32]],\"ops\":[[\"add\",\"fp16\",[16,16]]]}\n"
      "{ \"tiles\" : 2, \"succ\" : [ 2 ], \"root\":0, \"kernel\":\"k\\u0032\", "
      "\"core\":\"A\\u0049C\", \"id\":1 }\r\n"
      "\n"
      "{\"id\":2,\"core\":\"AIV\",\"kernel\":\"k1\",\"root\":1,"
      "\"ops\":[ [\"add\", \"fp16\", [16, 16]] ],\"cycles\":7}\n";
  check_same_graph(tmp, plain, spelled);
}

TEST_CASE("native: whitespace after a key's colon reads as without") {
  // The direct scan reads a value where it starts and again past whitespace where that
  // fails: every kind of value, each after a space or a tab, as its plain form.
  TempDir tmp;
  const std::string plain =
      "{\"id\":0,\"core\":\"AIV\",\"kernel\":\"k1\",\"root\":0,\"succ\":[1,2],"
      "\"mem\":[[0,64,\"r\"],[4096,64,\"wn\",32]],\"ops\":[[\"add\",\"fp16\",[16,16]]]}\n"
      "{\"id\":1,\"core\":\"AIC\",\"kernel\":\"k1\",\"root\":0,\"succ\":[2],\"tiles\":2,"
      "\"dur\":40,\"ops\":[[\"add\",\"fp16\",[16,16]]],\"cycles\":7}\n"
      "{\"id\":2,\"core\":\"HUB\",\"kernel\":\"k2\",\"root\":1}\n";
  const std::string spaced =
      "{\"id\": 0,\"core\": \"AIV\",\"kernel\":\t\"k1\",\"root\": 0,\"succ\": [1,2],"
      "\"mem\": [[0,64,\"r\"],[4096,64,\"wn\",32]],\"ops\": [[\"add\",\"fp16\",[16,16]]]}\n"
      "{\"id\":\t1,\"core\": \"AIC\",\"kernel\": \"k1\",\"root\": 0,\"succ\": [2],\"tiles\": 2,"
      "\"dur\": 40,\"ops\": [[\"add\",\"fp16\",[16,16]]],\"cycles\": 7}\n"
      "{\"id\": 2,\"core\": \"HUB\",\"kernel\": \"k2\",\"root\": 1}\n";
  check_same_graph(tmp, plain, spaced);
}

TEST_CASE("native: whitespace before keys and inside arrays reads as without") {
  // The direct scan compares a key's guess, a number and a range's kind where they would
  // start, and looks past whitespace only where that fails.
  TempDir tmp;
  const std::string plain =
      "{\"id\":0,\"core\":\"AIV\",\"kernel\":\"k1\",\"root\":0,\"succ\":[1,2],"
      "\"mem\":[[0,64,\"r\"],[4096,64,\"wn\",32]]}\n"
      "{\"id\":1,\"core\":\"AIC\",\"kernel\":\"k1\",\"root\":0,\"succ\":[2],"
      "\"mem\":[[64,64,\"w\"]]}\n"
      "{\"id\":2,\"core\":\"AIV\",\"kernel\":\"k2\",\"root\":1}\n";
  const std::string spaced =
      "{ \"id\":0,\t\"core\":\"AIV\", \"kernel\":\"k1\",\"root\":0,\"succ\":[ 1, 2 ],"
      "\"mem\":[ [ 0, 64, \"r\" ], [4096,64,\t\"wn\",32]]}\n"
      "{\"id\":1, \"core\":\"AIC\",\"kernel\":\"k1\",\"root\":0,\"succ\":[2 ],"
      "\"mem\":[[64 ,64 ,\"w\" ] ]}\n"
      "{\"id\":2,\"core\":\"AIV\",\"kernel\":\"k2\",  \"root\":1 }\n";
  check_same_graph(tmp, plain, spaced);
}

TEST_CASE("native: ids counting up and roots repeating read as themselves") {
  // The direct scan reads an id that is the record before's plus one, and a root, device
  // task or group that repeats the record before's, by a compare of its text: across a
  // carry (9 -> 10, 99 -> 100), a repeat after a change, and numbers of 1 to 8 digits.
  TempDir tmp;
  std::string body;
  const std::uint64_t roots[] = {0, 0, 7, 7, 7, 12345678, 12345678, 12345679};
  for (std::uint32_t i = 0; i < 120; ++i) {
    body += "{\"id\":" + std::to_string(i) + ",\"core\":\"AIV\",\"root\":" +
            std::to_string(roots[std::min<std::uint32_t>(i / 15, 7)]) +
            ",\"dt\":" + std::to_string(i / 50) + ",\"pg\":0}\n";
  }
  const LoadedTrace t = load(tmp.write("ids.ndjson", kHeader + body));
  REQUIRE(t.graph.num_tasks() == 120);
  for (std::uint32_t i = 0; i < 120; ++i) CHECK(t.graph.orig_id[i] == i);
  // Roots are numbered densely as they change.
  CHECK(t.graph.root[14] == 0);
  CHECK(t.graph.root[15] == 0);
  CHECK(t.graph.root[30] == 1);
  CHECK(t.graph.root[75] == 2);
  CHECK(t.graph.root[105] == 3);
  CHECK(t.graph.device_tasks.size() == 3);
  CHECK(t.graph.device_tasks[2].num_tasks == 20);
}

TEST_CASE("native trace errors name the file and the line") {
  TempDir tmp;
  struct Case {
    std::string body;  // lines after the header
    std::string expected;
  };
  const std::string t0 = "{\"id\":0,\"core\":\"AIV\"}\n";
  const std::vector<Case> cases = {
      {t0 + "{\"id\":1,\"core\":\"AIV\",}\n", "bad.ndjson:3: malformed JSON"},
      {t0 + "{\"id\":1,\"core\":\"AI", "bad.ndjson:3: malformed JSON"},
      {t0 + "[1,2]\n", "bad.ndjson:3: expected one JSON object per line"},
      {t0 + "{\"id\":1,\"core\":\"AIV\"} {\"id\":2}\n",
       "bad.ndjson:3: unexpected text after the JSON object (one record per line)"},
      {t0 + "{\"id\":1,\n\"core\":\"AIV\"}\n", "bad.ndjson:3: malformed JSON"},
      {t0 + "{\"id\":1,\n\"core\":\"AIV\"}\n{\"id\":2,\"core\":\"AIV\"}\n",
       "bad.ndjson:4: text left over from the record on line 3; a record must fit on one line"},
      {"{\"id\":0,\"core\":\"XYZ\"}\n",
       "bad.ndjson:2: expected \"core\" to be one of AIC, AIV, HUB, AICPU, got \"XYZ\""},
      {"{\"id\":0,\"core\":\"AIV\",\"start\":\"12\",\"end\":20}\n",
       "bad.ndjson:2: expected \"start\" to be a time in ns, got \"12\""},
      {"{\"id\":0,\"core\":\"AIV\",\"succ\":[1.5]}\n",
       "bad.ndjson:2: expected each entry of \"succ\" to be a task id, got 1.5"},
      {"{\"id\":0,\"core\":\"AIV\",\"root\":-1}\n",
       "bad.ndjson:2: expected \"root\" to be a root-instance index, got -1"},
      {"{\"id\":0,\"core\":5}\n",
       "bad.ndjson:2: expected \"core\" to be one of AIC, AIV, HUB, AICPU, got 5"},
      {"{\"id\":0,\"core\":\"AIV\",\"mem\":{}}\n",
       "bad.ndjson:2: expected \"mem\" to be an array of [address, bytes, \"r\"|\"w\"], got an "
       "object"},
      {"{\"id\":0,\"core\":\"AIV\",\"colour\":1}\n",
       "bad.ndjson:2: unknown key \"colour\" (a task record has: id, core, kernel"},
      {"{\"id\":0,\"core\":\"AIV\",\"core\":\"AIC\"}\n", "bad.ndjson:2: duplicate key \"core\""},
      {"{\"core\":\"AIV\"}\n", "bad.ndjson:2: a task record needs \"id\""},
      {"{\"id\":0}\n", "bad.ndjson:2: a task record needs \"core\""},
      {t0 + "{\"id\":3,\"core\":\"AIV\"}\n",
       "bad.ndjson:3: expected \"id\" 1 (ids are dense and in file order), got 3"},
      {"{\"id\":0,\"core\":\"AIV\",\"root\":5}\n{\"id\":1,\"core\":\"AIV\",\"root\":3}\n",
       "bad.ndjson:3: \"root\" 3 is smaller than the previous task's root 5; roots must be "
       "non-decreasing"},
      {"{\"id\":0,\"core\":\"AIV\",\"dt\":0}\n{\"id\":1,\"core\":\"AIV\"}\n",
       "bad.ndjson:3: this task has no \"dt\" but the first task (line 2) has one; \"dt\" is "
       "all-or-none"},
      {t0 + "{\"id\":1,\"core\":\"AIV\",\"dt\":0}\n",
       "bad.ndjson:3: this task has \"dt\" but the first task (line 2) has none"},
      {"{\"device_task\":0}\n{\"id\":0,\"core\":\"AIV\"}\n",
       "bad.ndjson:3: the trace declares device tasks (line 2) but this task has no \"dt\""},
      {"{\"id\":0,\"core\":\"AIV\",\"dt\":0}\n{\"device_task\":0}\n",
       "bad.ndjson:3: the record of device task 0 comes after its first task (line 2)"},
      {"{\"device_task\":0,\"id\":0}\n",
       "bad.ndjson:2: a record mixes device-task keys (device_task, parallel_group) with task "
       "keys"},
      {"{\"id\":0,\"core\":\"AIV\",\"dt\":0,\"pg\":1}\n{\"id\":1,\"core\":\"AIV\",\"dt\":0,"
       "\"pg\":2}\n",
       "bad.ndjson:3: \"pg\" 2 differs from device task 0's parallel group 1 (line 2)"},
      {"{\"id\":0,\"core\":\"AIV\",\"pg\":1}\n{\"id\":1,\"core\":\"AIV\"}\n",
       "bad.ndjson:3: \"pg\" 0 differs from the earlier tasks of root 0 (1)"},
      {"{\"id\":0,\"core\":\"AIV\",\"start\":5}\n",
       "bad.ndjson:2: \"start\" and \"end\" go together; give both or \"dur\" alone"},
      {"{\"id\":0,\"core\":\"AIV\",\"start\":5,\"end\":7,\"dur\":2}\n",
       "bad.ndjson:2: give either \"start\"/\"end\" or \"dur\", not both"},
      {"{\"id\":0,\"core\":\"AIV\",\"start\":5,\"end\":3}\n",
       "bad.ndjson:2: \"end\" 3 is before \"start\" 5"},
      {"{\"id\":0,\"core\":\"AIV\",\"tiles\":0}\n",
       "bad.ndjson:2: expected \"tiles\" to be at least 1, got 0"},
      {"{\"id\":0,\"core\":\"AIV\",\"tiles\":70000}\n",
       "bad.ndjson:2: expected \"tiles\" to be a tile count (at most 65535), got 70000"},
      {"{\"id\":0,\"core\":\"AIV\",\"mem\":[[0,0,\"r\"]]}\n",
       "bad.ndjson:2: a \"mem\" range of 0 bytes"},
      {"{\"id\":0,\"core\":\"AIV\",\"mem\":[[0,8,\"x\"]]}\n",
       "bad.ndjson:2: expected a \"mem\" access kind \"r\", \"w\", \"rn\" or \"wn\", got \"x\""},
      {"{\"id\":0,\"core\":\"AIV\",\"mem\":[[0,8]]}\n",
       "bad.ndjson:2: expected each entry of \"mem\" to be [address, bytes, kind] or "
       "[address, bytes, kind, burst bytes] (kind \"r\", \"w\", \"rn\" or \"wn\"), got 2 "
       "fields"},
      {"{\"id\":0,\"core\":\"AIV\",\"mem\":[[0,8,\"r\",32,1]]}\n",
       "bad.ndjson:2: expected each entry of \"mem\" to be [address, bytes, kind] or "
       "[address, bytes, kind, burst bytes] (kind \"r\", \"w\", \"rn\" or \"wn\"), got more "
       "than 4 fields"},
      {"{\"id\":0,\"core\":\"AIV\",\"ops\":[[\"fma\",\"fp16\",[16]]]}\n",
       "bad.ndjson:2: unknown tile op \"fma\" in \"ops\""},
      {"{\"id\":0,\"core\":\"AIV\",\"ops\":[[\"add\",\"fp8\",[16]]]}\n",
       "bad.ndjson:2: unknown dtype \"fp8\" in \"ops\""},
      {"{\"id\":0,\"core\":\"AIV\",\"ops\":[[\"add\",\"fp16\",[16,0]]]}\n",
       "bad.ndjson:2: a tile dimension of 0 in \"ops\""},
      {"{\"id\":0,\"core\":\"AIV\",\"ops\":[[\"add\",\"fp16\"]]}\n",
       "bad.ndjson:2: expected each entry of \"ops\" to be [\"op\", \"dtype\", [dims...]], got 2 "
       "fields"},
      {"{\"id\":0,\"core\":\"AIV\",\"succ\":[1]}\n{\"id\":1,\"core\":\"AIV\",\"succ\":[5,2]}\n",
       "bad.ndjson:3: task 1 lists successor 5, but the trace has only 2 tasks (ids 0..1)"},
      {"{\"id\":0,\"core\":\"AIV\",\"succ\":[1]}\n{\"id\":1,\"core\":\"AIV\",\"succ\":[0]}\n",
       "bad.ndjson: dependency cycle in seqNo 0: task 0 -> task 1 -> task 0"},
      {"{\"id\":0,\"core\":\"AIV\",\"dt\":1}\n{\"id\":1,\"core\":\"AIV\",\"dt\":0,\"succ\":[0]}\n",
       "bad.ndjson: task 1 (seqNo 0): successor task 0 is in device task seqNo 1, which runs "
       "earlier"},
      {"{\"id\":0,\"core\":\"HUB\",\"dur\":5}\n",
       "bad.ndjson:2: a HUB task is a zero-cost dependency node; it takes no \"start\""},
      {"", "bad.ndjson: the trace has no task records"},
  };
  for (const Case& c : cases) {
    INFO(c.body);
    const std::string path = tmp.write("bad.ndjson", kHeader + c.body);
    CHECK_THROWS_WITH(load(path), Contains(c.expected));
  }
  // The unterminated last line is flagged as a possible truncation.
  CHECK_THROWS_WITH(load(tmp.write("trunc.ndjson", kHeader + t0 + "{\"id\":1,\"core\":\"AI")),
                    Contains("trunc.ndjson:3: malformed JSON") && Contains("truncated?"));
}

TEST_CASE("native header errors") {
  TempDir tmp;
  CHECK_THROWS_WITH(
      load(tmp.write("v.ndjson", "{\"format\":\"pypto-sim-trace\",\"version\":2}\n")),
      Contains("v.ndjson:1: unsupported trace format version 2; this build reads version 1"));
  CHECK_THROWS_WITH(load(tmp.write("nv.ndjson", "{\"format\":\"pypto-sim-trace\"}\n")),
                    Contains("nv.ndjson:1: the header has no \"version\""));
  CHECK_THROWS_WITH(
      load(tmp.write("k.ndjson", "{\"format\":\"pypto-sim-trace\",\"version\":1,\"x\":1}\n")),
      Contains("k.ndjson:1: unknown key \"x\" in the header"));
  CHECK_THROWS_WITH(
      load(tmp.write("u.ndjson",
                     "{\"format\":\"pypto-sim-trace\",\"version\":1,\"time_unit\":"
                     "\"us\"}\n")),
      Contains("u.ndjson:1: unsupported \"time_unit\" \"us\"; version 1 uses \"ns\""));
  CHECK_THROWS_WITH(
      load(tmp.write("n.ndjson", "{\"format\":\"pypto-sim-trace\",\"version\":1,\"tasks\":3}\n" +
                                     std::string("{\"id\":0,\"core\":\"AIV\"}\n"))),
      Contains("n.ndjson: the header announces 3 tasks but the file has 1 (truncated?)"));
}

TEST_CASE("native errors deep in a large file carry the exact line") {
  // 40000 synthetic tasks, about 7 MB: past simdjson's 1 MiB batches and the 4 MiB chunks.
  SyntheticSpec spec;
  spec.tasks = 40000;
  std::ostringstream os;
  write_synthetic_trace(spec, os);
  const std::string text = os.str();
  REQUIRE(text.size() > (std::size_t(5) << 20));
  // Line starts: line k (1-based) is the header for k == 1, task k - 2 otherwise.
  std::vector<std::size_t> starts = {0};
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '\n') starts.push_back(i + 1);
  }
  REQUIRE(starts.size() == 40001);
  TempDir tmp;
  CHECK(load(tmp.write("ok.ndjson", text)).graph.num_tasks() == 40000);
  for (const std::size_t line : {7001u, 28001u, 39999u}) {
    INFO("line " << line);
    // Replace the line's "kernel" key by an unknown one of the same length.
    std::string bad = text;
    const std::size_t k = bad.find("\"kernel\"", starts[line - 1]);
    REQUIRE(k < starts[line]);
    bad.replace(k, 8, "\"kernal\"");
    CHECK_THROWS_WITH(load(tmp.write("big.ndjson", bad)),
                      Contains("big.ndjson:" + std::to_string(line) + ": unknown key \"kernal\""));
    // Two records on one line, and malformed JSON, at the same place.
    std::string two = text;
    two[starts[line] - 1] = ' ';  // join the line with the next one
    CHECK_THROWS_WITH(
        load(tmp.write("two.ndjson", two)),
        Contains("two.ndjson:" + std::to_string(line) + ": unexpected text after the JSON object"));
    std::string broken = text;
    broken.insert(starts[line] - 1, ",");  // a trailing comma after the object
    CHECK_THROWS_WITH(load(tmp.write("broken.ndjson", broken)),
                      Contains("broken.ndjson:" + std::to_string(line) + ": "));
  }
}

TEST_CASE("a trace after megabytes of blank lines is read, a blank file is refused as empty") {
  // Detection streams to the first record, however far: no fixed prefix decides.
  TempDir tmp;
  CHECK(load(tmp.write("blank.ndjson", std::string(std::size_t(3) << 20, '\n') + kHeader +
                                           "{\"id\":0,\"core\":\"AIV\"}\n"))
            .graph.num_tasks() == 1);
  CHECK_THROWS_WITH(load(tmp.write("empty.ndjson", "\n  \n")),
                    Contains("empty.ndjson: the file is empty"));
  CHECK_THROWS_WITH(load(tmp.write("blank2.ndjson", std::string(std::size_t(2) << 20, ' '))),
                    Contains("blank2.ndjson: the file is empty"));
}

TEST_CASE("native: two parsers take turns by chunk and keep kernels and lines as one does") {
  // About 6 MB of records after blank lines up to 30 bytes short of 1 MiB: the header line
  // crosses the end of the first 1 MiB chunk, so one parser takes the chunks until it is
  // read, then two take turns. A new kernel every 7000 tasks is first seen now by one
  // parser, now by the other; the graph numbers kernels by first appearance all the same.
  const std::size_t header_line = (std::size_t(1) << 20) - 30 + 1;
  std::string text(header_line - 1, '\n');
  text += kHeader;
  constexpr std::uint32_t kTasks = 100000;
  for (std::uint32_t t = 0; t < kTasks; ++t) {
    text += "{\"id\":" + std::to_string(t) + ",\"core\":\"" + (t % 3 ? "AIV" : "AIC") +
            "\",\"kernel\":\"kern_" + std::to_string(t / 7000) +
            "\",\"root\":" + std::to_string(t / 4) +
            (t % 4 != 3 ? ",\"succ\":[" + std::to_string(t + 1) + "]" : "") +
            ",\"dur\":" + std::to_string(100 + t % 17) + "}\n";
  }
  REQUIRE(text.size() > (std::size_t(7) << 20));
  TempDir tmp;
  const TaskGraph g = load(tmp.write("two.ndjson", text)).graph;
  REQUIRE(g.num_tasks() == kTasks);
  REQUIRE(g.kernel_names.size() == (kTasks + 6999) / 7000);
  for (std::size_t k = 0; k < g.kernel_names.size(); ++k) {
    CHECK(g.kernel_names[k] == "kern_" + std::to_string(k));
  }
  bool all_match = true;
  for (TaskId t = 0; t < kTasks; ++t) {
    const std::uint32_t id = g.orig_id[t];
    all_match = all_match && g.kernel_names[g.kernel[t]] == "kern_" + std::to_string(id / 7000) &&
                g.recorded_ns[t] == 100 + id % 17 &&
                g.core_type[t] == (id % 3 ? CoreType::kAiv : CoreType::kAic);
  }
  CHECK(all_match);
  // An error in any chunk, whichever parser has it, names its line.
  for (const std::uint32_t task : {5u, 20000u, 41234u, 77777u, 99999u}) {
    INFO("task " << task);
    const std::string line = "{\"id\":" + std::to_string(task) + ",";
    std::string bad = text;
    const std::size_t at = bad.find(line, header_line);
    REQUIRE(at != std::string::npos);
    bad.replace(at + line.size(), 6, "\"kore\"");
    CHECK_THROWS_WITH(load(tmp.write("bad.ndjson", bad)),
                      Contains("bad.ndjson:" + std::to_string(header_line + 1 + task) +
                               ": unknown key \"kore\""));
  }
}

TEST_CASE("native lines longer than the parser's batch and the read chunk") {
  // Task 1 lists 400000 successors (about 3 MB on one line), task 2 about 6 MB.
  auto long_succ = [](std::uint32_t id, std::uint32_t n) {
    std::string line = "{\"id\":" + std::to_string(id) + ",\"core\":\"AIV\",\"succ\":[";
    for (std::uint32_t i = 0; i < n; ++i) line += (i ? ",4" : "4");
    return line + "]}\n";
  };
  const std::string body = "{\"id\":0,\"core\":\"AIV\"}\n" + long_succ(1, 400000) +
                           long_succ(2, 800000) + "{\"id\":3,\"core\":\"AIC\"}\n" +
                           "{\"id\":4,\"core\":\"AIV\"}\n";
  TempDir tmp;
  const TaskGraph g = load(tmp.write("long.ndjson", kHeader + body)).graph;
  REQUIRE(g.num_tasks() == 5);
  CHECK(g.pred_count[4] == 1200000);
  CHECK(g.core_type[3] == CoreType::kAic);
  CHECK_THROWS_WITH(load(tmp.write("long2.ndjson", kHeader + body + "{\"id\":5}\n")),
                    Contains("long2.ndjson:7: a task record needs \"core\""));
}

// ---- synthetic traces ----

TEST_CASE("synthetic traces are deterministic and load") {
  for (const std::string shape : {"mix", "chain", "fanout", "loops", "independent"}) {
    INFO(shape);
    SyntheticSpec spec;
    spec.tasks = 1000;
    spec.shape = shape;
    std::ostringstream a, b, c;
    write_synthetic_trace(spec, a);
    write_synthetic_trace(spec, b);
    CHECK(a.str() == b.str());
    spec.seed = 2;
    write_synthetic_trace(spec, c);
    CHECK(a.str() != c.str());
    TempDir tmp;
    const LoadedTrace lt = load(tmp.write(shape + ".ndjson", a.str()));
    CHECK(lt.graph.num_tasks() == 1000);
    CHECK(lt.graph.has_memory());
    // 125 roots of 8 tasks fit one device task at the default 128 roots.
    CHECK(lt.graph.device_tasks.size() == 1);
    CHECK(lt.graph.device_tasks[0].num_roots == 125);
    for (TaskId t = 0; t < 1000; ++t) CHECK(lt.graph.compute_cycles[t] > 0);
  }
}

TEST_CASE("synthetic: a consumer reads exactly the region its producer wrote") {
  for (const std::string shape : {"mix", "chain", "fanout", "loops"}) {
    INFO(shape);
    SyntheticSpec spec;
    spec.tasks = 3000;
    spec.shape = shape;
    std::ostringstream os;
    write_synthetic_trace(spec, os);
    TempDir tmp;
    const TaskGraph g = load(tmp.write("s.ndjson", os.str())).graph;
    REQUIRE(g.num_edges() > 0);
    std::size_t checked = 0;
    for (TaskId u = 0; u < g.num_tasks(); ++u) {
      // Each task writes exactly one region, 16..64 KiB.
      std::size_t writes = 0;
      pypto::sched::MemAccess out;
      for (std::uint32_t m = g.mem_begin[u]; m < g.mem_begin[u + 1]; ++m) {
        if (g.mem[m].is_write) {
          ++writes;
          out = g.mem[m];
        }
      }
      REQUIRE(writes == 1);
      CHECK(out.bytes >= 16384);
      CHECK(out.bytes <= 65536);
      for (std::uint32_t e = g.succ_first(u); e < g.succ_last(u); ++e) {
        const TaskId v = g.succ[e];
        bool reads = false;
        for (std::uint32_t m = g.mem_begin[v]; m < g.mem_begin[v + 1]; ++m) {
          reads |= !g.mem[m].is_write && g.mem[m].addr == out.addr && g.mem[m].bytes == out.bytes;
        }
        CHECK(reads);
        ++checked;
      }
    }
    CHECK(checked == g.num_edges());
  }
}

TEST_CASE("synthetic shapes have their structure") {
  TempDir tmp;
  auto make = [&](const std::string& shape, bool recorded, std::uint64_t n) {
    SyntheticSpec spec;
    spec.tasks = n;
    spec.shape = shape;
    spec.recorded = recorded;
    spec.memory = false;
    std::ostringstream os;
    write_synthetic_trace(spec, os);
    return load(tmp.write(shape + ".ndjson", os.str())).graph;
  };
  // independent: no edges, equal recorded durations, AIC for every third task.
  const TaskGraph ind = make("independent", true, 300);
  CHECK(ind.num_edges() == 0);
  CHECK_FALSE(ind.has_memory());
  for (TaskId t = 0; t < 300; ++t) {
    CHECK(ind.recorded_ns[t] == 1000);
    CHECK(ind.core_type[t] == (t % 3 == 0 ? CoreType::kAic : CoreType::kAiv));
  }
  // chain: one chain through all 100 tasks (a single device task here).
  const TaskGraph chain = make("chain", false, 100);
  CHECK(chain.num_edges() == 99);
  for (TaskId t = 1; t < 100; ++t) CHECK(chain.pred_count[t] == 1);
  CHECK(chain.recorded_ns[0] == kNoRecord);
  // fanout: per root of 8, 1 -> 6 -> 1: 12 edges per root.
  const TaskGraph fan = make("fanout", false, 80);
  CHECK(fan.num_edges() == 120);
  CHECK(fan.pred_count[7] == 6);
  // loops: chains of 8 per root plus one edge from each root's last task to the next's last.
  const TaskGraph loops = make("loops", false, 80);
  CHECK(loops.num_edges() == 10 * 7 + 9);
  CHECK(loops.pred_count[15] == 2);
  CHECK(loops.core_type[1] == CoreType::kAic);
  // A partial last root works.
  CHECK(make("fanout", false, 13).num_tasks() == 13);
  CHECK(make("mix", false, 1).num_tasks() == 1);
}

TEST_CASE("synthetic traces stitch by the runtime options") {
  SyntheticSpec spec;
  spec.tasks = 1000;  // 125 roots of 8
  std::ostringstream os;
  write_synthetic_trace(spec, os);
  TempDir tmp;
  const std::string path = tmp.write("s.ndjson", os.str());
  LoadOptions o;
  o.runtime.stitch_function_max_num = 10;
  CHECK(load_trace(path, o, ChipConfig{}).graph.device_tasks.size() == 13);
}

TEST_CASE("synthetic spec errors") {
  std::ostringstream os;
  SyntheticSpec spec;
  spec.shape = "spiral";
  CHECK_THROWS_WITH(write_synthetic_trace(spec, os),
                    Contains("synthetic trace shape \"spiral\" is unknown; expected mix, chain, "
                             "fanout, loops or independent"));
  spec.shape = "mix";
  spec.tasks = 0;
  CHECK_THROWS_AS(write_synthetic_trace(spec, os), ConfigError);
  spec.tasks = 10;
  spec.tasks_per_root = 0;
  CHECK_THROWS_WITH(write_synthetic_trace(spec, os), Contains("tasks_per_root must be at least 1"));
}

// ---- what the replay metrics and --chip auto read ----

TEST_CASE("board recordings keep each task's start and the cores they ran on") {
  const LoadedTrace t = load(sample("dyn_topo.txt"), sample("tilefwk_L1_prof_data.json"));
  const TaskGraph& g = t.graph;
  REQUIRE(g.recorded_start_ps.size() == g.num_tasks());
  // Relative to the recording's first start (tick 1000000): task 1 of seqNo 0 started at
  // tick 1000110 = 110 ticks of 20 ns later; task 0 is the first.
  CHECK(g.recorded_start_ps[find(g, 0, 0)] == 0);
  CHECK(g.recorded_start_ps[find(g, 0, 1)] == 110 * 20'000);
  CHECK(g.recorded_start_ps[find(g, 1, 1)] == 940 * 20'000);
  const TaskId hub = find(g, 0, 7340032);  // no prof record: no recorded start
  CHECK_FALSE(g.has_recorded_start(hub));
  CHECK(g.has_recorded_start(find(g, 0, 1)));
  // blockIdx 0 is the AIC, 24 and 25 the AIV (AIC first, then AIV, as PyPTO numbers them).
  REQUIRE(t.recorded_cores);
  CHECK(t.recorded_cores->any_aic);
  CHECK(t.recorded_cores->max_aic_block == 0);
  CHECK(t.recorded_cores->min_aiv_block == 24);
  CHECK(t.recorded_cores->max_aiv_block == 25);
}

TEST_CASE("native start/end become recorded starts: dur and ops do not") {
  const LoadedTrace t = load(sample("pipeline.ndjson"));
  const TaskGraph& g = t.graph;
  REQUIRE(g.recorded_start_ps.size() == g.num_tasks());
  TaskId first = 0;
  for (TaskId i = 0; i < g.num_tasks(); ++i) {
    if (g.has_recorded_start(i) && g.recorded_start_ps[i] == 0) first = i;
  }
  CHECK(g.has_recorded_start(first));
  CHECK_FALSE(t.recorded_cores);  // native traces name no blockIdx

  TempDir tmp;
  const LoadedTrace d =
      load(tmp.write("d.ndjson", kHeader + "{\"id\":0,\"core\":\"AIV\",\"dur\":5}\n"
                                           "{\"id\":1,\"core\":\"AIV\"}\n"));
  CHECK(d.graph.recorded_start_ps.empty());  // nothing recorded: the column costs nothing
  const LoadedTrace s = load(
      tmp.write("s.ndjson", kHeader + "{\"id\":0,\"core\":\"AIV\",\"dur\":5}\n"
                                      "{\"id\":1,\"core\":\"AIV\",\"start\":1000,\"end\":1500}\n"
                                      "{\"id\":2,\"core\":\"AIV\",\"start\":1200,\"end\":1300}\n"));
  REQUIRE(s.graph.recorded_start_ps.size() == 3);
  CHECK_FALSE(s.graph.has_recorded_start(0));
  CHECK(s.graph.recorded_start_ps[1] == 0);
  CHECK(s.graph.recorded_start_ps[2] == 200'000);
}

TEST_CASE("the recorded makespan is PyPTO's AICore end to end: AICPU records left out") {
  // draw_swim_lane.py's print_aicore_summary spans the AIC/AIV tasks only, as the simulated
  // task span does; an AICPU task before or after them moves neither.
  TempDir tmp;
  const LoadedTrace n = load(tmp.write(
      "cpu.ndjson", kHeader +
                        "{\"id\":0,\"core\":\"AICPU\",\"start\":0,\"end\":3000,\"succ\":[1]}\n"
                        "{\"id\":1,\"core\":\"AIV\",\"start\":4000,\"end\":6000,\"succ\":[2]}\n"
                        "{\"id\":2,\"core\":\"AIC\",\"start\":6500,\"end\":9000,\"succ\":[3]}\n"
                        "{\"id\":3,\"core\":\"AICPU\",\"start\":9500,\"end\":20000}\n"));
  REQUIRE(n.graph.recorded_makespan_ps.has_value());
  CHECK(*n.graph.recorded_makespan_ps == 5000 * 1000ull);
  CHECK(n.graph.recorded_start_ps[1] == 4000 * 1000ull);  // from the first start of any task

  // dyn_topo.txt + prof: ticks of 20 ns; AICPU 0-100, AIV 110-150, AIC 160-300.
  const std::string topo =
      tmp.write("dyn_topo.txt",
                "seqNo,taskId,rootIndex,rootHash,opmagic,leafIndex,leafHash,coreType,psgId,wrapId,"
                "staticSuccCount,successors\n"
                "0,0,0,1000,10,0,5000,AICPU,0,-1,1,1\n"
                "0,1,0,1000,11,1,5001,AIV,1,-1,1,2\n"
                "0,2,0,1000,12,2,5002,AIC,2,-1,0\n");
  const std::string prof = tmp.write(
      "prof.json",
      R"([{"blockIdx":72,"coreType":"AICPU","tasks":[{"taskId":0,"execStart":1000,"execEnd":1100}]},
          {"blockIdx":24,"coreType":"AIV","tasks":[{"taskId":1,"execStart":1110,"execEnd":1150}]},
          {"blockIdx":0,"coreType":"AIC","tasks":[{"taskId":2,"execStart":1160,"execEnd":1300}]}])");
  const LoadedTrace b = load(topo, prof);
  REQUIRE(b.graph.recorded_makespan_ps.has_value());
  CHECK(*b.graph.recorded_makespan_ps == 190 * 20000ull);
  CHECK(b.graph.recorded_start_ps[find(b.graph, 0, 1)] == 110 * 20000ull);
}

// ---- limits: every number read from a file is checked before use (issue 12) ----

TEST_CASE("a number too large for a double names the file, record, key and value",
          "[trace][limits]") {
  TempDir dir;
  SECTION("fixed-latency graph") {
    const std::string p =
        dir.write("fixed.json",
                  "[{\"taskId\":0,\"funcName\":\"f\",\"coreType\":\"AIV\",\"execTime\":1e999,"
                  "\"successors\":[],\"remainingPredecessors\":0}]");
    CHECK_THROWS_AS(load(p), TraceError);
    CHECK_THROWS_WITH(load(p), Contains("fixed.json:1:") && Contains("record 0") &&
                                   Contains("key \"execTime\"") && Contains("1e999") &&
                                   Contains("too large for a double"));
  }
  SECTION("topo.json") {
    const std::string p =
        dir.write("topo.json", "[{\"taskId\":0,\"funcName\":\"f\",\"successors\":[-1e999]}]");
    CHECK_THROWS_WITH(load(p, sample("tilefwk_L1_prof_data.json")),
                      Contains("topo.json:1:") && Contains("record 0") &&
                          Contains("key \"successors\"") && Contains("-1e999"));
  }
  SECTION("prof file") {
    const std::string p = dir.write(
        "prof.json",
        "[{\"blockIdx\":0,\"coreType\":\"AIC\",\"tasks\":[{\"seqNo\":0,\"taskId\":1,"
        "\"execStart\":1,\"execEnd\":1},\n{\"seqNo\":0,\"taskId\":2,\"execStart\":1e999}]}]");
    CHECK_THROWS_WITH(load(sample("topo.json"), p),
                      Contains("prof.json:2:") && Contains("block 0") && Contains("record 1") &&
                          Contains("key \"execStart\"") && Contains("1e999"));
  }
}

TEST_CASE("a native header's task count is never trusted for allocation", "[trace][limits]") {
  // 4,294,967,294 announced tasks used to reserve 64 GB and die with bad_alloc; the
  // reservation is now capped by what the file can hold, and the count checked at the end.
  TempDir dir;
  const std::string p = dir.write("t.ndjson",
                                  "{\"format\":\"pypto-sim-trace\",\"version\":1,"
                                  "\"tasks\":4294967294}\n{\"id\":0,\"core\":\"AIV\",\"dur\":1}\n");
  CHECK_THROWS_WITH(load(p), Contains("announces 4294967294 tasks but the file has 1"));
}

TEST_CASE("native ranges and times are checked for overflow with file and line",
          "[trace][limits]") {
  TempDir dir;
  SECTION("a memory range passing 2^64") {
    const std::string p =
        dir.write("t.ndjson", kHeader +
                                  "{\"id\":0,\"core\":\"AIV\",\"mem\":[[18446744073709551600,17,"
                                  "\"r\"]]}\n");
    CHECK_THROWS_WITH(load(p), Contains("t.ndjson:2:") && Contains("64-bit address space"));
    // The last byte at 2^64 - 1 is fine.
    const std::string ok =
        dir.write("ok.ndjson", kHeader +
                                   "{\"id\":0,\"core\":\"AIV\",\"mem\":[[18446744073709551600,16,"
                                   "\"r\"]]}\n");
    CHECK(load(ok).graph.num_tasks() == 1);
  }
  SECTION("start and end 2e16 ns apart overflow the ps clock") {
    const std::string p =
        dir.write("t.ndjson", kHeader + "{\"id\":0,\"core\":\"AIV\",\"start\":0,\"end\":100}\n" +
                                  "{\"id\":1,\"core\":\"AIV\",\"start\":20000000000000000,"
                                  "\"end\":20000000000000100}\n");
    CHECK_THROWS_WITH(load(p), Contains("span 20000000000000100 ns") && Contains("line 2") &&
                                   Contains("line 3") && Contains("2^62 ps"));
  }
}

TEST_CASE("prof ticks too far apart are refused, not converted out of range", "[trace][limits]") {
  // Two records 2^64 - 1000 ticks apart: the ps conversion used to be undefined behaviour
  // and recorded a makespan of 0.
  TempDir dir;
  const std::string p =
      dir.write("prof.json",
                "[{\"blockIdx\":0,\"coreType\":\"AIV\",\"tasks\":[{\"seqNo\":0,\"taskId\":0,"
                "\"execStart\":0,\"execEnd\":10},{\"seqNo\":0,\"taskId\":2,"
                "\"execStart\":18446744073709550000,\"execEnd\":18446744073709550010}]}]");
  CHECK_THROWS_WITH(load(sample("topo.json"), p),
                    Contains("prof.json") && Contains("2^62 ps") && Contains("record 0") &&
                        Contains("record 1") && Contains("chip.board_clock_mhz = 50 MHz"));
}

TEST_CASE("inputs that are not regular files say what they are", "[trace][limits]") {
  TempDir dir;
  CHECK_THROWS_WITH(load(dir.path()), Contains("is a directory"));
  CHECK_THROWS_WITH(load("/dev/zero"), Contains("is a character device"));
  CHECK_THROWS_WITH(load(sample("topo.json"), "/dev/zero"), Contains("is a character device"));
  CHECK_THROWS_WITH(load(sample("topo.json"), dir.path()), Contains("is a directory"));
}

TEST_CASE("a native header with a number too large for a double names the key", "[trace][limits]") {
  TempDir dir;
  const std::string p = dir.write("t.ndjson",
                                  "{\"format\":\"pypto-sim-trace\",\"version\":1,\"tasks\":1e999}\n"
                                  "{\"id\":0,\"core\":\"AIV\",\"dur\":1}\n");
  CHECK_THROWS_WITH(load(p), Contains("t.ndjson:1:") && Contains("\"tasks\"") && Contains("1e999"));
}

TEST_CASE("a trace too large for the memory is refused early with an estimate", "[trace][limits]") {
  // 60k mix tasks (about 11 MB, several 4 MiB chunks): the estimate after the first chunk,
  // at about 100 bytes per task, is about 6 MB.
  TempDir dir;
  const std::string p = dir.path() + "/big.ndjson";
  {
    SyntheticSpec spec;
    spec.tasks = 60000;
    std::ofstream out(p);
    write_synthetic_trace(spec, out);
  }
  LoadOptions o;
  o.memory_available_bytes = 1 << 20;
  CHECK_THROWS_AS(load_trace(p, o, ChipConfig{}), TraceError);
  CHECK_THROWS_WITH(load_trace(p, o, ChipConfig{}),
                    Contains("big.ndjson: loading and simulating this trace needs about") &&
                        Contains("tasks x") && Contains("bytes per task") &&
                        Contains("only 1 MiB of memory is available"));
  o.memory_available_bytes = 64 << 20;
  CHECK(load_trace(p, o, ChipConfig{}).graph.num_tasks() == 60000);
  CHECK(available_memory_bytes() > 0);  // Linux: /proc/meminfo
}

// ---- reading progress ----

TEST_CASE("LoadOptions::progress: native chunks count up to the file size, others once a file") {
  TempDir tmp;
  SyntheticSpec spec;
  spec.tasks = 40000;  // more than one 4 MiB chunk
  std::ostringstream os;
  write_synthetic_trace(spec, os);
  const std::string path = tmp.write("big.ndjson", os.str());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> calls;
  LoadOptions o;
  o.progress = [&calls](std::uint64_t done, std::uint64_t total) {
    calls.emplace_back(done, total);
  };
  load_trace(path, o, ChipConfig{});
  REQUIRE(calls.size() >= 2);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    CHECK(calls[i].second == os.str().size());
    CHECK(calls[i].first <= calls[i].second);
    if (i > 0) CHECK(calls[i].first >= calls[i - 1].first);
  }
  CHECK(calls.back().first == os.str().size());

  // A board recording: the topology, then the prof file; the total is both files.
  calls.clear();
  o.prof_path = sample("tilefwk_L1_prof_data.json");
  load_trace(sample("topo.json"), o, ChipConfig{});
  const std::uint64_t both =
      std::filesystem::file_size(sample("topo.json")) + std::filesystem::file_size(o.prof_path);
  REQUIRE(calls.size() == 2);
  CHECK(calls[0] ==
        std::make_pair(std::uint64_t(std::filesystem::file_size(sample("topo.json"))), both));
  CHECK(calls[1] == std::make_pair(both, both));

  calls.clear();
  o.prof_path.clear();
  load_trace(sample("fixed_task_topo.json"), o, ChipConfig{});
  const std::uint64_t fixed = std::filesystem::file_size(sample("fixed_task_topo.json"));
  CHECK(calls == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{fixed, fixed}});

  // A callback that throws stops the load.
  o.progress = [](std::uint64_t, std::uint64_t) { throw std::runtime_error("stop"); };
  CHECK_THROWS_WITH(load_trace(path, o, ChipConfig{}), "stop");
}
