// SPDX-License-Identifier: Apache-2.0
// Instance::stitch(): lays out the launch-lifetime workspace regions, then hands the roots to
// sched::Stitcher (the one owner of the stitching rules and the workspace formula) and takes
// back each root's device task and pool offset.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "instance.h"
#include "pypto/sched/stitcher.h"

namespace pypto::compiler::detail {

void Instance::stitch(Launch& l) {
  // Launch-lifetime regions first; the Stitcher lays the root-inner pool out after them.
  // Each region's versions side by side, in region order.
  slot_base_.assign(slot_bytes_.size(), 0);
  launch_bytes_ = 0;
  const auto place = [&](std::size_t i) {
    slot_base_[i] = launch_bytes_;
    launch_bytes_ += slot_bytes_[i];
  };
  for (std::size_t id = 0; id < slot_version_at_.size(); ++id) {
    place(id);
    for (const std::uint32_t i : slot_version_at_[id]) place(i);
  }
  std::vector<sched::StitchRoot> roots(roots_.size());
  for (std::size_t i = 0; i < roots_.size(); ++i) {
    const RootRec& r = roots_[i];
    roots[i] = sched::StitchRoot{r.num_tasks, r.bytes, r.barrier, r.pgroup, r.piter, r.ploc};
  }
  // The pool holds par_ equal slices (one per parallel iteration in flight); PyPTO rounds
  // workspace totals to 1 KiB.
  const sched::WorkspaceModel model{launch_bytes_, par_, par_, 1024};
  sched::StitchResult s = sched::Stitcher(opt_.runtime, model, /*sizes_known=*/true).stitch(roots);
  for (std::size_t i = 0; i < roots_.size(); ++i) {
    roots_[i].dt = s.device_task[i];
    roots_[i].base = s.base_bytes[i];
  }
  l.workspace_bytes = s.workspace.peak_bytes;
  l.minimum_workspace_bytes = s.workspace.minimum_bytes;
  for (std::string& line : s.log) log_.push_back(std::move(line));
}

}  // namespace pypto::compiler::detail
