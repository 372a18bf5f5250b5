// SPDX-License-Identifier: Apache-2.0
// A task graph in PyPTO's own trace formats (traces/samples/README.md), so that the same
// graph can be replayed from every format the loader reads: the board formats (dyn_topo.txt
// or topo.json, with a tilefwk_L1_prof_data.json recording of every task's start and end in
// board ticks) and the fixed-latency task graph (execTime in AICore cycles). These formats
// carry durations only (no memory ranges, no tile ops): every AIC/AIV/AICPU task of the graph
// needs a recorded duration.
//
// Example: a synthetic graph in every format (what `pypto-sim gen --format` does):
//   SyntheticSpec s; s.recorded = true; s.memory = false;
//   write_synthetic_as(s, TraceFormat::kDynTopo, chip, "dyn_topo.txt", "prof.json");
#pragma once

#include <ostream>
#include <string>

#include "pypto/model/chip_config.h"
#include "pypto/sched/task_graph.h"
#include "pypto/trace/synthetic.h"
#include "pypto/trace/trace_loader.h"

namespace pypto::trace {

// dyn_topo.txt: every device task (seqNo = the device task's seq_no), taskId = the root's
// index within its device task << 20 | the task's index within its root, successors in the
// same device task; kernel k becomes leafIndex k (the reader names it "leafk"). `prof` gets
// the recording (see write_prof_recording). Throws ConfigError if a device task has more than
// 4096 roots or a root more than 2^20 tasks (the taskId packing cannot hold them), or if a
// task lacks a recorded duration; pypto::Error when a stream fails.
void write_dyn_topo(const sched::TaskGraph& g, const model::ChipConfig& chip, std::ostream& topo,
                    std::ostream& prof);

// topo.json: one device task holding every task of g (the format describes device task 0
// only), so device tasks no longer run one after another. taskId packs root << 20 | index as
// dyn_topo when the graph has at most 4096 roots of fewer than 2^20 tasks, else it is the task
// index (the reader then sees one root per 2^20 tasks). No coreType: the reader takes each
// task's from its prof block. `prof` as write_dyn_topo's, every task in seqNo 0.
void write_topo_json(const sched::TaskGraph& g, const model::ChipConfig& chip, std::ostream& topo,
                     std::ostream& prof);

// fixed_task_topo.json: one device task like topo.json, execTime = recorded ns x the AICore
// clock (chip.cores.freq_mhz), remainingPredecessors = the predecessor count.
void write_fixed_latency(const sched::TaskGraph& g, const model::ChipConfig& chip,
                         std::ostream& out);

// tilefwk_L1_prof_data.json for g: one block per core (AIC blockIdx 0.., then AIV, as PyPTO
// numbers them), tasks dealt to the cores of their type round-robin in task order, each core
// running its tasks back to back from tick 1000000; durations are the recorded ns in board
// ticks (chip.chip.board_clock_mhz; exact when the durations are whole ticks). HUB tasks get
// no record (the readers make them zero-cost dependency nodes). `one_device_task`: every
// record in seqNo 0 (topo.json), else the device task's seq_no.
void write_prof_recording(const sched::TaskGraph& g, const model::ChipConfig& chip,
                          bool one_device_task, std::ostream& prof);

// The synthetic graph of `spec` written as `format` to `path` (and, for the board formats,
// its recording to `prof_path`), each file complete or not at all (pypto/common/output_file.h).
// The native format is write_synthetic_trace's output as is; the others are that trace
// loaded (stitched by the default runtime options, as `pypto-sim run` would) and written with
// the writers above, so every format replays the same tasks. Contract: for the PyPTO formats
// spec.recorded must be set and spec.memory clear (they carry neither memory nor ops), and
// spec.dur_step_ns should be one board tick (20 ns at 50 MHz) for the durations to survive
// the tick conversion exactly. Throws ConfigError for a bad spec, pypto::Error on I/O.
void write_synthetic_as(const SyntheticSpec& spec, TraceFormat format,
                        const model::ChipConfig& chip, const std::string& path,
                        const std::string& prof_path);

}  // namespace pypto::trace
